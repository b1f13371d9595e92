"""``ppo-doctor simulate`` and ``ppo-doctor validate``: run the reference loop's scenarios.

torch and transformers are imported only inside the commands (through ``reference/ppo.py``, and
``reference/validate.py`` when a suite runs), so ``ppo-doctor --help`` and every other command stay free of them.
"""

from __future__ import annotations

import logging
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click

from ..config import resolve
from ..exits import EXIT_ERROR, EXIT_FINDINGS
from ..monitor import Monitor, check_stop_on
from ..reference import scenarios as scenario_registry
from ..reference.logwriters import FORMATS
from ..reference.trl_scenarios import TRL_SCENARIOS
from ..reference.validate import merge_section, render_markdown, render_text, run_suite, summarize
from .common import DIRECTORY, FILE

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
        click.echo(
            f"the {'TRL suite' if extra == 'trl' else 'reference loop'} needs {', '.join(modules)} "
            f"({exc.name} is missing): in a checkout of ppo-doctor, pip install -e '.[{extra}]'",
            err=True,
        )
        sys.exit(EXIT_ERROR)


def _resolve(name: str) -> scenario_registry.Scenario:
    try:
        return scenario_registry.get(name)
    except KeyError as exc:
        raise click.BadParameter(exc.args[0], param_hint="NAME") from None


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


@click.command()
@click.argument("name", required=False)
@click.option("-o", "--out", type=DIRECTORY, metavar="DIR", help="Run folder to write the logs into.")
@click.option("--steps", type=click.IntRange(min=1), metavar="N", help="PPO updates (default: the scenario's, 120 for most).")
@click.option("--seed", type=int, help="Seed (healthy-s1/-s2/-s3 fix theirs; this overrides it).")
@click.option("--batch-size", type=click.IntRange(min=2), metavar="N", help="Prompts per update (default 32).")
@click.option(
    "--format", "formats", multiple=True, type=click.Choice(FORMATS),
    help="Log formats to write (repeatable; default tensorboard, jsonl, trainer_state).",
)
@click.option("--tb-prefix", default="", metavar="PREFIX", help='TensorBoard tag prefix, e.g. "train/" as HF writes.')
@click.option("--fake-clock", is_flag=True, help="Deterministic wall times (reproducible files).")
@click.option("--cache-dir", type=DIRECTORY, metavar="DIR", help="SFT cache (default ~/.cache/ppo_doctor).")
@click.option("--device", default="auto", help="auto (the default), cpu or cuda.")
@click.option("--list", "list_only", is_flag=True, help="List the scenarios and exit.")
@click.option(
    "--stop-on", multiple=True, metavar="WHAT",
    help="Check the run while it trains and stop it on a new finding of this severity (error, warning), "
    "symptom, rule code or name (repeatable or comma-separated); exit 1 when it stopped.",
)
@click.option("--check-every", type=click.IntRange(min=1), default=10, metavar="N", help="Steps between live checks (with --stop-on; default: 10).")
def simulate(**opts: Any) -> None:
    """Train the bundled tiny PPO-RLHF loop with scenario NAME's fault and write its logs to OUT."""
    name, out, seed = opts["name"], opts["out"], opts["seed"]
    if opts["list_only"] or name is None:
        for sc in scenario_registry.SCENARIOS.values():
            exp = ", ".join(sorted(sc.expected)) or "healthy"
            click.echo(f"{sc.name:<26} {exp:<34} {sc.description}")
        if name is None and not opts["list_only"]:
            click.echo("\nusage: ppo-doctor simulate NAME -o DIR", err=True)
            sys.exit(EXIT_ERROR)
        return
    sc = _resolve(name)
    if out is None:
        raise click.UsageError("Missing option '-o' / '--out'.")
    _require_torch()
    from ..reference.ppo import run

    overrides: dict = {"tb_prefix": opts["tb_prefix"], "fake_clock": opts["fake_clock"], "device": opts["device"]}
    for key in ("steps", "batch_size", "cache_dir"):
        if opts[key] is not None:
            overrides[key] = opts[key]
    if opts["formats"]:
        overrides["formats"] = tuple(opts["formats"])
    if seed is not None:
        overrides["seed"] = seed
        if sc.healthy:
            overrides["exp_name"] = f"healthy-s{seed}"
    try:
        run_args = sc.args(**overrides)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    live = None
    if opts["stop_on"]:
        from ..reference.ppo import LiveCheck

        wanted = [s.strip() for item in opts["stop_on"] for s in item.split(",") if s.strip()]
        try:
            check_stop_on(wanted)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="'--stop-on'") from None
        # the loop's plan is its number of updates: a trend is judged once they are done
        live = LiveCheck(Monitor(resolve(), run_id=run_args.exp_name, path=out, planned_steps=run_args.steps), wanted, opts["check_every"])
    t0 = time.time()
    history = run(run_args, out, live)
    click.echo(f"{run_args.exp_name}: {len(history.get('objective/kl', []))} steps in {time.time() - t0:.0f}s -> {out}")
    click.echo(history_table(history))
    if live is not None and live.stopped_by is not None:
        f = live.stopped_by
        onset = f" from step {f.start_step}" if f.start_step is not None else ""
        click.echo(f"stopped by ppo-doctor at step {live.stopped_at}: {f.severity} {f.code} {f.name} [{f.symptom}] on {f.metric}{onset}")
        sys.exit(EXIT_FINDINGS)


@click.command()
@click.option(
    "--suite", type=click.Choice(sorted(SUITES)), default="ppo",
    help="ppo (the default): the bundled reference PPO loop; trl: TRL's own GRPOTrainer ([trl] extra).",
)
@click.option(
    "--scenarios", "-s", "names", multiple=True, metavar="NAMES",
    help="Scenario names (repeatable or comma-separated; default: all that the scorecard scores).",
)
@click.option("--steps", type=click.IntRange(min=1), metavar="N", help="PPO updates per scenario (default: each scenario's, 120 for most).")
@click.option(
    "-o", "--output", type=FILE, metavar="FILE",
    help="Write the suite's Markdown scorecard section here (other suites' sections in the file are kept).",
)
@click.option("--workdir", type=DIRECTORY, metavar="DIR", help="Keep the runs here (default: a temp dir).")
@click.option(
    "--min-severity", type=click.Choice(("info", "warning", "error")), default="warning",
    help="Lowest finding severity that counts as a detected symptom (default: warning).",
)
@click.option("--cache-dir", type=DIRECTORY, metavar="DIR", help="SFT cache (default ~/.cache/ppo_doctor).")
@click.option(
    "--seed", type=click.IntRange(min=1), metavar="N",
    help="Held-out seeds: run every scenario with seed N instead of 1 (a scenario that fixes its own seed K, "
    "like healthy-s2, gets N+K-1); each run is named <scenario>-s<seed>.",
)
@click.option(
    "--strict", is_flag=True,
    help="Exit 1 unless the suite meets the detection budget: symptom recall >= 95 %, the expected cause "
    "first in >= 80 %, no symptom on a healthy run.",
)
def validate(**opts: Any) -> None:
    """Run the fault scenarios, diagnose each, and score the doctor (confusion matrix, cause accuracy)."""
    suite, steps, seed, min_severity = opts["suite"], opts["steps"], opts["seed"], opts["min_severity"]
    registry, title, extra = SUITES[suite]
    wanted = [n for item in opts["names"] for n in item.split(",") if n] or [n for n, sc in registry.items() if sc.scored]
    if suite == "ppo":
        chosen = [_resolve(n) for n in wanted]
    else:
        unknown = [n for n in wanted if n not in registry]
        if unknown:
            raise click.BadParameter(f"unknown {suite} scenario(s) {', '.join(unknown)}; choose from {', '.join(registry)}", param_hint="'--scenarios'")
        chosen = [registry[n] for n in wanted]
    if seed is not None:
        chosen = [held_out(sc, seed) for sc in chosen]
    _require_torch(extra)
    overrides = {"cache_dir": opts["cache_dir"]} if opts["cache_dir"] else {}
    workdir, output = opts["workdir"], opts["output"]
    t0 = time.time()
    if workdir:
        outcomes = run_suite(chosen, Path(workdir), steps=steps, min_severity=min_severity, overrides=overrides)
    else:
        with tempfile.TemporaryDirectory(prefix="ppo-doctor-validate-") as tmp:
            outcomes = run_suite(chosen, Path(tmp), steps=steps, min_severity=min_severity, overrides=overrides)
    elapsed = time.time() - t0
    click.echo(render_text(outcomes))
    click.echo(f"{len(outcomes)} scenarios in {elapsed:.0f}s")
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
        click.echo(f"scorecard written to {output}")
    if opts["strict"] and not summarize(outcomes).passed:
        sys.exit(EXIT_FINDINGS)
