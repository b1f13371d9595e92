"""Many runs: reading (and analysing) 20 run folders with ``--jobs 1`` vs ``--jobs N``.

    python -m benchmarks.bench_jobs [--runs 20] [--steps 4000] [--jobs 2] [--repeats 3] [--no-write]

20 run folders of 200,000 scalars each (50 TRL-named tags x 4,000 steps, one event file each;
``gen_formats.tensorboard_run``) under one directory.  Times, in this process, ``pipeline.load(path,
jobs=1)`` against ``jobs=N`` (``ProcessPoolExecutor``; results come back pickled), and the CLI
``ppo-doctor check -j N`` as fresh subprocesses.  The machine has few cores and process start-up
plus pickling cost something, so the speed-up is reported as measured, not as hoped.
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

from benchmarks import gen_formats
from benchmarks._common import DATA, machine, median_time, python_subprocess, write_section
from ppo_doctor.pipeline import load

log = logging.getLogger("bench_jobs")


def many_runs(n_runs: int, n_steps: int) -> Path:
    root = DATA / f"runs-{n_runs}x50x{n_steps}"
    for k in range(n_runs):
        folder = root / f"run-{k:02d}"
        if not folder.exists():
            log.info("generating %s", folder)
            gen_formats.tensorboard_run(folder, tags=gen_formats.CHECK_TAGS, n_steps=n_steps, seed=100 + k)
    return root


def points(path: Path, jobs: int) -> int:
    result = load(path, jobs=jobs)
    return sum(len(r.frame) for r in result.runs)


def cli_check(path: Path, jobs: int, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t, proc, _ = python_subprocess(["-m", "ppo_doctor.cli", "check", str(path), "--isolated", "-j", str(jobs)], one_core=False)
        if proc.returncode not in (0, 1):
            raise RuntimeError(f"check -j {jobs} failed: {proc.stderr[-2000:]}")
        times.append(t)
    return sorted(times)[len(times) // 2]


def run(n_runs: int, n_steps: int, jobs: int, repeats: int) -> str:
    root = many_runs(n_runs, n_steps)
    points(root, 1)  # warm the page cache
    rows = []
    t1, all1, n1 = median_time(lambda: points(root, 1), repeats)
    tn, alln, nn = median_time(lambda: points(root, jobs), repeats)
    log.info("load jobs=1 %s | jobs=%d %s", all1, jobs, alln)
    rows.append(f"| `pipeline.load(path, jobs=...)` | {t1:.2f} s | {tn:.2f} s | **{t1 / tn:.2f}x** | {n1:,} / {nn:,} |")
    c1, cn = cli_check(root, 1, repeats), cli_check(root, jobs, repeats)
    log.info("check -j1 %.2f | -j%d %.2f", c1, jobs, cn)
    rows.append(f"| `ppo-doctor check DIR -j N` (subprocess, imports included) | {c1:.2f} s | {cn:.2f} s | **{c1 / cn:.2f}x** | — |")
    return "\n".join(
        [
            f"{n_runs} run folders x 50 tags x {n_steps:,} steps = {n_runs * 50 * n_steps:,} scalars; N = {jobs} "
            f"(os.cpu_count() = {os.cpu_count()}); medians of {repeats}.",
            "",
            f"Machine: {machine()}.",
            "",
            f"| what | jobs=1 | jobs={jobs} | speed-up | points read (1 / N) |",
            "|---|---|---|---|---|",
            *rows,
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--steps", type=int, default=4_000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    table = run(args.runs, args.steps, args.jobs, args.repeats)
    print(table)  # noqa: T201 - a command-line tool's output
    if not args.no_write:
        write_section("jobs", "Many runs in parallel (`--jobs`)", "Reproduce: `python -m benchmarks.bench_jobs`\n\n" + table)


if __name__ == "__main__":
    main()
