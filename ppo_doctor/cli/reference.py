"""``ppo-doctor simulate`` and ``ppo-doctor validate``: run the reference loop's scenarios.

torch and transformers are imported only inside the commands (through ``reference/ppo.py``, and
``reference/validate.py`` when a suite runs), so ``ppo-doctor --help`` and every other command stay free of them.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
import tempfile
import time
from pathlib import Path

from ..config import resolve
from ..exits import EXIT_ERROR, EXIT_FINDINGS
from ..monitor import Monitor, check_stop_on
from ..reference import scenarios as scenario_registry
from ..reference.logwriters import FORMATS
from ..reference.trl_scenarios import TRL_SCENARIOS
from ..reference.validate import merge_section, render_markdown, render_text, run_suite, summarize
from .command import UsageError, at_least, command, dir_path, echo, file_path

log = logging.getLogger(__name__)

# What `simulate` prints when it is done: one line per metric, first and last values.
SUMMARY_METRICS = (
    "objective/scores",
    "objective/kl",
    "objective/kl_coef",
    "policy/entropy_avg",
    "policy/approxkl_avg",
    "policy/clipfrac_avg",
    "loss/value_avg",
    "ppo/val/var_explained",
    "grad_norm",
    "tokens/responses_len_mean",
)


# validate --suite: the scenarios, the scorecard section's title and the extra they need
SUITES = {
    "ppo": (scenario_registry.SCENARIOS, "Scenario scorecard", "reference"),
    "trl": (TRL_SCENARIOS, "GRPO scenario scorecard (real TRL GRPOTrainer)", "trl"),
}


def _require_torch(extra: str = "reference") -> None:
    modules = ("torch", "transformers") + (("trl", "datasets") if extra == "trl" else ())
    try:
        for name in modules:
            __import__(name)
    except ImportError as exc:
        echo(
            f"the {'TRL suite' if extra == 'trl' else 'reference loop'} needs {', '.join(modules)} "
            f"({exc.name} is missing): in a checkout of ppo-doctor, pip install -e '.[{extra}]'",
            err=True,
        )
        sys.exit(EXIT_ERROR)


def _resolve(name: str) -> scenario_registry.Scenario:
    try:
        return scenario_registry.get(name)
    except KeyError as exc:
        raise UsageError(f"argument NAME: {exc.args[0]}") from None


def held_out(sc: scenario_registry.Scenario, seed: int) -> scenario_registry.Scenario:
    """``sc`` on seed ``seed`` (``validate --seed``): the seeds the rules were tuned on are 1-3, a
    scorecard on others is a held-out test.  A scenario that fixes its own seed K (the healthy-sK
    runs) moves to ``seed + K - 1``, so the healthy runs stay on distinct seeds."""
    return sc.with_seed(seed + int(sc.changes.get("seed", 1)) - 1)


def _fmt(x: float) -> str:
    return f"{x:.4g}" if math.isfinite(x) else str(x)


def history_table(history: dict[str, list[float]]) -> str:
    """First, last, min and max of the headline metrics of one run."""
    rows = []
    for m in SUMMARY_METRICS:
        vals = history.get(m)
        if not vals:
            continue
        finite = [v for v in vals if math.isfinite(v)]
        lo = _fmt(min(finite)) if finite else "nan"
        hi = _fmt(max(finite)) if finite else "nan"
        rows.append((m, _fmt(vals[0]), _fmt(vals[-1]), lo, hi))
    width = max(len(r[0]) for r in rows) if rows else 10
    lines = [f"{'metric':<{width}}  {'first':>10}  {'last':>10}  {'min':>10}  {'max':>10}"]
    lines += [f"{r[0]:<{width}}  {r[1]:>10}  {r[2]:>10}  {r[3]:>10}  {r[4]:>10}" for r in rows]
    return "\n".join(lines)


def _simulate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", metavar="NAME")
    parser.add_argument("-o", "--out", type=dir_path, metavar="DIR", help="Run folder to write the logs into.")
    parser.add_argument("--steps", type=at_least(1), metavar="N", help="PPO updates (default: the scenario's, 120 for most).")
    parser.add_argument("--seed", type=int, help="Seed (healthy-s1/-s2/-s3 fix theirs; this overrides it).")
    parser.add_argument("--batch-size", type=at_least(2), metavar="N", help="Prompts per update (default 32).")
    parser.add_argument(
        "--format", dest="formats", action="append", choices=FORMATS,
        help="Log formats to write (repeatable; default tensorboard, jsonl, trainer_state).",
    )
    parser.add_argument("--tb-prefix", default="", metavar="PREFIX", help='TensorBoard tag prefix, e.g. "train/" as HF writes.')
    parser.add_argument("--fake-clock", action="store_true", help="Deterministic wall times (reproducible files).")
    parser.add_argument("--cache-dir", type=dir_path, metavar="DIR", help="SFT cache (default ~/.cache/ppo_doctor).")
    parser.add_argument("--device", default="auto", help="auto (the default), cpu or cuda.")
    parser.add_argument("--list", dest="list_only", action="store_true", help="List the scenarios and exit.")
    parser.add_argument(
        "--stop-on", action="append", metavar="WHAT",
        help="Check the run while it trains and stop it on a new finding of this severity (error, warning), "
        "symptom, rule code or name (repeatable or comma-separated); exit 1 when it stopped.",
    )
    parser.add_argument("--check-every", type=at_least(1), default=10, metavar="N", help="Steps between live checks (with --stop-on; default: 10).")


@command(_simulate_arguments)
def simulate(args: argparse.Namespace) -> None:
    """Train the bundled tiny PPO-RLHF loop with scenario NAME's fault and write its logs to OUT."""
    name, out, seed = args.name, args.out, args.seed
    if args.list_only or name is None:
        for sc in scenario_registry.SCENARIOS.values():
            exp = ", ".join(sorted(sc.expected)) or "healthy"
            echo(f"{sc.name:<26} {exp:<34} {sc.description}")
        if name is None and not args.list_only:
            echo("\nusage: ppo-doctor simulate NAME -o DIR", err=True)
            sys.exit(EXIT_ERROR)
        return
    sc = _resolve(name)
    if out is None:
        raise UsageError("missing option -o/--out")
    _require_torch()
    from ..reference.ppo import run

    overrides: dict = {"tb_prefix": args.tb_prefix, "fake_clock": args.fake_clock, "device": args.device}
    for key, value in (("steps", args.steps), ("batch_size", args.batch_size), ("cache_dir", args.cache_dir)):
        if value is not None:
            overrides[key] = value
    if args.formats:
        overrides["formats"] = tuple(args.formats)
    if seed is not None:
        overrides["seed"] = seed
        if sc.healthy:
            overrides["exp_name"] = f"healthy-s{seed}"
    try:
        run_args = sc.args(**overrides)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    live = None
    if args.stop_on:
        from ..reference.ppo import LiveCheck

        wanted = [s.strip() for item in args.stop_on for s in item.split(",") if s.strip()]
        try:
            check_stop_on(wanted)
        except ValueError as exc:
            raise UsageError(f"argument --stop-on: {exc}") from None
        # the loop's plan is its number of updates: a trend is judged once they are done
        live = LiveCheck(Monitor(resolve(), run_id=run_args.exp_name, path=out, planned_steps=run_args.steps), wanted, args.check_every)
    t0 = time.time()
    history = run(run_args, out, live)
    echo(f"{run_args.exp_name}: {len(history.get('objective/kl', []))} steps in {time.time() - t0:.0f}s -> {out}")
    echo(history_table(history))
    if live is not None and live.stopped_by is not None:
        f = live.stopped_by
        onset = f" from step {f.start_step}" if f.start_step is not None else ""
        echo(f"stopped by ppo-doctor at step {live.stopped_at}: {f.severity} {f.code} {f.name} [{f.symptom}] on {f.metric}{onset}")
        sys.exit(EXIT_FINDINGS)


def _validate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--suite", choices=sorted(SUITES), default="ppo",
        help="ppo (the default): the bundled reference PPO loop; trl: TRL's own GRPOTrainer ([trl] extra).",
    )
    parser.add_argument(
        "--scenarios", "-s", dest="names", action="append", metavar="NAMES",
        help="Scenario names (repeatable or comma-separated; default: all that the scorecard scores).",
    )
    parser.add_argument("--steps", type=at_least(1), metavar="N", help="PPO updates per scenario (default: each scenario's, 120 for most).")
    parser.add_argument(
        "-o", "--output", type=file_path, metavar="FILE",
        help="Write the suite's Markdown scorecard section here (other suites' sections in the file are kept).",
    )
    parser.add_argument("--workdir", type=dir_path, metavar="DIR", help="Keep the runs here (default: a temp dir).")
    parser.add_argument(
        "--min-severity", choices=("info", "warning", "error"), default="warning",
        help="Lowest finding severity that counts as a detected symptom (default: warning).",
    )
    parser.add_argument("--cache-dir", type=dir_path, metavar="DIR", help="SFT cache (default ~/.cache/ppo_doctor).")
    parser.add_argument(
        "--seed", type=at_least(1), metavar="N",
        help="Held-out seeds: run every scenario with seed N instead of 1 (a scenario that fixes its own seed K, "
        "like healthy-s2, gets N+K-1); each run is named <scenario>-s<seed>.",
    )
    parser.add_argument(
        "--strict", action="store_true",
        help="Exit 1 unless the suite meets the detection budget: symptom recall >= 95 %%, the expected cause "
        "first in >= 80 %%, no symptom on a healthy run.",
    )


@command(_validate_arguments)
def validate(args: argparse.Namespace) -> None:
    """Run the fault scenarios, diagnose each, and score the doctor (confusion matrix, cause accuracy)."""
    suite, steps, seed, min_severity = args.suite, args.steps, args.seed, args.min_severity
    registry, title, extra = SUITES[suite]
    wanted = [n for item in args.names or () for n in item.split(",") if n] or [n for n, sc in registry.items() if sc.scored]
    if suite == "ppo":
        chosen = [_resolve(n) for n in wanted]
    else:
        unknown = [n for n in wanted if n not in registry]
        if unknown:
            raise UsageError(f"argument --scenarios: unknown {suite} scenario(s) {', '.join(unknown)}; choose from {', '.join(registry)}")
        chosen = [registry[n] for n in wanted]
    if seed is not None:
        chosen = [held_out(sc, seed) for sc in chosen]
    _require_torch(extra)
    overrides = {"cache_dir": args.cache_dir} if args.cache_dir else {}
    workdir, output = args.workdir, args.output
    t0 = time.time()
    if workdir:
        outcomes = run_suite(chosen, Path(workdir), steps=steps, min_severity=min_severity, overrides=overrides)
    else:
        with tempfile.TemporaryDirectory(prefix="ppo-doctor-validate-") as tmp:
            outcomes = run_suite(chosen, Path(tmp), steps=steps, min_severity=min_severity, overrides=overrides)
    elapsed = time.time() - t0
    echo(render_text(outcomes))
    echo(f"{len(outcomes)} scenarios in {elapsed:.0f}s")
    if output:
        notes = [
            f"Steps per scenario: {steps or 'the scenario default'}; symptoms count from severity '{min_severity}' up; "
            f"suite time {elapsed:.0f}s."
            + (f" Held-out seeds: every scenario on seed {seed} (the healthy-sK runs on {seed}+K-1)." if seed else "")
        ]
        if suite == "trl":
            import torch
            import transformers
            import trl

            notes.append(
                f"TRL {trl.__version__}, transformers {transformers.__version__}, torch {torch.__version__}, "
                "CPU, one torch thread per run; scenarios and what each run's curves show: "
                "`ppo_doctor/reference/trl_scenarios.py`."
            )
        path = Path(output)
        before = path.read_text(encoding="utf-8") if path.is_file() else ""
        section = render_markdown(outcomes, title=title, notes=notes)
        path.write_text(merge_section(before, section), encoding="utf-8")
        echo(f"scorecard written to {output}")
    if args.strict and not summarize(outcomes).passed:
        sys.exit(EXIT_FINDINGS)
