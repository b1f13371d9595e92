"""PD407 constant-critic."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ..results import Finding
from .base import Example, Rule, RuleContext
from .examples import flat, saturating
from .messages import fmt_num


class ConstantCritic(Rule):
    """The critic predicts one value for every state: its explained variance is 0 on every update.

    **What it detects.** After a warm-up (the first ``warmup`` share of the run), every logged
    ``value/explained_var`` is within ``dead_ev`` (0.001) of 0, over at least ``min_points``
    updates.  Updates whose returns were all equal (``RunView.returns``) are left out: their
    explained variance is 0/0.

    Explained variance is 1 - Var(returns - values) / Var(returns).  A critic whose predictions
    vary with the state, however badly, gives a batch estimate that scatters from update to update
    by far more than 0.001 (the healthy runs of the labelled real-run set whose critic hovers near
    0 still reach |EV| >= 0.26 after warm-up, docs/scorecard.md#real-runs).  Within 0.001 on every
    update, Var(returns - values) equals Var(returns): the predictions do not vary across the
    batch, and the critic tracks none of the returns (the labelled set holds 7 such runs, from
    1e-7 to 9e-4 at most, all of them failed trainings).

    **Why it matters.** The advantages are then the returns minus one number: the critic adds no
    variance reduction at all, and whatever the policy learns it learns as plain REINFORCE. It is
    an outcome, not a sign (the contract lists "the critic fails to track returns"): a critic that
    is merely weak while the policy learns is PD403 / PD405's note, a critic that outputs a
    constant is broken.  Typical causes: a value head that gets no gradient (detached, frozen, or
    its loss weight 0), dead units after a step on a huge unnormalised reward, or a value learning
    rate far off.

    **Known false positives.** A logger that writes a placeholder 0 for an explained variance it
    never computes: one exact value on every point is PD906's "not measured" and is not read; a
    value that varies by float rounding (1e-7) is a measurement.

    **Evidence.** A trend: judged on the whole run (on a run short of its plan, an info note until
    ``fair_share`` of the plan is behind it, :mod:`ppo_doctor.standing`).

    **Source.** CleanRL / SB3 ``explained_variance`` (``1 - Var(y - v) / Var(y)``); the
    troubleshooting guide's value-function instability (docs/sources.md#explained-variance).
    """

    code = "PD407"
    name = "constant-critic"
    symptom = "value_instability"
    severity = "warning"
    # the critic failing to track returns is an outcome (docs/architecture.md#contracts)
    basis = "outcome"
    evidence = "trend"
    requires = ("value/explained_var",)
    params = {"warmup": 0.1, "dead_ev": 0.001, "min_points": 20}
    causes = {"value-undertrained": 0.8, "implementation-bug": 0.6, "reward-not-normalized": 0.5, "value-lr-mistuned": 0.5}
    message = "explained variance stays within {dead_ev:num} of 0 on all {n} updates after warm-up (largest |EV| {largest:num}): the critic predicts one value for every state and tracks none of the returns"

    def evaluate(self, ctx: RuleContext) -> Iterator[Finding]:
        p = ctx.params
        x = ctx.req[0]
        start = int(round(len(x.values) * p["warmup"]))
        s, v = x.steps[start:], x.values[start:]
        varying = ~ctx.view.returns.constant_at(s)
        s, v = s[varying], v[varying]
        finite = np.isfinite(v)
        s, v = s[finite], v[finite]
        if len(v) < p["min_points"]:
            return
        largest = float(np.max(np.abs(v)))
        if largest > p["dead_ev"]:
            return
        yield self.finding(
            ctx,
            metric=x.metric,
            observed={"n": len(v), "largest": largest, "dead_ev": p["dead_ev"]},
            start_step=int(s[0]),
            threshold_step=int(s[0]),
            peak_step=int(s[int(np.argmax(np.abs(v)))]),
            end_step=int(s[-1]),
            evidence=[f"{len(v)} updates after the first {start} (warm-up), none with |EV| above {fmt_num(p['dead_ev'])}"],
            fmt={"n": len(v), "largest": largest, "dead_ev": p["dead_ev"]},
        )

    @classmethod
    def bad_example(cls):
        # a value head that gets no gradient: EV at float rounding around 0 for the whole run
        n = 120
        return Example(
            series={
                "value/explained_var": flat(n, 0.0, 1e-7, seed=71),
                "reward/score": saturating(n, 4.0, 60.0, sd=3.0, seed=72),
            }
        )

    @classmethod
    def good_example(cls):
        # a weak critic that still varies with the state: EV hovers near 0 by a few hundredths
        n = 120
        return Example(
            series={
                "value/explained_var": flat(n, 0.0, 0.03, seed=73),
                "reward/score": saturating(n, 4.0, 60.0, sd=3.0, seed=74),
            }
        )
