"""Turning away what cannot be a TensorBoard event file, before any decoder is imported.

Discovery asks every format, in priority order, whether it claims a file, and TensorBoard is
asked first.  This light sniffer (``ingest.SNIFFERS``) imports none of the record decoders
(:mod:`.tfrecord`, :mod:`.events`, the bulk ones of :mod:`.reader`): it passes a file named like an
event file, or one whose first 8 bytes are a record length that fits in the head, and
:func:`.reader.sniff` decides on what it passes.  A JSON or CSV log is turned away by its first
bytes alone (benchmarks/RESULTS.md, "One small check").
"""

from __future__ import annotations

import struct
from pathlib import Path

from ..storage import as_path

FILE_PREFIX = "events.out.tfevents."
LENGTH = struct.Struct("<Q")  # a TFRecord starts with the uint64 LE length of its first record


def sniff(path: Path, head: bytes) -> bool:
    """Maybe a TensorBoard event file: named like one, or framed like a TFRecord.  The first
    record (an Event with the file_version, some 30 bytes) lies within the head; read as a length,
    a text log's first 8 bytes are 10**17 or more."""
    if as_path(path).name.startswith(FILE_PREFIX):
        return True
    return len(head) >= LENGTH.size and LENGTH.unpack_from(head)[0] < len(head)
