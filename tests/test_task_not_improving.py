"""PD211: the training reward rises while the task the run measures beside it does not (issue
37: stagnation judged on the measure of the task the author logs; PD301's mirror).

The shapes are those of real runs: a GRPO run whose question-only reward creeps up while its
accuracy holds where it began; a sparse reach task whose return rises a little while its
success rate sinks."""

from __future__ import annotations

import numpy as np

from ppo_doctor.config import coerce
from ppo_doctor.rules.base import Example
from ppo_doctor.rules.engine import run_rules
from ppo_doctor.rules.examples import example_run, flat, saturating

REWARD = saturating(200, 0.2, 0.9, sd=0.05, seed=1)


def findings(series, eval_series=None, rule="PD211"):
    run = example_run(Example(series=series, eval_series=eval_series or {}))
    found, _ = run_rules(run, coerce({"select": [rule]}))
    return found


def test_a_reward_that_rises_while_the_accuracy_holds_is_stagnation():
    (f,) = findings({"reward/score": REWARD, "accuracy": flat(200, 0.66, 0.01, seed=2)})
    assert (f.code, f.symptom, f.severity, f.basis) == ("PD211", "stagnation", "warning", "outcome")
    assert f.message.startswith("the training reward rose") and "but accuracy did not improve" in f.message


def test_a_task_that_falls_while_the_reward_rises_did_not_improve():
    sinking = np.linspace(0.13, 0.08, 200) + np.random.default_rng(3).normal(0, 0.005, 200)
    assert [f.code for f in findings({"reward/score": REWARD, "rollout/success_rate": sinking})] == ["PD211"]


def test_a_sparse_held_out_evaluation_that_stays_flat_counts():
    # ten evaluations of the policy apart from training: too few for PD209, enough to be a task
    evals = (np.arange(0, 200, 20), flat(10, -150.0, 2.0, seed=4))
    assert [f.code for f in findings({"reward/score": REWARD}, {"reward/score": evals})] == ["PD211"]


def test_a_task_that_rises_with_the_reward_is_progress():
    assert findings({"reward/score": REWARD, "accuracy": saturating(200, 0.3, 0.7, sd=0.02, seed=5)}) == []


def test_a_flat_reward_is_left_to_pd301():
    assert findings({"reward/score": flat(200, 0.5, 0.05, seed=6), "accuracy": flat(200, 0.4, 0.02, seed=7)}) == []


def test_a_task_metric_at_one_exact_value_is_a_placeholder_not_evidence():
    assert findings({"reward/score": REWARD, "accuracy": np.full(200, 0.5)}) == []


def test_a_task_that_rose_and_lost_it_is_a_collapse_not_stagnation():
    v = np.r_[np.linspace(0.2, 0.8, 60), np.full(140, 0.2)] + np.random.default_rng(8).normal(0, 0.01, 200)
    assert findings({"reward/score": REWARD, "accuracy": v}) == []


def test_a_task_solved_before_it_was_first_measured_is_no_stagnation():
    v = np.r_[0.1, np.full(199, 0.95)] + np.r_[0.0, np.random.default_rng(9).normal(0, 0.005, 199)]
    assert findings({"reward/score": REWARD, "success_rate": np.clip(v, 0, 1)}) == []


def test_the_likely_cause_is_the_reward_not_a_learning_rate_too_low():
    # the reward rose, so the policy learns: what it learns is the proxy (a classic run: the
    # environment's reward; an LLM run: the reward function), not too small a step
    from ppo_doctor.diagnose.rank import rank_causes

    for framework, expected in (("sb3", "env-reward-exploitable"), ("trl", "reward-model-flawed")):
        run = example_run(Example(series={"reward/score": REWARD, "accuracy": flat(200, 0.66, 0.01, seed=2)}, framework=framework))
        found, _ = run_rules(run, coerce({"select": ["PD211"]}))
        assert rank_causes(found, run)[0].id == expected


def test_without_a_reward_a_task_that_does_not_move_is_stagnation():
    """PD212: a loop that logs no reward (an on-policy distillation's correct rate beside its
    reverse KL to the teacher) is judged on its task; the verdict is then unhealthy, not unknown."""
    from ppo_doctor.verdict import verdict_for

    series = {"train/correct_rate": flat(60, 0.65, 0.015, seed=9), "loss/total": flat(60, -0.02, 0.002, seed=10)}
    (f,) = findings(series, rule="PD212")
    assert (f.code, f.symptom, f.severity, f.basis, f.metric) == ("PD212", "stagnation", "warning", "outcome", "train/correct_rate")
    run = example_run(Example(series=series))
    assert verdict_for(run, [f], [])[0] == "unhealthy"


def test_without_a_reward_a_task_at_one_exact_value_is_a_task_never_learned():
    """A DPO run that trains nothing: every batch has accuracy exactly 0 and a gradient norm of
    exactly 0 (blind set real47).  With no reward moving beside it, one exact value is no
    placeholder (PD906 asks for a reward that moves) but a measurement."""
    series = {"dpo/accuracy": np.zeros(120), "grad/norm": np.zeros(120), "loss/total": np.full(120, 0.6914)}
    (f,) = findings(series, rule="PD212")
    assert (f.code, f.severity, f.metric) == ("PD212", "warning", "dpo/accuracy")


def test_without_a_reward_a_rising_task_is_judged_healthy_not_unknown():
    """A preference optimisation whose batch accuracy climbs 0.5 -> 0.75 and logs no reward or KL:
    the task metric is what a verdict rests on (a log with neither a reward, a KL, an RL loss nor a
    task stays unknown)."""
    from ppo_doctor.verdict import verdict_for

    series = {"dpo/accuracy": saturating(40, 0.5, 0.75, sd=0.02, seed=11), "loss/total": flat(40, 0.1, 0.01, seed=12)}
    assert findings(series, rule="PD212") == []
    verdict, reason = verdict_for(example_run(Example(series=series)), [], [])
    assert verdict == "healthy" and "progress judged on the task metric" in reason
    assert verdict_for(example_run(Example(series={"loss/total": flat(40, 0.1, 0.01, seed=12)})), [], [])[0] == "unknown"


def test_with_a_reward_pd212_leaves_the_task_to_pd211():
    assert findings({"reward/score": flat(200, 0.5, 0.05, seed=13), "accuracy": flat(200, 0.4, 0.02, seed=14)}, rule="PD212") == []


def test_a_reward_and_answers_that_grow_while_the_task_improves_are_no_hack():
    """PD206 with the KL term off: a reward far past its early range while answers grow is a hack
    (an error), unless a task the run measures beside it rose too (an LLM-judge reward and the
    judged correctness climbing together while answers grow 1.7x, blind set real47): a note."""
    n = 50
    base = {
        "reward/score": np.r_[np.full(10, 0.0), np.linspace(0.0, 0.7, 20), np.full(20, 0.7)] + np.random.default_rng(15).normal(0, 0.03, n),
        "len/response_mean": np.r_[np.full(10, 290.0), np.linspace(290.0, 530.0, 20), np.full(20, 530.0)],
    }
    correct = np.r_[np.full(10, 0.05), np.linspace(0.05, 0.75, 20), np.full(20, 0.75)] + np.random.default_rng(16).normal(0, 0.02, n)
    for series, severity in ((base, "error"), ({**base, "env/all/correct": correct}, "info")):
        run = example_run(Example(series=series, config={"kl_coef": 0.0}, framework="trl_grpo"))
        found, _ = run_rules(run, coerce({"select": ["PD206"]}))
        assert [(f.code, f.severity) for f in found] == [("PD206", severity)]
