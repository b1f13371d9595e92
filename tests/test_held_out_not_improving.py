"""PD209: the held-out evaluation the author reports never improves (issue 37, stagnation judged
on the outcome the author reports), and a level near zero has no magnitude for PD204 to lose.

The shapes are those of CS285 homework runs (blind set real25): an exploring policy's
``Train_AverageReturn`` climbs while the greedy ``Eval_AverageReturn`` stays at the task's floor;
a DQN return that wanders -7..+7 around zero for 8,000 episodes."""

from __future__ import annotations

import numpy as np
import pytest

from ppo_doctor.config import coerce
from ppo_doctor.frame import RawSeries, RunFrame
from ppo_doctor.rules.base import Example
from ppo_doctor.rules.engine import run_rules
from ppo_doctor.rules.examples import example_run, flat, ramp, saturating
from ppo_doctor.rules.outcome import held_out_series, is_eval_reward

TRAIN = saturating(200, -150.0, -60.0, rate=3, sd=5.0, seed=11)
EVAL_STEPS = np.arange(0, 200, 5)


def findings(series, eval_series=None, select=("PD209",)):
    run = example_run(Example(series=series, eval_series=eval_series or {}, framework="cs285"))
    found, _ = run_rules(run, coerce({"select": list(select)}))
    return found


def test_an_evaluation_at_its_floor_while_the_training_return_climbs_is_stagnation():
    (f,) = findings({"reward/score": TRAIN}, {"reward/score": (EVAL_STEPS, flat(40, -148.0, 3.0, seed=12))})
    assert (f.code, f.symptom, f.severity, f.basis) == ("PD209", "stagnation", "warning", "outcome")
    assert "did not improve over 40 evaluations" in f.message and "training reward went" in f.message


def test_an_evaluation_that_rises_is_not_flagged():
    rising = saturating(40, -150.0, -50.0, rate=3, sd=4.0, seed=13)
    assert findings({"reward/score": TRAIN}, {"reward/score": (EVAL_STEPS, rising)}) == []


def test_an_evaluation_that_rose_and_fell_back_is_a_collapse_not_stagnation():
    up_down = np.r_[np.linspace(-150.0, -40.0, 20), np.linspace(-40.0, -150.0, 20)] + flat(40, 0.0, 3.0, seed=14)
    assert findings({"reward/score": TRAIN}, {"reward/score": (EVAL_STEPS, up_down)}) == []


def test_one_exact_value_at_every_evaluation_is_not_evidence():
    assert findings({"reward/score": TRAIN}, {"reward/score": (EVAL_STEPS, np.full(40, -150.0))}) == []


def test_every_evaluation_at_the_training_rewards_floor_is_the_tasks_bound_measured():
    # a maze whose every evaluation episode times out at -100, while the exploring policy's
    # return leaves the floor for a while and ends back on it (blind set real26)
    train = np.r_[np.full(40, -100.0), np.full(60, -99.5), np.full(100, -100.0)]
    (f,) = findings({"reward/score": train}, {"reward/score": (EVAL_STEPS, np.full(40, -100.0))})
    assert f.code == "PD209" and "every one at the training reward's floor" in f.evidence[0]


def test_a_constant_evaluation_off_the_training_floor_stays_a_placeholder():
    train = np.r_[np.full(40, -100.0), np.full(60, -99.5), np.full(100, -100.0)]
    assert findings({"reward/score": train}, {"reward/score": (EVAL_STEPS, np.full(40, 0.0))}) == []
    assert findings({"reward/score": TRAIN}, {"reward/score": (EVAL_STEPS, np.full(40, float(TRAIN.min())))}) == []


def test_too_few_evaluations_are_not_judged():
    assert findings({"reward/score": TRAIN}, {"reward/score": (EVAL_STEPS[:10], flat(10, -148.0, 3.0, seed=15))}) == []


def test_cs285s_eval_average_return_is_the_held_out_series():
    steps = np.arange(0, 100, dtype=np.int64) * 1000
    frame = RunFrame.from_series([
        ("reward/score", RawSeries(tag="Train_AverageReturn", steps=steps, values=np.linspace(-100, 0, 100), source="t")),
        ("Eval_AverageReturn", RawSeries(tag="Eval_AverageReturn", steps=steps, values=np.linspace(-90, 10, 100), source="t")),
    ])
    run = example_run(Example(series={"reward/score": np.zeros(3)}))
    run = type(run)(**{**run.__dict__, "frame": frame})
    name, s, v = held_out_series(run)
    assert name == "Eval_AverageReturn" and len(v) == 100


def test_a_level_near_zero_sliding_within_its_band_is_no_collapse_but_a_flat_reward():
    # level 1.0 -> -0.2 while the points wander -7..+7: "120 % of the level lost" is a ratio to
    # a magnitude near zero, not a fall anyone sees on the curve
    v = ramp(8000, 1.0, -0.2, sd=3.0, seed=16)
    found = findings({"reward/score": v}, select=("PD204", "PD301"))
    assert [f.code for f in found] == ["PD301"]


def test_a_level_near_zero_that_falls_far_below_its_band_still_collapses():
    v = np.r_[flat(1000, 1.0, 0.5, seed=18), flat(7000, -6.0, 0.5, seed=19)]
    assert [f.code for f in findings({"reward/score": v}, select=("PD204",))] == ["PD204"]


def test_an_evaluation_that_rose_inside_its_first_window_means_the_task_improved():
    # a loop that scores MATH-500 at step 1 and every 50 steps after (blind set real12): 15.6 % before
    # training, about 42 % from step 50 on, while the training reward plateaus after its first tenth.
    # The first window of 10 evaluations is 3 points wide, so its median (45.2) hides the rise; the
    # first point is the policy before training
    reward = np.r_[np.linspace(0.3, 0.7, 20), flat(480, 0.66, 0.2, seed=14)]
    accuracy = np.array([15.6, 45.2, 45.6, 41.8, 42.4, 41.6, 42.4, 41.0, 41.8, 39.4, 41.6])
    (f,) = findings({"reward/score": reward}, {"eval_acc": (np.r_[1, np.arange(50, 501, 50)], accuracy)}, select=("PD301",))
    assert f.severity == "info"
    assert "eval_acc rose 15.6 (its first point) -> " in f.message


def test_a_task_metric_logged_with_every_training_step_is_not_read_from_its_first_point():
    # SB3 SAC's rollout/success_rate (blind set real33): 0 over the first episodes, about 0.1 while
    # the return is at its best, 0.04 when it has collapsed; logged with every reward point, so its
    # first point is one noisy measurement, not the policy before training, and the collapse stands
    n = 400
    reward = np.r_[np.linspace(-45.0, -18.0, 100), flat(140, -18.0, 0.5, seed=21), np.linspace(-18.0, -70.0, 160)]
    success = np.r_[0.0, flat(239, 0.1, 0.01, seed=22), np.linspace(0.1, 0.04, 160)]
    run = example_run(Example(series={"reward/score": reward, "success_rate": success, "loss/value": np.geomspace(30.0, 5e7, n)}, framework="sb3"))
    found, _ = run_rules(run, coerce({"select": ["PD204", "PD401"]}))
    assert {f.code: f.severity for f in found}.get("PD204") in ("warning", "error")
    assert not [f.message for f in found if "its first point" in f.message]


@pytest.mark.parametrize(
    "name",
    ["eval/mean_reward", "Eval_AverageReturn", "eval_return", "Evaluation/AverageDiscountedReturn", "eval/env_mean_return_per_episode", "Eval/GreedyEvalReward"],
)
def test_an_evaluation_return_is_read_by_its_name_not_from_a_list(name):
    # SB3, CS285 (two spellings), garage and two home-made loggers: what each calls the return
    # of its evaluation episodes, left among the training tags by TensorBoard
    assert is_eval_reward(name)


@pytest.mark.parametrize("name", ["Eval_MaxReturn", "Eval_StdReturn", "eval/max_reward", "rollout/ep_rew_mean", "train/eval_return", "eval/success_rate"])
def test_an_extreme_a_spread_or_a_training_tag_is_no_evaluation_return(name):
    assert not is_eval_reward(name)
