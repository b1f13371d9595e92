"""Helpers shared by the benchmark scripts: timing, machine description, RESULTS.md sections."""

from __future__ import annotations

import gc
import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from benchmarks.bench_tensorboard import machine  # one machine description for every section

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
RESULTS = HERE / "RESULTS.md"

__all__ = ["DATA", "RESULTS", "ROOT", "Paired", "machine", "median_time", "paired_times", "python_subprocess", "write_section"]


def median_time(fn: Callable[[], object], repeats: int) -> tuple[float, list[float], object]:
    """Median wall time of ``repeats`` calls (after a gc), all times, and the last result."""
    times, result = [], None
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times, result


@dataclass
class Paired:
    """Times of two functions called in alternation; ``ratio`` is the median of the per-pair
    ratios b/a (two calls a few milliseconds apart see the same machine load), ``low``/``high``
    its interquartile range."""

    a: list[float]
    b: list[float]
    last_a: object
    last_b: object

    @property
    def ratios(self) -> list[float]:
        return [tb / ta for ta, tb in zip(self.a, self.b)]

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios)

    @property
    def low(self) -> float:
        return statistics.quantiles(self.ratios, n=4)[0] if len(self.a) > 1 else self.ratio

    @property
    def high(self) -> float:
        return statistics.quantiles(self.ratios, n=4)[2] if len(self.a) > 1 else self.ratio


def paired_times(fn_a: Callable[[], object], fn_b: Callable[[], object], repeats: int, *, min_seconds: float = 0.0, max_repeats: int = 101) -> Paired:
    """Call ``fn_a`` and ``fn_b`` in alternation (which goes first alternates too), at least
    ``repeats`` times each and more, up to ``max_repeats``, until both have run ``min_seconds``:
    a 40 ms read needs many pairs before the machine's noise (10-20 % on a shared VM) averages out."""
    out = Paired([], [], None, None)
    while len(out.a) < repeats or (len(out.a) < max_repeats and min(sum(out.a), sum(out.b)) < min_seconds):
        first_a = len(out.a) % 2 == 0
        for is_a in (first_a, not first_a):
            gc.collect()
            t0 = time.perf_counter()
            result = (fn_a if is_a else fn_b)()
            elapsed = time.perf_counter() - t0
            if is_a:
                out.a.append(elapsed)
                out.last_a = result
            else:
                out.b.append(elapsed)
                out.last_b = result
    return out


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
