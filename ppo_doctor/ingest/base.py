"""The reader protocol every format module follows.

A format module in ``ppo_doctor/ingest/`` defines:

* ``NAME``: short format id (``tensorboard``, ``wandb_binary``, ``jsonl`` ...);
* ``sniff(path: Path, head: bytes) -> bool``: cheap content/name check (``head`` = first 4 KiB);
* ``read(path: Path) -> list[RawRun]``: every run in the file (usually one).

``read`` keeps every readable point, records partial damage as ``ReadIssue`` entries on the
returned runs, and raises :class:`~ppo_doctor.errors.LogReadError` only when nothing at all
can be read.  It never unpickles, evals or executes anything from the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from ..frame import RawRun
from .storage import open_binary

HEAD_BYTES = 4096
# Files smaller than this are parsed in Python (json, the csv fast path of csv_logs), never by
# pyarrow or pandas' ujson: importing those costs 0.15-0.35 s, more than their faster parse
# saves on a file this size (benchmarks/RESULTS.md, "One small check").
# Both ways give the same run, which the tests check.
PARSER_IMPORT_BYTES = 1 << 20


def is_int64(n: int) -> bool:
    """Whether ``n`` fits the int64 step column (TensorBoard, MLflow's Java long, W&B).  A step
    written with more digits than that is damage, not a training step."""
    return -(2**63) <= n < 2**63


class Reader(Protocol):
    NAME: str

    def sniff(self, path: Path, head: bytes) -> bool: ...

    def read(self, path: Path) -> list[RawRun]: ...


def read_head(path: Path, n: int = HEAD_BYTES) -> bytes:
    try:
        with open_binary(path) as fh:
            return fh.read(n)
    except OSError:
        return b""
