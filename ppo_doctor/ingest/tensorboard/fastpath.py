"""The bulk decoder of TensorBoard event files: records of equal length gathered into one
(N, L) byte matrix, their data CRCs verified together (:func:`.tfrecord.crcs_ok_in_bulk`, with a
per-record fallback that names the damaged ones), and decoded with numpy through a *template*:
the first row is decoded field by field, which says where the wall_time, step, tag and value
bytes sit; every row whose other bytes equal the template's has the same structure, so its
payload can be read as columns of the matrix. Rows that match no template, and every
non-scalar record, go through the per-record decoder (:func:`.collect.decode_reference`).
"""

from __future__ import annotations

from typing import Iterator, NamedTuple

import numpy as np

from . import tfrecord
from .protowire import WIRE_I32, WIRE_I64, WIRE_LEN, WIRE_VARINT, ProtoDecodeError, as_varint, iter_fields_at
from .collect import SLOT_BITS, Collector, decode_reference
from .events import WALL_TIME_KEY, decode_metadata, shape_elements

# -- templates: where the payload bytes of a simple scalar record are ------------------------------


class _Slot(NamedTuple):
    """One scalar of a template record: its tag bytes and its value bytes."""

    tag_start: int
    tag_end: int
    value_at: int
    value_dtype: str  # "<f4" or "<f8"
    tensor: bool
    plugin: str | None


class _Template(NamedTuple):
    """The layout of a record holding only scalars; see :func:`_parse_template`."""

    wall_at: int | None
    step_at: int | None
    step_len: int
    slots: list[_Slot]
    free: np.ndarray  # bool per byte: payload or tag bytes, which may differ between rows

    def step_varint_ok(self, rows: np.ndarray) -> np.ndarray:
        """Rows whose step bytes form a varint of exactly the template's length."""
        ok = np.ones(len(rows), dtype=bool)
        if self.step_at is None:
            return ok
        cols = rows[:, self.step_at : self.step_at + self.step_len]
        ok &= (cols[:, -1] & 0x80) == 0
        for k in range(self.step_len - 1):
            ok &= (cols[:, k] & 0x80) != 0
        return ok


class _NotTemplatable(Exception):
    pass


def _parse_template(data: bytes) -> _Template | None:
    """Layout of a record if it is an Event with wall_time/step and a summary of scalar values
    only, each written in a way whose position cannot move (fixed-size value fields); else None.

    Anything unusual (repeated or unknown fields, a oneof set twice, non-scalar tensors) gives
    None, so such records always take the reference decoder.
    """
    try:
        return _parse_template_or_raise(data)
    except (_NotTemplatable, ProtoDecodeError):
        return None


def _parse_template_or_raise(data: bytes) -> _Template:
    wall_at = step_at = None
    step_len = 0
    slots: list[_Slot] = []
    free = np.zeros(len(data), dtype=bool)
    seen: set[int] = set()
    for f in iter_fields_at(data):
        if f.number in seen:
            raise _NotTemplatable
        seen.add(f.number)
        if f.number == 1 and f.wire_type == WIRE_I64:
            wall_at = f.value_start
        elif f.number == 2 and f.wire_type == WIRE_VARINT:
            step_at, step_len = f.value_start, f.value_end - f.value_start
        elif f.number == 5 and f.wire_type == WIRE_LEN:
            for v in iter_fields_at(data, f.value_start, f.value_end):
                if v.number != 1 or v.wire_type != WIRE_LEN:
                    raise _NotTemplatable
                slots.append(_parse_slot(data, v.value_start, v.value_end))
        else:
            raise _NotTemplatable
        free[f.value_start : f.value_end] = f.number in (1, 2)
    if not slots:
        raise _NotTemplatable
    for s in slots:
        free[s.tag_start : s.tag_end] = True
        free[s.value_at : s.value_at + (4 if s.value_dtype == "<f4" else 8)] = True
    return _Template(wall_at, step_at, step_len, slots, free)


def _parse_slot(data: bytes, start: int, end: int) -> _Slot:
    tag_span = value = None
    plugin: str | None = None
    seen: set[int] = set()
    for f in iter_fields_at(data, start, end):
        if f.number in seen:
            raise _NotTemplatable
        seen.add(f.number)
        if f.number == 1 and f.wire_type == WIRE_LEN:
            tag_span = (f.value_start, f.value_end)
        elif f.number == 2 and f.wire_type == WIRE_I32:
            value = (f.value_start, "<f4", False)
        elif f.number == 8 and f.wire_type == WIRE_LEN:
            at, dtype = _scalar_tensor_layout(data, f.value_start, f.value_end)
            value = (at, dtype, True)
        elif f.number == 9 and f.wire_type == WIRE_LEN:
            plugin = decode_metadata(f.value)[0]
        else:
            raise _NotTemplatable
    if tag_span is None or value is None or (2 in seen and 8 in seen):
        raise _NotTemplatable
    return _Slot(tag_span[0], tag_span[1], value[0], value[1], value[2], plugin)


def _scalar_tensor_layout(data: bytes, start: int, end: int) -> tuple[int, str]:
    """Position and dtype of the single float/double of a scalar tensor."""
    dtype = None
    value_at = None
    seen: set[int] = set()
    for f in iter_fields_at(data, start, end):
        if f.number in seen:
            raise _NotTemplatable
        seen.add(f.number)
        if f.number == 1 and f.wire_type == WIRE_VARINT:
            dtype = {1: "<f4", 2: "<f8"}.get(as_varint(f.value))
        elif f.number == 2 and f.wire_type == WIRE_LEN:
            if shape_elements(f.value) != 1:
                raise _NotTemplatable
        elif (f.number, f.wire_type, f.value_end - f.value_start) in (
            (5, WIRE_LEN, 4),  # packed float_val with one element
            (5, WIRE_I32, 4),
            (6, WIRE_LEN, 8),  # packed double_val
            (6, WIRE_I64, 8),
            (4, WIRE_LEN, 4),  # tensor_content
            (4, WIRE_LEN, 8),
        ):
            value_at = (f.value_start, f.number, f.value_end - f.value_start)
        else:
            raise _NotTemplatable
    if dtype is None or value_at is None:
        raise _NotTemplatable
    at, number, size = value_at
    want = {"<f4": (5, 4), "<f8": (6, 8)}[dtype]
    if (number, size) != want and (number, size) != (4, want[1]):
        raise _NotTemplatable
    return at, dtype


# -- decoding records ---------------------------------------------------------------------------------

_SUPER_CHUNK_BYTES = 64 << 20  # file bytes whose records are grouped and decoded together (bounds memory)
_GATHER_BYTES = 1 << 20  # file bytes gathered at once: fits the CPU cache
_BLOCK_BYTES = 1 << 20  # bytes of equal-length records decoded at once: fits the CPU cache
MIN_GROUP = 32  # smaller equal-length groups are not worth a template
MAX_FAST_LENGTH = 4096  # longer records (graphs, histograms, images) take the reference path
_MAX_PEELED = 16  # distinct tag rows split off one pass each before the rest is sorted
_MAX_TEMPLATES = 16  # per group: distinct layouts tried before the rest goes the slow way


def decode_fast(buf: memoryview, padded: np.ndarray, framing: tfrecord.Framing, col: Collector, *, min_group: int = MIN_GROUP) -> None:
    """Decode every framed record: in bulk where a template applies, else one by one.

    ``padded`` is the file's bytes followed by at least ``MAX_FAST_LENGTH + 4`` spare bytes, so
    fixed-width row gathers may run past the end of the file.  ``min_group``: smaller groups of
    equal-length records are decoded one by one (``watch`` polls a few records of each length
    at a time, and lowers it).
    """
    slow: list[np.ndarray] = []
    for span in _spans(framing.starts, _SUPER_CHUNK_BYTES):
        for length, g_rec, block in _gather_by_length(padded, framing, span, slow):
            if len(g_rec) < min_group:
                slow.append(g_rec)
            else:
                slow.append(_decode_group(block, g_rec, length, col))
    rest = np.sort(np.concatenate(slow)) if slow else np.empty(0, np.int64)
    for r in rest.tolist():
        start, length = int(framing.starts[r]), int(framing.lengths[r])
        if not tfrecord.data_crc_ok(buf, start, length):
            col.issues.append(tfrecord.data_crc_issue(col.path, start))
            continue
        decode_reference(buf, r, start, length, col)


def _spans(starts: np.ndarray, nbytes: int) -> list[tuple[int, int]]:
    """``(first, end)`` index ranges of ``starts`` (increasing offsets) covering about
    ``nbytes`` of the file each."""
    if not len(starts):
        return []
    cuts = np.searchsorted(starts, np.arange(int(starts[0]) + nbytes, int(starts[-1]) + 1, nbytes))
    # return_counts: the plain np.unique imports numpy.ma (benchmarks/RESULTS.md "One small check")
    edges = np.unique(np.concatenate([[0], cuts, [len(starts)]]), return_counts=True)[0].tolist()
    return list(zip(edges[:-1], edges[1:]))


def _gather_by_length(
    padded: np.ndarray, framing: tfrecord.Framing, span: tuple[int, int], slow: list[np.ndarray]
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Yield ``(length, record indices, rows)`` for the records of ``span`` grouped by data
    length; ``rows`` is a contiguous (N, length + 4) copy of their data and stored CRC.
    Records too long for the bulk path are appended to ``slow``.

    Records of one length are scattered through the file. Gathering each ~1 MiB stretch in file
    order first (a sequential, prefetch-friendly read) and regrouping it while it sits in the
    CPU cache is several times faster than gathering every group straight from the file.
    """
    first, end = span
    lengths = framing.lengths[first:end]
    starts = framing.starts[first:end]
    fast = lengths <= MAX_FAST_LENGTH
    if not fast.all():
        slow.append(np.flatnonzero(~fast) + first)
    counts = np.bincount(lengths[fast])
    groups = {length: (np.empty(c, np.int64), np.empty((c, length + tfrecord.FOOTER_BYTES), np.uint8)) for length, c in enumerate(counts.tolist()) if c}
    filled = dict.fromkeys(groups, 0)
    for a, b in _spans(starts, _GATHER_BYTES):
        sel = np.flatnonzero(fast[a:b]) + a
        if not len(sel):
            continue
        l_sel = lengths[sel]
        stretch = tfrecord.sliding_rows(padded, int(l_sel.max()) + tfrecord.FOOTER_BYTES)[starts[sel] + tfrecord.HEADER_BYTES]
        order = np.argsort(l_sel.astype(np.uint16), kind="stable")  # a radix sort for 16-bit keys
        sorted_lengths = l_sel[order]
        edges = [0, *(np.flatnonzero(sorted_lengths[1:] != sorted_lengths[:-1]) + 1).tolist(), len(order)]
        for x, y in zip(edges[:-1], edges[1:]):
            idx = order[x:y]
            length = int(sorted_lengths[x])
            g_rec, g_rows = groups[length]
            at = filled[length]
            g_rec[at : at + len(idx)] = sel[idx] + first
            # np.take of whole contiguous rows is several times faster than fancy-indexing a
            # column range, even with the extra copy of the wanted columns
            g_rows[at : at + len(idx)] = np.take(stretch, idx, axis=0)[:, : length + tfrecord.FOOTER_BYTES]
            filled[length] = at + len(idx)
    for length, (g_rec, g_rows) in groups.items():
        yield length, g_rec, g_rows


def _decode_group(block: np.ndarray, g_rec: np.ndarray, length: int, col: Collector) -> np.ndarray:
    """Verify and decode records of one length in bulk; return the record indices left over.

    ``block`` holds each record's data followed by its 4-byte stored (masked) CRC. The CRCs
    are checked all at once (:func:`.tfrecord.crcs_ok_in_bulk`); only when that fails is each
    row's CRC computed to find the damaged records. Decoding then runs on cache-sized blocks
    of rows: a column operation on a row-major matrix touches every row's cache line.
    """
    if not tfrecord.crcs_ok_in_bulk(block):
        stored = _column(block, length, "<u4")
        bad = tfrecord.masked_crc_rows(block[:, :length]) != stored
        for r in g_rec[bad].tolist():
            col.issues.append(tfrecord.data_crc_issue(col.path, int(col.starts[r])))
        block, g_rec = block[~bad], g_rec[~bad]
    left = [g_rec[:0]]
    rows_per_block = max(MIN_GROUP, _BLOCK_BYTES // block.shape[1])
    for b0 in range(0, len(block), rows_per_block):
        rows = block[b0 : b0 + rows_per_block]
        rec = g_rec[b0 : b0 + rows_per_block]
        vary = tfrecord.varying_columns(rows)
        for part in _split_by_step_width(rows):
            whole = len(part) == len(rows)
            left.append(_decode_layouts(rows if whole else rows[part], rec[part], length, col, vary if whole else None))
    return np.concatenate(left)


def _split_by_step_width(rows: np.ndarray) -> list[np.ndarray]:
    """Row indices grouped by the byte width of the step varint.

    Writers serialise fields in number order, so an Event starts ``09 <wall_time> 10 <step>``.
    Among records of one length, those whose step takes k bytes have a tag k bytes shorter (or
    another layout); splitting on k first leaves, in practice, one layout per part. The split
    is only a speed-up: every part is still matched against a template.
    """
    n, width = rows.shape
    if width < 11:
        return [np.arange(n)]
    alive = (rows[:, 0] == WALL_TIME_KEY) & (rows[:, 9] == 0x10)
    k = np.zeros(n, dtype=np.uint8)
    for j in range(10, min(20, width)):
        k += alive
        alive &= rows[:, j] >= 0x80
        if not alive.any():
            break
    if k.min() == k.max():
        return [np.arange(n)]
    return _split_on(k)


def _split_on(key: np.ndarray) -> list[np.ndarray]:
    """Indices of equal ``key`` values (uint8), each in ascending order."""
    order = np.argsort(key, kind="stable")  # radix sort for uint8 keys
    edges = [0, *(np.flatnonzero(np.diff(key[order])) + 1).tolist(), len(key)]
    return [order[a:b] for a, b in zip(edges[:-1], edges[1:])]


def _decode_layouts(rows: np.ndarray, rec: np.ndarray, length: int, col: Collector, vary: np.ndarray | None) -> np.ndarray:
    """Decode rows (``length`` data bytes then the stored CRC) through templates taken from the
    first still-undecoded row, until all are decoded or ``_MAX_TEMPLATES`` were tried; return
    the record indices left over. ``vary``: :func:`.tfrecord.varying_columns` of ``rows`` when
    already known."""
    left: list[np.ndarray] = []
    todo = np.arange(len(rows))
    for _ in range(_MAX_TEMPLATES):
        if not len(todo):
            break
        whole = len(todo) == len(rows)
        sub = rows if whole else rows[todo]
        ref = sub[0]
        tpl = _parse_template(ref[:length].tobytes())
        if tpl is None:
            left.append(rec[todo[:1]])
            todo = todo[1:]
            continue
        if vary is None or not whole:
            vary = tfrecord.varying_columns(sub)
        # a row has the template's layout when it equals the reference row at every byte that
        # is not payload (wall_time, step, tag text, value) and its step varint has the same width
        structural = np.flatnonzero(vary[:length] & ~tpl.free)
        match = tpl.step_varint_ok(sub)
        if len(structural):
            match &= ~np.any(sub[:, structural] != ref[structural], axis=1)
        if match.all():
            _emit(tpl, sub, rec[todo], length, col, vary)
            todo = todo[:0]
        else:
            _emit(tpl, sub[match], rec[todo[match]], length, col, vary)
            todo = todo[~match]
    left.append(rec[todo])
    return np.concatenate(left)


def _emit(tpl: _Template, rows: np.ndarray, rec: np.ndarray, length: int, col: Collector, vary: np.ndarray) -> None:
    """Decode the payload of rows (CRC-checked, ``length`` data bytes each) that share
    ``tpl``'s layout. ``vary`` marks columns that may differ between the rows (a superset is
    fine); rows whose tag bytes differ are split into one part per tag."""
    if not len(rows):
        return
    tags = np.zeros(length, dtype=bool)
    for s in tpl.slots:
        tags[s.tag_start : s.tag_end] = True
    tag_cols = np.flatnonzero(vary[:length] & tags)
    n = len(rows)
    wall = np.zeros(n) if tpl.wall_at is None else _column(rows, tpl.wall_at, "<f8").copy()
    step = np.zeros(n, dtype=np.int64) if tpl.step_at is None else _varints(rows, tpl.step_at, tpl.step_len)
    parts = _split_equal_rows(rows[:, tag_cols]) if len(tag_cols) else [slice(None)]
    for slot, s in enumerate(tpl.slots):
        pos = (rec << SLOT_BITS) | slot
        with np.errstate(invalid="ignore"):  # signalling NaNs become quiet NaNs, as in struct.unpack
            values = _column(rows, s.value_at, s.value_dtype).astype(np.float64)
        for part in parts:
            first = (part.start or 0) if isinstance(part, slice) else int(part[0])
            tag = rows[first, s.tag_start : s.tag_end].tobytes().decode("utf-8", errors="replace")
            col.add_points(tag, pos[part], step[part], values[part], wall[part], s.tensor, s.plugin)


def _row_period(block: np.ndarray, max_period: int = 1024) -> int | None:
    """The smallest p with ``block[i] == block[i + p]`` for every i, if p <= ``max_period``
    and the first repeat of row 0 is at p; else None."""
    n = len(block)
    head = block[1 : min(n, max_period + 1)]
    again = np.flatnonzero((head == block[0]).all(axis=1))
    if not len(again):
        return None
    p = int(again[0]) + 1
    return p if np.array_equal(block[p:], block[:-p]) else None


def _column(rows: np.ndarray, at: int, dtype: str) -> np.ndarray:
    """The ``dtype`` value stored at byte ``at`` of every row, as a zero-copy strided view
    (rows' last axis must be contiguous; unaligned views are fine for numpy)."""
    size = np.dtype(dtype).itemsize
    return rows[:, at : at + size].view(dtype)[:, 0]


def _varints(rows: np.ndarray, at: int, width: int) -> np.ndarray:
    """The ``width``-byte varints at column ``at`` of every row, as int64 (two's complement
    for negatives, like :func:`.protowire.as_int64`); the widths were checked beforehand."""
    kind = np.uint32 if width <= 4 else np.uint64  # 4 groups of 7 bits fit in 32 bits
    acc = (rows[:, at] & np.uint8(0x7F)).astype(kind)
    for k in range(1, width):
        acc |= (rows[:, at + k] & np.uint8(0x7F)).astype(kind) << kind(7 * k)
    return acc.astype(np.int64) if width <= 4 else acc.view(np.int64)


def _split_equal_rows(block: np.ndarray) -> list[np.ndarray | slice]:
    """Index sets (ascending index arrays, or slices), whose rows of the uint8 (N, k) array
    are all equal.

    Writers log the same tags in the same order at every step, so the rows of a layout usually
    cycle through its tags with a fixed period: then the parts are the slices ``j::period``
    (one comparison pass proves it), and selecting them copies nothing. Otherwise the rows are packed into 64-bit words and each
    distinct row is peeled off with a word-wise comparison.
    """
    period = _row_period(block)
    if period:
        return [slice(j, None, period) for j in range(period)]
    n, width = block.shape
    packed = np.zeros((n, -(-width // 8) * 8), dtype=np.uint8)
    packed[:, :width] = block
    words = packed.view("<u8")
    parts: list[np.ndarray | slice] = []
    assigned = np.zeros(n, dtype=bool)
    first = 0
    while len(parts) < _MAX_PEELED:
        eq = words[:, 0] == words[first, 0]
        for k in range(1, words.shape[1]):
            eq &= words[:, k] == words[first, k]
        parts.append(np.flatnonzero(eq))
        assigned |= eq
        first = int(np.argmin(assigned))
        if assigned[first]:
            return parts
    # many distinct rows (thousands of tags of one layout): peeling costs a pass per tag,
    # quadratic in tags (benchmarks/RESULTS.md, "Hostile inputs"); group the rest by sorting them
    # as opaque byte strings
    rest = np.flatnonzero(~assigned)
    keys = np.ascontiguousarray(packed[rest]).view(np.dtype((np.void, packed.shape[1]))).ravel()
    _, inverse = np.unique(keys, return_inverse=True)
    order = np.argsort(inverse.ravel(), kind="stable")
    groups = np.split(rest[order], np.flatnonzero(np.diff(inverse.ravel()[order])) + 1)
    return parts + sorted(groups, key=lambda g: int(g[0]))

