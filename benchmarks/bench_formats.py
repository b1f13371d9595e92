"""Readers of the other formats vs the equivalent pandas call, on the same 1,000,000 points.

    python -m benchmarks.bench_formats [--repeats 5] [--tags 50] [--steps 20000] [--no-write]

The same points (``gen_inputs.scalar_series``: 50 tags x 20,000 steps with a few NaN/Inf) are
written by ``gen_formats`` as JSONL, CSV, ``trainer_state.json`` and a ``.wandb`` log.  Peers:
``pandas.read_json(lines=True)``, ``pandas.read_csv``, ``json.load`` + ``pandas.DataFrame(log_history)``;
a ``.wandb`` file has no pandas equivalent, so it is compared with the JSONL through pandas.
Budget (issue 6): every reader at least as fast as its pandas peer (ratio >= 1.0).
All in one process, the two readers called in alternation, page cache warm; medians and paired ratios.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import warnings
from pathlib import Path

import pandas as pd

from benchmarks import gen_formats
from benchmarks._common import DATA, machine, paired_times, write_section
from ppo_doctor.ingest.readers import csv_logs, jsonl, trainer_state
from ppo_doctor.ingest.wandb import binary as wandb_binary

log = logging.getLogger("bench_formats")

MIN_SECONDS = 3.0  # per side: ~75 pairs of the 40 ms CSV read, 5 of the 0.5 s JSON reads


def _spread(times: list[float]) -> str:
    q = statistics.quantiles(times, n=4) if len(times) > 1 else [times[0]] * 3
    return f"median {q[1]:.3f} s (IQR {q[0]:.3f}-{q[2]:.3f})"

# (label, generator, our reader module, pandas peer label, pandas peer)
FORMATS = (
    ("JSONL", gen_formats.jsonl_file, jsonl, "`pd.read_json(lines=True)`", lambda p: pd.read_json(p, lines=True)),
    ("CSV", gen_formats.csv_file, csv_logs, "`pd.read_csv`", pd.read_csv),
    (
        "trainer_state.json",
        gen_formats.trainer_state_file,
        trainer_state,
        "`json.load` + `pd.DataFrame(log_history)`",
        lambda p: pd.DataFrame(json.loads(Path(p).read_bytes())["log_history"]),
    ),
    (".wandb", gen_formats.wandb_file, wandb_binary, "same points as JSONL, `pd.read_json(lines=True)`", None),
)


def inputs(n_tags: int, n_steps: int) -> Path:
    folder = DATA / f"formats-{n_tags}x{n_steps}"
    for _, gen, *_ in FORMATS:
        name = {"jsonl_file": "metrics.jsonl", "csv_file": "metrics.csv"}.get(gen.__name__)
        name = name or {"trainer_state_file": "trainer_state.json", "wandb_file": "run-bench.wandb"}[gen.__name__]
        if not (folder / name).exists():
            log.info("generating %s", folder / name)
            gen(folder, n_tags=n_tags, n_steps=n_steps, seed=0)
    return folder


def ours(mod, path: Path) -> int:
    return sum(len(s) for run in mod.read(path) for s in run.series)


def run(repeats: int, n_tags: int, n_steps: int) -> str:
    folder = inputs(n_tags, n_steps)
    files = {"JSONL": "metrics.jsonl", "CSV": "metrics.csv", "trainer_state.json": "trainer_state.json", ".wandb": "run-bench.wandb"}
    rows = []
    for label, _, mod, peer_label, peer in FORMATS:
        path = folder / files[label]
        peer_path = path if peer is not None else folder / "metrics.jsonl"
        peer = peer or FORMATS[0][4]
        ours(mod, path)  # warm the page cache
        pair = paired_times(lambda: ours(mod, path), lambda: peer(peer_path), repeats, min_seconds=MIN_SECONDS)
        t_ours, t_peer = statistics.median(pair.a), statistics.median(pair.b)
        n, df = pair.last_a, pair.last_b
        peer_points = int(df.drop(columns=[c for c in ("step",) if c in df.columns]).shape[0] * (df.shape[1] - 1))
        log.info("%s: %d pairs; ours %s | pandas %s", label, len(pair.a), _spread(pair.a), _spread(pair.b))
        verdict = "met" if pair.ratio >= 1.0 else "**missed**"
        size = path.stat().st_size / 1e6
        rows.append(
            f"| {label} | {size:.1f} MB | {t_ours:.3f} s | {n:,} | {peer_label} | {t_peer:.3f} s | {peer_points:,} "
            f"| {len(pair.a)} | **{pair.ratio:.2f}x** ({pair.low:.2f}-{pair.high:.2f}) | {verdict} |"
        )
    return "\n".join(
        [
            f"{n_tags} tags x {n_steps:,} steps = {n_tags * n_steps:,} points per file; one process, page cache warm. "
            f"ppo_doctor and pandas are called in alternation, at least {repeats} pairs and more until each side has run "
            f"{MIN_SECONDS:g} s (at most 101 pairs); times are medians. Ratio = the median over pairs of pandas time / "
            "ppo_doctor time (>= 1.0 means ppo_doctor is at least as fast), in brackets its interquartile range.",
            "ppo_doctor's readers also find the step column, keep NaN/Inf, check for restarts and build one array per tag; "
            "pandas only parses the table.",
            "",
            f"Machine: {machine()}.",
            "",
            "| format | size | ppo_doctor `read` | points | pandas peer | peer time | peer points | pairs | ratio (IQR) | budget (>= 1.0x) |",
            "|---|---|---|---|---|---|---|---|---|---|",
            *rows,
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tags", type=int, default=50)
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    warnings.filterwarnings("ignore")
    table = run(args.repeats, args.tags, args.steps)
    print(table)  # noqa: T201 - a command-line tool's output
    if not args.no_write:
        write_section("formats", "Other formats vs pandas", "Reproduce: `python -m benchmarks.bench_formats`\n\n" + table)


if __name__ == "__main__":
    main()
