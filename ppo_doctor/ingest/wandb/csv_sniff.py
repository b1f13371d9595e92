"""Recognising a W&B export (CSV or Parquet), apart from reading one.

Plain CSV logs (SB3 ``progress.csv``, Lightning ``metrics.csv``) are asked of this format before
their own reader claims them: the sniff must not cost them the export reader, its side-file
readers and its column decoders, which only :mod:`.csv` imports (``ingest.SNIFFERS``;
benchmarks/RESULTS.md, "One small check").
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from .. import filebytes
from ..base import HEAD_BYTES
from ..storage import open_binary

# Panel-export x-axis headers and what they are (wandb/apis/public/reports.py, docs/sources.md#wandb-exports).
TIME_AXES = ("Relative Time (Process)", "Relative Time (Wall)", "Wall Time")
PANEL_SEP = " - "
KEY_LIKE = re.compile(r"^[\w./-]+$")  # a custom x-axis is a metric key such as train/global_step
MAX_HEADER = 1 << 24  # bytes of the header line read to choose the layout


def sniff(path: Path, head: bytes) -> bool:
    """Claim W&B exports only: a ``_step`` column, or the ``<run> - <metric>`` panel layout.

    Plain CSVs of other tools (SB3 ``progress.csv``, Lightning ``metrics.csv``) have neither.
    """
    if head.startswith(b"PAR1"):
        return _parquet_has_step(path)
    complete = len(head) < HEAD_BYTES
    if not complete and b"\n" not in head and b"\0" not in head:
        try:  # a header longer than the head: read the whole line (csv_logs does the same)
            head = filebytes.read_lines_head(path, 1, MAX_HEADER)
        except OSError:
            return False
        complete = b"\n" in head or len(head) < MAX_HEADER
    header = header_fields(head, complete=complete)
    if header is None:
        return False
    return "_step" in header or is_panel(header)


def header_fields(head: bytes, complete: bool) -> list[str] | None:
    """Column names of the first line; ``complete`` says ``head`` is the whole file."""
    if b"\0" in head:
        return None
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    line, newline, _ = text.partition("\n")
    try:
        fields = next(csv.reader([line.rstrip("\r")]))
    except (csv.Error, StopIteration):
        return None
    if not newline and not complete:  # header longer than the head: the last field may be cut
        fields = fields[:-1]
    return [f.strip() for f in fields] if len(fields) >= 2 else None


def is_panel(header: list[str]) -> bool:
    """First column an x-axis (a W&B axis name or a metric key), every other ``<run> - <metric>``.

    The x-axis test keeps out text logs that merely contain commas and " - " (Python logging's
    ``2025-08-28 21:17:17,216 - INFO - ...`` splits into exactly that shape).
    """
    x = header[0]
    if x not in TIME_AXES and x != "Step" and not KEY_LIKE.match(x):
        return False
    for c in header[1:]:
        run, sep, metric = c.rpartition(PANEL_SEP)
        if not (sep and run.strip() and metric.strip()):
            return False
    return True


def _parquet_has_step(path: Path) -> bool:
    try:
        import pyarrow.parquet as pq
    except ImportError:  # still claim likely history files so the user hears what is missing
        return "history" in path.name.lower()
    try:
        with open_binary(path) as fh:  # pyarrow opens a local path, never a RemotePath itself
            return "_step" in pq.read_schema(fh).names
    except Exception:  # noqa: BLE001 - any unreadable footer: not ours to claim
        return False
