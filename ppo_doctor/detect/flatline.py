"""Flatlines: segments where a series does not move, relative to its own scale.

Two consecutive points are "the same" when they differ by at most
``abs_tol + rel_tol * max(|a|, |b|) + scale_tol * scale``, where ``scale`` is the robust
spread of the whole series.  ``rel_tol`` absorbs float noise (TensorBoard stores float32,
docs/sources.md#logged-precision), ``scale_tol`` makes "flat" relative to how much the series moves
elsewhere, so a learning-rate schedule stuck at its floor and a frozen reward both qualify.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._util import as_arrays, robust_sd
from .spans import Span, mask_to_spans

# float32 has a 2**-23 ~ 1.2e-7 relative resolution; 1e-6 leaves room for rounding on write
FLOAT32_REL_TOL = 1e-6


def flat_mask(values: ArrayLike, rel_tol: float = FLOAT32_REL_TOL, abs_tol: float = 0.0, scale_tol: float = 0.0) -> np.ndarray:
    """True on every point that belongs to a pair of 'equal' consecutive finite points."""
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    n = len(v)
    if n < 2:
        return np.zeros(n, dtype=bool)
    scale = robust_sd(v) if scale_tol > 0 else 0.0
    a, b = v[:-1], v[1:]
    with np.errstate(invalid="ignore"):
        tol = abs_tol + rel_tol * np.maximum(np.abs(a), np.abs(b)) + scale_tol * scale
        same = np.abs(b - a) <= tol  # False when either side is NaN/Inf
    m = np.zeros(n, dtype=bool)
    m[:-1] |= same
    m[1:] |= same
    return m


def flat_spans(
    steps: ArrayLike,
    values: ArrayLike,
    min_len: int = 5,
    rel_tol: float = FLOAT32_REL_TOL,
    abs_tol: float = 0.0,
    scale_tol: float = 0.0,
) -> list[Span]:
    """Spans of at least ``min_len`` consecutive points that do not move."""
    s, v = as_arrays(steps, values)
    m = flat_mask(v, rel_tol, abs_tol, scale_tol)
    tol = abs_tol + (scale_tol * robust_sd(v) if scale_tol > 0 else 0.0)
    spans = mask_to_spans(s, m, v, min_len=min_len)
    return [sp for sp in spans if _really_flat(v[sp.start_idx : sp.end_idx + 1], rel_tol, tol)]


def _really_flat(seg: np.ndarray, rel_tol: float, tol: float) -> bool:
    """Rejects a slow ramp whose steps are each below tolerance but which drifts overall.

    Noise within tolerance wanders like a random walk, so the allowed drift grows with the
    square root of the segment length.
    """
    mag = float(np.max(np.abs(seg)))
    drift = float(np.max(seg) - np.min(seg))
    return drift <= (tol + rel_tol * mag) * max(1.0, np.sqrt(len(seg)))
