"""PD502 kl-oscillation."""

from __future__ import annotations

from .base import Example, Rule
from .common import kl_view
from .messages import fmt_num
from .examples import saturating, sine
from .oscillating import DEFAULT_PARAMS, judge, peak_step


class KLOscillation(Rule):
    """The KL to the reference swings back and forth without converging.

    **What it detects.** The same measurement as PD501 applied to ``kl/ref`` (in judged units,
    see PD101): at least ``min_swings`` alternations of the detrended, smoothed KL, well above
    smoothed noise, a visible share of its range, not dying out.

    **Why it matters.** The guide's "performance fluctuation" for KL: the policy is pushed away
    from the reference and pulled back repeatedly; with an adaptive controller, a target the
    updates cannot hold (beta chases the KL).  Updates are too aggressive.

    **Known false positives.** An adaptive KL controller with a short horizon legitimately
    oscillates a little around its target (small amplitude: filtered by ``min_rel_amplitude``).

    **Source.** guides-digest.md ("Performance fluctuation: reward or KL swing back and forth
    without converging"); AUTOTRAINER oscillation rule (thresholds-and-peers.md §1.1).
    """

    code = "PD502"
    name = "kl-oscillation"
    symptom = "oscillation"
    severity = "warning"
    requires = ("kl/ref",)
    params = dict(DEFAULT_PARAMS)
    causes = {"lr-too-high": 0.7, "too-many-ppo-epochs": 0.5, "kl-coef-too-low": 0.3, "batch-too-large": 0.3}
    message = "KL to the reference oscillates: {swings} swings of about +-{amp_s} {unit} (period ~{period_s} steps)"

    def evaluate(self, ctx):
        view = kl_view(ctx)
        if view is None:
            return
        o = judge(view.steps, view.values, ctx.params)
        if o is None:
            return
        yield self.finding(
            ctx,
            metric=view.metric,
            observed={"swings": o.swings, "amplitude": o.amplitude, "period": o.period_steps, "decay": o.decay},
            start_step=o.start_step,
            threshold_step=o.start_step,
            peak_step=peak_step(view.steps, view.values, o),
            end_step=o.end_step,
            evidence=[f"swing amplitude first third {fmt_num(o.amplitude_first)}, last third {fmt_num(o.amplitude_last)}"],
            fmt={"amp_s": fmt_num(o.amplitude), "unit": view.unit, "period_s": fmt_num(o.period_steps)},
        )

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
