"""PD301 reward-not-improving."""

from __future__ import annotations

import numpy as np

from ..detect import median, peak_drop, percentile
from ..canonical.hparams import temperature_regime
from .base import Example, Rule, RuleContext
from .examples import flat, saturating
from .messages import fmt_num
from .movement import no_movement_evidence
from .outcome import task_improved
from .reward_progress import COLLAPSE_DEFAULTS, LEARNING_RISE, MIN_FALL_SHARE, Rise, collapsed, fell_from_start, reached_ceiling, rise, trend_arrays


def _never_rose(s: np.ndarray, v: np.ndarray, limit: float) -> bool:
    """The reward's local level never rose ``limit`` above its first window: it only fell."""
    pd = peak_drop(s, v)
    return pd is not None and pd.gain < limit


def _ends_at_floor(v: np.ndarray, window: int) -> bool:
    """The last window's median is the lowest value of the run (within 1 % of its range): the
    policy settled on its worst outcome, not a level that drifts a little below its start."""
    lo, hi = float(v.min()), float(v.max())
    return float(median(v[-window:])) <= lo + 0.01 * (hi - lo)


def _medians_fell(r: Rise, fell: bool, spread: float) -> str:
    """Words for a last window whose median fell by PD301's bar for a fall (``fell``) while the
    windows' means moved less than :data:`MIN_FALL_SHARE` of the points' ``spread``, else '':
    the finding's 'first -> last' shows window medians, which then read as a fall the run did
    not have."""
    if fell and abs(r.means[1] - r.means[0]) < MIN_FALL_SHARE * spread:
        return f"; the window medians fell but their means went {fmt_num(r.means[0])} -> {fmt_num(r.means[1])}"
    return ""


# A log whose first step lies past this share of its last one, and past several logging intervals,
# continues a training that began before it (a resumed run, a second stage).
CONTINUATION_SHARE = 0.1
CONTINUATION_INTERVALS = 3


def continuation(s: np.ndarray) -> str | None:
    """Why the log continues a training that began before it, or None: its first step lies past
    :data:`CONTINUATION_SHARE` of its last and :data:`CONTINUATION_INTERVALS` logging intervals
    (SB3 logs its first rollout at n_steps x n_envs, a small share of a run).  Such a log's first
    window is not where the policy started, so a flat reward may be a level it reached before."""
    if len(s) < 2:
        return None
    interval = float(median(np.diff(s)))
    first, last = int(s[0]), int(s[-1])
    if first > CONTINUATION_SHARE * last and first > CONTINUATION_INTERVALS * interval:
        return "a continuation: the reward may hold a level reached before the log began"
    return None


class RewardNotImproving(Rule):
    """The mean reward does not improve over the whole run.

    **What it detects.** The median reward of the last 10 % of the run is within
    ``min_rise`` standard errors of the first 10 % (standard error of a window median from
    the point-to-point noise), and the Theil-Sen trend over the run is no larger (a last
    window whose median clears the bar while the windows' winsorized means do not is no rise:
    ``reward_progress.rise``, the median of few-valued points can jump a level; nor is a rise
    under a hundredth of the first window's level, ``reward_progress.MIN_RELATIVE_MOVE``, however
    many standard errors of a smooth running mean it spans); or the
    reward fell to the lowest value of the run, where its last window sits, and its level
    never rose above its first window on the way (a policy that only got worse, as one that
    settles on a losing move whose return is the task's floor); or it ends below its first three
    points by 4 standard errors and a fifth of its range, and its level never
    came back to them (``reward_progress.fell_from_start``: a policy worse than the one it
    started from, whatever it regained from the trough of its fall).
    The reward is judged on its step axis (``detect.even_in_steps``: one point per episode
    weighs short episodes by their number), at its changes when the log holds each value over
    several rows (``detect.at_changes``), and, when it holds one value on most points (a
    sparse reward at its floor), by window means (``detect.sticky``).  Runs of fewer than
    ``min_points`` points are not judged.  The finding lists what else shows the
    policy is not moving: a KL to the reference under 5 % of its band, an approx KL per update
    near 0, near-zero gradients, or a learning rate under 1e-8; with such evidence it is an
    error (no learning over the whole run), without it a warning.  Not reported when the reward
    reached its plateau inside the first window (its first point is far below the first
    window, by the bar and by 1 % of the level: ``reward_progress.reached_ceiling``, and it ends
    at the top of its range: a task solved early), nor when it rose and then
    fell back (PD204 reward-collapse).  When the held-out evaluation reward or a task metric
    (accuracy, success, pass rate: :func:`.outcome.task_improved`) rises clearly over the run,
    the task improves whatever the training reward shows: an info note; so is a flat reward on a
    log that continues a training begun before it (:func:`continuation`: its first step lies past
    10 % of its last and 3 logging intervals), which may hold a level reached before the log
    began.  A fall within ``LEARNING_RISE`` noise standard errors, or smaller than a fifth of the
    points' 5th-95th percentile spread (``MIN_FALL_SHARE``), or one the window medians show and
    the window means do not, is a flat reward wobbling.  With a sampling temperature far from 1 in the config
    (``hparams.temperature_regime``: at most 0.3 or at least 2), the generation settings join
    the causes.

    **Why it matters.** The guide's "vanishing gradients / stalled training": reward plateaus,
    KL stays very low, the policy stops improving.  With a tiny KL the updates are too small
    (learning rate too low); with a normal KL the reward gives no usable signal.

    **Known false positives.** Short runs and runs resumed after convergence (the reward is
    already at its plateau); rewards that are binary and rare early on.

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan
    the finding is an info note saying what is watched, until ``fair_share``
    of the plan (default 1.0: all of it) is behind the run, past warm-up; a live run with no
    known plan is judged when it ends (:mod:`ppo_doctor.standing`).

    **Source.** The troubleshooting guide ("vanishing gradients / stalled training"); rlwatch's
    monotone-reward check; DeepDiagnosis' "loss not decreasing" (docs/sources.md#stagnation,
    docs/sources.md#peer-tools).
    """

    code = "PD301"
    name = "reward-not-improving"
    symptom = "stagnation"
    severity = "warning"
    basis = "outcome"
    evidence = "trend"
    requires = (("reward/score", "reward/total"),)
    params = {"min_rise": 2.0, "min_points": 20}
    causes = {"weak-learning-signal": 0.8, "lr-too-low": 0.5, "reward-model-flawed": 0.2}
    message = "reward did not improve over {n} points ({first:num} -> {last:num}, noise {noise:num}){why}"

    def evaluate(self, ctx):
        p = ctx.params
        metric = ctx.req[0].metric
        s, v = trend_arrays(ctx, metric)
        if len(v) < p["min_points"]:
            return
        r = rise(s, v, p["min_rise"])
        t, se, limit, improved = r.t, r.se, r.limit, r.improved
        # worse than the policy it started from, and never back: a rise from the trough is a
        # partial recovery, not an improvement
        worse = fell_from_start(v, t)
        fell = worse is not None
        sag, spread = [False, False], 0.0  # the window medians', then the window means', fall
        if not fell:
            if improved:
                return
            # a fall is another problem only when it is significant (the rules' LEARNING_RISE
            # noise standard errors): a sag within that is a flat reward wobbling
            # nor is one smaller than a fifth of the points' spread (``MIN_FALL_SHARE``): no
            # rule calls such a slide a fall, so the run is judged as the flat reward it is;
            # and only when the windows' means fall as their medians do, as a rise must show in
            # both (``reward_progress.rise``): a Chrome Dino score whose tenths' means sit at
            # 48-51 the whole run had 'fallen' 50 -> 43 by its window medians (blind set real26)
            spread = float(percentile(v, 95) - percentile(v, 5))
            sag = [
                change <= -LEARNING_RISE * max(se, 1e-12) and -change >= MIN_FALL_SHARE * spread
                for change in (t.change, r.means[1] - r.means[0])
            ]
            fell = all(sag)
            if fell and not (_never_rose(s, v, limit) and _ends_at_floor(v, t.window)):
                return  # it rose then fell (PD204), or sagged from where it began: another problem
        if reached_ceiling(v, t.window, limit):
            return  # it rose to its plateau within the first window and stayed there: solved, not stuck
        # judged with reward-collapse's settings as configured, so [rules.reward-collapse] reaches it
        rc = ctx.params_of("reward-collapse", COLLAPSE_DEFAULTS)
        if collapsed(ctx, metric, rc["min_gain"], rc["drop"], rc["min_points"]) is not None:
            return  # it did improve, then lost it: PD204 reward-collapse
        evidence = no_movement_evidence(ctx)
        task = task_improved(ctx)
        resumed = continuation(s)
        causes = dict(self.causes)
        if evidence:
            causes.update({"lr-too-low": 0.9, "weak-learning-signal": 0.5})
        if temperature_regime(ctx.view.cfg_float("temperature")) is not None:
            # samples drawn far from the policy's own distribution (near-greedy or near-uniform)
            # carry little the policy can learn from (PD203, diagnose.evidence.generation_settings)
            causes["generation-settings"] = 0.6
        best = int(np.argmax(v))
        yield self.finding(
            ctx,
            metric=metric,
            observed={"first": t.first, "last": t.last, "noise": t.noise},
            start_step=int(s[0]),
            threshold_step=int(s[min(len(s) - 1, t.window - 1)]),
            peak_step=int(s[best]),
            end_step=int(s[-1]),
            evidence=evidence,
            causes=causes,
            # no learning over the whole run, and the policy visibly not moving: the run is wasted;
            # but a task the author measures apart from the training reward that improves is
            # learning (the training reward is then noise or a proxy): a note
            severity="info" if task or resumed else "error" if evidence else "warning",
            fmt={
                "n": len(v),
                "why": (f"; it only fell: {worse}" if worse else "; it only fell" if fell else r.median_only() or _medians_fell(r, sag[0], spread))
                + ("; the policy is barely moving" if evidence and not task else "")
                + (f"; but {task}: the task improves" if task else "")
                + (f"; the log begins at step {int(s[0])}, {resumed}" if resumed and not task else ""),
            },
        )

    @classmethod
    def bad_example(cls):
        # lr ~ 0: reward and KL stay where they started
        return Example(
            series={"reward/score": flat(200, 0.5, 0.3, seed=19), "kl/ref": flat(200, 0.01, 0.005, seed=20)},
            config={"lr": 1e-10},
            metric_info={"kl/ref": {"estimator": "k1", "reduction": "seq_sum"}},
        )

    @classmethod
    def good_example(cls):
        return Example(series={"reward/score": saturating(200, 0.5, 3.0, sd=0.3, seed=21)})
