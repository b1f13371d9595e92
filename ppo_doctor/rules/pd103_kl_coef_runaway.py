"""PD103 kl-coef-runaway."""

from __future__ import annotations

from ..detect import mask_to_spans, theil_sen
from .base import Example, Rule
from .examples import flat, ramp
from .incidents import incident


class KLCoefRunaway(Rule):
    """The adaptive KL coefficient keeps growing: the controller cannot hold the KL at its target.

    **What it detects.** ``kl/coef`` ends the run at least ``growth`` times its initial value
    (medians of the first and last 10 % of points) and is still rising over the second half.
    A fixed coefficient never fires.

    **Why it matters.** An adaptive controller (Ziegler et al. 2019; TRL's default init 0.2,
    target 6, horizon 10 000) raises beta only while the KL stays above target.  A coefficient
    that climbs for the whole run means the updates keep pushing the policy away faster than
    the penalty pulls it back; TRL's docs note the coefficient "often increases before
    numerical instabilities".

    **Known false positives.** A very small initial beta that the controller legitimately
    raises to a working value, then holds (it stops rising, so the rule stays silent).

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan
    the finding is an info note saying what is watched, until ``fair_share``
    of the plan (default 1.0: all of it) is behind the run, past warm-up; a live run with no
    known plan is judged when it ends (:mod:`ppo_doctor.standing`).

    **Source.** TRL logging docs on ``objective/kl_coef``; Ziegler et al. 2019 (arXiv:1909.08593)
    adaptive controller (docs/sources.md#adaptive-kl-controller).
    """

    code = "PD103"
    name = "kl-coef-runaway"
    symptom = "kl_blowup"
    severity = "warning"
    basis = "runaway"
    evidence = "trend"
    requires = ("kl/coef",)
    params = {"growth": 5.0, "min_points": 10}
    causes = {"lr-too-high": 0.5, "too-many-ppo-epochs": 0.4, "kl-coef-too-low": 0.4, "policy-not-from-sft": 0.2}
    message = (
        "the adaptive KL coefficient grew {growth:num}x (from {first:num} to {late:num}) and is still rising: "
        "the KL stays above the controller's target"
    )

    def evaluate(self, ctx):
        p = ctx.params
        x = ctx.req[0]
        s, v, first, late = x.steps, x.values, x.early, x.late
        if len(v) < p["min_points"] or not first > 0:
            return
        growth = late / first
        half = len(v) // 2
        slope, _ = theil_sen(s[half:], v[half:])
        if growth < p["growth"] or not slope > 0:
            return
        span = mask_to_spans(s, v >= p["growth"] * first, v)[0]
        observed = {"first": first, "late": late, "growth": growth}
        yield incident(self, ctx, metric=x.metric, steps=s, values=v, span=span, direction="up", observed=observed, end_step=int(s[-1]))

    @classmethod
    def bad_example(cls):
        return Example(series={"kl/coef": ramp(100, 0.2, 3.0, begin=20)}, config={"adaptive_kl": True, "kl_coef": 0.2})

    @classmethod
    def good_example(cls):
        # the controller raises beta a little, then holds it
        return Example(series={"kl/coef": flat(100, 0.25, 0.01, seed=5)}, config={"adaptive_kl": True, "kl_coef": 0.2})
