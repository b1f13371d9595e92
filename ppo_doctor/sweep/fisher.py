"""Fisher's exact test on 2x2 tables, two-sided, for many tables at once.

The same p-value as ``scipy.stats.fisher_exact(table, alternative="two-sided")`` (checked in
tests/test_sweep_fisher.py), computed as scipy computes it, in floating point: with the margins
fixed, the probability of the table with ``x`` in its top-left cell is hypergeometric,
``C(K, x) C(N - K, r - x) / C(N, r)`` (``r`` the first row's total, ``K`` the first column's),
and the p-value sums it over every table no more probable than the observed one (within scipy's
relative tolerance of 1e-7, so that ties computed with rounding are counted).  Written here so
that sweeps do not need scipy (143 MB) for one test.

A sweep scores one table per candidate split, thousands per parameter in a random search, so the
tables are scored together with numpy, in log space (no underflow before 1e-308), and each table
only over the terms that can matter: the hypergeometric is log-concave, and every second
difference of its log is at most ``-kappa`` (:func:`_kappa`, from the four cells' bounds), so
``W = sqrt(2 * DROP / kappa) + 2`` steps past a tail's boundary a term is below ``exp(-DROP)``
times the observed table's probability, and the terms left out add less than
``N * exp(-DROP)`` of it.  A table is summed over a window around the observed ``x`` and one around
the other tail's boundary (found by bisection), ``O(sqrt(N))`` terms, instead of its whole support
(``O(N)``): 10,000 runs' attribution is then near-linear in the runs
(benchmarks/RESULTS.md, "Sweep attribution at search scale").
"""

from __future__ import annotations

import math

import numpy as np

# scipy.stats._stats_py.fisher_exact: tables within this relative distance of the observed
# probability count as "as extreme"
RELATIVE_TOLERANCE = 1e-7
# log-probability below the observed table's past which terms are dropped: exp(-60) * 1e6 terms
# is 1e-20 of the p-value, far below a float's precision
DROP = 60.0
# grid cells evaluated per batch (bounds the memory of one call, ~100 MB of float64 temporaries)
BATCH_CELLS = 2_000_000

_LOG_FACTORIAL = np.zeros(1)


def fisher_exact_two_sided(table: list[list[int]]) -> float:
    """Two-sided p-value of the 2x2 contingency ``table`` ``[[a, b], [c, d]]``."""
    (a, b), (c, d) = table
    if min(a, b, c, d) < 0:
        raise ValueError(f"counts must be non-negative, got {table}")
    return float(fisher_many(np.array([a]), np.array([a + b]), np.array([c]), np.array([c + d]))[0])


def fisher_many(hits_a: np.ndarray, sizes_a: np.ndarray, hits_b: np.ndarray, sizes_b: np.ndarray) -> np.ndarray:
    """Two-sided p-values of the tables ``[[hits_a, sizes_a - hits_a], [hits_b, sizes_b - hits_b]]``
    (one per element; non-negative integer arrays of one length)."""
    x = np.asarray(hits_a, dtype=np.int64)
    r = np.asarray(sizes_a, dtype=np.int64)
    n = r + np.asarray(sizes_b, dtype=np.int64)
    k = x + np.asarray(hits_b, dtype=np.int64)
    out = np.ones(len(x))
    # an empty margin: every arrangement is the observed one
    live = np.flatnonzero((r > 0) & (r < n) & (k > 0) & (k < n))
    if len(live) == 0:
        return out
    lf = _log_factorials(int(n.max()))
    x, r, n, k = x[live], r[live], n[live], k[live]
    lo, hi = np.maximum(0, r - (n - k)), np.minimum(r, k)
    const = lf[k] + lf[n - k] + lf[r] + lf[n - r] - lf[n]
    observed = _log_pmf(lf, x, r, n, k, const)
    limit = observed + math.log1p(RELATIVE_TOLERANCE)
    width = np.ceil(np.sqrt(2.0 * DROP / _kappa(r, n, k))).astype(np.int64) + 2
    other = _other_boundary(lf, x, r, n, k, lo, hi, const, limit)
    total = np.zeros(len(x))
    order = np.argsort(width, kind="stable")  # batch tables of like width together
    start = 0
    while start < len(order):
        w = int(width[order[start]])
        stop = min(len(order), start + max(1, BATCH_CELLS // (4 * w + 2)))
        stop = start + int(np.searchsorted(width[order[start:stop]], w * 2, side="right"))
        idx = order[start:stop]
        wmax = int(width[idx].max())
        offsets = np.arange(-wmax, wmax + 1)
        near = x[idx, None] + offsets  # around the observed table, both ways
        far = other[idx, None] + offsets  # around the other tail's first term
        far_ok = np.abs(far - x[idx, None]) > wmax  # not counted twice where the windows meet
        total[idx] = _window_sum(lf, near, None, idx, r, n, k, lo, hi, const, limit, observed)
        total[idx] += _window_sum(lf, far, far_ok, idx, r, n, k, lo, hi, const, limit, observed)
        start = stop
    out[live] = np.minimum(1.0, np.exp(observed + np.log(total)))
    return out


def _log_factorials(n: int) -> np.ndarray:
    """``log(k!)`` for k = 0..n (grown and kept between calls; ``math.lgamma`` is exact to an ulp,
    where a running sum of logs drifts)."""
    global _LOG_FACTORIAL
    if len(_LOG_FACTORIAL) <= n:
        size = max(n + 1, 2 * len(_LOG_FACTORIAL))
        _LOG_FACTORIAL = np.array([math.lgamma(i + 1.0) for i in range(size)])
    return _LOG_FACTORIAL


def _log_pmf(lf: np.ndarray, y: np.ndarray, r: np.ndarray, n: np.ndarray, k: np.ndarray, const: np.ndarray) -> np.ndarray:
    """Log-probability of the table with ``y`` in its top-left cell (``y`` inside the support)."""
    return const - lf[y] - lf[k - y] - lf[r - y] - lf[n - k - r + y]


def _kappa(r: np.ndarray, n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """A lower bound of ``-(second difference of the log-pmf)`` over the support: the sum over
    the four cells of ``1 / (largest value the cell can take + 1)``, since each cell ``z``
    contributes ``log(1 + 1/z) >= 1 / (z + 1)``."""
    cells = (np.minimum(r, k), np.minimum(r, n - k), np.minimum(n - r, k), np.minimum(n - r, n - k))
    return sum(1.0 / (c + 1.0) for c in cells)


def _other_boundary(lf: np.ndarray, x: np.ndarray, r: np.ndarray, n: np.ndarray, k: np.ndarray,
                    lo: np.ndarray, hi: np.ndarray, const: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """The first term of the other tail: on the side of the mode away from ``x``, the term
    nearest the mode that is no more probable than the observed one (one past the support's end
    when there is none; the pmf is monotone on each side of the mode, so bisection finds it)."""
    mode = np.clip((r + 1) * (k + 1) // (n + 2), lo, hi)
    right = x <= mode  # the other tail is to the right of the mode
    # bisection for the first y in [a, b) (rightwards) / last y in (a, b] (leftwards) at or below limit
    a = np.where(right, mode, lo - 1)
    b = np.where(right, hi + 1, mode)
    while True:
        open_ = b - a > 1
        if not open_.any():
            break
        mid = (a + b) // 2
        val = _log_pmf(lf, np.clip(mid, lo, hi), r, n, k, const)
        low_enough = val <= limit
        # rightwards: past the boundary when low enough (b = mid), else a = mid; leftwards mirrored
        a = np.where(open_ & ((right & ~low_enough) | (~right & low_enough)), mid, a)
        b = np.where(open_ & ((right & low_enough) | (~right & ~low_enough)), mid, b)
    first_right = np.where(_log_pmf(lf, np.clip(a, lo, hi), r, n, k, const) <= limit, a, b)
    last_left = np.where(_log_pmf(lf, np.clip(b, lo, hi), r, n, k, const) <= limit, b, a)
    return np.where(right, first_right, last_left)


def _window_sum(lf: np.ndarray, y: np.ndarray, keep: np.ndarray | None, idx: np.ndarray, r: np.ndarray, n: np.ndarray,
                k: np.ndarray, lo: np.ndarray, hi: np.ndarray, const: np.ndarray, limit: np.ndarray,
                observed: np.ndarray) -> np.ndarray:
    """``sum(pmf(y) / pmf(observed))`` over the grid ``y`` (one row per table ``idx``), counting
    the cells inside the support, no more probable than the observed table, and in ``keep``."""
    inside = (y >= lo[idx, None]) & (y <= hi[idx, None])
    yc = np.clip(y, lo[idx, None], hi[idx, None])
    val = _log_pmf(lf, yc, r[idx, None], n[idx, None], k[idx, None], const[idx, None])
    mask = inside & (val <= limit[idx, None])
    if keep is not None:
        mask &= keep
    return np.where(mask, np.exp(np.minimum(val - observed[idx, None], 1.0)), 0.0).sum(axis=1)
