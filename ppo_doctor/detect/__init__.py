"""Generic signal detectors: no PPO knowledge, numpy only, vectorised, linear time.

Inputs are ``steps`` (int64, sorted, gaps may be uneven) and ``values`` (float64, NaN/Inf
allowed).  Every detector accepts series of any length, including 0, 1 or 2 points, and
returns an empty or neutral result when there is too little data to judge.

Modules: :mod:`.spans` (mask <-> spans), :mod:`.threshold`, :mod:`.sustained`,
:mod:`.spike`, :mod:`.trend`, :mod:`.flatline`,
:mod:`.oscillation`, :mod:`.peak_drop`, :mod:`.nonfinite`, :mod:`.onset`; robust statistics (``robust_sd``,
``noise_sd``, ``quantiles``, ``approx_median``, ``block_min``, ``smooth_level``) that subsample very long series,
the exact order statistics of :mod:`.order_stats` (``median``, ``percentile``, ``distinct``:
numpy's values without its first-call import of ``numpy.ma``),
the input helpers ``finite_xy`` (the finite points) and ``window_size`` (a share of a
series clamped to bounds), ``early_late`` (first and last window medians) and ``align`` (the
steps two series share).
"""

from __future__ import annotations

from .flatline import flat_mask, flat_spans
from .nonfinite import NonFinite, nonfinite
from .onset import Onset, onset
from .order_stats import distinct, median, percentile
from .oscillation import Oscillation, oscillation
from .peak_drop import PeakDrop, peak_drop
from .spans import Span, longest, mask_to_spans, spans_to_mask
from ._util import align, approx_median, block_min, early_late, finite_xy, level_se, moving_average, noise_sd, quantiles, quantum, robust_sd, smooth_level, sticky, switches, window_size, winsorized
from .resample import at_changes, even_in_steps
from .spike import default_window, robust_z, spike_scores, spikes
from .sustained import sustained_mask, sustained_spans
from .threshold import above, below, outside
from .trend import TrendSummary, first_last, held_at_max, summarize, theil_sen

__all__ = [
    "Span",
    "mask_to_spans",
    "spans_to_mask",
    "longest",
    "above",
    "below",
    "outside",
    "sustained_mask",
    "sustained_spans",
    "robust_z",
    "spike_scores",
    "spikes",
    "default_window",
    "align",
    "approx_median",
    "early_late",
    "block_min",
    "smooth_level",
    "moving_average",
    "finite_xy",
    "window_size",
    "winsorized",
    "quantiles",
    "median",
    "percentile",
    "distinct",
    "robust_sd",
    "noise_sd",
    "level_se",
    "quantum",
    "sticky",
    "switches",
    "even_in_steps",
    "at_changes",
    "theil_sen",
    "first_last",
    "held_at_max",
    "summarize",
    "TrendSummary",
    "flat_mask",
    "flat_spans",
    "Oscillation",
    "oscillation",
    "PeakDrop",
    "peak_drop",
    "NonFinite",
    "nonfinite",
    "Onset",
    "onset",
]
