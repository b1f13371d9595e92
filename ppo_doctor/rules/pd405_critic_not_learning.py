"""PD405 critic-not-learning."""

from __future__ import annotations

import math

import numpy as np

from .base import Example, Rule, RuleContext
from .examples import flat, ramp, saturating
from .inputs import windows
from ..detect import early_late
from .messages import fmt_num
from .reward_progress import learning_despite_critic


class CriticNotLearning(Rule):
    """The critic learns nothing: its loss never falls and it explains none of the returns.

    **What it detects.** Two scale-free conditions at once.  No progress: the median
    ``loss/value`` of the last 10 % of the run is at least its median over the first 10 %
    (an untrained value head starts far off and a working critic cuts that error many times
    over).  No fit: at the end the critic does not explain the returns, judged by
    ``value/explained_var`` when it is logged (late median below ``ev_max``, 0.1, where 1 is a
    perfect critic and 0 one that predicts the mean), otherwise by the late value loss
    exceeding the late variance of the scores across the batch (``reward/std`` squared): worse
    than predicting the batch mean.

    Neither condition looks at the loss's absolute size, which grows with the square of the
    reward scale: rewards x100 with a healthy critic give value losses 10,000 times larger that
    still fall and still explain the returns (the SB3 trap).  What separates a critic that
    cannot fit is that its error does not shrink against the returns' own spread.

    **Why it matters.** The guide's "value loss stays high": advantages are returns minus the
    critic's guess, so a critic that explains nothing leaves only the returns' noise in them.
    A typical cause is an unnormalised reward on a scale the critic cannot follow: value
    clipping (TRL ``cliprange_value`` 0.2 in reward units) and a small value learning rate let
    the prediction crawl toward returns in the hundreds (DeepSpeedExamples#556: the critic loss
    kept growing with the returns' scale; fix: reward scaling).  Also a value learning rate
    far too low or too few value updates.

    **While the policy learns.** When the mean reward rises clearly over the run (3 noise
    standard errors), the finding is an info note, not a symptom: a weak critic has not stopped
    the policy, and once a task is solved the returns sit at a cap with little variance left to
    explain (``reward_progress.learning_despite_critic``).

    **Constant returns.** When the returns of most of the last 10 % of updates were all equal
    (``RunView.returns``: SB3/CleanRL/baselines log an explained variance of NaN exactly then, or
    a batch ``reward/std`` of 0), as on a task held at its ceiling, there is nothing to explain
    and a tiny value loss is no trouble: not judged.

    **Known false positives.** Sparse-reward tasks whose returns carry almost no learnable
    variance; a critic that was pre-trained, so its first loss is already its best.

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan
    the finding is an info note saying what is watched, until ``fair_share``
    of the plan (default 1.0: all of it) is behind the run, past warm-up; a live run with no
    known plan is judged when it ends (:mod:`ppo_doctor.standing`).

    **Source.** The troubleshooting guide ("value loss too high"; value-function instability: value
    LR, undertrained critic, unnormalised rewards); PTT explained variance < 0.1; CleanRL's ``1 -
    Var(y - v)/Var(y)``; DeepSpeedExamples#556 (docs/sources.md#explained-variance,
    docs/sources.md#value-loss).
    """

    code = "PD405"
    name = "critic-not-learning"
    symptom = "value_instability"
    severity = "warning"
    basis = "outcome"
    evidence = "trend"
    requires = ("loss/value", ("value/explained_var", "reward/std"))
    params = {"ev_max": 0.1, "min_points": 20}
    causes = {"value-undertrained": 0.7, "value-lr-mistuned": 0.6, "reward-not-normalized": 0.6, "gae-lambda": 0.2}
    message = "value loss made no progress ({early:num} at the start, {late:num} at the end) and {fit}: the critic learns nothing"

    def evaluate(self, ctx):
        p = ctx.params
        s, v = ctx.req[0].steps, ctx.req[0].values
        n = len(v)
        if n < p["min_points"]:
            return
        early, late, w = early_late(v)
        if not (late >= early > 0):
            return
        if ctx.view.returns.constant_at(s[-w:]).mean() >= 0.5:
            return  # returns all equal at the end (a solved task at its ceiling): nothing to explain
        fit, observed = self._fit(ctx, late)
        if fit is None:
            return
        observed.update({"early": early, "late": late})
        learning = learning_despite_critic(ctx)
        late_start = n - windows(n)
        yield self.finding(
            ctx,
            metric="loss/value",
            observed=observed,
            start_step=int(s[0]),
            threshold_step=int(s[late_start]),
            peak_step=int(s[int(np.argmax(v))]),
            end_step=int(s[-1]),
            evidence=[f"value loss: median {fmt_num(early)} over the first {w} points, {fmt_num(late)} over the last {w}", *([learning] if learning else [])],
            severity="info" if learning else self.severity,
            fmt={"fit": fit},
        )

    def _fit(self, ctx: RuleContext, late_loss: float) -> tuple[str | None, dict[str, float]]:
        """Why the critic does not fit at the end (None when it does, or cannot be judged)."""
        p = ctx.params
        if ctx.has("value/explained_var"):
            _, ev = ctx.finite("value/explained_var")
            if len(ev) >= 3:
                _, late_ev, _ = early_late(ev)
                if late_ev >= p["ev_max"]:
                    return None, {}
                return f"its explained variance ends at {fmt_num(late_ev)} (< {fmt_num(p['ev_max'])})", {"late_ev": late_ev}
        if ctx.has("reward/std"):
            _, sd = ctx.finite("reward/std")
            if len(sd) >= 3:
                _, late_sd, _ = early_late(sd)
                var = late_sd * late_sd
                if 0 < var < math.inf and late_loss > var:  # a std of 1e-200 squares to 0.0
                    ratio = late_loss / var
                    return f"it is {fmt_num(ratio)}x the scores' variance ({fmt_num(late_sd)}^2)", {"late_var_ratio": ratio}
        return None, {}

    @classmethod
    def bad_example(cls):
        # rewards x100 without normalisation: the critic's loss creeps up while the returns'
        # spread shrinks, and it never explains them
        n = 120
        return Example(
            series={
                "loss/value": ramp(n, 1800.0, 2800.0, sd=80.0, seed=36),
                "value/explained_var": saturating(n, 0.0, 0.07, sd=0.01, seed=37),
                "reward/score": flat(n, 40.0, sd=3.0, seed=38),
                "reward/std": saturating(n, 68.0, 24.0, sd=2.0, seed=39),
            }
        )

    @classmethod
    def good_example(cls):
        # the SB3 trap: rewards x100 and growing, the value loss in the thousands and growing
        # with them, yet the critic explains most of the returns
        n = 120
        return Example(
            series={
                "loss/value": ramp(n, 900.0, 1250.0, sd=60.0, seed=40),
                "value/explained_var": saturating(n, 0.3, 0.65, sd=0.03, seed=41),
                "reward/score": saturating(n, 180.0, 640.0, sd=10.0, seed=42),
            },
            framework="sb3",
        )
