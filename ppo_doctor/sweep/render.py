"""Sweep report renderers: ``text`` (terminal), ``markdown``, ``json``, ``csv`` (``html`` is
:mod:`.html`, which draws plots).  Every string from a log (run ids, paths, config values) passes
through :mod:`ppo_doctor.report.escape` before it reaches a terminal or a Markdown table.
"""

from __future__ import annotations

import csv
import io
from typing import Callable

from ..report.escape import md, plain
from ..report.json_out import dumps
from .cells import HEADER, cell, cost_summary, params_note, row_cells, shown_splits, split_note, tally
from .html import render_html
from .report import SweepReport

FORMATS = ("text", "markdown", "html", "json", "csv")


def render_text(report: SweepReport) -> str:
    out = [f"Sweep: {tally(report)}", ""]
    rows = [[plain(c) for c in row_cells(r)] for r in report.rows]
    widths = [max([len(h)] + [len(row[k]) for row in rows]) for k, h in enumerate(HEADER)]
    numeric = {3, 4}

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(widths[k]) if k in numeric else c.ljust(widths[k]) for k, c in enumerate(cells)).rstrip()

    out.append(line(HEADER))
    out.extend(line(row) for row in rows)
    if cost_summary(report):
        out += ["", plain(cost_summary(report))]
    out += ["", "What separates them (best split per parameter):"]
    splits = shown_splits(report)
    if not splits:
        out.append("  nothing: no parameter splits the runs by verdict or symptom")
    for k, s in enumerate(splits, 1):
        out.append(f"  {k}. {plain(s.label())}")
        out.append(f"     {plain(split_note(s))}")
    out += _text_list("Parameters", [params_note(report)] if params_note(report) else [])
    out += _text_list("Cautions", (report.attribution.cautions if report.attribution else []))
    out += _text_list("Sweep tables joined", report.tables)
    out += _text_list("Read problems and notes", [f"{e.level}: {e}" for e in report.errors])
    return "\n".join(out) + "\n"


def _text_list(title: str, items: list[str]) -> list[str]:
    if not items:
        return []
    return ["", f"{title}:"] + [f"  - {plain(i)}" for i in items]


def render_markdown(report: SweepReport) -> str:
    out = ["# Sweep report", "", f"**{md(tally(report))}**", ""]
    out.append("| " + " | ".join(HEADER) + " |")
    out.append("|" + "|".join(["---", "---", "---", "---:", "---:", "---"]) + "|")
    out += ["| " + " | ".join(md(c) for c in row_cells(r)) + " |" for r in report.rows]
    if cost_summary(report):
        out += ["", md(cost_summary(report))]
    out += ["", "## What separates them", ""]
    splits = shown_splits(report)
    if not splits:
        out.append("Nothing: no parameter splits the runs by verdict or symptom.")
    out += [f"{k}. **{md(s.label())}** ({md(split_note(s))})" for k, s in enumerate(splits, 1)]
    cautions = report.attribution.cautions if report.attribution else []
    problems = [f"{e.level}: {e}" for e in report.errors]
    params = [params_note(report)] if params_note(report) else []
    for title, items in (("Parameters", params), ("Cautions", cautions), ("Sweep tables joined", report.tables), ("Read problems and notes", problems)):
        if items:
            out += ["", f"## {title}", ""] + [f"- {md(i)}" for i in items]
    return "\n".join(out) + "\n"


def render_json(report: SweepReport) -> str:
    return dumps(report.to_dict()) + "\n"


def render_csv(report: SweepReport) -> str:
    """One line per run; parameters as columns (``param.<name>``)."""
    names = sorted({k for r in report.rows for k in r.params})
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["run", "path", "verdict", "symptoms", "onset", "last_step", "steps_wasted", "top_cause", "verdict_reason"] + [f"param.{n}" for n in names])
    for r in report.rows:
        cells = [r.run, r.path, r.verdict, ";".join(r.symptoms), r.onset, r.last_step, r.steps_wasted, (r.top_cause or {}).get("id"), r.verdict_reason]
        cells += [r.params.get(n) for n in names]
        w.writerow([_csv_safe(cell(c)) for c in cells])
    return buf.getvalue()


def _csv_safe(text: str) -> str:
    # a cell starting with = + - @ runs as a formula in spreadsheets (OWASP "CSV injection");
    # numbers keep their sign
    if text[:1] in ("=", "+", "-", "@") and not _is_number(text):
        return "'" + text
    return plain(text)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def render(report: SweepReport, fmt: str) -> str:
    """The sweep report in ``fmt`` (one of :data:`FORMATS`)."""
    if fmt == "html":
        return render_html(report)
    renderers: dict[str, Callable[[SweepReport], str]] = {
        "text": render_text,
        "markdown": render_markdown,
        "json": render_json,
        "csv": render_csv,
    }
    try:
        return renderers[fmt](report)
    except KeyError:
        raise ValueError(f"unknown sweep format {fmt!r}; choose from {', '.join(FORMATS)}") from None
