"""Helpers shared by the benchmark scripts: timing, machine description, RESULTS.md sections."""

from __future__ import annotations

import gc
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from benchmarks.bench_tensorboard import machine  # one machine description for every section

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
RESULTS = HERE / "RESULTS.md"

__all__ = ["DATA", "RESULTS", "ROOT", "machine", "median_time", "python_subprocess", "write_section"]


def median_time(fn: Callable[[], object], repeats: int) -> tuple[float, list[float], object]:
    """Median wall time of ``repeats`` calls (after a gc), all times, and the last result."""
    times, result = [], None
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times, result


def python_subprocess(args: list[str], *, one_core: bool = True) -> tuple[float, subprocess.CompletedProcess, float]:
    """Run ``python args...`` in a fresh process (pinned to CPU 0 with ``taskset`` when asked and
    available); return its wall time (imports included), the process, and its CPU time (user +
    system), which moves much less than wall time when other work shares the machine."""
    cmd = [sys.executable, *args]
    if one_core and sys.platform.startswith("linux") and os.path.exists("/usr/bin/taskset"):
        cmd = ["/usr/bin/taskset", "-c", "0", *cmd]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, proc, cpu


def write_section(name: str, title: str, body: str, *, results: Path = RESULTS) -> None:
    """Replace (or append) only the ``<!-- name:start -->...<!-- name:end -->`` part of RESULTS.md."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    section = f"{start}\n## {title}\n\n{body}\n{end}"
    text = results.read_text() if results.exists() else "# Benchmark results\n"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        text = head + section + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    results.write_text(text)
