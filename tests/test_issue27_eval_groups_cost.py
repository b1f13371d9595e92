"""Issue 27: train vs held-out evaluation (PD205), groups that teach nothing (PD306), what a
failure cost (``ppo_doctor.cost.failure_cost``) and sweep parameters from folder names."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import ppo_doctor
from ppo_doctor.analyze import analyze_run
from ppo_doctor.cost import _hours_after, device_count, failure_cost
from ppo_doctor.rules.base import Example
from ppo_doctor.config import coerce
from ppo_doctor.rules.engine import run_rules
from ppo_doctor.rules.examples import example_run, flat, ramp, saturating
from ppo_doctor.rules.pd205_train_eval_divergence import TrainEvalDivergence
from ppo_doctor.rules.pd306_degenerate_groups import DegenerateGroups, agreement
from ppo_doctor.sweep import sweep
from ppo_doctor.sweep.render import render_text


def _codes(run, code):
    findings, na = run_rules(run, coerce({"select": [code]}))
    return [f for f in findings if f.code == code], na


# -- PD205: synthetic shapes ----------------------------------------------------------------
EVAL_STEPS = np.arange(0, 150, 10)


def _eval_run(train, evals, framework="trl"):
    return example_run(Example(series={"reward/score": train}, eval_series={"reward/score": (EVAL_STEPS, evals)}, framework=framework))


def test_pd205_fires_where_the_curves_part():
    evals = np.r_[np.linspace(0.1, 0.5, 6), np.full(9, 0.5) + flat(9, 0.0, 0.01, seed=3)]
    found, _ = _codes(_eval_run(ramp(150, 0.1, 2.0, sd=0.05, seed=1), evals), "PD205")
    assert len(found) == 1 and found[0].severity == "warning" and found[0].symptom == "reward_hacking"
    assert 40 <= found[0].start_step <= 70
    assert "learning the reward, not the task" in found[0].message
    assert found[0].causes["overfitting-to-training"] > 0


def test_pd205_error_when_the_evaluation_falls_back():
    evals = np.r_[np.linspace(0.1, 0.6, 5), np.linspace(0.6, 0.0, 10)]
    found, _ = _codes(_eval_run(ramp(150, 0.1, 2.0, sd=0.05, seed=2), evals), "PD205")
    assert found and found[0].severity == "error"


def test_pd205_classic_rl_reads_as_overfitting():
    evals = np.r_[np.linspace(10, 200, 6), np.full(9, 200.0) + flat(9, 0.0, 2.0, seed=4)]
    found, _ = _codes(_eval_run(ramp(150, 10.0, 480.0, sd=5.0, seed=5), evals, framework="sb3"), "PD205")
    assert found and "over-fits its training environments" in found[0].message
    assert set(found[0].causes) == {"overfitting-to-training"}


@pytest.mark.parametrize(
    "train, evals",
    [
        # both climb together and level off together
        (saturating(150, 0.1, 1.0, sd=0.03, seed=6), saturating(15, 0.1, 0.9, sd=0.01, seed=7)),
        # the evaluation is still improving at the end
        (ramp(150, 0.1, 2.0, sd=0.05, seed=8), np.linspace(0.1, 1.5, 15)),
        # a stochastic training return catching up with a deterministic evaluation at its ceiling
        (ramp(150, 100.0, 480.0, sd=5.0, seed=9), np.r_[np.linspace(100, 500, 5), np.full(10, 500.0)]),
        # the training reward is flat after the evaluation's best
        (saturating(150, 0.1, 0.8, rate=8, sd=0.02, seed=10), np.r_[np.linspace(0.1, 0.7, 5), np.full(10, 0.7)]),
    ],
)
def test_pd205_quiet_when_the_curves_agree(train, evals):
    found, _ = _codes(_eval_run(train, evals), "PD205")
    assert found == []


def test_pd205_not_applicable_without_evaluation():
    run = example_run(Example(series={"reward/score": ramp(150, 0.1, 2.0, sd=0.05, seed=11)}))
    found, na = _codes(run, "PD205")
    assert found == [] and [n.missing for n in na if n.code == "PD205"] == [["evaluation reward/score|reward/total"]]


def test_pd205_on_a_trl_trainer_state_with_eval_rows(tmp_path):
    # what transformers' Trainer writes: log_history rows with unprefixed training keys and
    # separate evaluate() rows whose keys carry the eval_ prefix (docs/sources.md#hf-trainer-logs)
    rng = np.random.default_rng(12)
    history = []
    for step in range(5, 305, 5):
        history.append({"loss": 0.1, "reward": 0.2 + 2.0 * step / 300 + rng.normal(0, 0.05), "reward_std": 0.3, "kl": 0.01, "step": step, "epoch": step / 300})
        if step % 20 == 0:
            held_out = min(0.2 + 2.0 * step / 300, 0.8) + rng.normal(0, 0.01)
            history.append({"eval_loss": 0.1, "eval_reward": held_out, "eval_runtime": 3.0, "step": step, "epoch": step / 300})
    history.append({"train_runtime": 3600.0, "train_loss": 0.1, "step": 300, "epoch": 1.0})
    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": 300, "max_steps": 300, "log_history": history}))
    rep = ppo_doctor.analyze(tmp_path)
    rr = rep.runs[0]
    pd205 = [f for f in rr.findings if f.code == "PD205"]
    assert pd205 and pd205[0].severity == "warning" and 60 <= pd205[0].start_step <= 120
    assert rr.verdict == "unhealthy"
    # the cost: hours from train_runtime, no device count in this state
    assert rr.cost is not None and rr.cost.hours_from == "train_runtime" and rr.cost.devices is None
    assert rr.to_dict()["cost"]["steps_after"] == 300 - rr.cost.onset_step


# -- PD306: synthetic shapes ----------------------------------------------------------------
@pytest.mark.parametrize(
    "position, share, side",
    [(0.9, 0.85, "top"), (0.05, 0.8, "bottom"), (0.5, 0.6, ""), (1.0, 1.0, "top"), (0.0, 1.0, "bottom")],
)
def test_agreement_bounds(position, share, side):
    assert agreement(position, share) == side


def _groups_run(zero, reward):
    return example_run(Example(series={"reward/zero_std_frac": zero, "reward/score": reward}, framework="trl_grpo"))


def test_pd306_too_hard_and_stuck_is_a_warning():
    found, _ = _codes(_groups_run(np.clip(flat(100, 0.8, 0.05, seed=13), 0, 1), np.abs(flat(100, 0.05, 0.01, seed=14))), "PD306")
    assert len(found) == 1 and found[0].severity == "warning" and found[0].symptom == "stagnation"
    assert "bottom" in found[0].message and "more generations per prompt" in found[0].message
    assert "prompts-too-hard" in found[0].causes


def test_pd306_too_easy_is_a_note():
    found, _ = _codes(_groups_run(np.clip(flat(100, 0.85, 0.05, seed=15), 0, 1), np.clip(flat(100, 0.92, 0.02, seed=16), 0, 1)), "PD306")
    assert len(found) == 1 and found[0].severity == "info" and "top" in found[0].message
    assert set(found[0].causes) == {"prompts-too-easy"}


def test_pd306_bottom_while_learning_is_a_note():
    zero = np.r_[np.full(50, 0.9), np.linspace(0.9, 0.3, 50)]
    found, _ = _codes(_groups_run(zero, np.linspace(0.0, 0.6, 100)), "PD306")
    assert found and found[0].severity == "info"


def test_pd306_unbounded_reward_names_no_side():
    found, _ = _codes(_groups_run(np.full(100, 0.8), flat(100, -3.0, 0.5, seed=17)), "PD306")
    assert found and found[0].severity == "info" and "cannot tell" in found[0].message


def test_pd306_quiet_when_groups_differ():
    found, _ = _codes(_groups_run(np.clip(flat(100, 0.2, 0.05, seed=18), 0, 1), saturating(100, 0.1, 0.7, sd=0.03, seed=19)), "PD306")
    assert found == []


def test_pd306_on_a_grpo_trainer_state_whose_groups_are_degenerate(tmp_path):
    # GRPOTrainer's keys (TRL >= 0.18): reward, reward_std, frac_reward_zero_std, completions/*
    history = [
        {"loss": 0.0, "reward": 0.02, "reward_std": 0.02, "frac_reward_zero_std": 0.95, "completions/mean_length": 256.0,
         "grad_norm": 0.001, "learning_rate": 1e-6, "step": step, "epoch": step / 200}
        for step in range(5, 205, 5)
    ]
    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": 200, "max_steps": 200, "log_history": history}))
    rr = ppo_doctor.analyze(tmp_path).runs[0]
    assert rr.run.framework == "trl_grpo"
    pd306 = [f for f in rr.findings if f.code == "PD306"]
    # 95 % of the groups agree at the bottom on every step: (nearly) no gradient, the run is wasted (issue 37)
    assert pd306 and pd306[0].severity == "error" and pd306[0].start_step == 5 and "95%" in pd306[0].message


# -- the cost ---------------------------------------------------------------------------------
def test_cost_from_wall_times(tmp_path):
    lines = []
    t = 1_700_000_000.0
    for step in range(100):
        t += 10.0
        kl = 0.5 if step < 30 else 30.0 + step
        lines.append(json.dumps({"step": step, "_timestamp": t, "objective/scores": 1.0, "objective/kl": kl}))
    (tmp_path / "log.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "config.json").write_text(json.dumps({"world_size": 8}))
    rr = ppo_doctor.analyze(tmp_path).runs[0]
    assert rr.verdict == "unhealthy" and rr.cost is not None
    # 10 s between logged steps from the onset on
    assert rr.cost.hours_from == "wall-clock times"
    assert rr.cost.hours_after == pytest.approx((99 - rr.cost.onset_step) * 10 / 3600, rel=0.05)
    assert rr.cost.device_hours == pytest.approx(8 * rr.cost.hours_after)
    assert rr.cost.devices == 8 and rr.cost.devices_from.endswith("world_size")


def test_cost_is_none_for_a_healthy_run():
    run = example_run(Example(series={"reward/score": saturating(100, 0.1, 1.0, sd=0.02, seed=20)}))
    rr = analyze_run(run)
    assert rr.cost is None and failure_cost(rr) is None


def test_device_count_keys():
    run = example_run(Example(series={"reward/score": flat(10, 1.0)}))
    run.raw_config = {"trainer.n_gpus_per_node": 8, "trainer.nnodes": 2}
    assert device_count(run)[0] == 16
    run.raw_config = {"num_processes": 4}
    assert device_count(run) == (4, "num_processes")


def test_step_time_hours():
    run = example_run(Example(series={"reward/score": flat(10, 1.0), "progress/step_time": ([0, 10, 20, 30], [30.0, 30.0, 30.0, 30.0])}))
    hours, source = _hours_after(run, 10, 0.66)
    assert source == "progress/step_time" and math.isclose(hours, 2 * 10 * 30.0 / 3600)


# -- sweep: cost summary and parameters from folder names --------------------------------------
def _write_grpo(folder, zero, kl_tail):
    folder.mkdir(parents=True)
    history = [
        {"loss": 0.0, "reward": 0.5, "reward_std": 0.3, "frac_reward_zero_std": zero, "kl": 0.01 if step < 50 else kl_tail,
         "step": step, "epoch": step / 200}
        for step in range(5, 205, 5)
    ]
    history.append({"train_runtime": 7200.0, "train_loss": 0.0, "step": 200, "epoch": 1.0})
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 200, "log_history": history}))


def test_sweep_params_from_folder_names_and_cost(tmp_path):
    for beta in ("0.01", "0.2"):
        for seed in (1, 2, 3):
            tail = 40.0 if beta == "0.01" else 0.02
            _write_grpo(tmp_path / f"beta{beta}_seed{seed}", 0.1, tail)
    rep = sweep(tmp_path)
    rows = {r.run: r for r in rep.rows}
    row = rows["beta0.01_seed1"]
    assert row.params == {"beta": 0.01} and row.params_from == "folder name" and row.seed == 1
    assert "seed" not in {s.parameter for s in rep.attribution.splits}
    assert any(s.parameter == "beta" for s in rep.attribution.splits)
    assert row.cost is not None and row.cost["hours_from"] == "train_runtime"
    summary = rep.cost()
    assert summary["runs"] == sum(1 for r in rows.values() if r.cost) and summary["steps_after"] == sum(rows[r].cost["steps_after"] for r in rows if rows[r].cost)
    text = render_text(rep)
    assert "of this sweep's steps came after its runs had failed" in text
    assert "read from the run folders' names" in text


# -- the corpus ---------------------------------------------------------------------------------
@pytest.mark.corpus
def test_corpus_rho_sweep(corpus_dir):
    root = corpus_dir / "trl-grpo-rho-sweep-qwen35"
    if not root.exists():
        pytest.skip("rho sweep absent")
    rep = sweep(root)
    assert {r.params_from for r in rep.rows} == {"folder name"}
    assert {r.params["rho"] for r in rep.rows} == {0.1, 0.7, 1.0, 3.0} and {r.seed for r in rep.rows} == {42}
    for rr in ppo_doctor.analyze(root).runs:
        pd306 = [f for f in rr.findings if f.code == "PD306"]
        # every run's groups mostly agree at the top of a 0-1 score: a note, the run stays healthy
        assert rr.verdict == "healthy" and pd306 and pd306[0].severity == "info" and "top" in pd306[0].message


@pytest.mark.corpus
def test_corpus_runs_with_evaluation_do_not_diverge(corpus_dir):
    # SB3 EvalCallback (sb3-racer-ppo), Tinker test/ rows, veRL val-core: the curves agree
    for name in ("sb3-racer-ppo", "tinker-dakota-qwen3", "verl-ppo-gsm8k-dstack"):
        if not (corpus_dir / name).exists():
            pytest.skip(f"{name} absent")
        for run in ppo_doctor.load_runs(corpus_dir / name):
            assert run.eval_frame is not None and not TrainEvalDivergence.missing(run)
            assert list(TrainEvalDivergence().run(run)) == []
