"""PD401 value-loss-rising."""

from __future__ import annotations

import numpy as np

from ..detect import approx_median, block_min, mask_to_spans, median, theil_sen
from .base import Example, Rule
from .examples import decay, ramp, saturating
from .incidents import incident
from .inputs import windows
from .messages import fmt_num
from .outcome import still_growing
from .value_scale import reward_scale, window_slices


class ValueLossRising(Rule):
    """The value loss grows far above its best level, beyond what the reward scale explains.

    **What it detects.** The median ``loss/value`` of the last 10 % of the run is at least
    ``factor`` times its lowest windowed median earlier in the run (its trough), the trend
    after the trough is upward, and the growth is not explained by the rewards growing: the
    growth is divided by the growth of the squared reward scale (|median reward| + spread,
    first vs last window).  The trough is floored at 1 % of the run's median value loss: a
    critic that was ~0 while the returns were constant would make any later loss look like
    infinite growth.  The late loss must also be material: at least ``min_share`` (0.1) of the
    squared late reward scale, as PD402 asks of a spike (a critic that fit the returns to 3e-5
    and now misses by 0.016 on rewards of about 1 is 500x its best, and still nearly exact).
    A warning: value trouble degrades the advantages, it is rarely fatal alone.  It is a sign,
    kept as a warning when the reward suffers after it, unless it is a runaway: at least
    ``runaway`` (100) times its best level after the reward scale's growth and still climbing on a
    log scale at its last points (:func:`.outcome.still_growing`), or ``off_scale`` (1000) times
    it, beyond what any healthy run of the labelled real-run set reaches (the largest there is
    58x, an ML-Agents soccer curriculum; 5 healthy runs of 463 from 4 repositories rise 4x or
    more): a critic diverging whatever the reward has done so far (blind set real53: a keras-rl
    DQN whose TD loss went 0.01 -> 4.6e13, 8.7e6x after the reward scale, its mean Q 0.5 -> 5.9e5
    on Space Invaders returns of 10-35, while the return wandered 10-17).

    **Constant returns.** The best level is sought only among updates whose returns varied
    (``RunView.returns``: SB3/CleanRL/baselines log an explained variance of NaN on an update
    whose returns were all equal, a batch ``reward/std`` of 0 says it of the scores).  While
    every episode returns the same (a chess agent that loses at once, -100, every game) the
    critic fits a constant and its loss decays toward 0; when the policy starts winning the
    loss jumps to about the returns' variance: the returns grew, the critic did not diverge.

    **Why it matters.** "Value loss too high: stays high or swings wildly; bad advantages
    destabilise the policy."  A critic whose error keeps growing feeds noise into the
    advantages (DeepSpeedExamples#556: critic loss kept growing while the returns' scale grew
    from ~4 to ~20; fix: running reward normalisation).

    **Known false positives.** Classic-RL runs whose returns grow as the agent improves are
    covered by the reward-scale adjustment only when a reward metric is logged; a stretch of
    constant returns that no NaN explained variance or zero ``reward/std`` marks.

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan
    the finding is an info note saying what is watched, until ``fair_share``
    of the plan (default 1.0: all of it) is behind the run, past warm-up; a live run with no
    known plan is judged when it ends (:mod:`ppo_doctor.standing`).

    **Source.** The troubleshooting guide ("value loss too high"); DeepSpeedExamples#556; TRL docs
    ("value loss will spike / NaN when not going well") (docs/sources.md#value-loss).
    """

    code = "PD401"
    name = "value-loss-rising"
    symptom = "value_instability"
    severity = "warning"
    basis = "sign"
    watch = "the reward and explained variance: a rising value loss matters if the critic stops tracking returns"
    evidence = "trend"
    requires = ("loss/value",)
    params = {"factor": 4.0, "runaway": 100.0, "off_scale": 1000.0, "trough_floor": 0.01, "min_share": 0.1, "min_points": 20}
    causes = {"value-lr-mistuned": 0.8, "reward-not-normalized": 0.7, "value-undertrained": 0.4, "gae-lambda": 0.2}
    message = (
        "value loss rose {growth:num}x above its best level ({trough:num} -> {late:num}){scale_note}: the critic is diverging"
    )

    def evaluate(self, ctx):
        p = ctx.params
        x = ctx.req[0]
        s, v = x.steps, x.values
        n = len(v)
        if n < p["min_points"]:
            return
        w = windows(n)
        late = float(median(v[-w:]))
        # the best level is sought where the returns varied: while they were all equal the critic
        # fitted a constant, a loss of about 0 that says nothing of how it fits varying returns
        varying = np.flatnonzero(~ctx.view.returns.constant_at(s)[:-w])
        sub_idx, trough = block_min(v[varying], w)
        if trough is None or sub_idx is None:
            return
        trough_idx = int(varying[sub_idx])
        trough = max(trough, p["trough_floor"] * approx_median(v))
        if not trough > 0:
            return
        growth = late / trough
        if growth < p["factor"]:
            return
        slope, _ = theil_sen(s[trough_idx:], v[trough_idx:])
        if not slope > 0:
            return
        first_sl, last_sl = window_slices(n)
        s0, s1 = reward_scale(ctx, first_sl), reward_scale(ctx, last_sl)
        ratio = s1 / s0 if s0 and s1 else 1.0
        scale_growth = ratio * ratio  # not ** 2: a float power raises OverflowError past 1e308
        adjusted = growth / max(scale_growth, 1.0)
        if adjusted < p["factor"]:
            return
        if s1 and late < p["min_share"] * s1 * s1:
            return  # far above its best, yet a small error against the rewards: not diverging
        span = mask_to_spans(s, (v >= p["factor"] * trough) & (np.arange(n) > trough_idx), v)
        if not span:
            return
        note = f", {fmt_num(adjusted)}x after the reward scale's growth" if scale_growth > 1 else ""
        # orders of magnitude above its best and still climbing (on a log scale) at the last
        # points: the critic is running away, whatever the reward has done so far (the contract's
        # runaway; PD602 judges a gradient norm the same way)
        after = slice(trough_idx, None)
        climbing = still_growing(s[after], np.log10(np.maximum(v[after], 1e-300)))
        runaway = adjusted >= p["off_scale"] or (adjusted >= p["runaway"] and climbing)
        yield incident(
            self,
            ctx,
            metric=x.metric,
            steps=s,
            values=v,
            span=span[0],
            direction="up",
            log_scale=True,
            observed={"trough": trough, "late": late, "growth": growth, "adjusted_growth": adjusted},
            peak_step=int(s[int(np.argmax(v))]),
            end_step=int(s[-1]),
            fmt={"scale_note": note},
            basis="runaway" if runaway else self.basis,
        )

    @classmethod
    def bad_example(cls):
        n = 200
        v = np.concatenate([decay(60, 2.0, 0.2, sd=0.02, seed=24), ramp(140, 0.2, 6.0, sd=0.1, seed=25)])
        return Example(series={"loss/value": np.abs(v), "reward/score": saturating(n, 1.0, 1.3, sd=0.1)})

    @classmethod
    def good_example(cls):
        # SB3-style trap: returns grow ~20x as the agent learns, so the value loss grows ~400x
        n = 200
        reward = saturating(n, 20.0, 400.0, sd=5.0, seed=26)
        return Example(series={"loss/value": (reward / 20.0) ** 2 * 3.0, "reward/score": reward}, framework="sb3")
