"""Sweep tables: a CSV with one row per run (a W&B runs-table export, a hand-made
``sweep_results.csv``), which is not a training log.

Discovery skips such a file with a note instead of reading its rows as the steps of one run
(corpus ``trl-ppo-gpt2-kl-sweep``: ``summary.csv`` and ``sweep_results.csv`` became a 144-point
"run" with findings) and lists it among the sweep tables it found
(:class:`~ppo_doctor.ingest.discover.Discovery`); ``ppo-doctor sweep`` reads those with
:func:`table_texts`.

A CSV is a sweep table when

* no column is a step axis: a step-named column (``csv_logs.STEP_COLUMNS``, or a name with
  ``step``, ``timestep``, ``iteration``, ``episode``, ``epoch`` or ``update`` in it) whose values
  rise through the rows (a constant ``steps`` = 200 is the length of each run, not an axis), and
* its rows are runs: a run name/id column (``name``, ``run``, ``run_id``, ``id``, ``trial`` ...)
  with a different value on every row, or hyper-parameter columns (the names of
  :data:`ppo_doctor.canonical.hparams.HPARAMS`, and ``seed``) whose combination differs on every row while
  each takes few values (at most 10, or at most half the rows: a sweep grid repeats its values; a
  learning rate annealed through a log's rows takes a new value on every row).
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Iterable

from ..canonical.hparams import HPARAMS
from .readers.csv_logs import STEP_COLUMNS, delimiter
from .storage import open_binary, size_of

# Bytes read to decide: sweep tables are small; a training log is recognised from its start.
HEAD_LIMIT = 1 << 20
RUN_ID_COLUMNS = frozenset({"run", "run_id", "runid", "run_name", "run name", "name", "id", "experiment", "exp", "exp_name", "trial", "trial_id", "job", "job_id"})
_STEP_WORDS = re.compile(r"step|timestep|iteration|iter\b|episode|epoch|update", re.IGNORECASE)
_CONFIG_NAMES = frozenset({n.rsplit(".", 1)[-1].lower() for h in HPARAMS for n in h.names} | {"seed"})
# A hyper-parameter column of a sweep takes few values: at most this many, or half the rows.
MAX_GRID_VALUES = 10
# A sweep table larger than this is not read (a runs table of 100,000 rows is a few MiB).
MAX_BYTES = 64 * 1024 * 1024


def table_texts(paths: Iterable[Path]) -> list[tuple[Path, str]]:
    """(path, text) of each of ``paths`` (the sweep tables discovery recognised with
    :func:`sweep_table_reason`), read through the storage layer, at most :data:`MAX_BYTES` each;
    larger or unreadable ones are left out."""
    out = []
    for path in paths:
        try:
            with open_binary(path) as fh:
                if size_of(fh) > MAX_BYTES:
                    continue
                data = fh.read()
        except OSError:
            continue
        out.append((path, data.decode("utf-8", "replace")))
    return out


def read_sweep_table(path: Path, head: bytes | None = None) -> tuple[list[str], list[list[str]]] | None:
    """(header, rows) of a delimited text file's first :data:`HEAD_LIMIT` bytes (None if not one)."""

    if head is None:
        try:
            with open_binary(path) as fh:
                head = fh.read(HEAD_LIMIT)
        except OSError:
            return None
    text = head.decode("utf-8", "replace").lstrip("\ufeff")
    if len(head) >= HEAD_LIMIT:  # the last line may be cut: drop it
        text = text[: text.rfind("\n") + 1]
    first = text.split("\n", 1)[0]
    delim = delimiter(first)
    if delim is None:
        return None
    try:
        lines = [r for r in csv.reader(io.StringIO(text), delimiter=delim) if any(c.strip() for c in r)]
    except csv.Error:  # e.g. a bare carriage return inside a cell (a damaged file): not a table
        return None
    if len(lines) < 2:
        return None
    header = [c.strip() for c in lines[0]]
    return header, [r for r in lines[1:] if len(r) == len(header)]


def sweep_table_reason(path: Path, head: bytes | None = None) -> str | None:
    """Why ``path`` is a sweep table (one row per run), or None when it may be a training log."""
    table = read_sweep_table(path, head)
    if table is None:
        return None
    header, rows = table
    if len(rows) < 2:
        return None
    columns = {name: [r[i].strip() for r in rows] for i, name in enumerate(header)}
    if any(_is_axis(name, vals) for name, vals in columns.items()):
        return None
    for name, vals in columns.items():
        if name.lower() in RUN_ID_COLUMNS and all(vals) and len(set(vals)) == len(vals):
            return f"one row per run, named by column {name!r}"
    config = [n for n in header if n.lower() in _CONFIG_NAMES]
    results = [n for n in header if n not in config]
    if not config or not results:
        return None
    combos = {tuple(columns[n][i] for n in config) for i in range(len(rows))}
    few = all(len(set(columns[n])) <= max(MAX_GRID_VALUES, len(rows) // 2) for n in config)
    if len(combos) == len(rows) and few:
        return f"one row per run, one per value of {', '.join(repr(n) for n in config)}"
    return None


def _is_axis(name: str, values: list[str]) -> bool:
    if name.lower() not in STEP_COLUMNS and name != "_step" and not _STEP_WORDS.search(name):
        return False
    nums = [_num(v) for v in values if v]
    if len(nums) < 2 or any(x is None for x in nums):
        return False
    return all(b >= a for a, b in zip(nums, nums[1:])) and nums[-1] > nums[0]  # type: ignore[operator]


def _num(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None
