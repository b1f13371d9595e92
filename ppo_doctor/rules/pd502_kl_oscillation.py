"""PD502 kl-oscillation."""

from __future__ import annotations

from typing import Any

from ..view import KLView
from .base import Example, RuleContext
from .examples import saturating, sine
from .shapes import OscillationRule


class KLOscillation(OscillationRule[KLView]):
    """The KL to the reference swings back and forth without converging.

    **What it detects.** The same measurement as PD501 applied to ``kl/ref`` (in judged units,
    see PD101): at least ``min_swings`` alternations of the detrended, smoothed KL, well above
    smoothed noise, a visible share of its range, not dying out.

    **Why it matters.** The guide's "performance fluctuation" for KL: the policy is pushed away
    from the reference and pulled back repeatedly; with an adaptive controller, a target the
    updates cannot hold (beta chases the KL).  Updates are too aggressive.

    **Known false positives.** An adaptive KL controller with a short horizon legitimately
    oscillates a little around its target (small amplitude: filtered by ``min_rel_amplitude``).

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan
    the finding is an info note saying what is watched, until ``fair_share``
    of the plan (default 1.0: all of it) is behind the run, past warm-up; a live run with no
    known plan is judged when it ends (:mod:`ppo_doctor.standing`).

    **Source.** The troubleshooting guide ("performance fluctuation: reward or KL swing back and
    forth without converging"); AUTOTRAINER oscillation rule (docs/sources.md#oscillation).
    """

    code = "PD502"
    name = "kl-oscillation"
    symptom = "oscillation"
    severity = "warning"
    basis = "sign"
    watch = "the reward: a swinging KL matters if the reward stalls or swings with it"
    evidence = "trend"
    requires = ("kl/ref",)
    causes = {"lr-too-high": 0.7, "too-many-ppo-epochs": 0.5, "kl-coef-too-low": 0.3, "batch-too-large": 0.3}
    message = "KL to the reference oscillates: {swings} swings of about +-{amplitude:num} {unit} (period ~{period:num} steps)"

    def points(self, ctx: RuleContext) -> KLView | None:
        return ctx.view.kl

    def fmt(self, ctx: RuleContext, x: KLView) -> dict[str, Any]:
        return {"unit": x.unit}

    @classmethod
    def bad_example(cls):
        return Example(
            series={"kl/ref": sine(300, 6.0, 3.0, period=50, sd=0.5, seed=37)},
            metric_info={"kl/ref": {"estimator": "k1", "reduction": "seq_sum"}},
        )

    @classmethod
    def good_example(cls):
        return Example(
            series={"kl/ref": saturating(300, 0.0, 6.0, sd=0.8, seed=38)},
            metric_info={"kl/ref": {"estimator": "k1", "reduction": "seq_sum"}},
        )
