"""PD705: a Gaussian policy's action std that grows without bound is a runaway; one that grew
and levelled off, or grew less than the population's limit, is not."""

from __future__ import annotations

import numpy as np

from ppo_doctor.config import coerce
from ppo_doctor.rules import population
from ppo_doctor.rules.base import Example
from ppo_doctor.rules.engine import run_rules
from ppo_doctor.rules.examples import example_run, flat, saturating
from ppo_doctor.view import RunView

N = 200


def pd705(series: dict) -> list:
    found, _ = run_rules(example_run(Example(series=series, framework="sb3")), coerce({"select": ["PD705"]}))
    return [f for f in found if f.code == "PD705"]


def exploding(n: int = N, top: float = 3.0) -> np.ndarray:
    """ln(std) climbing steadily from 0 to ``top``, with a little noise."""
    return np.linspace(0.0, top, n) + flat(n, 0.0, 0.01, seed=3)


def test_a_std_still_climbing_far_past_its_start_is_a_runaway_warning_whatever_the_reward():
    (f,) = pd705({"train/std": np.exp(exploding()), "reward/score": saturating(N, -500.0, -100.0, sd=5.0, seed=4)})
    assert f.severity == "warning" and f.basis == "runaway" and f.symptom == "unstable_updates"
    assert f.observed["growth"] > 10 and "still growing" in f.message
    assert f.causes and max(f.causes, key=f.causes.get) == "action-noise-unbounded"


def test_a_logged_log_std_is_read_as_a_std():
    (f,) = pd705({"train/log_std": exploding()})
    assert f.observed["growth"] > 10


def test_rsl_rls_mean_noise_std_is_read_as_the_action_std():
    # rsl_rl (legged_gym, Isaac Lab) logs its Gaussian's std parameter as Policy/mean_noise_std;
    # blind set real45: a Go1 run whose std climbs 1 -> 19 while the reward stays tiny
    (f,) = pd705({"Policy/mean_noise_std": np.exp(exploding())})
    assert f.observed["growth"] > 10
    assert pd705({"Policy/mean_noise_std": np.exp(-exploding(top=1.0))}) == []


def test_spinning_ups_spread_of_log_pi_is_no_action_std():
    # Spinning Up's SAC logs AverageLogPi, StdLogPi, MaxLogPi, MinLogPi: StdLogPi is the spread of
    # the log-probability over an epoch (blind set real46: a healthy SAC Ant whose StdLogPi went
    # 2.5 -> 4.0 read as an action std grown 4.5x)
    stats = {"AverageLogPi": np.linspace(-2.6, 1.9, N), "StdLogPi": exploding(top=1.5), "MaxLogPi": np.linspace(40.0, 64.0, N)}
    assert pd705(stats) == []


def test_a_std_that_grew_and_levelled_off_is_left_alone():
    # 1 -> 8 in the first half, then flat: a policy widened on purpose and held there
    levelled = np.concatenate([np.exp(np.linspace(0.0, np.log(8.0), N // 2)), flat(N // 2, 8.0, 0.05, seed=5)])
    assert pd705({"train/std": levelled}) == []


def test_a_std_growing_less_than_the_limit_is_left_alone():
    assert pd705({"train/std": np.exp(exploding(top=0.5))}) == []  # 1 -> 1.6, still climbing
    assert population.runaway_limit("action_std_growth") >= population.FALLBACKS["action_std_growth"] == 2.0


def test_the_population_measures_the_growth_of_the_std():
    run = example_run(Example(series={"train/std": np.exp(-np.linspace(0.0, 1.0, N))}, framework="sb3"))
    growth = population.measure(RunView(run))["action_std_growth"]
    assert 0.35 < growth < 0.45  # e^-1 over the run, medians of its first and last tenth
