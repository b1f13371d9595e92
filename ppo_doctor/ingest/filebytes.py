"""Bounded reads of untrusted files, shared by the readers (docs/architecture.md#inputs-are-untrusted).

A file named like a log may be anything: a sparse 20 GB file of zeros, a log whose crashed or
pre-allocating writer left gigabytes of zero bytes after the last record, a FIFO.  The helpers
here keep what a read costs proportional to what the file *holds*, not to its size:

* :func:`read_lines_head` reads a file's first lines, however long, up to a limit, so a
  sniffer or a reader can check a file's header before it reads anything else;
* :func:`load_padded` reads a file in windows of :data:`WINDOW` bytes into a zero-initialised
  numpy array (``calloc``: the kernel gives its pages on first write), and copies only the
  windows that hold a non-zero byte: a run of zero bytes commits no memory, so peak memory
  follows the non-zero content (measured in ``benchmarks/RESULTS.md``, "Hostile inputs"); the
  holes of a sparse file are not even read (``SEEK_DATA``);
* :func:`next_nonzero` finds the next non-zero byte of an array with ``np.count_nonzero`` on
  windows (a SIMD pass at memory speed), so a scanner can jump over a zero run instead of
  examining every offset in it;
* :func:`read_capped_lines` reads a text file with its over-long lines left out as they stream
  by, so one 350 MB line never sits in memory.

What is left to the readers: a non-zero region is loaded like any content (a file of random
bytes named like an event file is refused on its first header, not scanned).
"""

from __future__ import annotations

import errno
import io
import os
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .storage import has_fileno, open_binary, size_of

WINDOW = 1 << 20  # bytes read, tested for zeros and searched at once


def load_padded(fh: io.BufferedIOBase, pad: int) -> tuple[np.ndarray, int]:
    """The rest of ``fh`` (from its current position) in a uint8 array with ``pad`` spare zero
    bytes after it, and the number of bytes read.

    Windows holding only zero bytes are read but not copied, so they commit no memory (see the
    module docstring).  A file that grows while it is read (a live writer) is read up to the
    size it had at the start; one that shrinks, up to where it ends.
    """
    base = fh.tell()
    size = max(size_of(fh) - base, 0)
    fd = _fd(fh)
    out = np.zeros(size + pad, dtype=np.uint8)
    window = np.empty(min(WINDOW, max(size, 1)), dtype=np.uint8)
    got = 0
    while got < size:
        data = _next_data(fd, base + got, base + size) - base
        if data - got >= WINDOW:  # a hole of a sparse file: nothing to read there
            got = data - data % WINDOW
            fh.seek(base + got)
            continue
        n = fh.readinto(window.data[: min(len(window), size - got)])
        if not n:
            break
        if np.count_nonzero(window[:n]):
            out[got : got + n] = window[:n]
        got += n
    return out, got


def _fd(fh: io.IOBase) -> int | None:
    """The descriptor of a local file; None for a remote (fsspec) file, which has no holes to skip."""
    return fh.fileno() if has_fileno(fh) else None


def _next_data(fd: int | None, pos: int, end: int) -> int:
    """The first offset >= ``pos`` that is not in a hole of a sparse file (``SEEK_DATA``,
    Linux and the BSDs); ``end`` when only a hole follows, ``pos`` when the system cannot say
    (or ``fd`` is None: a remote file)."""
    if fd is None:
        return pos
    try:
        return min(os.lseek(fd, pos, os.SEEK_DATA), end)
    except OSError as exc:
        return end if exc.errno == errno.ENXIO else pos
    except AttributeError:  # pragma: no cover - no SEEK_DATA on this platform
        return pos


def next_nonzero(arr: np.ndarray, start: int, stop: int | None = None) -> int:
    """Offset of the first non-zero byte of ``arr[start:stop]`` (``stop`` when there is none)."""
    end = len(arr) if stop is None else min(stop, len(arr))
    pos = start
    while pos < end:
        if arr[pos]:
            return pos
        chunk = arr[pos : min(pos + WINDOW, end)]
        if np.count_nonzero(chunk):
            return pos + int(np.argmax(chunk != 0))
        pos += len(chunk)
    return end


class LongLine(NamedTuple):
    """A line left out by :func:`read_capped_lines`: 1-based number, byte offset, length."""

    number: int
    offset: int
    length: int


def read_capped_lines(path: Path | str, max_line: int) -> tuple[bytes, list[LongLine]]:
    """The bytes of a text file with every line longer than ``max_line`` bytes left empty (its
    newline kept, so line numbers do not move), and where those lines were.

    Read in windows of :data:`WINDOW` bytes, a long line is dropped as it streams by: memory
    follows the lines kept, never the long line (a 350 MB one-line JSON array cost 4.8 GB to
    parse: benchmarks/RESULTS.md, "Hostile inputs").  A file no longer than ``max_line`` is read
    in one call.  Raises OSError.
    """
    if max_line < WINDOW:
        raise ValueError(f"max_line must be at least {WINDOW} bytes (one window)")
    with open_binary(path) as fh:
        size = size_of(fh)
        fd = _fd(fh)
        if size <= max_line:
            return fh.read(), []
        out = bytearray()
        long: list[LongLine] = []
        lines = 0  # newlines before the current line
        line_start = 0  # file offset of the current line
        kept_from = 0  # offset in ``out`` of the current line's bytes
        dropping = False
        pos = 0  # file offset of the window
        while True:
            hole_end = _next_data(fd, pos, size)
            if hole_end - pos >= max_line + WINDOW:  # a sparse file's hole: the line is long anyway
                if not dropping:
                    del out[kept_from:]
                    dropping = True
                pos = hole_end - hole_end % WINDOW
                fh.seek(pos)
            window = fh.read(WINDOW)
            if not window:
                break
            end = pos + len(window)
            first = window.find(b"\n")
            if first < 0:  # the current line goes on (lines inside a window are shorter than it)
                if not dropping and len(out) - kept_from + len(window) > max_line:
                    del out[kept_from:]
                    dropping = True
                if not dropping:
                    out += window
                pos = end
                continue
            if dropping or len(out) - kept_from + first > max_line:
                del out[kept_from:]
                long.append(LongLine(lines + 1, line_start, pos + first - line_start))
                out += window[first:]  # from its newline on
                dropping = False
            else:
                out += window
            lines += window.count(b"\n")
            last = window.rfind(b"\n")
            line_start = pos + last + 1
            kept_from = len(out) - (len(window) - last - 1)
            pos = end
        if dropping or len(out) - kept_from > max_line:  # an unterminated long last line
            del out[kept_from:]
            long.append(LongLine(lines + 1, line_start, pos - line_start))
        if not long and fd is not None:
            # nothing left out of a local file: read what was read again, in one call, instead of
            # copying ``out`` to bytes, so the file is held once at a time (a 110 MB log held 220 MB)
            kept = len(out)
            del out
            fh.seek(0)
            return fh.read(kept), long
    return bytes(out), long


def read_lines_head(path: Path | str, lines: int, limit: int) -> bytes:
    """The first bytes of ``path`` up to and including its ``lines``-th newline, or fewer: at
    most ``limit`` bytes, or up to the end of the file.

    For sniffers and header parsers whose lines may be longer than a fixed head (an SB3
    ``progress.csv`` with 123 columns has a 4.6 KB header line).  Raises OSError.
    """
    out = bytearray()
    seen = 0
    with open_binary(path) as fh:
        while len(out) < limit:
            window = fh.read(min(WINDOW, limit - len(out)))
            if not window:
                break
            at = -1
            for _ in range(lines - seen):
                at = window.find(b"\n", at + 1)
                if at < 0:
                    break
                seen += 1
            if seen >= lines:
                out += window[: at + 1]
                break
            out += window
    return bytes(out)


def content_end(fd: int, size: int) -> int:
    """Where a file's content ends: just past its last non-zero byte when it ends with at least
    :data:`WINDOW` zero bytes (a pre-allocated or crashed writer's tail), else ``size``.

    Read backwards a window at a time (holes of a sparse file are not read), so the tail costs
    no memory; a file that does not end with a zero byte costs one 4 KiB read.
    """
    if size == 0 or any(os.pread(fd, min(size, 4096), max(size - 4096, 0))):
        return size
    pos = size
    while pos > 0:
        start = max(pos - WINDOW, 0)
        if _next_data(fd, start, pos) < pos:
            chunk = np.frombuffer(os.pread(fd, pos - start, start), dtype=np.uint8)
            nz = np.flatnonzero(chunk)
            if len(nz):
                pos = start + int(nz[-1]) + 1
                break
        pos = start
    return pos if size - pos >= WINDOW else size


def read_content(path: Path | str) -> tuple[bytes, int]:
    """The bytes of a file up to :func:`content_end`, and the length of the zero tail left out
    (0 when none).  Raises OSError."""
    with open_binary(path) as fh:
        size = size_of(fh)
        fd = _fd(fh)
        if fd is None:  # a remote file: read once, the zero tail cut from the bytes
            data = fh.read()
            end = content_end_of(data)
            return data[:end], len(data) - end
        end = content_end(fd, size)
        return fh.read(end), size - end


def content_end_of(data: bytes) -> int:
    """:func:`content_end` of bytes already in memory (a remote file, which has no descriptor)."""
    arr = np.frombuffer(data, dtype=np.uint8)
    tail = next_nonzero(arr[::-1], 0)  # zero bytes at the end (all of them when there is no other)
    return len(arr) - tail if tail >= WINDOW else len(arr)


def zero_tail_message(length: int) -> str:
    """What a reader reports for a zero tail :func:`content_end` left out."""
    return f"the file ends with {length} zero bytes (a pre-allocated file, or a writer killed before it wrote them): not read"
