"""Signs that the policy is not being updated at all: a KL to the reference that stays near 0,
an old-vs-new KL of 0 per update, vanishing gradients or a learning rate near 0.

Evidence for ``lr-too-low`` / ``weak-learning-signal`` when the reward does not move (PD301)
or the policy's outputs do not change (PD304).
"""

from __future__ import annotations

import numpy as np

from ..detect import early_late, median
from .base import RuleContext
from .messages import fmt_num


def no_movement_evidence(ctx: RuleContext, kl_frac: float = 0.05) -> list[str]:
    """Signs that the policy is not being updated: tiny ref KL, approx KL, gradients or LR."""
    out = []
    view = ctx.view.kl
    # a KL that is exactly 0 on every point was not computed (TRL logs ``kl`` 0.0 with beta 0):
    # any update of a policy gives its estimator some non-zero value, so this is no evidence
    if view is not None and len(view.values) >= 3 and np.any(view.values):
        _, late, _ = early_late(view.values)
        if abs(late) < kl_frac * view.band:
            out.append(f"KL to the reference stays at {fmt_num(late)} {view.unit} (< {kl_frac:.0%} of its band)")
    if ctx.has("kl/old"):
        _, ko = ctx.finite("kl/old")
        if len(ko) >= 3 and abs(float(median(ko))) < 1e-6:
            out.append(f"approx KL per update is {fmt_num(float(median(ko)))}: updates do not change the policy")
    if ctx.has("grad/norm"):
        _, g = ctx.finite("grad/norm")
        if len(g) >= 3 and float(median(g)) < 1e-6:
            out.append(f"gradient norm is {fmt_num(float(median(g)))}")
    lr = None
    if ctx.has("opt/lr"):
        _, lrs = ctx.finite("opt/lr")
        lr = float(np.max(lrs)) if len(lrs) else None
    lr = lr if lr is not None else ctx.view.cfg_float("lr")
    if lr is not None and lr < 1e-8:
        out.append(f"learning rate is {fmt_num(lr)}")
    return out
