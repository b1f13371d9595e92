"""What every sweep format shows of a sweep: the run table's cells and the splits worth a line
(the renderers of :mod:`.render` and :mod:`.html` both read them)."""

from __future__ import annotations

from typing import Any

from ..report.summary import hours_text
from .attribution import ALPHA, Split
from .report import FOLDER_NAME, SweepReport, SweepRow

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


def cost_summary(report: SweepReport) -> str:
    """``41 % of this sweep's steps came after its runs had failed: 130 device-hours``
    (:meth:`SweepReport.cost`; "" when no run failed): hours alone when no config names its
    devices, and how many failed runs a sum covers when not all of them."""
    c = report.cost()
    if c is None:
        return ""
    out = f"{c['share']:.0%} of this sweep's steps came after its runs had failed ({c['steps_after']} of {c['steps']} steps, {c['runs']} run(s))"
    if c["device_hours"] is not None:
        out += f": {c['device_hours']:.3g} device-hours"
        covered = c["runs_with_device_hours"]
    elif c["hours_after"] is not None:
        out += f": {hours_text(c['hours_after'])} of wall time, devices not logged"
        covered = c["runs_with_hours"]
    else:
        return out
    return out + ("" if covered == c["runs"] else f" (from the {covered} failed runs that log it)")


def params_note(report: SweepReport) -> str:
    """Which parameters were read from folder names, and whether seeds were set apart ("" when none)."""
    rows = [r for r in report.rows if r.params_from == FOLDER_NAME]
    if not rows:
        return ""
    names = sorted({k for r in rows for k in r.params})
    out = f"read from the run folders' names ({len(rows)} run(s), no config or sweep table gives them): " + (", ".join(names) or "no parameter")
    seeds = sorted({str(r.seed) for r in rows if r.seed is not None})
    if seeds:
        out += f"; seed {', '.join(seeds)} kept as each run's seed, not a parameter"
    return out


def cell(v: Any) -> str:
    return "" if v is None else str(v)


def row_cells(r: SweepRow) -> list[str]:
    cause = (r.top_cause or {}).get("id", "")
    return [r.run, r.verdict, ", ".join(r.symptoms), cell(r.onset), cell(r.steps_wasted), cause]


HEADER = ["run", "verdict", "symptoms", "onset", "wasted", "top cause"]
