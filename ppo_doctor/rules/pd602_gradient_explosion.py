"""PD602 gradient-explosion."""

from __future__ import annotations

import numpy as np

from ..detect import mask_to_spans, median, sustained_mask

from ..view import RunView
from .base import Example, Rule, RuleContext
from .clipping import EXPLODE_FACTOR, clipping_off
from .examples import flat, with_points
from .inputs import Input
from ..detect import early_late
from .messages import fmt_num
from .outcome import still_growing
from .shapes import Stretch, stretch_incident

CRITIC_CAUSES = {"value-lr-mistuned": 0.8, "reward-not-normalized": 0.5, "reward-not-clipped": 0.4, "no-grad-clipping": 0.4}


def clipping_evidence(view: RunView) -> tuple[list[str], float]:
    """Evidence about gradient clipping in the config, and the weight of no-grad-clipping."""
    if clipping_off(view):
        return [f"config: max_grad_norm={view.cfg('max_grad_norm')} (clipping off)"], 1.0
    mgn = view.cfg_float("max_grad_norm")
    if mgn is None:
        return [], 0.5
    return [f"config: max_grad_norm={mgn:g} (the logged norm is measured before clipping)"], 0.1


def _some_group_learned(ctx: RuleContext, steps: np.ndarray) -> np.ndarray:
    """Per step, whether at least one prompt group had a reward spread (GRPO's
    ``reward/zero_std_frac`` below 1; True where it is not logged).  A step whose groups all
    agreed has no advantage: its gradient is the KL term's alone, orders of magnitude below a
    policy gradient, and no level to measure one against.  An optimiser step trains on the
    batch of the last rollout logged at or before it: TRL logs the reward once per generation
    and the gradient norm on every step (``steps_per_generation``, ``num_iterations`` > 1), so
    the four optimiser steps of one degenerate rollout are all degenerate (blind set real49: 140
    of 200 steps, whose norms of about 0.002 made a normal 0.8 "313x its typical level")."""
    if not ctx.has("reward/zero_std_frac"):
        return np.ones(len(steps), dtype=bool)
    zs, zv = ctx.finite("reward/zero_std_frac")
    rollout = np.searchsorted(zs, steps, side="right") - 1
    degenerate = (zv >= 1.0 - 1e-9)[np.maximum(rollout, 0)] & (rollout >= 0)
    return ~degenerate


class GradientExplosion(Rule):
    """Gradient norms far above their typical level.

    **What it detects.** ``grad/norm`` (policy) and ``grad/norm_critic`` (critic) points at
    least ``factor`` (10) times the run's typical norm: the larger of the median of the first
    10 % and the median of the whole run, over the steps that carried a policy gradient (a GRPO
    step whose groups all got equal rewards, ``reward/zero_std_frac`` = 1, has zero advantage:
    its norm is 0, or the KL term's alone, and no baseline; an optimiser step belongs to the
    last rollout logged at or before it).  With clipping
    configured (``max_grad_norm`` > 0) the limit is also at least ``factor`` times the clip
    value: HF Trainer and TRL log the norm before clipping, and a pre-clip norm a few times
    the clip value is clipping at work.  Error when the peak reaches ``error_factor`` (100x, orders of
    magnitude) or the excess is sustained (3 of any 5 consecutive points) with clipping off;
    warning when sustained, or isolated with clipping off; an info note for isolated spikes
    that the configured clipping cut down.  Non-finite norms are PD601's.  A spike is a *sign*:
    it stays a warning or an error only when the reward breaks after it (outcome before sign),
    or as a **runaway**: with clipping off, a norm ``error_factor`` times its level for a
    sustained stretch, or still climbing at the last points; with clipping on, a norm
    ``error_factor`` times its level that is still climbing at the end, is followed by the run
    ending in non-finite values, or rides on a level that grew: the median of the last tenth
    ``factor`` times that of the first (the loss itself diverging: clipping bounds the step, not
    that).

    **Why it matters.** Gradient-norm spikes precede loss, reward and KL spikes (OLMo 2; Spike
    No More); the policy takes steps far larger than intended.  Causes: learning rate too high,
    no gradient clipping, unnormalised or unclipped rewards (large advantages), and for the
    critic a value learning rate that is too high.

    **Known false positives.** Runs whose first 10 % is unusually calm (e.g. a learning-rate
    warm-up from 0 makes the early norms small); raise ``factor`` for those.

    **Source.** PTT grad-norm rule (> 10x the early baseline = explode); rlwatch > 3 sigma;
    AUTOTRAINER ratio > 70; OLMo 2 (arXiv:2501.00656), PaLM (arXiv:2204.02311)
    (docs/sources.md#gradient-explosion).
    """

    code = "PD602"
    name = "gradient-explosion"
    symptom = "gradient_explosion"
    severity = "error"
    basis = "sign"
    watch = "the reward and NaN: spikes that clipping absorbs matter only if the reward breaks after them"
    spikes = True
    requires = (("grad/norm", "grad/norm_critic"),)
    params = {"factor": EXPLODE_FACTOR, "error_factor": 100.0, "min_points": 10}
    causes = {"lr-too-high": 0.7, "no-grad-clipping": 0.5, "reward-not-normalized": 0.4, "reward-not-clipped": 0.3, "implementation-bug": 0.2}
    message = "{metric} reached {peak:num} at step {peak_step}, {ratio:num}x its typical level of {baseline:num} ({count} point(s) over the limit {limit:num})"

    def evaluate(self, ctx):
        p = ctx.params
        for metric in ("grad/norm", "grad/norm_critic"):
            if not ctx.has(metric):
                continue
            s, v = ctx.finite(metric)
            if len(v) < p["min_points"]:
                continue
            # the run's typical norm, from the steps that carried a gradient: a GRPO step whose
            # groups all got equal rewards has zero advantage and a norm of exactly 0, which is no
            # level to measure an explosion against
            nonzero = v > 0
            carried = v[nonzero & _some_group_learned(ctx, s)]
            if len(carried) < p["min_points"]:
                carried = v[nonzero]  # too few steps with a group that learned to set a level
            if len(carried) < p["min_points"]:
                continue
            early, _, _ = early_late(carried)
            base = max(early, float(median(carried)))
            if not base > 0:
                continue
            limit = p["factor"] * base
            clip = ctx.view.cfg_float("max_grad_norm")
            if clip is not None and clip > 0:
                # a pre-clip norm a few times the clip value is clipping at work (HF Trainer and
                # TRL log the norm before clipping)
                limit = max(limit, p["factor"] * clip)
            over = v > limit
            if not over.any():
                continue
            st = Stretch(Input(metric, s, v), mask_to_spans(s, over, v), "up", limit)
            ratio = st.worst.peak_value / base
            sustained = bool(sustained_mask(over, 3, 5).any())
            unclipped = clipping_off(ctx.view)
            if ratio >= p["error_factor"] or (sustained and unclipped):
                severity = "error"
            elif sustained or unclipped:
                severity = "warning"
            else:
                severity = "info"  # isolated spikes the configured clipping cut down
            # nothing bounds the update and the norm is orders of magnitude up for a sustained
            # stretch, or still climbing at the last points: a runaway; otherwise a sign, kept
            # as a warning only when the reward breaks after it (outcome before sign)
            huge = bool(sustained_mask(v > p["error_factor"] * base, 3, 5).any())
            climbing = over[-1] and still_growing(s, np.log10(np.maximum(v, 1e-300)))
            # a norm orders of magnitude up and still climbing at the end, or ending the run in
            # non-finite values, is the loss itself diverging: clipping bounds the step, not that
            ends_broken = ctx.run.standing.diverged is not None
            # spikes orders of magnitude up on a norm whose level itself grew `factor`-fold from
            # its first tenth and stays there at the end: the loss surface got steeper for good,
            # not one bad batch that clipping cut down (healthy runs whose norm grows as the
            # policy sharpens do not spike orders of magnitude; docs/sources.md)
            first, last, _ = early_late(v)
            level_grew = bool(first > 0 and last >= p["factor"] * first)
            runaway = (unclipped and (huge or climbing)) or (huge and climbing) or (ratio >= p["error_factor"] and (ends_broken or level_grew))
            basis = "runaway" if runaway else "sign"
            evidence, no_clip = clipping_evidence(ctx.view)
            causes = dict(CRITIC_CAUSES if metric == "grad/norm_critic" else self.causes)
            causes["no-grad-clipping"] = no_clip if metric == "grad/norm" else min(no_clip, causes["no-grad-clipping"])
            evidence.append(f"{int(over.sum())} of {len(v)} points over {fmt_num(limit)}" + ("; sustained" if sustained else ""))
            observed = {"baseline": base, "peak": st.worst.peak_value, "ratio": ratio, "count": int(over.sum())}
            yield stretch_incident(
                self, ctx, st, observed=observed, log_scale=True, severity=severity, basis=basis, causes=causes, evidence=evidence, fmt={"limit": limit}
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
