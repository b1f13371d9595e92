"""What every sweep format shows of a sweep: the run table's cells and the splits worth a line
(the renderers of :mod:`.render` and :mod:`.html` both read them)."""

from __future__ import annotations

from typing import Any

from .attribution import ALPHA, Split
from .report import SweepReport, SweepRow

MAX_SPLITS = 10  # splits shown by text/markdown/html (JSON has all)


def shown_splits(report: SweepReport) -> list[Split]:
    """The splits worth a line: those that separate at all, best first."""
    att = report.attribution
    return [] if att is None else [s for s in att.splits if s.separation > 0][:MAX_SPLITS]


def split_note(s: Split) -> str:
    """``p = 0.0022, 12 runs; same values as beta`` for a split line."""
    notes = [f"p = {s.p_value:.2g} (Fisher exact), {s.support} runs"]
    if s.adjusted_p > ALPHA:
        notes.append(f"could be chance among {s.tests} splits tried")
    if s.same:
        notes.append("same values as " + ", ".join(s.same))
    if s.together:
        notes.append("varies together with " + ", ".join(s.together))
    return "; ".join(notes)


def tally(report: SweepReport) -> str:
    counts = report.counts()
    parts = [f"{counts.get(v, 0)} {v}" for v in ("unhealthy", "healthy", "unknown", "error") if counts.get(v, 0) or v != "error"]
    return f"{len(report.rows)} runs: " + ", ".join(parts)


def cell(v: Any) -> str:
    return "" if v is None else str(v)


def row_cells(r: SweepRow) -> list[str]:
    cause = (r.top_cause or {}).get("id", "")
    return [r.run, r.verdict, ", ".join(r.symptoms), cell(r.onset), cell(r.steps_wasted), cause]


HEADER = ["run", "verdict", "symptoms", "onset", "wasted", "top cause"]
