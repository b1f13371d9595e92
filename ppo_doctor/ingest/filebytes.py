"""Bounded reads of untrusted files, shared by the readers (issue 19).

A file named like a log may be anything: a sparse 20 GB file of zeros, a log whose crashed or
pre-allocating writer left gigabytes of zero bytes after the last record, a FIFO.  The helpers
here keep what a read costs proportional to what the file *holds*, not to its size:

* :func:`read_head` reads at most ``n`` bytes, so a reader can check a file's first header
  before it reads anything else;
* :func:`load_padded` reads a file in windows of :data:`WINDOW` bytes into a zero-initialised
  numpy array (``calloc``: the kernel gives its pages on first write), and copies only the
  windows that hold a non-zero byte: a run of zero bytes commits no memory, so peak memory
  follows the non-zero content (measured in ``benchmarks/RESULTS.md``, "Hostile inputs");
* :func:`next_nonzero` finds the next non-zero byte of an array with ``np.count_nonzero`` on
  windows (a SIMD pass at memory speed), so a scanner can jump over a zero run instead of
  examining every offset in it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

import numpy as np

WINDOW = 1 << 20  # bytes read, tested for zeros and searched at once


def read_head(path: Path | str, n: int) -> bytes:
    """The first ``n`` bytes of ``path`` (fewer when the file is shorter).  Raises OSError."""
    with open(path, "rb") as fh:
        return fh.read(n)


def load_padded(fh: BinaryIO, pad: int) -> tuple[np.ndarray, int]:
    """The rest of ``fh`` (from its current position) in a uint8 array with ``pad`` spare zero
    bytes after it, and the number of bytes read.

    Windows holding only zero bytes are read but not copied, so they commit no memory (see the
    module docstring).  A file that grows while it is read (a live writer) is read up to the
    size it had at the start; one that shrinks, up to where it ends.
    """
    size = max(os.fstat(fh.fileno()).st_size - fh.tell(), 0)
    out = np.zeros(size + pad, dtype=np.uint8)
    window = np.empty(min(WINDOW, max(size, 1)), dtype=np.uint8)
    got = 0
    while got < size:
        n = fh.readinto(memoryview(window)[: min(len(window), size - got)])
        if not n:
            break
        if np.count_nonzero(window[:n]):
            out[got : got + n] = window[:n]
        got += n
    return out, got


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
