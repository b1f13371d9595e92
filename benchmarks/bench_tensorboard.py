"""TensorBoard ingest benchmark: ppo_doctor's reader vs tbparse and EventAccumulator.

    python -m benchmarks.bench_tensorboard [--repeats 7] [--peer-repeats 3] [--steps 20000]

Generates (once, deterministically) 50 tags x 20,000 steps into ``benchmarks/data/``: one file of
float32 ``simple_value`` scalars (torch ``add_scalar``) and one of TF2-style scalar tensors (torch
``new_style=True``). Times, in this one process, several runs of each reader and reports medians,
the points each reader returned, and the speed-up of ppo_doctor over each peer
(docs/architecture.md#budgets: at least 100x, no point dropped). The table goes to stdout and to the
"TensorBoard" section of ``benchmarks/RESULTS.md``.

Peers: ``tbparse.SummaryReader(path).scalars`` (``.tensors`` for the tensor file) and
``EventAccumulator(path, size_guidance={scalars: 0, tensors: 0})`` + ``Reload()`` (size 0 keeps
every point; the default would sample down to 10,000 per tag).
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import platform
import statistics
import time
import warnings
from pathlib import Path
from typing import Callable

import numpy as np

from benchmarks import gen_inputs
from ppo_doctor.ingest.tensorboard import reader as tensorboard

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
RESULTS = HERE / "RESULTS.md"
START, END = "<!-- tensorboard:start -->", "<!-- tensorboard:end -->"

log = logging.getLogger("bench_tensorboard")


def ours(path: Path) -> int:
    (run,) = tensorboard.read(path)
    return sum(len(s) for s in run.series)


def tbparse_reader(path: Path, style: str) -> int:
    from tbparse import SummaryReader

    reader = SummaryReader(str(path))
    return len(reader.scalars if style == "simple" else reader.tensors)


def event_accumulator(path: Path, style: str) -> int:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ea = EventAccumulator(str(path), size_guidance={"scalars": 0, "tensors": 0})
    ea.Reload()
    kind = "scalars" if style == "simple" else "tensors"
    get = ea.Scalars if style == "simple" else ea.Tensors
    return sum(len(get(tag)) for tag in ea.Tags()[kind])


def timed(fn: Callable[[], int], repeats: int) -> tuple[float, float, list[float], int]:
    """Median wall time, median CPU time of this process, all wall times, and the number of
    points the reader returned. CPU time is less disturbed by other load on the machine."""
    walls, cpus, points = [], [], 0
    for _ in range(repeats):
        gc.collect()
        c0, t0 = time.process_time(), time.perf_counter()
        points = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus), walls, points


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"{os.cpu_count()} CPU(s), {cpu}; Python {platform.python_version()}, numpy {np.__version__}; "
        f"load average at start {load:.2f}"
    )


def run(repeats: int, peer_repeats: int, n_tags: int, n_steps: int) -> str:
    rows = []
    for style in ("simple", "tensor"):
        path = DATA / gen_inputs.tensorboard_scalars_name(n_tags, n_steps, style)
        if not path.exists():
            log.info("generating %s", path)
            gen_inputs.tensorboard_scalars(DATA, n_tags=n_tags, n_steps=n_steps, style=style, seed=0)
        size_mb = path.stat().st_size / 1e6
        ours(path)  # warm the page cache and numpy's lazy tables
        ours_t, ours_c, ours_all, ours_n = timed(lambda: ours(path), repeats)
        log.info("%s: ours %s", style, ", ".join(f"{x:.3f}" for x in ours_all))
        peers = {}
        for name, fn in (("tbparse", tbparse_reader), ("EventAccumulator", event_accumulator)):
            log.info("%s on %s (%d runs)", name, style, peer_repeats)
            peers[name] = timed(lambda: fn(path, style), peer_repeats)
        label = "simple_value (float32)" if style == "simple" else "TF2 scalar tensors"
        rows.append(f"| {label} | {size_mb:.1f} MB | ppo_doctor `tensorboard.read` | {ours_t:.3f} s | {ours_c:.3f} s | {ours_n:,} | — | — |")
        for name, (t, c, _, n) in peers.items():
            api = "`SummaryReader(path)." + ("scalars`" if style == "simple" else "tensors`") if name == "tbparse" else "`EventAccumulator(size_guidance=0).Reload()`"
            rows.append(f"| {label} | {size_mb:.1f} MB | {name} {api} | {t:.2f} s | {c:.2f} s | {n:,} | **{t / ours_t:.0f}x** | {c / ours_c:.0f}x |")
    table = "\n".join(
        [
            f"{n_tags} tags x {n_steps:,} steps = {n_tags * n_steps:,} scalars per file, one Event per scalar, "
            f"checksums verified by ppo_doctor. Medians of {repeats} runs (ppo_doctor) and {peer_repeats} runs (peers), "
            "all in one process, page cache warm.",
            "",
            f"Machine: {machine()}.",
            "",
            "| file | size | reader | median wall | median CPU | points read | speed-up (wall) | speed-up (CPU) |",
            "|---|---|---|---|---|---|---|---|",
            *rows,
        ]
    )
    return table


def write_section(table: str) -> None:
    """Replace (or add) only the TensorBoard section of RESULTS.md."""
    section = f"{START}\n## TensorBoard\n\nReproduce: `python -m benchmarks.bench_tensorboard`\n\n{table}\n{END}"
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    if START in text and END in text:
        head, rest = text.split(START, 1)
        text = head + section + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    RESULTS.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7, help="runs of ppo_doctor's reader")
    parser.add_argument("--peer-repeats", type=int, default=3, help="runs of each peer (~30-70 s each)")
    parser.add_argument("--tags", type=int, default=50)
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    warnings.filterwarnings("ignore")
    table = run(args.repeats, args.peer_repeats, args.tags, args.steps)
    print(table)  # noqa: T201 - a command-line tool's output
    if not args.no_write:
        write_section(table)


if __name__ == "__main__":
    main()
