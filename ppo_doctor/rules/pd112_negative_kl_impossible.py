"""PD112 negative-kl-impossible."""

from __future__ import annotations

import numpy as np

from ..detect import mask_to_spans, median
from .base import Example, Rule
from .examples import saturating, with_points
from .inputs import Input
from .shapes import Stretch, stretch_incident


class NegativeKLImpossible(Rule):
    """A KL estimator that cannot be negative (k2, k3, full, trlx sqrt) logs negative values.

    **What it detects.** ``kl/ref`` whose recorded estimator is k2 (½Δ²), k3
    (exp(-Δ) - 1 + Δ), the full-distribution KL, ``abs`` or trlx's square root, with at least
    ``min_count`` points below ``-tol`` (a relative float tolerance: 1e-6 of the series'
    typical magnitude, at least ``abs_tol``).

    **Why it matters.** These estimators are non-negative by construction, so a negative value
    is not noise: the KL computation is wrong (sign error, wrong masking of padding, mixing
    log-probs of different tokens) or the logged metric is not the estimator it claims to be
    (TRL once reported the k1 KL while training with ``kl_penalty="full"``, trl#1161).

    **Known false positives.** A mislabelled estimator in the alias table (the evidence names
    the recorded estimator so it can be checked).

    **Source.** Schulman, "Approximating KL Divergence" (k1, k2, k3) and the estimator each
    framework logs (docs/sources.md#kl-estimators); huggingface/trl#1161 → PR #1180; the
    troubleshooting guide: implementation errors in the KL estimate (docs/sources.md#guides).
    """

    code = "PD112"
    name = "negative-kl-impossible"
    symptom = "negative_kl"
    severity = "error"
    basis = "outcome"
    requires = ("kl/ref",)
    params = {"abs_tol": 1e-9, "rel_tol": 1e-6, "min_count": 3}
    causes = {"implementation-bug": 1.0}
    message = (
        "KL to the reference is negative at {count} point(s) (min {min:num}) although its estimator ({estimator}) "
        "cannot be negative: the KL computation or its label is wrong"
    )

    def evaluate(self, ctx):
        p = ctx.params
        view = ctx.view.kl
        if view is None or view.can_be_negative or len(view.values) == 0:
            return
        s, v = view.steps, view.values
        info = ctx.run.metric_info.get("kl/ref")
        if info is not None and info.estimator == "sqrt_k3":
            # a square hides the sign: judge the logged square root itself
            s, v = ctx.arrays("kl/ref")
            keep = np.isfinite(v)
            s, v = s[keep], v[keep]
        scale = float(median(np.abs(v))) if len(v) else 0.0
        tol = max(p["abs_tol"], p["rel_tol"] * scale)
        neg = v < -tol
        count = int(neg.sum())
        if count < min(p["min_count"], max(1, len(v) // 2)):
            return
        st = Stretch(Input(view.metric, s, v), mask_to_spans(s, neg, v, peak="min"), "down", -tol)
        estimator = info.estimator if info is not None and info.estimator else view.estimator
        observed = {"count": count, "min": st.worst.peak_value}
        yield stretch_incident(self, ctx, st, observed=observed, evidence=[f"recorded estimator: {estimator}"], fmt={"estimator": estimator})

    @classmethod
    def bad_example(cls):
        # a GRPO-style k3 KL with a sign error after step 40
        x = np.abs(saturating(80, 0.0, 0.05, sd=0.002, seed=8))
        x[40:] = -x[40:]
        return Example(series={"kl/ref": x}, metric_info={"kl/ref": {"estimator": "k3", "reduction": "token_mean"}})

    @classmethod
    def good_example(cls):
        # k3 with one float-rounding value of -1e-12 at the start
        x = with_points(np.abs(saturating(80, 0.0, 0.05, sd=0.002, seed=9)), {0: -1e-12})
        return Example(series={"kl/ref": x}, metric_info={"kl/ref": {"estimator": "k3", "reduction": "token_mean"}})
