"""Recognising a TensorBoard event file, apart from decoding one.

Discovery asks every format, in priority order, whether it claims a file, and TensorBoard is
asked first: its sniff must not cost a JSON or CSV log the bulk decoders (:mod:`.fastpath`,
:mod:`.collect`, :mod:`.text`), which only :mod:`.reader` imports (``ingest.SNIFFERS``;
benchmarks/RESULTS.md, "One small check").
"""

from __future__ import annotations

import struct
from pathlib import Path

from ..storage import as_path
from . import tfrecord
from .events import decode_event
from .protowire import ProtoDecodeError

FILE_PREFIX = "events.out.tfevents."


def sniff(path: Path, head: bytes) -> bool:
    """An ``events.out.tfevents.*`` file, or a TFRecord whose first record is an Event with a
    file_version (``brain.Event:N``)."""
    if as_path(path).name.startswith(FILE_PREFIX):
        return True
    if len(head) < tfrecord.OVERHEAD:
        return False
    length = struct.unpack_from("<Q", head)[0]
    if length > len(head) - tfrecord.OVERHEAD or tfrecord.masked_crc32c(head[:8]) != struct.unpack_from("<I", head, 8)[0]:
        return False
    try:
        ev = decode_event(head[tfrecord.HEADER_BYTES : tfrecord.HEADER_BYTES + length])
    except ProtoDecodeError:
        return False
    return bool(ev.file_version and ev.file_version.startswith("brain.Event:"))
