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
from . import population
from .messages import fmt_num
from .outcome import still_growing
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
    """KL to the reference model runs away from its band, or stays above it while the run suffers.

    **What it detects.** The policy-vs-reference KL (``kl/ref``) above its healthy band for a
    sustained stretch (60 % of a window of 5 % of the run, 3..20 points).  The band depends on
    what was logged: TRL's ``objective/kl`` is a sum over the response, healthy between 0 and
    10 nats; token-mean KLs (OpenRLHF, veRL, GRPO) are judged against 0.3 nats per token.
    trlx's square-root KL is squared first.  Above the band alone is a *sign*: GRPO runs that
    learn well level off at 0.5-1.1 nats per token, PPO runs with a working penalty at 9-12 nats
    per sequence.  It is a **runaway** (error) when the KL stays, for a sustained stretch, beyond
    what every healthy run of the reference population reaches (``token_runaway`` /
    ``seq_runaway``, from ``rules/population.json``: docs/population.md; where the population is
    thin, 3x the sequence band and 5x the token band), and a runaway warning when it is still climbing at its last points
    without levelling off (:func:`.outcome.still_growing`; on a partial or live run only when the
    KL coefficient is under 0.01, since a working penalty can still turn a prefix around).
    Otherwise a warning or error needs an *outcome*: the reward stalls, collapses or falls after
    the KL left its band (:func:`.outcome.judge_sign`); without one it is an info note.

    **Why it matters.** "Policy collapse": the policy drifts far from the SFT model, text turns
    incoherent, and the reward model is being exploited; the guide describes a KL that "rises
    sharply and stays high", not one that settles above a number.  When the KL is already above
    the band at the first logged points (PD102), no training pushed it there, so a weak KL
    penalty or aggressive updates cannot be why: the finding then points at the initialisation.

    **Known false positives.** A run that logs a sequence-summed KL without saying so and has
    very long responses; a log whose reduction is unknown is judged against the lenient
    sequence band.  Raise ``seq_runaway`` / ``token_runaway`` for a deliberately loose KL budget.

    **Source.** TRL Training FAQ ("keep the KL between 0 and 10"); PTT's KL cap 0.3 for token-mean
    KLs; the troubleshooting guide's "policy collapse (KL too high)" (docs/sources.md#kl-band,
    docs/sources.md#guides); the healthy population (docs/population.md).
    """

    code = "PD101"
    name = "kl-above-band"
    symptom = "kl_blowup"
    severity = "error"
    basis = "sign"
    watch = "the reward and the generated text: a KL that keeps climbing while the reward stalls, or incoherent samples, is a blow-up"
    requires = ("kl/ref",)
    params = {
        "seq_band": SEQ_KL_BAND,
        "token_band": TOKEN_KL_BAND,
        "error_factor": 1.5,
        "seq_runaway": population.runaway_limit("kl_ref_seq"),
        "token_runaway": population.runaway_limit("kl_ref_token"),
        "min_points": 5,
    }
    causes = {
        "kl-coef-too-low": 0.9,
        "lr-too-high": 0.6,
        "too-many-ppo-epochs": 0.5,
        "batch-too-large": 0.2,
        "reward-model-flawed": 0.3,
    }
    message = (
        "KL to the reference above its healthy band ({band:num} {unit}) {since}: "
        "peak value {peak:num} at step {peak_step}, {late:num} over the last points"
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
        limit = float(p["token_runaway"] if view.reduction == "token_mean" else p["seq_runaway"])
        # "still climbing at the end" is a trend: on a run short of its plan the end is not the
        # end (the KL sweep's beta 0.2 runs rise to 1.3x the band by step 29 of 200, then their
        # penalty brings them back), so there it is a runaway only when no KL penalty can pull
        # the policy back (beta ~0: nothing in the objective opposes the drift)
        growing = late > band and still_growing(s, v) and (not ctx.run.standing.partial or _no_penalty(ctx))
        beyond = sustained_spans(s, v > limit, k, w, values=v)
        observed = {"band": band, "peak": st.worst.peak_value, "late": late, "runaway_limit": limit}
        tok = per_token_kl(ctx.view, view)
        evidence = [f"KL measured in {view.unit}" + (f" ({view.note})" if view.note else "")]
        if beyond:
            c = beyond[0]
            evidence.append(
                f"above {fmt_num(limit)} over steps {c.start_step}-{c.end_step}, beyond every healthy run of the reference"
                " population (docs/population.md): the policy ran away there, even if the KL came back later"
            )
        elif growing:
            evidence.append("still climbing at the last points without levelling off")
        if tok is not None:
            observed["late_per_token"] = tok
            evidence.append(f"about {fmt_num(tok)} nats per token over the last points (KL / response length)")
        # an unclipped exploded gradient moves the policy away from the reference as it moves it
        # away from the old policy (the same update, applied whole)
        causes, unclipped = unclipped_causes(ctx, self.causes)
        evidence.extend(unclipped)
        first, n_first = first_kl(view)
        if first > band:
            evidence.append(f"already above the band at the first {n_first} logged point(s) (at least {fmt_num(first)})")
            causes = FROM_START_CAUSES
        if beyond or growing:
            severity, basis = ("error" if beyond else "warning"), "runaway"
        else:
            severity, basis = ("error" if late >= p["error_factor"] * band else "warning" if late > band else "info"), "sign"
        yield self.incident(ctx, st, observed=observed, severity=severity, basis=basis, evidence=evidence, causes=causes, band=band, fmt={"unit": view.unit})

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
