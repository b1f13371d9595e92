"""PD404 value-loss-vs-reward-scale."""

from __future__ import annotations

import numpy as np

from .base import Example, Rule
from .examples import decay, flat
from .inputs import windows
from .value_scale import reward_scale, window_slices


class ValueLossVsRewardScale(Rule):
    """The value loss is large relative to the squared reward scale at the end of the run.

    **What it detects.** The late median of ``loss/value`` (last 10 %) divided by the squared
    reward scale over the same window (|median reward| + spread, spread = batch ``reward/std``
    when logged) is above ``max_ratio``: the critic's squared error exceeds what predicting
    zero would cost.  The value loss is never judged in absolute terms: rewards scaled x100
    make a healthy value loss 10,000 times larger (the SB3 trap), and the ratio is unchanged.

    **Why it matters.** A critic that cannot fit the returns even at the end of training gives
    advantages that are mostly noise (value LR, too few value updates, or a reward scale the
    critic cannot follow).

    **Known false positives.** Value losses that include a large constant term; rewards that
    are all near 0 with rare large payoffs.

    **Evidence.** A trend: judged on the whole run.  On a run short of its plan (live, or
    stopped early) the finding is an info note saying what is watched, until ``fair_share``
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
    evidence = "trend"
    requires = ("loss/value", ("reward/score", "reward/total", "return/mean"))
    params = {"max_ratio": 1.0, "min_points": 20}
    causes = {"value-undertrained": 0.7, "value-lr-mistuned": 0.7, "reward-not-normalized": 0.5}
    message = "late value loss {late:num} is {ratio:num}x the squared reward scale ({scale:num}^2): the critic cannot fit the returns"

    def evaluate(self, ctx):
        p = ctx.params
        (x, reward) = ctx.req
        s, v = x.steps, x.values
        if len(v) < p["min_points"]:
            return
        w = windows(len(v))
        late = float(np.median(v[-w:]))
        _, late_sl = window_slices(len(v))
        # the reward scale over the same late share of its own series
        scale = reward_scale(ctx, window_slices(len(reward))[1]) if len(reward) else None
        if not scale:
            return
        ratio = late / scale**2
        if ratio <= p["max_ratio"]:
            return
        yield self.finding(
            ctx,
            metric="loss/value",
            observed={"late": late, "scale": scale, "ratio": ratio},
            start_step=int(s[late_sl][0]),
            threshold_step=int(s[late_sl][0]),
            peak_step=int(s[late_sl][int(np.argmax(v[late_sl]))]),
            end_step=int(s[-1]),
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
