"""Level shifts: the median of the next window differs from the median of the previous one
by many noise standard deviations (ADTK ``LevelShiftAD``: "median shift between adjacent
windows", thresholds-and-peers.md §2).

Window medians are approximated by medians of block medians (blocks of a quarter window),
which keeps the scan linear in the series length; a shift is reported at the block
boundary where the score peaks, and one run of over-threshold splits is one shift.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from numpy.lib.stride_tricks import sliding_window_view

from ._util import as_arrays, block_stat, noise_sd

# a window median of fewer points says nothing about a level
MIN_WINDOW = 3


@dataclass(frozen=True)
class LevelShift:
    """The level changes from ``before`` to ``after`` at ``idx`` (first point of the new level)."""

    idx: int
    step: int
    before: float
    after: float
    delta: float
    score: float  # delta in units of the noise standard deviation


def shift_scores(values: ArrayLike, window: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Candidate splits (indices into the finite values) with left/right medians and deltas.

    Returns ``(split_idx, before, after, delta)``; empty arrays when the series is shorter
    than two windows of ``MIN_WINDOW`` points.
    """
    x = np.asarray(values, dtype=np.float64)
    n = len(x)
    window = max(3, min(int(window), n // 2))
    if n < 2 * MIN_WINDOW:
        e = np.empty(0)
        return e.astype(np.int64), e, e, e
    block = max(1, window // 4)
    _, bm = block_stat(x, block)
    nfull = n // block
    bm = bm[:nfull]  # a short trailing block would shift the split positions
    wb = max(1, window // block)
    if len(bm) < 2 * wb:
        e = np.empty(0)
        return e.astype(np.int64), e, e, e
    meds = np.median(sliding_window_view(bm, wb), axis=1)  # meds[j]: blocks j..j+wb-1
    before = meds[: len(meds) - wb]
    after = meds[wb:]
    split = (np.arange(len(before)) + wb) * block
    return split.astype(np.int64), before, after, after - before


def level_shifts(
    steps: ArrayLike,
    values: ArrayLike,
    window: int,
    c: float = 6.0,
    direction: str = "both",
    min_delta: float = 0.0,
) -> list[LevelShift]:
    """Level shifts of at least ``c`` noise sds (and ``min_delta`` in value units).

    Non-finite points are skipped; indices in the result refer to the original arrays.
    """
    s, v = as_arrays(steps, values)
    keep = np.flatnonzero(np.isfinite(v))
    x = v[keep]
    split, before, after, delta = shift_scores(x, window)
    if len(split) == 0:
        return []
    sd = max(noise_sd(x), 1e-12, 1e-9 * float(np.max(np.abs(x))))
    score = delta / sd
    if direction == "up":
        m = score > c
    elif direction == "down":
        m = score < -c
    elif direction == "both":
        m = np.abs(score) > c
    else:
        raise ValueError(f"direction must be 'up', 'down' or 'both', not {direction!r}")
    m &= np.abs(delta) >= min_delta
    if not m.any():
        return []
    # one shift per run of consecutive over-threshold splits of the same sign
    sign = np.sign(score) * m
    edges = np.flatnonzero(np.diff(np.concatenate(([0.0], sign, [0.0]))) != 0)
    out: list[LevelShift] = []
    for a, b in zip(edges[:-1], edges[1:]):
        if sign[a] == 0:
            continue
        j = a + int(np.argmax(np.abs(score[a:b])))
        i = int(keep[split[j]])
        out.append(LevelShift(i, int(s[i]), float(before[j]), float(after[j]), float(delta[j]), float(score[j])))
    return out
