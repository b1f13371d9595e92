"""PD703 on the share of answers cut at the length limit (issue 41): nearly every answer cut is
an outcome and an error at once, live too; half of them cut is a trend; answers that start cut
and get shorter are left alone.  Runs are built at test time."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ppo_doctor.config import coerce
from ppo_doctor.rules.base import Example
from ppo_doctor.rules.engine import run_rules
from ppo_doctor.rules.examples import example_run, flat, ramp, saturating

N = 160


def pd703(series, planned=None):
    run = example_run(Example(series=series, framework="trl_grpo"))
    if planned is not None:
        run = replace(run, planned_steps=planned, live=True)  # a prefix: a run still training
    found, _ = run_rules(run, coerce({"select": ["PD703"]}))
    return [f for f in found if f.code == "PD703"]


def filled(n, at, seed=0):
    """0 truncated until ``at``, then nearly all (0.94-1.0), as a policy that learned to spam fills it."""
    rng = np.random.default_rng(seed)
    return np.where(np.arange(n) < at, 0.0, rng.choice([0.94, 0.97, 1.0], n))


def test_nearly_every_answer_cut_is_an_error_resting_on_the_outcome_even_while_the_reward_rises():
    (f,) = pd703({"len/response_clip_ratio": filled(N, 40), "reward/score": saturating(N, 0.1, 1.0, sd=0.02, seed=1)})
    assert (f.severity, f.basis) == ("error", "outcome")
    assert f.start_step <= 45 and "no longer ends its answers" in f.message


def test_it_is_decided_on_a_partial_run_so_a_live_run_is_stopped_on_it():
    series = {"len/response_clip_ratio": filled(60, 30), "reward/score": saturating(60, 0.1, 1.0, sd=0.02, seed=1)}
    (f,) = pd703(series, planned=400)
    assert f.severity == "error"


def test_half_the_answers_cut_with_a_stuck_reward_is_no_hack_and_watched_on_a_partial_run():
    series = {"len/response_clip_ratio": ramp(N, 0.0, 0.6, sd=0.01, seed=2, begin=60), "reward/score": flat(N, 0.2, 0.05, seed=3)}
    (whole,) = pd703(series)
    # a sign whose reward is stuck: stagnation, judged by PD301, not a reward bought by an exploit
    assert whole.severity == "info" and "not reward hacking" in whole.message
    (partial,) = pd703(series, planned=4 * N)
    assert partial.severity == "info" and "watching" in partial.message


def test_answers_that_start_cut_and_get_shorter_are_left_alone():
    # a base model rambling past the limit before it learns to stop (healthy real GRPO runs start at 0.9-1.0)
    assert pd703({"len/response_clip_ratio": ramp(N, 1.0, 0.1, sd=0.02, seed=4), "reward/score": saturating(N, 0.1, 0.9, seed=5)}) == []


def test_a_few_answers_cut_now_and_then_are_nothing():
    rng = np.random.default_rng(6)
    clip = np.where(rng.random(N) < 0.1, 0.19, 0.0)  # the healthy matrix runs' most: 0.19 at one step
    assert pd703({"len/response_clip_ratio": clip, "reward/score": saturating(N, 0.1, 0.9, seed=7)}) == []
