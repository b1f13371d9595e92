"""DoctorCallback(stop_on="error") inside TRL's real GRPOTrainer, on the reference suite's SFT GPT-2
(``ppo_doctor.reference.trl_suite``, 120 steps, CPU): healthy runs of several seeds and
configurations run to the end; a reward that turns NaN late, a learning rate 1000x, a hackable
reward with beta 0 and a policy that fills the length limit are stopped for their own fault
(issues 24 and 41).

Before issue 24 three of four healthy configurations were stopped at step 20-40 by
"reward did not improve" (a prefix judged as a whole run).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl")
pytest.importorskip("datasets")

from ppo_doctor.integrations.transformers import DoctorCallback  # noqa: E402
from ppo_doctor.reference.trl_suite import GrpoArgs, run  # noqa: E402

pytestmark = pytest.mark.slow

STEPS = 120


def _train(out: Path, **changes: Any) -> tuple[list[dict[str, Any]], DoctorCallback]:
    doctor = DoctorCallback(stop_on="error", config={}, plots=False)
    rows = run(GrpoArgs(steps=STEPS, **changes), out, callbacks=[doctor])
    return rows, doctor


def _last_step(rows: list[dict[str, Any]]) -> int:
    return max(int(r["step"]) for r in rows if "step" in r)


HEALTHY = {
    "seed-1": {"seed": 1},
    "seed-2": {"seed": 2},
    "seed-3": {"seed": 3},
    "num-iterations-2": {"num_iterations": 2},
    "beta-0": {"beta": 0.0},
    "temperature-0.6": {"temperature": 0.6},
}


@pytest.mark.parametrize("name", list(HEALTHY))
def test_a_healthy_grpo_run_is_never_stopped(tmp_path: Path, name: str) -> None:
    rows, doctor = _train(tmp_path, **HEALTHY[name])
    assert doctor.stopped_by is None, doctor.stopped_by
    assert _last_step(rows) == STEPS
    assert not [a for a in doctor.alerts if a.severity == "error"]
    doc = json.loads((tmp_path / "ppo-doctor.json").read_text())["runs"][0]
    assert doc["standing"]["planned_steps"] == STEPS and not doc["standing"]["partial"]


def test_a_reward_that_turns_nan_late_stops_the_run_for_the_nan(tmp_path: Path) -> None:
    rows, doctor = _train(tmp_path, nan_from_step=80)
    hit = doctor.stopped_by
    assert hit is not None and hit.symptom == "nan" and hit.metric == "reward/score"
    assert 80 <= int(hit.start_step or 0) and _last_step(rows) < STEPS
    stop = next(str(r["ppo_doctor"]) for r in rows if "stopping training" in str(r.get("ppo_doctor", "")))
    # says what is wrong, what to do, and what the stop saved
    assert "steps not spent" in stop and "Make the reward function return a finite float" in stop
    assert not list(tmp_path.glob("checkpoint-*"))  # save_strategy="no": the stop saves nothing
    # the offline report of the same run gives the same top cause
    doc = json.loads((tmp_path / "ppo-doctor.json").read_text())["runs"][0]
    assert doc["causes"][0]["id"] == "reward-function-nan" and doc["standing"]["partial"]


def test_a_learning_rate_1000x_is_stopped_for_its_kl_blowup(tmp_path: Path) -> None:
    rows, doctor = _train(tmp_path, learning_rate=5e-2)
    hit = doctor.stopped_by
    assert hit is not None and hit.symptom == "kl_blowup" and _last_step(rows) <= 20


def test_a_hackable_reward_with_beta_0_is_stopped_as_reward_hacking(tmp_path: Path) -> None:
    rows, doctor = _train(tmp_path, beta=0.0, rewards=("hackable",), learning_rate=1e-4)
    hit = doctor.stopped_by
    assert hit is not None and (hit.code, hit.symptom) == ("PD206", "reward_hacking")
    assert _last_step(rows) < STEPS


def test_a_policy_that_fills_the_length_limit_is_stopped_for_answers_that_never_end(tmp_path: Path) -> None:
    # clip-higher at epsilon_high 5 with learning rate 5e-4: the policy learns to spam the reward's
    # adjectives up to the 16-token limit (the real-trainer matrix's clip-higher-high-lr, docs/live.md)
    rows, doctor = _train(tmp_path, epsilon_high=5.0, learning_rate=5e-4, beta=0.0, num_iterations=2)
    hit = doctor.stopped_by
    assert hit is not None and (hit.code, hit.symptom) == ("PD703", "reward_hacking"), hit
    assert "no longer ends its answers" in hit.message
    assert _last_step(rows) < STEPS  # step 70 of 120 on this VM
