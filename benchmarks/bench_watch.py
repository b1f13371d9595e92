"""``ppo-doctor watch`` budget (docs/architecture.md#budgets): a poll of a growing 1,000,000-scalar event
file that grew by 1,000 scalars costs under 10 ms, because the follower reads only the
appended records (``ppo_doctor.ingest.follow.TensorBoardTail``).

    python -m benchmarks.bench_watch                  # rewrites its RESULTS.md section
    python -m benchmarks.bench_watch --steps 2000 --no-write

The file is written as the benchmark's usual 50 tags x N steps (``gen_inputs``), then copied
into the followed file: first its first 1,000,000 scalars, then 1,000 more before each poll.
Reported: each poll's time (read + frame + decode of what was appended), the time to join the
pieces into the run (paid once per analysis, like the check itself), and a full
``tensorboard.read`` of the same file for scale.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks._common import DATA, machine, write_section
from benchmarks.gen_inputs import tensorboard_scalars
from ppo_doctor.ingest.tensorboard import reader as tensorboard
from ppo_doctor.ingest.tensorboard import tfrecord
from ppo_doctor.ingest.follow import TensorBoardTail

log = logging.getLogger(__name__)

BUDGET_MS = 10.0
TAGS = 50


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20_000, help="steps of 50 tags already in the file")
    parser.add_argument("--per-poll", type=int, default=1_000, help="scalars appended before each poll")
    parser.add_argument("--polls", type=int, default=100)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    extra_steps = -(-args.per_poll * args.polls // TAGS)
    src = tensorboard_scalars(DATA / "watch", n_tags=TAGS, n_steps=args.steps + extra_steps)
    data = src.read_bytes()
    framing = tfrecord.frame_fast(memoryview(data), str(src), lead_byte=0x09)
    starts = np.append(framing.starts, len(data))  # record 0 is the file_version event
    initial = 1 + TAGS * args.steps
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / src.name
        tail = TensorBoardTail(path)
        with open(path, "wb") as fh:
            fh.write(data[: starts[initial]])
            fh.flush()
            t0 = time.perf_counter()
            tail.poll()
            first = time.perf_counter() - t0
            times, cpu = [], []
            at = initial
            for _ in range(args.polls):
                nxt = min(at + args.per_poll, len(starts) - 1)
                fh.write(data[starts[at] : starts[nxt]])
                fh.flush()
                at = nxt
                t0, c0 = time.perf_counter(), time.process_time()
                tail.poll()
                times.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
            t0 = time.perf_counter()
            (joined,) = tail.raw_runs() or [None]
            join = time.perf_counter() - t0
            t0 = time.perf_counter()
            (whole,) = tensorboard.read(path)
            full = time.perf_counter() - t0
    points = sum(len(s) for s in joined.series)
    same = points == sum(len(s) for s in whole.series) and all(
        np.array_equal(a.values, b.values, equal_nan=True) and np.array_equal(a.steps, b.steps) for a, b in zip(joined.series, whole.series)
    )
    med, worst, med_cpu = 1000 * statistics.median(times), 1000 * max(times), 1000 * statistics.median(cpu)
    p90 = 1000 * statistics.quantiles(times, n=10)[-1]
    met = "met" if med_cpu < BUDGET_MS else "**missed**"
    body = "\n".join(
        [
            "Reproduce: `python -m benchmarks.bench_watch`",
            "",
            f"An event file of {TAGS * args.steps:,} scalars ({TAGS} tags x {args.steps:,} steps, one Event per scalar, "
            f"{starts[initial] / 1e6:.1f} MB) grows by {args.per_poll:,} scalars before each of {args.polls} polls of "
            "`TensorBoardTail` (what `watch` uses). One process, page cache warm. The budget is judged on CPU "
            "time: on this shared 2-core VM wall time also counts the waits for a core (see the load average).",
            "",
            machine(),
            "",
            "| what | time |",
            "|---|---|",
            f"| first poll (the whole {TAGS * args.steps:,}-scalar file) | {1000 * first:.0f} ms |",
            f"| poll after {args.per_poll:,} appended scalars: median CPU time (`time.process_time`) | **{med_cpu:.2f} ms** (budget < {BUDGET_MS:g} ms: {met}) |",
            f"| the same, wall time: median / 90th percentile / worst | {med:.2f} / {p90:.2f} / {worst:.2f} ms |",
            f"| joining the pieces into the run (once per analysis) | {1000 * join:.0f} ms |",
            f"| `tensorboard.read` of the final file, for scale | {1000 * full:.0f} ms |",
            "",
            f"The joined run holds {points:,} points, {'identical to' if same else '**different from**'} a full read "
            "of the final file (steps, values).",
        ]
    )
    log.info(body)
    if not args.no_write:
        write_section("watch", "`ppo-doctor watch`: one poll of a growing event file", body)


if __name__ == "__main__":
    main()
