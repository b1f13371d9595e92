"""The line of a log file that holds a metric's point at a given step (SARIF regions,
GitHub annotations' ``line=``).

Only line-oriented logs have a meaningful line: JSON lines (``.jsonl``, ``.ndjson``, ``.log``
holding one JSON object per line) and CSV/TSV (one row per line, after a header).  A line
is the first whose step (the readers' step keys, :data:`ppo_doctor.ingest.tabular.STEP_KEYS`
and :data:`ppo_doctor.ingest.readers.csv_logs.STEP_COLUMNS`, top level only) equals the step and
which holds the metric's raw tag, so a train line and an eval line of the same step are told
apart.  Other formats (TensorBoard records, ``trainer_state.json``, ``.wandb``) give None.

The file is read again here, up to the line where every step asked for was found, and
not at all past :data:`MAX_SCAN_BYTES`; the log is untrusted text parsed with ``json`` and
``csv`` only.
"""

from __future__ import annotations

import csv
import io
import json
import logging
from pathlib import Path
from typing import Iterable
from ..ingest.readers.csv_logs import STEP_COLUMNS
from ..ingest.tabular import STEP_KEYS

log = logging.getLogger(__name__)

JSONL_SUFFIXES = (".jsonl", ".ndjson", ".log")
CSV_SUFFIXES = (".csv", ".tsv")
MAX_SCAN_BYTES = 256 * 1024 * 1024


def _as_step(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            f = float(value)
        except ValueError:
            return None
        return int(f) if f.is_integer() else None
    return None


def _jsonl_steps(fh: io.TextIOBase) -> Iterable[tuple[int, int, set[str]]]:
    for number, line in enumerate(fh, 1):
        if not line.lstrip().startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        for key in STEP_KEYS:
            step = _as_step(obj.get(key))
            if step is not None:
                yield number, step, set(obj)
                break


def _csv_steps(fh: io.TextIOBase, delimiter: str) -> Iterable[tuple[int, int, set[str]]]:
    reader = csv.reader(fh, delimiter=delimiter)
    try:
        header = next(reader)
    except (StopIteration, csv.Error):
        return
    col = next((header.index(c) for c in STEP_COLUMNS if c in header), None)
    if col is None:
        return
    names = set(header)
    try:
        for row in reader:
            if col < len(row):
                step = _as_step(row[col])
                if step is not None:
                    # reader.line_num counts physical lines: the row's last line; a quoted
                    # multi-line cell is rare in logs, the row's first line is what we want
                    yield reader.line_num, step, {h for h, v in zip(header, row) if v != ""} or names
    except csv.Error:
        # e.g. a cell past the csv module's field limit, which is process-wide and which the
        # CSV reader relies on, so it is not raised here: the lines after it stay unknown
        return


def step_lines(path: str | Path, wanted: Iterable[tuple[int, str]]) -> dict[tuple[int, str], int]:
    """``{(step, raw_tag): line}`` for each wanted pair found in the file (1-based lines)."""
    p = Path(path)
    suffix = p.suffix.lower()
    todo = set(wanted)
    if not todo or suffix not in JSONL_SUFFIXES + CSV_SUFFIXES:
        return {}
    found: dict[tuple[int, str], int] = {}
    try:
        if p.stat().st_size > MAX_SCAN_BYTES:
            return {}
        with open(p, encoding="utf-8", errors="replace", newline="") as fh:
            rows = _jsonl_steps(fh) if suffix in JSONL_SUFFIXES else _csv_steps(fh, "\t" if suffix == ".tsv" else ",")
            by_step: dict[int, set[str]] = {}
            for step, tag in todo:
                by_step.setdefault(step, set()).add(tag)
            for number, step, keys in rows:
                for tag in by_step.get(step, ()):
                    if tag in keys and (step, tag) not in found:
                        found[(step, tag)] = number
                if len(found) == len(todo):  # steps may go back (restarts): no earlier stop
                    break
    except OSError as exc:
        log.debug("cannot re-read %s for line numbers: %s", p, exc)
    return found

