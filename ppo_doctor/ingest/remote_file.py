"""An open remote file that reads like a local one, whether or not its server serves byte ranges.

fsspec's buffered files fetch byte ranges; two things keep them from standing in for a local
file in every reader:

* a server without range support (``python -m http.server``, the server the docs name) refuses
  every read that does not start at byte 0 with a ``ValueError`` ("The HTTP server doesn't
  appear to support range requests"): a CSV reader that looks at a file's last byte first, or a
  Parquet footer, never gets its data.  Here such a file is then streamed once from its start
  into a temporary copy (in memory up to :data:`SPOOL` bytes, on disk beyond) and read from that
  copy: memory stays bounded as for a local file, and the copy stops at the size the server
  gave when the file was opened, as a local read stops at the size a file had when opened;
* ``AbstractBufferedFile.readline()`` takes no size, where ``io`` files take one.  The raw file
  here is wrapped in an :class:`io.BufferedReader`, which has the whole ``io`` interface.
"""

from __future__ import annotations

import errno
import io
import os
from contextlib import contextmanager
from typing import IO, Any, Iterator

SPOOL = 16 << 20  # bytes of a streamed copy kept in memory before it goes to a temporary file
CHUNK = 1 << 20  # bytes streamed at once


def open_remote(fs: Any, path: str) -> io.BufferedReader:
    """``path`` of the fsspec filesystem ``fs`` opened for reading (see the module docstring);
    every failure to open or read it is an ``OSError`` (:func:`io_errors`)."""
    with io_errors(path):
        return io.BufferedReader(_RemoteRaw(fs, path), buffer_size=1 << 16)


@contextmanager
def io_errors(what: str) -> Iterator[None]:
    """Any failure of a remote filesystem as the ``OSError`` readers and discovery handle.

    fsspec passes its protocol's own errors through (aiohttp's ``ClientResponseError`` for an
    HTTP 500, botocore's for S3): at this boundary each is a file that could not be read, and
    must be reported with its name like a local one, never end the command in a traceback.
    """
    try:
        yield
    except OSError:
        raise
    except Exception as exc:  # noqa: BLE001 - see the docstring
        raise OSError(errno.EIO, f"{type(exc).__name__}: {exc}", what) from exc


def ranges_refused(exc: BaseException) -> bool:
    """Whether ``exc`` is fsspec's refusal of a read past byte 0 by a server without range support
    (a plain ``ValueError``: its text is all that tells it from another one)."""
    return isinstance(exc, ValueError) and "support range requests" in str(exc)


class _RemoteRaw(io.RawIOBase):
    """Reads by ranges through fsspec until the server refuses one, then from a streamed copy."""

    def __init__(self, fs: Any, path: str):
        super().__init__()
        self._fs, self._path = fs, path
        self._ranged: IO[bytes] = fs.open(path, "rb")
        self._copy: IO[bytes] | None = None
        self._pos = 0
        size = getattr(self._ranged, "size", None)
        self._size: int | None = size if isinstance(size, int) else None
        if self._size is None:  # fsspec opened a stream (no size known): it cannot seek at all
            self._stream(self._ranged)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._pos, os.SEEK_END: self._length()}[whence]
        self._pos = max(base + offset, 0)
        return self._pos

    def readinto(self, buffer: Any) -> int:
        with io_errors(self._path):
            data = self._read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def readall(self) -> bytes:
        # one request for the rest, not one per io.DEFAULT_BUFFER_SIZE
        with io_errors(self._path):
            return self._read(max(self._length() - self._pos, 0))

    def close(self) -> None:
        if not self.closed:
            self._ranged.close()
            if self._copy is not None:
                self._copy.close()
        super().close()

    @property
    def size(self) -> int:
        return self._length()

    def _length(self) -> int:
        if self._size is not None:
            return self._size
        assert self._copy is not None  # a file of unknown size is streamed when opened
        return self._copy.seek(0, os.SEEK_END)

    def _read(self, n: int) -> bytes:
        if self._copy is None:
            try:
                self._ranged.seek(self._pos)
                data = self._ranged.read(n)
            except ValueError as exc:
                if not ranges_refused(exc):
                    raise
                # fsspec's own streaming file (block_size=0) reads the object from byte 0
                self._stream(self._fs.open(self._path, "rb", block_size=0))
            else:
                self._pos += len(data)
                return bytes(data)
        assert self._copy is not None
        self._copy.seek(self._pos)
        data = self._copy.read(n)
        self._pos += len(data)
        return data

    def _stream(self, source: IO[bytes]) -> None:
        """Copy ``source`` from its start into :attr:`_copy`, up to the size known at opening."""
        import tempfile  # imported here: a local file never needs a copy (benchmarks/RESULTS.md, "Import cost")

        copy: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=SPOOL)  # noqa: SIM115 - closed in close()
        left = self._size
        try:
            while left is None or left > 0:
                chunk = source.read(CHUNK if left is None else min(CHUNK, left))
                if not chunk:
                    break
                copy.write(chunk)
                if left is not None:
                    left -= len(chunk)
        except BaseException:
            copy.close()
            raise
        finally:
            if source is not self._ranged:
                source.close()
        self._copy = copy
        if self._size is not None:
            # a server that sent less than it announced: the file ends where its bytes end
            self._size = min(self._size, copy.seek(0, os.SEEK_END))
