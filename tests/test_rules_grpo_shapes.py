"""Issue 15, GRPO part: one synthetic series per shape the real-TRL GRPO suite showed, each with
its counterpart that must stay as it was (the mechanism, not the suite's numbers).

Shapes: a reward at its peak from the first window that then collapses (PD204); a sparse reward
that is 0 almost everywhere (PD201's zero MAD); a batch-wide one-value glitch (PD201's causes);
a batch mean that moved less than its batch's spread and a plateau's edge (PD201, held-out seeds);
near-greedy sampling whose reward spread vanishes (PD203); gradients collapsing once the reward
stops (PD302); and the causes of stagnation under a far-from-1 temperature, a noise reward and a
tiny learning rate (diagnose)."""

from __future__ import annotations

import numpy as np

from ppo_doctor.diagnose import rank_causes
from ppo_doctor.monitor import replay
from ppo_doctor.diagnose.evidence import collect
from ppo_doctor.rules.base import Example
from ppo_doctor.rules.engine import run_rules
from ppo_doctor.rules.examples import example_run, flat, saturating
from ppo_doctor.rules.pd201_reward_spike import RewardSpike
from ppo_doctor.rules.pd203_reward_std_collapse import RewardStdCollapse
from ppo_doctor.rules.pd204_reward_collapse import RewardCollapse
from ppo_doctor.rules.pd306_degenerate_groups import DegenerateGroups
from ppo_doctor.rules.pd302_vanishing_gradients import VanishingGradients

N = 120
TOKEN_KL = {"kl/ref": {"estimator": "k3", "reduction": "token_mean"}}


def fire(rule, example):
    return list(rule().run(example_run(example)))


def analyse(example):
    run = example_run(example)
    findings, _ = run_rules(run)
    return findings, rank_causes(findings, run)


# -- PD204: a collapse needs no rise when the first window already sits at the peak -------------
def early_peak(late: float) -> np.ndarray:
    """Reward 0.1 for two steps, then 1.0 (the rise inside the first window), then ``late``
    from step 58 to the end."""
    return np.r_[[0.1, 0.07], np.full(56, 1.0), np.full(N - 58, late)] + flat(N, 0.0, 0.002, seed=3)


def test_collapse_from_a_peak_held_since_the_start():
    (f,) = fire(RewardCollapse, Example(series={"reward/score": early_peak(0.0)}))
    assert f.symptom == "reward_collapse" and f.severity == "error"
    assert 50 <= f.threshold_step <= 60
    assert "from the start" in f.message


def test_small_fall_from_an_early_peak_is_not_a_collapse():
    # 1.0 -> 0.97: many noise units, but 3 % of the level
    assert fire(RewardCollapse, Example(series={"reward/score": early_peak(0.97)})) == []


def test_collapse_after_a_rise_is_unchanged():
    r = np.r_[saturating(60, 0.0, 1.0, rate=6, sd=0.02, seed=4), flat(60, 0.1, 0.02, seed=5)]
    (f,) = fire(RewardCollapse, Example(series={"reward/score": r}))
    assert "climbed from" in f.message and "of the gain lost" in f.message


# -- PD201: a reward that is one value on most points has no robust spread ----------------------
def sparse(success: float, batch_std: float) -> Example:
    reward, std = np.zeros(N), np.zeros(N)
    reward[73], std[73] = success, batch_std
    return Example(series={"reward/score": reward, "reward/std": std})


def test_one_rare_success_of_a_sparse_reward_is_not_a_spike():
    # one completion of 32 paid 1: the batch mean is 1/32, its std 0.18
    assert fire(RewardSpike, sparse(1 / 32, 0.177)) == []


def test_a_batch_wide_jump_of_a_one_value_reward_is_a_spike():
    # every sample of the batch scored 50 (std 0): the scorer, not a sample
    (f,) = fire(RewardSpike, sparse(50.0, 0.0))
    assert f.symptom == "reward_spike" and f.peak_step == 73


def test_zero_mad_reward_without_a_batch_std_is_not_judged():
    reward = np.zeros(N)
    reward[73] = 1 / 32
    assert fire(RewardSpike, Example(series={"reward/score": reward})) == []


def test_a_one_value_batch_puts_the_scorer_first():
    reward = flat(N, 0.2, 0.15, seed=7)
    std = np.abs(flat(N, 0.3, 0.05, seed=8))
    reward[60:62], std[60:62] = 50.0, 0.0
    findings, causes = analyse(Example(series={"reward/score": reward, "reward/std": std}, framework="trl_grpo"))
    (spike,) = [f for f in findings if f.code == "PD201"]
    assert max(spike.causes, key=spike.causes.get) == "reward-model-flawed"
    assert causes[0].id == "reward-model-flawed"
    # an outlier amid a normal spread keeps clipping and normalisation first among its causes
    std[60:62] = 0.3
    findings, _ = analyse(Example(series={"reward/score": reward, "reward/std": std}, framework="trl_grpo"))
    (spike,) = [f for f in findings if f.code == "PD201"]
    assert spike.causes == RewardSpike.causes


# -- PD201: a batch mean that moved less than its batch's own spread is sampling noise ----------
# (held-out GRPO seeds, issue 15: a healthy run's 0.24 at step 2 among tight early points)
def noisy_means() -> np.ndarray:
    """Means of batches whose samples spread 0.7: noise 0.12 around 0.15, and 8 early points that
    happen to lie within 0.01 of -0.05, so the local scale there is tiny; 0.24 at step 2."""
    reward = flat(N, 0.15, 0.12, seed=21)
    reward[:8] = -0.05 + flat(8, 0.0, 0.01, seed=22)
    reward[2] = 0.24
    return reward


def test_a_batch_mean_inside_its_batch_spread_is_not_a_spike():
    reward, std = noisy_means(), np.abs(flat(N, 0.7, 0.03, seed=23))
    # the z test alone calls it a spike (the local scale of 8 tight points) ...
    assert [f.peak_step for f in fire(RewardSpike, Example(series={"reward/score": reward}))] == [2]
    # ... the batch's own spread says the mean moved by 0.3 of one sample's std
    assert fire(RewardSpike, Example(series={"reward/score": reward, "reward/std": std})) == []


def test_a_whole_batch_move_or_an_extreme_sample_still_counts():
    reward, std = noisy_means(), np.abs(flat(N, 0.7, 0.03, seed=23))
    # the whole batch moved: its spread at the step is smaller than the move
    narrow = std.copy()
    narrow[2] = 0.1
    (f,) = fire(RewardSpike, Example(series={"reward/score": reward, "reward/std": narrow}))
    assert f.peak_step == 2
    # one extreme sample: the batch's spread jumped to 3x its usual level with the mean
    wide = std.copy()
    wide[2] = 2.1
    (f,) = fire(RewardSpike, Example(series={"reward/score": reward, "reward/std": wide}))
    assert f.peak_step == 2


# -- PD201: the last point of a plateau before a collapse is a level's edge, not a spike -------
# (held-out GRPO seed 7, issue 15: reward 1.0 for steps 3-13, then 0 to the end)
def plateau_then_zero() -> tuple[np.ndarray, np.ndarray]:
    reward = np.r_[[0.18, 0.37], np.full(11, 1.0), np.zeros(N - 13)]
    std = np.r_[[0.65, 0.49], np.full(11, 0.001), np.zeros(N - 13)]
    return reward, std


def test_the_edge_of_a_plateau_is_not_a_spike():
    reward, std = plateau_then_zero()
    assert fire(RewardSpike, Example(series={"reward/score": reward, "reward/std": std})) == []


def test_a_spike_on_top_of_the_plateau_still_counts():
    # the same run with one batch-wide glitch of 50 in the middle of the zeros
    reward, std = plateau_then_zero()
    reward[70] = 50.0
    (f,) = fire(RewardSpike, Example(series={"reward/score": reward, "reward/std": std}))
    assert f.peak_step == 70  # example steps count from 0


# -- PD203: near-greedy sampling makes every group one completion ------------------------------
def converged(temperature: float) -> Example:
    reward = np.r_[saturating(15, 0.6, 0.96, rate=4, sd=0.02, seed=9), np.full(N - 15, 0.964)]
    std = np.r_[np.linspace(0.5, 0.05, 15), np.full(N - 15, 6e-8)]
    kl = np.r_[np.linspace(0.0, 0.5, 15), np.abs(flat(N - 15, 0.5, 0.1, seed=10))]
    return Example(
        series={"reward/score": reward, "reward/std": std, "kl/ref": kl},
        config={"temperature": temperature},
        framework="trl_grpo",
        metric_info=TOKEN_KL,
    )


def test_spread_collapse_under_near_greedy_sampling_is_stagnation():
    (f,) = fire(RewardStdCollapse, converged(0.05))
    assert f.symptom == "stagnation" and "near-greedy" in f.message
    assert max(f.causes, key=f.causes.get) == "generation-settings"


def test_spread_collapse_at_temperature_one_is_still_hacking():
    (f,) = fire(RewardStdCollapse, converged(1.0))
    assert f.symptom == "reward_hacking"


# -- PD302: gradients collapsing once the reward stops being logged ----------------------------
def nan_reward(reward_to_the_end: bool, late_norm: float) -> Example:
    grad = np.r_[np.abs(flat(60, 0.75, 0.1, seed=11)), np.abs(flat(60, late_norm, late_norm / 4, seed=12))]
    reward = flat(N, 0.1, 0.1, seed=13)
    return Example(
        series={
            "grad/norm": grad,
            "reward/score": reward if reward_to_the_end else reward[:59],
            "loss/total": flat(N, 0.01, 0.01, seed=14),
        },
        framework="trl_grpo",
    )


def test_gradients_collapse_after_the_reward_stops():
    (f,) = fire(VanishingGradients, nan_reward(False, 0.015))
    assert f.symptom == "stagnation" and f.threshold_step >= 59
    assert "reward/score stopped after step 58" in f.message


def test_the_same_drop_with_the_reward_logged_is_not_judged_by_it():
    # 0.75 -> 0.015 is 2 % of the early level: above PD302's 1 % when the reward goes on
    assert fire(VanishingGradients, nan_reward(True, 0.015)) == []


def test_gradients_that_go_on_after_the_reward_stops_are_not_stagnation():
    assert fire(VanishingGradients, nan_reward(False, 0.6)) == []


# -- causes of stagnation ----------------------------------------------------------------------
def stalled(config: dict, reward_sd: float, batch_std: float, kl: float = 0.005) -> Example:
    return Example(
        series={
            "reward/score": flat(N, 0.05, reward_sd, seed=15),
            "reward/std": np.abs(flat(N, batch_std, batch_std / 10, seed=16)),
            "reward/zero_std_frac": np.zeros(N),
            "kl/ref": np.abs(flat(N, kl, kl / 4, seed=17)),
            "grad/norm": np.abs(flat(N, 0.7, 0.1, seed=18)),
        },
        config={"kl_coef": 0.04, "top_k": 0, "top_p": 1.0, "temperature": 1.0, **config},
        framework="trl_grpo",
        metric_info=TOKEN_KL,
    )


def test_far_from_one_temperature_puts_generation_settings_first():
    findings, causes = analyse(stalled({"lr": 5e-5, "temperature": 4.0}, 0.17, 0.3))
    assert any(f.symptom == "stagnation" for f in findings)
    assert causes[0].id == "generation-settings"


def test_noise_reward_blames_the_reward_not_a_usual_learning_rate():
    _, causes = analyse(stalled({"lr": 5e-5}, 0.17, 1.0))
    assert causes[0].id == "reward-model-flawed"
    lr = next(c for c in causes if c.id == "lr-too-low")
    assert any("usual range's top" in e for e in lr.config_against)


def test_tiny_learning_rate_is_still_lr_too_low():
    _, causes = analyse(stalled({"lr": 5e-10}, 0.17, 0.3, kl=0.0))
    assert causes[0].id == "lr-too-low"


def test_beta_zero_weighs_less_in_grpo_than_in_ppo():
    def weight(framework: str) -> float:
        run = example_run(Example(series={"reward/score": flat(30, 0.0)}, config={"kl_coef": 0.0}, framework=framework))
        return sum(e.weight for e in collect(run, ["kl-coef-too-low"])["kl-coef-too-low"])

    assert 0 < weight("trl_grpo") < weight("trl_legacy")


# -- PD701: a reward ceiling reached far from the reference is a collapse, not a solved task -----
def ceiling_and_collapsed_entropy(kl_end: float) -> Example:
    """Reward climbs to its ceiling of 1.0 in the first fifth and stays; entropy falls 1.6 -> ~0;
    the per-token KL to the reference rises to ``kl_end``."""
    steps = np.arange(N)
    reward = np.minimum(1.0, 0.2 + 0.8 * steps / (0.2 * N))
    entropy = 1.6 * np.exp(-steps / 8.0) + 0.005
    kl = kl_end * (1 - np.exp(-steps / 10.0))
    return Example(series={"reward/score": reward, "policy/entropy": entropy, "kl/ref": kl}, metric_info=TOKEN_KL)


def test_entropy_collapse_at_a_reward_ceiling_near_the_reference_is_a_note():
    from ppo_doctor.rules.pd701_entropy_collapse import EntropyCollapse

    (found,) = fire(EntropyCollapse, ceiling_and_collapsed_entropy(kl_end=0.1))
    assert found.severity == "info"
    assert any("solved its task" in e for e in found.evidence)


def test_entropy_collapse_at_a_reward_ceiling_far_from_the_reference_is_a_collapse():
    """grpo-lr-x1000's held-out seed 10: reward at 1.0, one fixed response, KL 5.5 nats/token."""
    from ppo_doctor.rules.pd701_entropy_collapse import EntropyCollapse

    (found,) = fire(EntropyCollapse, ceiling_and_collapsed_entropy(kl_end=5.5))
    assert found.severity == "error"
    assert any("ran away from its reference" in e for e in found.evidence) and found.basis == "runaway"
    assert not any("solved its task" in e for e in found.evidence)


# -- diagnose: zero-std groups at the reward's ceiling are a saturated task, not a weak signal ---
def identical_groups(reward: np.ndarray) -> Example:
    return Example(
        series={"reward/score": reward, "reward/std": np.zeros(N), "reward/zero_std_frac": np.ones(N)},
        framework="trl_grpo",
    )


def weak_signal_weight(example: Example) -> float:
    return sum(e.weight for e in collect(example_run(example), ["weak-learning-signal"])["weak-learning-signal"])


def test_groups_that_agree_at_the_reward_ceiling_argue_against_a_weak_signal():
    """grpo-lr-x1000 (held-out seed 13): every sample scores 1.0 from step 3, so every group's std is 0."""
    reward = np.r_[0.14, 0.17, np.ones(N - 2)]
    assert weak_signal_weight(identical_groups(reward)) < 0


def test_groups_that_agree_at_the_bottom_still_support_a_weak_signal():
    """A sparse reward that almost never pays: the groups agree at 0."""
    reward = np.zeros(N)
    reward[[30, 77]] = 0.03
    assert weak_signal_weight(identical_groups(reward)) > 1.0


# -- PD203: a reward at its top from the first window is not a flat reward ------------------------
def std_gone_at_the_top(kl_end: float) -> Example:
    """Reward 0.14, 0.17, then at 1.0 (a few batches just under) to the end; its std 0.67, 0.32,
    then the last stray samples (up to 0.04) and 0 from step 12 (every sample at 1.0)."""
    early = np.array([0.0, 0.0, 0.0, 0.015, 0.042, 0.01, 0.02, 0.005, 0.01, 0.003])
    std = np.r_[0.67, 0.32, early, np.zeros(N - 12)]
    reward = np.r_[0.14, 0.17, 1.0 - early / 4, np.ones(N - 12)]
    kl = np.r_[0.0, np.full(N - 1, kl_end)]
    return Example(series={"reward/score": reward, "reward/std": std, "kl/ref": kl}, framework="trl_grpo", metric_info=TOKEN_KL)


def test_spread_gone_at_a_reward_held_at_its_top_far_from_the_reference_is_not_stagnation():
    """grpo-lr-x1000, held-out seed 13: KL 8 nats/token, one fixed response scoring 1.0."""
    (found,) = fire(RewardStdCollapse, std_gone_at_the_top(kl_end=8.0))
    assert found.symptom == "reward_hacking"
    # the spread fell inside the first window: the message names the level before the fall
    # (0.67 and 0.32 at steps 0-1), not the first window's median of the collapsed points
    assert found.observed["first"] > 0.3 and "fell from 0.495 to 0" in found.message


def test_spread_gone_at_a_reward_held_at_its_top_near_the_reference_is_success():
    assert fire(RewardStdCollapse, std_gone_at_the_top(kl_end=0.05)) == []


# -- PD306: a share logged over one prompt group per step is read over enough groups -----------
def one_group_per_step(share: float, seed: int) -> Example:
    """A TRL GRPO log with one prompt group per step: ``frac_reward_zero_std`` is 0 or 1 (1 on
    ``share`` of the steps, at random), while a bounded reward rises 0.3 -> 0.6."""
    rng = np.random.default_rng(seed)
    zero = (rng.random(N) < share).astype(float)
    return Example(
        series={"reward/zero_std_frac": zero, "reward/score": np.clip(saturating(N, 0.3, 0.6, sd=0.15, seed=seed), 0, 1)},
        framework="trl_grpo",
    )


def pd306_live_stops(example: Example) -> list[int]:
    _, alerts = replay(example_run(example), check_every=5)
    return [s for s, a in alerts if a.code == "PD306" and a.severity == "error"]


def test_one_group_per_step_agreeing_on_a_third_of_the_steps_is_not_all_groups():
    """real22's TRL GRPO run (seed 2025): the spans of 1s read alone said "100 % of the groups"
    and stopped it at step 100 while its reward rose 0.30 -> 0.63."""
    for seed in range(10):
        example = one_group_per_step(1 / 3, seed)
        assert pd306_live_stops(example) == []
        assert all(f.severity == "info" for f in fire(DegenerateGroups, example))


def test_one_group_per_step_agreeing_on_nearly_every_step_is_still_no_gradient():
    example = one_group_per_step(0.97, 3)
    example.series["reward/score"] = np.abs(flat(N, 0.02, 0.01, seed=4))
    assert pd306_live_stops(example)
