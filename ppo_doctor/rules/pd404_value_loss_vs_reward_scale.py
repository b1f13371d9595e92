"""PD404 value-loss-vs-reward-scale."""

from __future__ import annotations

import numpy as np

from ..detect import early_late, median
from .base import Example, Rule, RuleContext
from .examples import decay, flat
from .inputs import windows
from .messages import fmt_num
from .value_scale import reward_scale, window_slices


class ValueLossVsRewardScale(Rule):
    """The value loss is large relative to the squared reward scale at the end of the run.

    **What it detects.** The late median of ``loss/value`` (last 10 %) divided by the squared
    reward scale over the same window (|median reward| + spread, spread = batch ``reward/std``
    when logged) is above ``max_ratio``: the critic's squared error exceeds what predicting
    zero would cost.  The value loss is never judged in absolute terms: rewards scaled x100
    make a healthy value loss 10,000 times larger (the SB3 trap), and the ratio is unchanged.

    **A rolling mean of episodes.** When the reward is a mean over the last N episodes (SB3
    ``rollout/ep_rew_mean``, baselines ``eprewmean``: N = 100, ``RunView.returns``), its spread
    is about 1/sqrt(N) of the per-episode returns' the critic regresses on, so the scale
    understates them; the finding says so.  The critic's error against the returns' own
    variance is then read from the explained variance (``1 - Var(returns - values) /
    Var(returns)``): a late median at or above ``-ev_margin`` (-0.05) means an error no larger
    than the returns' spread, and the finding is an info note.

    **Why it matters.** A critic that cannot fit the returns even at the end of training gives
    advantages that are mostly noise (value LR, too few value updates, or a reward scale the
    critic cannot follow).

    **Known false positives.** Value losses that include a large constant term; rewards that
    are all near 0 with rare large payoffs; a rolling-mean reward without an explained
    variance (the finding then says the scale is a rolling mean's).

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan
    the finding is an info note saying what is watched, until ``fair_share``
    of the plan (default 1.0: all of it) is behind the run, past warm-up; a live run with no
    known plan is judged when it ends (:mod:`ppo_doctor.standing`).

    **Source.** The troubleshooting guide ("value loss too high"; value-function instability: value
    LR, undertrained critic); PTT value_loss > 0.5 warns it is scale-dependent;
    DeepSpeedExamples#556 (docs/sources.md#value-loss).
    """

    code = "PD404"
    name = "value-loss-vs-reward-scale"
    symptom = "value_instability"
    severity = "warning"
    basis = "sign"
    watch = "the reward: a value loss out of scale with the reward matters if learning stalls"
    evidence = "trend"
    requires = ("loss/value", ("reward/score", "reward/total", "return/mean"))
    params = {"max_ratio": 1.0, "ev_margin": 0.05, "min_points": 20}
    causes = {"value-undertrained": 0.7, "value-lr-mistuned": 0.7, "reward-not-normalized": 0.5}
    message = "late value loss {late:num} is {ratio:num}x the squared reward scale ({scale:num}^2): {conclusion}"

    def evaluate(self, ctx):
        p = ctx.params
        (x, reward) = ctx.req
        s, v = x.steps, x.values
        if len(v) < p["min_points"]:
            return
        w = windows(len(v))
        late = float(median(v[-w:]))
        _, late_sl = window_slices(len(v))
        # the reward scale over the same late share of its own series
        scale = reward_scale(ctx, window_slices(len(reward))[1]) if len(reward) else None
        if not scale:
            return
        ratio = late / scale**2
        if ratio <= p["max_ratio"]:
            return
        evidence, severity = _rolling_mean(ctx, p["ev_margin"])
        yield self.finding(
            ctx,
            metric="loss/value",
            observed={"late": late, "scale": scale, "ratio": ratio},
            start_step=int(s[late_sl][0]),
            threshold_step=int(s[late_sl][0]),
            peak_step=int(s[late_sl][int(np.argmax(v[late_sl]))]),
            end_step=int(s[-1]),
            evidence=evidence,
            severity=severity or self.severity,
            fmt={"conclusion": "the critic cannot fit the returns" if severity is None else "a rolling mean's scale, not the per-episode returns'"},
        )

    @classmethod
    def bad_example(cls):
        # whitened rewards (scale ~1) but the value loss stays around 40
        return Example(series={"loss/value": flat(100, 40.0, 4.0, seed=31), "reward/score": flat(100, 0.2, 0.8, seed=32)})

    @classmethod
    def good_example(cls):
        # the SB3 trap: rewards x100, value loss in the thousands, but small against reward^2
        return Example(
            series={"loss/value": np.abs(decay(100, 9000.0, 2000.0, sd=300.0, seed=33)), "reward/score": flat(100, 450.0, 40.0, seed=34)},
            framework="sb3",
        )


def _rolling_mean(ctx: RuleContext, ev_margin: float) -> tuple[list[str], str | None]:
    """(evidence, severity or None) when the reward is a rolling mean of episodes
    (:mod:`ppo_doctor.view.returns`): its spread is about 1/sqrt(N) of the per-episode returns'
    the critic fits, so the scale understates them.  The critic's error against the returns' own
    variance is then read from the explained variance, ``1 - Var(returns - values) /
    Var(returns)``: at or above ``-ev_margin`` it is no larger than the returns' spread, and the
    finding is an info note."""
    returns = ctx.view.returns
    if returns.rolling is None:
        return [], None
    evidence = [
        f"the reward ({returns.rolling_tag}) is a mean over the last {returns.rolling} episodes: its spread is about "
        f"1/{fmt_num(returns.rolling ** 0.5)} of the per-episode returns' the critic fits, so this scale understates them"
    ]
    if ctx.has("value/explained_var"):
        _, ev = ctx.finite("value/explained_var")
        if len(ev) >= 3:
            late_ev = early_late(ev)[1]
            if late_ev >= -ev_margin:
                evidence.append(f"the explained variance ends at {fmt_num(late_ev)}: the critic's error is no larger than the returns' own spread")
                return evidence, "info"
    return evidence, None
