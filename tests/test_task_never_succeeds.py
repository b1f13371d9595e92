"""PD210: the win or success rate the run logs never leaves zero (issue 37: stagnation judged on
the measure of the task the author logs, not only on the training reward).

The shapes are those of real runs: an SB3 dogfight agent whose shaped reward rises through
draws and evasions while it wins 2 of 3,000 episodes; a REINFORCE pusher whose return climbs
while its final success rate stays at 0."""

from __future__ import annotations

import numpy as np

from ppo_doctor.config import coerce
from ppo_doctor.rules.base import Example
from ppo_doctor.rules.engine import run_rules
from ppo_doctor.rules.examples import example_run, flat, saturating

REWARD = saturating(300, 0.2, 0.9, sd=0.05, seed=1)


def findings(series, eval_series=None):
    run = example_run(Example(series=series, eval_series=eval_series or {}))
    found, _ = run_rules(run, coerce({"select": ["PD210"]}))
    return found


def rare_wins(n=300, wins=(120, 250)):
    """A cumulative win rate: wins / episodes so far, with a win at each of ``wins``."""
    won = np.zeros(n)
    won[list(wins)] = 1
    return np.cumsum(won) / np.arange(1, n + 1)


def test_a_win_rate_that_never_leaves_zero_while_the_reward_rises_is_stagnation():
    (f,) = findings({"reward/score": REWARD, "env/win_rate": rare_wins()})
    assert (f.code, f.symptom, f.severity, f.basis) == ("PD210", "stagnation", "warning", "outcome")
    assert f.message.startswith("env/win_rate never left zero") and "training reward went" in f.message


def test_a_win_rate_that_rises_is_not_flagged():
    assert findings({"reward/score": REWARD, "env/win_rate": np.clip(saturating(300, 0.0, 0.5, sd=0.02, seed=2), 0, 1)}) == []


def test_a_few_percent_of_successes_is_not_never():
    # three successes in a hundred episodes somewhere in the run: the task was reached
    v = np.zeros(300)
    v[200:] = 0.03
    assert findings({"reward/score": REWARD, "rollout/success_rate": v}) == []


def test_a_percentage_is_judged_on_its_scale():
    # one point at 2 % among zeros: a percentage (its values pass 1), whose level stays near 0 %
    v = np.zeros(300)
    v[150] = 2.0
    assert len(findings({"reward/score": REWARD, "success_rate": v})) == 1
    assert findings({"reward/score": REWARD, "success_rate": np.r_[np.zeros(150), np.full(150, 30.0)]}) == []


def test_a_rate_at_one_exact_value_everywhere_is_a_placeholder_not_evidence():
    assert findings({"reward/score": REWARD, "env/win_rate": np.zeros(300)}) == []


def test_a_held_out_success_rate_counts():
    steps = np.arange(0, 300, 10)
    (f,) = findings({"reward/score": REWARD}, {"eval/success_rate": (steps, rare_wins(30, wins=(20,)) / 5)})
    assert "evaluation eval/success_rate" in f.message


def test_counts_and_flags_are_not_rates():
    # a cumulative count of wins and a per-episode flag are not read as a rate
    won = np.zeros(300)
    won[[100, 200]] = 1
    assert findings({"reward/score": REWARD, "env/win": np.cumsum(won), "success": won}) == []


def test_short_logs_are_not_judged():
    assert findings({"reward/score": flat(10, 0.5, 0.01, seed=3), "win_rate": rare_wins(10, wins=(5,))}) == []
