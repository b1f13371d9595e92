"""``--format github``: GitHub Actions workflow commands that annotate the job summary.

One ``::error``/``::warning``/``::notice`` line per finding and per read error, with
``file=`` the log that holds the metric and ``line=`` where a line is known (the onset step's
line of a JSONL, CSV or ``trainer_state.json`` log as its reader recorded it, as in the SARIF
output).  The
escaping follows actions/toolkit ``packages/core/src/command.ts``: in the message,
``%``, ``\\r`` and ``\\n`` become ``%25``, ``%0D``, ``%0A``; in a property value, ``:`` and
``,`` are escaped too (``%3A``, ``%2C``).  Without it a tag name holding a newline could
start a workflow command of its own (``::add-mask::``, ``::stop-commands::`` ...).
"""

from __future__ import annotations

from pathlib import Path

from ..results import Report
from . import RenderOptions
from .escape import plain, step_span
from .sarif import finding_locations
from .workspace import in_workspace

COMMAND = {"error": "error", "warning": "warning", "info": "notice"}
# a read problem's title says what its level says: a skipped sweep table is a note, not an unreadable log
READ_TITLE = {"error": "ppo-doctor: unreadable log", "warning": "ppo-doctor: read warning", "info": "ppo-doctor: note"}


def escape_data(text: str) -> str:
    """Escape a workflow-command message (toolkit ``escapeData``)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow-command property value (toolkit ``escapeProperty``)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _rel(path: str) -> str:
    """Annotations are matched to repository files by a path relative to the workspace."""
    return in_workspace(path, Path.cwd().resolve()) or Path(path).as_posix()


def command(kind: str, message: str, *, file: str | None = None, line: int | None = None, title: str | None = None) -> str:
    """One workflow command line; ``message`` and properties are escaped here."""
    props = []
    if file:
        props.append(f"file={escape_property(plain(file))}")
    if file and line is not None:
        props.append(f"line={int(line)}")
    if title:
        props.append(f"title={escape_property(plain(title))}")
    head = f"::{kind}" + (" " + ",".join(props) if props else "")
    # newlines survive as %0A so multi-line messages render as such in the annotation
    return f"{head}::{escape_data(plain(message, keep_newlines=True))}"


def render(report: Report, options: RenderOptions) -> str:
    """The annotation lines, one per finding and per read problem."""
    lines = []
    for rr in report.runs:
        for f, (path, line) in zip(rr.findings, finding_locations(rr)):
            title = f"{f.code} {f.name} ({rr.run.id})"
            msg = f"{f.message}\n{f.metric}, steps {step_span(f.start_step, f.end_step)}; verdict: {rr.verdict}"
            lines.append(command(COMMAND[f.severity], msg, file=_rel(path), line=line, title=title))
    for e in report.errors:
        kind = COMMAND.get(e.level, "warning")
        lines.append(command(kind, str(e), file=_rel(e.path), title=READ_TITLE.get(e.level, READ_TITLE["warning"])))
    return "".join(line + "\n" for line in lines)
