"""``--format text``: the human report for a terminal (coloured) or a plain text file.

The default is short enough to read in ten seconds: with several runs a summary table first
(run, verdict, findings, top cause), then one block per run: the verdict and its reason, one
line per finding (severity, code, name, metric, onset, message), the top cause with its fixes,
and one closing line that counts what was left out (less likely causes, rules that could not
run, reader warnings).  ``-v`` (``RenderOptions.verbose``) gives the full detail: step spans and
peaks, the top three causes with their evidence, the rules that could not run by name, and
every reader warning.  On a terminal (``RenderOptions.width``) a long line is wrapped at a
space to the terminal's width, its continuation indented under it; to a pipe or a file each
line stays whole, for grep.

Colour is added (click.style) only when asked (a TTY, ``--color``); every string that
came from a log goes through :func:`escape.plain` first so a run name cannot move the cursor or
recolour the screen, and documentation text through :func:`escape.prose` (no RST markup).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import click

from .._version import __version__
from ..results import Finding, Report, RunReport
from . import RenderOptions
from .escape import fmt_num, plain, prose, step_span
from .summary import TOP_CAUSES, cost_line, ordered_findings, severity_counts, split_not_applicable, verdict_line, verdict_tally

VERDICT_STYLE: dict[str, dict[str, Any]] = {
    "healthy": {"fg": "green"},
    "unhealthy": {"fg": "red", "bold": True},
    "unknown": {"fg": "yellow"},
}
MAX_EVIDENCE = 3
# read problems: an info note (a sweep table skipped) is coloured as a note, not as a warning
READ_STYLE: dict[str, dict[str, Any]] = {"error": {"fg": "red"}, "warning": {"fg": "yellow"}, "info": {"fg": "cyan"}}
SEVERITY_STYLE: dict[str, dict[str, Any]] = {
    "error": {"fg": "red", "bold": True},
    "warning": {"fg": "yellow"},
    "info": {"fg": "cyan"},
}


def text(value: object) -> str:
    """Log- or catalog-derived text for the terminal: control characters out, no RST."""
    return prose(plain(value))


_SGR = re.compile(r"\x1b\[[0-9;]*m")
# a wrapped line's continuation: indented this much more than the line it continues
CONTINUATION_INDENT = 4


def visible_width(line: str) -> int:
    """The columns ``line`` takes on a terminal: its colour codes take none."""
    return len(_SGR.sub("", line))


def wrap(line: str, width: int | None) -> list[str]:
    """``line`` broken at spaces into lines of at most ``width`` columns (a word longer than
    that keeps a line of its own), each continuation indented under the first; the line itself
    when ``width`` is None or it fits."""
    if width is None or visible_width(line) <= width:
        return [line]
    indent = line[: len(line) - len(line.lstrip(" "))]
    follow = indent + " " * CONTINUATION_INDENT
    out: list[str] = []
    current = indent
    for word in line[len(indent) :].split(" "):  # "" for each extra space: alignment is kept
        if current.strip() and word and visible_width(current) + 1 + visible_width(word) > width:
            out.append(current.rstrip(" "))
            current = follow + word
        elif current.strip():
            current += " " + word
        else:
            current += word
    out.append(current)
    return out


class _Writer:
    """Collects lines, wrapped to ``width`` (None: not wrapped); ``style`` is a no-op unless
    colour is on."""

    def __init__(self, color: bool, width: int | None = None):
        self.color = color
        self.width = width
        self.lines: list[str] = []

    def style(self, value: str, **kw: Any) -> str:
        return click.style(value, **kw) if self.color else value

    def __call__(self, line: str = "") -> None:
        self.lines.extend(wrap(line, self.width))


def _severity(w: _Writer, f: Finding) -> str:
    return w.style(f"{f.severity.upper():<7}", **SEVERITY_STYLE[f.severity])


def _finding_short(w: _Writer, f: Finding, name_width: int) -> None:
    where = f"step {f.start_step}" if f.start_step is not None else "whole run"
    head = f"{plain(f.code)} {plain(f.name):<{name_width}}"
    w(f"  {_severity(w, f)} {w.style(head, bold=True)} {plain(f.metric)} from {where}: {text(f.message)}")


def _finding_full(w: _Writer, f: Finding) -> None:
    where = f"onset {f.start_step}" if f.start_step is not None else "whole run"
    extra = f"steps {step_span(f.start_step, f.end_step)}"
    if f.peak_step is not None:
        extra += f", peak at step {f.peak_step}"
    w(f"    {_severity(w, f)} {w.style(plain(f.code), bold=True)} {plain(f.name):<24} {plain(f.metric):<22} {where}  ({extra})")
    w(f"            {text(f.message)}")


def _header(w: _Writer, rr: RunReport) -> None:
    # the verdict and its one-sentence reason (summary.verdict_line, the same in every output)
    w(w.style(f"run {plain(rr.run.id)}", bold=True) + "  " + w.style(verdict_line(rr, findings_listed=True), **VERDICT_STYLE[rr.verdict]))
    if rr.known:  # the verdict stands on them: say why no finding is listed under it
        w(w.style(f"  {rr.known} known finding(s) from the baseline not listed", dim=True))


def _run_short(w: _Writer, rr: RunReport) -> None:
    _header(w, rr)
    findings = ordered_findings(rr)
    width = max((len(plain(f.name)) for f in findings), default=0)
    for f in findings:
        _finding_short(w, f, width)
    if rr.cost is not None:
        w(f"  {cost_line(rr.cost)}")
    if rr.causes:
        c = rr.causes[0]
        w(f"  likely cause: {w.style(text(c.title), bold=True)}  [{plain(c.id)}, confidence {fmt_num(c.confidence, 2)}]")
        for fix in c.fixes:
            w(f"    try: {text(fix)}")
    missing, by_design = split_not_applicable(rr)
    for why in by_design:  # "critic-free (...): the value-function rules do not apply", once
        w(f"  {text(why)}")
    left = []
    if len(rr.causes) > 1:
        left.append(f"{len(rr.causes) - 1} less likely cause(s)")
    if missing:
        left.append(f"{len(missing)} rule(s) not applicable (metrics not logged)")
    # reader notes (level info: a log written in two formats, SB2's step counters) are routine
    # and ask nothing of the user: -v lists them, the short report does not count them
    levels = Counter(i.level for i in rr.run.issues)
    if levels["error"] + levels["warning"]:
        left.append(f"{levels['error'] + levels['warning']} reader warning(s)")
    if left:
        w(w.style(f"  ({'; '.join(left)}: -v for detail)", dim=True))


def _run_full(w: _Writer, rr: RunReport) -> None:
    run = rr.run
    rng = run.frame.step_range()
    _header(w, rr)
    steps = "no steps" if rng is None else f"steps {rng[0]}-{rng[1]}"
    w(f"  {plain(run.path)}  ({plain(run.framework)}, {plain(run.format)}, {steps}, {len(run.frame)} points)")
    if rr.findings:
        w(f"  findings ({severity_counts(rr)})")
        for f in ordered_findings(rr):
            _finding_full(w, f)
    if rr.cost is not None:
        w(f"  {cost_line(rr.cost)}")
    if rr.causes:
        w("  likely causes")
        for i, c in enumerate(rr.causes[:TOP_CAUSES], 1):
            w(f"    {i}. {w.style(text(c.title), bold=True)}  [{plain(c.id)}, confidence {fmt_num(c.confidence, 2)}]")
            # config evidence first: it is what the run's own settings say, and short
            for ev in ([f"config: {e}" for e in c.config_evidence] + c.evidence)[:MAX_EVIDENCE]:
                w(f"       because {text(ev)}")
            for ev in c.config_against[:MAX_EVIDENCE]:
                w(f"       against: {text(ev)}")
            for fix in c.fixes:
                w(f"       try: {text(fix)}")
    missing, by_design = split_not_applicable(rr)
    for why in by_design:
        w(f"  {text(why)}")
    if missing:
        na = "; ".join(f"{plain(n.code)} ({plain(', '.join(n.missing))})" for n in missing)
        w(f"  not applicable, missing metrics: {na}")
    for issue in run.issues:  # each at its level: a routine reader note is not a warning
        w(w.style(f"  {issue.level}: {plain(str(issue))}", **READ_STYLE.get(issue.level, READ_STYLE["warning"])))


def _summary_table(w: _Writer, report: Report) -> None:
    rows = [
        (plain(rr.run.id), rr.verdict.upper(), severity_counts(rr) or "-", plain(rr.causes[0].id) if rr.causes else "-")
        for rr in report.runs
    ]
    header = ("run", "verdict", "findings", "top cause")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(3)]
    w("  " + "  ".join(h.ljust(widths[i]) if i < 3 else h for i, h in enumerate(header)))
    for rr, row in zip(report.runs, rows):
        cells = [row[0].ljust(widths[0]), w.style(row[1].ljust(widths[1]), **VERDICT_STYLE[rr.verdict]), row[2].ljust(widths[2]), row[3]]
        w("  " + "  ".join(cells))


def render(report: Report, options: RenderOptions) -> str:
    """The whole text report: short by default, the full detail with ``options.verbose``."""
    w = _Writer(options.color, options.width)
    tally = verdict_tally(report)
    w(f"ppo-doctor {__version__}: {len(report.runs)} run(s)" + (f" ({tally})" if tally else ""))
    if len(report.runs) > 1:
        w()
        _summary_table(w, report)
    for rr in report.runs:
        w()
        (_run_full if options.verbose else _run_short)(w, rr)
    if report.errors:
        w()
        w(w.style("read problems", bold=True))
        for e in report.errors:
            w(w.style(f"  {e.level}: {plain(str(e))}", **READ_STYLE.get(e.level, READ_STYLE["warning"])))
    return "\n".join(w.lines) + "\n"
