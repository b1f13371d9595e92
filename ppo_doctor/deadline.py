"""A deadline for plugin code (issue 39): a plugin rule or renderer that never returns must not
keep ``check`` waiting silently.

:func:`call` runs a function and gives up after a number of seconds with
:class:`DeadlineExceeded`.  In the main thread of a Unix process it arms a real-time interval
timer (``signal.setitimer(ITIMER_REAL)``, the mechanism behind ``pytest-timeout``'s ``signal``
method, https://github.com/pytest-dev/pytest-timeout): the ``SIGALRM`` handler raises in the
running code, so a pure-Python loop or a ``time.sleep`` really stops.  Elsewhere (a worker thread,
Windows, or a process that already uses ``SIGALRM`` for itself) the function runs in a daemon
thread that is abandoned at the deadline: the caller goes on, and the thread ends with the process
(Python cannot stop a thread; ``threading`` docs, "Daemon threads are abruptly stopped at
shutdown").

A leaf: it imports nothing of the package.
"""

from __future__ import annotations

import math
import signal
import threading
from typing import Any, Callable, TypeVar

T = TypeVar("T")


class DeadlineExceeded(Exception):
    """The function did not return within its deadline."""


def call(fn: Callable[[], T], seconds: float | None) -> T:
    """``fn()``, or :class:`DeadlineExceeded` once it has run ``seconds`` (None or inf: no limit)."""
    if seconds is None or math.isinf(seconds):
        return fn()
    if _can_alarm():
        return _with_alarm(fn, seconds)
    return _in_thread(fn, seconds)


def _can_alarm() -> bool:
    """The timer is ours to use: main thread, a platform with it, no timer or handler of another."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        return False
    if signal.getitimer(signal.ITIMER_REAL) != (0.0, 0.0):
        return False
    return signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN, None)


def _with_alarm(fn: Callable[[], T], seconds: float) -> T:
    def expire(signum: int, frame: Any) -> None:
        raise DeadlineExceeded(f"did not return within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            return fn()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, previous)


def _in_thread(fn: Callable[[], T], seconds: float) -> T:
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller's thread as is
            box["error"] = exc

    worker = threading.Thread(target=target, name="ppo-doctor-plugin", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise DeadlineExceeded(f"did not return within {seconds:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


__all__ = ["DeadlineExceeded", "call"]
