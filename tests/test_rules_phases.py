"""A reward that falls where a new training call began (issue 15: "honest about what a log cannot
tell"): SB3 restarts ``time/iterations`` at each ``learn()`` call while the timesteps go on, which
is how curricula and environment swaps are written, so PD204 reports such a fall as a note."""

from __future__ import annotations

import numpy as np
import pytest

from ppo_doctor.rules.base import Example
from ppo_doctor.rules.examples import example_run
from ppo_doctor.rules.pd204_reward_collapse import RewardCollapse


def with_iterations(restart_at: int | None) -> Example:
    """PD204's bad example (learns to ~450, falls to ~60 at step 140) with SB3's iteration counter,
    restarting at 1 at ``restart_at`` (a second ``learn()`` call), or never."""
    ex = RewardCollapse.bad_example()
    n = len(ex.series["reward/score"])
    it = np.arange(1, n + 1, dtype=float)
    if restart_at is not None:
        it[restart_at:] = np.arange(1, n - restart_at + 1)
    return Example(series={**ex.series, "time/iterations": it}, framework=ex.framework)


def collapse(example: Example):
    (found,) = list(RewardCollapse().run(example_run(example)))
    return found


def test_a_fall_where_a_new_training_call_began_is_a_note():
    found = collapse(with_iterations(restart_at=140))
    assert found.severity == "info"
    assert any("new training call began at step 140" in e for e in found.evidence)


def test_a_new_training_call_long_before_the_fall_does_not_excuse_it():
    found = collapse(with_iterations(restart_at=30))
    assert found.severity == "error"
    assert not any("training call" in e for e in found.evidence)


def test_without_a_phase_counter_the_fall_is_a_collapse():
    assert collapse(with_iterations(restart_at=None)).severity == "error"


@pytest.mark.corpus
def test_corpus_curriculum_run_says_where_its_new_training_call_began(corpus_dir):
    """sb3-flappybird-ppo's PPO_MLP_cur_learning: SB3's time/iterations restarts at step 501,760,
    the reward's peak; the fall after it is a note, and the run is not called unhealthy for it."""
    from ppo_doctor import analyze

    report = analyze(corpus_dir / "sb3-flappybird-ppo" / "logs" / "PPO_MLP_cur_learning")
    (rr,) = report.runs
    (found,) = [f for f in rr.findings if f.code == "PD204"]
    assert found.severity == "info"
    assert any("step 501760" in e for e in found.evidence)
    assert rr.verdict == "healthy"
