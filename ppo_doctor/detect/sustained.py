"""Sustained conditions: a condition counts only when it holds for k of n consecutive points.

One noisy point above a threshold is not an incident; ``k`` of any ``n`` consecutive points
is (the "window" + "min_steps" pattern of PTT's YAML rules and rlwatch's consecutive-step
counters, docs/sources.md#detectors).  Computed with two cumulative sums: linear time.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .spans import Span, mask_to_spans


def window_counts(mask: ArrayLike, n: int) -> np.ndarray:
    """Number of True points in each window of ``n`` consecutive points (len(mask)-n+1 windows)."""
    m = np.asarray(mask, dtype=bool)
    c = np.concatenate(([0], np.cumsum(m, dtype=np.int64)))
    return c[n:] - c[:-n]


def sustained_mask(mask: ArrayLike, k: int, n: int) -> np.ndarray:
    """True on the flagged points that lie in some window of ``n`` points with >= ``k`` flagged.

    When the series is shorter than ``n`` the whole series is the only window, and ``k`` is
    still required, so a very short run cannot fire on one or two noisy points.
    """
    m = np.asarray(mask, dtype=bool).reshape(-1)
    size = len(m)
    k = max(1, int(k))
    n = max(k, int(n))
    if size == 0:
        return m.copy()
    total = int(m.sum())
    if total < k:
        return np.zeros(size, dtype=bool)
    if size < n:
        return m.copy()
    good = np.flatnonzero(window_counts(m, n) >= k)  # window j..j+n-1 qualifies
    if len(good) == 0:
        return np.zeros(size, dtype=bool)
    # mark the points each qualifying window covers: +1 where it starts, -1 after it ends
    acc = np.zeros(size + 1, dtype=np.int32)
    acc[good] += 1  # indices are unique, so plain fancy-index updates are exact
    acc[good + n] -= 1
    covered = np.cumsum(acc[:size]) > 0
    return m & covered


def sustained_spans(steps: ArrayLike, mask: ArrayLike, k: int, n: int, values: ArrayLike | None = None, peak: str = "max", max_gap: int | None = None) -> list[Span]:
    """Spans of sustained points; gaps shorter than ``n - k`` are bridged (one incident)."""
    sm = sustained_mask(mask, k, n)
    gap = max(0, n - k) if max_gap is None else max_gap
    return mask_to_spans(steps, sm, values, min_len=1, max_gap=gap, peak=peak)
