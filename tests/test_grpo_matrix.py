"""The real-trainer matrix benchmark (benchmarks/grpo_matrix.py, issues 37 and 41).

Fast tests check the evaluator's bookkeeping on synthetic log rows in TRL's names (the live
replay stops where ``DoctorCallback`` stops, the right/wrong and plan-saved arithmetic, the
summary's counts, a cached run read back); the slow test trains a representative subset with
the real ``DoctorCallback(stop_on="error")`` inside TRL's GRPOTrainer.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

from benchmarks.grpo_matrix import BY_NAME, MATRIX, META, RUN_DIR, Row, evaluate, live_replay, summary
from ppo_doctor.results import SYMPTOMS

PLAN = 100


def _rows(nan_from: int | None = None, seed: int = 0) -> list[dict[str, Any]]:
    """A GRPO run's log_history as TRL 1.16 writes it: the reward rises 0 -> 0.5 with noise, KL
    stays small; from ``nan_from`` on the loss and gradient norm are NaN (a broken reward)."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for step in range(1, PLAN + 1):
        broken = nan_from is not None and step >= nan_from
        reward = 0.5 * step / PLAN + rng.gauss(0, 0.05)
        rows.append(
            {
                "loss": math.nan if broken else rng.gauss(0, 0.01),
                "grad_norm": math.nan if broken else 0.6 + rng.gauss(0, 0.05),
                "learning_rate": 5e-5,
                "reward": None if broken else reward,
                "reward_std": None if broken else 0.6 + rng.gauss(0, 0.02),
                "rewards/sentiment/mean": None if broken else reward,
                "kl": 0.01 * step / PLAN + abs(rng.gauss(0, 0.001)),
                "entropy": 1.6 - 0.1 * step / PLAN + rng.gauss(0, 0.01),
                "completions/mean_length": 6.5 + rng.gauss(0, 0.2),
                "frac_reward_zero_std": 0.0,
                "step": step,
            }
        )
    rows.append({"step": PLAN, "train_runtime": 30.0, "train_loss": 0.0, "total_flos": 0.0})
    return rows


def _meta(name: str = "synthetic") -> dict[str, Any]:
    return {"name": name, "steps": PLAN, "warmup_steps": 0, "hparams": {"max_steps": PLAN, "learning_rate": 5e-5, "beta": 0.04}}


def _row(healthy: bool, stop: int | None = None, symptom: str | None = None, **kw: Any) -> Row:
    base: dict[str, Any] = dict(
        name="r", healthy=healthy, label="x", planned=160, offline_verdict="healthy" if healthy else "unhealthy",
        offline_symptoms=[] if healthy else ["nan"], stop_step=stop, stop_symptom=symptom, stop_code="PD000" if stop else None,
        own_symptoms=frozenset() if healthy else frozenset({"nan"}),
    )
    base.update(kw)
    return Row(**base)


def test_the_matrix_is_large_and_labelled_in_the_projects_vocabulary():
    assert len(BY_NAME) == len(MATRIX)
    healthy = [m for m in MATRIX if m.healthy]
    faulty = [m for m in MATRIX if not m.healthy]
    assert len(healthy) >= 22 and len(faulty) >= 12
    assert len({m.changes.get("seed", 1) for m in healthy}) >= 3  # several seeds
    for m in faulty:
        assert m.symptoms and m.symptoms <= set(SYMPTOMS), m.name
        assert m.fault and 1 <= m.onset
    assert all(not m.symptoms for m in healthy)


def test_every_configuration_is_a_valid_grpo_args():
    pytest.importorskip("torch")
    from ppo_doctor.reference.trl_suite import GrpoArgs

    for m in MATRIX:
        GrpoArgs(exp_name=m.name, **m.changes)


def test_the_arithmetic_of_a_row():
    early = _row(False, 10, "nan")
    assert early.stopped and early.own_stop and early.early and early.live_right
    assert early.saved == pytest.approx(150 / 160)
    # onset at 80: a quarter of the 80 steps left is 20 steps
    assert _row(False, 100, "nan", onset=80).early
    late = _row(False, 110, "nan", onset=80)
    assert late.own_stop and not late.early and not late.live_right
    other = _row(False, 10, "kl_blowup")
    assert other.stopped and not other.own_stop and not other.live_right
    # an error at the last step stops nothing and saves nothing
    last = _row(False, 160, "nan")
    assert not last.stopped and last.saved == 0 and not last.live_right
    assert _row(True).live_right and _row(True).offline_right
    assert not _row(True, live_warned=["stagnation"]).live_right
    assert not _row(True, 40, "stagnation").live_right
    assert not _row(True, offline_symptoms=["kl_blowup"]).offline_right


def test_the_summary_counts_what_the_rows_say():
    rows = [
        _row(True),
        _row(True, live_warned=["stagnation"]),
        _row(True, 40, "stagnation", live_warned=["stagnation"]),
        _row(False, 10, "nan"),
        _row(False, 160, "nan"),
        _row(False, 20, "kl_blowup"),
    ]
    text = "\n".join(summary(rows))
    assert "healthy runs: 3; warned offline: 0; warned live (not stopped): 1; **stopped: 1**" in text
    assert "faulty runs: 3; named offline: 3; stopped live: 2; for their own fault: 1" in text
    assert "before a quarter of the plan left after onset: 1 (33%)" in text
    assert "not stopped before its last step" in text and "not its own fault (nan)" in text


def test_the_live_replay_stops_where_the_callback_would():
    pytest.importorskip("transformers")
    from transformers import TrainerControl, TrainerState, TrainingArguments

    from ppo_doctor.integrations.transformers import DoctorCallback

    rows = _rows(nan_from=47)
    stop_step, stop, _ = live_replay(rows, _meta(), "synthetic")
    assert stop is not None and stop.severity == "error" and stop.symptom == "nan"
    assert stop_step is not None and 47 <= stop_step <= 60 and stop_step % 10 == 0  # checks every 10 steps of 100

    # the same rows through the real callback, as the Trainer calls it
    args = TrainingArguments(output_dir="unused", report_to="none", max_steps=PLAN, learning_rate=5e-5)
    doctor = DoctorCallback(stop_on="error", config={}, write_reports=False, plots=False)
    state, control = TrainerState(max_steps=PLAN), TrainerControl()
    doctor.on_train_begin(args, state, control)
    meta = {**_meta(), "hparams": json.loads(args.to_json_string())}
    for row in rows:
        if "train_runtime" in row:
            continue
        state.global_step = row["step"]
        state.log_history.append(row)
        doctor.on_log(args, state, control, logs=dict(row))
        if control.should_training_stop:
            break
    replayed_step, replayed, _ = live_replay(rows, meta, "synthetic")
    assert doctor.stopped_by is not None and replayed is not None
    assert (state.global_step, doctor.stopped_by.code, doctor.stopped_by.symptom) == (replayed_step, replayed.code, replayed.symptom)


def test_a_steadily_learning_run_is_not_stopped():
    pytest.importorskip("transformers")  # the replay takes the callback's schedule from its module
    stop_step, stop, _ = live_replay(_rows(), _meta(), "synthetic")
    assert stop_step is None and stop is None


def test_evaluate_reads_a_cached_run(tmp_path: Path):
    pytest.importorskip("transformers")
    entry = BY_NAME["nan-reward-80"]
    folder = tmp_path / entry.name
    (folder / RUN_DIR).mkdir(parents=True)
    rows = _rows(nan_from=80)
    (folder / RUN_DIR / "trainer_state.json").write_text(json.dumps({"log_history": rows, "max_steps": PLAN, "global_step": PLAN}))
    (folder / META).write_text(json.dumps({**_meta(entry.name), "train_seconds": 12.5}))
    (row,) = evaluate(tmp_path)  # configurations without a cached run are left out
    assert row.name == entry.name and not row.healthy and row.planned == PLAN and row.train_seconds == 12.5
    assert "nan" in row.offline_symptoms and row.offline_right
    assert row.stop_symptom == "nan" and row.stop_step is not None and 80 <= row.stop_step <= 90
    assert row.live_right and row.saved == pytest.approx((PLAN - row.stop_step) / PLAN)


# -- the real trainer ------------------------------------------------------------------------
# Two healthy and two faulty configurations of the matrix, trained with the callback attached:
# a runaway (KL) and a run that cannot learn, both stopped at the first check (about 40 s of CPU
# in all, most of it the two healthy runs of 160 steps).
SUBSET = {"healthy": ("base-s2", "cosine-warmup-s1"), "faulty": ("lr-x1000-noclip", "lr-1e-9")}


@pytest.mark.slow
@pytest.mark.parametrize("name", [*SUBSET["healthy"], *SUBSET["faulty"]])
def test_the_real_callback_lets_healthy_runs_finish_and_stops_faulty_ones(tmp_path: Path, name: str):
    pytest.importorskip("trl")
    pytest.importorskip("datasets")
    from ppo_doctor.integrations.transformers import DoctorCallback
    from ppo_doctor.reference.trl_suite import GrpoArgs, run, trainer_config

    from benchmarks.grpo_matrix import EARLY_SHARE, STEPS

    entry = BY_NAME[name]
    args = GrpoArgs(exp_name=name, steps=STEPS, **entry.changes)
    doctor = DoctorCallback(stop_on="error", config={}, write_reports=False, plots=False)
    rows = run(args, tmp_path, callbacks=[doctor])
    last = max(int(r["step"]) for r in rows if "step" in r)
    if entry.healthy:
        assert doctor.stopped_by is None and last == STEPS
        assert not [a for a in doctor.alerts if a.severity != "info"], [(a.code, a.message) for a in doctor.alerts]
    else:
        hit = doctor.stopped_by
        assert hit is not None and hit.symptom in entry.symptoms, hit
        assert last < STEPS and last - entry.onset <= EARLY_SHARE * (STEPS - entry.onset)
    # the benchmark's replay of the logged rows stops where the callback stopped
    config = trainer_config(args, tmp_path)
    meta = {"name": name, "steps": STEPS, "warmup_steps": config.get_warmup_steps(STEPS), "hparams": json.loads(config.to_json_string())}
    stop_step, stop, _ = live_replay(rows, meta, str(tmp_path))
    if doctor.stopped_by is None:
        assert stop is None
    else:
        assert stop is not None and (stop_step, stop.code) == (last, doctor.stopped_by.code)
