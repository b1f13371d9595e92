"""PD101 kl-above-band."""

from __future__ import annotations

from typing import Iterator

from ..detect import sustained_spans, theil_sen
from ..results import Finding
from ..view import SEQ_KL_BAND, TOKEN_KL_BAND, KLView, first_kl, per_token_kl
from .base import Example, RuleContext
from .clipping import unclipped_causes
from .examples import ramp, saturating
from .incidents import sustain_window
from ..detect import early_late
from .messages import fmt_num
from .shapes import Stretch, SustainedRule


# A KL above the band before any update: policy and reference differ from the start (PD102),
# the KL penalty and the update size come second (trl#1340).
FROM_START_CAUSES = {"policy-not-from-sft": 0.9, "implementation-bug": 0.3, "kl-coef-too-low": 0.3, "lr-too-high": 0.2}


# A KL coefficient below this does not hold the policy near its reference: TRL's smallest
# recommended beta is 0.01-0.05 (N+ implementation details use 0.05; DeepSeekMath 0.04).
NO_PENALTY_BETA = 0.01


def _no_penalty(ctx: RuleContext) -> bool:
    """The run's KL coefficient (:func:`ppo_doctor.canonical.design.kl_coefficient`) is ~0."""
    beta, _ = ctx.view.kl_coefficient()
    return beta is not None and beta < NO_PENALTY_BETA


class KLAboveBand(SustainedRule[KLView]):
    """KL to the reference model stays above its healthy band.

    **What it detects.** The policy-vs-reference KL (``kl/ref``) is above its healthy band for
    a sustained stretch (60 % of a window of 5 % of the run, 3..20 points).  The band depends on
    what was logged: TRL's ``objective/kl`` is a sum over the response, healthy between 0 and
    10 nats; token-mean KLs (OpenRLHF, veRL, GRPO) are judged against 0.3 nats per token.
    trlx's square-root KL is squared first.  Error when the KL ends the run at least
    ``error_factor`` times the band, or ends above it while still rising (on a partial or live run,
    :mod:`ppo_doctor.standing`, only when the KL coefficient is under 0.01: with a working penalty
    the rise of a prefix can still turn around), or stayed above
    ``collapse_factor`` (5) times the band for a sustained stretch at any time (a collapse the
    run partly recovered from still leaves a damaged policy: a run at 100 times its learning rate peaks at 12x
    and its responses shrink to 2 tokens); warning when it ends the run just above the band;
    an info note when it went moderately above the band and came back inside it by the end (the
    corpus KL sweep's beta 0.2 runs peak at 1.5x and end at 0.95x: their author calls them
    stable, and an excursion the controller corrected is not a blow-up).

    **Why it matters.** "Policy collapse": the policy drifts far from the SFT model, text turns
    incoherent, and the reward model is being exploited.  KL is, with mean reward, the first
    metric the guides tell you to watch.  When the KL is already above the band at the first
    logged points (PD102), no training pushed it there, so a weak KL penalty or aggressive
    updates cannot be why: the finding then points at the policy's initialisation instead.

    **Known false positives.** A run that logs a sequence-summed KL without saying so and has
    very long responses; a log whose reduction is unknown is judged against the lenient
    sequence band.  Raise ``seq_band`` / ``token_band`` for a deliberately loose KL budget.

    **Source.** TRL Training FAQ ("keep the KL between 0 and 10"); PTT's KL cap 0.3 for token-mean
    KLs; the troubleshooting guide's "policy collapse (KL too high)" (docs/sources.md#kl-band,
    docs/sources.md#guides).
    """

    code = "PD101"
    name = "kl-above-band"
    symptom = "kl_blowup"
    severity = "error"
    requires = ("kl/ref",)
    params = {"seq_band": SEQ_KL_BAND, "token_band": TOKEN_KL_BAND, "error_factor": 1.5, "collapse_factor": 5.0, "min_points": 5}
    causes = {
        "kl-coef-too-low": 0.9,
        "lr-too-high": 0.6,
        "too-many-ppo-epochs": 0.5,
        "batch-too-large": 0.2,
        "reward-model-flawed": 0.3,
    }
    message = (
        "KL to the reference above its healthy band ({band:num} {unit}) {since}: "
        "peak value {peak:num} at step {peak_step}, {late:num} at the end of the run"
    )

    def points(self, ctx: RuleContext) -> KLView | None:
        return ctx.view.kl_in(ctx.params["seq_band"], ctx.params["token_band"])

    def level(self, ctx: RuleContext, x: KLView) -> float:
        return x.band

    def report(self, ctx: RuleContext, st: Stretch[KLView]) -> Iterator[Finding]:
        p = ctx.params
        view = st.points
        s, v, band = view.steps, view.values, view.band
        k, w = sustain_window(ctx.planned_points(len(v)))
        _, late, _ = early_late(v)
        half = len(v) // 2
        late_slope, _ = theil_sen(s[half:], v[half:])
        still_rising = late_slope * float(s[-1] - s[half]) > 0.25 * band if len(v) - half >= 3 else False
        # "still rising at the end" is a trend: on a run short of its plan the end is not the
        # end (the KL sweep's beta 0.2 runs rise to 1.3x the band by step 29 of 200, then their
        # penalty brings them back), so there it makes an error only when no KL penalty can pull
        # the policy back (beta ~0: nothing in the objective opposes the drift)
        still_rising = still_rising and (not ctx.run.standing.partial or _no_penalty(ctx))
        collapse = sustained_spans(s, v > p["collapse_factor"] * band, k, w, values=v)
        severe = late >= p["error_factor"] * band or (late > band and still_rising) or bool(collapse)
        observed = {"band": band, "peak": st.worst.peak_value, "late": late}
        tok = per_token_kl(ctx.view, view)
        evidence = [f"KL measured in {view.unit}" + (f" ({view.note})" if view.note else "")]
        if collapse:
            c = collapse[0]
            evidence.append(
                f"above {fmt_num(p['collapse_factor'] * band)} ({fmt_num(p['collapse_factor'])}x the band) over steps "
                f"{c.start_step}-{c.end_step}: the policy collapsed there, even if the KL came back later"
            )
        if tok is not None:
            observed["late_per_token"] = tok
            evidence.append(f"about {fmt_num(tok)} nats per token at the end (KL / response length)")
        # an unclipped exploded gradient moves the policy away from the reference as it moves it
        # away from the old policy (the same update, applied whole)
        causes, unclipped = unclipped_causes(ctx, self.causes)
        evidence.extend(unclipped)
        first, n_first = first_kl(view)
        if first > band:
            evidence.append(f"already above the band at the first {n_first} logged point(s) (at least {fmt_num(first)})")
            causes = FROM_START_CAUSES
        severity = "error" if severe else ("warning" if late > band else "info")
        yield self.incident(ctx, st, observed=observed, severity=severity, evidence=evidence, causes=causes, band=band, fmt={"unit": view.unit})

    @classmethod
    def bad_example(cls):
        # beta too small: sequence-level KL climbs from 0 to ~35 nats (like TRL runs with beta 0.05)
        return Example(
            series={"kl/ref": ramp(200, 0.0, 35.0, sd=1.5, seed=1, begin=40), "reward/score": saturating(200, 1, 9, sd=0.3)},
            metric_info={"kl/ref": {"estimator": "k1", "reduction": "seq_sum"}},
        )

    @classmethod
    def good_example(cls):
        # KL rises into the band and settles around 5 nats
        return Example(
            series={"kl/ref": saturating(200, 0.0, 5.0, sd=0.8, seed=2), "reward/score": saturating(200, 1.0, 3.0, sd=0.3)},
            metric_info={"kl/ref": {"estimator": "k1", "reduction": "seq_sum"}},
        )
