"""PD111 negative-kl-sustained."""

from __future__ import annotations

from typing import Iterator

from ..results import Finding

from ..view import KLView, RunView
from .base import Example, RuleContext
from .examples import saturating
from .shapes import Stretch, SustainedRule


def generation_evidence(view: RunView) -> list[str]:
    """Generation settings that make samples not come from the policy (TRL FAQ)."""
    out = []
    top_k = view.cfg_float("top_k")
    if top_k is not None and top_k > 0:
        out.append(f"config: top_k={top_k:g} (top-k sampling truncates the policy's distribution)")
    top_p = view.cfg_float("top_p")
    if top_p is not None and top_p < 1:
        out.append(f"config: top_p={top_p:g} (nucleus sampling truncates the policy's distribution)")
    for key in ("min_length", "min_new_tokens"):
        v = view.cfg_float(key)
        if v is not None and v > 0:
            out.append(f"config: {key}={v:g} (EOS is suppressed until then)")
    if view.cfg("do_sample") is False:
        out.append("config: do_sample=False (greedy/beam search, not sampling from the policy)")
    for key in ("no_repeat_ngram_size", "repetition_penalty"):
        v = view.cfg(key)
        if v not in (None, 0, 1, 1.0, False):
            out.append(f"config: {key}={v} (sampling is not from the policy)")
    return out


class NegativeKLSustained(SustainedRule[KLView]):
    """The reference KL (k1 estimator) stays clearly negative.

    **What it detects.** ``kl/ref`` logged with the k1 estimator (mean of logp - ref_logp, the
    default of TRL, OpenRLHF and veRL's reward KL; also assumed when the estimator is unknown)
    stays below ``-seq_tol`` nats per sequence (``-token_tol`` per token) for a sustained
    stretch (60 % of a window of 5 % of the run).  Tiny negatives such as -1e-8 are float
    noise and never count; a single negative batch is estimator noise.

    **Why it matters.** A true KL is never negative.  A k1 estimate that *stays* negative means
    the sampled tokens are not drawn from the policy: ``top_k``/``top_p`` sampling, ``min_length``
    / ``min_new_tokens`` (EOS suppressed, so the policy can put tiny mass on EOS), or
    ``no_repeat_ngram_size``.  The penalty -beta*KL then becomes a bonus the policy farms, and
    the run degrades.  Fix: generate with ``top_k=0, top_p=1.0, min_length=-1,
    do_sample=True``.

    **Known false positives.** Early training where policy = reference and the estimate
    wanders around 0 (stays inside the tolerance); a reference model that is not the policy's
    initialisation (PEFT/reference mismatch, trl#925), which is a different bug with the same
    signature.  An under-trained reward model was the maintainers' answer in LlamaFactory#664.

    **Source.** TRL Training FAQ "What is the concern with negative KL?"; TRL legacy warns when the
    mean KL < -1 (PR #239, trl#352); huggingface/trl#1017, #925, #256; which estimators can be
    negative (docs/sources.md#negative-kl, docs/sources.md#kl-estimators).
    """

    code = "PD111"
    name = "negative-kl-sustained"
    symptom = "negative_kl"
    severity = "error"
    basis = "outcome"
    requires = ("kl/ref",)
    params = {"seq_tol": 1.0, "token_tol": 0.01, "min_points": 5}
    causes = {"generation-settings": 1.0, "implementation-bug": 0.3, "policy-not-from-sft": 0.2, "reward-model-flawed": 0.2}
    message = (
        "KL to the reference (k1 estimator) stays below -{tolerance:num} {unit} {since} "
        "(median {median:num} over the incident): samples are not drawn from the policy"
    )
    direction = "down"

    def points(self, ctx: RuleContext) -> KLView | None:
        view = ctx.view.kl
        return view if view is not None and view.can_be_negative else None

    def level(self, ctx: RuleContext, x: KLView) -> float:
        return -float(ctx.params["token_tol"] if x.reduction == "token_mean" else ctx.params["seq_tol"])

    def report(self, ctx: RuleContext, st: Stretch[KLView]) -> Iterator[Finding]:
        view = st.points
        evidence = generation_evidence(ctx.view)
        evidence.append(f"{len(st.covered)} of {len(view.values)} points in negative stretches; estimator {view.estimator or 'unknown (k1 assumed)'}")
        causes = dict(self.causes)
        if any(e.startswith("config:") for e in evidence):
            causes["generation-settings"] = 1.0
        else:
            causes["implementation-bug"] = 0.5  # nothing in the config explains it
        observed = {"median": st.median, "min": st.worst.peak_value, "tolerance": -st.level}
        yield self.incident(ctx, st, observed=observed, evidence=evidence, causes=causes, fmt={"unit": view.unit})

    @classmethod
    def bad_example(cls):
        # top_k sampling: the k1 KL drifts to about -4 nats per sequence and stays there
        return Example(
            series={"kl/ref": saturating(150, 0.0, -4.0, sd=0.8, seed=6)},
            config={"top_k": 50, "min_length": 8},
            metric_info={"kl/ref": {"estimator": "k1", "reduction": "seq_sum"}},
        )

    @classmethod
    def good_example(cls):
        # k1 noise around zero early on (a few slightly negative batches), then a positive KL
        return Example(
            series={"kl/ref": saturating(150, -0.2, 4.0, sd=0.4, seed=7)},
            metric_info={"kl/ref": {"estimator": "k1", "reduction": "seq_sum"}},
        )
