"""Trends: slope per step (Theil-Sen), the medians of the first and last windows, and a
summary of the change between them against the series' noise.

A series that holds one value on most of its points (``_util.sticky``: a sparse reward) is
summarised by window means (winsorized at 1-99 %) and the plain noise of its differences: its
medians would be that one value whatever its departures do.  Its slope stays Theil-Sen's: the
trend of the majority of its points (0 for a reward that holds its ceiling most of the run).

Theil-Sen (median of pairwise slopes) ignores outliers; it is O(m^2) in the number of
points, so long series are first thinned to ``max_points`` evenly spaced points (the slope
of a trend survives thinning; only its noise estimate gets coarser).  Steps may be uneven:
slopes are per *step*, never per point.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._util import departure_noise_sd, finite_xy, noise_sd, sticky, window_size, winsorized
from .order_stats import median


def _thin(x: np.ndarray, y: np.ndarray, max_points: int) -> tuple[np.ndarray, np.ndarray]:
    if len(x) <= max_points:
        return x, y
    idx = np.linspace(0, len(x) - 1, max_points).round().astype(np.int64)
    return x[idx], y[idx]


@lru_cache(maxsize=8)
def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The index pairs ``i < j`` of ``n`` points, read-only: a run's series share a few lengths,
    and building the pairs is a quarter of a fit of 200 points."""
    i, j = np.triu_indices(n, k=1)
    i.flags.writeable = j.flags.writeable = False
    return i, j


def theil_sen(steps: ArrayLike, values: ArrayLike, max_points: int = 300) -> tuple[float, float]:
    """Theil-Sen ``(slope per step, intercept)`` of the finite points (NaNs when < 2 points)."""
    s, v = finite_xy(steps, values)
    x, y = _thin(s.astype(np.float64), v, max_points)
    if len(y) < 2:
        return float("nan"), float("nan")
    i, j = _pairs(len(x))
    dx = x[j] - x[i]
    ok = dx != 0
    if not ok.any():
        return float("nan"), float("nan")
    slope = float(median((y[j] - y[i])[ok] / dx[ok]))
    intercept = float(median(y - slope * x))
    return slope, intercept


def first_last(values: ArrayLike, window: int) -> tuple[float, float]:
    """Medians of the first and the last ``window`` finite values (NaNs when empty)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if len(v) == 0:
        return float("nan"), float("nan")
    w = max(1, min(int(window), len(v)))
    return float(median(v[:w])), float(median(v[-w:]))


def held_at_max(values: ArrayLike, tol: float = 0.01) -> float | None:
    """The series' maximum when its median sits there (within ``tol`` of its range): most
    points are at the highest level the series ever reached; None for a flat series or one
    whose median lies lower."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if len(v) == 0:
        return None
    lo, hi = float(v.min()), float(v.max())
    return hi if hi > lo and float(median(v)) >= hi - tol * (hi - lo) else None


class TrendSummary(NamedTuple):
    """How a series moved over a run, with enough context to judge it against noise."""

    n: int
    slope: float  # Theil-Sen, per step
    first: float  # median of the first window (mean for a sticky series: ``_util.sticky``)
    last: float  # median of the last window (mean for a sticky series)
    change: float  # last - first
    noise: float  # point-to-point noise sd
    span_steps: int  # last step - first step
    window: int

    @property
    def rel_change(self) -> float:
        """Change relative to the first window's level."""
        return self.change / max(abs(self.first), 1e-12)

    @property
    def change_in_noise(self) -> float:
        """|change| in units of the noise of a window median (how sure the move is)."""
        se = self.noise * np.sqrt(2.0 / max(1, self.window))
        return abs(self.change) / max(se, 1e-12)

    @property
    def fitted_change(self) -> float:
        """Slope times the step span: the trend's size over the run."""
        return self.slope * self.span_steps


def summarize(steps: ArrayLike, values: ArrayLike, window_frac: float = 0.1, min_window: int = 3, max_window: int | None = None) -> TrendSummary:
    """Trend summary of the finite points; ``n == 0`` when there is nothing to summarise."""
    s, v = finite_xy(steps, values)
    n = len(v)
    if n == 0:
        return TrendSummary(0, float("nan"), float("nan"), float("nan"), float("nan"), float("nan"), 0, 0)
    w = window_size(n, window_frac, min_window, max_window)
    if sticky(v):
        # medians of a series that mostly holds one value are that value (or jump between its
        # few levels): the windows' means carry how often and how far it departed
        clipped = winsorized(v)
        a, b = float(np.mean(clipped[:w])), float(np.mean(clipped[-w:]))
        noise = departure_noise_sd(v)
    else:
        a, b = first_last(v, w)
        noise = noise_sd(v)
    slope, _ = theil_sen(s, v)
    return TrendSummary(n, slope, a, b, b - a, noise, int(s[-1] - s[0]), w)
