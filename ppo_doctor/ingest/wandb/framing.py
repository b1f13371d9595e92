"""The framing of W&B's ``run-<id>.wandb`` transaction log: the LevelDB log format
(``leveldb/doc/log_format.md``), a 7-byte file header ``":W&B"`` + uint16 LE ``0xBEE1`` + uint8
version 0, then 32 KiB blocks of records ``uint32 crc | uint16 length | uint8 type | data``;
FULL/FIRST/MIDDLE/LAST fragments; fewer than 7 bytes left in a block are zero padding. The
checksum is zlib CRC-32 of the data seeded with the CRC-32 of the type byte
(``wandb/sdk/internal/datastore.py``), not LevelDB's masked CRC32C.  :func:`iter_records` yields
each record's payload with its offset and reports damage."""

from __future__ import annotations

import mmap
import struct
import zlib
from typing import Iterator, NamedTuple

from ...frame import ReadIssue
from .binary_sniff import MAGIC

VERSION = 0
FILE_HEADER = 7
BLOCK = 32 * 1024
_REC_HEADER = 7  # crc32 + uint16 length + uint8 type
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4
_CRC_SEED = [zlib.crc32(bytes([t])) for t in range(256)]


# -- LevelDB-log framing ---------------------------------------------------------------------


class _Damage(NamedTuple):
    """A stretch of unreadable bytes, reported once when reading resumes after it."""

    start: int
    reason: str


def iter_records(data: bytes | mmap.mmap, path: str, issues: list[ReadIssue]) -> Iterator[tuple[int, bytes]]:
    """Yield ``(byte offset, payload)`` for every intact record after the file header.

    Damage never stops the scan: a bad checksum or impossible header skips that record (or
    the rest of its block when its length cannot be trusted), and one error issue names the
    offset where the damaged stretch starts.  A file that ends inside a record (still being
    written, or cut by a copy) keeps every complete record before it.
    """
    n = len(data)
    pos = FILE_HEADER
    parts: list[bytes] | None = None  # fragments of a FIRST..LAST record being reassembled
    parts_at = 0
    damage: _Damage | None = None

    def flush_damage(upto: int) -> None:
        nonlocal damage
        if damage is not None:
            issues.append(
                ReadIssue(path, f"{upto - damage.start} damaged bytes skipped ({damage.reason})", offset=damage.start)
            )
            damage = None

    def mark(at: int, reason: str) -> None:
        nonlocal damage, parts
        if parts is not None:  # the record being reassembled is lost with the damage
            at, parts = min(at, parts_at), None
        if damage is None:
            damage = _Damage(at, reason)

    while pos < n:
        block_end = (pos // BLOCK + 1) * BLOCK
        if block_end - pos < _REC_HEADER:
            pos = block_end  # block trailer (log_format.md: a record never starts in the last 6 bytes)
            continue
        if pos + _REC_HEADER > n:
            break
        crc, length, rtype = struct.unpack_from("<IHB", data, pos)
        end = pos + _REC_HEADER + length
        if rtype == 0 and length == 0:
            pos = block_end  # zero-filled rest of a block (preallocated or padded file)
            continue
        if end > block_end or not _FULL <= rtype <= _LAST:
            mark(pos, "bad record header")
            pos = block_end  # the length cannot be trusted: resume at the next block
            continue
        if end > n:
            break
        payload = data[pos + _REC_HEADER : end]
        if zlib.crc32(payload, _CRC_SEED[rtype]) != crc:
            mark(pos, "checksum mismatch")
            pos = end
            continue
        if parts is None and rtype in (_MIDDLE, _LAST):
            mark(pos, "record fragment without its start")  # its start was in the damage
            pos = end
            continue
        flush_damage(pos)
        if rtype == _FULL:
            if parts is not None:
                mark(parts_at, "record fragment without its end")
                flush_damage(pos)
            yield pos, payload
        elif rtype == _FIRST:
            if parts is not None:
                mark(parts_at, "record fragment without its end")
                flush_damage(pos)
            parts, parts_at = [payload], pos
        elif parts is not None:  # _MIDDLE or _LAST: a fragment without its start was skipped above
            parts.append(payload)
            if rtype != _MIDDLE:
                yield parts_at, b"".join(parts)
                parts = None
        pos = end

    flush_damage(min(pos, n))
    if pos < n or parts is not None:
        at = parts_at if parts is not None else pos
        # A half-written last record is what a live or killed run leaves: the data before it
        # is complete, so this is a warning, not an error.
        issues.append(
            ReadIssue(path, "file ends inside a record (truncated or still being written)", offset=at, level="warning")
        )
