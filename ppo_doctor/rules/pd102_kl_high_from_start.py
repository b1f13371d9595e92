"""PD102 kl-high-from-start."""

from __future__ import annotations

import numpy as np

from ..detect import mask_to_spans
from ..view import SEQ_KL_BAND, TOKEN_KL_BAND, first_kl
from .base import Example, Rule
from .examples import flat, saturating
from .messages import fmt_num


class KLHighFromStart(Rule):
    """KL to the reference is already above its band at the first logged steps.

    **What it detects.** Every one of the first few logged points of ``kl/ref`` (3, or 5 % of
    a short run, at least 1) is above the healthy band (10 nats per sequence, 0.3 per token;
    see PD101 for units).  A single point near 0 among them shows the policy started as the
    reference: a learning rate so high that one update jumps far logs 0 at its first rollout
    and a high KL only after that update, which is a blow-up (PD101), not a wrong start.

    **Why it matters.** A policy initialised from the SFT checkpoint *is* the reference at step
    0, so the KL starts at about 0.  A KL that starts high means the policy and the reference are
    different models before any RL: the policy was loaded from the base model (or another
    checkpoint), or PEFT adapters were loaded for the policy while the reference is the bare
    base model.  Training is unstable from the first step.

    **Known false positives.** Logs that begin after a resume from a late checkpoint (the first
    logged step is then not step 0: check ``start_step``), and runs that deliberately start from
    a different model than the reference.

    **Source.** huggingface/trl#1340 (also #495, #1005): "very high KL from step 0" with SFT PEFT
    adapters vs a base-model reference; the troubleshooting guide: "make sure the initial policy
    really is the SFT model" (docs/sources.md#kl-high-from-start).
    """

    code = "PD102"
    name = "kl-high-from-start"
    symptom = "kl_blowup"
    severity = "error"
    basis = "sign"
    watch = "the reward: a policy that starts away from its reference matters if it does not learn"
    requires = ("kl/ref",)
    params = {"seq_band": SEQ_KL_BAND, "token_band": TOKEN_KL_BAND, "first_points": 3, "min_points": 3}
    causes = {"policy-not-from-sft": 1.0, "implementation-bug": 0.4}
    message = (
        "KL to the reference is at least {first:num} {unit} over the first {n_first} logged point(s), above the "
        "{band:num} band before training could have moved the policy: policy and reference differ from the start"
    )

    def evaluate(self, ctx):
        p = ctx.params
        view = ctx.view.kl_in(p["seq_band"], p["token_band"])
        if view is None or len(view.values) < p["min_points"]:
            return
        s, v, band = view.steps, view.values, view.band
        first, n_first = first_kl(view, p["first_points"])
        if not first > band:
            return
        # the initial incident: the leading run of points above the band
        above = v > band
        lead = int(np.argmin(above)) if not above.all() else len(v)
        mask = np.zeros(len(v), dtype=bool)
        mask[: max(lead, 1)] = True
        span = mask_to_spans(s, mask, v)[0]
        yield self.finding(
            ctx,
            metric=view.metric,
            observed={"first": first, "band": band, "peak": span.peak_value},
            start_step=int(s[0]),
            threshold_step=int(s[0]),
            peak_step=span.peak_step,
            end_step=span.end_step,
            evidence=[f"first logged KL values: {', '.join(fmt_num(x) for x in v[:n_first])} {view.unit}"],
            band=band,
            fmt={"unit": view.unit, "n_first": n_first},
        )

    @classmethod
    def bad_example(cls):
        # policy loaded from the base model while the reference is the SFT model: KL ~25 at once
        return Example(
            series={"kl/ref": flat(100, 25.0, 2.0, seed=3)},
            metric_info={"kl/ref": {"estimator": "k1", "reduction": "seq_sum"}},
        )

    @classmethod
    def good_example(cls):
        return Example(
            series={"kl/ref": saturating(100, 0.0, 6.0, sd=0.3, seed=4)},
            metric_info={"kl/ref": {"estimator": "k1", "reduction": "seq_sum"}},
        )
