"""Shared array helpers for the detectors: input coercion, finite filtering, robust scales
and block statistics.

Every helper is vectorised and linear (or n log n for a sort) in the series length, so that
the rule engine stays well under a second on a 1,000,000-step run.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .order_stats import distinct, median, percentile

# 1.4826 * MAD estimates the standard deviation of normal data (Rousseeuw & Croux 1993);
# sqrt(pi/2) * mean absolute deviation does the same and is the fallback when over half the
# points are identical (quantised logs, e.g. verl <= 0.4 prints 3 decimals: docs/sources.md#logged-precision).
MAD_TO_SD = 1.4826
MEAN_AD_TO_SD = 1.2533
# Scales and quantiles of longer series are estimated on an evenly strided subsample of this
# size: a median over 50,000 points is within ~0.6 % of a standard deviation, and a
# million-point median would cost 15 ms per call (np.partition), too much when a rule set
# makes dozens of them (the engine's budget is well under a second for 1M steps).
ESTIMATE_SAMPLE = 50_000


def as_arrays(steps: ArrayLike, values: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Coerce to ``int64`` steps and ``float64`` values of equal length."""
    s = np.asarray(steps, dtype=np.int64).reshape(-1)
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    if len(s) != len(v):
        raise ValueError(f"{len(s)} steps but {len(v)} values")
    return s, v


def finite_xy(steps: ArrayLike, values: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Steps and values of the finite points (the inputs themselves when all are finite)."""
    s, v = as_arrays(steps, values)
    keep = np.isfinite(v)
    if keep.all():
        return s, v
    return s[keep], v[keep]


def subsample(x: np.ndarray, max_n: int = ESTIMATE_SAMPLE) -> np.ndarray:
    """Every k-th value so that at most ``max_n`` remain (``x`` itself when short enough)."""
    if len(x) <= max_n:
        return x
    return x[:: -(-len(x) // max_n)]


def quantiles(x: np.ndarray, q: ArrayLike) -> np.ndarray:
    """Percentiles ``q`` (0..100) of the finite values, estimated on a subsample if long."""
    x = subsample(np.asarray(x, dtype=np.float64))
    x = x[np.isfinite(x)]
    if len(x) == 0:
        return np.full(np.shape(q), np.nan)
    return percentile(x, np.asarray(q, dtype=np.float64))


def approx_median(x: np.ndarray) -> float:
    """Median of the finite values (NaN when none), estimated on a subsample if long."""
    q = quantiles(x, 50)
    return float(q)


def robust_sd(x: np.ndarray) -> float:
    """Robust standard deviation of the finite values of ``x`` (0.0 when constant or empty)."""
    x = subsample(np.asarray(x, dtype=np.float64))
    x = x[np.isfinite(x)]
    if len(x) == 0:
        return 0.0
    med = median(x)
    dev = np.abs(x - med)
    mad = float(median(dev))
    if mad > 0:
        return MAD_TO_SD * mad
    return MEAN_AD_TO_SD * float(np.mean(dev))


def noise_sd(x: np.ndarray) -> float:
    """Point-to-point noise level, robust to trends: robust sd of first differences / sqrt(2).

    Differencing removes a slowly varying level, so a trending reward is not mistaken for a
    noisy one (the classic "MAD of differences" estimator of the noise sigma).
    """
    x = x[np.isfinite(x)]
    if len(x) < 3:
        return robust_sd(x)
    return robust_sd(np.diff(x)) / np.sqrt(2.0)


def switches(x: np.ndarray) -> bool:
    """``x`` (finite values) jumps between levels on many of its points: more than
    :data:`MAX_SWITCH_SHARE` of its first differences lie beyond :data:`SWITCH_SDS` robust sds
    of them.  A win/loss return (+105 or -102 per episode, jitter 3 within a mode) is such a
    mixture: its jumps are its noise, and the robust point-to-point noise (:func:`noise_sd`),
    which sees only the jitter, understates it by a factor of 50."""
    x = np.asarray(x, dtype=np.float64)
    x = x[np.isfinite(x)]
    if len(x) < 3:
        return False
    d = np.diff(x)
    sd = robust_sd(d)
    return bool(sd > 0 and np.mean(np.abs(d) > SWITCH_SDS * sd) > MAX_SWITCH_SHARE)


# Differences beyond this many robust sds are jumps (a Gaussian has about 1 in 10^6 there); on
# more than this share of the points they are how the series moves, not rare outliers.
SWITCH_SDS = 5.0
MAX_SWITCH_SHARE = 0.1


def level_se(x: np.ndarray, window: int) -> float:
    """Standard error of a window median's level: the point-to-point noise (:func:`noise_sd`)
    over sqrt(window / 2)."""
    return noise_sd(x) * float(np.sqrt(2.0 / max(1, window)))


# A series that holds one value on at least this share of its points is "sticky": a sparse
# reward that rarely pays (or is rarely penalised), a 100-episode mean of a rare success, a metric
# clipped at its cap.  Its medians and MADs sit on that value and see nothing of the departures,
# which are all of its movement, so its levels are window means and its noise a plain standard
# deviation (the breakdown point of the median is 50 %: Huber & Ronchetti, "Robust Statistics",
# 2nd ed. 2009, section 1.4).
STICKY_SHARE = 0.5


def sticky(x: np.ndarray) -> bool:
    """``x`` (finite values) holds one value on at least :data:`STICKY_SHARE` of its points and
    is not constant."""
    x = subsample(np.asarray(x, dtype=np.float64))
    if len(x) < 3:
        return False
    _, counts = np.unique(x, return_counts=True)
    return len(counts) > 1 and int(counts.max()) >= STICKY_SHARE * len(x)


def quantum(x: np.ndarray) -> float:
    """The smallest gap between two distinct values of ``x`` (finite values; 0.0 with fewer than
    two): the resolution of a series of counts or of means over a fixed number of episodes (a
    100-episode mean of integer returns moves in steps of 0.01)."""
    values = distinct(subsample(np.asarray(x, dtype=np.float64)))
    return float(np.diff(values).min()) if len(values) > 1 else 0.0


def winsorized(x: np.ndarray, q: float = 1.0) -> np.ndarray:
    """``x`` (finite values) clipped to its ``q``-th and ``(100 - q)``-th percentiles: the means
    of a :func:`sticky` series then follow how often it departs, and one wild point among
    hundreds does not make a level (the winsorized mean: Tukey 1962, "The future of data
    analysis")."""
    if len(x) == 0:
        return x
    lo, hi = quantiles(x, [q, 100.0 - q])
    return np.clip(x, lo, hi)


def departure_noise_sd(x: np.ndarray) -> float:
    """The noise of a :func:`sticky` series (finite values): the plain standard deviation of its
    first differences / sqrt(2).  Its differences are mostly zero, so their MAD (:func:`noise_sd`)
    says nothing; the departures are all of its movement."""
    return float(np.std(np.diff(x))) / np.sqrt(2.0) if len(x) > 1 else 0.0


def _row_medians(X: np.ndarray) -> np.ndarray:
    """Median of every row via ``np.partition`` (about 9x faster than ``np.median(axis=1)``)."""
    b = X.shape[1]
    k = (b - 1) // 2
    if b % 2:
        return np.partition(X, k, axis=1)[:, k]
    part = np.partition(X, (k, k + 1), axis=1)
    return (part[:, k] + part[:, k + 1]) / 2.0


def block_stat(x: np.ndarray, block: int, stat: str = "median") -> tuple[np.ndarray, np.ndarray]:
    """Per-block median (or mean) of ``x`` with block centres; the last block may be shorter.

    Reshaping into (blocks, block) makes this one vectorised call: linear and fast, unlike a
    pandas rolling median (O(n log w)).  ``x`` must be finite.
    """
    n = len(x)
    block = max(1, min(int(block), n)) if n else 1
    nfull = n // block
    parts = []
    centres = []
    if nfull:
        X = x[: nfull * block].reshape(nfull, block)
        parts.append(_row_medians(X) if stat == "median" else X.mean(axis=1))
        centres.append(np.arange(nfull) * block + (block - 1) / 2.0)
    rem = n - nfull * block
    if rem:
        tail = x[nfull * block :]
        parts.append(np.array([median(tail) if stat == "median" else tail.mean()]))
        centres.append(np.array([nfull * block + (rem - 1) / 2.0]))
    if not parts:
        return np.empty(0), np.empty(0)
    return np.concatenate(centres), np.concatenate(parts)


def smooth_level(x: np.ndarray, window: int) -> np.ndarray:
    """A robust local level of ``x`` (finite values): block medians linearly interpolated.

    A burst shorter than half a block barely moves its block's median, so the level follows
    the trend but not the spikes; that is what a spike or oscillation detector compares to.
    """
    n = len(x)
    if n == 0:
        return np.empty(0)
    centres, med = block_stat(x, max(1, window))
    if len(med) == 1:
        return np.full(n, med[0])
    return np.interp(np.arange(n, dtype=np.float64), centres, med)


def moving_average(x: np.ndarray, window: int) -> np.ndarray:
    """Centred moving average (same length; edges average what is available), via cumsum."""
    n = len(x)
    w = max(1, min(int(window), n))
    if w == 1 or n == 0:
        return x.astype(np.float64, copy=True)
    c = np.concatenate(([0.0], np.cumsum(x, dtype=np.float64)))
    half_lo = (w - 1) // 2
    half_hi = w - 1 - half_lo
    i = np.arange(n)
    lo = np.clip(i - half_lo, 0, n)
    hi = np.clip(i + half_hi + 1, 0, n)
    return (c[hi] - c[lo]) / (hi - lo)


def window_size(n: int, frac: float, lo: int, hi: int | None = None) -> int:
    """``frac`` of ``n`` points clamped to ``[lo, hi]`` and never more than ``n``."""
    w = int(round(n * frac))
    w = max(lo, w)
    if hi is not None:
        w = min(hi, w)
    return max(1, min(w, n)) if n else 0


def early_late(values: np.ndarray, frac: float = 0.1, lo: int = 3) -> tuple[float, float, int]:
    """Medians of the first and last windows (``frac`` of the points, at least ``lo``) and the
    window's size; NaNs and 0 for an empty series."""
    n = len(values)
    if n == 0:
        return float("nan"), float("nan"), 0
    w = window_size(n, frac, lo)
    return approx_median(values[:w]), approx_median(values[-w:]), w


def align(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Steps common to two sorted unique step arrays, with the indices into each.

    Metrics logged together share their steps; that case skips the sort of ``intersect1d``.
    """
    if len(a) == len(b) and np.array_equal(a, b):
        idx = np.arange(len(a))
        return a, idx, idx
    return np.intersect1d(a, b, assume_unique=True, return_indices=True)


def block_min(x: np.ndarray, block: int) -> tuple[int | None, float | None]:
    """The lowest block median of ``x`` and the index where that block starts (Nones if empty)."""
    if len(x) == 0:
        return None, None
    b = max(1, min(int(block), len(x)))
    _, med = block_stat(x, b)
    j = int(np.argmin(med))
    return j * b, float(med[j])
