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

FILE_PREFIX = "events.out.tfevents."
_LENGTH = struct.Struct("<Q")  # a TFRecord starts with the uint64 LE length of its first record


def sniff(path: Path, head: bytes) -> bool:
    """An ``events.out.tfevents.*`` file, or a TFRecord whose first record is an Event with a
    file_version (``brain.Event:N``)."""
    if as_path(path).name.startswith(FILE_PREFIX):
        return True
    # The first record (file_version, some 30 bytes) lies within the head.  Read as a length, a
    # text log's first 8 bytes are 10**17 or more: that settles it before the record decoders are
    # imported, which a JSON or CSV log would otherwise pay for on every check.
    if len(head) < _LENGTH.size or _LENGTH.unpack_from(head)[0] >= len(head):
        return False
    return _first_record_is_an_event(head)


def _first_record_is_an_event(head: bytes) -> bool:
    from . import tfrecord
    from .events import decode_event
    from .protowire import ProtoDecodeError

    if len(head) < tfrecord.OVERHEAD:
        return False
    length = _LENGTH.unpack_from(head)[0]
    if length > len(head) - tfrecord.OVERHEAD or tfrecord.masked_crc32c(head[:8]) != struct.unpack_from("<I", head, 8)[0]:
        return False
    try:
        ev = decode_event(head[tfrecord.HEADER_BYTES : tfrecord.HEADER_BYTES + length])
    except ProtoDecodeError:
        return False
    return bool(ev.file_version and ev.file_version.startswith("brain.Event:"))
