"""PD801 ratio-far-from-one."""

from __future__ import annotations

import numpy as np

from ..detect import mask_to_spans, outside, sustained_spans
from .base import Example, Rule
from .clipping import unclipped_causes
from .examples import flat, with_points
from .incidents import sustain_window
from .inputs import Input
from .messages import fmt_num
from .shapes import Stretch, stretch_incident


class RatioFarFromOne(Rule):
    """The PPO probability ratio (new / old policy) moves far from 1.

    **What it detects.** ``policy/ratio_mean`` (TRL's ``val/ratio``, trlx's ``ratio``) at or
    above ``ratio_threshold`` (10, TRL's batch-skipping threshold) or at or below its inverse at
    any point: error.  Outside ``[low, high]`` (0.5..2) for a sustained stretch: warning.

    **Why it matters.** Within one PPO update the ratio should stay near 1 (the clip range is
    ±0.2).  TRL's docs call a ratio of 2, 1000 or 0.1 "too drastic": the update moved the policy
    far more than the trust region allows and loss spikes follow (TRL skips such batches,
    PR #488).  Causes: learning rate too high, too many epochs or minibatches per batch
    (trl#454: 4 x 16 = 64 updates per batch).

    **Known false positives.** Ratios averaged over padded tokens by a custom loop.

    **Source.** TRL logging docs ("crucial values"); huggingface/trl#101 -> PR #488, #454, #1857
    (docs/sources.md#ratio).
    """

    code = "PD801"
    name = "ratio-far-from-one"
    symptom = "unstable_updates"
    severity = "warning"
    basis = "sign"
    watch = "the reward: over-large updates matter if it stalls or falls"
    requires = ("policy/ratio_mean",)
    params = {"low": 0.5, "high": 2.0, "ratio_threshold": 10.0, "min_points": 5}
    causes = {"lr-too-high": 0.8, "too-many-ppo-epochs": 0.8, "batch-too-large": 0.3, "implementation-bug": 0.2}
    message = "PPO ratio reached {peak:num} (healthy: about 1; {band}) {since}; peak at step {peak_step}"

    def evaluate(self, ctx):
        p = ctx.params
        s, v = ctx.req[0].steps, ctx.req[0].values
        if len(v) < p["min_points"]:
            return
        thr = p["ratio_threshold"]
        extreme = outside(v, 1.0 / thr, thr)
        deviation = np.abs(np.log(np.where(v > 0, v, np.nan)))
        if extreme.any():
            spans = mask_to_spans(s, extreme, deviation)
            severity, band = "error", f"TRL skips batches above {thr:g}"
        else:
            k, w = sustain_window(ctx.planned_points(len(v)))
            spans = sustained_spans(s, outside(v, p["low"], p["high"]), k, w, values=deviation)
            severity, band = "warning", f"sustained outside [{fmt_num(p['low'])}, {fmt_num(p['high'])}]"
        if not spans:
            return
        # the spans are judged on |log ratio|: a ratio of 0.1 is as far from 1 as one of 10
        st = Stretch(Input(ctx.req[0].metric, s, deviation), spans, "up")
        causes, evidence = unclipped_causes(ctx, self.causes)
        observed = {"peak": float(v[st.worst.peak_idx]), "count": int(sum(sp.length for sp in spans))}
        yield stretch_incident(self, ctx, st, observed=observed, severity=severity, causes=causes, evidence=evidence, fmt={"band": band})

    @classmethod
    def bad_example(cls):
        return Example(series={"policy/ratio_mean": with_points(flat(60, 1.0, 0.01, seed=53), {40: 12.3})})

    @classmethod
    def good_example(cls):
        return Example(series={"policy/ratio_mean": flat(60, 1.0, 0.02, seed=54)})
