"""Exact order statistics without ``numpy.ma``: :func:`median`, :func:`percentile` and
:func:`distinct` of a 1-D array.

Why not numpy's own: in numpy 2.x ``np.median``, ``np.percentile``, ``np.quantile`` and
``np.nanmedian`` import ``numpy.ma`` on their first call (``numpy/lib/_utils_impl.py``,
``_median_nancheck`` reads ``np.ma.isMaskedArray``), and so does a plain ``np.unique(x)``
(``numpy/lib/_arraysetops_impl.py``, ``_unique1d`` calls ``np.ma.is_masked`` unless indices or counts are asked for).  That import
costs about 9 ms, some 5 % of a whole ``ppo-doctor check`` of one small log
(benchmarks/RESULTS.md, "One small check", issue 26).

What they return: the same values as numpy, bit for bit, for any 1-D real input (floats with
NaN and +-inf, ties, integers; a NaN anywhere gives NaN, as numpy's does).  Each function
makes numpy's own calls in numpy's order (the same ``np.partition`` with the same ``kth``, the
same ``np.mean`` or linear interpolation, numpy's ``'linear'`` method: ``numpy/lib/
_function_base_impl.py``, ``_median``, ``_quantile``, ``_get_indexes`` and ``_lerp``), so even
the sign of a zero agrees; tests/test_order_stats.py compares them with numpy on random arrays.
One difference, on purpose: an empty input gives NaN without a warning (numpy's median warns
"Mean of empty slice", its percentile raises ``IndexError``).
"""

from __future__ import annotations

from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike


def _flat(x: ArrayLike) -> np.ndarray:
    """A 1-D copy of ``x`` (numpy's ``axis=None`` reductions flatten a copy and partition it)."""
    return np.asarray(x).flatten()


def _nan_last(part: np.ndarray) -> bool:
    """Whether a partitioned float array holds a NaN: NaN sorts last, so it is then at ``-1``."""
    return part.dtype.kind == "f" and bool(np.isnan(part[-1]))


def median(x: ArrayLike) -> np.floating[Any]:
    """The median of ``x``, as ``np.median(x)`` (a ``np.float64``; NaN when ``x`` holds a NaN
    or is empty)."""
    a = _flat(x)
    n = len(a)
    if n == 0:
        return np.float64(np.nan)
    kth = [n // 2 - 1, n // 2] if n % 2 == 0 else [(n - 1) // 2]
    if a.dtype.kind == "f":
        kth.append(-1)  # numpy brings a NaN to the end and returns it
    part = np.partition(a, kth)
    half = n // 2
    # numpy takes the mean of the middle one or two, which also makes an integer median a float
    rout = np.mean(part[half : half + 1] if n % 2 else part[half - 1 : half + 1])
    return part[-1] if _nan_last(part) else rout


@overload
def percentile(x: ArrayLike, q: float) -> float: ...
@overload
def percentile(x: ArrayLike, q: np.ndarray | list[float]) -> np.ndarray: ...
def percentile(x: ArrayLike, q: float | np.ndarray | list[float]) -> float | np.ndarray:
    """The ``q``-th percentile(s) (0..100) of ``x``, as ``np.percentile(x, q)`` with its default
    ``'linear'`` method: a scalar for a scalar ``q``, an array of ``q``'s shape otherwise.  NaN
    when ``x`` holds a NaN (every entry) or is empty."""
    weak_q = type(q) in (int, float)  # numpy interpolates with a Python float then
    quantiles = np.asarray(np.true_divide(q, 100))
    if not (np.all(quantiles >= 0) and np.all(quantiles <= 1)):
        raise ValueError("Percentiles must be in the range [0, 100]")
    arr = _flat(x)
    n = len(arr)
    if n == 0:
        full = np.full(quantiles.shape, np.nan)
        return full[()] if full.ndim == 0 else full
    # the neighbours of the virtual index (n - 1) * q, clamped to the ends (numpy's _get_indexes)
    virtual = np.asarray((n - 1) * quantiles)
    previous = np.array(np.floor(virtual))  # np.array: a 0-d result stays writable
    following = np.array(previous + 1)
    above = virtual >= n - 1
    previous[above] = -1
    following[above] = -1
    prev_idx = previous.astype(np.intp)
    next_idx = following.astype(np.intp)
    # numpy partitions at the sorted distinct kth of [0, -1, previous, next] (np.unique of ints)
    kth = sorted({0, -1, *prev_idx.ravel().tolist(), *next_idx.ravel().tolist()})
    arr.partition(kth)
    lo, hi = arr[prev_idx], arr[next_idx]
    gamma: float | np.ndarray = np.asarray(virtual - prev_idx, dtype=virtual.dtype)
    if weak_q:
        gamma = float(gamma)
    # numpy's _lerp: a + (b - a) * t, or b - (b - a) * (1 - t) from t = 0.5 on
    diff = hi - lo
    out = np.array(np.add(lo, diff * gamma))
    np.subtract(hi, diff * (1 - gamma), out=out, where=np.asarray(gamma) >= 0.5, casting="unsafe")
    result = out[()] if out.ndim == 0 else out
    if _nan_last(arr):
        if np.ndim(result) == 0:
            return arr[-1]
        result[...] = arr[-1]
    return result


def distinct(x: ArrayLike) -> np.ndarray:
    """The sorted distinct values of ``x``, as ``np.unique(x)`` (every NaN counts as one value,
    last): with ``return_counts`` numpy takes its sorting path, which never asks ``numpy.ma``."""
    return np.unique(_flat(x), return_counts=True)[0]
