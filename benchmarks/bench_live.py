"""Live mode budget (docs/architecture.md#budgets): ``Monitor.log`` every step and ``Monitor.check``
every 10 steps, for 10,000 steps x 30 metrics, must add under 1 % to a loop of 0.5 s per step;
the points must stay within 2x their raw float64 size.

    python -m benchmarks.bench_live                  # 10,000 steps, rewrites its RESULTS.md section
    python -m benchmarks.bench_live --steps 500 --no-write

The loop does not sleep: the time spent inside ``log`` + ``check`` is measured per step and
compared with the 0.5 s a step of the training would take.  Also measured: a check's cost
against ``analyze_run`` of the same points at a few run lengths (the live check must not grow
faster than the offline rules), and the storage's bytes against 8 bytes per point.
"""

from __future__ import annotations

import argparse
import logging
import time
import tracemalloc

import numpy as np

from benchmarks._common import machine, write_section
from ppo_doctor import Monitor
from ppo_doctor.analyze import analyze_run

log = logging.getLogger(__name__)

STEP_SECONDS = 0.5
BUDGET = 0.01
# The reference loop's TRL names (sample_logs/healthy-s1) and five custom metrics: 30 tags.
TAGS = (
    "episode", "epoch", "eps", "grad_norm", "loss/policy_avg", "loss/value_avg", "lr", "objective/entropy",
    "objective/kl", "objective/kl_coef", "objective/non_score_reward", "objective/rlhf_reward", "objective/scores",
    "policy/approxkl_avg", "policy/clipfrac_avg", "policy/entropy_avg", "ppo/returns/mean", "ppo/std_scores",
    "ppo/val/mean", "ppo/val/var_explained", "tokens/responses_len_mean", "val/clipfrac_avg", "val/num_eos_tokens",
    "val/ratio", "val/ratio_var", "custom/a", "custom/b", "custom/c", "custom/d", "custom/e",
)  # fmt: skip


def metric_rows(n_steps: int, seed: int = 0) -> np.ndarray:
    """``n_steps x 30`` values: slow random walks around plausible levels (a healthy-looking run)."""
    rng = np.random.default_rng(seed)
    walk = np.cumsum(rng.normal(0.0, 0.002, (n_steps, len(TAGS))), axis=0)
    level = rng.uniform(0.1, 1.0, len(TAGS))
    return level + walk + rng.normal(0.0, 0.01, (n_steps, len(TAGS)))


def rows_cpu(rows: np.ndarray) -> float:
    """CPU time of building the per-step metric dicts alone (the loop's own work, not ours)."""
    c0 = time.process_time()
    for step in range(len(rows)):
        dict(zip(TAGS, rows[step].tolist()))
    return time.process_time() - c0


def live_loop(n_steps: int, check_every: int) -> dict[str, float]:
    rows = metric_rows(n_steps)
    mon = Monitor(hparams={"learning_rate": 1e-5, "kl_coef": 0.05})
    t_log = t_check = 0.0
    cpu0 = time.process_time()
    cpu_untimed = 0.0
    worst_check = 0.0
    worst_bytes = 0.0
    alerts = 0
    for step in range(n_steps):
        metrics = dict(zip(TAGS, rows[step].tolist()))
        t0 = time.perf_counter()
        mon.log(step, metrics)
        t1 = time.perf_counter()
        t_log += t1 - t0
        if (step + 1) % check_every == 0:
            alerts += len(mon.check())
            dt = time.perf_counter() - t1
            t_check += dt
            worst_check = max(worst_check, dt)
        if step >= 100:  # (untimed) the columns' capacity against the values held, at every step
            c0 = time.process_time()
            worst_bytes = max(worst_bytes, mon.nbytes / (8 * mon.points))
            cpu_untimed += time.process_time() - c0
    # CPU time of the loop minus the dict building and the byte counting: what log + check cost
    # the training process, whatever else the shared machine runs (wall time includes waiting)
    cpu = time.process_time() - cpu0 - cpu_untimed - rows_cpu(rows)
    points = mon.points
    return {
        "steps": n_steps,
        "points": points,
        "log_s": t_log,
        "check_s": t_check,
        "per_step_ms": 1000 * (t_log + t_check) / n_steps,
        "overhead": (t_log + t_check) / (n_steps * STEP_SECONDS),
        "cpu_per_step_ms": 1000 * cpu / n_steps,
        "cpu_overhead": cpu / (n_steps * STEP_SECONDS),
        "worst_check_ms": 1000 * worst_check,
        "nbytes": mon.nbytes,
        "bytes_ratio": mon.nbytes / (8 * points),
        "worst_bytes_ratio": worst_bytes,
        "alerts": alerts,
    }


def resident_memory(n_steps: int, checks: int = 10) -> tuple[float, float, int]:
    """Python-heap bytes (``tracemalloc``, numpy included) the Monitor holds after its last
    check, and the peak during the run, both per 8 bytes of logged value; and the points."""
    rows = metric_rows(n_steps)
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    mon = Monitor(hparams={"learning_rate": 1e-5, "kl_coef": 0.05})
    for step in range(n_steps):
        mon.log(step, dict(zip(TAGS, rows[step].tolist())))
        if (step + 1) % (n_steps // checks) == 0:
            mon.check()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    raw = 8 * mon.points
    return (current - base) / raw, (peak - base) / raw, mon.points


def check_vs_offline(lengths: list[int], repeats: int) -> list[tuple[int, float, float]]:
    """Median time of one ``check`` on a run of each length vs ``analyze_run`` of the same points."""
    out = []
    rows = metric_rows(max(lengths))
    for n in lengths:
        mon = Monitor(hparams={"learning_rate": 1e-5, "kl_coef": 0.05})
        for step in range(n):
            mon.log(step, dict(zip(TAGS, rows[step].tolist())))
        live, off = [], []
        for _ in range(repeats):
            run = mon.run()  # a fresh Run each time: the rules cache series on its frame
            t0 = time.perf_counter()
            mon.check()
            t1 = time.perf_counter()
            analyze_run(run, {})
            t2 = time.perf_counter()
            live.append(t1 - t0)
            off.append(t2 - t1)
        out.append((n, float(np.median(live)), float(np.median(off))))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--check-every", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    load_before = machine()
    r = live_loop(args.steps, args.check_every)
    lengths = sorted({max(10, args.steps * k // 4) for k in (1, 2, 3, 4)})
    growth = check_vs_offline(lengths, args.repeats)
    held, peak, mem_points = resident_memory(args.steps)
    met = "met" if r["cpu_overhead"] < BUDGET else "**missed**"
    mem_met = "met" if max(r["worst_bytes_ratio"], held) <= 2.0 else "**missed**"
    body = "\n".join(
        [
            "Reproduce: `python -m benchmarks.bench_live`",
            "",
            f"{r['steps']:,} steps x {len(TAGS)} metrics (TRL names of the reference loop + 5 custom), "
            f"`Monitor.log` every step, `Monitor.check` every {args.check_every} steps; the time inside "
            f"log + check is compared with a {STEP_SECONDS} s training step (the loop does not sleep). "
            "One process; timings on a shared VM move by 10-30 % from run to run.",
            "",
            load_before,
            "",
            "| steps x metrics | points | log total (wall) | check total (wall) | per step: wall / CPU | overhead vs 0.5 s/step: wall / CPU | budget (< 1 %, CPU) | worst check (wall) | alerts |",
            "|---|---|---|---|---|---|---|---|---|",
            f"| {r['steps']:,} x {len(TAGS)} | {r['points']:,} | {r['log_s']:.2f} s | {r['check_s']:.2f} s | "
            f"{r['per_step_ms']:.2f} / {r['cpu_per_step_ms']:.2f} ms | {100 * r['overhead']:.2f} % / **{100 * r['cpu_overhead']:.2f} %** | "
            f"{met} | {r['worst_check_ms']:.0f} ms | {r['alerts']} |",
            "",
            "CPU time (`time.process_time` of the loop, less the building of the metric dicts) is what log + check "
            "take from the training process; wall time also counts the waits for a core while the other users of "
            "this 2-core VM run, which a training process on its own core does not see.",
            "",
            f"Storage: {r['nbytes'] / 1e6:.2f} MB of columns for {r['points']:,} points at the end = "
            f"**{r['bytes_ratio']:.2f}x** their raw float64 size (8 bytes a value); the most over the run (from step "
            f"100 on, right after a 1.5x growth) **{r['worst_bytes_ratio']:.2f}x**. Measured with `tracemalloc` "
            f"(numpy's buffers included) on a second pass with {mem_points:,} points and 10 checks: the Monitor holds "
            f"**{held:.2f}x** after its last check (the frame a check builds is freed), {peak:.2f}x at the peak of a "
            f"check (its transient RunFrame and the rules' series). Budget: within 2x held: {mem_met}.",
            "",
            f"One check vs `analyze_run` of the same points (medians of {args.repeats}): the live check is the "
            "offline rules plus building the run from the columns.",
            "",
            "| steps | points | check | analyze_run | check / analyze_run |",
            "|---|---|---|---|---|",
            *[f"| {n:,} | {n * len(TAGS):,} | {1000 * a:.1f} ms | {1000 * b:.1f} ms | {a / b:.2f} |" for n, a, b in growth],
        ]
    )
    log.info(body)
    if not args.no_write:
        write_section("live", "Live mode: `Monitor` overhead and memory", body)


if __name__ == "__main__":
    main()
