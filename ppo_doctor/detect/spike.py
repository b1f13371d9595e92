"""Spikes: points far from their local (or global) level in robust z units.

z = (x - level) / scale with a median level and a MAD scale (robust to the very spikes
being searched for), as in ADTK's ``PersistAD``/``InterQuartileRangeAD`` and rlwatch's
sigma rules (docs/sources.md#detectors).  The local level is a block-median
curve (see :func:`._util.smooth_level`): it follows trends but not bursts shorter than half
a window, so only short excursions count as spikes; long moves are level shifts
(:mod:`.level_shift`).  Non-finite points get z = NaN and are never spikes here.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._util import MAD_TO_SD, approx_median, as_arrays, block_stat, robust_sd, smooth_level, window_size
from .spans import Span, mask_to_spans

# The local scale may not fall below this share of the series-wide scale: one quiet block
# (e.g. a plateau of identical values) must not turn ordinary noise after it into "spikes".
MIN_LOCAL_SCALE_FRAC = 0.25


def _scale_floor(x: np.ndarray) -> float:
    """Smallest usable scale: relative float resolution of the series' magnitude."""
    mag = float(np.max(np.abs(x))) if len(x) else 0.0
    return max(1e-12, 1e-9 * mag)


def default_window(n: int) -> int:
    """The local-level window :func:`spikes` uses for ``n`` finite points: 5 %, 5..201 points."""
    return window_size(n, 0.05, 5, 201)


def _local_stats(x: np.ndarray, window: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Level and scale for every point of the finite series ``x`` (see :func:`robust_z`)."""
    if window is None or window >= len(x):
        level = np.full(len(x), approx_median(x))
        scale = np.full(len(x), robust_sd(x))
    else:
        level = smooth_level(x, window)
        resid = x - level
        glob = robust_sd(resid)
        centres, mad = block_stat(np.abs(resid - approx_median(resid)), window)
        pos = np.arange(len(x), dtype=np.float64)
        local = MAD_TO_SD * (np.interp(pos, centres, mad) if len(mad) > 1 else np.full(len(x), mad[0]))
        scale = np.maximum(local, MIN_LOCAL_SCALE_FRAC * glob)
    return level, np.maximum(scale, _scale_floor(x))


def robust_z(values: ArrayLike, window: int | None = None) -> np.ndarray:
    """Robust z-score of every point (NaN where the value is not finite).

    ``window=None``: global median/MAD.  Otherwise a local level from block medians of
    ``window`` points, and a local MAD of the residuals (floored at a quarter of the global
    one), both interpolated between block centres.
    """
    return _z_and_level(np.asarray(values, dtype=np.float64).reshape(-1), window)[0]


def spike_scores(values: ArrayLike, window: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(robust z, local level)`` of every point (NaN where the value is not finite).

    Pass the result to :func:`spikes` (``scores=``) to reuse it instead of recomputing.
    """
    return _z_and_level(np.asarray(values, dtype=np.float64).reshape(-1), window)


def _z_and_level(v: np.ndarray, window: int | None) -> tuple[np.ndarray, np.ndarray]:
    z = np.full(len(v), np.nan)
    level_all = np.full(len(v), np.nan)
    keep = np.isfinite(v)
    x = v[keep]
    if len(x) < 3:
        return z, level_all
    level, scale = _local_stats(x, window)
    z[keep] = (x - level) / scale
    level_all[keep] = level
    return z, level_all


def spikes(
    steps: ArrayLike,
    values: ArrayLike,
    z: float = 8.0,
    window: int | None = None,
    direction: str = "up",
    min_deviation: float = 0.0,
    max_len: int | None = None,
    scores: tuple[np.ndarray, np.ndarray] | None = None,
) -> list[Span]:
    """Spans of points whose robust z exceeds ``z`` in ``direction`` ("up", "down", "both").

    ``window`` defaults to 5 % of the series (5..201 points).  ``min_deviation``: an absolute
    floor on |x - level| so float noise on an almost constant series is never a spike.
    ``max_len``: drop spans longer than this (they are level shifts, not spikes).
    ``scores``: the output of :func:`spike_scores` for the same values and window.
    Series shorter than 5 points have no spikes (no baseline to compare against).
    """
    s, v = as_arrays(steps, values)
    if len(v) < 5:
        return []
    if window is None:
        window = default_window(int(np.isfinite(v).sum()))
    zz, level = scores if scores is not None else _z_and_level(v, window)
    with np.errstate(invalid="ignore"):
        if direction == "up":
            m = zz > z
            peak = "max"
        elif direction == "down":
            m = zz < -z
            peak = "min"
        elif direction == "both":
            m = np.abs(zz) > z
            peak = "abs"
        else:
            raise ValueError(f"direction must be 'up', 'down' or 'both', not {direction!r}")
    if min_deviation > 0 and m.any():
        with np.errstate(invalid="ignore"):
            m &= np.abs(v - level) >= min_deviation
    # the peak is chosen by z, so that a spike on a rising curve peaks where it stands out most
    out = mask_to_spans(s, m, zz, peak=peak)
    if max_len is not None:
        out = [sp for sp in out if sp.length <= max_len]
    return [
        Span(sp.start_idx, sp.end_idx, sp.start_step, sp.end_step, sp.peak_idx, sp.peak_step, float(v[sp.peak_idx]))
        for sp in out
    ]
