"""The reward scale a value loss is judged against (shared by the PD40x rules).

A mean-squared value loss scales with the square of the returns: rewards multiplied by 100
give value losses 10,000 times larger with a perfectly healthy critic (the SB3 trap:
classic-RL rewards are often large).  So value losses are judged relative to
``scale**2`` where ``scale = |median reward| + reward spread`` (spread = batch ``reward/std``
when logged, else the robust spread of the reward series), computed on the same window.
"""

from __future__ import annotations

import math

from ..detect import approx_median, robust_sd
from .base import RuleContext


def reward_scale(ctx: RuleContext, frac_slice: slice | None = None) -> float | None:
    """``|median reward| + spread`` over the points selected by ``frac_slice`` (None: all)."""
    metric = ctx.first_present("reward/score", "reward/total", "return/mean")
    if metric is None:
        return None
    _, r = ctx.finite(metric)
    if frac_slice is not None:
        r = r[frac_slice]
    if len(r) < 3:
        return None
    spread = robust_sd(r)
    if ctx.has("reward/std"):
        _, sd = ctx.finite("reward/std")
        if frac_slice is not None:
            sd = sd[frac_slice]
        if len(sd):
            spread = approx_median(sd)
    scale = abs(approx_median(r)) + spread
    # callers divide by scale**2: a scale whose square under- or overflows (|r| ~1e-200 or
    # ~1e200) says nothing usable about the value loss's units
    return scale if 0 < scale * scale < math.inf else None


def window_slices(n: int, frac: float = 0.1, lo: int = 3) -> tuple[slice, slice]:
    """Slices of the first and last ``frac`` of ``n`` points (at least ``lo`` each)."""
    w = max(lo, int(round(n * frac)))
    return slice(0, w), slice(max(0, n - w), n)
