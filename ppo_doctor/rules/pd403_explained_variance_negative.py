"""PD403 explained-variance-negative."""

from __future__ import annotations

from typing import Iterator

from ..detect import approx_median
from ..results import Finding
from .base import Example, RuleContext
from .examples import ramp, saturating
from .inputs import Input
from .reward_progress import learning_despite_critic
from .shapes import Stretch, SustainedRule


class ExplainedVarianceNegative(SustainedRule[Input]):
    """The critic explains less than nothing: explained variance stays below 0.

    **What it detects.** After a warm-up (the first ``warmup`` share of the run, where an
    untrained critic is expected to be poor), the median of ``value/explained_var`` over the
    rest of the run is below ``-margin`` (-0.05), with a sustained stretch below it.  Updates whose
    returns were all equal (``RunView.returns``: a batch ``reward/std`` of 0) are left out: EV
    divides by the returns' variance, 0 there, and means nothing.  Error when
    that median is below ``error_below`` (-1): the critic is far worse than predicting the
    mean return.  An EV within ``margin`` of 0 is a critic that predicts about the mean return
    (a batch estimate of EV scatters around 0 for it; -1e-6 is 0): it adds no error, it
    explains nothing, and PD405 judges whether it is learning at all.  NaN values (CleanRL
    writes NaN when the returns are constant) are ignored here.

    **Why it matters.** EV = 1 - Var(returns - values) / Var(returns).  Below 0 the value
    predictions add error instead of removing it, so the advantages are noisier than with no
    critic at all.  Typical causes: value learning rate, no critic warm-up, unscaled rewards.

    **While the policy learns.** When the mean reward rises clearly over the run (3 noise
    standard errors), the finding is an info note, not a symptom: a weak critic has not stopped
    the policy, and once a task is solved the returns sit at a cap with little variance left to
    explain (``reward_progress.learning_despite_critic``).

    **Known false positives.** Sparse-reward or saturated-reward tasks whose returns have
    almost no variance: EV divides by that variance and swings to -10 or -40 on a critic whose
    absolute error is tiny; the median resists isolated swings, not a whole run of them.  Runs
    where EV is computed on a tiny batch.

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan
    the finding is an info note saying what is watched, until ``fair_share``
    of the plan (default 1.0: all of it) is behind the run, past warm-up; a live run with no
    known plan is judged when it ends (:mod:`ppo_doctor.standing`).

    **Source.** PTT (EV < 0.1 flagged); CleanRL's formula; verl#498 (EV of -72 with a NaN value
    loss); SB3#324 / baselines#975 (EV negative before a collapse)
    (docs/sources.md#explained-variance).
    """

    code = "PD403"
    name = "explained-variance-negative"
    symptom = "value_instability"
    severity = "warning"
    basis = "outcome"
    evidence = "trend"
    requires = ("value/explained_var",)
    params = {"warmup": 0.1, "margin": 0.05, "error_below": -1.0, "min_points": 10}
    causes = {"value-undertrained": 0.8, "value-lr-mistuned": 0.7, "reward-not-normalized": 0.4, "gae-lambda": 0.2}
    message = "explained variance of the critic stays below 0 after warm-up (median {median:num}, min {min:num}): it adds error to the advantages"
    direction = "down"

    def points(self, ctx: RuleContext) -> Input:
        x = ctx.req[0]
        start = int(round(len(x) * ctx.params["warmup"]))
        # an update whose returns were all equal has no variance to explain: its EV is 0/0
        varying = ~ctx.view.returns.constant_at(x.steps[start:])
        return Input(x.metric, x.steps[start:][varying], x.values[start:][varying])

    def level(self, ctx: RuleContext, x: Input) -> float | None:
        return -ctx.params["margin"] if approx_median(x.values) < -ctx.params["margin"] else None

    def report(self, ctx: RuleContext, st: Stretch[Input]) -> Iterator[Finding]:
        median = approx_median(st.points.values)
        learning = learning_despite_critic(ctx)
        severity = "info" if learning else ("error" if median < ctx.params["error_below"] else "warning")
        observed = {"median": median, "min": st.worst.peak_value}
        yield self.incident(ctx, st, observed=observed, severity=severity, evidence=[learning] if learning else [])

    @classmethod
    def bad_example(cls):
        return Example(series={"value/explained_var": ramp(100, -0.2, -0.8, sd=0.1, seed=29)})

    @classmethod
    def good_example(cls):
        # negative while the critic warms up, then rising toward 1
        return Example(series={"value/explained_var": saturating(100, -0.5, 0.8, rate=8, sd=0.05, seed=30)})
