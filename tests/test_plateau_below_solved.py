"""PD307: a return that stopped improving far below its task's solved level (issue 37, stagnation
against a ceiling).

The shapes are those of the CS285 homework runs of the labelled real-run set: a LunarLander DQN
whose return climbs from -250 to about -60 and hovers there for the rest of the run (the lander
learned not to crash, never to land), next to the same task learned."""

from __future__ import annotations

import dataclasses

import pytest

from ppo_doctor.canonical.tasks import solved_level
from ppo_doctor.config import coerce
from ppo_doctor.rules.base import Example
from ppo_doctor.rules.engine import run_rules
from ppo_doctor.rules.examples import example_run, flat, ramp, saturating

HOVERS = saturating(400, -250.0, -60.0, rate=15.0, sd=40.0, seed=5)
LANDS = saturating(400, -250.0, 220.0, rate=5.0, sd=40.0, seed=6)


def pd307(series, run_id="runs/LunarLander-v3__dqn__1", config=None, **run_fields):
    run = example_run(Example(series=series, config=config or {}, framework="cleanrl"), run_id=run_id)
    run = dataclasses.replace(run, **run_fields)
    findings, _ = run_rules(run, coerce({"select": ["PD307"]}))
    return findings


def test_a_return_hovering_far_below_the_solved_level_is_stagnation_from_the_second_half():
    (f,) = pd307({"reward/score": HOVERS})
    assert (f.code, f.symptom, f.severity, f.basis) == ("PD307", "stagnation", "warning", "outcome")
    assert f.start_step == 200 and f.observed["level"] == 200.0
    assert "LunarLander's solved level 200" in f.message and "runs/LunarLander-v3__dqn__1" in f.message
    assert f.observed["reached"] < 0.5


def test_the_same_task_learned_is_not_flagged():
    assert pd307({"reward/score": LANDS}) == []


def test_a_return_still_rising_in_its_second_half_is_not_a_plateau():
    assert pd307({"reward/score": ramp(400, -250.0, -40.0, sd=20.0, seed=7)}) == []


def test_a_run_stopped_short_of_its_plan_did_not_spend_its_budget():
    assert pd307({"reward/score": HOVERS}, planned_steps=4000) == []


def test_a_return_that_reaches_the_solved_level_and_swings_away_is_no_plateau_short_of_it():
    # an InvertedPendulum policy gradient that reaches the 1000 cap on runs of batches and falls
    # back to 100 between them (blind sets real25, real26): it does not hold the task, it did not
    # stop short of it
    v = flat(200, 120.0, 30.0, seed=9)
    v[[60, 61, 62, 120, 121, 122, 123]] = 1000.0
    assert pd307({"reward/score": v}, run_id="runs/InvertedPendulum-v4__pg__1") == []
    # two lucky batches at the cap are not the task reached
    v[[62, 121, 122]] = 120.0
    assert len(pd307({"reward/score": v}, run_id="runs/InvertedPendulum-v4__pg__1")) == 1


def test_a_per_step_reward_is_not_read_against_an_episode_return_level():
    assert pd307({"reward/score": flat(400, -0.8, 0.3, seed=8)}) == []


def test_an_unknown_task_is_not_judged():
    assert pd307({"reward/score": HOVERS}, run_id="runs/MyGridWorld__ppo__1") == []


@pytest.mark.parametrize(
    ("run_id", "config", "task"),
    [
        ("runs/CartPole-v1__ppo__1__1700000000", {}, "CartPole-v1"),
        ("logs/lunarlander_v3_a2c_logs_run_0", {}, "LunarLander"),
        ("hw2/data/q2_pg_lunar_lander_lambda0.95", {}, "LunarLander"),
        ("run", {"env_id": "MountainCarContinuous-v0"}, "MountainCarContinuous-v0"),
        ("run", {"args.env_name": "InvertedDoublePendulum-v4"}, "InvertedDoublePendulum"),
        ("hw3/data/q6a_sac_InvertedPendulum_v4", {}, "InvertedPendulum"),
    ],
)
def test_the_task_is_read_from_the_config_or_the_run_id(run_id, config, task):
    run = example_run(Example(series={"reward/score": HOVERS}, config=config), run_id=run_id)
    assert solved_level(run).task == task


@pytest.mark.parametrize(
    "run_id",
    [
        "isaacgymenvs/runs/Cartpole/summaries",  # Isaac Gym's own task and reward
        "runs/Cartpole/summaries",  # unversioned: Isaac Gym's name too
        "ppo-cartpoleswingup",  # another task under a similar name
        "omniisaacgymenvs/runs/LunarLander",  # an Isaac Gym task, whatever its name
        "runs/HalfCheetah-v4__ppo__1",  # an expert-level threshold, not a solved bar
    ],
)
def test_names_other_suites_reuse_are_not_read_as_the_gymnasium_task(run_id):
    assert solved_level(example_run(Example(series={"reward/score": HOVERS}), run_id=run_id)) is None
