"""PD602 gradient-explosion."""

from __future__ import annotations

import numpy as np

from ..detect import mask_to_spans, sustained_mask
from ..run import Run
from .base import Example, Rule
from .common import EXPLODE_FACTOR, cfg_float, clipping_off, early_late, finite_arrays, fmt_num, incident
from .examples import flat, with_points

CRITIC_CAUSES = {"value-lr-mistuned": 0.8, "reward-not-normalized": 0.5, "reward-not-clipped": 0.4, "no-grad-clipping": 0.4}


def clipping_evidence(run: Run) -> tuple[list[str], float]:
    """Evidence about gradient clipping in the config, and the weight of no-grad-clipping."""
    if clipping_off(run):
        return [f"config: max_grad_norm={run.config.get('max_grad_norm')} (clipping off)"], 1.0
    mgn = cfg_float(run, "max_grad_norm")
    if mgn is None:
        return [], 0.5
    return [f"config: max_grad_norm={mgn:g} (the logged norm is measured before clipping)"], 0.1


class GradientExplosion(Rule):
    """Gradient norms far above their early baseline.

    **What it detects.** ``grad/norm`` (policy) and ``grad/norm_critic`` (critic) points at
    least ``factor`` (10) times the median of the first 10 % of the run.  Error when the
    excess is sustained (3 of any 5 consecutive points) or reaches ``error_factor`` (100x);
    warning for isolated spikes.  The baseline is each norm's own, so units and model size do
    not matter.

    **Why it matters.** Gradient-norm spikes precede loss, reward and KL spikes (OLMo 2; Spike
    No More); the policy takes steps far larger than intended.  Causes: learning rate too high,
    no gradient clipping, unnormalised or unclipped rewards (large advantages), and for the
    critic a value learning rate that is too high.

    **Known false positives.** Runs whose first 10 % is unusually calm (e.g. a learning-rate
    warm-up from 0 makes the early norms small); raise ``factor`` for those.

    **Source.** PTT grad-norm rule (> 10x the early baseline = explode); rlwatch > 3 sigma;
    AUTOTRAINER ratio > 70; OLMo 2, PaLM (thresholds-and-peers.md §1, §2.1, §4.1).
    """

    code = "PD602"
    name = "gradient-explosion"
    symptom = "gradient_explosion"
    severity = "error"
    requires = (("grad/norm", "grad/norm_critic"),)
    params = {"factor": EXPLODE_FACTOR, "error_factor": 100.0, "min_points": 10}
    causes = {"lr-too-high": 0.7, "no-grad-clipping": 0.5, "reward-not-normalized": 0.4, "reward-not-clipped": 0.3, "implementation-bug": 0.2}
    message = "{metric} reached {peak_s}, {ratio_s}x its early level of {base_s} ({count} point(s) over {factor:g}x)"

    def evaluate(self, ctx):
        p = ctx.params
        for metric in ("grad/norm", "grad/norm_critic"):
            if not ctx.has(metric):
                continue
            s, v = finite_arrays(ctx, metric)
            if len(v) < p["min_points"]:
                continue
            base, _, _ = early_late(v)
            if not base > 0:
                continue
            over = v > p["factor"] * base
            if not over.any():
                continue
            spans = mask_to_spans(s, over, v)
            worst = max(spans, key=lambda sp: sp.peak_value)
            ratio = worst.peak_value / base
            sustained = bool(sustained_mask(over, 3, 5).any())
            severe = sustained or ratio >= p["error_factor"]
            evidence, no_clip = clipping_evidence(ctx.run)
            causes = dict(CRITIC_CAUSES if metric == "grad/norm_critic" else self.causes)
            causes["no-grad-clipping"] = no_clip if metric == "grad/norm" else min(no_clip, causes["no-grad-clipping"])
            evidence.append(f"{int(over.sum())} of {len(v)} points over {fmt_num(p['factor'])}x the baseline" + ("; sustained" if sustained else ""))
            yield incident(
                self,
                ctx,
                metric=metric,
                steps=s,
                values=v,
                span=spans[0],
                direction="up",
                log_scale=True,
                observed={"baseline": base, "peak": worst.peak_value, "ratio": ratio, "count": int(over.sum())},
                peak_step=worst.peak_step,
                end_step=spans[-1].end_step,
                severity="error" if severe else "warning",
                causes=causes,
                evidence=evidence,
                fmt={"metric": metric, "peak_s": fmt_num(worst.peak_value), "ratio_s": fmt_num(ratio), "base_s": fmt_num(base), "count": int(over.sum())},
            )

    @classmethod
    def bad_example(cls):
        g = flat(120, 0.8, 0.1, seed=42)
        g[70:90] = np.geomspace(1.0, 200.0, 20)
        return Example(series={"grad/norm": np.abs(g)}, config={"max_grad_norm": 0})

    @classmethod
    def good_example(cls):
        # ordinary noise with one 3x bump
        return Example(series={"grad/norm": with_points(np.abs(flat(120, 0.8, 0.1, seed=43)), {60: 2.5})}, config={"max_grad_norm": 1.0})
