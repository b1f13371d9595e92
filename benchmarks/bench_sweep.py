"""Sweeps: ``ppo_doctor.sweep`` over many runs with each executor, against single checks.

    python -m benchmarks.bench_sweep [--runs 1000] [--steps 2000] [--metrics 20] [--growth 100,1000] [--no-write]

Input: ``--runs`` synthetic runs (``gen_sweep``: JSONL, trainer_state.json and TensorBoard in turn,
``--metrics`` TRL-named tags x ``--steps`` steps each; the runs with the two smallest of ten
kl_coef values blow up).
Every measurement runs in a fresh subprocess (``--measure``), so that one's memory and caches do
not leak into the next, and reports wall time, the CPU time of the process and its workers, and
peak RSS (``ru_maxrss``):

* ``checks``: ``ppo_doctor.analyze(run_folder)`` on each run in turn, the sum of the per-run times
  (what ``check`` of each run costs, without the interpreter start-up);
* ``local``: ``sweep(root)`` in the process (discovery, every run, the attribution);
* ``processes``: ``sweep(root)`` with the ``processes`` executor, ``--jobs`` workers;
* ``dask``: ``sweep(root)`` on a ``LocalCluster`` of ``--jobs`` single-threaded worker processes
  started before the clock (per-worker peak RSS asked of each worker with ``Client.run``);
* growth: ``local`` on the first N runs (``--growth``), as a list of run folders;
* ``--dask-scaling 1000,10000,30000`` (issue 26): only ``sweep ROOT`` on a 2-worker LocalCluster
  (127.0.0.1) for each count of small runs (``--scaling-metrics`` x ``--scaling-steps``): wall and
  CPU per run, the client's and scheduler's CPU (this process) apart from the workers', and this
  process's peak RSS; per-run cost must stay flat within 20 % and the client's memory bounded.

Each sweep's JSON report is hashed: every executor must give the same report.  The machine is
shared (2 cores, other work running), so wall times are noisy; CPU times move much less.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import resource
import time
from pathlib import Path

from benchmarks import gen_sweep
from benchmarks._common import DATA, machine, python_subprocess, write_section

log = logging.getLogger("bench_sweep")

KL_COEFS = (0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.7, 1.0)


def sweep_root(n_runs: int, n_steps: int, n_metrics: int) -> tuple[Path, list[Path]]:
    root = DATA / f"sweep-{n_runs}x{n_metrics}x{n_steps}"
    seeds = range((n_runs + len(KL_COEFS) - 1) // len(KL_COEFS))
    t0 = time.perf_counter()
    runs = gen_sweep.write_sweep(root, kl_coefs=KL_COEFS, seeds=seeds, n_steps=n_steps, n_metrics=n_metrics, blowup_below=0.02, limit=n_runs)
    log.info("input %s ready (%.0f s)", root, time.perf_counter() - t0)
    return root, runs


def _rss_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # Linux: KiB


def _cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def _digest(report: object) -> str:
    doc = report.to_dict()  # type: ignore[attr-defined]
    for row in doc["runs"]:
        row.pop("path")  # a list of folders and a root name the same runs by different paths
    doc["tables"] = []
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:12]


def measure(kind: str, root: Path, n: int, jobs: int) -> dict[str, object]:
    """One measurement in this (fresh) process; see the module docstring."""
    import ppo_doctor
    from ppo_doctor.pipeline import Schedule
    from ppo_doctor.sweep import sweep

    folders = sorted(p for p in root.iterdir() if p.is_dir())[:n]

    ppo_doctor.analyze(str(folders[0]))  # imports and first-call caches, outside the clock
    out: dict[str, object] = {"kind": kind, "runs": len(folders)}
    cpu0 = _cpu(resource.RUSAGE_SELF) + _cpu(resource.RUSAGE_CHILDREN)
    if kind == "checks":
        total = 0.0
        for f in folders:
            t0 = time.perf_counter()
            ppo_doctor.analyze(str(f))
            total += time.perf_counter() - t0
        out["seconds"] = total
    elif kind == "dask":
        import dask
        from distributed import Client, LocalCluster

        from ppo_doctor.pipeline import dask_settings

        rss0 = _rss_mb(resource.RUSAGE_SELF)
        with dask.config.set(dask_settings(Schedule(executor="dask", jobs=jobs))):
            cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1")
        with cluster, Client(cluster) as client:
            t0 = time.perf_counter()
            rep = sweep(root if n >= len(list(root.iterdir())) else [str(f) for f in folders], schedule=Schedule(executor="dask", jobs=jobs, dask=cluster.scheduler_address))
            out["seconds"] = time.perf_counter() - t0
            peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
            out["worker_peak_mb"] = max(peaks.values())
            out["worker_cpu"] = sum(client.run(lambda: _cpu(resource.RUSAGE_SELF)).values())
            out["client_cpu"] = _cpu(resource.RUSAGE_SELF) - cpu0  # this process: the client and the scheduler
            out["client_peak_mb"] = _rss_mb(resource.RUSAGE_SELF)
            out["client_rss_before_mb"] = rss0
            out["digest"] = _digest(rep)
    else:
        schedule = Schedule(executor="processes", jobs=jobs) if kind == "processes" else Schedule()
        target = str(root) if kind != "growth" else [str(f) for f in folders]
        t0 = time.perf_counter()
        rep = sweep(target, schedule=schedule)
        out["seconds"] = time.perf_counter() - t0
        out["digest"] = _digest(rep)
        top = rep.attribution.splits[0] if rep.attribution and rep.attribution.splits else None
        out["top"] = None if top is None else top.label()
        if kind == "processes":
            out["worker_peak_mb"] = _rss_mb(resource.RUSAGE_CHILDREN)
    out["cpu"] = _cpu(resource.RUSAGE_SELF) + _cpu(resource.RUSAGE_CHILDREN) - cpu0
    out["self_peak_mb"] = _rss_mb(resource.RUSAGE_SELF)
    return out


def _child(kind: str, root: Path, n: int, jobs: int) -> dict:
    wall, proc, _ = python_subprocess(
        ["-m", "benchmarks.bench_sweep", "--measure", kind, "--root", str(root), "--n", str(n), "--jobs", str(jobs)], one_core=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{kind} failed: {proc.stderr[-3000:]}")
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    log.info("%s n=%d jobs=%d: %s", kind, n, jobs, res)
    return res


def run(n_runs: int, n_steps: int, n_metrics: int, jobs: int, growth: list[int]) -> str:
    root, _ = sweep_root(n_runs, n_steps, n_metrics)
    checks = _child("checks", root, n_runs, 1)
    local = _child("local", root, n_runs, 1)
    procs = _child("processes", root, n_runs, jobs)
    dask = _child("dask", root, n_runs, jobs)
    grown = [_child("growth", root, n, 1) for n in growth]
    same = len({local["digest"], procs["digest"], dask["digest"]}) == 1
    per_run = [(g["runs"], g["seconds"] / g["runs"], g["cpu"] / g["runs"]) for g in grown]
    lines = [
        f"{n_runs:,} runs x {n_metrics} metrics x {n_steps:,} steps ({n_runs * n_metrics * n_steps:,} points; JSONL, "
        f"trainer_state.json and TensorBoard in turn); {jobs} workers; one fresh process per row.",
        "",
        f"Machine: {machine()} (os.cpu_count() = {os.cpu_count()}; shared with other work, so wall times are noisy).",
        "",
        "| what | wall | CPU (process + workers) | per run (wall) | peak RSS per worker |",
        "|---|---|---|---|---|",
        f"| sum of single checks (`analyze(run)` x {checks['runs']:,}) | {checks['seconds']:.1f} s | {checks['cpu']:.1f} s | {1000 * checks['seconds'] / checks['runs']:.0f} ms | {checks['self_peak_mb']:.0f} MB (the process) |",
        f"| `sweep ROOT`, local executor | {local['seconds']:.1f} s | {local['cpu']:.1f} s | {1000 * local['seconds'] / local['runs']:.0f} ms | {local['self_peak_mb']:.0f} MB (the process) |",
        f"| `sweep ROOT`, processes x {jobs} | {procs['seconds']:.1f} s | {procs['cpu']:.1f} s | {1000 * procs['seconds'] / procs['runs']:.0f} ms | {procs['worker_peak_mb']:.0f} MB (largest worker) |",
        f"| `sweep ROOT`, Dask LocalCluster x {jobs} | {dask['seconds']:.1f} s | {dask['cpu']:.1f} s (workers {dask['worker_cpu']:.1f} s, client + scheduler {dask['client_cpu']:.1f} s) | {1000 * dask['seconds'] / dask['runs']:.0f} ms | {dask['worker_peak_mb']:.0f} MB (largest worker) |",
        "",
        f"- sweep overhead over the sum of single checks: **{100 * (local['seconds'] / checks['seconds'] - 1):+.1f} %** wall, "
        f"{100 * (local['cpu'] / checks['cpu'] - 1):+.1f} % CPU (target < 10 %)",
        f"- speed-up with {jobs} workers: processes **{local['seconds'] / procs['seconds']:.2f}x**, Dask **{local['seconds'] / dask['seconds']:.2f}x** (wall, against the local executor)",
        "- growth (local executor, first N runs as a list of folders): "
        + ", ".join(f"{n:,} runs {1000 * w:.0f} ms/run wall, {1000 * c:.0f} ms/run CPU" for n, w, c in per_run),
        f"- the same report from every executor (hash of the JSON without paths): **{'yes' if same else 'NO'}** ({local['digest']}); top split: {local.get('top')}",
    ]
    return "\n".join(lines)


def dask_scaling(counts: list[int], n_steps: int, n_metrics: int, jobs: int) -> str:
    """The ``--dask-scaling`` table: one fresh process per count, each on its own input."""
    rows, per = [], []
    for n in counts:
        root, _ = sweep_root(n, n_steps, n_metrics)
        d = _child("dask", root, n, jobs)
        per.append(d["seconds"] / n)
        rows.append(
            f"| {n:,} | {d['seconds']:.1f} s | **{1000 * d['seconds'] / n:.2f} ms** | {1000 * d['cpu'] / n:.2f} ms "
            f"| {d['worker_cpu']:.1f} s | {d['client_cpu']:.1f} s ({1000 * d['client_cpu'] / n:.2f} ms/run) "
            f"| {d['client_rss_before_mb']:.0f} -> {d['client_peak_mb']:.0f} MB | {d['worker_peak_mb']:.0f} MB |"
        )
    spread = max(per) / min(per) - 1
    growth = max(x / per[0] for x in per) - 1  # the budget is about growing with the runs
    return "\n".join(
        [
            f"`sweep ROOT` on a Dask LocalCluster of {jobs} single-threaded worker processes on 127.0.0.1, started before the clock; "
            f"runs of {n_metrics} metrics x {n_steps:,} steps (JSONL, trainer_state.json, TensorBoard in turn); one fresh process per row.",
            "",
            f"Machine: {machine()} (shared with other work: wall times are noisy, CPU times less so).",
            "",
            "| runs | wall | wall per run | CPU per run (all) | workers' CPU | client + scheduler CPU | client peak RSS (before the sweep -> peak) | largest worker RSS |",
            "|---|---|---|---|---|---|---|---|",
            *rows,
            "",
            f"- per-run wall cost, largest over the smallest sweep's: **{100 * growth:+.0f} %** (budget: no growth past 20 %: "
            f"{'met' if growth <= 0.2 else '**missed**'}); spread, largest over smallest per-run cost: {100 * spread:.0f} %",
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--metrics", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--growth", default="100,1000", help="comma-separated run counts for the growth rows")
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    parser.add_argument("--dask-scaling", help="comma-separated run counts: only the Dask scaling table (issue 26)")
    parser.add_argument("--scaling-steps", type=int, default=200)
    parser.add_argument("--scaling-metrics", type=int, default=5)
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        logging.basicConfig(level=logging.WARNING)
        print(json.dumps(measure(args.measure, Path(args.root), args.n, args.jobs)))  # noqa: T201 - read by the parent
        return
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.dask_scaling:
        counts = [int(x) for x in args.dask_scaling.split(",") if x]
        table = dask_scaling(counts, args.scaling_steps, args.scaling_metrics, args.jobs)
        print(table)  # noqa: T201 - a command-line tool's output
        if not args.no_write:
            command = f"python -m benchmarks.bench_sweep --dask-scaling {args.dask_scaling} --scaling-steps {args.scaling_steps} --scaling-metrics {args.scaling_metrics}"
            write_section("dask-scaling", "Dask at fleet size (issue 26)", f"Reproduce: `{command}`\n\n" + table)
        return
    growth = [int(x) for x in args.growth.split(",") if x]
    table = run(args.runs, args.steps, args.metrics, args.jobs, [min(g, args.runs) for g in growth])
    print(table)  # noqa: T201 - a command-line tool's output
    if not args.no_write:
        write_section("sweep", "Sweeps (`ppo-doctor sweep`)", "Reproduce: `python -m benchmarks.bench_sweep`\n\n" + table)


if __name__ == "__main__":
    main()
