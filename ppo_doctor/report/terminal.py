"""``--format text``: the human report for a terminal (coloured) or a plain text file.

Per run: a verdict line, the findings with their onset steps, the top three causes with
their evidence and fixes, the rules that could not run, and reader warnings.  Colour is
added with ``click.style`` only when asked (a TTY); every string that came from a log goes
through :func:`escape.plain` first so a run name cannot move the cursor or recolour the
screen.
"""

from __future__ import annotations

import click

from .. import __version__
from ..findings import Finding
from . import RenderOptions
from .escape import fmt_num, plain, step_span
from .model import Report, RunReport
from .summary import TOP_CAUSES, ordered_findings, severity_counts, split_not_applicable, verdict_line, verdict_tally

VERDICT_STYLE = {"healthy": {"fg": "green"}, "unhealthy": {"fg": "red", "bold": True}, "unknown": {"fg": "yellow"}}
MAX_EVIDENCE = 3
SEVERITY_STYLE = {"error": {"fg": "red", "bold": True}, "warning": {"fg": "yellow"}, "info": {"fg": "cyan"}}


class _Writer:
    """Collects lines; ``style`` is a no-op unless colour is on."""

    def __init__(self, color: bool):
        self.color = color
        self.lines: list[str] = []

    def style(self, text: str, **kw: object) -> str:
        return click.style(text, **kw) if self.color else text

    def __call__(self, line: str = "") -> None:
        self.lines.append(line)


def _finding(w: _Writer, f: Finding) -> None:
    sev = w.style(f"{f.severity.upper():<7}", **SEVERITY_STYLE[f.severity])
    where = f"onset {f.start_step}" if f.start_step is not None else "whole run"
    extra = f"steps {step_span(f.start_step, f.end_step)}"
    if f.peak_step is not None:
        extra += f", peak at step {f.peak_step}"
    w(f"    {sev} {w.style(plain(f.code), bold=True)} {plain(f.name):<24} {plain(f.metric):<22} {where}  ({extra})")
    w(f"            {plain(f.message)}")


def _run(w: _Writer, rr: RunReport) -> None:
    run = rr.run
    rng = run.frame.step_range()
    w(w.style(f"run {plain(run.id)}", bold=True) + "  " + w.style(verdict_line(rr), **VERDICT_STYLE[rr.verdict]))
    steps = "no steps" if rng is None else f"steps {rng[0]}-{rng[1]}"
    w(f"  {plain(run.path)}  ({plain(run.framework)}, {plain(run.format)}, {steps}, {len(run.frame)} points)")
    if rr.findings:
        w(f"  findings ({severity_counts(rr)})")
        for f in ordered_findings(rr):
            _finding(w, f)
    if rr.causes:
        w("  likely causes")
        for i, c in enumerate(rr.causes[:TOP_CAUSES], 1):
            w(f"    {i}. {w.style(plain(c.title), bold=True)}  [{plain(c.id)}, confidence {fmt_num(c.confidence, 2)}]")
            # config evidence first: it is what the run's own settings say, and short
            for ev in ([f"config: {e}" for e in c.config_evidence] + c.evidence)[:MAX_EVIDENCE]:
                w(f"       because {plain(ev)}")
            for ev in c.config_against[:MAX_EVIDENCE]:
                w(f"       against: {plain(ev)}")
            for fix in c.fixes:
                w(f"       try: {plain(fix)}")
    missing, by_design = split_not_applicable(rr)
    for why in by_design:
        w(f"  {plain(why)}")
    if missing:
        na = "; ".join(f"{plain(n.code)} ({plain(', '.join(n.missing))})" for n in missing)
        w(f"  not applicable, missing metrics: {na}")
    for warning in run.warnings:
        w(w.style(f"  warning: {plain(warning)}", fg="yellow"))


def render(report: Report, options: RenderOptions) -> str:
    """The whole text report."""
    w = _Writer(options.color)
    tally = verdict_tally(report)
    w(f"ppo-doctor {__version__}: {len(report.runs)} run(s)" + (f" ({tally})" if tally else ""))
    for rr in report.runs:
        w()
        _run(w, rr)
    if report.errors:
        w()
        w(w.style("read problems", bold=True))
        for e in report.errors:
            w(w.style(f"  {e.level}: {plain(str(e))}", fg="red" if e.level == "error" else "yellow"))
    return "\n".join(w.lines) + "\n"
