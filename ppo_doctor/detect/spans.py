"""Spans: runs of consecutive flagged points, the common currency of every detector.

A detector produces a boolean mask over a series; :func:`mask_to_spans` turns it into
:class:`Span` records (first/last/worst point) that rules turn into findings with onset,
end and peak steps.  Both directions are vectorised (no per-point Python loop).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ._util import as_arrays


@dataclass(slots=True)
class Span:
    """Points ``start_idx..end_idx`` (inclusive) of a series, with the worst point's index.

    Indices refer to the arrays the detector was given; steps are the matching step values.
    (``slots``: a noisy million-point mask can yield 10^5 spans, and slotted instances are
    about twice as fast to create as frozen ones.)
    """

    start_idx: int
    end_idx: int
    start_step: int
    end_step: int
    peak_idx: int
    peak_step: int
    peak_value: float

    @property
    def length(self) -> int:
        """Number of points covered (gap points merged by ``max_gap`` included)."""
        return self.end_idx - self.start_idx + 1


def _runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and inclusive end indices of runs of True."""
    m = np.asarray(mask, dtype=bool)
    if len(m) == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    d = np.diff(np.concatenate(([False], m, [False])).astype(np.int8))
    starts = np.flatnonzero(d == 1)
    ends = np.flatnonzero(d == -1) - 1
    return starts, ends


def _peaks(values: np.ndarray, starts: np.ndarray, ends: np.ndarray, peak: str) -> np.ndarray:
    """Index of the worst point of every span (first one on ties), in one vectorised pass."""
    if peak == "max":
        key = values
    elif peak == "min":
        key = -values
    elif peak == "abs":
        key = np.abs(values)
    else:
        raise ValueError(f"peak must be 'max', 'min' or 'abs', not {peak!r}")
    key = np.where(np.isnan(key), -np.inf, key)
    lengths = ends - starts + 1
    offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    label = np.repeat(np.arange(len(starts)), lengths)
    # index of every covered point: start of its span + position inside the span
    idx = np.arange(lengths.sum()) - np.repeat(offsets, lengths) + np.repeat(starts, lengths)
    k = key[idx]
    seg_max = np.maximum.reduceat(k, offsets)
    hits = np.flatnonzero(k == seg_max[label])
    _, first = np.unique(label[hits], return_index=True)
    return idx[hits[first]]


def mask_to_spans(
    steps: ArrayLike,
    mask: ArrayLike,
    values: ArrayLike | None = None,
    min_len: int = 1,
    max_gap: int = 0,
    peak: str = "max",
) -> list[Span]:
    """Turn a boolean mask into spans.

    ``max_gap``: runs separated by at most this many unflagged points are merged (one
    incident with a brief dip, not several).  ``min_len``: spans shorter than this many
    points (after merging) are dropped.  ``peak``: how the worst point is chosen from
    ``values`` ("max", "min" or "abs"); without ``values`` it is the first point.
    """
    s = np.asarray(steps, dtype=np.int64).reshape(-1)
    m = np.asarray(mask, dtype=bool).reshape(-1)
    if len(s) != len(m):
        raise ValueError(f"{len(s)} steps but a mask of {len(m)}")
    starts, ends = _runs(m)
    if len(starts) == 0:
        return []
    if max_gap > 0 and len(starts) > 1:
        gaps = starts[1:] - ends[:-1] - 1
        cut = gaps > max_gap
        starts = starts[np.concatenate(([True], cut))]
        ends = ends[np.concatenate((cut, [True]))]
    keep = (ends - starts + 1) >= max(1, int(min_len))
    starts, ends = starts[keep], ends[keep]
    if len(starts) == 0:
        return []
    if values is None:
        v = np.full(len(s), np.nan)
        pk = starts
    else:
        _, v = as_arrays(s, values)
        pk = _peaks(v, starts, ends, peak)
    return [
        Span(int(a), int(b), int(s[a]), int(s[b]), int(p), int(s[p]), float(v[p]))
        for a, b, p in zip(starts.tolist(), ends.tolist(), pk.tolist())
    ]


def spans_to_mask(n: int, spans: list[Span]) -> np.ndarray:
    """Boolean mask of length ``n`` that is True on every point of every span."""
    acc = np.zeros(n + 1, dtype=np.int64)
    if spans:
        st = np.array([sp.start_idx for sp in spans], dtype=np.int64)
        en = np.array([sp.end_idx for sp in spans], dtype=np.int64)
        np.add.at(acc, np.clip(st, 0, n), 1)
        np.add.at(acc, np.clip(en + 1, 0, n), -1)
    return np.cumsum(acc[:n]) > 0


def longest(spans: list[Span]) -> Span | None:
    """The span covering the most points (the earliest on ties), or None."""
    if not spans:
        return None
    return max(spans, key=lambda sp: (sp.length, -sp.start_idx))
