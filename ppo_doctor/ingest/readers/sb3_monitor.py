"""Episode files of the ``Monitor`` wrapper: Stable-Baselines3's and OpenAI baselines' ``monitor.csv``.

SB3's ``Monitor`` (``stable_baselines3/common/monitor.py``, ``ResultsWriter``) and baselines'
``bench.Monitor`` write one row per finished episode of one environment: a first line ``#``
followed by a JSON header (``{"t_start": <epoch seconds>, "env_id": "<gym id>"}``, older
baselines with a space after the ``#``), a CSV header ``r,l,t`` with any ``reset_keywords`` and
``info_keywords`` after it, then per episode its return ``r``, its length ``l`` in environment
steps and ``t``, the seconds since ``t_start`` (docs/sources.md#sb3-monitor-files).  The file is
``monitor.csv``, or ``<rank>.monitor.csv`` per environment of a ``VecEnv`` (``make_vec_env``'s
``monitor_dir``), and often the only log a user kept.

What is read: ``r`` as ``monitor/r`` (mapped to ``reward/score`` for a log of no known trainer:
the return of each finished episode, not SB3's 100-episode mean), ``l`` as ``monitor/l``, every
numeric extra column as ``monitor/<name>`` (``is_success``: a task metric); the step of an
episode is the environment steps of its environment so far (the running sum of ``l``), and its
wall time ``t_start + t``.  The header's ``env_id`` joins the config, so a run on a standard
Gymnasium task is judged against that task's solved level (:mod:`ppo_doctor.canonical.tasks`).
The files of a ``VecEnv``'s environments in one folder are one run: their episodes interleave on
the step axis of one environment, as the environments step together.  A row that is not numbers
(a line cut by a crash) is skipped with a warning.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import LogReadError
from ...frame import RawRun, RawSeries, ReadIssue
from .. import filebytes
from ..storage import as_path

NAME = "sb3_monitor"
PREFIX = "monitor/"
# The columns every Monitor writes, in its order.
COLUMNS = ("r", "l", "t")
# A Monitor line is a few numbers (the header a JSON object of a few keys): a longer one is
# damage, left out as the file streams in (docs/architecture.md#inputs-are-untrusted).
MAX_LINE_BYTES = 1 << 20


def _header(line: str) -> dict[str, Any] | None:
    """The JSON header of a Monitor file's first line (``#{...}``), or None."""
    if not line.startswith("#"):
        return None
    try:
        header = json.loads(line[1:].strip())
    except ValueError:
        return None
    return header if isinstance(header, dict) and "t_start" in header else None


def sniff(path: Path, head: bytes) -> bool:
    text = head.decode("utf-8", "replace").lstrip("\ufeff")
    lines = text.splitlines()
    if len(lines) < 2 or _header(lines[0]) is None:
        return False
    return tuple(c.strip() for c in lines[1].split(",")[:3]) == COLUMNS


def read(path: Path) -> list[RawRun]:
    source = str(path)
    raw, long = filebytes.read_capped_lines(as_path(path), MAX_LINE_BYTES)
    first, _, rest = raw.decode("utf-8", "replace").lstrip("\ufeff").partition("\n")
    header = _header(first)
    if header is None:
        raise LogReadError(source, 'no Monitor header (a first line #{"t_start": ...})')
    rows = csv.reader(io.StringIO(rest))
    names = [c.strip() for c in next(rows, [])]
    if tuple(names[:3]) != COLUMNS:
        raise LogReadError(source, "no r,l,t columns after the Monitor header")
    run = RawRun()
    if long:
        run.issues.append(ReadIssue(source, f"{len(long)} line(s) longer than {MAX_LINE_BYTES} bytes left out (first: line {long[0].number})", level="warning"))
    values: list[list[float]] = []
    lines: list[int] = []
    bad = 0
    for row in rows:
        if not row:
            continue
        try:
            numbers = [float(c) if c.strip() else float("nan") for c in row]
        except ValueError:
            numbers = []
        if len(numbers) != len(names) or not np.isfinite(numbers[1]) or numbers[1] < 0:
            bad += 1
            continue
        values.append(numbers)
        lines.append(rows.line_num + 1)  # the file's line: the JSON header is line 1
    if bad:
        run.issues.append(ReadIssue(source, f"{bad} row(s) that are not {len(names)} numbers with a length skipped", level="warning"))
    if not values:
        raise LogReadError(source, "a Monitor file without a finished episode")
    table = np.asarray(values, dtype=np.float64)
    steps = np.cumsum(table[:, 1]).astype(np.int64)
    wall = float(header["t_start"]) + table[:, 2] if isinstance(header["t_start"], (int, float)) else None
    at = np.asarray(lines, dtype=np.int32)
    for i, name in enumerate(names):
        if name == "t":
            continue  # the wall time of every series
        run.series.append(RawSeries(PREFIX + name, steps, table[:, i], wall_time=wall, source=source, lines=at))
    env_id = header.get("env_id")
    if isinstance(env_id, str) and env_id not in ("", "None"):
        run.config["env_id"] = env_id
    return [run]
