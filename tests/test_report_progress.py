"""The stderr progress line: only on a terminal, only for slow inputs, erased when done."""

from __future__ import annotations

import io
import time

from ppo_doctor.report.progress import Progress


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_draws_then_erases_on_a_tty():
    stream = FakeTTY()
    with Progress("reading logs/\x1b[31m", stream=stream, delay=0.0, interval=0.01) as p:
        time.sleep(0.05)
        p.update("reading more")
        time.sleep(0.05)
    out = stream.getvalue()
    assert "reading logs/ ... " in out and "reading more ... " in out
    assert "\x1b[31m" not in out  # the label is log-derived: stripped
    assert out.endswith("\r\x1b[2K")  # the line is cleared at the end


def test_progress_is_silent_when_fast_or_not_a_tty():
    fast = FakeTTY()
    with Progress("reading", stream=fast, delay=10.0):
        pass
    assert fast.getvalue() == ""
    pipe = io.StringIO()
    with Progress("reading", stream=pipe, delay=0.0, interval=0.01):
        time.sleep(0.03)
    assert pipe.getvalue() == ""
