"""PD302 vanishing-gradients."""

from __future__ import annotations

import numpy as np

from ..detect import sustained_spans
from .base import Example, Rule
from .common import early_late, finite_arrays, fmt_num, incident, sustain_window
from .examples import decay, flat


class VanishingGradients(Rule):
    """Gradient norms shrink to a tiny fraction of their early level.

    **What it detects.** ``grad/norm`` (and ``grad/norm_critic``) whose late median (last 10 %)
    is below ``factor`` times its early median (first 10 %), with a sustained stretch below
    that level.  Each logged norm is judged separately.  Exact zeros amid ordinary norms are
    steps with no signal at all (a GRPO batch whose prompt groups all got equal rewards gives no
    gradient) and are left out, unless the whole last window is zero.

    **Why it matters.** Near-zero gradients mean the update no longer changes the model:
    stalled training, the guide's "vanishing gradients".  Causes include a detached graph or
    masked-out loss (implementation), advantages that are all zero (no learning signal), or a
    learning-rate schedule that is effectively off.

    **Known false positives.** Runs that legitimately converge to a sharp optimum in classic
    RL; a logged norm that is post-clip and scaled.

    **Source.** PTT grad-norm rule (< 0.01x the early baseline = vanish); DeepDiagnosis mean
    |g| < 1e-7; AUTOTRAINER vanishing-gradient ratio (thresholds-and-peers.md §1.1, §4.1).
    """

    code = "PD302"
    name = "vanishing-gradients"
    symptom = "stagnation"
    severity = "warning"
    requires = (("grad/norm", "grad/norm_critic"),)
    params = {"factor": 0.01, "min_points": 10}
    causes = {"weak-learning-signal": 0.7, "implementation-bug": 0.4, "lr-too-low": 0.3}
    message = "{metric} fell from {first_s} to {late_s} (below {factor:.0%} of its early level): gradients vanish"

    def evaluate(self, ctx):
        p = ctx.params
        for metric in ("grad/norm", "grad/norm_critic"):
            if not ctx.has(metric):
                continue
            s, v = finite_arrays(ctx, metric)
            if len(v) < p["min_points"]:
                continue
            _, _, w0 = early_late(v)
            if np.any(v[-w0:] != 0):
                # exact zeros amid ordinary norms are steps with no signal at all (a GRPO batch whose
                # groups all got equal rewards), not a gradient shrinking: judge the others
                keep = v != 0
                s, v = s[keep], v[keep]
                if len(v) < p["min_points"]:
                    continue
            first, late, _ = early_late(v)
            if not first > 0 or late >= p["factor"] * first:
                continue
            k, w = sustain_window(len(v))
            spans = sustained_spans(s, v < p["factor"] * first, k, w, values=v, peak="min")
            if not spans:
                continue
            yield incident(
                self,
                ctx,
                metric=metric,
                steps=s,
                values=v,
                span=spans[0],
                direction="down",
                log_scale=True,
                observed={"first": first, "late": late, "min": float(np.min(v))},
                end_step=spans[-1].end_step,
                fmt={"metric": metric, "first_s": fmt_num(first), "late_s": fmt_num(late)},
            )

    @classmethod
    def bad_example(cls):
        return Example(series={"grad/norm": decay(100, 1.0, 1e-5, rate=8, seed=22)})

    @classmethod
    def good_example(cls):
        return Example(series={"grad/norm": flat(100, 0.8, 0.1, seed=23)})
