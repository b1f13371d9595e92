"""PD604 metric-stops."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ..canonical.frameworks import EPISODE_TAGS, candidate_keys
from ..detect import distinct, median
from ..results import Finding
from .base import Example, Rule, RuleContext
from .examples import flat, saturating
from .nan_causes import NAN_CAUSES, REWARD_METRICS, reward_nan_causes
from .outcome import MIN_POINTS_AFTER
from .reward_progress import LEARNING_RISE, reward_arrays, rise, trend_arrays

# Training metrics whose value every logged step has; one that stops while the others go on
# could not be computed.  The losses, reward and KL are the run itself (error); a gradient norm
# or entropy that stops is a warning.
CORE = ("reward/score", "reward/total", "loss/policy", "loss/value", "loss/total", "kl/ref", "kl/old")
OTHER = ("grad/norm", "policy/entropy", "reward/std")


def episode_return(ctx: RuleContext, metric: str) -> bool:
    """Whether ``metric`` is read from a classic-RL episode return (:data:`EPISODE_TAGS`): it is
    written only when an episode ends (SB3 logs ``rollout/ep_rew_mean`` only when its episode
    buffer holds one, ML-Agents ``Environment/Cumulative Reward`` only for completed episodes),
    so its absence says no episode ended, not that a value could not be computed."""
    info = ctx.run.metric_info.get(metric)
    return info is not None and any(k in EPISODE_TAGS for k in candidate_keys(info.raw_tag))


# A metric is logged with another when at least this share of the steps where both were logged
# (up to the first one's last point) are the same steps.
SHARED_STEPS = 0.5


def logged_with(own: np.ndarray, other: np.ndarray) -> bool:
    """Whether ``other`` was logged at the same steps as ``own`` up to ``own``'s last point: only
    such a metric going on says a value is missing.  Trainers write some groups on an axis of
    their own (Tianshou's ``update/*`` at gradient steps, ``train/*`` and ``test/*`` at
    environment steps, in one file): a group that ends on its own axis is not a value that could
    not be computed."""
    before = other[other <= own[-1]]
    if len(before) == 0:
        return False
    common = len(np.intersect1d(own, before, assume_unique=True))
    return common >= SHARED_STEPS * min(len(own), len(before))


def learned_after(ctx: RuleContext, metric: str, last: int) -> str | None:
    """Evidence that the run went on learning after ``metric``'s last point: the mean reward
    logged after it rose clearly (by :data:`LEARNING_RISE` noise standard errors over at least
    :data:`MIN_POINTS_AFTER` points).  A loss, KL or gradient norm that could not be computed
    leaves NaN parameters or skipped updates behind it, and a policy that stopped updating does
    not climb; a reward that climbs after the metric's last point says its values were computed
    and only their record stopped, or went on on an axis of its own (blind set real53: a 2020
    Tianshou DQN writes its loss at gradient steps 1..1000 and its episode rewards at
    environment steps 11..11652 in one file; the reward climbs 10 -> 116 after step 1000).
    The reward itself is never judged by this (it is the outcome)."""
    if metric in REWARD_METRICS:
        return None
    reward = reward_arrays(ctx, MIN_POINTS_AFTER)
    if reward is None:
        return None
    s, v = trend_arrays(ctx, reward[0])
    after = s > last
    if after.sum() < MIN_POINTS_AFTER:
        return None
    r = rise(s[after], v[after], LEARNING_RISE)
    if not r.improved:
        return None
    return f"{reward[0]} rose {r.means[0]:.3g} -> {r.means[1]:.3g} after step {last}: the run went on learning"


class MetricStops(Rule):
    """A training metric is logged, then goes missing for the rest of the run.

    **What it detects.** A core metric (reward, losses, KL; also the gradient norm, entropy and
    reward std) logged on at least ``min_points`` points whose last step is followed by at
    least ``min_missing`` steps on which the training metrics logged with it (at the same steps,
    for at least half of them: :func:`logged_with`) are still logged, spanning at least ``min_missing`` of its own logging intervals and 10 % of its count.  Its onset is the first such step.  Error for a reward,
    loss or KL; warning for the others.

    **Why it matters.** A missing value is a value that could not be computed: today's TRL
    writes ``null`` into ``trainer_state.json`` and nothing into TensorBoard when the reward
    is NaN (GRPOTrainer logs ``None`` for a key whose values are all NaN), so a reward that
    stops mid-run is the NaN of PD601 under another encoding.  What follows is usually
    gradients collapsing to 0 (PD302): the run has stopped learning.

    **Known false positives.** Metrics a trainer logs only in some phases (evaluation, a
    warm-up); a run resumed with a different logging config.  A group of metrics written on an
    axis of its own (Tianshou's ``update/*`` at gradient steps beside ``train/*`` at environment
    steps) never shares steps with the others, so it is not compared with them.  A classic-RL
    episode return (SB3's ``rollout/ep_rew_mean``, ML-Agents' ``Environment/Cumulative Reward``)
    is written only when an episode ends: its absence is not checked.  A loss, KL or gradient
    norm whose record stops while the reward logged after it climbs clearly is an info note: the
    run went on learning, so its values were computed (:func:`learned_after`).

    When the mean reward stops before any loss, KL or gradient breaks, the reward function is
    named as the cause (``reward-function-nan``).

    **Evidence.** An event: the missing stretch is measured in the metric's own logging
    intervals, so a live prefix says it once the gap is long enough, as the finished run would.

    **Source.** TRL ``GRPOTrainer`` logging (``_metrics`` averaged with ``nanmean``; a key whose
    values are all NaN becomes ``None``) and HF Trainer ``log_history``; how each format writes NaN
    (docs/sources.md#nan-encodings).
    """

    code = "PD604"
    name = "metric-stops"
    symptom = "nan"
    severity = "error"
    basis = "outcome"
    requires = ()
    params = {"min_points": 10, "min_missing": 3}
    causes = NAN_CAUSES
    message = (
        "{metric} was logged on {count} points up to step {last} and is missing on the {missing} later steps "
        "where the metrics logged with it go on (from step {start_step} to {end_step}): {meaning}"
    )

    def evaluate(self, ctx: RuleContext) -> Iterator[Finding]:
        p = ctx.params
        frame = ctx.run.frame
        present = [m for m in CORE + OTHER if frame.has(m) and frame.count(m) >= p["min_points"]]
        if len(present) < 2:
            return
        steps = {m: ctx.arrays(m)[0] for m in present}
        for metric in present:
            if episode_return(ctx, metric):
                continue
            own = steps[metric]
            last = int(own[-1])
            going_on = [st for m, st in steps.items() if m != metric and st[-1] > last]
            # only the metrics logged with it count (compared only when some metric goes on: the
            # step sets of a long run are large)
            peers = [st for st in going_on if logged_with(own, st)]
            if not peers:
                continue
            later = distinct(np.concatenate([st[st > last] for st in peers]))
            if len(later) < p["min_missing"]:
                continue
            # in the metric's own logging intervals, so that a metric logged every 100 steps is
            # not "missing" on the 99 steps a per-step loss is logged after its last point
            interval = float(median(np.diff(own)))
            missed = (int(later[-1]) - last) / max(interval, 1.0)
            if missed < max(p["min_missing"], 0.1 * len(own)):
                continue
            causes, by_reward = reward_nan_causes(ctx, metric, int(later[0]), dict(self.causes))
            learning = learned_after(ctx, metric, last)
            yield self.finding(
                ctx,
                metric=metric,
                causes=causes,
                observed={"count": len(own), "last": last, "missing": len(later)},
                start_step=int(later[0]),
                threshold_step=int(later[0]),
                peak_step=int(later[0]),
                end_step=int(later[-1]),
                severity="info" if learning else "error" if metric in CORE else "warning",
                fmt={"meaning": "the run went on learning, so only its record stopped" if learning else "its value could not be computed"},
                evidence=[f"last logged value of {metric} at step {last}: {_fmt(ctx, metric)}", *by_reward, *([learning] if learning else [])],
            )

    @classmethod
    def bad_example(cls) -> Example:
        # the reward turns NaN at step 60: TensorBoard gets nothing from there, the losses go on
        reward = saturating(100, 0.0, 1.0, sd=0.02, seed=60)[:60]
        return Example(series={"reward/score": reward, "loss/policy": flat(100, 0.1, 0.01, seed=61), "grad/norm": flat(100, 0.5, 0.05, seed=62)})

    @classmethod
    def good_example(cls) -> Example:
        return Example(series={"reward/score": saturating(100, 0.0, 1.0, sd=0.02, seed=60), "loss/policy": flat(100, 0.1, 0.01, seed=61)})


def _fmt(ctx: RuleContext, metric: str) -> str:
    v = ctx.arrays(metric)[1]
    return f"{v[-1]:.3g}"
