"""Reader for W&B's binary transaction log ``run-<id>.wandb`` (formats.md §9d).

The file is what the W&B client writes locally for every run (online or offline); it is the
only place an offline run keeps its metrics.  Layout:

* framing = the LevelDB log format (``leveldb/doc/log_format.md``): a 7-byte file header
  ``":W&B"`` + uint16 LE ``0xBEE1`` + uint8 version 0, then 32 KiB blocks of records
  ``uint32 crc | uint16 length | uint8 type | data``; FULL/FIRST/MIDDLE/LAST fragments; fewer
  than 7 bytes left in a block are zero padding.  The checksum is zlib CRC-32 of the data
  seeded with the CRC-32 of the type byte (``wandb/sdk/internal/datastore.py``, wandb <= 0.29;
  checked on files of wandb 0.14.2, 0.15.5 and 0.31.0), not LevelDB's masked CRC32C;
* payload = a protobuf ``wandb_internal.Record`` (``wandb/proto/wandb_internal.proto``).

The protobuf is decoded here with a small wire-format decoder, so the library never imports
wandb.  Metrics come from ``Record.history`` rows; ``HistoryItem`` has ``key`` (legacy Python
backend) or ``nested_key`` (Go wandb-core) and ``value_json`` (NaN/Infinity as bare tokens).
History rows are decoded in bulk, column-wise with numpy, and their numbers parsed by
:mod:`numparse`: a million points in about half a second, as fast as pandas reads the same
points from JSONL (issue #6).

Step: the row's ``_step``, unless ``define_metric(..., step_metric=...)`` gave the key another
x-axis (HF Trainer and OpenRLHF declare ``train/global_step``, formats.md §1e, §2); then the
value of that metric in the row (or the last one logged before it), as W&B's own charts do.
"""

from __future__ import annotations

import fnmatch
import json
import logging
import math
import mmap
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pandas as pd

from ..errors import LogReadError
from ..frame import RawRun, RawSeries, ReadIssue, TextSample
from ..frameworks import is_eval_key
from . import filebytes, numparse, wandb_files
from .tabular import parse_int
from .wandb_files import TableRef
from .storage import as_path, has_fileno, open_binary, size_of

log = logging.getLogger(__name__)

NAME = "wandb_binary"

_MAGIC = b":W&B\xe1\xbe"  # ident ":W&B" + uint16 LE 0xBEE1 (datastore.py LEVELDBLOG_HEADER_*)
_VERSION = 0
_FILE_HEADER = 7
_BLOCK = 32 * 1024
_REC_HEADER = 7  # crc32 + uint16 length + uint8 type
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4
_CRC_SEED = [zlib.crc32(bytes([t])) for t in range(256)]

# Record oneof field numbers (wandb_internal.proto, formats.md §9d).
_R_HISTORY, _R_CONFIG, _R_METRIC, _R_RUN, _R_EXIT = 2, 5, 12, 17, 18
_HISTORY_TAG = bytes([_R_HISTORY << 3 | 2])

# Keys that W&B writes into every row; used for step and wall time, never analysed.
_STEP_KEY, _TIME_KEY = "_step", "_timestamp"
# Nested dict values deeper than this are not flattened into metrics (untrusted input).
_MAX_NESTING = 16
_TABLE_TYPES = ("table-file", "table", "partitioned-table", "joined-table")


class _Malformed(ValueError):
    """The bytes are not a valid protobuf message."""


# -- protobuf wire format ------------------------------------------------------------------


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    """Decode a base-128 varint at ``pos``; return (value, next position)."""
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise _Malformed("varint runs past the end")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            if result >> 64:
                raise _Malformed("varint beyond 64 bits")
            return result, pos
        shift += 7
        if shift > 63:
            raise _Malformed("varint longer than 10 bytes")


def _spans(buf: bytes, pos: int, end: int) -> Iterator[tuple[int, int, int, int, int]]:
    """Yield ``(field number, wire type, start, stop, value)`` for the fields of ``buf[pos:end]``:
    ``[start, stop)`` is the data of a length-delimited field, ``value`` the number of the others."""
    while pos < end:
        tag, pos = _varint(buf, pos)
        wire = tag & 7
        value = 0
        if wire == 0:
            value, stop = _varint(buf, pos)
            if stop > end:
                raise _Malformed("field runs past the end")
        elif wire == 2:
            length, pos = _varint(buf, pos)
            stop = pos + length
            if stop > end:
                raise _Malformed("field runs past the end")
        elif wire == 1 or wire == 5:
            stop = pos + (8 if wire == 1 else 4)
            if stop > end:
                raise _Malformed("field runs past the end")
            value = int.from_bytes(buf[pos:stop], "little")
        else:  # groups (3/4) are not used by wandb_internal.proto
            raise _Malformed(f"unsupported wire type {wire}")
        yield tag >> 3, wire, pos, stop, value
        pos = stop


def _fields(buf: bytes) -> Iterator[tuple[int, int, Any]]:
    """Yield ``(field number, wire type, value)``: an int for varint/fixed, bytes otherwise."""
    for fno, wire, start, stop, value in _spans(buf, 0, len(buf)):
        yield fno, wire, (buf[start:stop] if wire == 2 else value)


def _signed(v: int) -> int:
    """int32/int64 varints are two's complement on 64 bits."""
    return v - (1 << 64) if v >= 1 << 63 else v


# -- LevelDB-log framing ---------------------------------------------------------------------


@dataclass
class _Damage:
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
    pos = _FILE_HEADER
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
        block_end = (pos // _BLOCK + 1) * _BLOCK
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


# -- history rows, decoded in bulk ----------------------------------------------------------------
#
# A million-point history is a million HistoryItems; decoding them one by one in Python was the
# reader's hot loop (issue #6).  History bodies are gathered into chunks and decoded column-wise:
# the fields of all rows are walked in lockstep with numpy (one round per field), items in the
# layout both wandb backends write (``key`` or one ``nested_key``, then ``value_json``, one-byte
# lengths) are split with a few array operations, and their numbers are parsed by numparse.
# Anything else (typed values, several ``nested_key`` parts, long texts) takes the per-item path,
# and a malformed row is still dropped whole and reported with its record's offset.

_PAD = 256  # bytes around a chunk: reads just past a field (at most 131 bytes) stay in the buffer
_CHUNK_BYTES = 8 << 20  # history bytes per chunk: bounds the memory of one bulk decode
_LOCKSTEP_MIN = 16  # fewer rows still being walked: finish them in Python, not one numpy round per field
_ITEM, _STEP = 1, 2  # HistoryRecord: repeated HistoryItem item = 1; HistoryStep step = 2
_TAG_KEY, _TAG_NESTED = 0x0A, 0x12  # HistoryItem key = 1, nested_key = 2 (length-delimited)
_TAG_VALUE = (0x82, 0x01)  # HistoryItem value_json = 16 (length-delimited): two-byte tag
_LOW_BYTES = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)  # low k bytes of a word
_HASH_MUL = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio (Knuth's multiplicative hashing)


def _varints(buf: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised :func:`_varint`: values (uint64), positions after them, and which are invalid
    (longer than 10 bytes or beyond 64 bits)."""
    b = buf[at]
    value = (b & 0x7F).astype(np.uint64)
    after = at + 1
    bad = np.zeros(len(at), dtype=bool)
    more = np.flatnonzero(b & 0x80)
    shift = 7
    while len(more):
        if shift > 63:
            bad[more] = True
            break
        c = buf[after[more]]
        part = (c & 0x7F).astype(np.uint64)
        if shift == 63:
            bad[more[part > 1]] = True
        value[more] |= part << np.uint64(shift)
        after[more] += 1
        more = more[(c & 0x80) != 0]
        shift += 7
    return value, after, bad


def _field_heads(buf: np.ndarray, at: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, ...]:
    """The field that starts at each ``at`` (inside a message ending at ``end``): its number,
    wire type, data span (the varint itself for wire type 0) and whether it is malformed."""
    tag, pos, bad = _varints(buf, at)
    wire = tag & np.uint64(7)
    fno = tag >> np.uint64(3)
    start = pos
    stop = pos.copy()
    sel = np.flatnonzero(wire == 0)
    if len(sel):
        _, stop[sel], b = _varints(buf, pos[sel])
        bad[sel] |= b
    sel = np.flatnonzero(wire == 2)
    if len(sel):
        length, first, b = _varints(buf, pos[sel])
        room = end[sel] - first
        b |= (room < 0) | (length > np.maximum(room, 0).astype(np.uint64))
        start = start.copy()
        start[sel] = first
        stop[sel] = first + np.where(b, 0, length.astype(np.int64))
        bad[sel] |= b
    stop += np.where(wire == 1, 8, 0) + np.where(wire == 5, 4, 0)
    bad |= (wire == 3) | (wire == 4) | (wire > 5) | (stop > end)  # groups are not used by the proto
    return fno, wire, start, stop, bad


def _next_fields(buf: np.ndarray, at: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, ...]:
    """:func:`_field_heads`, with the usual field (an item with a one-byte length) decoded inline."""
    length = buf[at + 1].astype(np.int64)
    usual = (buf[at] == _TAG_KEY) & (length < 0x80)  # HistoryRecord.item: same tag byte as key
    start = at + 2
    stop = start + length
    if usual.all():
        n = len(at)
        return np.full(n, _ITEM, dtype=np.uint64), np.full(n, 2, dtype=np.uint64), start, stop, stop > end
    fno = np.full(len(at), _ITEM, dtype=np.uint64)
    wire = np.full(len(at), 2, dtype=np.uint64)
    other = np.flatnonzero(~usual)
    fno[other], wire[other], start[other], stop[other], malformed = _field_heads(buf, at[other], end[other])
    bad = stop > end
    bad[other] |= malformed
    return fno, wire, start, stop, bad


@dataclass
class _Pending:
    """History bodies read from the log, waiting to be decoded together."""

    bodies: list[Any] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)  # offset of each body's record
    issue_at: list[int] = field(default_factory=list)  # len(issues) when it was read: keeps issue order
    size: int = 0

    def add(self, body: Any, offset: int, issue_at: int) -> None:
        self.bodies.append(body)
        self.offsets.append(offset)
        self.issue_at.append(issue_at)
        self.size += len(body)


@dataclass
class _Rows:
    """Columns of a chunk of history rows, after dropping the malformed ones."""

    offsets: list[int]  # record offset per row
    stepnums: list[int | None]  # HistoryRecord.step.num per row (None when absent)
    item_rows: np.ndarray  # row of each item
    keys: np.ndarray  # key id of each item
    values: np.ndarray  # float64 value of each numeric item
    is_num: np.ndarray  # the item's value is a JSON number
    others: dict[int, Any]  # item -> its parsed non-numeric value (or _BAD)


def _walk_rows(blob: bytes, buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[dict[int, str], list, list]:
    """Spans of the items and step fields of every row, in file order, and the malformed rows.

    All rows advance one field per numpy round; the few rows left after most are done (a row
    far longer than the others) are finished in Python.
    """
    bad: dict[int, str] = {}
    items: list[tuple[np.ndarray, ...]] = []  # (rows, rank within row, start, stop) per round
    steps: list[tuple[np.ndarray, ...]] = []  # (rows, start, stop) per round, later rounds win
    rank = np.zeros(len(starts), dtype=np.int64)
    cur = starts.copy()
    active = np.flatnonzero(cur < ends)
    while len(active) >= _LOCKSTEP_MIN:
        fno, wire, start, stop, malformed = _next_fields(buf, cur[active], ends[active])
        if malformed.any():
            for row in active[malformed].tolist():  # rare: decode the row again for the reason
                bad[row] = _malformation(blob, int(starts[row]), int(ends[row]))
            keep = ~malformed
            active, fno, wire, start, stop = active[keep], fno[keep], wire[keep], start[keep], stop[keep]
        is_item = (fno == _ITEM) & (wire == 2)
        rows = active[is_item]
        items.append((rows, rank[rows], start[is_item], stop[is_item]))
        rank[rows] += 1
        is_step = (fno == _STEP) & (wire == 2)
        steps.append((active[is_step], start[is_step], stop[is_step]))
        cur[active] = stop
        active = active[stop < ends[active]]
    for row in active.tolist():
        found_items: list[tuple[int, int, int, int]] = []
        found_steps: list[tuple[int, int, int]] = []
        n = int(rank[row])
        try:
            for field_no, field_wire, a, b, _ in _spans(blob, int(cur[row]), int(ends[row])):
                if field_no == _ITEM and field_wire == 2:
                    found_items.append((row, n + len(found_items), a, b))
                elif field_no == _STEP and field_wire == 2:
                    found_steps.append((row, a, b))
        except _Malformed as exc:
            bad[row] = str(exc)
            continue
        rank[row] += len(found_items)
        if found_items:
            items.append(tuple(np.array(c, dtype=np.int64) for c in zip(*found_items)))
        if found_steps:
            steps.append(tuple(np.array(c, dtype=np.int64) for c in zip(*found_steps)))
    # Place each item at its file position: rows in order, items in order within a row.
    first = np.cumsum(rank) - rank
    n_items = int(rank.sum())
    item_row = np.empty(n_items, dtype=np.int64)
    item_start = np.empty(n_items, dtype=np.int64)
    item_stop = np.empty(n_items, dtype=np.int64)
    for rows, ranks, lo, hi in items:
        at = first[rows] + ranks
        item_row[at], item_start[at], item_stop[at] = rows, lo, hi
    return bad, [item_row, item_start, item_stop], steps


def _malformation(blob: bytes, start: int, end: int) -> str:
    """Why the fields of ``blob[start:end]`` do not decode."""
    try:
        for _ in _spans(blob, start, end):
            pass
    except _Malformed as exc:
        return str(exc)
    return "bad protobuf field"  # not reached: the vectorised and Python decoders agree


def _step_numbers(blob: bytes, buf: np.ndarray, n_rows: int, steps: list, bad: dict[int, str]) -> list[int | None]:
    """``HistoryStep.num`` of each row (None without a step field; 0 when num is omitted)."""
    out: list[int | None] = [None] * n_rows
    for rows, a, b in steps:
        if not len(rows):
            continue
        # the usual encoding: empty (num == 0) or just "num: varint"
        value, after, vbad = _varints(buf, a + 1)
        simple = (b == a) | ((buf[a] == 0x08) & (after == b) & ~vbad)
        nums = np.where(b == a, 0, value.view(np.int64))
        for row, num, ok, start, stop in zip(rows.tolist(), nums.tolist(), simple.tolist(), a.tolist(), b.tolist()):
            if ok:
                out[row] = num
                continue
            try:
                out[row] = 0
                for sfno, swire, v in _fields(blob[start:stop]):
                    if sfno == 1 and swire == 0:
                        out[row] = _signed(v)
            except _Malformed as exc:
                bad[row] = str(exc)
    return out


def _split_items(buf: np.ndarray, start: np.ndarray, stop: np.ndarray) -> tuple[np.ndarray, ...]:
    """Which items have the usual layout, and the spans of their key and value text."""
    tag = buf[start]
    key_len = buf[start + 1].astype(np.int64)
    key_start = start + 2
    value_tag = key_start + key_len
    value_len = buf[value_tag + 2].astype(np.int64)
    usual = (
        ((tag == _TAG_KEY) | (tag == _TAG_NESTED))
        & (key_len < 0x80)
        & (buf[value_tag] == _TAG_VALUE[0])
        & (buf[value_tag + 1] == _TAG_VALUE[1])
        & (value_len < 0x80)
        & (value_tag + 3 + value_len == stop)  # also keeps every byte read above inside the item
    )
    return usual, key_start, key_start + key_len, value_tag + 3


def _item_fields(body: bytes) -> tuple[Any, bytes | None]:
    """Key and JSON text of a ``HistoryItem`` in any encoding (the per-item path).

    ``key`` is the bytes of ``key`` or of a single ``nested_key``, or a tuple of the
    ``nested_key`` parts.  The typed value fields of newer protos (none=3, boolean=4, integer=5
    sint64, number=6 double, text=7, json=8) are turned into JSON text; ``value_json`` wins.
    """
    key: Any = None
    parts: list[bytes] = []
    value: bytes | None = None
    typed: bytes | None = None
    for fno, wire, v in _fields(body):
        if wire == 2 and fno == 16:
            value = v
        elif wire == 2 and fno == 2:
            parts.append(v)
        elif wire == 2 and fno == 1:
            key = v
        else:
            typed = _typed_json(fno, wire, v) or typed
    if parts:
        key = parts[0] if len(parts) == 1 else tuple(parts)
    return key, value if value is not None else typed


def _decode_rows(lg: _Log, pending: _Pending) -> _Rows:
    """Decode a chunk of history bodies; malformed rows are reported (in file order) and dropped."""
    blob = b"".join([bytes(_PAD), *pending.bodies, bytes(_PAD)])
    buf = np.frombuffer(blob, dtype=np.uint8)
    sizes = np.fromiter(map(len, pending.bodies), dtype=np.int64, count=len(pending.bodies))
    ends = np.cumsum(sizes) + _PAD
    bad, (item_row, item_start, item_stop), steps = _walk_rows(blob, buf, ends - sizes, ends)
    stepnums = _step_numbers(blob, buf, len(sizes), steps, bad)

    usual, key_start, key_stop, value_start = _split_items(buf, item_start, item_stop)
    texts: dict[int, bytes] = {}  # the other items, decoded one by one: JSON text
    odd_keys: dict[int, Any] = {}  # ... and key
    for i in np.flatnonzero(~usual).tolist():
        try:
            key, text = _item_fields(blob[item_start[i] : item_stop[i]])
        except _Malformed as exc:
            bad.setdefault(int(item_row[i]), str(exc))
            continue
        if key is not None and text is not None:
            odd_keys[i], texts[i] = key, text
    good_rows = np.ones(len(sizes), dtype=bool)
    good_rows[list(bad)] = False
    # one issue per record (a record may hold more than one history field, or fail elsewhere too)
    reported = {pending.offsets[row]: row for row in sorted(bad, reverse=True) if pending.offsets[row] not in lg.malformed}
    for n, (offset, row) in enumerate(sorted(reported.items())):
        lg.issues.insert(pending.issue_at[row] + n, ReadIssue(lg.path, f"malformed record skipped ({bad[row]})", offset=offset))
    lg.malformed.update(reported)
    # the items of a malformed row are dropped before their keys are named or values parsed
    in_good = good_rows[item_row]
    usual &= in_good
    odd_keys = {i: k for i, k in odd_keys.items() if in_good[i]}
    values, is_num = numparse.parse_numbers(buf, np.where(usual, value_start, item_start), np.where(usual, item_stop, item_start))
    is_num &= usual
    keys = _key_ids(lg, blob, buf, len(usual), np.flatnonzero(usual), key_start[usual], key_stop[usual], odd_keys)
    keep = usual.copy()
    keep[list(odd_keys)] = True
    others: dict[int, Any] = {}
    for i in np.flatnonzero(keep & ~is_num).tolist():
        value = _parse_json(texts[i] if i in texts else blob[value_start[i] : item_stop[i]])
        if type(value) is float or type(value) is int:  # bool is not a metric: exact types
            values[i], is_num[i] = _to_float(value), True
        else:
            others[i] = value

    sel = np.flatnonzero(keep)
    new_index = np.cumsum(keep) - 1
    renumber = np.cumsum(good_rows) - 1
    return _Rows(
        offsets=[o for o, g in zip(pending.offsets, good_rows.tolist()) if g],
        stepnums=[s for s, g in zip(stepnums, good_rows.tolist()) if g],
        item_rows=renumber[item_row[sel]],
        keys=keys[sel],
        values=values[sel],
        is_num=is_num[sel],
        others={int(new_index[i]): v for i, v in others.items()},
    )


def _key_ids(
    lg: _Log, blob: bytes, buf: np.ndarray, n_items: int, at: np.ndarray, start: np.ndarray, stop: np.ndarray, odd: dict[int, Any]
) -> np.ndarray:
    """Key id of every item: ``blob[start:stop]`` for the items ``at``, ``odd[i]`` for the others.

    The keys of ``at`` are told apart without a Python object per item: a hash of their bytes
    groups them (pandas' hash table), then every item is compared word by word with the first
    item of its group; the rare item that differs (a hash collision) joins ``odd``.  New keys
    get ids in order of first appearance, so series come out in file order.
    """
    length = stop - start
    words = numparse.word_view(buf)
    parts = []
    h = length.astype(np.uint64)
    for w in range((int(length.max(initial=0)) + 7) // 8):
        part = words[start + 8 * w] & _LOW_BYTES[np.clip(length - 8 * w, 0, 8)]
        parts.append(part)
        h = (h ^ part) * _HASH_MUL
        h ^= h >> np.uint64(29)
    codes, _ = pd.factorize(h)  # codes numbered in order of first appearance
    first = np.flatnonzero(np.diff(np.maximum.accumulate(codes), prepend=-1))  # first item of each code
    same = length == length[first][codes]
    for part in parts:
        same &= part == part[first][codes]
    odd = dict(odd)
    for j in np.flatnonzero(~same).tolist():
        odd[int(at[j])] = blob[start[j] : stop[j]]
    names = [blob[start[j] : stop[j]] for j in first.tolist()]
    new = [(int(at[j]), k) for j, k in zip(first.tolist(), names) if k not in lg.key_ids]
    new += [(i, k) for i, k in odd.items() if k not in lg.key_ids]
    for _, k in sorted(new, key=lambda t: t[0]):  # ids in order of first appearance
        lg.key_id(k)
    ids = np.zeros(n_items, dtype=np.int64)
    ids[at] = np.array([lg.key_ids[k] for k in names], dtype=np.int64)[codes]
    for i, k in odd.items():
        ids[i] = lg.key_ids[k]
    return ids


def _parse_json(text: bytes) -> Any:
    """A ``value_json`` that numparse did not decode (text, dict, list, a number it leaves to json):
    parsed alone (Python's json takes NaN/Infinity), or _BAD."""
    try:
        return json.loads(text, parse_int=parse_int)
    except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
        return _BAD


_BAD = object()  # marker of a value_json that is not JSON


def _typed_json(fno: int, wire: int, v: Any) -> bytes | None:
    if fno == 3 and wire == 0:
        return b"null"
    if fno == 4 and wire == 0:
        return b"true" if v else b"false"
    if fno == 5 and wire == 0:
        return str((v >> 1) ^ -(v & 1)).encode()  # zigzag sint64
    if fno == 6 and wire == 1:
        x = struct.unpack("<d", v.to_bytes(8, "little"))[0]
        return json.dumps(x).encode()  # NaN/Infinity tokens, like value_json
    if fno == 7 and wire == 2:
        return json.dumps(v.decode("utf-8", "replace")).encode()
    if fno == 8 and wire == 2:
        return v
    return None


def _config_items(buf: bytes) -> Iterator[tuple[str, list[str], Any]]:
    """``ConfigRecord`` -> ``(op, key path, value)`` with op ``update`` or ``remove``."""
    for fno, wire, sub in _fields(buf):
        if wire != 2 or fno not in (1, 2):
            continue
        key: list[str] = []
        raw = None
        for ifno, iwire, v in _fields(sub):
            if iwire != 2:
                continue
            if ifno == 1:
                key = [v.decode("utf-8", "replace")]
            elif ifno == 2:
                key.append(v.decode("utf-8", "replace"))
            elif ifno == 16:
                raw = v
        if not key:
            continue
        value: Any = None
        if raw is not None:
            try:
                value = json.loads(raw)
            except ValueError:
                value = raw.decode("utf-8", "replace")
        yield ("update" if fno == 1 else "remove"), key, value


def _set_config(config: dict[str, Any], op: str, key: list[str], value: Any) -> None:
    if key[0] == "_wandb":  # internal telemetry, not a hyper-parameter (formats.md §9c)
        return
    node = config
    for part in key[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            if op == "remove":
                return
            child = node[part] = {}
        node = child
    if op == "update":
        node[key[-1]] = value
    else:
        node.pop(key[-1], None)


def _str_fields(buf: bytes, wanted: dict[int, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fno, wire, v in _fields(buf):
        name = wanted.get(fno)
        if name is not None and wire == 2:
            text = v.decode("utf-8", "replace")
            if name == "tags":
                out.setdefault(name, []).append(text)
            elif text:
                out[name] = text
    return out


# -- the reader -----------------------------------------------------------------------------


@dataclass
class _Log:
    """Everything decoded from one ``.wandb`` file, column-wise."""

    path: str
    key_ids: dict[Any, int] = field(default_factory=dict)
    key_names: list[str] = field(default_factory=list)
    # numeric points: key id, global row index, value
    num_keys: list[np.ndarray] = field(default_factory=list)
    num_rows: list[np.ndarray] = field(default_factory=list)
    num_vals: list[np.ndarray] = field(default_factory=list)
    # per row: step (from _step / step.num) and wall time (_timestamp)
    row_steps: list[np.ndarray] = field(default_factory=list)
    row_walls: list[np.ndarray] = field(default_factory=list)
    texts: list[tuple[str, int, str]] = field(default_factory=list)  # key, row, text
    tables: list[tuple[str, int, str]] = field(default_factory=list)  # key, row, path relative to files/
    metric_defs: list[tuple[str, str, str]] = field(default_factory=list)  # name, glob, step_metric
    config: dict[str, Any] = field(default_factory=dict)
    run_info: dict[str, Any] = field(default_factory=dict)
    exit_code: int | None = None
    issues: list[ReadIssue] = field(default_factory=list)
    n_rows: int = 0
    last_step: int = -1
    malformed: set[int] = field(default_factory=set)  # offsets of the records reported as malformed
    _media: tuple[int, tuple[str, ...]] = (0, ())

    def key_id(self, key: Any) -> int:
        """Id of a key (bytes, or a tuple of nested_key parts that shares the id of its joined name)."""
        kid = self.key_ids.get(key)
        if kid is None:
            if isinstance(key, tuple):
                kid = self.key_id(b"/".join(key))
            else:
                kid = len(self.key_names)
                self.key_names.append(key.decode("utf-8", "replace"))
            self.key_ids[key] = kid
        return kid

    def media_prefixes(self) -> tuple[str, ...]:
        """Keys logged as media: wandb-core splits a media dict into ``<key>/_type``, ``<key>/path`` ..."""
        seen, prefixes = self._media
        if seen != len(self.key_names):
            prefixes = tuple(k[: -len("/_type")] + "/" for k in self.key_names if k.endswith("/_type"))
            self._media = (len(self.key_names), prefixes)
        return prefixes


@dataclass
class Decoded:
    """A decoded ``.wandb`` file: the run, the tables its history logged, its last ``_step``."""

    run: RawRun
    tables: list[TableRef]
    last_step: int | None


def sniff(path: Path, head: bytes) -> bool:
    """A W&B transaction log starts with ``:W&B`` and the 0xBEE1 magic, whatever its name."""
    return head[: len(_MAGIC)] == _MAGIC


def read(path: Path) -> list[RawRun]:
    """Read ``run-<id>.wandb`` and the side files of its run folder (``files/`` beside it)."""
    path = as_path(path)
    try:
        with open_binary(path) as fh:
            size = size_of(fh)
            if not has_fileno(fh):  # a remote file, which has no descriptor: streamed into memory once
                whole = fh.read()
                size = len(whole)
                end = min(size, -(-filebytes.content_end_of(whole) // _BLOCK) * _BLOCK)
                data: bytes | mmap.mmap = whole[:end]
            else:
                # a zero tail (crashed writer) is not mapped; the block holding the last non-zero
                # byte is, whole: its zero bytes may be a record's or the block's padding
                end = min(size, -(-filebytes.content_end(fh.fileno(), size) // _BLOCK) * _BLOCK)
                # mmap: a multi-GB log is paged in as it is scanned instead of copied into memory
                data = mmap.mmap(fh.fileno(), end, access=mmap.ACCESS_READ) if end else b""
    except (OSError, ValueError) as exc:
        raise LogReadError(str(path), f"cannot read file: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        decoded = decode(data, str(path))
    finally:
        if isinstance(data, mmap.mmap):
            data.close()
    raw = decoded.run
    if end < size:
        raw.issues.append(ReadIssue(str(path), filebytes.zero_tail_message(size - end), offset=end, level="warning"))
    side = wandb_files.read_side_files(path.parent / "files", decoded.tables)
    wandb_files.merge_side_files(raw, side)
    issue = wandb_files.summary_step_issue(side.summary, decoded.last_step, str(path.parent / "files" / "wandb-summary.json"))
    if issue is not None:
        raw.issues.append(issue)
    log.debug("%s: %d series, %d points", path, len(raw.series), sum(len(x) for x in raw.series))
    return [raw]


def read_run_folder(folder: Path) -> list[RawRun]:
    """Every run of a W&B run folder (``run-*``/``offline-run-*``): its ``.wandb`` log and ``files/``.

    A folder without a ``.wandb`` file (copied without it) still gives its config and text
    tables, with a warning that the metrics are missing.
    """
    folder = as_path(folder)
    logs = sorted(p for p in folder.glob("*.wandb") if p.is_file())
    if logs:
        runs: list[RawRun] = []
        for p in logs:
            runs += read(p)
        return runs
    side = wandb_files.read_side_files(folder / "files")
    if not (side.config or side.texts or side.summary or side.metadata):
        raise LogReadError(str(folder), "not a W&B run folder (no .wandb file and no files/ content)")
    raw = RawRun()
    wandb_files.merge_side_files(raw, side)
    raw.issues.append(ReadIssue(str(folder), "no run-<id>.wandb file: the run's metric history is missing", level="warning"))
    return [raw]


def decode(data: bytes | mmap.mmap, path: str) -> Decoded:
    """Decode the bytes of a ``.wandb`` file into a RawRun (without side files)."""
    if len(data) < _FILE_HEADER:
        raise LogReadError(path, f"not a W&B log: {len(data)} bytes, shorter than the 7-byte header", offset=0)
    if data[: len(_MAGIC)] != _MAGIC:
        raise LogReadError(path, "not a W&B log: header is not ':W&B' + 0xBEE1", offset=0)
    if data[6] != _VERSION:
        raise LogReadError(path, f"unsupported W&B log version {data[6]}", offset=6)

    lg = _Log(path)
    pending = _Pending()
    saw_exit = False
    for offset, payload in iter_records(data, path, lg.issues):
        body = _only_history(payload) if payload[:1] == _HISTORY_TAG else None
        if body is not None:  # the usual record: nothing but a history row
            pending.add(body, offset, len(lg.issues))
        else:
            try:
                for fno, wire, body in _fields(payload):
                    if wire != 2:
                        continue
                    if fno == _R_HISTORY:
                        pending.add(body, offset, len(lg.issues))
                    elif fno == _R_CONFIG:
                        for op, key, value in _config_items(body):
                            _set_config(lg.config, op, key, value)
                    elif fno == _R_RUN:
                        _read_run_record(lg, body)
                    elif fno == _R_METRIC:
                        d = _str_fields(body, {1: "name", 2: "glob", 4: "step_metric"})
                        if d.get("step_metric") or d.get("name"):
                            lg.metric_defs.append((d.get("name", ""), d.get("glob", ""), d.get("step_metric", "")))
                    elif fno == _R_EXIT:
                        saw_exit = True
                        lg.exit_code = 0
                        for efno, ewire, v in _fields(body):
                            if efno == 1 and ewire == 0:
                                lg.exit_code = _signed(v)
            except (_Malformed, IndexError, ValueError, RecursionError) as exc:
                lg.issues.append(ReadIssue(path, f"malformed record skipped ({exc})", offset=offset))
                lg.malformed.add(offset)
        if pending.size >= _CHUNK_BYTES:
            _flush(lg, pending)
            pending = _Pending()
    _flush(lg, pending)
    if lg.exit_code:
        lg.issues.append(ReadIssue(path, f"the run exited with code {lg.exit_code}", level="warning"))
    elif not saw_exit and lg.n_rows:
        lg.issues.append(
            ReadIssue(path, "no exit record: the run crashed or was still running when the file was copied", level="warning")
        )
    return _build(lg)


def _read_run_record(lg: _Log, body: bytes) -> None:
    """``RunRecord``: initial config (field 4) and identity (id, project, name, group, tags)."""
    names = {1: "run_id", 3: "project", 6: "group", 7: "job_type", 8: "display_name", 10: "tags"}
    lg.run_info.update(_str_fields(body, names))
    for fno, wire, sub in _fields(body):
        if fno == 4 and wire == 2:
            for op, key, value in _config_items(sub):
                _set_config(lg.config, op, key, value)


def _only_history(payload: bytes) -> memoryview | None:
    """The history body of a record (``payload`` starts with its tag) that holds nothing else:
    what wandb writes for each ``log`` call."""
    n = len(payload)
    if n > 3 and payload[1] >= 0x80 and payload[2] < 0x80:  # the usual two-byte length, inline
        length, pos = (payload[1] & 0x7F) | payload[2] << 7, 3
    else:
        try:
            length, pos = _varint(payload, 1)
        except _Malformed:
            return None
    return memoryview(payload)[pos:] if pos + length == n else None


def _flush(lg: _Log, pending: _Pending) -> None:
    """Decode a chunk of history rows and append its numeric points and per-row step/time."""
    if not pending.bodies:
        return
    chunk = _decode_rows(lg, pending)
    n_rows = len(chunk.offsets)
    lg.n_rows += n_rows
    if not n_rows:
        return
    keys, local, vals, is_num = chunk.keys, chunk.item_rows, chunk.values, chunk.is_num
    rows = local + (lg.n_rows - n_rows)

    steps = np.full(n_rows, np.nan)
    walls = np.full(n_rows, np.nan)
    for name, target in ((_STEP_KEY, steps), (_TIME_KEY, walls)):
        kid = lg.key_ids.get(name.encode())
        if kid is not None:
            sel = is_num & (keys == kid)
            target[local[sel]] = vals[sel]
    found = np.isfinite(steps)
    row_steps = np.where(found, np.clip(steps, -(2.0**62), 2.0**62), 0).astype(np.int64)
    for i in np.flatnonzero(~found).tolist():  # rare: rows without an _step item
        stepnum = chunk.stepnums[i]
        prev = row_steps[i - 1] if i else lg.last_step
        row_steps[i] = stepnum if stepnum is not None else prev + 1  # else: the next log call
    lg.last_step = int(row_steps[-1])

    extra: list[tuple[int, int, float]] = []
    bad_rows: list[int] = []
    media = lg.media_prefixes()
    for i, value in chunk.others.items():  # in file order
        if value is _BAD:
            bad_rows.append(int(local[i]))
            continue
        _non_scalar(lg, int(keys[i]), int(rows[i]), value, media, extra)
    if bad_rows:
        lg.issues.append(
            ReadIssue(lg.path, f"{len(bad_rows)} value(s) that are not JSON skipped", offset=chunk.offsets[bad_rows[0]])
        )
    keep = np.flatnonzero(is_num)
    num_keys, num_rows, num_vals = keys[keep], rows[keep], vals[keep]
    if extra:
        ek, er, ev = zip(*extra)
        num_keys = np.concatenate([num_keys, np.asarray(ek, dtype=np.int64)])
        num_rows = np.concatenate([num_rows, np.asarray(er, dtype=np.int64)])
        num_vals = np.concatenate([num_vals, np.asarray(ev, dtype=np.float64)])
    lg.num_keys.append(num_keys)
    lg.num_rows.append(num_rows)
    lg.num_vals.append(num_vals)
    lg.row_steps.append(row_steps)
    lg.row_walls.append(walls)


def _to_float(v: Any) -> float:
    try:
        return float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf


def _non_scalar(lg: _Log, kid: int, row: int, value: Any, media: tuple[str, ...], extra: list, depth: int = 0) -> None:
    """Route a value that is not a number: text sample, table reference, nested metrics, or skip."""
    key = lg.key_names[kid]
    if key.startswith("_") or depth > _MAX_NESTING:
        return
    prefix = next((p for p in media if key.startswith(p)), None)
    if prefix is not None:
        # wandb-core writes a media dict as separate items: <key>/_type, <key>/path, ...
        if key == prefix + "path" and isinstance(value, str) and value.endswith(".table.json"):
            lg.tables.append((prefix[:-1], row, value))
        return
    if isinstance(value, str):
        lg.texts.append((key, row, value))
    elif isinstance(value, dict):
        if "_type" in value:  # legacy backend: the whole media dict in one value_json
            if value.get("_type") in _TABLE_TYPES and isinstance(value.get("path"), str):
                lg.tables.append((key, row, value["path"]))
            return
        for sub, v in value.items():
            sub_id = lg.key_id(f"{key}/{sub}".encode())
            if type(v) is float or type(v) is int:
                extra.append((sub_id, row, _to_float(v)))
            else:
                _non_scalar(lg, sub_id, row, v, media, extra, depth + 1)
    # lists (histogram bins, ...), booleans and null are not scalar metrics


def _step_metric_of(lg: _Log, key: str) -> str | None:
    """The x-axis W&B would use for ``key``: the last exact ``define_metric``, else the last glob."""
    exact = [sm for name, _, sm in lg.metric_defs if name == key]
    if exact:
        sm = exact[-1]
    else:
        globs = [sm for _, glob, sm in lg.metric_defs if glob and fnmatch.fnmatchcase(key, glob)]
        sm = globs[-1] if globs else ""
    return sm if sm and sm != key else None


def _build(lg: _Log) -> Decoded:
    """Group the decoded points into one RawSeries per key with resolved steps."""
    raw = RawRun(config=lg.config, issues=lg.issues)
    if lg.run_info or lg.exit_code is not None:
        info = dict(lg.run_info)
        if lg.exit_code is not None:
            info["exit_code"] = lg.exit_code
        raw.config["wandb_run"] = info
    keys = np.concatenate(lg.num_keys) if lg.num_keys else np.empty(0, np.int64)
    rows = np.concatenate(lg.num_rows) if lg.num_rows else np.empty(0, np.int64)
    vals = np.concatenate(lg.num_vals) if lg.num_vals else np.empty(0)
    row_steps = np.concatenate(lg.row_steps) if lg.row_steps else np.empty(0, np.int64)
    row_walls = np.concatenate(lg.row_walls) if lg.row_walls else np.empty(0)
    resolver = _StepResolver(lg, keys, rows, vals, row_steps)

    media = lg.media_prefixes()
    # stable: file order kept within a key; on 16-bit ids numpy's stable sort is a radix sort
    order = np.argsort(keys.astype(np.uint16) if len(lg.key_names) <= 1 << 16 else keys, kind="stable")
    bounds = np.flatnonzero(np.diff(keys[order])) + 1
    for idx in np.split(order, bounds) if len(order) else []:
        name = lg.key_names[int(keys[idx[0]])]
        if name.startswith("_") or any(name.startswith(p) for p in media):
            continue
        r = rows[idx]
        series = RawSeries(tag=name, steps=resolver.steps(name, r), values=vals[idx], wall_time=row_walls[r], source=lg.path)
        (raw.eval_series if is_eval_key(name) else raw.series).append(series)

    by_key: dict[str, list[tuple[int, str]]] = {}
    for name, row, text in lg.texts:
        by_key.setdefault(name, []).append((row, text))
    for name, items in by_key.items():
        steps = resolver.steps(name, np.array([row for row, _ in items], dtype=np.int64))
        raw.texts += [TextSample(step=int(s), tag=name, text=t, source=lg.path) for s, (_, t) in zip(steps, items)]
    raw.texts.sort(key=lambda t: t.step)  # stable: file order within a step
    refs = [TableRef(key=name, path=rel, step=resolver.step(name, row)) for name, row, rel in lg.tables]
    raw.restarts = sorted(set(_backward_steps(row_steps) + resolver.restarts))
    raw.issues += resolver.issues
    return Decoded(raw, refs, int(row_steps.max()) if len(row_steps) else None)


class _StepResolver:
    """Steps of a key's points: the row's ``_step``, or the value of its ``define_metric`` step metric."""

    def __init__(self, lg: _Log, keys: np.ndarray, rows: np.ndarray, vals: np.ndarray, row_steps: np.ndarray):
        self.lg, self.keys, self.rows, self.vals, self.row_steps = lg, keys, rows, vals, row_steps
        self._axes: dict[str, np.ndarray | None] = {}
        self._metric_of: dict[str, str | None] = {}
        self._fallback: set[str] = set()  # keys whose step metric could not be used
        self.issues: list[ReadIssue] = []
        self.restarts: list[int] = []

    def _axis(self, metric: str) -> np.ndarray | None:
        """Value of ``metric`` at every row, carried forward from the last row that logged it
        (W&B's handler fills a missing step metric the same way)."""
        if metric not in self._axes:
            kid = self.lg.key_ids.get(metric.encode())
            axis = None
            if kid is not None:
                sel = self.keys == kid
                at = np.full(len(self.row_steps), np.nan)
                at[self.rows[sel]] = self.vals[sel]
                logged = np.isfinite(at)
                self.restarts += _backward_steps(at[logged].astype(np.int64))
                last = np.maximum.accumulate(np.where(logged, np.arange(len(at)), -1))
                axis = np.where(last >= 0, at[np.maximum(last, 0)], np.nan)
            self._axes[metric] = axis
        return self._axes[metric]

    def steps(self, key: str, rows: np.ndarray) -> np.ndarray:
        base = self.row_steps[rows]
        if key not in self._metric_of:
            self._metric_of[key] = _step_metric_of(self.lg, key) if self.lg.metric_defs else None
        metric = self._metric_of[key]
        if metric is None or key in self._fallback:
            return base
        axis = self._axis(metric)
        if axis is None:
            return base
        x = axis[rows]
        if not (np.isfinite(x).all() and (x == np.round(x)).all() and (np.abs(x) < 2.0**62).all()):
            # Mixing two step domains in one series would invent jumps: keep _step for the
            # whole key and say why.
            self._fallback.add(key)
            self.issues.append(
                ReadIssue(
                    self.lg.path,
                    f"{key!r}: step metric {metric!r} missing or not an integer on some rows; _step used instead",
                    level="warning",
                )
            )
            return base
        return x.astype(np.int64)

    def step(self, key: str, row: int) -> int:
        return int(self.steps(key, np.array([row]))[0])


def _backward_steps(steps: np.ndarray) -> list[int]:
    """Steps at which a step sequence goes back (a restart within one log)."""
    if len(steps) < 2:
        return []
    back = np.flatnonzero(np.diff(steps) < 0) + 1
    return [int(s) for s in steps[back]]
