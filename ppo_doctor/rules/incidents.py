"""Incident findings: how long a condition must hold, and the onset, threshold, peak and end steps.

One noisy point is never an incident: a condition must hold for :func:`sustain_window`'s share
of a window (PTT's windowed conditions; rlwatch's consecutive-step counters), and a finding names
where the series departed from its baseline as well as where it crossed the threshold.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

from ..detect import Span, onset
from ..results import Finding
from .base import Rule, RuleContext

def sustain_window(n: int, lo: int = 3, hi: int = 20, share: float = 0.6) -> tuple[int, int]:
    """(k, window) for "k of window consecutive points": 5 % of the run, 3..20 points, 60 % of it.

    The share follows PTT's windowed conditions and rlwatch's consecutive-step counters
    (docs/sources.md#detectors): one noisy point is never an incident.
    """
    w = max(lo, min(hi, n // 20))
    return max(1, math.ceil(share * w)), w


def incident(
    rule: Rule,
    ctx: RuleContext,
    *,
    metric: str,
    steps: np.ndarray,
    values: np.ndarray,
    span: Span,
    direction: str,
    observed: dict[str, float],
    end_step: int | None = None,
    peak_step: int | None = None,
    log_scale: bool = False,
    **kw: Any,
) -> Finding:
    """A finding for an incident that starts at ``span`` (indices into ``steps``/``values``).

    ``start_step`` and ``threshold_step`` are the span's first step: the headline step of a
    finding is where its condition first holds (docs/architecture.md#contracts), so that the
    failure cost counts from there.  Where the series departed from its baseline before that
    (estimated on the prefix) is context: messages name it through ``{since}``.  ``peak_step``
    and ``end_step`` default to the span's.  ``log_scale``: estimate the departure on log10 of a
    positive series (norms and losses blow up multiplicatively, and on a linear scale a
    geometric run-up looks flat until its last few points).
    """
    series = values
    if log_scale:
        with np.errstate(divide="ignore", invalid="ignore"):
            series = np.log10(np.where(values > 0, values, np.nan))
    on = onset(steps, series, span.start_idx, direction)
    threshold_step = span.start_step
    drift = min(on.step, threshold_step)
    since = f"from step {threshold_step}" if drift == threshold_step else f"from step {threshold_step} (drifting from its baseline since step {drift})"
    kw["fmt"] = {"since": since, **kw.get("fmt", {})}
    return rule.finding(
        ctx,
        metric=metric,
        observed=observed,
        start_step=int(threshold_step),
        threshold_step=int(threshold_step),
        peak_step=int(span.peak_step if peak_step is None else peak_step),
        end_step=int(span.end_step if end_step is None else end_step),
        **kw,
    )


def describe(values: Iterable[Any], limit: int = 5) -> str:
    """A short comma-separated list, with '...' after ``limit`` items."""
    items = [str(v) for v in values]
    return ", ".join(items[:limit]) + (", ..." if len(items) > limit else "")
