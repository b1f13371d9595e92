"""PD201 reward-spike."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..detect import Span, approx_median, default_window, median, quantiles, spans_to_mask, spike_scores, spikes
from ..standing import FAIR_SHARE
from .base import Example, Rule, RuleContext, as_trend
from .examples import saturating, with_points
from .incidents import incident
from .messages import fmt_num


# A batch whose reward std is under this share of the run's median std scored (nearly) one value.
ONE_VALUE_SHARE = 0.01
# A batch whose reward std is over this many times the run's median std holds an extreme sample:
# one sample that moves the mean by d among n raises the std to about d * sqrt(n), and a move the
# z test calls a spike is many batch-mean noise units (std / sqrt(n)), so the std at least doubles.
EXTREME_SAMPLE_SPREAD = 2.0
# Spikes are rare by definition: departures on more points than this share are how the reward is
# distributed (a reward at its floor whose better episodes come every few points), not jumps: a
# baselines ACKTR run of the real-run set sits at -100 with 1,050 such "spikes" in 6,661 points.
MAX_SPIKE_SHARE = 0.1


class RewardSpike(Rule):
    """The reward jumps far above its local level for a few steps.

    **What it detects.** Points of the mean reward (``reward/score``, else ``reward/total``)
    whose robust z-score against the local level (block medians of 5 % of the run, MAD scale)
    exceeds ``z``, and whose distance from that level is at least ``range_frac`` of the run's
    5-95 % range and ``level_frac`` of the median reward's magnitude (so a smooth, low-noise
    curve, or a reward stuck at one value, is not flagged for a small wiggle).  A reward that
    is one value on most points (a sparse 0/1 reward that almost never pays) has a zero MAD, so
    its robust z is no evidence (one success scores in the hundreds): there a point counts only
    when it departs from the level by more than the batch's own spread at that step
    (``reward/std``), i.e. the whole batch moved, as when a scorer returns one wrong value for
    every sample; one sample's rare success moves the batch mean by less than that.  Without
    ``reward/std`` such a series is not judged.

    A spike stands out on both sides: its peak departs by at least the same floor from the
    median of the ``window`` points before it and of those after it (where the run has them).
    The local level interpolates between block medians, so at the edge of a level shift, such
    as the last point of a plateau before the reward drops to 0 for good, a point lies far from
    the interpolated level while its neighbours on one side share its value: that is the start
    or the end of a level (PD204 judges a collapse), not a jump (a held-out run of the TRL GRPO suite,
    docs/scorecard.md: reward 1.0 for steps 3-13, then 0 to the end, has no spike at step 13).

    Whenever ``reward/std`` is logged, every spike must pass the same test, or show an extreme
    sample: a batch mean that moved by less than its batch's own spread, while that spread is
    ordinary (under ``EXTREME_SAMPLE_SPREAD`` times its run median), is the sampling noise of a
    mean of a few dozen samples, whatever its robust z.  The local scale of the z test comes
    from a block of 5 % of the run (6 points in 120), and a few points that happen to lie close
    together make ordinary noise look like a z of 12 (held-out runs of the TRL GRPO suite: a healthy
    run's 0.24 at step 2 against a per-sample spread of 0.71, and a x1000 run's 497 against a
    spread of about 600).  A scorer glitch (every sample moved) or an extreme sample (the
    spread jumps with it) still counts.  Error when
    the spike lies "far beyond the plausible range": more than one full 1-99 % range outside the
    other points.

    When ``reward/std`` at the largest spike is under ``ONE_VALUE_SHARE`` of its median over
    the run, every sample of that batch got the same score: a scorer that returned one value
    for a whole batch (a broken reward model or service), so the reward model comes first among
    the causes, before clipping and normalisation.

    **Why it matters.** The guide's "reward surge": the mean reward rises fast, far beyond a
    plausible range, usually because the policy found a reward-model exploit, or because
    rewards are not normalised / clipped and one batch dominates the update.

    A span that starts at the first logged point is not a spike: the reward there is the
    untrained policy's, or, for a rolling mean over the last 100 episodes, the mean of the few
    episodes finished so far (SB3 ``rollout/ep_rew_mean``: ``ep_info_buffer`` is a deque of
    ``stats_window_size`` = 100 episodes in ``stable_baselines3/common/base_class.py``).

    Departures on more than ``MAX_SPIKE_SHARE`` (10 %) of the points are not spikes but the
    reward's own distribution (a reward at its floor whose better episodes come every few points).

    **Known false positives.** Curricula or reward changes at a known step; evaluation rows
    mixed into the training series.

    **Evidence.** A spike is a sign, far beyond the plausible range or not: the reward came
    back after it, so nothing grew without bound (the contract's runaway), and it is kept as a
    warning (an error when far) only when the outcome after it is bad.  A score whose episodes
    are heavy-tailed (a DQN's Tetris score of 4 to 15,700 with single episodes at 136,000; a
    drone's return with two episodes at 9,550) spikes far beyond its range while the policy
    improves.  One "far beyond the plausible range" is also judged against
    the run's other points, a range that a prefix has not seen in full: it is a trend, an info
    note saying what is watched until ``fair_share`` of the plan (default 1.0: all of it) is
    behind the run, so a live run is never stopped on a range it has not seen yet.

    **Source.** The troubleshooting guide's "reward surge"; robust z as in rlwatch / ADTK
    PersistAD; OLMo 2 (arXiv:2501.00656) "spike score" and PaLM's (arXiv:2204.02311) loss-spike
    practice (docs/sources.md#reward-spike).
    """

    code = "PD201"
    name = "reward-spike"
    symptom = "reward_spike"
    severity = "warning"
    basis = "sign"
    watch = "the reward after the spikes: a spike the run absorbs is noise of the scorer, one it does not recover from is damage"
    requires = (("reward/score", "reward/total"),)
    params = {"z": 8.0, "range_frac": 0.25, "level_frac": 0.1, "direction": "up", "fair_share": FAIR_SHARE, "min_points": 20}
    causes = {"reward-model-flawed": 0.6, "reward-not-clipped": 0.6, "reward-not-normalized": 0.5, "lr-too-high": 0.2}
    message = "{count} reward spike(s), the largest {peak:num} at step {peak_step} (robust z {z:num} above the local level)"

    def evaluate(self, ctx):
        p = ctx.params
        x = ctx.req[0]
        metric, s, v = x.metric, x.steps, x.values
        if len(v) < p["min_points"]:
            return
        lo, hi = quantiles(v, [5, 95])
        window = default_window(len(v))
        scores = spike_scores(v, window)
        min_dev = max(p["range_frac"] * float(hi - lo), p["level_frac"] * abs(approx_median(v)))
        found = spikes(s, v, z=p["z"], window=window, direction=p["direction"], min_deviation=min_dev, scores=scores)
        resid = v - scores[1]
        found = [sp for sp in found if _stands_out(v, sp, resid, window, min_dev)]
        # most points sit exactly on the level: the z-scale is a fallback, not a spread, and
        # without the batch's spread nothing tells a batch-wide jump from one sample
        zero_mad = bool(found) and float(median(np.abs(resid - median(resid)))) == 0
        if found and ctx.has("reward/std"):
            found = _beyond_batch_noise(ctx, found, resid, unknown_counts=not zero_mad)
        elif zero_mad:
            found = []
        in_spikes = spans_to_mask(len(v), found)
        if not found or in_spikes.mean() > MAX_SPIKE_SHARE:
            return
        rest = v[~in_spikes]
        p1, p99 = quantiles(rest, [1, 99]) if len(rest) else (lo, hi)
        width = float(p99 - p1)
        centre = approx_median(rest) if len(rest) else approx_median(v)
        worst = max(found, key=lambda sp: abs(sp.peak_value - centre))
        far = worst.peak_value > p99 + width or worst.peak_value < p1 - width
        z = float(np.nanmax(np.abs(scores[0][[sp.peak_idx for sp in found]])))
        causes = None
        if _one_value_batch(ctx, worst.peak_step):
            # every sample of that batch got the same score: the scorer's output, not one extreme
            # sample that clipping or normalisation would tame
            causes = {"reward-model-flawed": 0.9, "reward-not-clipped": 0.4, "reward-not-normalized": 0.3}
        extra: dict[str, Any] = {"causes": causes} if causes else {}  # else the rule's own causes
        finding = incident(
            self,
            ctx,
            metric=metric,
            steps=s,
            values=v,
            span=found[0],
            direction="up" if worst.peak_value >= centre else "down",
            observed={"count": len(found), "peak": worst.peak_value, "z": z, "typical_high": float(p99)},
            peak_step=worst.peak_step,
            end_step=found[-1].end_step,
            severity="error" if far else "warning",
            # the reward came back after the spike, far beyond the range or not: a sign, kept only
            # when the reward suffers after it (two healthy real runs of the labelled set, whose
            # episode scores are heavy-tailed, were errors when a far spike was a runaway)
            basis="sign",
            evidence=[f"other points lie in [{fmt_num(p1)}, {fmt_num(p99)}]"]
            + (["reward/std is ~0 at the spike: every sample of that batch got the same score"] if causes else []),
            **extra,
        )
        # "far beyond the plausible range" is judged against the run's other points: on a prefix
        # that range is still growing (a self-play ML-Agents run of the real-run set had one
        # summary at 1.26 against -0.3..0.2 at 1.3M steps, inside the range of its finished run),
        # so it is a trend, watched until the run has had its fair share of the plan
        yield as_trend(ctx, finding) if far else finding

    @classmethod
    def bad_example(cls):
        return Example(series={"reward/score": with_points(saturating(200, 0.0, 2.0, sd=0.2, seed=10), {120: 9.0, 121: 8.0})})

    @classmethod
    def good_example(cls):
        return Example(series={"reward/score": saturating(200, 0.0, 2.0, sd=0.2, seed=11)})


def _stands_out(v: np.ndarray, sp: Span, resid: np.ndarray, window: int, min_dev: float) -> bool:
    """The span's peak departs, in the direction of its deviation from the local level, by at
    least ``min_dev`` from the median of the ``window`` points on each side that has any, and
    the series came back after it: a jump at the last logged points is the start of a new level
    as much as a spike (a live prefix ending in a reward that takes off), and only the points
    after it can tell.  A span at the first logged point has no level to jump from: the first
    point is the reward of the policy before training moved it, and a rolling mean's first point
    (SB3's ``rollout/ep_rew_mean``, baselines' ``eprewmean``: the mean of the last 100 episodes)
    averages the few episodes finished so far, so it swings far more than the points after it."""
    if sp.end_idx >= len(v) - 1 or sp.start_idx == 0:
        return False
    sign = 1.0 if resid[sp.peak_idx] >= 0 else -1.0
    sides = [v[max(0, sp.start_idx - window) : sp.start_idx], v[sp.end_idx + 1 : sp.end_idx + 1 + window]]
    return all(sign * (v[sp.peak_idx] - float(median(side))) >= min_dev for side in sides if len(side))


def _beyond_batch_noise(ctx: RuleContext, found: list[Span], resid: np.ndarray, *, unknown_counts: bool) -> list[Span]:
    """The spikes whose deviation exceeds the batch's own ``reward/std`` at the spike's step (the
    whole batch moved), or whose step's std is over ``EXTREME_SAMPLE_SPREAD`` times its run median
    (an extreme sample; not applied when that median is 0, as for a sparse reward that almost
    never pays, whose one success is one sample).  A spike at a step without a logged std counts
    when ``unknown_counts`` (the z test stands alone there)."""
    ss, sv = ctx.finite("reward/std")
    spread = dict(zip(ss.tolist(), sv.tolist()))
    typical = float(median(sv)) if len(sv) else 0.0

    def counts(sp: Span) -> bool:
        at = spread.get(sp.peak_step)
        if at is None:
            return unknown_counts
        return abs(resid[sp.peak_idx]) > at or (typical > 0 and at > EXTREME_SAMPLE_SPREAD * typical)

    return [sp for sp in found if counts(sp)]


def _one_value_batch(ctx: RuleContext, step: int) -> bool:
    """``reward/std`` at ``step`` is under ``ONE_VALUE_SHARE`` of its run median (which is > 0)."""
    if not ctx.has("reward/std"):
        return False
    ss, sv = ctx.finite("reward/std")
    at = np.flatnonzero(ss == step)
    typical = float(median(sv)) if len(sv) else 0.0
    return bool(len(at) and typical > 0 and sv[at[0]] < ONE_VALUE_SHARE * typical)
