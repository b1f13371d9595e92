"""Stable-Baselines3 console output: the tables ``verbose=1`` prints after every rollout.

Users often keep only what a training printed (``python train.py | tee train.log``).  SB3's
``HumanOutputFormat`` (``stable_baselines3/common/logger.py``) writes each ``logger.dump`` to
stdout as a table (docs/sources.md#sb3-console-tables)::

    -----------------------------------------
    | rollout/                |             |
    |    ep_rew_mean          | 25.7        |
    | time/                   |             |
    |    total_timesteps      | 1024        |
    | train/                  |             |
    |    approx_kl            | 0.009454641 |
    -----------------------------------------

A line of dashes, one row a key (sorted; a key ``group/name`` is printed as a group row
``group/`` and an indented ``name``), and the same line of dashes: every line of a table has
the dashes' width, which is how a table is told from other prints and a broken one from a
whole one.  OpenAI baselines and stable-baselines (SB2) print the same tables with ungrouped
keys.  What is read:

* every whole table, as one row of ``group/name`` keys: the names SB3's ``progress.csv`` and
  TensorBoard use, so the SB3 mapping applies; ``eval/*`` keys (``EvalCallback``) are
  evaluation series;
* values: numbers as printed (floats with 3 significant digits, ``%-8.3g``; ints and numpy
  scalars as ``str`` prints them), ``nan`` and ``inf``; other text is ignored with a note.  A
  key or value longer than the logger's ``max_length`` (36) is printed cut, ending in ``...``:
  such a key is kept as printed, with a warning;
* the step is ``time/total_timesteps`` (environment steps, the x-axis of every SB3 output), or
  for other loggers the step column the CSV reader would take from their ``progress.csv``
  (:data:`~ppo_doctor.ingest.readers.csv_logs.STEP_COLUMNS`: ``total_timesteps``, ``nupdates``,
  ``num episodes`` ...), else the table's place among them, with a warning.  The same logger
  often writes ``progress.csv`` beside the captured output (SB3's and baselines' ``log.txt`` is
  these tables too), so both give the run the same axis;
* a table cut short, or broken by another print, is not read and is reported.

Lines are read after a progress bar's last carriage return and without ANSI escape sequences,
and bounded as in every console reader (:mod:`ppo_doctor.ingest.console`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ...errors import LogReadError
from ...frame import RawRun, ReadIssue
from .. import console
from ..tabular import Columns, build_raw_run, choose_steps, collect_columns, column_notes
from .csv_logs import STEP_COLUMNS

NAME = "sb3_console"

# How SB3 indents the keys of a group under its ``group/`` row.
INDENT = "   "
# What the logger ends a key or value longer than its ``max_length`` with.
CUT_MARK = "..."
STEP_NOTE = "no step key (time/total_timesteps, total_timesteps, nupdates ...) in the tables: steps are their order (1, 2, ...)"
_DASHES = re.compile(r"-+")
_DASHES_BYTES = re.compile(rb"-{4,}\r?$", re.M)


def sniff(path: Path, head: bytes) -> bool:
    """A whole table in the head, or in the first 16 MiB of a file named like a console log."""
    return console.scan(path, head, _has_table)


def _has_table(chunk: bytes) -> bool:
    if b"|" not in chunk or _DASHES_BYTES.search(chunk) is None:
        return False
    return any(t.kind == "whole" for t in _tables(console.lines_of(chunk)))


@dataclass
class _Table:
    """A table found in the log: ``whole``; ``cut`` (the file ends inside it); ``broken`` (another
    line inside it, or table rows outside any table)."""

    kind: str
    line: console.Line  # its first line
    rows: list[tuple[str, str]] = field(default_factory=list)  # (key, value) as printed


def _shown(line: console.Line) -> str:
    """What the terminal shows last on ``line`` (a progress bar's states come before it)."""
    if b"|" not in line.data and b"-" not in line.data:
        return ""
    return console.pieces(line.data)[-1]


def _cells(text: str) -> tuple[str, str] | None:
    """(key, value) of a table row ``| key | value |``; None for any other line."""
    if len(text) < 7 or not text.startswith("| ") or not text.endswith(" |"):
        return None
    key, sep, value = text[2:-2].partition(" | ")
    return (key.rstrip(), value.strip()) if sep else None


def _tables(lines: list[console.Line]) -> Iterator[_Table]:
    """Every table of ``lines``, in order: a line of dashes, rows as wide, the same line of dashes."""
    shown = [_shown(line) for line in lines]
    i, n = 0, len(lines)
    while i < n:
        if not _DASHES.fullmatch(shown[i]):
            j = i
            while j < n and _cells(shown[j]) is not None:
                j += 1
            if j > i:  # rows without their first line of dashes
                yield _Table("broken", lines[i])
            i = max(j, i + 1)
            continue
        table = _Table("whole", lines[i])
        j = i + 1
        while j < n and len(shown[j]) == len(shown[i]) and (cells := _cells(shown[j])) is not None:
            table.rows.append(cells)
            j += 1
        if table.rows and j < n and _closes(shown[j], shown[i]):
            yield table
            i = j + 1
            continue
        if j >= n - 1:  # up to the file's last line, which a cut leaves partial or empty
            table.kind = "cut"
            yield table
        elif table.rows:
            table.kind = "broken"
            yield table
        i = max(j, i + 1)


def _closes(line: str, opening: str) -> bool:
    """``line`` closes the table that ``opening`` began: the same line of dashes, or that line with
    something glued after it (the next table's first line or another print that lost its newline,
    or a damaged newline); what follows is then read as other output."""
    return line.startswith(opening)


def read(path: Path) -> list[RawRun]:
    src = str(path)
    lines, _, issues = console.read_lines(path)
    rows: list[dict[str, Any]] = []
    numbers: list[int] = []
    cut_keys: set[str] = set()
    broken: list[int] = []
    for table in _tables(lines):
        if table.kind == "whole":
            rows.append(_row(table.rows, cut_keys))
            numbers.append(table.line.number)
        elif table.kind == "cut":
            issues.append(_cut_note(src, table))
        else:
            broken.append(table.line.offset)
    if broken:
        issues.append(ReadIssue(src, f"{len(broken)} part(s) of tables broken by other output or damage were not read", offset=broken[0]))
    if not rows:
        damage = next((i for i in issues if i.offset is not None and i.level == "error"), None)
        if damage is not None:
            raise LogReadError(src, damage.message, offset=damage.offset)
        raise LogReadError(src, "no Stable-Baselines3 log table found")
    if cut_keys:
        keys = ", ".join(sorted(cut_keys)[:5]) + (" ..." if len(cut_keys) > 5 else "")
        issues.append(ReadIssue(src, f"key(s) cut by the logger's max_length kept as printed: {keys}", level="warning"))
    return [_run(src, rows, numbers, issues)]


def _cut_note(src: str, table: _Table) -> ReadIssue:
    if table.rows:
        msg = f"partial table at line {table.line.number}: the file ends inside it, not read (file cut short or still being written?)"
        return ReadIssue(src, msg, offset=table.line.offset)
    msg = f"the log ends with a line of dashes (line {table.line.number}): a table cut short?"
    return ReadIssue(src, msg, offset=table.line.offset, level="warning")


def _row(cells: list[tuple[str, str]], cut_keys: set[str]) -> dict[str, Any]:
    """One table as a row of ``group/name`` keys and their values."""
    row: dict[str, Any] = {}
    group = ""
    for key, value in cells:
        if not value and not key.startswith(" ") and key.endswith("/"):
            group = key
            continue
        name = group + key[len(INDENT) :] if group and key.startswith(INDENT) else key.strip()
        if name.endswith(CUT_MARK):
            cut_keys.add(name)
        number = console.printed_number(value)
        row[name] = value if number is None else number
    return row


def _step_keys(cols: Columns) -> list[str]:
    """The keys that may be the step, in the order the CSV reader tries them: the same logger
    writes these tables and ``progress.csv``, and both give one run the same axis."""
    names: dict[str, str] = {}
    for key in sorted(cols.keys(), key=lambda k: _logged(cols, k)):
        names[key.lower()] = key  # of two spellings (a damaged letter), the one most tables hold wins
    return [names[c] for c in STEP_COLUMNS if c in names]


def _logged(cols: Columns, key: str) -> int:
    """How many tables hold a number for ``key``."""
    col = cols.column(key)
    return 0 if col is None else len(col[0])


def _run(src: str, rows: list[dict[str, Any]], numbers: list[int], issues: list[ReadIssue]) -> RawRun:
    cols = collect_columns(rows, lines=numbers)
    info = choose_steps(cols, _step_keys(cols))
    steps = info.steps if info.key is not None else np.arange(1, len(rows) + 1, dtype=np.int64)
    if info.key is None:
        issues.append(ReadIssue(src, STEP_NOTE, level="warning"))
    elif info.missing:
        issues.append(ReadIssue(src, f"{info.missing} table(s) without a usable '{info.key}' given the step of the table before", level="warning"))
    run = build_raw_run(cols, steps, src, exclude=[info.key] if info.key else [])
    issues.extend(column_notes(cols, src, numeric_nulls_note="a table prints no null"))
    back = np.flatnonzero(steps[1:] < steps[:-1]) + 1  # an equal step is another table of it (EvalCallback's)
    if len(back):
        run.restarts = [int(steps[i]) for i in back]
        msg = f"step goes back {len(back)} time(s) (learn() called again, or a restarted job appended to the same log?); the last value wins"
        issues.append(ReadIssue(src, msg, level="warning"))
    run.issues = issues
    return run
