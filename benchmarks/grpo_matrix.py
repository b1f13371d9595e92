"""The real-trainer matrix (issues 37 and 41): TRL's own GRPOTrainer on the tiny grammar GPT-2,
healthy and faulty configurations, judged offline and live by the current code.

    python -m benchmarks.grpo_matrix train      # slow: every configuration not yet cached
    python -m benchmarks.grpo_matrix evaluate   # seconds: the table, with the code as it is now
    python -m benchmarks.grpo_matrix evaluate --write   # ... and into docs/live.md

Training runs every configuration of :data:`MATRIX` to its last step with no doctor attached
(``ppo_doctor.reference.trl_suite.run``), into ``<cache>/<name>/run`` (default cache
``/work/grpo_cache``, outside the repository; a configuration already there is skipped), with
``<cache>/<name>/matrix.json`` holding the trainer's arguments and the training time.  A full
run lets a later evaluation tell where a live callback *would* have stopped, without training
again after every rule change.

Evaluation reads every cached run twice:

* offline: :func:`ppo_doctor.analyze` on the run folder (the verdict and its warning- and
  error-level symptoms);
* live: the trainer's logged rows (``trainer_state.json``'s ``log_history``) fed in order to a
  :class:`~ppo_doctor.monitor.Monitor` built as ``DoctorCallback`` builds it (the trainer's
  arguments as hyper-parameters, ``max_steps`` as the plan, the scheduler's warm-up), checked on
  the callback's schedule (every :func:`~ppo_doctor.integrations.transformers.default_check_every`
  steps); the first error-level finding is where ``DoctorCallback(stop_on="error")`` would have
  stopped.

A faulty run is *right* when it is stopped for one of its own symptoms before a quarter of the
plan left after the fault's onset is spent (issue 41's bar); a healthy run is *right* when it
is neither stopped nor warned, offline or live.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from benchmarks._common import write_section

log = logging.getLogger(__name__)

STEPS = 160
"""optimizer steps of every matrix run: 13-40 s each on an idle core, 1-2.5 minutes on the shared
2-core VM (the wall times are in each run's matrix.json)"""
DEFAULT_CACHE = Path("/work/grpo_cache")
RUN_DIR, META = "run", "matrix.json"
DOCS = Path(__file__).resolve().parent.parent / "docs" / "live.md"
SECTION = "grpo-matrix"
EARLY_SHARE = 0.25
"""issue 41: a faulty run must be stopped before this share of the plan left after the fault's
onset is spent"""


@dataclass(frozen=True)
class MatrixRun:
    """One configuration: ``GrpoArgs`` changes and what a right answer says about it."""

    name: str
    changes: dict[str, Any]
    fault: str | None = None
    """None for a healthy run; else what was done wrong, in words"""
    symptoms: frozenset[str] = frozenset()
    """for a faulty run: a live stop for one of these is a stop for its own fault"""
    onset: int = 1
    """the step the fault begins: its injection (1 for a fault that does harm from the start),
    or, for a fault whose harm needs the policy to move first (an exploitable reward, a loss term
    or clip range that pushes the policy slowly), the step the run's curves first leave the
    healthy runs' range (recorded in ``shows``)"""
    shows: str = ""
    """what the run's own curves show (measured on the cached run)"""

    @property
    def healthy(self) -> bool:
        return self.fault is None


def _h(name: str, **changes: Any) -> MatrixRun:
    return MatrixRun(name, changes)


def _f(name: str, fault: str, symptoms: Iterable[str], shows: str = "", onset: int = 1, **changes: Any) -> MatrixRun:
    return MatrixRun(name, changes, fault=fault, symptoms=frozenset(symptoms), onset=onset, shows=shows)


# The base run is trl_suite's: SFT GPT-2, 4 prompts x 8 completions per step, learning rate 5e-5
# constant, beta 0.04, temperature 1, TRL 1.16's loss "dapo", the grammar's sentiment reward.
# Listed in training order: healthy and faulty interleaved, so a partial cache is still a matrix.
MATRIX: tuple[MatrixRun, ...] = (
    _h("base-s1", seed=1),
    _f(
        "lr-x1000-noclip",
        "learning rate 5e-2 (1000x), no gradient clipping",
        {"kl_blowup", "entropy_collapse", "reward_hacking"},
        shows="KL 7.2 nats per token over steps 1-20 and 4.9-8 to the end; the reward sits at its ceiling 1.0 with every "
        "response at the 16-token limit (positive adjectives spammed) and every group without spread from step ~20; "
        "entropy 1.6 -> 0.13",
        learning_rate=5e-2,
        max_grad_norm=0.0,
    ),
    _h("base-s2", seed=2),
    _f(
        "constant-reward",
        "a constant reward: every group has zero spread, the policy gradient is exactly 0",
        {"stagnation"},
        shows="reward 1.0 and reward std 0 at every step, frac_reward_zero_std 1, grad norm and KL exactly 0: the run cannot learn",
        rewards=("constant",),
    ),
    _h("grpo-loss-s1", loss_type="grpo", seed=1),
    _f(
        "sign-flip-80",
        "the reward's sign flips at step 80 and stays flipped (learning rate 1e-4, so the policy has learned by then)",
        {"reward_collapse"},
        shows="reward 0.40 over steps 61-80, -0.51 over steps 81-100, still -0.19 over the last 20 (the policy slowly "
        "learns the inverted reward)",
        onset=80,
        sign_flip_from_step=80,
        learning_rate=1e-4,
    ),
    _h("dr-grpo-s1", loss_type="dr_grpo", seed=1),
    _f(
        "shuffled-reward",
        "rewards shuffled across the batch: no information about the text",
        {"stagnation"},
        shows="reward 0.05 over steps 1-20, 0.01-0.06 after, 0.08 over the last 20 (healthy seed 1 reaches about 0.5); KL <= 0.007",
        shuffle_rewards=True,
    ),
    _h("bnpo-s1", loss_type="bnpo", seed=1),
    _f(
        "temperature-0.05",
        "sampling temperature 0.05: near-identical completions, groups without spread",
        {"stagnation", "entropy_collapse"},
        shows="the reward reaches 0.96 (two positive adjectives) by step ~25 and stays there with reward std below 0.02 (1e-7 "
        "over steps 61-100): every group's 8 completions are the same, no learning signal is left for 135 steps; KL "
        "0.45-0.8, grad norm 9 over steps 1-20 (clipped to 1), entropy 0.28",
        temperature=0.05,
    ),
    _h("generations-4-s1", num_generations=4, seed=1),
    _f(
        "lr-x100-noclip",
        "learning rate 5e-3 (100x), no gradient clipping",
        {"kl_blowup", "reward_hacking"},
        shows="KL 5.4 over steps 1-20, 3.5-5 to the end; the reward at its ceiling 1.0 from step ~20 with every response "
        "at the 16-token limit; entropy rises 1.6 -> 2.5",
        learning_rate=5e-3,
        max_grad_norm=0.0,
    ),
    _h("beta-0-s1", beta=0.0, seed=1),
    _f(
        "lr-1e-9",
        "learning rate 1e-9: the policy cannot move",
        {"stagnation"},
        shows="KL exactly 0 throughout; the reward is noise around 0 (-0.03 to 0.05 per 20 steps)",
        learning_rate=1e-9,
    ),
    _h("beta-0.1-s1", beta=0.1, seed=1),
    _f(
        "nan-reward-80",
        "the reward function returns NaN from step 80",
        {"nan"},
        shows="reward 0.16 over steps 61-79, then logged as null to the end; the grad norm falls 0.73 -> 0.02 (the KL term alone)",
        onset=80,
        nan_from_step=80,
    ),
    _h("temperature-0.7-s1", temperature=0.7, seed=1),
    _f(
        "hackable-beta-0",
        "a reward paying 0.3 per '!' with beta 0, learning rate 1e-4",
        {"reward_hacking"},
        shows="reward 0.2-0.5 to step 40, 0.99 at step 41, 2.8 by steps 61-80 and 4.7 at the end, while responses grow 6.4 -> 15.8 "
        "tokens (of 16) and entropy falls 1.6 -> 0.3: the exploit shows from step 41",
        onset=41,
        rewards=("hackable",),
        beta=0.0,
        learning_rate=1e-4,
    ),
    _h("lr-2e-5-s1", learning_rate=2e-5, seed=1),
    _f(
        "format-over-correctness",
        "an easy format reward weighted 1 over a hard correctness reward weighted 0.2 (they conflict)",
        {"reward_hacking"},
        shows="the total reward rises 0.38 -> 0.97 because the format component saturates (0.36 -> 0.96) while correctness "
        "falls 0.13 -> 0.005; responses shrink 5.8 -> 3.5 words",
        rewards=("format", "correct"),
        reward_weights=(1.0, 0.2),
    ),
    _h("lr-1e-4-s1", learning_rate=1e-4, seed=1),
    _f(
        "clip-higher-high-lr",
        "clip-higher epsilon_high 5 with learning rate 5e-4, beta 0, two updates per batch",
        {"reward_hacking"},
        shows="the share of responses cut at the 16-token limit leaves the healthy runs' range at step 23 (0.25; no healthy "
        "run passes 0.19 before step 120) and holds 0.94-1.0 from step 37; entropy rises 1.45 -> 2.3 from step ~40 while "
        "the reward sits at its ceiling 1.0 from step ~50 (positive adjectives spammed in any order), with 60-75 % of the groups "
        "without spread; the reward is gamed, not stalled, so this is not issue 38's 'entropy rises while the reward stalls'",
        onset=23,
        epsilon_high=5.0,
        learning_rate=5e-4,
        beta=0.0,
        num_iterations=2,
    ),
    _h("cosine-warmup-s1", lr_scheduler_type="cosine", warmup_steps=0.1, learning_rate=1e-4, seed=1),
    _f(
        "noise-reward",
        "a reward of pure noise (independent of the text)",
        {"stagnation"},
        shows="reward -0.03 to 0.06 per 20 steps around 0 with std 1 (the noise's) from start to end; KL <= 0.01",
        rewards=("noise",),
    ),
    _h("grad-accum-2-s1", gradient_accumulation_steps=2, seed=1),
    _h("num-iterations-2-s1", num_iterations=2, seed=1),
    _h("rloo-s1", trainer="rloo", seed=1),
    _h("base-s3", seed=3),
    _h("temperature-0.7-s2", temperature=0.7, seed=2),
    _h("dr-grpo-s2", loss_type="dr_grpo", seed=2),
    _f(
        "lr-x1000-noclip-s2",
        "learning rate 5e-2 (1000x), no gradient clipping, seed 2",
        {"kl_blowup", "entropy_collapse", "reward_hacking"},
        shows="KL 6.8 over steps 1-20, 7.6-7.8 to step 100, 4.8 at the end; the reward at its ceiling with every response at "
        "the 16-token limit and every group without spread from step ~20; entropy 1.07 -> 0.5 (steps 41-100), then 2.1",
        learning_rate=5e-2,
        max_grad_norm=0.0,
        seed=2,
    ),
    _h("generations-4-s2", num_generations=4, seed=2),
    _h("cosine-warmup-s2", lr_scheduler_type="cosine", warmup_steps=0.1, learning_rate=1e-4, seed=2),
    _h("grad-accum-4-s2", gradient_accumulation_steps=4, seed=2),
    _h("rloo-s2", trainer="rloo", seed=2),
    _h("beta-0.01-s2", beta=0.01, seed=2),
    _h("base-s4", seed=4),
    # second seeds of the faults, then of more healthy configurations
    _f(
        "nan-reward-80-s2",
        "the reward function returns NaN from step 80, seed 2",
        {"nan"},
        shows="reward 0.29 over steps 61-80, then logged as null to the end; the grad norm falls 0.89 -> 0.03",
        onset=80,
        nan_from_step=80,
        seed=2,
    ),
    _f(
        "sign-flip-80-s2",
        "the reward's sign flips at step 80 and stays flipped (learning rate 1e-4), seed 2",
        {"reward_collapse"},
        shows="reward 0.39 over steps 61-80, -0.49 over steps 81-100, -0.22 over the last 20",
        onset=80,
        sign_flip_from_step=80,
        learning_rate=1e-4,
        seed=2,
    ),
    _f(
        "shuffled-reward-s2",
        "rewards shuffled across the batch, seed 2",
        {"stagnation"},
        shows="the reward stays within -0.01 to 0.04 per 20 steps (healthy seed 2 reaches about 0.45), KL at most 0.013",
        shuffle_rewards=True,
        seed=2,
    ),
    _f(
        "temperature-0.05-s2",
        "sampling temperature 0.05, seed 2",
        {"stagnation", "entropy_collapse"},
        shows="the reward at 0.96 from step ~25 with reward std 0-0.03 (identical completions per group) for 135 steps; "
        "KL 0.4-0.57, grad norm 12 over steps 1-20",
        temperature=0.05,
        seed=2,
    ),
    _f(
        "hackable-beta-0-s2",
        "a reward paying 0.3 per '!' with beta 0, learning rate 1e-4, seed 2",
        {"reward_hacking"},
        shows="reward 0.1-0.7 to step 40, 0.96 at step 41 (length 6-7 -> 8.1 tokens), 4.7 at the end with 15.7-token "
        "responses and entropy 1.66 -> 0.27: the exploit shows from step 41",
        onset=41,
        rewards=("hackable",),
        beta=0.0,
        learning_rate=1e-4,
        seed=2,
    ),
    _f(
        "rloo-lr-x1000-noclip",
        "RLOO, learning rate 5e-2 (1000x), no gradient clipping",
        {"kl_blowup", "entropy_collapse", "reward_collapse"},
        shows="KL 5.6 over steps 1-20, 7.6-8.2 after; entropy 0.63 -> 1e-4 from step ~21 with the grad norm at 1e-11; "
        "responses shrink to 2-3 tokens and the reward falls 0.71 -> 0.43",
        trainer="rloo",
        learning_rate=5e-2,
        max_grad_norm=0.0,
    ),
    _f(
        "rloo-constant-reward",
        "RLOO with a constant reward: zero spread, zero policy gradient",
        {"stagnation"},
        shows="reward 1.0 with std 0 at every step, grad norm and KL exactly 0",
        trainer="rloo",
        rewards=("constant",),
    ),
    _h("grpo-loss-s2", loss_type="grpo", seed=2),
    _h("bnpo-s2", loss_type="bnpo", seed=2),
    _h("beta-0-s2", beta=0.0, seed=2),
    _h("lr-1e-4-s2", learning_rate=1e-4, seed=2),
    _h("num-iterations-2-s2", num_iterations=2, seed=2),
    _h("grad-accum-2-s3", gradient_accumulation_steps=2, seed=3),
    _h("generations-4-s3", num_generations=4, seed=3),
    _h("temperature-0.7-s3", temperature=0.7, seed=3),
    _h("lr-2e-5-s2", learning_rate=2e-5, seed=2),
    _h("base-s5", seed=5),
    _f(
        "entropy-bonus-1.0",
        "an entropy bonus of 1.0 (entropy_coef): the loss pays for spreading the policy out",
        {"kl_blowup"},
        shows="KL leaves the healthy runs' range at step ~58 (0.2; healthy runs stay below 0.13 at this learning rate) and "
        "reaches 3.2; entropy rises 1.6 -> 2.8 while the reward stalls at 0.05-0.18 over steps 1-120, then climbs to 0.43 "
        "as responses grow 6.3 -> 10.9 tokens",
        onset=58,
        entropy_coef=1.0,
    ),
    # held out for PD703's truncation outcome (added after it was built from clip-higher-high-lr):
    # the same fault on another seed, and clip-higher at DAPO's own setting on a healthy learning rate
    _f(
        "clip-higher-high-lr-s2",
        "clip-higher epsilon_high 5 with learning rate 5e-4, beta 0, two updates per batch, seed 2",
        {"reward_hacking"},
        shows="the share of responses cut at the 16-token limit leaves the healthy runs' range at step 37 (0.47; 0.19 at "
        "step 35, the most any healthy run reaches before step 120) and holds 0.94-1.0 from step 43, while entropy rises 1.64 -> 2.48 and the reward "
        "sits at its ceiling 1.0 (seed 1's fault, on seed 2)",
        onset=37,
        epsilon_high=5.0,
        learning_rate=5e-4,
        beta=0.0,
        num_iterations=2,
        seed=2,
    ),
    # labelled healthy from its curves (every 8th step, before any verdict): the reward rises 0.1 -> 0.86; over the
    # last 40 steps responses lengthen 8 -> 14 tokens, the truncated share climbs 0.09 -> 0.72 and entropy
    # 1.2 -> 1.85.  Every step shows more: the last four hold 0.84-0.88 truncated with the reward at 0.96-1.0, the
    # length exploit of clip-higher-high-lr arriving as the plan ends; a few more steps and PD703 would stop it
    # (docs/live.md#real-trainer-matrix)
    _h("clip-higher-dapo-s1", epsilon_high=0.28, learning_rate=1e-4, beta=0.0, seed=1),
)
BY_NAME = {m.name: m for m in MATRIX}


# -- training -------------------------------------------------------------------------------
def train(entry: MatrixRun, cache: Path, steps: int = STEPS) -> Path:
    """Train ``entry`` to its last step into ``cache/<name>`` (written under a temporary name and
    renamed when complete, so an interrupted training is never taken for a cached run)."""
    from ppo_doctor.reference.trl_suite import GrpoArgs, run, trainer_config

    target = cache / entry.name
    partial = cache / f".{entry.name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    args = GrpoArgs(exp_name=entry.name, steps=steps, **entry.changes)
    out = partial / RUN_DIR
    config = trainer_config(args, out)
    start = time.perf_counter()
    run(args, out)
    seconds = time.perf_counter() - start
    meta = {
        "name": entry.name,
        "changes": {k: list(v) if isinstance(v, tuple) else v for k, v in entry.changes.items()},
        "steps": steps,
        "train_seconds": round(seconds, 1),
        # what DoctorCallback's Monitor is told: the trainer's arguments and the scheduler's warm-up
        "hparams": json.loads(config.to_json_string()),
        "warmup_steps": int(config.get_warmup_steps(steps)),
    }
    (partial / META).write_text(json.dumps(meta, indent=1, default=str), encoding="utf-8")
    partial.rename(target)
    return target


def train_missing(cache: Path, names: Sequence[str] | None = None, steps: int = STEPS) -> None:
    for entry in MATRIX:
        if names and entry.name not in names:
            continue
        if (cache / entry.name / META).exists():
            log.info("%s: cached", entry.name)
            continue
        target = train(entry, cache, steps)
        meta = json.loads((target / META).read_text())
        log.info("%s: trained in %.0f s", entry.name, meta["train_seconds"])


# -- evaluation -----------------------------------------------------------------------------
@dataclass
class Row:
    """What the current code says about one cached run."""

    name: str
    healthy: bool
    label: str
    planned: int
    offline_verdict: str
    offline_symptoms: list[str]
    """warning- and error-level symptoms of the offline report"""
    stop_step: int | None
    """the check at which DoctorCallback(stop_on="error") would have stopped (None: never)"""
    stop_symptom: str | None
    stop_code: str | None
    live_warned: list[str] = field(default_factory=list)
    """warning- or error-level symptoms announced live (the final check at train end included)"""
    own_symptoms: frozenset[str] = frozenset()
    onset: int = 1
    train_seconds: float | None = None

    @property
    def stopped(self) -> bool:
        """A stop before the last step: a stop at the last step saves nothing, the run ended."""
        return self.stop_step is not None and self.stop_step < self.planned

    @property
    def saved(self) -> float:
        """The share of the plan a stop leaves unspent."""
        return (self.planned - self.stop_step) / self.planned if self.stopped and self.stop_step is not None else 0.0

    @property
    def early(self) -> bool:
        """Stopped before a quarter of the plan left after the fault's onset was spent."""
        if not self.stopped or self.stop_step is None:
            return False
        return self.stop_step - self.onset <= EARLY_SHARE * (self.planned - self.onset)

    @property
    def own_stop(self) -> bool:
        return self.stopped and self.stop_symptom in self.own_symptoms

    @property
    def offline_right(self) -> bool:
        if self.healthy:
            return not self.offline_symptoms
        return bool(self.own_symptoms & set(self.offline_symptoms))

    @property
    def live_right(self) -> bool:
        if self.healthy:
            return not self.stopped and not self.live_warned
        return self.own_stop and self.early


def label_of(entry: MatrixRun) -> str:
    return "healthy" if entry.healthy else f"{entry.fault} → {' / '.join(sorted(entry.symptoms))}"


def live_replay(rows: Sequence[dict[str, Any]], meta: dict[str, Any], run_path: str, config: Any = None) -> tuple[int | None, Any, list[Any]]:
    """Feed ``rows`` (a trainer's ``log_history``) to a Monitor as ``DoctorCallback`` does:
    built as ``DoctorCallback._begin`` builds it, a check each time ``default_check_every(
    max_steps)`` steps have passed since the last, the final check of ``on_train_end``.
    Returns the step of the first check with an error-level finding (or None), that finding,
    and every warning- or error-level alert."""
    from ppo_doctor.ingest.readers.trainer_state import DOCTOR_ROW_KEY, SUMMARY_MARKERS
    from ppo_doctor.integrations.transformers import default_check_every
    from ppo_doctor.monitor import Monitor, matches

    planned = int(meta["steps"])
    every = default_check_every(planned)
    mon = Monitor(
        {} if config is None else config,
        hparams=meta["hparams"],
        run_id=meta["name"],
        path=run_path,
        source="trainer",
        planned_steps=planned,
        warmup_steps=int(meta["warmup_steps"]),
    )
    last_check, stop_step, stop, alerts = 0, None, None, []
    for row in rows:
        if DOCTOR_ROW_KEY in row or any(k in row for k in SUMMARY_MARKERS) or "step" not in row:
            continue
        step = int(row["step"])
        mon.log(step, {k: v for k, v in row.items() if k != "step"})
        if step - last_check >= every:
            last_check = step
            new = mon.check()
            alerts += [f for f in new if f.severity != "info"]
            hit = next((f for f in new if matches(f, "error")), None)
            if hit is not None and stop is None:
                stop_step, stop = step, hit
    alerts += [f for f in mon.check(final=True) if f.severity != "info"]
    return stop_step, stop, alerts


def evaluate_one(entry: MatrixRun, folder: Path) -> Row:
    import ppo_doctor

    meta = json.loads((folder / META).read_text(encoding="utf-8"))
    run_dir = folder / RUN_DIR
    report = ppo_doctor.analyze(run_dir)
    rr = max(report.runs, key=lambda r: len(r.findings))  # one run (TensorBoard and trainer_state merged)
    offline = sorted({f.symptom for f in rr.findings if f.severity in ("warning", "error")})
    history = json.loads((run_dir / "trainer_state.json").read_text(encoding="utf-8"))["log_history"]
    stop_step, stop, alerts = live_replay(history, meta, str(run_dir))
    return Row(
        name=entry.name,
        healthy=entry.healthy,
        label=label_of(entry),
        planned=int(meta["steps"]),
        offline_verdict=rr.verdict,
        offline_symptoms=offline,
        stop_step=stop_step,
        stop_symptom=None if stop is None else stop.symptom,
        stop_code=None if stop is None else stop.code,
        live_warned=sorted({f"{f.symptom}" for f in alerts}),
        own_symptoms=entry.symptoms,
        onset=entry.onset,
        train_seconds=meta.get("train_seconds"),
    )


def evaluate(cache: Path) -> list[Row]:
    """A row per configuration of :data:`MATRIX` with a cached run (the others are left out)."""
    return [evaluate_one(e, cache / e.name) for e in MATRIX if (cache / e.name / META).exists()]


def _live_cell(r: Row) -> str:
    if r.stop_step is None:
        return "not stopped" + (f" (warned: {', '.join(r.live_warned)})" if r.live_warned else "")
    where = f"step {r.stop_step}" + (" (last step: nothing left to stop)" if not r.stopped else "")
    return f"{where}: {r.stop_symptom} ({r.stop_code})"


def table(rows: Sequence[Row]) -> list[str]:
    lines = [
        "| config | label | offline verdict: symptoms | live stop | plan saved | offline | live |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        offline = f"{r.offline_verdict}: {', '.join(r.offline_symptoms) or '-'}"
        lines.append(
            f"| {r.name} | {r.label} | {offline} | {_live_cell(r)} | {r.saved:.0%} |"
            f" {'right' if r.offline_right else 'WRONG'} | {'right' if r.live_right else 'WRONG'} |"
        )
    return lines


def summary(rows: Sequence[Row]) -> list[str]:
    healthy = [r for r in rows if r.healthy]
    faulty = [r for r in rows if not r.healthy]
    warned_off = [r for r in healthy if r.offline_symptoms]
    warned_live = [r for r in healthy if r.live_warned and not r.stopped]
    stopped_h = [r for r in healthy if r.stopped]
    stopped = [r for r in faulty if r.stopped]
    own = [r for r in stopped if r.own_stop]
    early = [r for r in own if r.early]
    saved = [r.saved for r in early]
    lines = [
        f"- healthy runs: {len(healthy)}; warned offline: {len(warned_off)}; warned live (not stopped): {len(warned_live)};"
        f" **stopped: {len(stopped_h)}**",
        f"- faulty runs: {len(faulty)}; named offline: {sum(r.offline_right for r in faulty)}; stopped live: {len(stopped)};"
        f" for their own fault: {len(own)}; **before a quarter of the plan left after onset: {len(early)}"
        f" ({len(early) / len(faulty):.0%})**" if faulty else "- faulty runs: 0",
    ]
    if saved:
        lines.append(f"- plan saved by those stops: median {statistics.median(saved):.0%}, mean {statistics.mean(saved):.0%}")
    lines += [f"- healthy {r.name}: {'stopped ' + _live_cell(r) if r.stopped else 'warned'}"
              f" (offline: {', '.join(r.offline_symptoms) or '-'}; live: {', '.join(r.live_warned) or '-'})" for r in healthy if not (r.offline_right and r.live_right)]
    lines += [f"- faulty {r.name}: {_miss(r)}" for r in faulty if not r.live_right]
    return lines


def _miss(r: Row) -> str:
    """Why a faulty run's live answer is wrong."""
    if not r.stopped:
        return "not stopped" + (f" before its last step ({_live_cell(r)})" if r.stop_step is not None else "")
    if not r.own_stop:
        return f"stopped at step {r.stop_step} for {r.stop_symptom} ({r.stop_code}), not its own fault ({', '.join(sorted(r.own_symptoms))})"
    assert r.stop_step is not None
    return f"stopped at step {r.stop_step} for {r.stop_symptom}, {r.stop_step - r.onset} steps after its onset at step {r.onset}: too late"


def reward_moved_by_a_quarter(folder: Path) -> float | None:
    """How far the mean reward moved by the time a quarter of the plan is spent: the mean over the
    tenth of the plan before that point minus the mean over the first tenth, in standard errors of
    that difference (None without both windows).  What a rule judging an absence of progress at a
    quarter of the plan would have to go on."""
    meta = json.loads((folder / META).read_text(encoding="utf-8"))
    planned = int(meta["steps"])
    history = json.loads((folder / RUN_DIR / "trainer_state.json").read_text(encoding="utf-8"))["log_history"]
    points = [(int(r["step"]), float(r["reward"])) for r in history if "step" in r and isinstance(r.get("reward"), (int, float))]
    tenth, quarter = max(1, planned // 10), planned // 4
    first = [v for s, v in points if s <= tenth]
    late = [v for s, v in points if quarter - tenth < s <= quarter]
    if len(first) < 2 or len(late) < 2:
        return None
    se = (statistics.variance(first) / len(first) + statistics.variance(late) / len(late)) ** 0.5
    return (statistics.mean(late) - statistics.mean(first)) / se if se > 0 else None


def early_evidence(rows: Sequence[Row], cache: Path) -> list[str]:
    """The measured case for judging an absence of progress only on the whole plan: at a quarter
    of the plan the reward of the healthy runs has moved no further than that of the runs whose
    reward carries no information about the text."""
    moved = {r.name: reward_moved_by_a_quarter(cache / r.name) for r in rows}
    healthy = sorted(v for r in rows if r.healthy and (v := moved[r.name]) is not None)
    blind = {r.name: moved[r.name] for r in rows if "stagnation" in r.own_symptoms and not r.stopped and moved[r.name] is not None}
    if not healthy or not blind:
        return []
    top = max(blind.values())
    below = sum(v <= top for v in healthy)
    return [
        "",
        "Why a reward with no information about the text is not stopped early (measured by"
        " `reward_moved_by_a_quarter`): at a quarter of the plan the mean reward of the healthy runs had moved"
        f" {healthy[0]:+.1f} to {healthy[-1]:+.1f} standard errors from its first tenth (median"
        f" {statistics.median(healthy):+.1f}), that of "
        + ", ".join(f"{name} {v:+.1f}" for name, v in blind.items())
        + f". {below} of the {len(healthy)} healthy runs had moved no further than the most that any of those did:"
        " a stop on an absence of progress there would stop them too. Their curves part only later, so the"
        " finding comes with the plan's end.",
    ]


def render(rows: Sequence[Row], cache: Path) -> str:
    timed = [r.train_seconds for r in rows if r.train_seconds]
    head = [
        f"{len(rows)} runs of TRL {_trl_version()}'s GRPOTrainer, {rows[0].planned if rows else STEPS} steps each"
        + (f", trained in {min(timed):.0f}-{max(timed):.0f} s each (wall time, one process at a time on a shared 2-core VM)" if timed else "")
        + f". Reproduce: `python -m benchmarks.grpo_matrix train --cache {cache}` (once), then"
        f" `python -m benchmarks.grpo_matrix evaluate --cache {cache} --write` (seconds, after every rule change; it rewrites this section).",
        "",
    ]
    shows = [f"- {r.name}: {BY_NAME[r.name].shows}" for r in rows if BY_NAME[r.name].shows]
    curves = ["", "What the faulty runs' own curves show (the ground truth of their labels):", "", *shows] if shows else []
    return "\n".join(head + table(rows) + [""] + summary(rows) + early_evidence(rows, cache) + curves)


INTRO = """\
TRL's own `GRPOTrainer` (and `RLOOTrainer`) on the reference suite's tiny SFT GPT-2
(`ppo_doctor.reference.trl_suite`), trained to the end with no doctor attached, then judged by
the code as it is now: offline (`ppo_doctor.analyze` of the finished run: verdict and warning- or
error-level symptoms) and live (the logged rows replayed into a `Monitor` built and checked as
`DoctorCallback` builds and checks it; "live stop" is the check at which `stop_on="error"` would
have stopped the run). A faulty run is right live when it is stopped for one of its own symptoms
(the label after the arrow) before a quarter of the plan left after the fault's onset is spent
(issue 41); a healthy run is right when nothing warns, offline or live. The configurations and
their labels are in `benchmarks/grpo_matrix.py`."""


def _trl_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("trl")
    except PackageNotFoundError:
        return "(not installed)"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("train", "evaluate"))
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="the trained runs (default %(default)s)")
    parser.add_argument("--only", nargs="*", default=None, help="train or evaluate only these configurations")
    parser.add_argument("--steps", type=int, default=STEPS, help="optimizer steps of a new training (default %(default)s)")
    parser.add_argument("--write", action="store_true", help="evaluate: rewrite the 'Real-trainer matrix' section of docs/live.md")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    unknown = set(args.only or ()) - set(BY_NAME)
    if unknown:
        parser.error(f"unknown configurations: {', '.join(sorted(unknown))}")
    if args.action == "train":
        args.cache.mkdir(parents=True, exist_ok=True)
        train_missing(args.cache, args.only, args.steps)
        return
    rows = [r for r in evaluate(args.cache) if not args.only or r.name in args.only]
    body = render(rows, args.cache)
    log.info("%s", body)
    if args.write:
        write_section(SECTION, "Real-trainer matrix", INTRO + "\n\n" + body, results=DOCS)


if __name__ == "__main__":
    main()
