"""Peak then drop: a series rises to a level, then falls far below that level and stays there.

The level is the robust local level (:func:`._util.smooth_level`, block medians), so one high
point is not a peak and one low point is not a fall.  The result says how much of the gain
from the first window's level to the peak was lost by the last window, where the fall crossed
halfway, and whether the level came back above that point after it (a series that ends below
it after a dip it came back from is judged on its last fall, when that fall goes deeper than
the dip).  The halfway mark lies
between the peak and the lower of the first and the last window's level: a series that ends
below where it started (or that started at its peak, so that it has no gain to halve) is
judged by the middle of its fall, not by the middle of a gain it never had.

A series that holds one value on most points (``_util.sticky``) is levelled by block means (of
its winsorized values, so one wild point is still no peak) and
its noise is the plain noise of its differences: its medians would be that value throughout.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._util import block_stat, departure_noise_sd, finite_xy, noise_sd, smooth_level, sticky, window_size, winsorized
from .order_stats import median


class PeakDrop(NamedTuple):
    """How a series moved around its highest level."""

    first: float  # first window's median
    peak: float  # highest local level
    peak_idx: int  # index (into the finite points) of the highest local level
    late: float  # last window's median
    window: int  # points per window
    noise_se: float  # standard error of a window median (point-to-point noise)
    fall_idx: int | None  # where the level went below the halfway mark after the peak (the last time, when it ends there)
    mark: float  # the halfway mark: between the peak and min(first, late)
    recovered: bool  # the level came back above the halfway mark after falling below it, and did not then fall deeper

    @property
    def gain(self) -> float:
        return self.peak - self.first

    @property
    def fall(self) -> float:
        """How far the last window sits below the peak."""
        return self.peak - self.late

    @property
    def lost_share(self) -> float:
        """Share of the gain lost by the end (1 = back where it started; > 1 = below it)."""
        return (self.peak - self.late) / self.gain if self.gain > 0 else 0.0


def peak_drop(steps: ArrayLike, values: ArrayLike, window_frac: float = 0.1, min_window: int = 3) -> PeakDrop | None:
    """Where the series peaked and how far it fell after; None with fewer than 3 windows of points."""
    _, v = finite_xy(steps, values)
    n = len(v)
    w = window_size(n, window_frac, min_window)
    if n < 3 * max(w, 1) or w == 0:
        return None
    if sticky(v):
        # block medians of a series that mostly holds one value are that value: its level is
        # how often and how far it departs, the block means
        clipped = winsorized(v)
        centres, means = block_stat(clipped, w, "mean")
        level = np.interp(np.arange(n, dtype=np.float64), centres, means) if len(means) > 1 else np.full(n, means[0])
        first, late = float(np.mean(clipped[:w])), float(np.mean(clipped[-w:]))
        noise = departure_noise_sd(v)
    else:
        level = smooth_level(v, w)
        first, late = float(median(v[:w])), float(median(v[-w:]))
        noise = noise_sd(v)
    peak_idx = int(np.argmax(level))
    peak = float(level[peak_idx])
    se = noise * float(np.sqrt(2.0 / w))
    half = peak - 0.5 * (peak - min(first, late))
    below = level[peak_idx:] < half
    if not below.any():
        return PeakDrop(first, peak, peak_idx, late, w, se, None, half, False)
    first_fall = int(peak_idx + np.argmax(below))
    if below[-1]:
        # it ends below the mark: the fall is the last one, from where the level last stood above
        # it, when it went deeper than any dip the series came back from before it (a fall to a
        # depth it has come back from shows how far it wanders, not that it is lost)
        last_fall = int(peak_idx + np.flatnonzero(~below)[-1] + 1)
        earlier = level[first_fall:last_fall][level[first_fall:last_fall] < half]
        if not len(earlier) or level[last_fall:].min() < earlier.min():
            return PeakDrop(first, peak, peak_idx, late, w, se, last_fall, half, False)
    return PeakDrop(first, peak, peak_idx, late, w, se, first_fall, half, True)
