"""Recognising a W&B transaction log, apart from decoding one.

Discovery asks every format, in priority order, whether it claims a file, and ``.wandb`` logs
come second: their sniff must not cost a JSON or CSV log the history decoder, the protobuf
reader and the side-file readers, which only :mod:`.binary` imports (``ingest.SNIFFERS``;
benchmarks/RESULTS.md, "One small check").
"""

from __future__ import annotations

from pathlib import Path

MAGIC = b":W&B\xe1\xbe"  # ident ":W&B" + uint16 LE 0xBEE1 (datastore.py LEVELDBLOG_HEADER_*)


def sniff(path: Path, head: bytes) -> bool:
    """A W&B transaction log starts with ``:W&B`` and the 0xBEE1 magic, whatever its name."""
    return head[: len(MAGIC)] == MAGIC
