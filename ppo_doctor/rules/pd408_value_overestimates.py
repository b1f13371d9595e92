"""PD408 value-overestimates."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ..detect import finite_xy, median, percentile
from ..results import Finding
from .base import Example, Rule, RuleContext
from .examples import flat, ramp, saturating
from .messages import fmt_num
from .reward_progress import COLLAPSE_DEFAULTS, collapsed


class ValueOverestimates(Rule):
    """The critic's value estimate climbs while the return it estimates collapses.

    **What it detects.** The reward collapsed (reward-collapse's test, PD204's settings: it fell
    from an established peak level by at least half its gain and stayed down), and over the same
    stretch the critic's mean prediction ``value/mean`` (Spinning Up's ``AverageQVals``, ML-Agents'
    value estimate, TRL/veRL's value mean) rose: its median over the last tenth of its points,
    after the reward's fall, sits above its median around the reward's peak by at least
    ``factor`` (1) times that level's magnitude (it at least doubled), and above the 95th
    percentile of everything it estimated up to the fall.

    **Why it matters.** A critic estimates the return its policy will get; one whose estimate
    doubles while that return collapses is no longer fitted to the returns but to its own
    bootstrapped targets.  That is the over-estimation feedback of off-policy actor-critics
    (DDPG, and SAC without enough entropy or twin-critic correction: the actor climbs the
    critic's errors, the critic bootstraps from the actor's actions, and the Q values run away
    while the returns fall; Fujimoto et al. 2018, "Addressing Function Approximation Error in
    Actor-Critic Methods"), and of any value head fitted with a step size its targets cannot
    follow.  The outcome (the return collapsed) is PD204's; this finding says the critic ran the
    other way, so the value function is where to look.

    **Known false positives.** A reward that is re-defined mid-run (a curriculum stage) while the
    critic's targets keep their old scale.  A critic that follows a falling return downward, or
    whose estimate moves within the range it held before the fall, is not flagged: only a critic
    moving against the returns, beyond anything it estimated before, is.

    **Evidence.** A trend: judged on the whole run (on a live run short of its plan an info note
    until ``fair_share`` of the plan is behind it, :mod:`ppo_doctor.standing`).

    **Source.** Fujimoto, van Hoof, Meger 2018 (TD3: over-estimation bias and its accumulation);
    Spinning Up's DDPG/TD3/SAC logs (``AverageQVals``, ``LossQ``); the troubleshooting guide's
    value-function instability (docs/sources.md#value-loss).
    """

    code = "PD408"
    name = "value-overestimates"
    symptom = "value_instability"
    severity = "warning"
    # a collapsed return and a critic running the other way: an outcome and a runaway
    basis = "outcome"
    evidence = "trend"
    requires = ("value/mean", ("reward/score", "reward/total"))
    params = {"factor": 1.0, "min_points": 20}
    causes = {"value-lr-mistuned": 0.7, "lr-too-high": 0.5, "reward-not-normalized": 0.4}
    message = (
        "the critic's value estimate rose {q_peak:num} -> {q_late:num} while the return it estimates fell "
        "{r_peak:num} -> {r_late:num}: it over-estimates, fitted to its own targets rather than the returns"
    )

    def evaluate(self, ctx: RuleContext) -> Iterator[Finding]:
        p = ctx.params
        qs, qv = finite_xy(ctx.req[0].steps, ctx.req[0].values)
        if len(qv) < p["min_points"]:
            return
        collapse = ctx.params_of("reward-collapse", COLLAPSE_DEFAULTS)
        found = collapsed(ctx, ctx.req[1].metric, collapse["min_gain"], collapse["drop"], collapse["min_points"])
        if found is None:
            return
        s, pd = found
        if pd.fall_idx is None:  # a collapse has fallen; the type does not say so
            return
        half = max(1, pd.window // 2)
        peak_lo, peak_hi = int(s[max(0, pd.peak_idx - half)]), int(s[min(len(s) - 1, pd.peak_idx + half)])
        fall_step = int(s[pd.fall_idx])
        at_peak = qv[(qs >= peak_lo) & (qs <= peak_hi)]
        before_fall = qv[qs <= fall_step]
        w = max(3, len(qv) // 10)
        late_q = qv[-w:][qs[-w:] >= fall_step]
        if len(at_peak) < 3 or len(late_q) < 3 or len(before_fall) < 3:
            return
        q_peak, q_late = float(median(at_peak)), float(median(late_q))
        line = q_peak + p["factor"] * abs(q_peak)
        if not (q_late >= line and q_late > float(percentile(before_fall, 95))):
            return
        above = np.flatnonzero((qs >= peak_lo) & (qv >= line))
        onset = int(qs[above[0]]) if len(above) else fall_step
        yield self.finding(
            ctx,
            metric=ctx.req[0].metric,
            observed={"q_peak": q_peak, "q_late": q_late, "r_peak": pd.peak, "r_late": pd.late},
            start_step=onset,
            threshold_step=onset,
            peak_step=int(qs[int(np.argmax(qv))]),
            end_step=int(qs[-1]),
            evidence=[
                f"{ctx.req[1].metric} peaked at step {int(s[pd.peak_idx])} and fell below {fmt_num(pd.mark)} at step {fall_step}",
                f"{ctx.req[0].metric} {fmt_num(q_peak)} around the peak, {fmt_num(q_late)} over its last {len(late_q)} points",
            ],
        )

    @classmethod
    def bad_example(cls) -> Example:
        # Spinning Up DDPG-like: the return climbs to ~600 and collapses at step 150 while the
        # Q estimate, ~150 while the policy was good, climbs to ~800
        reward = np.r_[saturating(150, 0.0, 600.0, rate=4, sd=20.0, seed=81), flat(50, -500.0, 60.0, seed=82)]
        q = np.r_[saturating(150, 20.0, 150.0, rate=4, sd=5.0, seed=83), ramp(50, 150.0, 800.0, sd=10.0, seed=84)]
        return Example(series={"reward/score": reward, "value/mean": q})

    @classmethod
    def good_example(cls) -> Example:
        # the critic's estimate grows tenfold as the return it estimates climbs: it tracks them
        reward = saturating(200, 0.0, 600.0, rate=4, sd=20.0, seed=81)
        q = saturating(200, 20.0, 300.0, rate=4, sd=5.0, seed=83)
        return Example(series={"reward/score": reward, "value/mean": q})
