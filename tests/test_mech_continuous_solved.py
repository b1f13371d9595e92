"""Two mechanisms of issue 25, each on synthetic series of its shape.

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


def test_a_discrete_entropy_that_rounds_to_just_below_zero_is_no_evidence():
    # a discrete policy gone deterministic logs 0 give or take float rounding (ML-Agents' 2048
    # player ends at -1.2e-7 nats): no differential entropy, and its fall is judged as a share
    ent = np.r_[np.linspace(1.0, 0.0, 20), np.full(N - 20, -1.2e-7)]
    run = example_run(Example(series={"policy/entropy": ent, "reward/score": flat(N, 0.2, 0.05, seed=78)}, framework="unknown"))
    assert RunView(run).action_space is None
    (f,) = findings(run, "PD701")
    assert "100%" in f.message and "nats" not in f.message


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


def test_an_entropy_below_zero_throughout_is_judged_in_nats_and_never_an_error():
    # nothing marks the actions continuous, yet a percentage of a negative entropy means nothing
    # with a reward that never improves (outcome before sign: a falling entropy alone is a note)
    stuck = flat(N, 0.2, 0.05, seed=77)
    run = example_run(Example(series={"policy/entropy": saturating(N, -0.5, -8.0, rate=4, sd=0.02, seed=48), "reward/score": stuck}, framework="unknown"))
    [f] = findings(run, "PD701")
    assert f.severity == "warning" and "nats" in f.message


def test_a_discrete_entropy_collapse_is_unchanged():
    run = example_run(Example(series={"policy/entropy": decay(150, 2.5, 0.03, rate=6, sd=0.02, seed=46), "reward/score": flat(150, 0.2, 0.05, seed=77)}))
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


# -- constant returns: what the view knows ------------------------------------------------------------
def chess_like(n: int = 120, vary_from: int = 80, ev_logged: bool = True):
    """Every episode returns -100 until ``vary_from`` (EV NaN: Var(returns) = 0, the critic fits the
    constant and its loss decays to ~0); then the policy starts winning: returns of -100 and +100,
    EV about 0, a value loss of about their variance."""
    loss = np.r_[np.abs(decay(vary_from, 9000.0, 5.0, rate=5, sd=1.0, seed=21)), np.abs(flat(n - vary_from, 2.0e4, 1500.0, seed=22))]
    ev = np.r_[np.full(vary_from, np.nan), flat(n - vary_from, -1e-6, 1e-7, seed=23)]
    reward = np.r_[flat(vary_from, -98.0, 1.0, seed=24), ramp(n - vary_from, -95.0, 30.0, sd=3.0, seed=25)]
    tags = {"rollout/ep_rew_mean": reward, "train/value_loss": loss, "train/entropy_loss": -saturating(n, 7.5, 6.0, seed=26)}
    if ev_logged:
        tags["train/explained_variance"] = ev
    return sb3_run(tags)


def test_nan_explained_variance_marks_the_updates_with_constant_returns():
    returns = RunView(chess_like()).returns
    assert len(returns.constant) == 80 and returns.constant_from == "train/explained_variance"
    assert returns.rolling == 100 and returns.rolling_tag == "rollout/ep_rew_mean"


def test_a_zero_batch_reward_std_marks_constant_returns():
    std = np.r_[np.zeros(30), flat(90, 0.3, 0.05, seed=27)]
    run = example_run(Example(series={"reward/std": np.abs(std), "loss/value": flat(120, 0.1, 0.01, seed=28)}))
    assert len(RunView(run).returns.constant) == 30


def test_a_sparse_episode_mean_gives_the_updates_where_a_new_return_arrived():
    reward = np.zeros(120)
    reward[40:] = 0.02
    reward[90:] = 0.05
    run = example_run(Example(series={"reward/score": reward, "loss/value": flat(120, 2e-5, 5e-6, seed=29)}))
    assert list(RunView(run).returns.new_returns) == [40, 90]
    dense = example_run(Example(series={"reward/score": flat(120, 0.5, 0.1, seed=30), "loss/value": flat(120, 0.1, 0.01, seed=31)}))
    assert len(RunView(dense).returns.new_returns) == 0


# -- constant returns: the value rules -----------------------------------------------------------------
def test_value_loss_best_level_is_not_taken_while_returns_were_constant():
    assert findings(chess_like(), "PD401") == []
    # without the NaN explained variance nothing says the returns were constant: a 4000x rise
    assert [f.code for f in findings(chess_like(ev_logged=False), "PD401")] == ["PD401"]


def test_a_critic_diverging_on_varying_returns_still_rises():
    n = 200
    loss = np.r_[np.abs(decay(80, 50.0, 5.0, sd=0.5, seed=32)), ramp(120, 5.0, 400.0, sd=5.0, seed=33)]
    ev = np.r_[np.full(20, np.nan), flat(60, 0.6, 0.05, seed=34), ramp(120, 0.6, -2.0, sd=0.05, seed=35)]
    run = sb3_run({"rollout/ep_rew_mean": flat(n, 10.0, 1.0, seed=36), "train/value_loss": np.abs(loss), "train/explained_variance": ev})
    assert [f.code for f in findings(run, "PD401")] == ["PD401"]


def test_value_loss_jumps_when_returns_start_to_vary_are_no_spikes():
    n = 200
    loss = np.abs(flat(n, 1.0, 0.05, seed=37))
    ev = flat(n, 0.5, 0.05, seed=38)
    spikes_at = (60, 110, 160)
    for i in spikes_at:
        loss[i] = 4.0e4  # a win among losses: (100 - (-100))^2 on a share of the batch
    ev[:] = np.nan
    for i in spikes_at:
        ev[i] = -1e-6  # the first batches with a win: the only ones whose returns varied
    tags = {"rollout/ep_rew_mean": flat(n, -98.0, 1.0, seed=39), "train/value_loss": loss, "train/explained_variance": ev}
    assert [f for f in findings(sb3_run(tags), "PD402") if f.severity == "warning"] == []
    # the same spikes on updates whose returns all varied are the critic's
    tags["train/explained_variance"] = flat(n, 0.5, 0.05, seed=38)
    assert severities(sb3_run(tags), "PD402") == ["warning"]


def test_value_loss_spikes_with_the_rare_successes_of_a_sparse_task_are_no_instability():
    # MiniGrid-like: the episode-return mean moves only when a rare success arrives, and the value
    # loss of a critic fitted to all-zero returns jumps on those updates
    n = 120
    reward = np.zeros(n)
    loss = np.abs(flat(n, 2e-5, 5e-6, seed=40))
    for i, level in ((30, 0.026), (45, 0.036), (70, 0.02), (95, 0.034), (105, 0.046)):
        reward[i:] = level
        loss[i] = 0.01
    run = example_run(Example(series={"reward/score": reward, "loss/value": loss}, framework="unknown"))
    assert findings(run, "PD402") == []
    # the same spikes in a run whose reward moves at every update are judged as spikes
    dense = example_run(Example(series={"reward/score": np.abs(flat(n, 0.03, 0.01, seed=41)), "loss/value": loss}, framework="unknown"))
    assert severities(dense, "PD402") == ["warning"]


def test_a_rolling_mean_reward_scale_is_said_and_read_with_the_explained_variance():
    [f] = findings(chess_like(n=120, vary_from=20), "PD404")
    assert f.severity == "info" and "rolling mean" in f.message
    assert any("mean over the last 100 episodes" in e for e in f.evidence)
    # without an explained variance the finding stands, and says it only had a rolling mean; the
    # reward rises meanwhile, so it is a sign, not an outcome (a note saying what to watch)
    [g] = findings(chess_like(n=120, vary_from=20, ev_logged=False), "PD404")
    assert any("understates" in e for e in g.evidence)
    assert g.severity == "info" and "a sign, not an outcome: the reward rose" in g.message


def test_a_critic_on_constant_returns_at_the_end_is_not_judged():
    # a task held at its ceiling: every return the same, EV NaN, a value loss that is tiny and flat
    n = 120
    ev = np.r_[flat(40, 0.5, 0.05, seed=42), np.full(80, np.nan)]
    loss = np.r_[np.abs(decay(40, 1.0, 1e-4, sd=1e-5, seed=43)), np.abs(flat(80, 1e-4, 1e-5, seed=44))]
    run = sb3_run({"rollout/ep_rew_mean": np.r_[ramp(40, 0.0, 500.0, sd=5.0, seed=45), np.full(80, 500.0)], "train/value_loss": loss, "train/explained_variance": ev})
    assert findings(run, "PD405") == []


def test_explained_variance_of_updates_with_constant_scores_is_left_out():
    n = 120
    ev = flat(n, 0.4, 0.05, seed=46)
    std = np.abs(flat(n, 0.3, 0.02, seed=47))
    ev[30:] = -3.0  # 0/0 on updates whose scores were all equal, as a logger that does not write NaN
    std[30:] = 0.0
    run = example_run(Example(series={"value/explained_var": ev, "reward/std": std}, framework="unknown"))
    assert findings(run, "PD403") == []
    std[30:] = 0.3
    assert severities(example_run(Example(series={"value/explained_var": ev, "reward/std": std}, framework="unknown")), "PD403") == ["error"]
