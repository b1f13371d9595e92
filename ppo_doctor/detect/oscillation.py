"""Oscillation: a series that swings back and forth without converging.

Steps (all linear in the series length):

1. smooth with a short centred moving average (``smooth`` points) to suppress point noise;
2. detrend: remove a Theil-Sen line, then a wide moving average (a third of the run), so a
   rise-then-plateau curve is trend, not swing;
3. compare the residual's spread with what smoothed white noise would give
   (``noise / sqrt(smooth)``, noise from first differences): ``structure`` >> 1 means slow,
   structured movement rather than noise;
4. count alternations of the residual between ``+h`` and ``-h`` (hysteresis ``h`` = a share
   of the residual's spread, so noise riding on a swing does not count twice);
5. compare the swing amplitude in the first and last thirds: ``decay`` < 1 means the swings
   die out (converging), ~1 or more means they do not.

The guide's "performance fluctuation: reward or KL swing back and forth without converging"
(docs/sources.md#guides) is ``swings`` high, ``structure`` high and ``decay`` not small;
AUTOTRAINER uses the same ingredients (gaps between adjacent local extrema over a share of
epochs; docs/sources.md#peer-tools).  The thresholds are the caller's.

A series that holds one value on most of its points (``_util.sticky``: a sparse reward stuck at
its floor, a success rate at 0 or 1) is not measured: it departs from that value and comes back,
in bursts, and a swing needs a level to swing around on both sides; smoothing its bursts would
make a wave of them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._util import finite_xy, moving_average, noise_sd, quantiles, robust_sd, sticky
from .trend import theil_sen

MIN_POINTS = 12
# Longer series are first averaged in blocks down to this many points: the swings of interest
# span at least a 1/100 of the run (the default smoothing), so nothing they show is lost, and
# the scan stays fast on a million points.
MAX_POINTS = 5_000


class Oscillation(NamedTuple):
    """How a series swings (see the module docstring); the caller decides what is too much."""

    n: int
    swings: int  # alternations between +h and -h of the smoothed, detrended series
    structure: float  # residual spread / spread expected from smoothed noise
    amplitude: float  # half the 10-90 % range of the residual (whole run)
    amplitude_first: float  # same, first third
    amplitude_last: float  # same, last third
    period_steps: float  # mean steps per full cycle (NaN without two swings)
    level_range: float  # 5-95 % range of the raw series
    start_step: int | None  # first alternation
    end_step: int | None  # last alternation

    @property
    def decay(self) -> float:
        """Last-third amplitude / first-third amplitude (< 1: the swings are dying out)."""
        if not self.amplitude_first > 0:
            return float("nan")
        return self.amplitude_last / self.amplitude_first

    @property
    def rel_amplitude(self) -> float:
        """Swing amplitude as a share of the series' overall range."""
        return self.amplitude / self.level_range if self.level_range > 0 else float("nan")


def _half_range(x: np.ndarray, lo: float = 10, hi: float = 90) -> float:
    if len(x) == 0:
        return float("nan")
    a, b = quantiles(x, [lo, hi])
    return float(b - a) / 2.0


def _block_means(s: np.ndarray, x: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    nb = len(x) // block
    cut = nb * block
    return s[:cut].reshape(nb, block).mean(axis=1), x[:cut].reshape(nb, block).mean(axis=1)


def _empty(n: int) -> Oscillation:
    nan = float("nan")
    return Oscillation(n, 0, nan, nan, nan, nan, nan, nan, None, None)


def oscillation(steps: ArrayLike, values: ArrayLike, smooth: int | None = None, hysteresis: float = 0.5) -> Oscillation:
    """Measure how much a series oscillates (see the module docstring)."""
    s, x = finite_xy(steps, values)
    n = len(x)
    if n < MIN_POINTS or sticky(x):
        return _empty(n)
    noise = noise_sd(x)
    lo_q, hi_q = quantiles(x, [5, 95])
    block = -(-n // MAX_POINTS)
    sm_w = max(3, n // 100) if smooth is None else max(1, int(smooth))
    if block > 1:
        # averaging blocks of ``block`` points is part of the smoothing: the window shrinks by
        # the same factor and a smoothed point still averages ``sm_w * block`` raw points
        report_steps = s[: (n // block) * block : block]
        s, x = _block_means(s.astype(np.float64), x, block)
        sm_w = max(1, round(sm_w / block))
        n_eff_smooth = sm_w * block
    else:
        report_steps = s
        s = s.astype(np.float64)
        n_eff_smooth = sm_w
    m = len(x)
    slope, icept = theil_sen(s, x)
    if not np.isfinite(slope):
        return _empty(n)
    r0 = x - (slope * s + icept)
    wide = max(4 * sm_w, m // 3)
    r = moving_average(r0, sm_w) - moving_average(r0, wide)
    spread = robust_sd(r)
    expected = noise / np.sqrt(n_eff_smooth)
    structure = spread / expected if expected > 0 else (float("inf") if spread > 0 else 0.0)
    h = hysteresis * spread
    state = np.where(r > h, 1, np.where(r < -h, -1, 0))
    nz = np.flatnonzero(state)
    if len(nz) >= 2 and h > 0:
        st = state[nz]
        changes = nz[1:][st[1:] != st[:-1]]
    else:
        changes = np.empty(0, dtype=np.int64)
    swings = int(len(changes))
    third = max(1, m // 3)
    period = float("nan")
    if swings >= 2:
        period = 2.0 * float(report_steps[changes[-1]] - report_steps[changes[0]]) / (swings - 1)
    return Oscillation(
        n=n,
        swings=swings,
        structure=float(structure),
        amplitude=_half_range(r),
        amplitude_first=_half_range(r[:third]),
        amplitude_last=_half_range(r[-third:]),
        period_steps=period,
        level_range=float(hi_q - lo_q),
        start_step=int(report_steps[changes[0]]) if swings else None,
        end_step=int(report_steps[changes[-1]]) if swings else None,
    )
