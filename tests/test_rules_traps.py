"""Known traps: units, signs, estimators and configurations that fool naive thresholds
(docs/sources.md: the thresholds' sections, docs/sources.md#kl-estimators and the log gotchas
from docs/sources.md#downsampled-histories on)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ppo_doctor.frame import RawRun, RawSeries, ReadIssue, TextSample
from ppo_doctor.canonical.metrics import build_run
from ppo_doctor.rules.base import Example
from ppo_doctor.config import coerce
from ppo_doctor.rules.engine import run_rules
from ppo_doctor.verdict import verdict_for
from ppo_doctor.rules.examples import decay, example_run, flat, ramp, saturating, with_points

SEQ_K1 = {"kl/ref": {"estimator": "k1", "reduction": "seq_sum"}}


def fired(run, *codes):
    findings, _ = run_rules(run, coerce({"select": list(codes)} if codes else {}))
    return {(f.code, f.severity) for f in findings}


def codes_of(run, *codes):
    return {c for c, _ in fired(run, *codes)}


def stuck(n: int):
    """A reward that never improves: the outcome that lets a sign rule warn (outcome before sign)."""
    return flat(n, 0.2, 0.05, seed=77)


# -- value loss judged against the reward scale (SB3 rewards x100) -------------------------------
@pytest.mark.parametrize("scale", [1.0, 100.0])
def test_value_loss_scales_with_rewards_squared_without_findings(scale):
    n = 300
    reward = saturating(n, 10.0, 200.0, sd=3.0, seed=1) * scale
    vloss = np.abs(decay(n, 50.0, 20.0, sd=2.0, seed=2)) * (reward / reward[0]) ** 2 * scale**2
    run = example_run(Example(series={"reward/score": reward, "loss/value": vloss}, framework="sb3"))
    assert codes_of(run, "PD4") == set()


def test_value_loss_that_outgrows_the_reward_scale_is_flagged():
    n = 300
    vloss = np.r_[np.abs(decay(100, 5.0, 0.5, sd=0.02, seed=3)), ramp(200, 0.5, 40.0, sd=0.5, seed=4)]
    run = example_run(Example(series={"reward/score": flat(n, 1.0, 0.3, seed=5), "loss/value": np.abs(vloss)}))
    assert {"PD401", "PD404"} <= codes_of(run, "PD4")


# -- a critic that cannot fit vs a critic on a large scale -------------------------------------------
def x100_critic(ev_end: float, scale: float = 1.0):
    """Scores x100 and unnormalised: the value loss creeps up while the scores' spread shrinks."""
    n = 120
    return example_run(
        Example(
            series={
                "loss/value": ramp(n, 1800.0, 2800.0, sd=80.0, seed=20) * scale**2,
                "value/explained_var": saturating(n, 0.0, ev_end, sd=0.01, seed=21),
                "reward/score": saturating(n, 20.0, 90.0, sd=3.0, seed=22) * scale,
                "reward/std": saturating(n, 68.0, 24.0, sd=2.0, seed=23) * scale,
            }
        )
    )


@pytest.mark.parametrize("scale", [0.01, 1.0, 100.0])
def test_critic_that_cannot_follow_an_unnormalised_reward_is_noted_at_any_scale(scale):
    run = x100_critic(0.07, scale)
    # the reward still rises 20 -> 90: a critic that cannot follow it is a note, not a symptom
    assert fired(run, "PD4") == {("PD405", "info")}
    f = run_rules(run, coerce({"select": ["PD405"]}))[0][0]
    assert f.observed["late"] > f.observed["early"] and f.observed["late_ev"] < 0.1
    assert f.causes["reward-not-normalized"] > 0


def test_same_losses_with_a_critic_that_explains_the_returns_are_not_flagged():
    # SB3 flappybird with rewards x100 (corpus): value loss ~1000 and growing, EV ~0.65
    assert codes_of(x100_critic(0.65), "PD4") == set()


def test_critic_judged_against_the_scores_variance_without_explained_variance():
    n = 120
    std = saturating(n, 0.7, 0.5, sd=0.01, seed=24)
    stuck = {"loss/value": ramp(n, 0.6, 0.8, sd=0.02, seed=25), "reward/score": saturating(n, 0.0, 1.0, sd=0.05), "reward/std": std}
    assert codes_of(example_run(Example(series=stuck)), "PD405") == {"PD405"}  # 0.8 > 0.5^2: worse than the batch mean
    learning = {**stuck, "loss/value": np.abs(decay(n, 0.6, 0.05, sd=0.005, seed=26))}
    assert codes_of(example_run(Example(series=learning)), "PD405") == set()


def test_critic_of_a_saturated_reward_is_not_value_instability():
    # kl-coef-zero scenario: the scores reach ~1.0 for every response; the critic's loss falls
    # to 1e-4 and jumps 10x at times, and EV swings to -10 once the scores' spread is ~0
    n = 120
    spread = np.r_[saturating(80, 0.67, 0.05, sd=0.01, seed=27), flat(40, 0.002, 0.0005, seed=28)]
    ev = np.r_[flat(80, 0.02, 0.05, seed=29), flat(40, -8.0, 5.0, seed=30)]
    vloss = with_points(np.abs(decay(n, 0.17, 7e-5, rate=8, sd=2e-6, seed=31)), {101: 0.0113, 115: 0.008})
    run = example_run(
        Example(
            series={"loss/value": vloss, "value/explained_var": ev, "reward/score": saturating(n, 0.2, 0.999, sd=0.01, seed=32), "reward/std": np.abs(spread)}
        )
    )
    assert codes_of(run, "PD4") == set()


def test_explained_variance_of_zero_is_not_negative():
    # SB3 chess (corpus) logs EV = -1e-6: a critic that predicts a constant, not one that adds error
    run = example_run(Example(series={"value/explained_var": flat(100, -1e-6, 3e-7, seed=33)}, framework="sb3"))
    assert codes_of(run, "PD403") == set()
    worse = example_run(Example(series={"value/explained_var": flat(100, -0.4, 0.1, seed=34)}, framework="sb3"))
    assert codes_of(worse, "PD403") == {"PD403"}


# -- reward std collapse: hacking, a reward at its ceiling, stagnation or collapse ---------------------
def std_collapse(reward, kl=None):
    n = len(reward)
    series = {"reward/score": reward, "reward/std": np.abs(decay(n, 0.6, 0.02, sd=0.002, seed=35))}
    if kl is not None:
        series["kl/ref"] = kl
    return example_run(Example(series=series, metric_info=SEQ_K1))


def symptoms_of(run, code):
    return {f.symptom for f in run_rules(run, coerce({"select": [code]}))[0]}


def test_reward_spread_collapse_at_the_ceiling_with_kl_in_band_is_not_hacking():
    # the healthy reference-loop seeds: scores 0.2 -> 0.95 of a bounded scorer, KL ~1.8 nats
    n = 120
    rising = saturating(n, 0.2, 0.95, sd=0.02, seed=36)
    assert symptoms_of(std_collapse(rising, kl=np.abs(saturating(n, 0.0, 1.8, sd=0.1, seed=37))), "PD203") == set()
    assert symptoms_of(std_collapse(rising, kl=saturating(n, 0.0, 30.0, sd=0.5, seed=38)), "PD203") == {"reward_hacking"}
    # no KL logged (GRPO, beta 0): at the ceiling every sample gets the top score, which is success;
    # a reward still climbing when its spread is gone cannot be told from hacking
    assert symptoms_of(std_collapse(rising), "PD203") == set()
    assert symptoms_of(std_collapse(np.linspace(0.2, 0.95, n) + np.r_[np.zeros(n - 12), -np.linspace(0, 0.3, 12)]), "PD203") == {"reward_hacking"}


def test_reward_spread_collapse_when_flat_or_falling():
    n = 120
    assert symptoms_of(std_collapse(flat(n, 0.1, 0.02, seed=39)), "PD203") == {"stagnation"}
    falling = np.r_[flat(60, 0.9, 0.02, seed=40), np.linspace(0.9, 0.0, 60)]
    assert symptoms_of(std_collapse(falling, kl=np.geomspace(1, 150, n)), "PD203") == {"entropy_collapse"}


# -- clipping every step by a modest factor is clipping at work ---------------------------------------
@pytest.mark.parametrize("level,expect", [(0.8, set()), (3.3, {("PD603", "info")}), (88.0, {("PD603", "warning")})])
def test_clip_saturation_is_a_warning_only_at_explosion_level(level, expect):
    run = example_run(Example(series={"grad/norm": np.abs(flat(120, level, level / 10, seed=41)), "reward/score": stuck(120)}, config={"max_grad_norm": 1.0}))
    assert fired(run, "PD603") == expect


# -- SB3 entropy_loss is -entropy --------------------------------------------------------------
def test_sb3_entropy_loss_sign_is_undone():
    n = 200
    info = {"loss/entropy": {"sign": -1}}
    steady = example_run(Example(series={"loss/entropy": -saturating(n, 1.9, 1.5, sd=0.01)}, framework="sb3", metric_info=info))
    assert codes_of(steady, "PD701") == set()
    collapse = example_run(Example(series={"loss/entropy": -decay(n, 1.9, 0.02, sd=0.001), "reward/score": stuck(n)}, framework="sb3", metric_info=info))
    assert fired(collapse, "PD701") == {("PD701", "warning")}  # classic RL: warning at most
    # without the mapping's sign record, an SB3 run's loss/entropy is still read as -entropy
    bare = example_run(Example(series={"loss/entropy": -decay(n, 1.9, 0.02, sd=0.001), "reward/score": stuck(n)}, framework="sb3"))
    assert codes_of(bare, "PD701") == {"PD701"}


def test_llm_entropy_collapse_is_an_error():
    run = example_run(Example(series={"policy/entropy": decay(200, 2.0, 0.01, sd=0.001), "reward/score": stuck(200)}, framework="trl"))
    assert fired(run, "PD701") == {("PD701", "error")}


# -- clip fraction 0 is expected with one epoch and one minibatch ---------------------------------
@pytest.mark.parametrize(
    "config,expect",
    [
        ({"ppo_epochs": 1, "num_mini_batches": 1}, set()),
        ({}, set()),
        ({"ppo_epochs": 4, "num_mini_batches": 1}, {"PD304"}),
        ({"ppo_epochs": 1, "num_mini_batches": 8}, {"PD304"}),
    ],
)
def test_zero_clipfrac_is_config_aware(config, expect):
    # several updates per batch and an approx KL of 0 as well, and a reward that never moves:
    # the step changes nothing
    series = {"policy/clipfrac": flat(80, 0.0), "kl/old": flat(80, 0.0), "reward/score": stuck(80)}
    run = example_run(Example(series=series, config=config))
    assert codes_of(run, "PD304", "PD802") == expect
    # the same zeros while the reward rises are placeholders, not measurements (PD906)
    rising = example_run(Example(series={**series, "reward/score": saturating(80, 0, 1, sd=0.05)}, config=config))
    assert codes_of(rising, "PD304", "PD802") == set() and codes_of(rising, "PD906") == {"PD906"}
    # a zero clip fraction alone, while the reward rises, is small updates, not a frozen step
    alone = example_run(Example(series={"policy/clipfrac": flat(80, 0.0), "reward/score": saturating(80, 0, 1, sd=0.05)}, config=config))
    assert codes_of(alone, "PD304", "PD802") == set()


# -- negative KL: estimator noise vs sustained negative vs impossible ------------------------------
def test_float_noise_k1_is_not_negative_kl():
    run = example_run(Example(series={"kl/ref": flat(200, -1e-8, 1e-9)}, metric_info=SEQ_K1))
    assert codes_of(run, "PD11") == set()


def test_k1_noise_swinging_around_zero_is_not_negative_kl():
    run = example_run(Example(series={"kl/ref": flat(300, 0.0, 1.0, seed=7)}, metric_info=SEQ_K1))
    assert codes_of(run, "PD11") == set()


def test_sustained_negative_k1_points_at_generation_settings():
    run = example_run(
        Example(series={"kl/ref": ramp(200, 0.0, -6.0, sd=0.5, seed=8)}, config={"top_k": 50, "min_new_tokens": 16}, metric_info=SEQ_K1)
    )
    findings, _ = run_rules(run, coerce({"select": ["PD11"]}))
    assert [(f.code, f.severity) for f in findings] == [("PD111", "error")]
    f = findings[0]
    assert max(f.causes, key=f.causes.get) == "generation-settings"
    assert any("top_k=50" in e for e in f.evidence) and any("min_new_tokens=16" in e for e in f.evidence)
    assert f.start_step <= f.threshold_step


def test_token_mean_k1_uses_a_per_token_tolerance():
    info = {"kl/ref": {"estimator": "k1", "reduction": "token_mean"}}
    small = example_run(Example(series={"kl/ref": flat(100, -0.002, 0.001)}, metric_info=info))
    assert codes_of(small, "PD111") == set()
    clear = example_run(Example(series={"kl/ref": flat(100, -0.05, 0.005)}, metric_info=info))
    assert codes_of(clear, "PD111") == {"PD111"}


@pytest.mark.parametrize("estimator", ["k3", "k2", "full", "abs"])
def test_negative_values_of_a_nonnegative_estimator_are_a_bug(estimator):
    info = {"kl/ref": {"estimator": estimator, "reduction": "token_mean"}}
    run = example_run(Example(series={"kl/ref": flat(60, -0.01, 0.001)}, metric_info=info))
    findings, _ = run_rules(run, coerce({"select": ["PD11"]}))
    assert [f.code for f in findings] == ["PD112"]
    assert findings[0].causes == {"implementation-bug": 1.0}


def test_unknown_estimator_is_read_as_k1():
    run = example_run(Example(series={"kl/ref": flat(100, -4.0, 0.3)}))
    assert codes_of(run, "PD11") == {"PD111"}


# -- KL units: sequence sum, token mean, trlx square root -------------------------------------------
def test_same_numbers_different_units():
    kl = saturating(200, 0.0, 2.0, sd=0.05)
    seq = example_run(Example(series={"kl/ref": kl}, metric_info=SEQ_K1))
    tok = example_run(Example(series={"kl/ref": kl}, metric_info={"kl/ref": {"estimator": "k1", "reduction": "token_mean"}}))
    assert codes_of(seq, "PD101") == set()  # 2 nats per sequence: healthy for TRL
    assert codes_of(tok, "PD101") == {"PD101"}  # 2 nats per token: far out of band


def test_trlx_square_root_kl_is_squared_before_judging():
    info = {"kl/ref": {"estimator": "sqrt_k3", "reduction": "seq_sum"}}
    run = example_run(Example(series={"kl/ref": saturating(200, 0.0, 6.0, sd=0.05)}, metric_info=info, framework="trlx"))
    findings, _ = run_rules(run, coerce({"select": ["PD101"]}))
    assert [(f.code, f.severity) for f in findings] == [("PD101", "error")]  # 6**2 = 36 nats
    assert findings[0].observed["late"] > 30 and "squared" in findings[0].evidence[0]


def test_seq_sum_kl_reports_per_token_value_when_length_is_logged():
    run = example_run(
        Example(series={"kl/ref": ramp(100, 0, 40, sd=0.5), "len/response_mean": flat(100, 40.0, 1.0)}, metric_info=SEQ_K1)
    )
    f = run_rules(run, coerce({"select": ["PD101"]}))[0][0]
    assert 0.8 < f.observed["late_per_token"] < 1.2


def test_kl_high_from_the_first_step():
    run = example_run(Example(series={"kl/ref": flat(80, 30.0, 3.0), "reward/score": stuck(80)}, metric_info=SEQ_K1))
    assert ("PD102", "error") in fired(run, "PD102")
    f = run_rules(run, coerce({"select": ["PD102"]}))[0][0]
    assert f.causes["policy-not-from-sft"] == 1.0 and f.start_step == 0


# -- reward hacking: unit-aware, strengthened by samples -----------------------------------------------
def test_reward_hacking_on_token_mean_kl():
    info = {"kl/ref": {"estimator": "k3", "reduction": "token_mean"}}
    n = 200
    reward = saturating(n, 0.0, 5.0, sd=0.2, seed=9)
    hacked = example_run(Example(series={"reward/score": reward, "kl/ref": ramp(n, 0.0, 1.0, sd=0.01, seed=10)}, metric_info=info))
    assert ("PD202", "error") in fired(hacked, "PD202")
    fine = example_run(Example(series={"reward/score": reward, "kl/ref": saturating(n, 0.0, 0.1, sd=0.005, seed=11)}, metric_info=info))
    assert codes_of(fine, "PD202") == set()


def test_samples_turn_a_hacking_sign_into_an_error():
    # a reward that rises and stays up with a KL a little past its band is learning until
    # something shows the reward is bought: an info note; degenerate samples make it an error
    n = 200
    series = {"reward/score": saturating(n, 1.0, 3.0, sd=0.1, seed=12), "kl/ref": saturating(n, 0.0, 13.0, sd=0.3, seed=13)}
    plain = example_run(Example(series=series, metric_info=SEQ_K1))
    assert fired(plain, "PD202") == {("PD202", "info")}
    note = run_rules(plain, coerce({"select": ["PD202"]}))[0][0]
    assert note.basis == "sign" and "a sign, not an outcome" in note.message
    loop = "so good so good so good so good so good so good so good so good"
    texts = [(0, "A calm and thoughtful review of the film and its cast.")] * 4 + [(199, loop)] * 4
    hacked = example_run(Example(series=series, metric_info=SEQ_K1, texts=texts))
    findings, _ = run_rules(hacked, coerce({"select": ["PD202"]}))
    assert findings[0].severity == "error"
    assert any("repeat themselves" in e for e in findings[0].evidence)


# -- frameworks: GRPO beta=0, classic RL, CleanRL NaN EV, fp16 overflow, TRL legacy zeroed losses ------
def test_grpo_without_kl_is_info_by_design():
    run = example_run(Example(series={"reward/score": saturating(60, 0, 1, sd=0.05)}, framework="trl_grpo", config={"kl_coef": 0.0}))
    assert fired(run, "PD902") == {("PD902", "info")}
    llm = example_run(Example(series={"reward/score": saturating(60, 0, 1, sd=0.05), "len/response_mean": flat(60, 50, 2)}, framework="openrlhf"))
    assert fired(llm, "PD902") == {("PD902", "warning")}


def test_classic_rl_runs_skip_reference_kl_rules():
    n = 300
    run = example_run(
        Example(
            series={
                "reward/score": saturating(n, 20, 480, sd=5, seed=14),
                "kl/old": np.abs(flat(n, 0.012, 0.004, seed=15)),
                "loss/value": np.abs(decay(n, 200, 40, sd=5, seed=16)),
                "value/explained_var": saturating(n, 0.0, 0.9, sd=0.03, seed=17),
                "policy/clipfrac": np.abs(flat(n, 0.1, 0.02, seed=18)),
                "loss/entropy": -saturating(n, 0.69, 0.45, sd=0.005, seed=19),
            },
            framework="sb3",
            metric_info={"loss/entropy": {"sign": -1}},
        )
    )
    findings, na = run_rules(run)
    assert {n.code for n in na} >= {"PD101", "PD102", "PD111", "PD202"}
    assert [f.code for f in findings if f.severity != "info"] == []
    assert verdict_for(run, findings, na)[0] == "healthy"


def test_cleanrl_nan_explained_variance_is_info():
    ev = with_points(saturating(100, 0.0, 0.9, sd=0.02), {3: np.nan, 4: np.nan})
    run = example_run(Example(series={"value/explained_var": ev}, framework="cleanrl"))
    assert fired(run, "PD601") == {("PD601", "info")}


def test_isolated_fp16_overflow_in_grad_norm_is_a_note_but_nan_loss_is_an_error():
    # finite again after it: the weights never took that step (GradScaler skipped it)
    g = with_points(np.abs(flat(300, 1.0, 0.1)), {100: np.inf, 200: np.inf})
    run = example_run(Example(series={"grad/norm": g}))
    assert fired(run, "PD601") == {("PD601", "info")}
    loss = with_points(flat(300, 0.5, 0.01), {250: np.nan})
    run = example_run(Example(series={"loss/policy": loss}))
    assert fired(run, "PD601") == {("PD601", "error")}


def test_a_reward_undefined_before_the_first_episode_ends_is_not_measured_not_broken():
    # RLlib writes episode_reward_mean as NaN until an episode finishes (blind set real50)
    reward = with_points(saturating(200, -21.0, -13.0, sd=0.3, seed=4), {0: np.nan, 1: np.nan, 2: np.nan})
    run = example_run(Example(series={"reward/score": reward}))
    (f,) = run_rules(run, coerce({"select": ["PD601"]}))[0]
    assert f.severity == "info" and "all before its first finite value (step 3): not measured until then" in f.message
    # a NaN after finite values is broken numbers, whatever comes after it
    late = with_points(reward, {50: np.nan})
    run = example_run(Example(series={"reward/score": late}))
    assert fired(run, "PD601") == {("PD601", "error")}


def test_skipped_gradient_steps_are_judged_by_the_reward_after_them():
    g = with_points(np.abs(flat(200, 1.0, 0.1)), {20: np.nan, 21: np.nan, 60: np.nan, 61: np.nan, 120: np.nan})
    learning = saturating(200, 0.1, 0.8, sd=0.02, seed=3)
    run = example_run(Example(series={"grad/norm": g, "reward/score": learning}))
    (f,) = run_rules(run, coerce({"select": ["PD601"]}))[0]
    assert (f.severity, f.basis) == ("info", "sign") and "a sign, not an outcome" in f.message
    collapsing = learning.copy()
    collapsing[100:] = 0.05 + 0.01 * np.sin(np.arange(100))
    run = example_run(Example(series={"grad/norm": g, "reward/score": collapsing}))
    (f,) = run_rules(run, coerce({"select": ["PD601"]}))[0]
    assert f.severity == "error" and any(e.startswith("outcome:") for e in f.evidence)
    # non-finite to the end: the weights took it, the training broke
    g_end = g.copy()
    g_end[150:] = np.nan
    run = example_run(Example(series={"grad/norm": g_end, "reward/score": learning}))
    assert fired(run, "PD601") == {("PD601", "error")}


def test_unknown_metrics_with_nan_are_grouped_into_one_note():
    run = example_run(Example(series={"custom/a": with_points(flat(20, 1.0), {5: np.nan}), "custom/b": with_points(flat(20, 1.0), {9: np.inf})}))
    findings, _ = run_rules(run, coerce({"select": ["PD601"]}))
    assert [(f.severity, f.metric) for f in findings] == [("info", "custom/a")]
    assert "custom/b" in findings[0].evidence[-1]


def test_zeroed_losses_only_for_trl_legacy():
    pol = with_points(decay(60, 0.5, 0.1, sd=0.02), {30: 0.0})
    val = with_points(decay(60, 2.0, 0.4, sd=0.05), {30: 0.0})
    legacy = example_run(Example(series={"loss/policy": pol, "loss/value": val}, framework="trl_legacy"))
    assert codes_of(legacy, "PD804") == {"PD804"}
    grpo = example_run(Example(series={"loss/total": with_points(flat(60, 0.1, 0.01), {30: 0.0})}, framework="trl_grpo"))
    assert codes_of(grpo, "PD804") == set()


def test_three_decimal_zero_lr_defers_to_the_config():
    zero = {"opt/lr": flat(50, 0.0), "reward/score": saturating(50, 0, 1, sd=0.05)}
    assert codes_of(example_run(Example(series=zero, config={"lr": 1e-6}, framework="verl")), "PD303") == set()
    assert fired(example_run(Example(series=zero, framework="verl")), "PD303") == {("PD303", "info")}
    assert fired(example_run(Example(series=zero, config={"lr": 0.0})), "PD303") == {("PD303", "error")}


def test_frozen_uniform_policy_is_stagnation():
    run = example_run(Example(series={"policy/entropy": flat(100, math.log(7)), "reward/score": flat(100, 0.0)}))
    assert {"PD305", "PD301"} <= codes_of(run, "PD3")


# -- log quality ---------------------------------------------------------------------------------
def test_reader_reported_downsampling_and_restarts():
    run = example_run(Example(series={"reward/score": saturating(50, 0, 1, sd=0.05)}))
    run.issues.append(ReadIssue(path="export.csv", message="W&B panel export is down-sampled (bucketed)", level="warning"))
    run.restarts.append(30)
    assert codes_of(run, "PD903", "PD904") == {"PD903", "PD904"}


def test_regular_thousand_point_logs_are_not_downsampled():
    steps = np.arange(1000) * 10
    run = example_run(Example(series={"reward/score": (steps, saturating(1000, 0, 1, sd=0.05))}))
    assert codes_of(run, "PD903") == set()


# -- healthy runs and short runs -----------------------------------------------------------------
def healthy_run(seed, n=300):
    rng = np.random.default_rng(seed)
    s = lambda lo, hi, sd, rate=4.0: saturating(n, lo, hi, rate=rate, sd=sd, seed=int(rng.integers(1 << 30)))  # noqa: E731
    return example_run(
        Example(
            series={
                "reward/score": s(0.5, 3.0, 0.4),
                "reward/std": np.abs(s(1.0, 0.8, 0.05)),
                "kl/ref": np.abs(s(0.0, 6.0, 0.8)),
                "kl/coef": flat(n, 0.05),
                "kl/old": np.abs(s(0.01, 0.02, 0.003)),
                "policy/entropy": s(2.2, 1.6, 0.05),
                "policy/clipfrac": np.abs(s(0.05, 0.12, 0.02)),
                "policy/ratio_mean": s(1.0, 1.0, 0.01),
                "loss/policy": s(0.0, 0.0, 0.05),
                "loss/value": np.abs(s(1.0, 0.3, 0.05)),
                "value/explained_var": s(0.0, 0.8, 0.05),
                "grad/norm": np.abs(s(1.0, 0.7, 0.1)),
                "opt/lr": flat(n, 1.41e-5),
                "len/response_mean": s(40, 48, 3.0),
            },
            config={"ppo_epochs": 4, "num_mini_batches": 1, "max_grad_norm": 1.0, "kl_coef": 0.05},
            metric_info=SEQ_K1,
            texts=[(0, "The film was a pleasant surprise with a strong cast."), (n - 1, "A moving story, well told and well acted.")],
        )
    )


def reference_loop_healthy_run(seed):
    """A healthy run of the bundled loop as its logs name things (TRL PPOv2 plus legacy
    statistics), through the real alias table: a bounded scorer near its ceiling, KL inside
    the band, response length drifting up a little, a critic that learns."""
    n = 120
    rng = np.random.default_rng(seed)
    s = lambda lo, hi, sd, rate=5.0: saturating(n, lo, hi, rate=rate, sd=sd, seed=int(rng.integers(1 << 30)))  # noqa: E731
    tags = {
        "objective/scores": s(0.23, 0.95, 0.03),
        "ppo/std_scores": np.abs(s(0.63, 0.03, 0.005)),
        "objective/kl": np.abs(s(0.0, 1.8, 0.15)),
        "objective/kl_coef": flat(n, 0.05),
        "policy/approxkl_avg": np.abs(s(0.002, 0.001, 0.0003)),
        "policy/clipfrac_avg": np.abs(s(0.01, 0.005, 0.002)),
        "policy/entropy_avg": s(1.6, 1.36, 0.02),
        "loss/value_avg": np.abs(s(0.16, 0.0016, 0.0003, rate=8)),
        "ppo/val/var_explained": s(0.0, 0.5, 0.05),
        "grad_norm": np.abs(s(1.06, 0.85, 0.08)),
        "tokens/responses_len_mean": s(5.8, 7.5, 0.3),
    }
    raw = RawRun(
        series=[RawSeries(t, np.arange(1, n + 1), np.asarray(v, float), source="t") for t, v in tags.items()],
        config={"learning_rate": 1e-4, "kl_coef": 0.05, "num_ppo_epochs": 4, "num_mini_batches": 2, "max_grad_norm": 1.0, "kl_estimator": "k1"},
    )
    return build_run("loop", "/loop", "jsonl", ["/loop/metrics.jsonl"], raw)


@pytest.mark.parametrize("seed", range(4))
def test_healthy_reference_loop_run_with_every_statistic_mapped_has_no_warning(seed):
    run = reference_loop_healthy_run(seed)
    assert {"len/response_mean", "value/explained_var", "reward/std"} <= set(run.metric_info)
    findings, na = run_rules(run)
    assert [(f.code, f.message) for f in findings if f.severity != "info"] == []
    assert verdict_for(run, findings, na)[0] == "healthy"


@pytest.mark.parametrize("seed", range(8))
def test_healthy_runs_have_no_error_and_are_called_healthy(seed):
    run = healthy_run(seed)
    findings, na = run_rules(run)
    assert [(f.code, f.message) for f in findings if f.severity == "error"] == []
    assert verdict_for(run, findings, na)[0] == "healthy"


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_very_short_runs_never_raise_or_error(n):
    metrics = ("reward/score", "kl/ref", "loss/value", "grad/norm", "policy/entropy", "kl/coef", "policy/ratio_mean", "value/explained_var")
    run = example_run(Example(series={m: np.linspace(1, 2, n) for m in metrics}, metric_info=SEQ_K1, texts=[(0, "hi")] if n else []))
    run.texts.append(TextSample(step=0, tag="t", text=""))
    findings, na = run_rules(run)
    assert [f for f in findings if f.severity == "error"] == []
    assert not [x for x in na if x.missing[0].startswith("internal error")]


def test_kl_collapse_that_comes_back_is_an_error_a_mild_excursion_a_note():
    # lr x100 (sample_logs/lr-x100): the KL jumps to ~12x the band for a stretch, then settles
    # near the band; the corpus KL sweep's beta 0.2 runs rise to ~1.5x the band and come back
    n = 120
    collapse = np.r_[flat(3, 0.5, 0.1, seed=1), flat(10, 90.0, 10.0, seed=2), flat(107, 9.0, 1.5, seed=3)]
    mild = np.r_[flat(40, 5.0, 0.5, seed=4), flat(40, 14.0, 0.5, seed=5), flat(n - 80, 9.0, 0.5, seed=6)]
    got = {name: fired(example_run(Example(series={"kl/ref": kl}, metric_info=SEQ_K1)), "PD101") for name, kl in (("collapse", collapse), ("mild", mild))}
    assert got == {"collapse": {("PD101", "error")}, "mild": {("PD101", "info")}}
    f = run_rules(example_run(Example(series={"kl/ref": collapse}, metric_info=SEQ_K1)), coerce({"select": ["PD101"]}))[0][0]
    assert any("ran away" in e for e in f.evidence) and f.basis == "runaway"


def test_reward_scale_whose_square_underflows_is_no_scale():
    # found by the hypothesis engine test: scores ~1e-238 made PD404 divide by 0.0
    run = example_run(Example(series={"reward/score": [0.0, 0.0, 4.7626762956645104e-238], "loss/value": [0.0] * 20}, framework="trl"))
    findings, na = run_rules(run)
    assert not [n for n in na if n.missing and n.missing[0].startswith("internal error")]


def test_batch_score_std_whose_square_underflows_is_ignored():
    n = 40
    run = example_run(Example(series={"loss/value": ramp(n, 0.6, 0.8, sd=0.0), "reward/score": flat(n, 0.5, 0.0), "reward/std": [1e-200] * n}))
    findings, na = run_rules(run, coerce({"select": ["PD405"]}))
    assert findings == [] and not [x for x in na if x.missing and x.missing[0].startswith("internal error")]


def test_reward_scale_growing_past_float_range_is_no_crash():
    n = 60
    reward = np.r_[np.full(n // 2, 1e-150), np.full(n - n // 2, 1e150)]
    run = example_run(Example(series={"loss/value": np.r_[np.full(n // 2, 1.0), np.geomspace(1.0, 100.0, n - n // 2)], "reward/score": reward}))
    findings, na = run_rules(run, coerce({"select": ["PD401", "PD402", "PD404", "PD405"]}))
    assert not [x for x in na if x.missing and x.missing[0].startswith("internal error")]


# -- issue 15: false alarms and misses, each on a synthetic series of its shape ----------------------
def test_gaussian_entropy_crossing_zero_is_judged_by_its_absolute_change():
    # SB3 continuous control: differential entropy 1.4 -> -0.6 nats (std down ~2.7x): not "fell 145%"
    n = 200
    mild = example_run(Example(series={"loss/entropy": -saturating(n, 1.4, -0.6, sd=0.02, seed=81)}, framework="sb3"))
    assert fired(mild, "PD701") == set()
    # std shrinking ~500x while the reward is stuck: a collapse, reported in nats, warning at most
    stuck = flat(n, 10.0, 1.0, seed=84)
    strong = example_run(Example(series={"loss/entropy": -saturating(n, 1.4, -5.0, sd=0.02, seed=82), "reward/score": stuck}, framework="sb3"))
    f = run_rules(strong, coerce({"select": ["PD701"]}))[0]
    assert [(x.code, x.severity) for x in f] == [("PD701", "warning")] and "nats" in f[0].message and "%" not in f[0].message


def test_grad_norm_a_few_times_a_silent_first_stretch_is_no_explosion():
    # GRPO: the first steps' groups have zero reward std, so their norms sit near 0; later norms of
    # 0.1-0.3 with a peak of 1 (clip 1.0) are ordinary, not 27x an "early baseline"
    n = 300
    g = np.abs(flat(n, 0.15, 0.05, seed=83))
    g[:30] = np.linspace(0.004, 0.05, 30)
    g[200] = 1.05
    run = example_run(Example(series={"grad/norm": g}, config={"max_grad_norm": 1.0}, framework="trl_grpo"))
    assert fired(run, "PD602") == set()
    # pre-clip norms of 2-7x the clip value are clipping at work
    clipped = example_run(Example(series={"grad/norm": with_points(np.abs(flat(n, 0.8, 0.1, seed=84)), {100: 7.0, 180: 4.0})}, config={"max_grad_norm": 1.0}))
    assert fired(clipped, "PD602") == set()
    # orders of magnitude above the typical norm is an explosion, clipping or not, once the reward
    # breaks after it; a spike that clipping absorbed while the reward holds is a sign (a note)
    spike = with_points(np.abs(flat(n, 0.8, 0.1, seed=85)), {150: 500.0})
    broke = np.r_[saturating(150, 0.1, 0.9, sd=0.02, seed=86), flat(n - 150, 0.1, 0.02, seed=87)]
    huge = example_run(Example(series={"grad/norm": spike, "reward/score": broke}, config={"max_grad_norm": 1.0}))
    assert fired(huge, "PD602") == {("PD602", "error")}
    held = example_run(Example(series={"grad/norm": spike, "reward/score": saturating(n, 0.1, 0.9, sd=0.02, seed=86)}, config={"max_grad_norm": 1.0}))
    assert fired(held, "PD602") == {("PD602", "info")}


def test_a_single_kl_spike_is_not_drift_or_hacking():
    # left-padding artefact: one KL point of 80 nats in a run that stays at 3
    n = 200
    kl = with_points(flat(n, 3.0, 0.5, seed=86), {120: 80.0})
    run = example_run(Example(series={"kl/ref": kl, "reward/score": saturating(n, 0.0, 2.0, sd=0.1, seed=87)}, metric_info=SEQ_K1))
    assert fired(run, "PD101") == set() and fired(run, "PD202") == set()


def test_weak_critic_while_the_reward_stalls_is_still_a_symptom():
    n = 120
    run = example_run(Example(series={"loss/value": ramp(n, 1800.0, 2800.0, sd=80.0, seed=88), "value/explained_var": flat(n, 0.02, 0.01, seed=89),
                                      "reward/score": flat(n, 40.0, 3.0, seed=90)}))
    assert ("PD405", "warning") in fired(run, "PD4")


def test_negative_explained_variance_once_solved_is_a_note():
    # returns at a cap (CartPole at 500): their variance is ~0 and EV swings below 0
    n = 200
    run = example_run(Example(series={"value/explained_var": flat(n, -0.5, 0.2, seed=91), "reward/score": saturating(n, 20.0, 500.0, rate=6, sd=5.0, seed=92)}, framework="sb3"))
    assert fired(run, "PD403") == {("PD403", "info")}


def test_reward_at_a_ceiling_it_reached_is_not_stagnation():
    # an accuracy reward that reaches 1.0 within the first window and stays there
    n = 200
    r = np.ones(n)
    r[:6] = [0.1, 0.3, 0.6, 0.8, 0.9, 0.95]
    run = example_run(Example(series={"reward/score": r}, framework="trl_grpo"))
    assert fired(run, "PD301") == set()
    stuck = example_run(Example(series={"reward/score": np.full(n, -100.0) + flat(n, 0.0, 0.01, seed=93)}, framework="sb3"))
    assert {code for code, _ in fired(stuck, "PD301")} == {"PD301"}


def test_reward_collapse_after_a_peak():
    n = 300
    up = saturating(150, 10.0, 400.0, rate=5, sd=10.0, seed=94)
    down = flat(150, 40.0, 10.0, seed=95)
    run = example_run(Example(series={"reward/score": np.r_[up, down], "opt/lr": flat(n, 3e-4)}, framework="sb3"))
    got = run_rules(run, coerce({"select": ["PD204", "PD301"]}))[0]
    assert [(f.code, f.symptom, f.severity) for f in got] == [("PD204", "reward_collapse", "error")]
    assert 100 <= got[0].start_step <= got[0].threshold_step <= 160  # the level smooths the edge by a few points
    from ppo_doctor.diagnose import rank_causes

    ranked = rank_causes(got, run)
    annealing = next(c for c in ranked if c.id == "no-lr-annealing")
    assert any("not annealed" in e for e in annealing.config_evidence)
    # a dip it recovers from is no collapse
    dip = np.r_[up, flat(30, 60.0, 10.0, seed=96), flat(120, 400.0, 10.0, seed=97)]
    assert fired(example_run(Example(series={"reward/score": dip}, framework="sb3")), "PD204") == set()


def test_grpo_zero_gradient_steps_are_no_signal_not_vanishing():
    # steps whose prompt groups all got equal rewards log a gradient norm of exactly 0
    n = 40
    g = np.abs(flat(n, 0.05, 0.015, seed=101))
    g[[1, 6, 8, 9, 10, 12, 13, 14, 25, 26, 27, 28, 31, 32, 33, 36, 38, 39]] = 0.0
    assert fired(example_run(Example(series={"grad/norm": g}, framework="trl_grpo")), "PD302") == set()
    dead = g.copy()
    dead[20:] = 0.0  # no signal at all from step 20
    assert {c for c, _ in fired(example_run(Example(series={"grad/norm": dead}, framework="trl_grpo")), "PD302")} == {"PD302"}


def test_entropy_falling_on_a_solved_task_is_a_note():
    n = 40
    reward = np.r_[np.linspace(0.1, 0.9, 5), flat(n - 5, 0.92, 0.03, seed=102)]
    entropy = saturating(n, 0.27, 0.09, sd=0.01, seed=103)
    fs = run_rules(example_run(Example(series={"reward/score": reward, "policy/entropy": entropy}, framework="trl_grpo")), coerce({"select": ["PD701"]}))[0]
    assert [(f.code, f.severity) for f in fs] == [("PD701", "info")] and "solved" in fs[0].evidence[-1]
    stuck = run_rules(example_run(Example(series={"reward/score": flat(n, 0.3, 0.03, seed=104), "policy/entropy": entropy}, framework="trl_grpo")), coerce({"select": ["PD701"]}))[0]
    assert [(f.code, f.severity) for f in stuck] == [("PD701", "warning")]


def test_responses_learning_to_stop_below_the_cap_are_no_collapse():
    n = 40
    length = saturating(n, 512.0, 220.0, sd=10.0, seed=105)
    clipped = saturating(n, 1.0, 0.4, sd=0.02, seed=106)
    run = example_run(Example(series={"len/response_mean": length, "len/response_clip_ratio": clipped}, framework="trl_grpo"))
    assert fired(run, "PD702") == set()
    # collapsing to EOS says so, cap or not
    eos = np.r_[np.full(10, 512.0), np.full(n - 10, 1.5)]
    fs = run_rules(example_run(Example(series={"len/response_mean": eos, "len/response_clip_ratio": clipped}, framework="trl_grpo")), coerce({"select": ["PD702"]}))[0]
    assert [f.code for f in fs] == ["PD702"] and "EOS" in fs[0].message


def test_answers_shortening_while_the_reward_rises_are_a_note():
    # prime-rl / Tinker style: 445 -> 15 tokens while the reward triples; not EOS-only
    n = 200
    length = np.r_[np.geomspace(445.0, 16.0, 20), flat(n - 20, 16.0, 2.0, seed=107)]
    reward = saturating(n, 0.12, 0.33, rate=8, sd=0.02, seed=108)
    fs = run_rules(example_run(Example(series={"len/response_mean": length, "reward/score": reward}, framework="other")), coerce({"select": ["PD702"]}))[0]
    assert [(f.code, f.severity) for f in fs] == [("PD702", "info")]
    flat_reward = run_rules(example_run(Example(series={"len/response_mean": length, "reward/score": flat(n, 0.2, 0.02, seed=109)}, framework="other")), coerce({"select": ["PD702"]}))[0]
    assert [(f.code, f.severity) for f in flat_reward] == [("PD702", "warning")]


def test_isolated_value_loss_spikes_are_a_note_recurring_ones_a_symptom():
    base = decay(150, 1.0, 0.2, sd=0.02, seed=27)
    one = example_run(Example(series={"loss/value": with_points(base, {70: 15.0})}))
    assert fired(one, "PD402") == {("PD402", "info")}
    many = example_run(Example(series={"loss/value": with_points(base, {30: 12.0, 70: 15.0, 110: 40.0, 130: 20.0}), "reward/score": stuck(150)}))
    assert fired(many, "PD402") == {("PD402", "warning")}


def test_frozen_policy_is_an_error_whatever_the_config():
    n = 300
    frozen = example_run(Example(series={"kl/old": np.zeros(n), "policy/entropy": np.full(n, 1.386), "reward/score": flat(n, 0.2, 0.05, seed=110)}))
    assert fired(frozen, "PD304") == {("PD304", "error")}
    # one update per batch: approx KL is 0 by construction, but the entropy moves between batches
    moving = example_run(Example(series={"kl/old": np.zeros(n), "policy/entropy": saturating(n, 1.386, 1.0, sd=0.01, seed=111)}, config={"ppo_epochs": 1}))
    assert fired(moving, "PD304") == set()


def test_nan_message_says_where_the_values_end_up():
    n = 100
    r = saturating(n, 0.0, 1.0, sd=0.01, seed=112)
    r[10:63] = np.nan
    r[64:] = np.nan  # one finite point at 63, then NaN to the end
    f = run_rules(example_run(Example(series={"reward/score": r})), coerce({"select": ["PD601"]}))[0][0]
    assert f.severity == "error" and "finite again" not in f.message
    assert "in 2 stretches, and non-finite from step 64 to the end of the run" in f.message
    r2 = saturating(n, 0.0, 1.0, sd=0.01, seed=113)
    r2[[30, 31, 70]] = np.nan
    f2 = run_rules(example_run(Example(series={"reward/score": r2})), coerce({"select": ["PD601"]}))[0][0]
    assert "in 2 stretches, the last at step 70; finite after it" in f2.message


def test_a_reward_that_stops_being_logged_is_nan():
    # today's TRL: a NaN reward is written as nothing into TensorBoard; the gradients then collapse
    n = 200
    reward = saturating(n, 0.0, 1.0, sd=0.02, seed=114)[:120]
    g = np.r_[flat(120, 0.3, 0.03, seed=115), np.zeros(n - 120)]
    run = example_run(Example(series={"reward/score": reward, "loss/policy": flat(n, 0.1, 0.01, seed=116), "grad/norm": g}, framework="trl_grpo"))
    findings = run_rules(run, coerce({"select": ["PD604", "PD302"]}))[0]
    stop = next(f for f in findings if f.code == "PD604")
    assert (stop.symptom, stop.severity, stop.metric, stop.start_step) == ("nan", "error", "reward/score", 120)
    assert any(f.code == "PD302" and f.symptom == "stagnation" for f in findings)
    # a metric logged every 10 steps is not missing on the steps a per-step loss is logged after it
    sparse = example_run(Example(series={"reward/score": (np.arange(0, 200, 10), flat(20, 1.0, 0.1, seed=117)), "loss/policy": flat(n, 0.1, 0.01, seed=118)}))
    assert fired(sparse, "PD604") == set()
    # a group written on an axis of its own (Tianshou: update/* at gradient steps, train/* at
    # environment steps, in one file) ends on that axis: nothing is missing
    tianshou = example_run(
        Example(
            series={
                "loss/value": (np.arange(1, 372) * 1280, flat(371, 0.1, 0.01, seed=119)),
                "loss/policy": (np.arange(1, 372) * 1280, flat(371, 0.05, 0.01, seed=120)),
                "reward/score": (np.arange(1, 48) * 65536, saturating(47, 0.0, 30.0, sd=1.0, seed=121)),
            }
        )
    )
    assert fired(tianshou, "PD604") == set()


def test_a_loss_whose_record_stops_while_the_reward_climbs_is_a_note():
    # a 2020 Tianshou DQN (blind set real53): the loss written at gradient steps 1..1000, the
    # episode rewards at environment steps up to 11,000 in one file; every reward step below 1000
    # is also a loss step, so the two look logged together, and the loss "stops" at 1000.  The
    # reward climbs long after it: the loss was computed, only its record ended there.
    reward_steps = np.arange(1, 381) * 29
    climb = np.r_[flat(260, 10.0, 1.0, seed=122), saturating(120, 10.0, 120.0, sd=3.0, seed=123)]
    series = {"loss/total": (np.arange(1, 1001), decay(1000, 3.0, 0.2, sd=0.05, seed=124)), "reward/score": (reward_steps, climb)}
    f = run_rules(example_run(Example(series=series)), coerce({"select": ["PD604"]}))[0][0]
    assert (f.severity, f.metric) == ("info", "loss/total")
    assert "went on learning" in f.message and any("rose" in e for e in f.evidence)
    # the same loss stopping while the reward stays where it was is a value that could not be computed
    stuck_after = {**series, "reward/score": (reward_steps, flat(380, 10.0, 1.0, seed=125))}
    f = run_rules(example_run(Example(series=stuck_after)), coerce({"select": ["PD604"]}))[0][0]
    assert (f.severity, f.metric) == ("error", "loss/total") and "could not be computed" in f.message


def test_a_healthy_run_gets_no_likely_causes_from_its_notes():
    from ppo_doctor.analyze import analyze_run

    # the corpus KL sweep's beta 0.2 shape: KL peaks at 1.5x the band and comes back inside it
    n = 200
    kl = np.r_[np.linspace(0, 14, 70), np.linspace(14, 9.5, 130)]
    rr = analyze_run(example_run(Example(series={"kl/ref": kl, "reward/score": saturating(n, 1.0, 3.0, sd=0.2, seed=119)}, metric_info=SEQ_K1)))
    assert [(f.code, f.severity) for f in rr.findings if f.code == "PD101"] == [("PD101", "info")]
    assert rr.verdict == "healthy" and rr.causes == [] and rr.symptoms == []


def test_a_fix_never_points_into_the_range_the_config_already_sits_in():
    from ppo_doctor.diagnose import rank_causes

    n = 200
    series = {"kl/ref": np.r_[np.linspace(0, 40, 100), np.full(100, 40.0)], "reward/score": saturating(n, 1.0, 3.0, sd=0.2, seed=120)}
    for beta, kept in ((0.2, False), (0.001, True)):
        run = example_run(Example(series=series, config={"kl_coef": beta}, metric_info=SEQ_K1))
        kl = next(c for c in rank_causes(run_rules(run)[0], run) if c.id == "kl-coef-too-low")
        raise_fix = any("toward 0.2" in fx for fx in kl.fixes)
        assert raise_fix is kept, (beta, kl.fixes)
        assert kept or any("already sits at or beyond the 0.2 a fix would set" in e for e in kl.evidence_against)


def test_a_findings_message_is_shown_once_not_under_every_cause():
    from ppo_doctor.diagnose import rank_causes

    run = example_run(Example(series={"kl/ref": np.r_[np.linspace(0, 40, 100), np.full(100, 40.0)], "reward/score": flat(200, 1.0, 0.1, seed=121)}, metric_info=SEQ_K1))
    findings = run_rules(run)[0]
    for c in rank_causes(findings, run):
        for e in c.evidence:
            assert not any(f.message in e for f in findings)


def test_the_message_names_the_onset_it_reports():
    clip = example_run(Example(series={"policy/clipfrac": saturating(100, 0.05, 0.45, sd=0.03, seed=55)}))
    f = run_rules(clip, coerce({"select": ["PD802"]}))[0][0]
    assert f.start_step <= f.threshold_step
    assert f"from step {f.threshold_step}" in f.message
    assert f.start_step == f.threshold_step or f"baseline at step {f.start_step}" in f.message


def test_whole_run_stagnation_with_a_motionless_policy_is_an_error():
    n = 200
    still = example_run(Example(series={"reward/score": flat(n, 0.5, 0.3, seed=122), "kl/ref": flat(n, 0.01, 0.005, seed=123)}, config={"lr": 1e-10}, metric_info=SEQ_K1))
    assert fired(still, "PD301") == {("PD301", "error")}
    noisy = example_run(Example(series={"reward/score": flat(n, 0.5, 0.3, seed=122), "kl/ref": flat(n, 3.0, 0.5, seed=124)}, metric_info=SEQ_K1))
    assert fired(noisy, "PD301") == {("PD301", "warning")}


def test_null_rewards_in_trainer_state_are_nan(tmp_path):
    # today's TRL writes null for a reward it could not compute
    from ppo_doctor.analyze import analyze

    rows = []
    for step in range(1, 61):
        reward = None if step > 40 else 0.1 + 0.01 * step
        rows.append({"step": step, "epoch": step / 60, "loss": 0.01, "reward": reward, "reward_std": 0.2, "grad_norm": 0.3 if step <= 40 else 0.0, "learning_rate": 1e-6})
    import json

    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": 60, "log_history": rows}))
    rr = analyze(tmp_path).runs[0]
    nan = [f for f in rr.findings if f.symptom == "nan" and f.metric == "reward/score"]
    assert nan and nan[0].severity == "error" and nan[0].threshold_step == 41
    assert rr.verdict == "unhealthy" and rr.verdict_reason.startswith("nan from step")


def test_grpo_two_iterations_with_a_zero_clip_fraction_is_not_stagnation():
    # GRPO num_iterations=2 at lr 1e-6: every ratio stays inside the clip range, the policy still
    # moves (entropy falls, the KL to the reference grows)
    n = 100
    series = {"policy/clipfrac": np.zeros(n), "policy/entropy": saturating(n, 0.5, 0.3, sd=0.01, seed=125),
              "kl/ref": saturating(n, 0.0, 0.08, sd=0.005, seed=126), "reward/score": saturating(n, 0.2, 0.6, sd=0.03, seed=127)}
    run = example_run(Example(series=series, config={"ppo_epochs": 2, "lr": 1e-6}, framework="trl_grpo",
                              metric_info={"kl/ref": {"estimator": "k3", "reduction": "token_mean"}}))
    assert fired(run, "PD304") == set()
    # nothing moves, the reward included: the update changes nothing
    frozen = {**series, "kl/ref": flat(n, 0.0001, 0.00001, seed=128), "policy/entropy": np.full(n, 0.5), "reward/score": stuck(n)}
    still = example_run(Example(series=frozen, config={"ppo_epochs": 2, "lr": 1e-6}, framework="trl_grpo",
                                metric_info={"kl/ref": {"estimator": "k3", "reduction": "token_mean"}}))
    assert {c for c, _ in fired(still, "PD304")} == {"PD304"}


def test_value_loss_far_above_a_near_perfect_trough_is_not_divergence_when_small():
    # kl-coef-zero seed 2: the critic fit the collapsed policy's returns to 3e-5, then 0.016 on scores ~0.9
    n = 120
    v = np.r_[decay(60, 0.2, 3e-5, rate=8, seed=129), ramp(60, 3e-5, 0.016, sd=1e-4, seed=130)]
    small = example_run(Example(series={"loss/value": np.abs(v), "reward/score": flat(n, 0.89, 0.02, seed=131)}))
    assert fired(small, "PD401") == set()
    big = example_run(Example(series={"loss/value": np.abs(v) * 100, "reward/score": flat(n, 0.89, 0.02, seed=131)}))
    assert fired(big, "PD401") == {("PD401", "warning")}


def test_raise_the_learning_rate_is_not_offered_to_a_run_already_in_the_usual_range():
    from ppo_doctor.diagnose import rank_causes

    n = 60
    for lr, kept in ((1e-5, False), (1e-8, True)):
        run = example_run(Example(series={"reward/score": flat(n, 0.0, 0.0), "kl/ref": flat(n, 0.001, 0.0001, seed=132), "opt/lr": flat(n, lr)}, framework="trl", metric_info=SEQ_K1))
        low = next(c for c in rank_causes(run_rules(run)[0], run) if c.id == "lr-too-low")
        assert any(fx.startswith("Raise the learning rate") for fx in low.fixes) is kept, (lr, low.fixes)


# -- a missing reward names the framework's own tag and, where one is needed, the wrapper --------
def pd901_message(framework):
    run = example_run(Example(series={"loss/value": decay(50, 5.0, 1.0, sd=0.05)}, framework=framework))
    findings, _ = run_rules(run, coerce({"select": ["PD901"]}))
    (finding,) = findings
    return finding.message


def test_missing_sb3_reward_points_at_the_monitor_wrapper():
    msg = pd901_message("sb3")
    assert msg.startswith("no reward metric (rollout/ep_rew_mean) in this log; SB3 logs it only")
    assert "Monitor" in msg


def test_missing_reward_names_the_frameworks_tag_without_a_wrapper_hint():
    assert pd901_message("trl_grpo").startswith("no reward metric (reward) in this log: ")
    assert pd901_message("verl").startswith("no reward metric (critic/score/mean or critic/rewards/mean) in this log: ")
    assert "RecordEpisodeStatistics" in pd901_message("cleanrl")
    # a log whose framework nothing tells gets the canonical names
    assert pd901_message("unknown").startswith("no reward metric (reward/score or reward/total) in this log: ")


def test_a_live_metric_not_computed_yet_is_a_note_and_the_finished_log_is_judged():
    """keras-rl writes each episode's loss as NaN until its warm-up steps are done (blind set
    real53): a live check before then saw a loss NaN on every point and stopped healthy runs.
    On a live run with no finite value yet the metric is not measured yet; offline, a training
    loss NaN on every point is an error."""
    from dataclasses import replace

    series = {"reward/score": saturating(60, 1.0, 5.0, sd=0.2, seed=5), "loss/total": np.full(60, np.nan)}
    live = replace(example_run(Example(series=series)), planned_steps=1000, live=True)
    (f,) = [x for x in run_rules(live, coerce({"select": ["PD601"]}))[0] if x.metric == "loss/total"]
    assert f.severity == "info" and "not measured yet on this live run" in f.message
    (g,) = [x for x in run_rules(example_run(Example(series=series)), coerce({"select": ["PD601"]}))[0] if x.metric == "loss/total"]
    assert g.severity == "error"
    # the reward is the environment's, there from the first episode: NaN from the start is an error live too
    nan_reward = replace(example_run(Example(series={"reward/score": np.full(60, np.nan), "loss/total": flat(60, 0.5, 0.01, seed=6)})), planned_steps=1000, live=True)
    (h,) = [x for x in run_rules(nan_reward, coerce({"select": ["PD601"]}))[0] if x.metric == "reward/score"]
    assert h.severity == "error"


def test_a_critic_that_follows_a_collapsing_return_down_does_not_over_estimate():
    # the collapse is PD204's; PD408 speaks only when the critic's estimate runs the other way
    reward = np.r_[saturating(150, 0.0, 600.0, rate=4, sd=20.0, seed=81), flat(50, -500.0, 60.0, seed=82)]
    down = np.r_[saturating(150, 20.0, 150.0, rate=4, sd=5.0, seed=83), ramp(50, 150.0, -120.0, sd=10.0, seed=84)]
    up = np.r_[saturating(150, 20.0, 150.0, rate=4, sd=5.0, seed=83), ramp(50, 150.0, 800.0, sd=10.0, seed=84)]
    assert codes_of(example_run(Example(series={"reward/score": reward, "value/mean": down})), "PD408") == set()
    f = run_rules(example_run(Example(series={"reward/score": reward, "value/mean": up})), coerce({"select": ["PD408"]}))[0][0]
    assert (f.symptom, f.severity) == ("value_instability", "warning") and f.start_step > 150


def test_a_critic_loss_orders_of_magnitude_off_scale_is_a_runaway_whatever_the_reward():
    # a keras-rl DQN (blind set real53): the TD loss climbs from 0.01 to 1e12 while the episode
    # return wanders 10-17 as it did at the start; a sign judged by the reward would be a note
    n = 300
    reward = flat(n, 13.0, 2.0, seed=126)
    loss = np.r_[flat(100, 0.01, 0.001, seed=127), np.geomspace(0.01, 1e12, 200)]
    f = run_rules(example_run(Example(series={"reward/score": reward, "loss/value": np.abs(loss)})), coerce({"select": ["PD401"]}))[0][0]
    assert (f.severity, f.basis) == ("warning", "runaway")
    # the same loss levelling off at 20x its best, the reward unharmed: a note
    tame = np.r_[flat(100, 0.01, 0.001, seed=127), np.geomspace(0.01, 0.2, 100), flat(100, 0.2, 0.01, seed=128)]
    findings = run_rules(example_run(Example(series={"reward/score": reward, "loss/value": np.abs(tame)})), coerce({"select": ["PD401"]}))[0]
    assert all(f.severity == "info" for f in findings)
