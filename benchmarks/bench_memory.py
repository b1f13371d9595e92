"""Peak memory (RSS) for loading and analysing the 10,000,000-scalar TensorBoard run.

    python -m benchmarks.bench_memory [--files 10] [--steps 20000] [--no-write]

The run is one folder of 10 event files x 1,000,000 scalars (50 tags x 20,000 steps each, steps
continuing from file to file; ``gen_formats.tensorboard_run``).  Each measurement runs in a
fresh subprocess and reports ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` (KiB on Linux):
after the imports only, after ``load_runs``, and after the whole ``analyze``.
Budget (docs/architecture.md#budgets): under 2 GB for load + analysis.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from benchmarks import gen_formats
from benchmarks._common import DATA, machine, python_subprocess, write_section

log = logging.getLogger("bench_memory")

_STAGES = {
    "imports only": "import ppo_doctor, ppo_doctor.analyze, ppo_doctor.rules.engine",
    "load_runs": "import ppo_doctor; runs = ppo_doctor.load_runs(PATH); n = sum(len(r.frame) for r in runs)",
    "load + analyze": (
        "from ppo_doctor.analyze import analyze; rep = analyze(PATH); "
        "n = sum(len(r.run.frame) for r in rep.runs); f = sum(len(r.findings) for r in rep.runs)"
    ),
}
_WRAP = (
    "import json, resource, time\nPATH = %r\nt0 = time.perf_counter()\n%s\n"
    "print(json.dumps({'rss_kib': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "
    "'seconds': time.perf_counter() - t0, 'points': globals().get('n'), 'findings': globals().get('f')}))"
)


def big_run(n_files: int, n_steps: int) -> Path:
    folder = DATA / f"tb-{n_files}x50x{n_steps}"
    if not folder.exists() or len(list(folder.glob("events.out.tfevents.*"))) != n_files:
        log.info("generating %s (takes a minute)", folder)
        gen_formats.tensorboard_run(folder, n_files=n_files, n_steps=n_steps)
    return folder


def measure(path: Path) -> dict[str, dict]:
    out = {}
    for stage, code in _STAGES.items():
        _, proc, _ = python_subprocess(["-c", _WRAP % (str(path), code)], one_core=False)
        if proc.returncode:
            raise RuntimeError(f"{stage} failed: {proc.stderr[-2000:]}")
        out[stage] = json.loads(proc.stdout.strip().splitlines()[-1])
        log.info("%s: %s", stage, out[stage])
    return out


def run(n_files: int, n_steps: int) -> str:
    path = big_run(n_files, n_steps)
    size = sum(p.stat().st_size for p in path.iterdir()) / 1e6
    res = measure(path)
    rows = []
    for stage, r in res.items():
        gb = r["rss_kib"] * 1024 / 1e9
        pts = f"{r['points']:,}" if r["points"] is not None else "—"
        rows.append(f"| {stage} | {pts} | {r['seconds']:.1f} s | **{gb:.2f} GB** |")
    peak = res["load + analyze"]["rss_kib"] * 1024 / 1e9
    return "\n".join(
        [
            f"{n_files} event files x 50 tags x {n_steps:,} steps = {n_files * 50 * n_steps:,} scalars ({size:.0f} MB) in one run folder. "
            "Fresh subprocess per row; peak RSS = `ru_maxrss`.",
            "",
            f"Machine: {machine()}.",
            "",
            "| stage | points | time | peak RSS |",
            "|---|---|---|---|",
            *rows,
            "",
            f"Budget: under 2 GB for load + analyze: {'met' if peak < 2.0 else '**missed**'} ({peak:.2f} GB).",
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    table = run(args.files, args.steps)
    print(table)  # noqa: T201 - a command-line tool's output
    if not args.no_write:
        write_section("memory", "Peak memory, 10,000,000 scalars", "Reproduce: `python -m benchmarks.bench_memory`\n\n" + table)


if __name__ == "__main__":
    main()
