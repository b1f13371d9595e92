"""Every benchmark with one command; each rewrites its own section of ``benchmarks/RESULTS.md``.

    python -m benchmarks.run_all            # full sizes (~15 min, most of it the TensorBoard peers)
    python -m benchmarks.run_all --quick    # fewer repeats, peers once (~5 min)
    python -m benchmarks.run_all --only formats,check

Inputs are generated on first use into ``benchmarks/data/`` (deterministic; ~2 minutes, ~1.5 GB).
"""

from __future__ import annotations

import argparse
import logging
import subprocess
import sys
import time

log = logging.getLogger("run_all")

# name -> (module, full arguments, quick arguments)
BENCHMARKS = {
    "tensorboard": ("benchmarks.bench_tensorboard", [], ["--repeats", "3", "--peer-repeats", "1"]),
    "formats": ("benchmarks.bench_formats", [], ["--repeats", "3"]),
    "check": ("benchmarks.bench_check", [], ["--repeats", "3", "--engine-steps", "10000,100000,1000000"]),
    "memory": ("benchmarks.bench_memory", [], []),
    "jobs": ("benchmarks.bench_jobs", [], ["--repeats", "1"]),
    "html": ("benchmarks.bench_html", [], ["--repeats", "1"]),
    "live": ("benchmarks.bench_live", [], ["--repeats", "3"]),
    "watch": ("benchmarks.bench_watch", [], ["--polls", "50"]),
    "sweep": ("benchmarks.bench_sweep", [], ["--growth", "100"]),
    "hostile": ("benchmarks.bench_hostile", [], ["--skip-million"]),
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (same input sizes)")
    parser.add_argument("--only", help="comma-separated subset of: " + ", ".join(BENCHMARKS))
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    names = args.only.split(",") if args.only else list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}")
    for name in names:
        module, full, quick = BENCHMARKS[name]
        extra = (quick if args.quick else full) + (["--no-write"] if args.no_write else [])
        log.info("== %s %s", module, " ".join(extra))
        t0 = time.perf_counter()
        # each in a fresh process: ru_maxrss survives fork+exec, so a big parent would inflate
        # bench_memory's figures, and one benchmark's caches must not speed up the next
        subprocess.run([sys.executable, "-m", module, *extra], check=True)
        log.info("== %s done in %.0f s", name, time.perf_counter() - t0)


if __name__ == "__main__":
    main()
