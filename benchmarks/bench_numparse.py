"""The W&B reader's number parser against Python's json (issue 40).

    python -m benchmarks.bench_numparse [--steps N] [--repeats R]

``ppo_doctor/ingest/numparse.py`` decodes the JSON numbers of a W&B transaction log (``.wandb``)
in one pass of pyarrow (a grammar check and a cast).  Until issue 40 it was a hand-written SWAR
parser; the rule for strange code (README) is that it stays only where it saves at least 20 % of a
wait a user sees of a second or more, and measured here against the pyarrow pass it saved 37 % of
a 0.62 s read (a million numbers) and 16 % of a 2.99 s one (five million): not its place.

This benchmark reads one ``.wandb`` file of 50 tags x N steps (``gen_formats.wandb_file``,
1,000,000 numbers at the default 20,000 steps) through the real reader, ``ppo_doctor.load_runs``,
two ways in one process, rotating the order each round:

* ``numparse``: the shipped parser;
* ``json``: every number handed to the reader's own fallback, Python's ``json.loads`` one value
  at a time (what the reader does for any text numparse leaves).

It prints the median wall time of each, the ratio to the shipped parser, and whether both read
the same values.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from benchmarks import gen_formats
from ppo_doctor.ingest import numparse
from ppo_doctor.ingest.wandb import history


def _by_json(data: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """No number decoded here: the reader's fallback parses each text with json."""
    n = len(start)
    return np.zeros(n), np.zeros(n, dtype=bool)


PARSERS: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]] = {
    "numparse": numparse.parse_numbers,
    "json": _by_json,
}


@contextmanager
def parser(name: str) -> Iterator[None]:
    """The reader with ``name``'s number parser in place of numparse's."""
    original = history.numparse.parse_numbers
    history.numparse.parse_numbers = PARSERS[name]  # type: ignore[assignment]
    try:
        yield
    finally:
        history.numparse.parse_numbers = original  # type: ignore[assignment]


def read_seconds(path: Path, name: str) -> tuple[float, float]:
    """Wall seconds of one whole read with ``name``'s parser, and a checksum of the values read."""
    from ppo_doctor import load_runs

    with parser(name):
        t0 = time.perf_counter()
        (run,) = load_runs(str(path))
        took = time.perf_counter() - t0
    values = np.concatenate([run.frame.arrays(m)[1] for m in run.frame.metrics])
    return took, float(np.sum(values[np.isfinite(values)]))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20_000, help="history rows of 50 tags (default 20,000: 1M numbers)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--parsers", nargs="+", choices=list(PARSERS), default=list(PARSERS), help="which to time (numparse always)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = gen_formats.wandb_file(Path(tmp), n_steps=args.steps)
        names = list(dict.fromkeys(["numparse", *args.parsers]))
        times: dict[str, list[float]] = {name: [] for name in names}
        sums: dict[str, float] = {}
        for r in range(args.repeats):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                took, total = read_seconds(path, name)
                times[name].append(took)
                sums[name] = total
        base = statistics.median(times["numparse"])
        print(f"read of {path.stat().st_size / 1e6:.1f} MB, {50 * args.steps:,} numbers, median of {args.repeats}:")
        print("| parser | seconds | / numparse | same values |")
        print("|---|---|---|---|")
        for name in names:
            med = statistics.median(times[name])
            same = np.isclose(sums[name], sums["numparse"], rtol=1e-12)
            print(f"| {name} | {med:.2f} | {med / base:.2f}x | {'yes' if same else 'NO'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
