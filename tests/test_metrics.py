"""Canonicalisation: framework guess, alias mapping, metric meanings, hyper-parameters, docs."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ppo_doctor.frame import RawRun, RawSeries
from ppo_doctor.canonical.hparams import flatten_config, normalize_config, parse_scalar
from ppo_doctor.canonical.metrics import (
    ALIASES,
    CANONICAL,
    build_run,
    can_be_negative,
    guess_framework,
    map_tags,
    render_markdown,
)

REPO = Path(__file__).resolve().parents[1]


def series(tag: str, values, steps=None) -> RawSeries:
    values = np.asarray(values, dtype=float)
    steps = np.arange(len(values)) if steps is None else steps
    return RawSeries(tag=tag, steps=steps, values=values, source="test")


def run_of(tags_values: dict, config: dict | None = None, aliases=None, **raw_kw):
    raw = RawRun(series=[series(t, v) for t, v in tags_values.items()], config=config or {}, **raw_kw)
    return build_run("r", "/tmp/r", "test", ["/tmp/r/f"], raw, aliases)


def mapped(tags, config=None):
    flat = flatten_config(config or {})
    fw = guess_framework(tags, flat)
    return fw, map_tags(tags, fw, normalize_config(flat, fw))


# -- vocabulary and tables -------------------------------------------------------------------
def test_every_alias_targets_a_canonical_metric():
    for fw, table in ALIASES.items():
        for a in table:
            assert a.canonical in CANONICAL, (fw, a.raw, a.canonical)
            assert a.sign in (1, -1)
            assert a.reduction in (None, "seq_sum", "token_mean")
            assert a.between in (None, "ref", "old")


def test_design_vocabulary_is_covered():
    design = (
        "reward/score reward/total reward/kl_penalty reward/std kl/ref kl/coef kl/old policy/entropy "
        "policy/clipfrac policy/ratio_mean policy/ratio_var loss/policy loss/value loss/total loss/entropy "
        "value/clipfrac value/explained_var value/mean value/error adv/mean adv/std return/mean grad/norm "
        "grad/norm_critic opt/lr len/response_mean len/response_clip_ratio"
    ).split()
    assert set(design) <= set(CANONICAL)
    assert not any(k.startswith("time/") for k in CANONICAL)


def test_committed_docs_are_up_to_date():
    doc = REPO / "docs" / "metrics.md"
    assert doc.read_text(encoding="utf-8") == render_markdown(), "run: python -m ppo_doctor.canonical.metrics > docs/metrics.md"


# -- framework guesses and mappings on synthetic tag sets --------------------------------------
@pytest.mark.parametrize(
    "tags, config, framework",
    [
        (["env/reward_mean", "ppo/mean_scores", "objective/kl", "ppo/loss/policy", "ppo/policy/approxkl"], {}, "trl_legacy"),
        (["train/objective/kl", "train/objective/scores", "train/loss/value_avg", "train/policy/approxkl_avg"], {}, "trl"),
        (["objective/kl", "objective/scores", "objective/rlhf_reward", "loss/policy_avg", "policy/approxkl_avg"], {}, "trl_rloo"),
        (["objective/kl", "objective/scores", "objective/rlhf_reward"], {"rloo_k": 2}, "trl_rloo"),
        (["kl", "reward", "reward_std", "completions/mean_length", "frac_reward_zero_std", "loss"], {}, "trl_grpo"),
        (["train/kl", "train/reward", "train/policy_loss", "train/actor_lr", "train/critic_lr", "train/ppo_clip_ratio"], {}, "openrlhf"),
        (["actor/pg_loss", "actor/ppo_kl", "critic/score/mean", "timing_s/gen"], {}, "verl"),
        (["losses/total_loss", "policy/sqrt_kl", "kl_ctl_value", "rollout_scores/mean"], {}, "trlx"),
        (["reward", "actor_loss", "critic_loss", "actor_loss_sum", "critic_loss_sum"], {}, "deepspeed_chat"),
        (["charts/episodic_return", "losses/approx_kl", "losses/old_approx_kl", "charts/SPS"], {}, "cleanrl"),
        (["rollout/ep_rew_mean", "train/approx_kl", "train/entropy_loss", "train/policy_gradient_loss"], {}, "sb3"),
        (["env/all/reward/total", "optim/kl_sample_train_v1", "optim/entropy", "optim/lr"], {}, "other"),
        (["loss", "learning_rate", "grad_norm", "epoch"], {}, "unknown"),
        (["some/metric"], {"actor_rollout_ref": {"actor": {"optim": {"lr": 1e-6}}}}, "verl"),
    ],
)
def test_framework_guess(tags, config, framework):
    assert guess_framework(tags, flatten_config(config)) == framework


def test_at_most_one_raw_tag_per_canonical_with_table_priority():
    run = run_of({"env/reward_mean": [1, 2], "ppo/mean_scores": [5, 6], "objective/kl": [0, 1], "ppo/loss/policy": [0, 0]})
    assert run.framework == "trl_legacy"
    assert run.mapping["env/reward_mean"] == "reward/score"
    assert "ppo/mean_scores" not in run.mapping and "ppo/mean_scores" in run.unmapped
    assert list(run.series("reward/score")) == [1.0, 2.0]
    assert list(run.series("ppo/mean_scores")) == [5.0, 6.0]  # unmapped stays under its raw tag
    assert sorted(run.mapping.values()) == sorted(set(run.mapping.values()))


def test_user_aliases_override_the_table():
    run = run_of(
        {"env/reward_mean": [1, 2], "ppo/mean_scores": [5, 6], "ppo/loss/policy": [0, 0], "my/custom": [3, 3]},
        aliases={"ppo/mean_scores": "reward/score", "my/custom": "grad/norm"},
    )
    assert run.mapping["ppo/mean_scores"] == "reward/score"
    assert run.mapping["my/custom"] == "grad/norm"
    assert "env/reward_mean" in run.unmapped
    assert list(run.series("reward/score")) == [5.0, 6.0]
    assert run.metric_info["grad/norm"].note == "user alias"


def test_alias_to_unknown_name_is_applied_with_a_warning():
    run = run_of({"x": [1.0]}, aliases={"x": "my/name"})
    assert run.mapping == {"x": "my/name"}
    assert any("not a canonical metric" in w for w in run.warnings)


def test_hf_train_prefix_is_stripped_but_sb3_train_keys_match_exactly():
    run = run_of({"train/objective/kl": [1.0], "train/objective/scores": [0.5], "train/loss/value_avg": [0.1]})
    assert run.mapping == {"train/objective/kl": "kl/ref", "train/objective/scores": "reward/score", "train/loss/value_avg": "loss/value"}
    sb3 = run_of({"train/approx_kl": [0.01], "train/entropy_loss": [-1.2], "train/policy_gradient_loss": [0.0], "rollout/ep_rew_mean": [3]})
    assert sb3.mapping["train/approx_kl"] == "kl/old"
    assert sb3.mapping["train/entropy_loss"] == "loss/entropy"


def test_unmapped_tag_spelled_like_a_claimed_canonical_does_not_merge():
    run = run_of({"kl/ref": [9.0], "my_kl": [1.0]}, aliases={"my_kl": "kl/ref"})
    assert list(run.series("kl/ref")) == [1.0]
    assert list(run.series("raw:kl/ref")) == [9.0]
    assert "kl/ref" in run.unmapped


def test_canonically_named_tags_map_to_themselves():
    run = run_of({"kl/ref": [0.1, 0.2], "reward/score": [1, 2], "loss/value": [1, 1]})
    assert run.mapping == {"kl/ref": "kl/ref", "reward/score": "reward/score", "loss/value": "loss/value"}


# -- meanings: estimator, reduction, sign, between ---------------------------------------------
@pytest.mark.parametrize(
    "tags, config, canonical, raw, estimator, reduction, between",
    [
        (["objective/kl", "objective/scores", "loss/value_avg"], {}, "kl/ref", "objective/kl", "k1", "seq_sum", "ref"),
        (["objective/kl", "objective/scores", "loss/value_avg"], {"kl_estimator": "k3"}, "kl/ref", "objective/kl", "k3", "seq_sum", "ref"),
        (["objective/kl", "ppo/mean_scores", "ppo/loss/policy"], {"kl_penalty": "full"}, "kl/ref", "objective/kl", "full", "seq_sum", "ref"),
        (["objective/kl", "ppo/mean_scores", "ppo/loss/policy"], {"kl_penalty": "mse"}, "kl/ref", "objective/kl", "k2", "seq_sum", "ref"),
        (["ppo/policy/approxkl", "ppo/mean_scores", "ppo/loss/policy"], {}, "kl/old", "ppo/policy/approxkl", "k2", "token_mean", "old"),
        (["kl", "reward", "reward_std", "frac_reward_zero_std"], {}, "kl/ref", "kl", "k3", "token_mean", "ref"),
        (["kl", "reward", "reward_std", "frac_reward_zero_std"], {"rloo_k": 4}, "kl/ref", "kl", "k1", "token_mean", "ref"),
        (["train/kl", "train/actor_lr", "train/ppo_clip_ratio"], {}, "kl/ref", "train/kl", "k1", "token_mean", "ref"),
        (["train/kl", "train/actor_lr", "train/ppo_clip_ratio"], {"use_kl_estimator_k3": True}, "kl/ref", "train/kl", "k3", "token_mean", "ref"),
        (["train/kl", "train/actor_lr", "train/ppo_clip_ratio"], {"kl_estimator": "k2"}, "kl/ref", "train/kl", "k2", "token_mean", "ref"),
        (["actor/kl_loss", "actor/pg_loss", "actor/ppo_kl"], {}, "kl/ref", "actor/kl_loss", "k3", "token_mean", "ref"),
        (
            ["actor/kl_loss", "actor/pg_loss", "actor/ppo_kl"],
            {"actor_rollout_ref": {"actor": {"kl_loss_type": "mse", "use_kl_loss": True}}},
            "kl/ref",
            "actor/kl_loss",
            "k2",
            "token_mean",
            "ref",
        ),
        (["actor/reward_kl_penalty", "actor/pg_loss", "actor/ppo_kl"], {}, "kl/ref", "actor/reward_kl_penalty", "k1", "token_mean", "ref"),
        (["actor/pg_loss", "actor/ppo_kl", "critic/score/mean"], {}, "kl/old", "actor/ppo_kl", "k1", "token_mean", "old"),
        (["policy/sqrt_kl", "losses/total_loss", "kl_ctl_value"], {}, "kl/ref", "policy/sqrt_kl", "sqrt_k3", "seq_sum", "ref"),
        (["policy/approx_kl", "losses/total_loss", "kl_ctl_value"], {}, "kl/old", "policy/approx_kl", "k3", "token_mean", "old"),
        (["losses/approx_kl", "losses/old_approx_kl", "charts/episodic_return"], {}, "kl/old", "losses/approx_kl", "k3", None, "old"),
        (["losses/old_approx_kl", "charts/episodic_return", "charts/SPS"], {}, "kl/old", "losses/old_approx_kl", "k1", None, "old"),
        (["train/approx_kl", "train/entropy_loss", "train/clip_fraction"], {}, "kl/old", "train/approx_kl", "k3", None, "old"),
    ],
)
def test_metric_meaning_by_framework(tags, config, canonical, raw, estimator, reduction, between):
    _fw, res = mapped(tags, config)
    info = res.info[canonical]
    assert (info.raw_tag, info.estimator, info.reduction, info.between) == (raw, estimator, reduction, between)


def test_trl_legacy_statistics_next_to_ppov2_names_are_mapped():
    # what the reference loop and many users log: PPOv2 names plus a few legacy statistics
    tags = ["objective/kl", "objective/scores", "loss/value_avg", "val/clipfrac_avg", "ppo/std_scores", "ppo/returns/mean",
            "ppo/val/mean", "ppo/val/var_explained", "tokens/responses_len_mean"]
    fw, res = mapped(tags)
    assert fw == "trl"
    assert {res.mapping[t] for t in tags[4:]} == {"reward/std", "return/mean", "value/mean", "value/explained_var", "len/response_mean"}
    _fw, res = mapped(["objective/kl", "objective/scores", "loss/value_avg", "val/explained_variance"])
    assert res.mapping["val/explained_variance"] == "value/explained_var"


def test_sb3_entropy_loss_sign_is_recorded_not_applied():
    run = run_of({"train/entropy_loss": [-1.5, -1.0], "train/approx_kl": [0.01, 0.02], "train/clip_fraction": [0.1, 0.1]})
    info = run.metric_info["loss/entropy"]
    assert info.sign == -1 and "entropy" in info.note
    assert list(run.series("loss/entropy")) == [-1.5, -1.0]  # data not negated


def test_can_be_negative_follows_the_estimator():
    _fw, res = mapped(["objective/kl", "objective/scores", "loss/value_avg"])
    assert can_be_negative(res.info["kl/ref"]) is True
    _fw, res = mapped(["kl", "reward", "reward_std", "frac_reward_zero_std"])
    assert can_be_negative(res.info["kl/ref"]) is False
    assert can_be_negative(None) is None


def test_negative_grpo_style_kl_is_read_as_rloo_k1():
    run = run_of({"kl": [0.01, -0.3, -0.2], "reward": [1, 1, 1], "reward_std": [0.5] * 3, "frac_reward_zero_std": [0.1] * 3})
    assert run.framework == "trl_rloo"
    assert run.metric_info["kl/ref"].estimator == "k1"
    assert any("RLOO" in w for w in run.warnings)


def test_build_run_carries_metadata_and_eval_frame():
    raw = RawRun(
        series=[series("train/objective/kl", [1.0, 2.0, 3.0]), series("train/objective/scores", [0.1, 0.2, 0.3]), series("time/x", [1, 1, 1])],
        config={"kl_coef": "0.05", "num_ppo_epochs": "4", "generation_kwargs": {"top_k": 0, "top_p": 1.0}},
        restarts=[2, 2, 1],
        eval_series=[series("eval/objective/scores", [0.4]), series("eval_custom", [1.0])],
    )
    run = build_run("id1", "/logs/run", "tensorboard", ["/logs/run/a"], raw)
    assert (run.id, run.path, run.format, run.files) == ("id1", "/logs/run", "tensorboard", ["/logs/run/a"])
    assert run.framework == "trl"
    assert run.config["kl_coef"] == 0.05 and run.config["ppo_epochs"] == 4
    assert run.config["top_k"] == 0 and run.config["top_p"] == 1.0
    assert run.raw_config["generation_kwargs.top_k"] == 0
    assert run.unmapped == ["time/x"]
    assert len(run.frame) == 9
    assert run.restarts == [1, 2]
    assert list(run.eval_frame.series("reward/score")) == [0.4]
    assert run.eval_frame.has("eval_custom")


def test_an_evaluation_reward_stands_for_a_missing_training_reward():
    # a loop that logs only eval_reward every N steps (real23's CarRacing PPO, real5's GI-tract
    # SB3 runs): the reward rules judge what its author measures
    raw = RawRun(series=[series("policy_loss", [0.1, 0.2, 0.3])], eval_series=[series("eval_reward", [-89.0, 20.0, 150.0]), series("eval_len", [1.0, 2.0, 3.0])])
    run = build_run("e", "/x", "csv", [], raw)
    assert list(run.frame.series("reward/score")) == [-89.0, 20.0, 150.0]
    assert run.metric_info["reward/score"].raw_tag == "eval_reward" and "evaluation reward stands for it" in run.metric_info["reward/score"].note
    assert not run.eval_frame.has("reward/score") and run.eval_frame.has("eval_len")
    # a training reward beside it keeps the evaluation in the eval frame
    trained = build_run("t", "/x", "csv", [], RawRun(series=[series("reward", [1.0, 2.0, 3.0])], eval_series=[series("eval_reward", [4.0])]))
    assert list(trained.frame.series("reward/score")) == [1.0, 2.0, 3.0] and list(trained.eval_frame.series("reward/score")) == [4.0]


def test_build_run_on_empty_input():
    run = build_run("e", "/x", "jsonl", [], RawRun())
    assert len(run.frame) == 0 and run.framework == "unknown" and run.mapping == {} and run.eval_frame is None


def test_build_run_million_points_is_fast():
    steps = np.arange(20_000)
    tags = ["train/objective/kl", "train/objective/scores", "train/loss/value_avg"] + [f"train/c{i}" for i in range(47)]
    raw = RawRun(series=[RawSeries(t, steps, np.random.default_rng(0).random(20_000), steps * 1.0, "f") for t in tags], config={"kl_coef": 0.05})
    build_run("w", "p", "tensorboard", ["f"], raw)  # warm the allocator
    best = min(_timed(lambda: build_run("r", "p", "tensorboard", ["f"], raw)) for _ in range(3))
    run = build_run("r", "p", "tensorboard", ["f"], raw)
    assert len(run.frame) == 1_000_000
    assert best < 0.5, f"build_run took {best:.3f}s on 1M points"  # ~0.05 s on an idle machine


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


# -- hyper-parameters ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "framework, config, expected",
    [
        (
            "trl_legacy",
            {"learning_rate": 1.41e-5, "init_kl_coef": 0.2, "adap_kl_ctrl": True, "target": 6, "ppo_epochs": 4, "batch_size": 256,
             "mini_batch_size": 64, "cliprange": 0.2, "cliprange_value": 0.2, "vf_coef": 0.1, "gamma": 1, "lam": 0.95,
             "whiten_rewards": False, "target_kl": 1, "max_grad_norm": None, "kl_penalty": "kl", "model_name": "gpt2-sft"},
            {"lr": 1.41e-5, "kl_coef": 0.2, "adaptive_kl": True, "target_kl": 6.0, "early_stop_kl": 1.0, "ppo_epochs": 4,
             "batch_size": 256, "mini_batch_size": 64, "num_mini_batches": 4, "cliprange": 0.2, "cliprange_value": 0.2,
             "vf_coef": 0.1, "gamma": 1.0, "lam": 0.95, "whiten_rewards": False, "max_grad_norm": None, "kl_estimator": "k1",
             "init_from": "gpt2-sft"},
        ),
        (
            "trl",
            {"learning_rate": "3e-06", "kl_coef": "0.05", "num_ppo_epochs": "4", "num_mini_batches": "1", "kl_estimator": "k3",
             "sft_model_path": "EleutherAI/pythia-1b-sft", "response_length": "53", "temperature": "0.7", "missing_eos_penalty": "1.0"},
            {"lr": 3e-6, "kl_coef": 0.05, "ppo_epochs": 4, "num_mini_batches": 1, "kl_estimator": "k3",
             "init_from": "EleutherAI/pythia-1b-sft", "max_new_tokens": 53, "temperature": 0.7},
        ),
        (
            "trl_grpo",
            {"learning_rate": 1e-6, "beta": 0.04, "num_generations": 8, "max_completion_length": 256, "num_iterations": 1, "top_p": 0.95},
            {"lr": 1e-6, "kl_coef": 0.04, "num_generations": 8, "max_new_tokens": 256, "ppo_epochs": 1, "top_p": 0.95},
        ),
        (
            "openrlhf",
            {"actor_learning_rate": 5e-7, "critic_learning_rate": 9e-6, "init_kl_coef": 0.01, "kl_target": None, "max_epochs": 1,
             "rollout_batch_size": 1024, "train_batch_size": 128, "eps_clip": 0.2, "value_clip": 0.2, "lambd": 0.95, "gamma": 1,
             "normalize_reward": True, "reward_clip_range": [-10, 10], "pretrain": "OpenRLHF/Llama-3-8b-sft", "top_p": 1.0,
             "temperature": 1.0, "generate_max_len": 1024, "max_norm": 1.0, "max_grad_norm": 1.0, "n_samples_per_prompt": 1},
            {"lr": 5e-7, "value_lr": 9e-6, "kl_coef": 0.01, "target_kl": None, "adaptive_kl": False, "ppo_epochs": 1,
             "batch_size": 1024, "mini_batch_size": 128, "num_mini_batches": 8, "cliprange": 0.2, "cliprange_value": 0.2,
             "lam": 0.95, "gamma": 1.0, "whiten_rewards": True, "reward_clip": 10.0, "init_from": "OpenRLHF/Llama-3-8b-sft",
             "top_p": 1.0, "temperature": 1.0, "max_new_tokens": 1024, "max_grad_norm": 1.0, "num_generations": 1},
        ),
        (
            "verl",
            {"actor_rollout_ref": {"actor": {"optim": {"lr": 1e-6}, "use_kl_loss": True, "kl_loss_coef": 0.001, "kl_loss_type": "low_var_kl",
                                             "ppo_epochs": 1, "ppo_mini_batch_size": 64, "clip_ratio": 0.2, "grad_clip": 1.0},
                                   "rollout": {"temperature": 1.0, "top_k": -1, "top_p": 1, "n": 5,
                                               "val_kwargs": {"top_k": 50, "do_sample": False}},
                                   "model": {"path": "Qwen/Qwen2.5-7B-Instruct"}},
             "critic": {"optim": {"lr": 1e-5}, "grad_clip": 5.0, "model": {"path": "other"}},
             "algorithm": {"gamma": 1.0, "lam": 0.95, "kl_ctrl": {"type": "fixed", "kl_coef": 0.5}, "kl_penalty": "kl"},
             "data": {"train_batch_size": 256, "max_response_length": 1024}},
            {"lr": 1e-6, "value_lr": 1e-5, "kl_coef": 0.001, "kl_estimator": "k3", "kl_loss_estimator": "k3", "ppo_epochs": 1,
             "mini_batch_size": 64, "batch_size": 256, "num_mini_batches": 4, "cliprange": 0.2, "max_grad_norm": 1.0,
             "temperature": 1.0, "top_k": 0, "top_p": 1.0, "num_generations": 5, "init_from": "Qwen/Qwen2.5-7B-Instruct",
             "gamma": 1.0, "lam": 0.95, "adaptive_kl": False, "max_new_tokens": 1024},
        ),
        (
            "trlx",
            {"method": {"name": "PPOConfig", "init_kl_coef": 0.05, "target": 6, "ppo_epochs": 4, "cliprange": 0.2, "cliprange_value": 0.2,
                        "vf_coef": 1, "gamma": 1, "lam": 0.95, "cliprange_reward": 10, "scale_reward": "running",
                        "gen_kwargs": {"max_new_tokens": 40, "top_k": 0, "top_p": 1.0, "do_sample": True}},
             "optimizer": {"kwargs": {"lr": 1e-5}}, "model": {"model_path": "lvwerra/gpt2-imdb"}},
            {"kl_coef": 0.05, "target_kl": 6.0, "adaptive_kl": True, "ppo_epochs": 4, "cliprange": 0.2, "cliprange_value": 0.2,
             "vf_coef": 1.0, "gamma": 1.0, "lam": 0.95, "reward_clip": 10.0, "max_new_tokens": 40, "top_k": 0, "top_p": 1.0,
             "do_sample": True, "lr": 1e-5, "init_from": "lvwerra/gpt2-imdb"},
        ),
        (
            "cleanrl",
            {"hyperparameters": "|param|value|\n|-|-|\n|learning_rate|0.00025|\n|update_epochs|4|\n|num_minibatches|4|\n"
                                "|clip_coef|0.1|\n|ent_coef|0.01|\n|vf_coef|0.5|\n|max_grad_norm|0.5|\n|gae_lambda|0.95|\n"
                                "|gamma|0.99|\n|target_kl|None|\n|anneal_lr|True|"},
            {"lr": 0.00025, "ppo_epochs": 4, "num_mini_batches": 4, "cliprange": 0.1, "entropy_coef": 0.01, "vf_coef": 0.5,
             "max_grad_norm": 0.5, "lam": 0.95, "gamma": 0.99, "early_stop_kl": None},
        ),
        (
            "sb3",
            {"learning_rate": 0.0003, "n_steps": 2048, "batch_size": 64, "n_epochs": 10, "gamma": 0.99, "gae_lambda": 0.95,
             "clip_range": 0.2, "ent_coef": 0.0, "vf_coef": 0.5, "max_grad_norm": 0.5, "target_kl": None},
            {"lr": 0.0003, "batch_size": 2048, "mini_batch_size": 64, "num_mini_batches": 32, "ppo_epochs": 10, "gamma": 0.99,
             "lam": 0.95, "cliprange": 0.2, "entropy_coef": 0.0, "vf_coef": 0.5, "max_grad_norm": 0.5, "early_stop_kl": None},
        ),
    ],
)
def test_hparams_normalised_from_each_framework(framework, config, expected):
    got = normalize_config(flatten_config(config), framework)
    assert got == expected


def test_generation_kwargs_nested_and_as_strings():
    cfg = {"generation_kwargs": {"min_length": -1, "top_k": 0.0, "top_p": 1.0, "do_sample": True, "max_new_tokens": 32}}
    assert normalize_config(flatten_config(cfg), "trl_legacy") == {
        "min_length": -1, "top_k": 0, "top_p": 1.0, "do_sample": True, "max_new_tokens": 32
    }
    # HF TensorBoard "args" text and printed Python dicts
    as_json = {"args": json.dumps({"learning_rate": 1e-5, "kl_coef": 0.05})}
    assert normalize_config(flatten_config(as_json), "trl") == {"lr": 1e-5, "kl_coef": 0.05}
    as_repr = {"gen": "{'top_k': 50, 'min_new_tokens': 8, 'do_sample': True}"}
    assert normalize_config(flatten_config(as_repr), "trl") == {"top_k": 50, "min_new_tokens": 8, "do_sample": True}


def test_model_config_generation_defaults_are_not_rollout_settings():
    cfg = {"learning_rate": 5e-5, "model_config": {"top_k": 50, "do_sample": False, "task_specific_params": {"text-generation": {"do_sample": True}}}}
    assert normalize_config(flatten_config(cfg), "unknown") == {"lr": 5e-5}


def test_mlflow_string_params_and_wandb_config_yaml():
    mlflow = {"learning_rate": "1e-05", "whiten_rewards": "False", "max_grad_norm": "None", "ppo_epochs": "4", "top_p": "0.9"}
    assert normalize_config(flatten_config(mlflow), "trl_legacy") == {
        "lr": 1e-5, "whiten_rewards": False, "max_grad_norm": None, "ppo_epochs": 4, "top_p": 0.9
    }
    text = "wandb_version: 1\n_wandb:\n  desc: null\n  value: {cli_version: 0.15.5}\nlearning_rate:\n  desc: null\n  value: 1e-5\n"
    cfg = yaml.safe_load(text)
    flat = flatten_config(cfg)
    assert flat == {"learning_rate": "1e-5"}  # YAML 1.1 reads 1e-5 as a string; parsing handles it
    assert normalize_config(flat) == {"lr": 1e-5}


@pytest.mark.parametrize("text, value", [("1e-05", 1e-5), ("True", True), ("none", None), ("7", 7), ("(-10, 10)", [-10, 10]), ("abc", "abc")])
def test_parse_scalar(text, value):
    assert parse_scalar(text) == value


def test_hostile_config_is_bounded_and_never_raises():
    deep: dict = {}
    cur = deep
    for _ in range(200):
        cur["a"] = {}
        cur = cur["a"]
    notes: list[str] = []
    flat = flatten_config({"deep": deep, "wide": {str(i): i for i in range(30_000)}, "obj": object()}, notes)
    assert len(flat) <= 20_000 and any("deeper" in n for n in notes) and any("more than" in n for n in notes)
    hostile = {"a": "{" * 5000, "b": "[" * 5000 + "]" * 5000, "c": "{'x': " * 3000, "kl_coef": 10**400, "top_p": [[1.0]]}
    assert normalize_config(flatten_config(hostile), "trl") == {}
    run = build_run("h", "/h", "x", [], RawRun(config={"deep": deep, "lr": "[[[[", "top_k": {"weird": []}}))
    assert run.config == {}
    assert any("deeper" in w for w in run.warnings)


@settings(max_examples=60, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers() | st.text(max_size=20),
        lambda children: st.lists(children, max_size=3) | st.dictionaries(st.sampled_from(["lr", "top_k", "kl_coef", "actor", "critic", "method", "x"]), children, max_size=4),
        max_leaves=20,
    )
)
def test_normalisation_never_raises_on_arbitrary_configs(cfg):
    for fw in ("trl", "verl", "sb3", "unknown"):
        out = normalize_config(flatten_config({"c": cfg}), fw)
        assert isinstance(out, dict)


# -- the real corpus --------------------------------------------------------------------------
def _csv_columns(path: Path) -> list[str]:
    return [c for c in pd.read_csv(path, nrows=1).columns if not c.startswith("_")]


def _verl_console(path: Path) -> tuple[list[str], dict]:
    text = re.sub(r"\x1b\[[0-9;]*m", "", path.read_text(errors="replace"))
    lines = [line.split(") ", 1)[1] if line.startswith("(") and ") " in line else line for line in text.splitlines()]
    step = next(line for line in lines if line.startswith("step:"))
    keys = [p.split(":", 1)[0].strip() for p in step.split(" - ")[1:]]
    start = next(i for i, line in enumerate(lines) if line.startswith("{'actor_rollout_ref'"))
    block, depth = [], 0
    for line in lines[start:]:
        block.append(line)
        depth += line.count("{") - line.count("}")
        if depth == 0:
            break
    return keys, {"printed": "\n".join(block)}


@pytest.mark.corpus
def test_corpus_sb3_progress_csv(corpus_dir):
    for rel in ("sb3-racer-ppo/logs/progress.csv", "sb3-jobshop-ppo/logs/progress.csv", "sb3-chess-ppo-reddyn12/logs/progress.csv",
                "sb3-flappybird-ppo/logs/PPO_MLP_std_2Mio/progress.csv"):
        fw, res = mapped(_csv_columns(corpus_dir / rel))
        assert fw == "sb3", rel
        assert res.mapping["rollout/ep_rew_mean"] == "reward/score"
        assert res.info["loss/entropy"].sign == -1
        assert res.info["kl/old"].estimator == "k3"
        assert "time/fps" not in res.mapping


@pytest.mark.corpus
def test_corpus_verl_console(corpus_dir):
    keys, config = _verl_console(corpus_dir / "verl-ppo-gsm8k-dstack" / "verl_demo.log")
    flat = flatten_config(config)
    fw = guess_framework(keys, flat)
    assert fw == "verl"
    cfg = normalize_config(flat, fw)
    # use_kl_loss False and use_kl_in_reward False: no KL term at all
    assert cfg["kl_coef"] == 0.0 and cfg["lr"] == 1e-6 and cfg["value_lr"] == 1e-5
    assert cfg["top_k"] == 0 and cfg["do_sample"] is True and cfg["lam"] == 1.0
    res = map_tags(keys, fw, cfg)
    assert res.mapping["critic/score/mean"] == "reward/score"
    assert res.mapping["actor/ppo_kl"] == "kl/old" and res.info["kl/old"].estimator == "k1"
    assert res.mapping["actor/entropy_loss"] == "policy/entropy"
    assert res.mapping["critic/vf_explained_var"] == "value/explained_var"
    assert not any(k.startswith("timing_s/") for k in res.mapping)


@pytest.mark.corpus
def test_corpus_trl_grpo_trainer_states(corpus_dir):
    state = json.loads((corpus_dir / "trl-grpo-chaos-economy/commit_7138430/trainer_state.json").read_text())
    tags = sorted({k for row in state["log_history"] for k in row} - {"step"})
    fw, res = mapped(tags)
    assert fw == "trl_grpo"
    assert res.mapping["kl"] == "kl/ref" and res.info["kl/ref"].estimator == "k3" and res.info["kl/ref"].reduction == "token_mean"
    assert res.mapping["reward"] == "reward/score" and res.mapping["frac_reward_zero_std"] == "reward/zero_std_frac"
    assert res.mapping["completions/mean_length"] == "len/response_mean" and "completion_length" not in res.mapping
    rows = json.loads((corpus_dir / "trl-grpo-rho-sweep-qwen35/results/qwen35/sweep_coarse/rho1.00_seed42/step_logs.json").read_text())
    fw, res = mapped(sorted({k for row in rows for k in row} - {"step"}))
    assert fw == "trl_grpo" and "kl/ref" not in res.info and res.mapping["entropy"] == "policy/entropy"


@pytest.mark.corpus
def test_corpus_tinker_and_prime_rl_are_other(corpus_dir):
    base = corpus_dir / "tinker-dakota-qwen3/dakota_rl_training/outputs/tinker_qwen30b"
    rows = [json.loads(line) for line in (base / "metrics.jsonl").read_text().splitlines() if line.strip()]
    tags = sorted({k for r in rows for k in r if not k.startswith("test/")} - {"step"})
    fw, res = mapped(tags, json.loads((base / "config.json").read_text()))
    assert fw == "other"
    assert res.mapping["env/all/reward/total"] == "reward/score"
    assert not any("kl_sample_train" in t for t in res.mapping)  # sampler/trainer mismatch, not a policy KL
    cfg = normalize_config(flatten_config(json.loads((base / "config.json").read_text())), fw)
    assert cfg["kl_coef"] == 0.0 and cfg["lr"] == 4e-5 and cfg["num_generations"] == 16
    trainer = corpus_dir / "primerl-dakota-qwen3-0.6b/wandb_analysis/7nikv4vp"
    fw, res = mapped(_csv_columns(trainer / "7nikv4vp_history.csv"), json.loads((trainer / "7nikv4vp_config.json").read_text()))
    assert fw == "other" and res.mapping["optim/grad_norm"] == "grad/norm"
    assert not any("mismatch_kl" in t for t in res.mapping)
    fw, res = mapped(_csv_columns(corpus_dir / "primerl-dakota-qwen3-0.6b/wandb_analysis/29hn8w98/29hn8w98_history.csv"))
    assert fw == "other" and res.mapping["reward/mean"] == "reward/score"


@pytest.mark.corpus
def test_corpus_control_sft_runs_map_no_rl_metric(corpus_dir):
    state = json.loads((corpus_dir / "control-hf-trainer-tb-layout/trainer_state.json").read_text())
    hf_tags = sorted({k for row in state["log_history"] for k in row} - {"step"})
    prov = (corpus_dir / "control-colossalai-coati-sft-wandb-offline/PROVENANCE.md").read_text()
    coati = [k.strip() for k in re.search(r"keys `([^`]+)`", prov).group(1).split(",") if not k.strip().startswith("_")]
    for tags in (hf_tags, ["train/" + t for t in hf_tags], coati):
        fw, res = mapped(tags)
        assert fw == "unknown"
        assert set(res.mapping.values()) <= {"loss/total", "opt/lr", "grad/norm", "progress/epoch"}
        assert "loss/total" in res.mapping.values() and "opt/lr" in res.mapping.values()


@pytest.mark.corpus
def test_corpus_trl_kl_sweep_custom_json(corpus_dir):
    data = json.loads((corpus_dir / "trl-ppo-gpt2-kl-sweep/results/stability_sweep/beta0.05_seed42/ppo_metrics.json").read_text())
    arrays = {k: v for k, v in data.items() if isinstance(v, list)}
    scalars = {k: v for k, v in data.items() if not isinstance(v, list)}
    run = run_of(arrays, scalars)
    assert run.framework == "trl"
    assert run.mapping == {"rewards_curve": "reward/score", "kl_curve": "kl/ref"}
    info = run.metric_info["kl/ref"]
    assert (info.estimator, info.reduction, info.between) == ("k1", "seq_sum", "ref")
    assert run.config["kl_coef"] == 0.05
    assert len(run.series("kl/ref")) == 200


@pytest.mark.corpus
def test_corpus_custom_and_classic_rl_loggers(corpus_dir):
    first = json.loads((corpus_dir / "rlhfkit-toy-ppo-gpt2/runs/run_20250828_211717/logs/train.jsonl").read_text().splitlines()[0])
    fw, res = mapped([k for k in first if k not in ("step", "timestamp")])
    assert fw == "unknown" and res.mapping["kl_mean"] == "kl/ref" and res.mapping["reward_mean"] == "reward/score"
    gail = _csv_columns(corpus_dir / "gail-ppo-cartpole-tf2/sample_result/ppo/progress.csv")
    fw, res = mapped(gail)
    assert fw == "unknown" and res.mapping["kl"] == "kl/old"  # baselines ppo1: old-vs-new KL
    assert res.mapping["mean 100 episode reward"] == "reward/score"
    tf1 = _csv_columns(corpus_dir / "tf1-a2c-minigrid-stagnant/log/progress.csv")
    fw, res = mapped(tf1 + ["policy_loss", "entropy"])
    assert fw == "unknown" and res.mapping["episode_reward"] == "reward/score" and res.mapping["value_loss"] == "loss/value"


def test_a_synonym_with_many_times_the_points_takes_the_name():
    """baselines A2C: progress.csv's ``policy_entropy`` (2 rows left after a restart) and the
    TensorBoard file's ``entropy`` (121 points) mean the same; the table prefers the first."""
    steps = np.arange(121) * 80
    raw = RawRun(
        series=[
            series("episode_reward", np.zeros(121), steps),
            series("entropy", np.full(121, np.log(7)), steps),
            series("policy_entropy", np.full(2, np.log(7)), steps[:2]),
        ]
    )
    run = build_run("r", "/tmp/r", "test", ["/tmp/r/f"], raw)
    assert run.mapping["entropy"] == "policy/entropy" and "policy_entropy" in run.unmapped
    assert len(run.series("policy/entropy")) == 121
    assert any("'entropy' (121 points) read as 'policy/entropy'" in i.message for i in run.issues)
    # the same points: the table's order decides as before
    assert map_tags(["entropy", "policy_entropy"], "unknown_rl", counts={"entropy": 5, "policy_entropy": 5}).mapping == {"policy_entropy": "policy/entropy"}


def test_a_synonym_that_moves_replaces_one_that_holds_one_value():
    """ML-Agents' MA-POCA writes the agents' own ``Environment/Cumulative Reward`` as 0 on every
    summary when the environment pays only group rewards: the group's return is the reward read.
    Where the agents' own reward moves (a self-play POCA run, whose two teams' group rewards
    cancel), it stays the reward."""
    steps = np.arange(1, 61) * 10_000
    group = np.linspace(-20.0, 30.0, 60)
    tags = {"Policy/Entropy": np.full(60, 1.4), "Losses/Value Loss": np.linspace(1.0, 0.1, 60), "Environment/Episode Length": np.full(60, 500.0)}

    def run_of(own: np.ndarray):
        raw = RawRun(series=[series(t, v, steps) for t, v in {**tags, "Environment/Cumulative Reward": own, "Environment/Group Cumulative Reward": group}.items()])
        return build_run("r", "/tmp/r", "tensorboard", ["/tmp/r/f"], raw)

    placeholder = run_of(np.zeros(60))
    assert placeholder.mapping["Environment/Group Cumulative Reward"] == "reward/score"
    assert "Environment/Cumulative Reward" in placeholder.unmapped
    assert any("'Environment/Cumulative Reward' holds one value on every point" in i.message for i in placeholder.issues)
    moving = run_of(np.linspace(-0.3, 0.3, 60))
    assert moving.mapping["Environment/Cumulative Reward"] == "reward/score"
    assert "Environment/Group Cumulative Reward" in moving.unmapped


def test_the_least_qualified_reward_name_is_the_total_not_a_component():
    # garage logs a grasp component before the return (blind set real50); a GRPO loop its answer
    # and format rewards beside their sum: the name with no word for a part is the total
    garage = ["Evaluation/EpisodeMeanGraspReward", "Evaluation/AverageDiscountedReturn", "Evaluation/AverageReturn"]
    assert {c: t for t, c in map_tags(garage, "unknown").mapping.items()}["reward/score"] == "Evaluation/AverageReturn"
    loop = ["mean_answer_reward", "mean_format_reward", "mean_reward"]
    assert {c: t for t, c in map_tags(loop, "unknown").mapping.items()}["reward/score"] == "mean_reward"
    # a namespace qualifies nothing: the first of two equal names keeps the reward (RLlib)
    rllib = ["ray/tune/episode_reward_mean", "episode_reward_mean"]
    assert {c: t for t, c in map_tags(rllib, "unknown").mapping.items()}["reward/score"] == "ray/tune/episode_reward_mean"
