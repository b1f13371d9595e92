"""The history rows of a ``.wandb`` file, decoded in bulk into :class:`Log`, the column-wise
state of one file (keys, numeric points, texts, tables, config, issues) that the reader then
turns into a run (:mod:`.binary`)."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from ...lazy import pd
from ...frame import ReadIssue
from .. import numparse
from ..tabular import float_or_inf, parse_int
from .proto import Malformed, fields, signed, spans


@dataclass
class Log:
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
CHUNK_BYTES = 8 << 20  # history bytes per chunk: bounds the memory of one bulk decode
_LOCKSTEP_MIN = 16  # fewer rows still being walked: finish them in Python, not one numpy round per field
_ITEM, _STEP = 1, 2  # HistoryRecord: repeated HistoryItem item = 1; HistoryStep step = 2
_TAG_KEY, _TAG_NESTED = 0x0A, 0x12  # HistoryItem key = 1, nested_key = 2 (length-delimited)
_TAG_VALUE = (0x82, 0x01)  # HistoryItem value_json = 16 (length-delimited): two-byte tag
_LOW_BYTES = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)  # low k bytes of a word
_HASH_MUL = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio (Knuth's multiplicative hashing)


def _varints(buf: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised :func:`varint`: values (uint64), positions after them, and which are invalid
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
class Pending:
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


class Rows(NamedTuple):
    """Columns of a chunk of history rows, after dropping the malformed ones."""

    offsets: list[int]  # record offset per row
    stepnums: list[int | None]  # HistoryRecord.step.num per row (None when absent)
    item_rows: np.ndarray  # row of each item
    keys: np.ndarray  # key id of each item
    values: np.ndarray  # float64 value of each numeric item
    is_num: np.ndarray  # the item's value is a JSON number
    others: dict[int, Any]  # item -> its parsed non-numeric value (or NOT_JSON)


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
            for field_no, field_wire, a, b, _ in spans(blob, int(cur[row]), int(ends[row])):
                if field_no == _ITEM and field_wire == 2:
                    found_items.append((row, n + len(found_items), a, b))
                elif field_no == _STEP and field_wire == 2:
                    found_steps.append((row, a, b))
        except Malformed as exc:
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
        for _ in spans(blob, start, end):
            pass
    except Malformed as exc:
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
                for sfno, swire, v in fields(blob[start:stop]):
                    if sfno == 1 and swire == 0:
                        out[row] = signed(v)
            except Malformed as exc:
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
    for fno, wire, v in fields(body):
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


def decode_rows(lg: Log, pending: Pending) -> Rows:
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
        except Malformed as exc:
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
        value = parse_json(texts[i] if i in texts else blob[value_start[i] : item_stop[i]])
        if type(value) is float or type(value) is int:  # bool is not a metric: exact types
            values[i], is_num[i] = float_or_inf(value), True
        else:
            others[i] = value

    sel = np.flatnonzero(keep)
    new_index = np.cumsum(keep) - 1
    renumber = np.cumsum(good_rows) - 1
    return Rows(
        offsets=[o for o, g in zip(pending.offsets, good_rows.tolist()) if g],
        stepnums=[s for s, g in zip(stepnums, good_rows.tolist()) if g],
        item_rows=renumber[item_row[sel]],
        keys=keys[sel],
        values=values[sel],
        is_num=is_num[sel],
        others={int(new_index[i]): v for i, v in others.items()},
    )


def _word_view(buf: np.ndarray) -> np.ndarray:
    """A view of ``buf`` as little-endian uint64 starting at every byte (unaligned reads): a key's
    bytes eight at a time, for hashing and comparing them without a Python object per key."""
    return np.ndarray((len(buf) - 7,), dtype="<u8", buffer=buf, offset=0, strides=(1,))


def _key_ids(
    lg: Log, blob: bytes, buf: np.ndarray, n_items: int, at: np.ndarray, start: np.ndarray, stop: np.ndarray, odd: dict[int, Any]
) -> np.ndarray:
    """Key id of every item: ``blob[start:stop]`` for the items ``at``, ``odd[i]`` for the others.

    The keys of ``at`` are told apart without a Python object per item: a hash of their bytes
    groups them (pandas' hash table), then every item is compared word by word with the first
    item of its group; the rare item that differs (a hash collision) joins ``odd``.  New keys
    get ids in order of first appearance, so series come out in file order.
    """
    length = stop - start
    words = _word_view(buf)
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


def parse_json(text: bytes) -> Any:
    """A ``value_json`` that numparse did not decode (text, dict, list, a number it leaves to json):
    parsed alone (Python's json takes NaN/Infinity), or NOT_JSON."""
    try:
        return json.loads(text, parse_int=parse_int)
    except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
        return NOT_JSON


NOT_JSON = object()  # marker of a value_json that is not JSON


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
