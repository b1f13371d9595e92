"""``ppo-doctor check`` end to end, the check path's imports, and the rule engine's scaling.

    python -m benchmarks.bench_check [--repeats 5] [--steps 20000] [--engine-steps 10000,100000,1000000] [--no-write]

* end to end: ``ppo-doctor check <run> --isolated`` in a fresh process pinned to one core
  (``taskset -c 0``), imports included, on 1,000,000 scalars (50 tags x 20,000 steps, one event
  file) whose tags are real TRL PPO names (``gen_formats.CHECK_TAGS``) so the rules run.
  Budget (docs/architecture.md#budgets): under 3 s;
* imports: the modules a check run leaves in ``sys.modules`` must not include matplotlib, scipy,
  torch (heavy, and the check path has no use for them);
* rule engine alone (``rules.engine.run_rules``) on one Run of 12 canonical metrics at 10k, 100k
  and 1M steps: time per step must stay flat (linear growth).
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
from pathlib import Path

from benchmarks import gen_formats
from benchmarks._common import DATA, machine, median_time, python_subprocess, write_section
from ppo_doctor.frame import RawRun, RawSeries

log = logging.getLogger("bench_check")

HEAVY = ("matplotlib", "scipy", "torch", "transformers", "tensorboard", "wandb", "mlflow", "tensorflow")
# Runs the CLI in-process, then reports which heavy top-level packages it imported.
_PROBE = (
    "import sys, json; from ppo_doctor.cli import main\n"
    "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
    "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & set(%r))))" % (HEAVY,)
)


def check_input(n_steps: int) -> Path:
    folder = DATA / f"check-50x{n_steps}"
    if not folder.exists():
        log.info("generating %s", folder)
        gen_formats.tensorboard_run(folder, tags=gen_formats.CHECK_TAGS, n_steps=n_steps)
    return folder


def end_to_end(folder: Path, repeats: int) -> tuple[float, list[float], float, int, str]:
    """Median wall time of ``ppo-doctor check`` subprocesses, all wall times, median CPU time,
    the exit code and the output."""
    args = ["-m", "ppo_doctor.cli", "check", str(folder), "--isolated"]
    python_subprocess(args)  # warm the page cache and __pycache__
    times, cpus, proc = [], [], None
    for _ in range(repeats):
        t, proc, cpu = python_subprocess(args)
        times.append(t)
        cpus.append(cpu)
    assert proc is not None
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"check failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return statistics.median(times), times, statistics.median(cpus), proc.returncode, proc.stdout


def heavy_imports(folder: Path) -> list[str]:
    _, proc, _ = python_subprocess(["-c", _PROBE, "check", str(folder), "--isolated"])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def engine_run(n_steps: int, n_metrics: int = 12):
    """A Run of ``n_metrics`` canonical TRL metrics x ``n_steps`` steps, built in memory."""
    from ppo_doctor.canonical.metrics import build_run

    tags = gen_formats.CHECK_TAGS[:n_metrics]
    values = gen_formats.run_values(len(tags), n_steps, seed=1)
    steps = __import__("numpy").arange(n_steps, dtype="int64")
    raw = RawRun(series=[RawSeries(tag=t, steps=steps, values=values[:, j], source="mem") for j, t in enumerate(tags)])
    return build_run(f"engine-{n_steps}", "mem", "tensorboard", [], raw)


def engine_scaling(sizes: list[int], repeats: int) -> list[tuple[int, int, float, list[str]]]:
    from ppo_doctor.rules.engine import run_rules

    out = []
    for n in sizes:
        run = engine_run(n)

        def once() -> list:
            # a fresh series cache each time: the engine's own work, not a warm cache
            run.frame._cache.clear()
            return run_rules(run, {})[0]

        once()  # warm-up: the first call imports the rule modules
        t, all_t, findings = median_time(once, repeats)
        codes = sorted({f.code for f in findings})
        log.info("engine %d steps: %s", n, ", ".join(f"{x:.3f}" for x in all_t))
        out.append((n, len(run.frame), t, codes))
        del run
    return out


def run(repeats: int, n_steps: int, engine_sizes: list[int]) -> str:
    folder = check_input(n_steps)
    t, times, cpu, code, stdout = end_to_end(folder, repeats)
    heavy = heavy_imports(folder)
    log.info("check: %s (exit %d)", ", ".join(f"{x:.2f}" for x in times), code)
    first = stdout.strip().splitlines()[0] if stdout.strip() else ""
    scaling = engine_scaling(engine_sizes, max(1, repeats // 2))
    base = scaling[0][2] / scaling[0][0]
    eng_rows = [
        f"| {n:,} | {pts:,} | {t_:.3f} s | {t_ / n * 1e6:.2f} µs | {t_ / scaling[0][2]:.1f}x for {n / scaling[0][0]:.0f}x steps "
        f"(per-step ratio {t_ / n / base:.2f}) | {len(codes)} |"
        for n, pts, t_, codes in scaling
    ]
    verdict = "met" if t < 3.0 else "**missed**"
    cpu_verdict = "met" if cpu < 3.0 else "**missed**"
    return "\n".join(
        [
            f"Machine: {machine()}.",
            "",
            f"### `ppo-doctor check` end to end ({n_steps * 50:,} scalars, 50 tags x {n_steps:,} steps, one event file)",
            "",
            f"Fresh process per run, `taskset -c 0` (one core), imports included; median of {repeats}: "
            f"**{t:.2f} s** wall (all: {', '.join(f'{x:.2f}' for x in times)}), budget < 3 s: {verdict}; "
            f"median CPU time (user + system, what the one core spent) **{cpu:.2f} s**: {cpu_verdict}. Exit code {code}.",
            f"First output line: `{first[:120]}`.",
            "",
            f"Heavy packages imported by the check run ({', '.join(HEAVY)}): **{', '.join(heavy) or 'none'}**.",
            "",
            "### Rule engine alone (`run_rules`, 12 canonical metrics, every rule selected)",
            "",
            "| steps | points | median time | per step | growth vs smallest | findings codes |",
            "|---|---|---|---|---|---|",
            *eng_rows,
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--engine-steps", default="10000,100000,1000000")
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    sizes = [int(x) for x in args.engine_steps.split(",")]
    table = run(args.repeats, args.steps, sizes)
    print(table)  # noqa: T201 - a command-line tool's output
    if not args.no_write:
        write_section("check", "`ppo-doctor check` and the rule engine", "Reproduce: `python -m benchmarks.bench_check`\n\n" + table)


if __name__ == "__main__":
    main(sys.argv[1:])
