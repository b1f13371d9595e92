"""TFRecord framing with CRC32C checks: a plain per-record walk and a vectorised one.

A TFRecord file is a sequence of records (tensorflow/core/lib/io/record_writer.cc, and
docs/sources.md#tensorboard-event-files)::

    uint64 LE  length
    uint32 LE  masked_crc32c(the 8 length bytes)
    bytes      data[length]
    uint32 LE  masked_crc32c(data)

with ``masked(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8 (mod 2**32)`` over CRC32C (Castagnoli).

Two walkers give the same result:

* :func:`frame_reference` reads one header at a time and checks every CRC with the C ``crc32c``
  package. It is the obviously-correct oracle.
* :func:`frame_fast` finds all plausible record headers at once with numpy (positions whose
  data starts with a given lead byte and whose length checksum matches), then follows the chain
  of records from offset 0, jumping over whole runs of linked headers. Wherever the chain
  breaks it falls back to the same per-header logic as the reference walker, so unusual or
  damaged files are framed identically. It does not check data CRCs: callers verify them
  with :func:`masked_crc_rows` over many records of equal length at once, or one by one with
  :func:`data_crc_ok`.

Damage handling (shared by both): a header cut by the end of the file, or a record whose data
runs past the end (a writer killed mid-write), ends the walk with a warning; a length-checksum
mismatch means framing is lost, so the walk scans forward for the next valid (length, checksum)
pair and reports the skipped bytes; a data-checksum mismatch skips only that record.  A length
field is never used to allocate memory, so a header claiming 2**60 bytes is just reported.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ...frame import ReadIssue
from ...lazy import crc32c as _crc32c
from .. import filebytes

HEADER_BYTES = 12  # uint64 length + uint32 masked crc of the length
FOOTER_BYTES = 4  # uint32 masked crc of the data
OVERHEAD = HEADER_BYTES + FOOTER_BYTES
_MASK_DELTA = 0xA282EAD8
_CRC32C_POLY_REFLECTED = 0x82F63B78
_U64 = struct.Struct("<Q")
_U32 = struct.Struct("<I")
_RESYNC_WINDOW = 1 << 20  # bytes examined per vectorised resync step
_SCAN_BYTES = 4 << 20  # bytes searched at once for candidate headers
_LUT_LENGTHS = 1 << 16  # record lengths below this get their length checksum from a lookup table
_BULK_CRC_MIN_ROWS = 64  # fewer rows are checked one C crc32c call each (crcs_ok_in_bulk)


def masked_crc32c(data: bytes | memoryview) -> int:
    """The TFRecord masked CRC32C of ``data``."""
    crc = _crc32c.crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def _mask_array(crc: np.ndarray) -> np.ndarray:
    crc = crc.astype(np.uint32, copy=False)
    return ((crc >> np.uint32(15)) | (crc << np.uint32(17))) + np.uint32(_MASK_DELTA)


@dataclass
class Framing:
    """Where the records of a file are: ``starts`` (header offsets) and data ``lengths``."""

    starts: np.ndarray  # int64, offset of each record's header; data begins 12 bytes later
    lengths: np.ndarray  # int64
    issues: list[ReadIssue] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.starts)


# -- one header at a time (shared by both walkers) ---------------------------------------------

_OK, _END, _SHORT, _BAD_LENGTH_CRC, _TRUNCATED = range(5)


def _read_header(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    """Classify the record header at ``pos``: ``(status, declared data length)``."""
    n = len(buf)
    if pos == n:
        return _END, 0
    if n - pos < HEADER_BYTES:
        return _SHORT, 0
    length = _U64.unpack_from(buf, pos)[0]
    if masked_crc32c(buf[pos : pos + 8]) != _U32.unpack_from(buf, pos + 8)[0]:
        return _BAD_LENGTH_CRC, length
    if length > n - pos - OVERHEAD:
        return _TRUNCATED, length
    return _OK, length


def first_header_problem(buf: bytes | memoryview, size: int | None = None) -> str | None:
    """Why the record at offset 0 cannot be framed, or None when it can.

    ``buf`` may be only the file's first bytes (at least a header's worth when the file has
    them) when ``size``, the file's size, is given: a file is checked before it is read.
    """
    total = len(buf) if size is None else size
    if total == 0:
        return "empty file"
    if len(buf) < HEADER_BYTES:
        return f"only {total} bytes, less than one record header"
    status, length = _read_header(buf[:HEADER_BYTES], 0)
    if status == _BAD_LENGTH_CRC:
        return "the first record header has a bad length checksum (not a TFRecord file)"
    if length > total - OVERHEAD:
        return f"the first record declares {length} bytes but the file has {total}"
    return None


def _stop_issue(path: str, buf: bytes | memoryview, pos: int, status: int, length: int) -> ReadIssue:
    n = len(buf)
    if status == _SHORT:
        return ReadIssue(
            path,
            f"file ends inside a record header ({n - pos} of {HEADER_BYTES} bytes): the writer was killed or is still writing",
            pos,
            "warning",
        )
    have = n - pos - HEADER_BYTES
    return ReadIssue(
        path,
        f"record declares {length} data bytes but only {max(have, 0)} bytes (with its {FOOTER_BYTES}-byte checksum) remain: "
        "the file is truncated (writer killed or still writing); every complete record before it was read",
        pos,
        "warning",
    )


def data_crc_issue(path: str, pos: int) -> ReadIssue:
    return ReadIssue(path, "record data checksum mismatch: record skipped", pos, "error")


def _resync(path: str, arr: np.ndarray, pos: int, issues: list[ReadIssue]) -> int | None:
    """Framing is lost at ``pos``: find the next valid header, report what was skipped."""
    nxt = find_next_header(arr, pos + 1)
    if nxt is None:
        issues.append(
            ReadIssue(
                path,
                f"record header is corrupt (length checksum mismatch) and no valid record follows: the last {len(arr) - pos} bytes are unreadable",
                pos,
                "error",
            )
        )
    else:
        issues.append(
            ReadIssue(
                path,
                f"record header is corrupt (length checksum mismatch): skipped {nxt - pos} bytes to the next valid record at byte {nxt}",
                pos,
                "error",
            )
        )
    return nxt


def _past_impossible_length(path: str, buf: bytes | memoryview, arr: np.ndarray, pos: int, length: int, issues: list[ReadIssue]) -> int | None:
    """A header with a valid checksum declares more bytes than the file has left.

    Usually the writer was killed mid-record (nothing valid follows: None, the caller reports a
    truncated file).  But when a complete, checksum-valid record follows, the declared length is
    wrong instead (a cut-short file with another appended to it, e.g. by ``cat``, or a damaged
    length that its 32-bit checksum happens to match): skip to that record, as after a header
    whose length checksum fails.
    """
    nxt = find_next_header(arr, pos + HEADER_BYTES)
    while nxt is not None:
        at = _read_header(buf, nxt)[1]
        if data_crc_ok(buf, nxt, at):
            issues.append(
                ReadIssue(
                    path,
                    f"record declares {length} data bytes, more than the rest of the file, yet a valid record follows: "
                    f"skipped {nxt - pos} bytes to it at byte {nxt}",
                    pos,
                    "error",
                )
            )
            return nxt
        nxt = find_next_header(arr, nxt + 1)
    return None


def _after_bad_header(
    path: str, buf: bytes | memoryview, arr: np.ndarray, pos: int, status: int, length: int, issues: list[ReadIssue]
) -> int | None:
    """Where both walkers go on after a header at ``pos`` that is not ``_OK``/``_END``: the offset
    of the next valid record, or None to stop (cut-short file, or nothing valid follows)."""
    if status == _TRUNCATED:
        nxt = _past_impossible_length(path, buf, arr, pos, length, issues)
        if nxt is not None:
            return nxt
    if status in (_SHORT, _TRUNCATED):
        issues.append(_stop_issue(path, buf, pos, status, length))
        return None
    return _resync(path, arr, pos, issues)


# -- the reference walker -----------------------------------------------------------------------


def frame_reference(buf: bytes | memoryview, path: str) -> Framing:
    """Walk the records one by one, verifying the length and data checksum of each."""
    arr = np.frombuffer(buf, dtype=np.uint8)
    starts: list[int] = []
    lengths: list[int] = []
    issues: list[ReadIssue] = []
    pos = 0
    while True:
        status, length = _read_header(buf, pos)
        if status == _END:
            break
        if status == _OK:
            data_at = pos + HEADER_BYTES
            stored = _U32.unpack_from(buf, data_at + length)[0]
            if masked_crc32c(buf[data_at : data_at + length]) == stored:
                starts.append(pos)
                lengths.append(length)
            else:
                issues.append(data_crc_issue(path, pos))
            pos = data_at + length + FOOTER_BYTES
            continue
        nxt = _after_bad_header(path, buf, arr, pos, status, length, issues)
        if nxt is None:
            break
        pos = nxt
    return Framing(np.array(starts, dtype=np.int64), np.array(lengths, dtype=np.int64), issues)


# -- the vectorised walker ----------------------------------------------------------------------


def sliding_rows(arr: np.ndarray, width: int) -> np.ndarray:
    """A read-only (len - width + 1, width) view: row ``p`` is ``arr[p:p + width]``.

    Fancy-indexing its rows gathers many small byte strings with one memcpy each, far
    faster than building an (N, width) index array.
    """
    return as_strided(arr, shape=(max(len(arr) - width + 1, 0), width), strides=(1, 1), writeable=False)


def _u64_at(arr: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    return _typed_view(arr, "<u8")[offsets]


def _u32_at(arr: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    return _typed_view(arr, "<u4")[offsets]


@lru_cache(maxsize=1)
def _length_crc_lut() -> np.ndarray:
    """Masked CRC of every 8-byte length field below 2**16 (built once, ~30 ms)."""
    lengths = np.arange(_LUT_LENGTHS, dtype="<u8")
    return masked_crc_rows(lengths.view(np.uint8).reshape(-1, 8))


def _expected_length_crcs(lengths: np.ndarray) -> np.ndarray:
    out = np.empty(len(lengths), dtype=np.uint32)
    small = lengths < _LUT_LENGTHS
    out[small] = _length_crc_lut()[lengths[small]]
    big = ~small
    if big.any():
        out[big] = masked_crc_rows(np.ascontiguousarray(lengths[big], dtype="<u8").view(np.uint8).reshape(-1, 8))
    return out


def _candidate_headers(arr: np.ndarray, lead_byte: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Offsets (and lengths) of every complete record whose data starts with ``lead_byte``
    and whose length checksum is valid. Some may be false positives inside other records'
    data; the chain walk only ever follows headers reached from offset 0."""
    n = len(arr)
    if lead_byte is None or n < OVERHEAD + 1:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    # data positions holding the lead byte, found and checked a few MiB at a time: a whole-file
    # boolean temporary would cost a page fault per 4 KiB, and the per-candidate arrays of a
    # chunk (~75,000 records of a 4 MiB scalar log) stay in the CPU cache through the dozen
    # array operations below, where whole-file ones (8 MB each per million records) do not;
    # the length's top byte is 0 for any record that fits in a file: a cheap first filter
    u64, u32, lut = _typed_view(arr, "<u8"), _typed_view(arr, "<u4"), _length_crc_lut()
    found: list[np.ndarray] = []
    found_lengths: list[np.ndarray] = []
    stop = n - FOOTER_BYTES - HEADER_BYTES
    for a in range(0, stop, _SCAN_BYTES):
        hits = np.flatnonzero(arr[HEADER_BYTES + a : HEADER_BYTES + min(a + _SCAN_BYTES, stop)] == lead_byte) + a
        hits = hits[arr[hits + 7] == 0]
        lengths = u64[hits]
        fits = lengths <= (n - OVERHEAD - hits).astype(np.uint64)  # the whole record is in the file
        small = lengths < _LUT_LENGTHS
        ok = fits & small
        ok[ok] = lut[lengths[ok]] == u32[hits[ok] + 8]
        big = np.flatnonzero(fits & ~small)
        if len(big):  # records of 64 KiB or more: rare, checked one by one
            ok[big] = [masked_crc32c(int(x).to_bytes(8, "little")) == int(c) for x, c in zip(lengths[big], u32[hits[big] + 8])]
        found.append(hits[ok])
        found_lengths.append(lengths[ok].astype(np.int64))
    if not found:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return np.concatenate(found), np.concatenate(found_lengths)


def _typed_view(arr: np.ndarray, dtype: str) -> np.ndarray:
    """``view[p]`` is the little-endian number stored at byte ``p`` (an unaligned, zero-copy
    view with a 1-byte stride: gathering from it costs one load per element)."""
    size = np.dtype(dtype).itemsize
    return np.ndarray(shape=(max(len(arr) - size + 1, 0),), dtype=dtype, buffer=arr, strides=(1,))


def frame_fast(buf: bytes | memoryview, path: str, *, lead_byte: int | None) -> Framing:
    """Frame the records like :func:`frame_reference`, without checking data CRCs.

    ``lead_byte`` is the first data byte most records start with (TensorBoard: 0x09, the key
    of ``Event.wall_time``); it only decides which records are found in bulk, never which
    records exist: records that start differently are walked one at a time.
    """
    arr = np.frombuffer(buf, dtype=np.uint8)
    cand, cand_len = _candidate_headers(arr, lead_byte)
    nxt = cand + OVERHEAD + cand_len
    # a "run" is a maximal stretch of candidates where each record ends exactly where the next begins
    breaks = np.flatnonzero(nxt[:-1] != cand[1:]) if len(cand) else cand
    last = len(cand) - 1
    starts: list[np.ndarray] = []
    lengths: list[np.ndarray] = []
    issues: list[ReadIssue] = []
    pos = 0
    while True:
        i = int(np.searchsorted(cand, pos))
        if i <= last and cand[i] == pos:
            k = int(np.searchsorted(breaks, i))
            j = int(breaks[k]) if k < len(breaks) else last
            starts.append(cand[i : j + 1])
            lengths.append(cand_len[i : j + 1])
            pos = int(nxt[j])
            continue
        status, length = _read_header(buf, pos)
        if status == _END:
            break
        if status == _OK:
            starts.append(np.array([pos], np.int64))
            lengths.append(np.array([length], np.int64))
            pos += OVERHEAD + length
            continue
        nxt_pos = _after_bad_header(path, buf, arr, pos, status, length, issues)
        if nxt_pos is None:
            break
        pos = nxt_pos
    if len(starts) == 1:  # the usual case: one run of linked records, no copy needed
        return Framing(starts[0], lengths[0], issues)
    if starts:
        return Framing(np.concatenate(starts), np.concatenate(lengths), issues)
    return Framing(np.empty(0, np.int64), np.empty(0, np.int64), issues)


def find_next_header(arr: np.ndarray, start: int) -> int | None:
    """First offset >= ``start`` holding a valid header of a record that fits in the file.

    Scans in windows that grow from 4 KiB to 1 MiB, checking every offset's (length, length-CRC)
    pair with numpy: the cost follows the distance to the hit, so many damaged records close
    together cost little each.
    """
    n = len(arr)
    pos = start
    window = 4096
    while pos + OVERHEAD <= n:
        # every valid header holds a non-zero byte (the masked CRC of a zero length is
        # 0x07980329), so none starts more than 11 bytes before the next non-zero byte: a zero
        # run (a pre-allocated or crashed writer's tail) is skipped at memory speed
        pos = max(pos, filebytes.next_nonzero(arr, pos) - (HEADER_BYTES - 1))
        if pos + OVERHEAD > n:
            break
        stop = min(pos + window, n - OVERHEAD + 1)
        window = min(window * 2, _RESYNC_WINDOW)
        offs = np.arange(pos, stop, dtype=np.int64)
        lengths = _u64_at(arr, offs)
        fits = np.flatnonzero(lengths <= (n - OVERHEAD - offs).astype(np.uint64))
        if len(fits):
            ok = _expected_length_crcs(lengths[fits]) == _u32_at(arr, offs[fits] + 8)
            hit = np.flatnonzero(ok)
            if len(hit):
                return int(offs[fits[hit[0]]])
        pos = stop
    return None


# -- CRC32C of many equal-length byte strings at once ----------------------------------------------


@lru_cache(maxsize=1)
def _crc_table() -> np.ndarray:
    """The byte-wise CRC32C table (reflected Castagnoli polynomial)."""
    t = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        t = np.where(t & 1, (t >> np.uint32(1)) ^ np.uint32(_CRC32C_POLY_REFLECTED), t >> np.uint32(1)).astype(np.uint32)
    return t


class _ShiftTables:
    """``table(k)[b]``: the zero-init CRC register after byte ``b`` followed by ``k`` zero bytes.

    CRC is linear over GF(2): for equal-length messages ``crc(m) = crc(r) ^ lin(m ^ r)`` where
    ``lin`` is the zero-init, no-final-xor CRC, and ``lin`` of a string is the XOR of each byte's
    contribution ``table(bytes after it)[byte]``. So only the byte columns that differ from a
    reference row cost anything.
    """

    def __init__(self) -> None:
        self._tables = _crc_table()[None, :].copy()

    def upto(self, k: int) -> np.ndarray:
        have = len(self._tables)
        if k >= have:
            base = _crc_table()
            rows = [self._tables]
            t = self._tables[-1]
            for _ in range(k + 1 - have):
                t = base[t & np.uint32(0xFF)] ^ (t >> np.uint32(8))
                rows.append(t[None, :])
            self._tables = np.concatenate(rows)
        return self._tables


_SHIFT = _ShiftTables()
_BLOCK_ROWS = 1 << 15  # rows per cache-sized block in masked_crc_rows


def varying_columns(rows: np.ndarray) -> np.ndarray:
    """Boolean mask of the columns of a uint8 (N, L) array that are not constant."""
    n, width = rows.shape
    if n == 0 or width == 0:
        return np.zeros(width, dtype=bool)
    # Reducing an (N, L) array over axis 0 with a short L is slow in numpy (an inner loop of L
    # per row); folding k rows into one (N/k, k*L) row makes the inner loop long.
    k = 256
    m = (n // k) * k
    lo = rows[0].copy()
    hi = rows[0].copy()
    if m:
        folded = rows[:m].reshape(m // k, k * width)
        lo = np.minimum(lo, folded.min(axis=0).reshape(k, width).min(axis=0))
        hi = np.maximum(hi, folded.max(axis=0).reshape(k, width).max(axis=0))
    if m < n:
        lo = np.minimum(lo, rows[m:].min(axis=0))
        hi = np.maximum(hi, rows[m:].max(axis=0))
    return lo != hi


def masked_crc_rows(rows: np.ndarray, vary: np.ndarray | None = None) -> np.ndarray:
    """Masked CRC32C of each row of a uint8 (N, L) array, as uint32.

    ``vary`` (from :func:`varying_columns`) may be passed when already known.
    """
    n, width = rows.shape
    if n == 0:
        return np.empty(0, dtype=np.uint32)
    ref = np.ascontiguousarray(rows[0])
    base = _crc32c.crc32c(ref.tobytes())
    if vary is None:
        vary = varying_columns(rows)
    cols = np.flatnonzero(vary)
    crc = np.full(n, base, dtype=np.uint32)
    if len(cols):
        shift = _SHIFT.upto(width - 1)
        # one table per varying column, pre-permuted so the lookup takes the raw byte:
        # tables[c][b] = contribution of (b ^ ref[c]) at column c
        permute = (np.arange(256, dtype=np.uint8)[None, :] ^ ref[cols][:, None]).astype(np.intp)
        tables = np.take_along_axis(shift[width - 1 - cols], permute, axis=1)
        for b0 in range(0, n, _BLOCK_ROWS):
            block = rows[b0 : b0 + _BLOCK_ROWS][:, cols].T.copy()
            out = crc[b0 : b0 + _BLOCK_ROWS]
            for k in range(len(cols)):
                out ^= np.take(tables[k], block[k])
    return _mask_array(crc)


# -- verifying the CRCs of many equal-length records with one C CRC ----------------------------------
#
# For CRC32C (as for zlib's CRC-32), crc(A + B) = shift(crc(A), len(B)) ^ crc(B), where
# shift(v, n) multiplies v by x**(8n) modulo the polynomial: a GF(2)-linear, invertible map
# (zlib's crc32_combine). So the CRC of rows laid end to end depends only on each row's CRC
# and width, and any row may be replaced by another of the same width and CRC. A framed record
# as it sits in the file is its data d (L bytes) followed by its stored masked CRC s, and
#     crc(d + s) = shift(crc(d) ^ s, 4) ^ K4
# (K4 = crc of 4 zero bytes; in the reflected representation the CRC of the 4 bytes holding
# the little-endian number s is shift(s, 4) ^ K4). When the record is intact, crc(d) =
# unmask(s), and the row has the same CRC as the stand-in row of L zero bytes followed by
# y = unmask(s) ^ s ^ crc(L zero bytes). So the block of N records (the contiguous (N, L + 4)
# array the reader gathers anyway) is intact when one C CRC over it equals one C CRC over the
# N stand-in rows, built from the stored CRCs a cache-sized chunk at a time: two passes at
# memory speed, no per-row work in Python. A single damaged record always shows (shift is
# invertible); several cancel only if their errors line up exactly once multiplied by
# *different* powers of x, which for independent damage has probability about 2**-32, the
# level of CRC32C itself (a plain XOR of the CRCs would miss the same bit flipped in two
# records).

_STAND_IN_BYTES = 1 << 20  # stand-in rows built and checksummed at once


def _unmask_array(masked: np.ndarray) -> np.ndarray:
    r = masked.astype(np.uint32) - np.uint32(_MASK_DELTA)
    return (r << np.uint32(15)) | (r >> np.uint32(17))


def crcs_ok_in_bulk(block: np.ndarray) -> bool:
    """Whether every row of a C-contiguous uint8 (N, L + 4) array, a record's L data bytes
    followed by its stored masked CRC32C (as in the file), is intact; checked with one C CRC
    over the block and one over its stand-in rows (see the comment above). When False, find
    the bad rows with :func:`masked_crc_rows`."""
    n, width = block.shape
    length = width - FOOTER_BYTES
    if n == 0:
        return True
    if not block.flags.c_contiguous:
        raise ValueError("crcs_ok_in_bulk needs a C-contiguous block")
    stored = block[:, length:].view("<u4")[:, 0]
    if n < _BULK_CRC_MIN_ROWS:
        # a few rows: one C call per row costs less than setting up the stand-in rows
        # (a 1,000-record poll of ``watch`` has dozens of such small groups)
        return all(masked_crc32c(row[:length]) == s for row, s in zip(block, stored.tolist()))
    stand_in_crc = _unmask_array(stored) ^ stored ^ np.uint32(_crc32c.crc32c(bytes(length)))
    chunk = max(1, _STAND_IN_BYTES // width)
    stand_in = np.zeros((min(chunk, n), width), dtype=np.uint8)
    footers = stand_in[:, length:].view("<u4")[:, 0]
    crc = 0
    for a in range(0, n, chunk):
        part = stand_in_crc[a : a + chunk]
        footers[: len(part)] = part
        crc = _crc32c.crc32c(stand_in[: len(part)].data, value=crc)
    return crc == _crc32c.crc32c(block.data)  # the buffer, no copy


def data_crc_ok(buf: bytes | memoryview, pos: int, length: int) -> bool:
    """Check the data checksum of the (framed) record whose header is at ``pos``."""
    data_at = pos + HEADER_BYTES
    return masked_crc32c(buf[data_at : data_at + length]) == _U32.unpack_from(buf, data_at + length)[0]
