"""Mechanisms of issue 25, each on synthetic series of its shape.

Continuous actions (``RunView.action_space``): a Gaussian policy's entropy falls as its std
shrinks, which is convergence while the reward holds; PD701 and PD305 call it a symptom only
while the reward suffers.

Constant returns (``RunView.returns``): while every return is the same the critic fits a
constant and its loss goes to about 0, explained variance is 0/0 (NaN in SB3/CleanRL/baselines);
when the returns start to vary the value loss jumps with their spread.  PD401-PD406 do not read
that as a diverging critic; PD404 says when its reward scale comes from a rolling mean of episodes.
"""

from __future__ import annotations

import math

import numpy as np

from ppo_doctor.canonical.metrics import build_run
from ppo_doctor.config import coerce
from ppo_doctor.frame import RawRun, RawSeries
from ppo_doctor.rules.base import Example
from ppo_doctor.rules.engine import run_rules
from ppo_doctor.rules.examples import decay, example_run, flat, ramp, saturating
from ppo_doctor.view import RunView
from ppo_doctor.view.actions import late_action_std


def sb3_run(tags: dict[str, np.ndarray], path: str = "/runs/PPO_1", config: dict | None = None):
    """A run read from SB3's logger names (``rollout/ep_rew_mean``, ``train/std``...), one point per update."""
    n = len(next(iter(tags.values())))
    raw = RawRun(
        series=[RawSeries(t, np.arange(1, n + 1) * 2048, np.asarray(v, float), source="t") for t, v in tags.items()],
        config=dict(config or {}),
    )
    return build_run("run", path, "tensorboard", [f"{path}/events.out.tfevents.1"], raw)


def findings(run, *codes):
    return [f for f in run_rules(run, coerce({"select": list(codes)}))[0] if f.code in codes]


def severities(run, code):
    return [f.severity for f in findings(run, code)]


N = 200


# -- continuous actions: how a run is known to have them ---------------------------------------------
def test_a_logged_action_std_marks_continuous_actions():
    run = sb3_run({"train/entropy_loss": -saturating(N, 4.2, 2.0, seed=1), "train/std": saturating(N, 1.0, 0.5, seed=2)})
    space = RunView(run).action_space
    assert space is not None and space.kind == "continuous" and space.std_tag == "train/std" and not space.log_std
    assert late_action_std(RunView(run), space) < 0.6


def test_a_logged_log_std_is_read_as_its_exponential():
    run = sb3_run({"train/entropy_loss": -saturating(N, 4.2, 2.0, seed=1), "charts/logstd": saturating(N, 0.0, math.log(0.05), seed=3)})
    view = RunView(run)
    space = view.action_space
    assert space is not None and space.log_std
    assert abs(late_action_std(view, space) - 0.05) < 0.01


def test_a_reward_std_is_no_action_std():
    run = sb3_run({"train/entropy_loss": -saturating(N, 2.0, 1.0, seed=1), "rollout/reward_std": flat(N, 1.0, 0.1, seed=2)})
    assert RunView(run).action_space is None


def test_an_entropy_falling_through_zero_marks_continuous_actions():
    run = example_run(Example(series={"policy/entropy": saturating(N, 1.4, -1.5, sd=0.02, seed=4)}, framework="unknown"))
    space = RunView(run).action_space
    assert space is not None and space.kind == "continuous" and "through 0" in space.evidence


def test_an_entropy_below_zero_throughout_is_no_evidence():
    # stable-baselines PPO1 logs entropy_loss = -ent_coef * entropy: negative from the start
    run = example_run(Example(series={"policy/entropy": flat(N, -0.35)}, framework="unknown"))
    assert RunView(run).action_space is None


def test_a_continuous_control_task_id_in_the_path_or_config_marks_continuous_actions():
    tags = {"ep_rew_mean": saturating(N, 0.0, 2500.0, sd=50.0, seed=5), "entropy_loss": -saturating(N, 1.34, 0.37, sd=0.01, seed=6)}
    in_path = RunView(sb3_run(tags, path="/logs/PPO/Hopper-v2")).action_space
    assert in_path is not None and in_path.kind == "continuous" and "Hopper-v2" in in_path.evidence
    in_config = RunView(sb3_run(tags, config={"env_id": "HalfCheetah-v4"})).action_space
    assert in_config is not None and "HalfCheetah-v4" in in_config.evidence
    # a word that merely contains a task's name, or a name without a Gymnasium version, is no id
    assert RunView(sb3_run(tags, path="/logs/Antenna-v1/Anthill")).action_space is None


def test_an_llm_policy_acts_with_tokens():
    run = example_run(Example(series={"policy/entropy": saturating(N, 1.2, 0.6, sd=0.02, seed=7), "kl/ref": flat(N, 0.05, 0.01, seed=8)}, framework="trl"))
    space = RunView(run).action_space
    assert space is not None and space.kind == "discrete"


# -- continuous actions: PD701 entropy collapse needs the reward to suffer ----------------------------
def gaussian(reward: np.ndarray, entropy: np.ndarray, std: np.ndarray | None = None):
    tags = {"rollout/ep_rew_mean": reward, "train/entropy_loss": -entropy}
    if std is not None:
        tags["train/std"] = std
    return sb3_run(tags)


# a 6-dimensional Gaussian whose std shrinks from 1 to about 0.2 in every dimension: 8.5 -> -1.2 nats
SHRINKING = saturating(N, 8.5, -1.2, rate=5, sd=0.02, seed=10)
# a Hopper-like reward: up to 2500, a dip, ending near 2000 (not at the top of its range: not "solved")
HOPPER = np.r_[saturating(150, 0.0, 2500.0, rate=6, sd=40.0, seed=11), ramp(50, 2500.0, 2000.0, sd=40.0, seed=9)]


def test_a_gaussian_converging_while_the_reward_rises_is_a_note():
    run = gaussian(HOPPER, SHRINKING, saturating(N, 1.0, 0.2, rate=5, seed=12))
    [f] = findings(run, "PD701")
    assert f.severity == "info" and "nats" in f.message
    assert any("action std ends at" in e for e in f.evidence) and any("rose" in e for e in f.evidence)


def test_a_gaussian_collapsing_while_the_reward_is_stuck_is_a_symptom():
    run = gaussian(flat(N, -120.0, 5.0, seed=13), SHRINKING, saturating(N, 1.0, 0.2, rate=5, seed=12))
    assert severities(run, "PD701") == ["warning"]


def test_a_gaussian_collapsing_while_the_reward_falls_from_its_best_is_a_symptom():
    reward = np.r_[saturating(80, 0.0, 2000.0, rate=6, sd=30.0, seed=14), ramp(120, 2000.0, 200.0, sd=30.0, seed=15)]
    assert severities(gaussian(reward, SHRINKING), "PD701") == ["warning"]


def test_a_task_learned_within_the_first_updates_then_held_is_no_stuck_reward():
    # the reward climbs inside the first tenth of the run and holds there while the std keeps shrinking
    reward = np.r_[np.linspace(40.0, 140.0, 10), flat(N - 10, 135.0, 5.0, seed=16)]
    assert severities(gaussian(reward, SHRINKING), "PD701") == ["info"]


def test_a_positive_gaussian_entropy_is_judged_by_its_absolute_fall():
    # Hopper-like: 1.34 -> 0.37 nats is 73 % of a differential entropy, and only ln(2.6) of std
    entropy = saturating(N, 1.34, 0.37, rate=5, sd=0.01, seed=18)
    tags = {"ep_rew_mean": HOPPER, "entropy_loss": -entropy}
    assert findings(sb3_run(tags, path="/logs/PPO/Hopper-v2"), "PD701") == []
    # the same curves with nothing to mark the actions continuous read as a discrete policy's collapse
    assert severities(sb3_run(tags, path="/logs/PPO/run"), "PD701") == ["warning"]


def test_a_discrete_entropy_collapse_is_unchanged():
    run = example_run(Example(series={"policy/entropy": decay(150, 2.5, 0.03, rate=6, sd=0.02, seed=46)}))
    assert severities(run, "PD701") == ["error"]


# -- continuous actions: PD305 a constant Gaussian entropy is a fixed std -----------------------------
def test_a_fixed_std_while_the_reward_rises_is_a_note():
    reward = saturating(N, 0.0, 300.0, sd=5.0, seed=19)
    run = gaussian(reward, flat(N, 4.26), flat(N, 1.0))
    [f] = findings(run, "PD305")
    assert f.severity == "info" and "action std" in f.message and "uniform" not in f.message


def test_a_fixed_std_while_the_reward_is_stuck_is_a_symptom():
    run = gaussian(flat(N, -50.0, 2.0, seed=20), flat(N, 4.26), flat(N, 1.0))
    assert severities(run, "PD305") == ["warning"]
