"""A one-line progress indication on stderr while large inputs are read.

Shown only when stderr is a terminal (never in CI logs or pipes, nor with ``-q``), and only once an input
has taken longer than ``delay`` seconds, so small runs print nothing.  A background
thread redraws ``reading logs/ ... 4.2 s`` every ``interval`` seconds and erases the line
when the work is done.
"""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType
from typing import TextIO

from .escape import plain


class Progress:
    """Context manager: ``with Progress("reading logs/"): ...``."""

    def __init__(
        self, label: str, *, stream: TextIO | None = None, delay: float = 0.5, interval: float = 0.2, quiet: bool = False
    ):
        self.stream = stream or sys.stderr
        self.label = plain(label)
        self.delay = delay
        self.interval = interval
        self.enabled = not quiet and bool(getattr(self.stream, "isatty", lambda: False)())
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._drawn = False

    def update(self, label: str) -> None:
        """Change the text shown (the next redraw picks it up)."""
        self.label = plain(label)

    def _run(self, start: float) -> None:
        if self._stop.wait(self.delay):
            return
        while not self._stop.is_set():
            self.stream.write(f"\r\x1b[2K{self.label} ... {time.monotonic() - start:.1f} s")
            self.stream.flush()
            self._drawn = True
            self._stop.wait(self.interval)

    def __enter__(self) -> "Progress":
        if self.enabled:
            self._thread = threading.Thread(target=self._run, args=(time.monotonic(),), daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        if self._drawn:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
