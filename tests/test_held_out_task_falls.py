"""PD208: the held-out task falls while the training reward holds (issue 37, outcome before sign).

Built from the shape of a real home-made GRPO run on MATH (an easy format term added to the
correctness reward: MATH-500 accuracy 51 % -> 56 % -> 9-35 % while the summed training reward
held at 1.26-1.44): the training reward is a proxy, the held-out accuracy is the outcome."""

from __future__ import annotations

import numpy as np

from ppo_doctor.config import coerce
from ppo_doctor.rules.base import Example
from ppo_doctor.rules.engine import run_rules
from ppo_doctor.rules.examples import example_run, flat, ramp

EVAL_STEPS = np.arange(0, 501, 50)
LOST = np.r_[0.51, 0.56, 0.55, 0.46, 0.32, 0.35, 0.09, 0.28, 0.30, 0.18, 0.35]


def pd208(series, eval_series):
    findings, _ = run_rules(example_run(Example(series=series, eval_series=eval_series)), coerce({"select": ["PD208"]}))
    return findings


def test_accuracy_lost_while_a_discrete_reward_holds_is_an_error_from_where_the_fall_holds():
    # a GRPO reward: the mean of 16 scores of 0, 1 or 2, so its window medians jump by 1/16
    rng = np.random.default_rng(7)
    reward = rng.integers(0, 3, size=(500, 16)).mean(axis=1)
    (f,) = pd208({"reward/score": reward}, {"eval_acc": (EVAL_STEPS, LOST)})
    assert (f.code, f.severity, f.symptom, f.basis) == ("PD208", "error", "reward_hacking", "outcome")
    # the headline step is the first evaluation whose level (median of 3) is 3 s.e. below the
    # best and below the first (step 250), not where the best level began (step 0: the first
    # evaluations are within 2 s.e. of the highest level)
    assert (f.start_step, f.peak_step) == (250, 0)


def test_a_small_significant_dip_is_not_the_task_lost():
    # a smooth evaluation falling 0.90 -> 0.87 is many standard errors, and 3 % of the task
    acc = np.r_[0.89, 0.90, 0.902, 0.90, 0.895, 0.89, 0.885, 0.88, 0.875, 0.872, 0.871]
    assert pd208({"reward/score": flat(500, 0.95, 0.01, seed=1)}, {"eval_acc": (EVAL_STEPS, acc)}) == []


def test_a_training_reward_that_falls_with_it_is_a_collapse_not_this():
    assert pd208({"reward/score": ramp(500, 1.5, 0.3, sd=0.1, seed=2)}, {"eval_acc": (EVAL_STEPS, LOST)}) == []


def test_a_return_with_no_natural_zero_is_left_to_the_other_rules():
    returns = LOST * 400 - 150  # -114 ... 74: no scale on which "a fifth of the best" means anything
    assert pd208({"reward/score": flat(500, 50, 5, seed=3)}, {"reward/score": (EVAL_STEPS, returns)}) == []


def test_an_evaluation_still_at_its_best_is_not_judged():
    acc = np.r_[0.3, 0.35, 0.4, 0.45, 0.5, 0.52, 0.54, 0.55, 0.56, 0.57, 0.58]
    assert pd208({"reward/score": flat(500, 1.3, 0.2, seed=4)}, {"eval_acc": (EVAL_STEPS, acc)}) == []


# -- PD204: a training reward that falls while the held-out evaluation holds is not a collapse ---
def collapse_run(evals_apart: bool, eval_values):
    # climbs to ~90, drops to ~0 in one step at 60 % of the run (longer training episodes), creeps back to ~15
    train = np.r_[np.linspace(-40, 90, 120), np.full(60, 90.0), np.linspace(0, 15, 120)] + flat(300, 0, 2, seed=5)
    steps = np.arange(0, 300, 20)
    series = {"reward/score": train}
    if evals_apart:
        return example_run(Example(series=series, eval_series={"reward/score": (steps, eval_values)}))
    return example_run(Example(series={**series, "eval/mean_reward": (steps, eval_values)}))


def pd204(run):
    findings, _ = run_rules(run, coerce({"select": ["PD204"]}))
    return [(f.severity, f.evidence[0].split(":")[0]) for f in findings]


def test_a_training_collapse_the_evaluation_did_not_share_is_a_note():
    holds = np.r_[np.linspace(-600, 60, 8), 74, 80, 88, 95, 92, 100, 97]
    for apart in (True, False):  # a tabular log's eval rows, or SB3's eval/mean_reward in TensorBoard
        ((severity, why),) = pd204(collapse_run(apart, holds))
        assert severity == "info" and why.endswith("did not fall")


def test_a_training_collapse_the_evaluation_shared_stays_an_error():
    falls = np.r_[np.linspace(-600, 60, 8), 70, 20, 5, 0, -5, 10, 0]
    ((severity, _),) = pd204(collapse_run(True, falls))
    assert severity != "info"
