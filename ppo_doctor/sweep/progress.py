"""A progress bar for sweeps on stderr: ``[#######.....] 412/1000 runs  1:23 left``.

Drawn only when the stream is a terminal (never in CI logs, pipes or files) and at most every
``interval`` seconds; the estimate is the mean time per finished run times the runs left.  The
line is erased when the sweep ends.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import TextIO

WIDTH = 28


class ProgressBar:
    """``with ProgressBar() as bar: ... bar(done, total)`` (the pipeline's progress callback)."""

    def __init__(self, *, stream: TextIO | None = None, interval: float = 0.2, label: str = "runs"):
        self.stream = stream or sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = interval
        self.label = label
        self._start = time.monotonic()
        self._last = 0.0
        self._drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if done < total and now - self._last < self.interval:
            return
        self._last = now
        self.stream.write("\r\x1b[2K" + line(done, total, now - self._start, self.label))
        self.stream.flush()
        self._drawn = True

    def __enter__(self) -> "ProgressBar":
        self._start = time.monotonic()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()


def line(done: int, total: int, elapsed: float, label: str = "runs") -> str:
    """The bar's text for ``done`` of ``total`` after ``elapsed`` seconds."""
    filled = WIDTH if total <= 0 else int(WIDTH * done / total)
    text = f"[{'#' * filled}{'.' * (WIDTH - filled)}] {done}/{total} {label}"
    if 0 < done < total:
        left = elapsed / done * (total - done)
        text += f"  {int(left // 60)}:{int(left % 60):02d} left"
    return text
