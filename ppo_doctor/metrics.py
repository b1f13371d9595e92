"""Canonical metric vocabulary, per-framework alias tables and :func:`build_run`.

Every framework names the same quantity differently (TRL ``objective/kl``, OpenRLHF
``train/kl``, veRL ``actor/kl_loss``, trlx ``policy/sqrt_kl`` ...) and, worse, means
different things by it: a KL may be the k1 estimator (can be < 0) or k3 (>= 0), summed
over the response or averaged per token, a square root (trlx), or logged negated (SB3's
``train/entropy_loss``).  This module

* guesses the framework from the tag names and the config (:func:`guess_framework`);
* maps raw tags onto the canonical names of ``reference/formats.md`` §0 with one ordered
  alias table per framework (:data:`ALIASES`): at most one raw tag per canonical metric,
  the first present in table order wins, user aliases override, anything else keeps its
  raw name;
* records per canonical metric what the number means (:class:`~ppo_doctor.run.MetricInfo`),
  so rules judge a value in the units it was logged in; the data itself is never
  rescaled, squared or negated;
* builds the :class:`~ppo_doctor.run.Run` (:func:`build_run`, called by the ingest
  orchestrator) with the normalised hyper-parameters of :mod:`ppo_doctor.hparams`.

``python -m ppo_doctor.metrics > docs/metrics.md`` regenerates the reference page from
these tables.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass, replace
from typing import Any, Iterable

import numpy as np

from .design import by_design
from .frame import RawRun, RawSeries, ReadIssue, RunFrame
from .hparams import HPARAMS, flatten_config, normalize_config
from .name_tokens import entropy_sign, infer_canonical
from .run import MetricInfo, Run

log = logging.getLogger(__name__)

# -- vocabulary (DESIGN.md "Canonical metrics", formats.md §0) ---------------------------------
CANONICAL: dict[str, str] = {
    "reward/score": "raw reward-model / reward-function score, no KL term",
    "reward/total": "score plus KL penalty (the shaped RLHF reward being optimised)",
    "reward/kl_penalty": "non-score reward = -beta*KL (usually <= 0)",
    "reward/std": "std of the score across the batch",
    "reward/zero_std_frac": "fraction of prompt groups whose rewards are all equal (no GRPO signal)",
    "reward/fn/*/mean": "mean of one reward function (one per function: TRL ``rewards/<fn>/mean``)",
    "reward/fn/*/std": "std of one reward function across the batch",
    "reward/score_margin": "score of the chosen minus the rejected completion (online DPO)",
    "kl/ref": "KL of the policy from the reference (SFT) policy; see estimator and reduction",
    "kl/coef": "KL coefficient beta in use (fixed or adaptive)",
    "kl/old": "approx KL between the rollout policy and the updated policy (trust region)",
    "policy/entropy": "policy entropy (token mean unless noted)",
    "policy/clipfrac": "fraction of tokens/samples where the PPO ratio clip is active",
    "policy/clipfrac_low": "fraction of tokens clipped at 1 - epsilon_low (negative advantage)",
    "policy/clipfrac_high": "fraction of tokens clipped at 1 + epsilon_high (positive advantage)",
    "policy/clipfrac_low_min": "smallest per-sequence low-clip fraction in the batch",
    "policy/clipfrac_high_max": "largest per-sequence high-clip fraction in the batch",
    "policy/entropy_coef": "entropy-bonus coefficient in use (fixed or adaptive)",
    "policy/ratio_mean": "mean importance ratio pi/pi_old",
    "policy/ratio_var": "variance of the importance ratio",
    "loss/policy": "policy-gradient (clipped surrogate) loss",
    "loss/value": "value-function loss",
    "loss/total": "total optimised loss",
    "loss/entropy": "entropy loss term (sign: see MetricInfo.sign)",
    "loss/aux": "auxiliary loss (mixture-of-experts router load balancing)",
    "value/clipfrac": "fraction of value predictions clipped",
    "value/explained_var": "explained variance of the returns by the critic (1 = perfect, < 0 = worse than the mean)",
    "value/mean": "mean value prediction",
    "value/error": "mean squared value error",
    "adv/mean": "mean advantage (about 0 when whitened)",
    "adv/std": "advantage standard deviation",
    "return/mean": "mean return (value target)",
    "grad/norm": "policy gradient norm (pre-clip unless noted)",
    "grad/norm_critic": "critic gradient norm",
    "opt/lr": "policy learning rate",
    "opt/lr_critic": "critic learning rate",
    "len/response_mean": "mean generated response length (tokens)",
    "len/response_max": "longest generated response in the batch (tokens)",
    "len/response_min": "shortest generated response in the batch (tokens)",
    "len/terminated_mean": "mean length of the responses that ended with EOS (not truncated)",
    "len/terminated_min": "shortest response that ended with EOS",
    "len/terminated_max": "longest response that ended with EOS",
    "len/eos_frac": "fraction of responses that contain an EOS token",
    "len/response_clip_ratio": "fraction of responses that hit the length cap",
    "progress/epoch": "data epoch (bookkeeping)",
    "progress/episode": "cumulative samples/episodes (bookkeeping)",
    "progress/step": "trainer step counter logged as a metric (bookkeeping)",
    "progress/tokens_seen": "input tokens seen so far, cumulative (bookkeeping)",
    "progress/gen_batches": "generation batches drawn to fill one training batch (DAPO dynamic sampling: grows as all-equal-reward groups are filtered out)",
    "progress/step_time": "seconds per training step (bookkeeping)",
    "mismatch/kl": "KL between the inference engine's and the trainer's token distributions (off-policy mismatch), not the ref-KL",
    "mismatch/logp_diff_mean": "mean |logp| difference between the inference engine (vLLM) and the trainer at the same weights: numerical mismatch, not a KL",
    "mismatch/logp_diff_max": "largest such difference",
    "mismatch/is_ratio_mean": "mean truncated importance-sampling ratio trainer/inference engine",
    "mismatch/is_ratio_min": "smallest such ratio",
    "mismatch/is_ratio_max": "largest such ratio",
    "dpo/chosen": "implicit DPO reward of the chosen completion, beta * (logp - ref_logp) summed",
    "dpo/rejected": "implicit DPO reward of the rejected completion",
    "dpo/margin": "implicit reward margin chosen - rejected",
    "dpo/accuracy": "fraction of pairs whose implicit reward prefers the chosen completion",
    "dpo/logp_chosen": "sequence log-probability of the chosen completion",
    "dpo/logp_rejected": "sequence log-probability of the rejected completion",
    "tools/call_frac": "tool calls per completion (agentic GRPO)",
    "tools/failure_frac": "fraction of tool calls that failed",
}

# Keys the HF Trainer logs once, on its last row (transformers ``speed_metrics`` and
# ``train_loss``): run totals, not series.  A tag of this name with at most one point is moved
# into the run's config (formats.md §1e); one logged every step stays a series.
FINAL_TOTALS = ("train_runtime", "train_samples_per_second", "train_steps_per_second", "total_flos", "train_loss", "train_tokens_per_second")

# Estimators whose value cannot be negative (formats.md §8): a negative value from one of them
# is not "negative KL" from generation settings but a bug or a misread log.
NONNEGATIVE_ESTIMATORS = frozenset({"k2", "k3", "sqrt_k3", "full", "abs"})

FRAMEWORKS: dict[str, str] = {
    "trl_legacy": "TRL PPOTrainer <= 0.11 (log_stats: ppo/*, env/*, objective/*)",
    "trl": "TRL PPOv2 / new PPOTrainer 0.9-1.12 (objective/*, policy/*_avg, loss/*_avg, val/*)",
    "trl_rloo": "TRL RLOOTrainer (<= 0.21 like PPOv2 without a critic; >= 0.22 GRPO-style, k1 kl)",
    "trl_grpo": "TRL GRPOTrainer (reward, reward_std, kl (k3), completions/*, clip_ratio/*)",
    "trl_async_grpo": "TRL AsyncGRPOTrainer (experimental): GRPO names, but kl is to the rollout policy; perf/*, sample/*",
    "trl_online_dpo": "TRL OnlineDPOTrainer (objective/* like PPOv2, rewards/{chosen,rejected,margins,accuracies})",
    "openrlhf": "OpenRLHF PPO/GRPO (train/<key>, console short names)",
    "verl": "veRL (actor/*, critic/*, response_length/*, timing_s/*)",
    "trlx": "CarperAI trlx PPO (losses/*, policy/sqrt_kl, kl_ctl_value)",
    "deepspeed_chat": "DeepSpeed-Chat step 3 (reward, actor_loss, critic_loss)",
    "cleanrl": "CleanRL ppo*.py (charts/*, losses/*)",
    "sb3": "Stable-Baselines3 PPO (rollout/*, train/*, time/*)",
    "sb2": "Stable-Baselines 2 (TensorFlow) PPO2 (loss/*, input_info/*, episode_reward)",
    "other": "other LLM RL loops with known names: Tinker cookbook, prime-rl",
    "unknown": "anything else: generic names (reward_mean, kl, policy_loss, ...)",
}
FRAMEWORK_ORDER = tuple(FRAMEWORKS)


@dataclass(frozen=True)
class Alias:
    """One raw tag (without the ``train/`` prefix the HF/OpenRLHF loggers add) -> canonical.

    ``estimator_hparam`` names the canonical hyper-parameter whose value overrides the
    default ``estimator`` (e.g. TRL's ``kl_estimator``, veRL's ``kl_loss_type``).
    """

    raw: str
    canonical: str
    estimator: str | None = None
    reduction: str | None = None
    sign: int = 1
    between: str | None = None
    note: str = ""
    estimator_hparam: str | None = None


def _a(raw: str, canonical: str, **kw: Any) -> Alias:
    return Alias(raw, canonical, **kw)


_TOK = "token_mean"
_SEQ = "seq_sum"

# Per-framework tables, in priority order (formats.md §1-§8). Within a table the first
# present raw tag for a canonical name wins; the others stay unmapped under their raw names.
_TRL_LEGACY = (
    _a("env/reward_mean", "reward/score", note="mean of the rewards passed to log_stats"),
    _a("ppo/mean_scores", "reward/score", note="mean of the scores passed to step()"),
    _a("env/reward_std", "reward/std"),
    _a("ppo/std_scores", "reward/std"),
    _a("ppo/mean_non_score_reward", "reward/kl_penalty", reduction=_TOK, note="-beta*KL per token; <= 0 when KL > 0"),
    _a(
        "objective/kl",
        "kl/ref",
        estimator="k1",
        reduction=_SEQ,
        between="ref",
        estimator_hparam="kl_estimator",
        note="sum over response tokens of the kl_penalty estimator (default k1: can be < 0)",
    ),
    _a("objective/kl_coef", "kl/coef", note="adaptive controller default: init 0.2, target 6"),
    _a("ppo/policy/entropy", "policy/entropy", reduction=_TOK, note="full-distribution entropy from logits"),
    _a("objective/entropy", "policy/entropy", reduction=_SEQ, note="seq-sum of -logp of sampled tokens: a length-dependent proxy"),
    _a("ppo/policy/approxkl", "kl/old", estimator="k2", reduction=_TOK, between="old"),
    _a("ppo/policy/policykl", "kl/old", estimator="k1", reduction=_TOK, between="old"),
    _a("ppo/policy/clipfrac", "policy/clipfrac"),
    _a("ppo/policy/advantages_mean", "adv/mean", note="advantages are whitened: about 0"),
    _a("ppo/returns/mean", "return/mean"),
    _a("ppo/val/error", "value/error"),
    _a("ppo/val/clipfrac", "value/clipfrac"),
    _a("ppo/val/mean", "value/mean"),
    _a("ppo/val/vpred", "value/mean"),
    _a("ppo/val/var_explained", "value/explained_var", note="1 - error/var(returns); can be very negative"),
    _a("ppo/loss/policy", "loss/policy", note="exactly 0 on steps skipped by ratio_threshold"),
    _a("ppo/loss/value", "loss/value", note="unscaled 0.5*clipped MSE"),
    _a("ppo/loss/total", "loss/total"),
    _a("ppo/learning_rate", "opt/lr"),
    _a("tokens/responses_len_mean", "len/response_mean"),
)

# TRL PPOv2 / new PPOTrainer; the kl-sweep corpus run exports objective/scores and
# objective/kl as custom arrays ``rewards_curve``/``kl_curve`` (its train_ppo.py).
_TRL_PPO = (
    _a("objective/scores", "reward/score", note="RM score (after missing_eos_penalty)"),
    _a("rewards_curve", "reward/score", note="custom export of objective/scores"),
    _a("objective/rlhf_reward", "reward/total"),
    _a("objective/non_score_reward", "reward/kl_penalty", reduction=_SEQ, note="seq-sum of -beta*KL: negative when KL > 0"),
    _a(
        "objective/kl",
        "kl/ref",
        estimator="k1",
        reduction=_SEQ,
        between="ref",
        estimator_hparam="kl_estimator",
        note="sum over response tokens (k1 by default, can be < 0; kl_estimator k3 from 0.17)",
    ),
    _a(
        "kl_curve",
        "kl/ref",
        estimator="k1",
        reduction=_SEQ,
        between="ref",
        estimator_hparam="kl_estimator",
        note="custom export of objective/kl",
    ),
    _a("policy/entropy_avg", "policy/entropy", reduction=_TOK),
    _a("objective/entropy", "policy/entropy", reduction=_SEQ, note="seq-sum of -logp of sampled tokens: a length-dependent proxy"),
    _a("policy/approxkl_avg", "kl/old", estimator="k2", reduction=_TOK, between="old"),
    _a("policy/clipfrac_avg", "policy/clipfrac"),
    _a("loss/policy_avg", "loss/policy"),
    _a("loss/value_avg", "loss/value", note="0.5*clipped MSE, not scaled by vf_coef"),
    _a("val/clipfrac_avg", "value/clipfrac"),
    _a("val/ratio", "policy/ratio_mean", note="named val/ but it is the policy ratio"),
    _a("val/ratio_var", "policy/ratio_var"),
    # not logged by TRL's PPOTrainer itself (it bypasses the HF loop), but commonly added by users
    # and by the bundled reference loop; the meaning is unambiguous
    _a("objective/kl_coef", "kl/coef", note="beta used this step (fixed or adaptive)"),
    _a("grad_norm", "grad/norm", note="pre-clip global norm"),
    # TRL legacy statistics (formats.md §1a) that users and the reference loop keep logging
    # next to the PPOv2 names; each has one meaning, the same as in the legacy table
    _a("ppo/std_scores", "reward/std", note="std of the scores across the batch"),
    _a("ppo/returns/mean", "return/mean"),
    _a("ppo/val/mean", "value/mean"),
    _a("ppo/val/var_explained", "value/explained_var", note="1 - Var(returns - values)/Var(returns); can be very negative"),
    _a("val/explained_variance", "value/explained_var"),
    _a("tokens/responses_len_mean", "len/response_mean", note="response tokens per sample"),
    _a("lr", "opt/lr"),
    _a("learning_rate", "opt/lr"),
    _a("episode", "progress/episode"),
    _a("epoch", "progress/epoch"),
)

_HF_LOOP = (
    _a("loss", "loss/total"),
    _a("grad_norm", "grad/norm"),
    _a("learning_rate", "opt/lr"),
    _a("epoch", "progress/epoch"),
)


def _grpo_like(kl: Alias) -> tuple[Alias, ...]:
    """GRPOTrainer and RLOOTrainer >= 0.22 (TRL 1.16 grpo_trainer.py / rloo_trainer.py, ``self._metrics``)."""
    return (
        _a("reward", "reward/score", note="weighted sum of the reward functions (nan-mean over the batch), no KL term"),
        _a("reward_std", "reward/std", note="std of the summed reward over the whole batch, not per group"),
        _a("frac_reward_zero_std", "reward/zero_std_frac", note="groups whose rewards are all equal: zero advantage, no signal"),
        _a("rewards/*/mean", "reward/fn/*/mean", note="one reward function, before its weight; NaN rows (not applicable) excluded"),
        _a("rewards/*/std", "reward/fn/*/std"),
        kl,
        _a("entropy", "policy/entropy", reduction=_TOK, note="full-distribution entropy, masked token mean"),
        _a("clip_ratio/region_mean", "policy/clipfrac", reduction=_TOK, note="low or high clip active; token mean"),
        _a("clip_ratio", "policy/clipfrac", note="TRL 0.14-0.17 name"),
        _a("cispo_clip_ratio", "policy/clipfrac", reduction=_TOK, note="loss_type cispo: ratio above 1 + epsilon_high with A > 0"),
        _a("clip_ratio/low_mean", "policy/clipfrac_low", reduction=_TOK, note="ratio < 1 - epsilon_low with A < 0"),
        _a("clip_ratio/high_mean", "policy/clipfrac_high", reduction=_TOK, note="ratio > 1 + epsilon_high with A > 0"),
        _a("clip_ratio/low_min", "policy/clipfrac_low_min", note="min over sequences of the per-sequence low-clip fraction"),
        _a("clip_ratio/high_max", "policy/clipfrac_high_max", note="max over sequences of the per-sequence high-clip fraction"),
        _a("entropy_coef", "policy/entropy_coef", note="entropy bonus in use (adaptive when use_adaptive_entropy)"),
        _a("completions/mean_length", "len/response_mean", note="tokens per completion"),
        _a("completion_length", "len/response_mean", note="TRL <= 0.15 name"),
        _a("completions/min_length", "len/response_min"),
        _a("completions/max_length", "len/response_max"),
        _a("completions/clipped_ratio", "len/response_clip_ratio", note="completions cut at max_completion_length (no EOS)"),
        _a("completions/mean_terminated_length", "len/terminated_mean", note="0 when every completion was truncated"),
        _a("completions/min_terminated_length", "len/terminated_min"),
        _a("completions/max_terminated_length", "len/terminated_max"),
        _a("policy_loss", "loss/policy", note="surrogate loss before the entropy bonus"),
        _a("aux_loss", "loss/aux", note="MoE router loss (output_router_logits)"),
        _a("sampling/sampling_logp_difference/mean", "mismatch/logp_diff_mean", note="vLLM vs trainer |logp| difference (use_vllm)"),
        _a("sampling/sampling_logp_difference/max", "mismatch/logp_diff_max"),
        _a("sampling/importance_sampling_ratio/mean", "mismatch/is_ratio_mean", note="vllm_importance_sampling_correction weights"),
        _a("sampling/importance_sampling_ratio/min", "mismatch/is_ratio_min"),
        _a("sampling/importance_sampling_ratio/max", "mismatch/is_ratio_max"),
        _a("tools/call_frequency", "tools/call_frac"),
        _a("tools/failure_frequency", "tools/failure_frac"),
        _a("num_tokens", "progress/tokens_seen", note="state.num_input_tokens_seen (prompt + completion), cumulative"),
        _a("step_time", "progress/step_time", note="seconds per optimizer step"),
        _a("loss", "loss/total", note="the optimised loss incl. beta*KL when beta > 0, averaged over logging_steps"),
        _a("grad_norm", "grad/norm", note="global norm before clipping (max_grad_norm)"),
        *_HF_LOOP[2:],
    )


_TRL_GRPO = _grpo_like(
    _a("kl", "kl/ref", estimator="k3", reduction=_TOK, between="ref", note="k3 = exp(ref - logp) - (ref - logp) - 1, >= 0, masked token mean; logged only when beta != 0 (default 0)")
)
# RLOO <= 0.21 logs the PPOv2 names (KL k1 seq-sum); >= 0.22 the GRPO names with a k1 token-mean kl.
_TRL_RLOO = _TRL_PPO + _grpo_like(
    _a("kl", "kl/ref", estimator="k1", reduction=_TOK, between="ref", note="k1 = old_logp - ref_logp, token mean (RLOO >= 0.22): can be < 0; logged when beta != 0 (default 0.05)")
)

# TRL's experimental AsyncGRPOTrainer (trl/experimental/async_grpo/async_grpo_trainer.py) logs
# GRPO's names, but its ``kl`` is (ratio - 1) - log(ratio) with ratio = pi/pi_old: the k3 KL to
# the rollout policy (the trust region), not to the reference.
_TRL_ASYNC_GRPO = (
    _a("kl", "kl/old", estimator="k3", reduction=_TOK, between="old", note="k3 of pi vs the rollout policy pi_old, token mean"),
    _a("ratio", "policy/ratio_mean", reduction=_TOK, note="mean importance ratio pi/pi_old over tokens"),
    *_TRL_GRPO,
)

# TRL OnlineDPOTrainer (trl/experimental/online_dpo, ``self.stats``): PPOv2-style objective/*
# plus the DPO implicit rewards, which are beta-scaled log-ratios and not task rewards.
_TRL_ONLINE_DPO = (
    _a("objective/scores", "reward/score", note="reward function / reward model score of the completions"),
    _a("objective/scores_margin", "reward/score_margin", note="score(chosen) - score(rejected)"),
    _a("objective/rlhf_reward", "reward/total", note="score + non_score_reward"),
    _a("objective/non_score_reward", "reward/kl_penalty", reduction=_SEQ, note="-beta * seq-sum k1"),
    _a("objective/kl", "kl/ref", estimator="k1", reduction=_SEQ, between="ref", note="sum over tokens of logp - ref_logp, batch mean: can be < 0"),
    _a("objective/entropy", "policy/entropy", reduction=_SEQ, note="seq-sum of -logp of the sampled tokens: a length-dependent proxy"),
    _a("beta", "kl/coef", note="DPO beta in use (a schedule when beta is a list)"),
    _a("rewards/chosen", "dpo/chosen"),
    _a("rewards/rejected", "dpo/rejected"),
    _a("rewards/margins", "dpo/margin"),
    _a("rewards/accuracies", "dpo/accuracy"),
    _a("logps/chosen", "dpo/logp_chosen"),
    _a("logps/rejected", "dpo/logp_rejected"),
    _a("val/contain_eos_token", "len/eos_frac"),
    *_HF_LOOP,
)

_OPENRLHF = (
    _a("score", "reward/score", note="raw reward-model score (0.8+)"),
    _a("reward", "reward/score", note="reward used for the advantages (may be shaped)"),
    _a("rollout/reward_mean", "reward/score"),
    _a("rm", "reward/score", note="console short name (0.5)"),
    _a("rollout/reward_std", "reward/std"),
    _a("group_reward_std", "reward/std", note="mean within-group reward std (group_norm / dr_grpo advantages)"),
    _a("return", "reward/total", note="sum of token rewards incl. the KL penalty"),
    _a("ret", "reward/total", note="console short name (0.5)"),
    _a(
        "kl",
        "kl/ref",
        estimator="k1",
        reduction=_TOK,
        between="ref",
        estimator_hparam="kl_estimator",
        note="token mean of compute_approx_kl (k1 default; --kl_estimator / --use_kl_estimator_k3)",
    ),
    _a("ppo_kl", "kl/old", estimator="k1", reduction=_TOK, between="old"),
    _a("logprobs_diff", "mismatch/logp_diff_mean", note="vLLM vs trainer log-prob difference (experience_maker.py)"),
    _a("policy_loss", "loss/policy"),
    _a("act_loss", "loss/policy", note="console short name"),
    _a("pg", "loss/policy", note="console short name (0.5)"),
    _a("critic_loss", "loss/value"),
    _a("cri", "loss/value", note="console short name (0.5)"),
    _a("values", "value/mean"),
    _a("vals", "value/mean", note="console short name (0.5)"),
    _a("actor_lr", "opt/lr"),
    _a("act_lr", "opt/lr", note="console short name"),
    _a("actor_grad_norm", "grad/norm"),
    _a("grad_norm", "grad/norm"),
    _a("critic_grad_norm", "grad/norm_critic"),
    _a("critic_lr", "opt/lr_critic"),
    _a("ppo_clip_ratio", "policy/clipfrac"),
    _a("entropy_loss", "policy/entropy", reduction=_TOK, note="despite the name, the entropy value"),
    _a("ent_loss", "policy/entropy", reduction=_TOK, note="console short name"),
    _a("response_length", "len/response_mean"),
    _a("rollout/response_length_mean", "len/response_mean"),
    _a("glen", "len/response_mean", note="console short name (0.5)"),
    _a("gen_len", "len/response_mean", note="console short name"),
    _a("response_clip_ratio", "len/response_clip_ratio"),
    _a("truncated", "len/response_clip_ratio", note="fraction of generations that hit max_tokens (Experience.truncated)"),
    _a("rollout/truncated_rate", "len/response_clip_ratio"),
)

_VERL = (
    _a("critic/score/mean", "reward/score", note="seq-sum of token_level_scores"),
    _a("critic/rewards/mean", "reward/total", note="score - beta*KL when KL is in the reward"),
    _a(
        "actor/kl_loss",
        "kl/ref",
        estimator="k3",
        reduction=_TOK,
        between="ref",
        estimator_hparam="kl_loss_estimator",
        note="KL loss (use_kl_loss); kl_loss_type default low_var_kl = k3 clamped to [-10, 10]",
    ),
    _a(
        "actor/reward_kl_penalty",
        "kl/ref",
        estimator="k1",
        reduction=_TOK,
        between="ref",
        estimator_hparam="kl_estimator",
        note="KL in reward (use_kl_in_reward); algorithm.kl_penalty default kl = k1",
    ),
    _a("critic/kl", "kl/ref", estimator="k1", reduction=_TOK, between="ref", estimator_hparam="kl_estimator", note="0.3.x name"),
    _a("actor/kl_coef", "kl/coef"),
    _a("actor/reward_kl_penalty_coeff", "kl/coef"),
    _a("critic/kl_coeff", "kl/coef"),
    _a("actor/ppo_kl", "kl/old", estimator="k1", reduction=_TOK, between="old", note="mean(old - new logp): can be < 0"),
    _a("actor/entropy", "policy/entropy", reduction=_TOK),
    _a("actor/entropy_loss", "policy/entropy", reduction=_TOK, note="0.3.x: entropy from the update pass"),
    _a("actor/pg_clipfrac", "policy/clipfrac", reduction=_TOK),
    _a("actor/pg_clipfrac_lower", "policy/clipfrac_low", reduction=_TOK, note="dual-clip: tokens with A < 0 clipped at clip_ratio_c (core_algos.compute_policy_loss)"),
    _a("actor/pg_loss", "loss/policy"),
    _a("critic/vf_loss", "loss/value"),
    _a("critic/vf_clipfrac", "value/clipfrac"),
    _a("critic/vf_explained_var", "value/explained_var"),
    _a("critic/vpred_mean", "value/mean"),
    _a("critic/values/mean", "value/mean"),
    _a("critic/advantages/mean", "adv/mean"),
    _a("critic/returns/mean", "return/mean"),
    _a("actor/grad_norm", "grad/norm"),
    _a("critic/grad_norm", "grad/norm_critic"),
    _a("actor/lr", "opt/lr", note="console <= 0.4 prints 3 decimals: small LRs read 0.000"),
    _a("critic/lr", "opt/lr_critic"),
    _a("response_length/mean", "len/response_mean"),
    _a("response_length/min", "len/response_min"),
    _a("response_length/max", "len/response_max"),
    _a("response_length/clip_ratio", "len/response_clip_ratio"),
    _a("training/epoch", "progress/epoch"),
    _a("training/global_step", "progress/step"),
    _a("train/num_gen_batches", "progress/gen_batches", note="DAPO recipe (algorithm.filter_groups): 1 when no group was filtered"),
    # algorithm.rollout_correction (rollout_corr_helper.py): trainer vs rollout-engine mismatch
    _a("rollout_corr/kl", "mismatch/kl", estimator="k1", reduction=_TOK, note="rollout vs training policy at the same weights, not the ref-KL"),
    _a("rollout_corr/rollout_is_mean", "mismatch/is_ratio_mean"),
    _a("rollout_corr/rollout_is_min", "mismatch/is_ratio_min"),
    _a("rollout_corr/rollout_is_max", "mismatch/is_ratio_max"),
)

_TRLX = (
    _a("rollout_scores/mean", "reward/score"),
    _a("rollout_scores/std", "reward/std"),
    _a(
        "policy/sqrt_kl",
        "kl/ref",
        estimator="sqrt_k3",
        reduction=_SEQ,
        between="ref",
        note="square root of the seq-sum k3 KL (incl. prompt positions): square it for nats",
    ),
    _a("policy/kl_per_token", "kl/ref", estimator="sqrt_k3", reduction=_TOK, between="ref", note="also a square root despite the name"),
    _a("kl_ctl_value", "kl/coef"),
    _a("policy/approx_kl", "kl/old", estimator="k3", reduction=_TOK, between="old"),
    _a("policy/clipfrac", "policy/clipfrac"),
    _a("ratio", "policy/ratio_mean"),
    _a("losses/policy_loss", "loss/policy"),
    _a("losses/value_loss", "loss/value"),
    _a("losses/total_loss", "loss/total"),
    _a("values/mean", "value/mean"),
    _a("values/values_error", "value/error"),
    _a("values/clipfrac", "value/clipfrac"),
    _a("returns/mean", "return/mean"),
    _a("learning_rate_group_0", "opt/lr"),
)

_DEEPSPEED_CHAT = (
    _a("reward", "reward/score", note="average reward score of the batch"),
    _a("actor_loss", "loss/policy", note="last minibatch of the step"),
    _a("critic_loss", "loss/value", note="last minibatch of the step"),
)

_CLEANRL = (
    _a("charts/episodic_return", "reward/score", note="per finished episode (irregular steps)"),
    _a("losses/approx_kl", "kl/old", estimator="k3", between="old", note="compared to target_kl"),
    _a("losses/old_approx_kl", "kl/old", estimator="k1", between="old"),
    _a("losses/entropy", "policy/entropy", note="positive entropy, not a loss"),
    _a("losses/clipfrac", "policy/clipfrac"),
    _a("losses/policy_loss", "loss/policy", note="last minibatch of the update"),
    _a("losses/value_loss", "loss/value", note="last minibatch of the update"),
    _a("losses/explained_variance", "value/explained_var", note="NaN when Var(returns) = 0"),
    _a("charts/learning_rate", "opt/lr"),
)

_SB3 = (
    _a("rollout/ep_rew_mean", "reward/score", note="mean over the last 100 episodes (Monitor wrapper)"),
    _a("train/approx_kl", "kl/old", estimator="k3", between="old", note="early stop at 1.5*target_kl"),
    _a("train/clip_fraction", "policy/clipfrac"),
    _a("train/entropy_loss", "loss/entropy", sign=-1, note="= -mean(entropy): more negative = more entropy"),
    _a("train/policy_gradient_loss", "loss/policy"),
    _a("train/value_loss", "loss/value"),
    _a("train/loss", "loss/total", note="last minibatch total"),
    _a("train/explained_variance", "value/explained_var"),
    _a("train/learning_rate", "opt/lr"),
)

# Stable-Baselines 2 (TensorFlow) PPO2, stable_baselines/ppo2/ppo2.py: the scalars of the "loss"
# and "input_info" variable scopes, one point per minibatch, and the per-episode reward that
# total_episode_reward_logger writes at num_timesteps + the done index of each environment.
_SB2 = (
    _a("episode_reward", "reward/score", note="one point per finished episode and environment (steps go back between environments)"),
    _a("environment_info/episode_reward", "reward/score"),
    _a("loss/approximate_kullback-leibler", "kl/old", estimator="k2", between="old", note="0.5 * mean((neglogp - old_neglogp)^2)"),
    _a("loss/entropy_loss", "policy/entropy", note="despite the name, the positive mean entropy (self.entropy)"),
    _a("loss/policy_gradient_loss", "loss/policy", note="clipped surrogate of one minibatch"),
    _a("loss/value_function_loss", "loss/value", note="0.5 * clipped MSE of one minibatch"),
    _a("loss/clip_factor", "policy/clipfrac", note="SB2 >= 2.4 name of the clip fraction"),
    _a("loss/clipfrac", "policy/clipfrac"),
    _a("loss/loss", "loss/total", note="pg_loss - ent_coef * entropy + vf_coef * vf_loss"),
    _a("input_info/discounted_rewards", "return/mean", note="mean of the returns fed to the value loss"),
    _a("input_info/advantage", "adv/mean", note="normalised advantages: about 0"),
    _a("input_info/old_value_pred", "value/mean"),
    _a("input_info/learning_rate", "opt/lr"),
)

# Tinker cookbook and prime-rl.  env/all/reward/total is the environment's episode reward:
# tinker applies its KL penalty to the advantages (kl_penalty_coef), not to this number, so it
# is the task score (reward/score).  Their sampler-vs-trainer "mismatch" KLs
# (optim/kl_sample_train_*, mismatch_kl/*) measure numerical disagreement between the
# inference engine and the trainer at the same weights, neither ref-KL nor PPO old-KL, so they
# stay unmapped rather than trip the kl/* rules.
_OTHER = (
    _a("env/all/reward/total", "reward/score", note="Tinker: mean total episode reward (KL is applied to advantages, not here)"),
    _a("reward/mean", "reward/score", note="prime-rl orchestrator: mean rollout reward"),
    _a("optim/entropy", "policy/entropy", reduction=_TOK),
    _a("entropy/mean", "policy/entropy", reduction=_TOK, note="prime-rl trainer"),
    _a("loss/mean", "loss/total", note="prime-rl trainer: policy loss (no critic)"),
    _a("optim/grad_norm", "grad/norm"),
    _a("optim/lr", "opt/lr"),
    _a("env/all/ac_tokens_per_turn", "len/response_mean", note="Tinker: action (response) tokens per turn"),
    _a("completion_len/mean", "len/response_mean", note="prime-rl orchestrator"),
    _a("completion_len/max", "len/response_max"),
    _a("is_truncated/mean", "len/response_clip_ratio"),
)

# Custom loops and baselines-style loggers: common spellings, meaning not guaranteed.
_GENERIC = (
    _a("reward_mean", "reward/score"),
    _a("mean_reward", "reward/score"),
    _a("reward", "reward/score"),
    _a("rewards", "reward/score"),
    _a("score", "reward/score"),
    _a("reward_std", "reward/std"),
    _a("kl_mean", "kl/ref", between="ref"),
    _a("kl_div", "kl/ref", between="ref"),
    _a("kl_divergence", "kl/ref", between="ref"),
    _a("kl", "kl/ref", between="ref"),
    _a("kl_coef", "kl/coef"),
    _a("beta", "kl/coef"),
    _a("approx_kl", "kl/old", between="old"),
    _a("approxkl", "kl/old", between="old"),
    _a("entropy", "policy/entropy"),
    _a("policy_entropy", "policy/entropy"),
    _a("clip_fraction", "policy/clipfrac"),
    _a("clipfrac", "policy/clipfrac"),
    _a("policy_loss", "loss/policy"),
    _a("pg_loss", "loss/policy"),
    _a("value_loss", "loss/value"),
    _a("vf_loss", "loss/value"),
    _a("critic_loss", "loss/value"),
    _a("total_loss", "loss/total"),
    _a("loss", "loss/total"),
    _a("explained_variance", "value/explained_var"),
    _a("advantage_mean", "adv/mean"),
    _a("advantages_mean", "adv/mean"),
    _a("advantage_std", "adv/std"),
    _a("grad_norm", "grad/norm"),
    _a("learning_rate", "opt/lr"),
    _a("lr", "opt/lr"),
    _a("response_length_mean", "len/response_mean"),
    _a("response_length", "len/response_mean"),
    _a("sequence_length_mean", "len/response_mean"),
    _a("epoch", "progress/epoch"),
)

# Classic-RL custom loggers (baselines, procgen ports): episode returns are the reward, and
# a bare ``kl`` is the old-vs-new KL of the PPO update (baselines ppo1/ppo2), not a ref-KL.
_GENERIC_RL = (
    _a("eprewmean", "reward/score"),
    _a("episode_reward", "reward/score"),
    _a("mean 100 episode reward", "reward/score"),
    _a("mean_episode_rewards", "reward/score"),
    _a("Rewards/mean_episodes", "reward/score"),
    _a("ep_rew_mean", "reward/score"),
    _a("kl", "kl/old", between="old"),
    _a("approxkl", "kl/old", between="old"),
    _a("approx_kl", "kl/old", between="old"),
    _a("policy_entropy", "policy/entropy"),
    _a("entropy", "policy/entropy"),
    _a("clipfrac", "policy/clipfrac"),
    _a("policy_loss", "loss/policy"),
    _a("policy loss", "loss/policy"),
    _a("Loss/pi", "loss/policy"),
    _a("value_loss", "loss/value"),
    _a("value loss", "loss/value"),
    _a("Loss/v", "loss/value"),
    _a("loss", "loss/total"),
    _a("explained_variance", "value/explained_var"),
    _a("learning_rate", "opt/lr"),
    _a("lr", "opt/lr"),
    # SB3's logger names, for a run too short to carry the sb3 markers or written by another
    # loop that borrowed them (formats.md §7)
    *_SB3,
)

ALIASES: dict[str, tuple[Alias, ...]] = {
    "trl_legacy": _TRL_LEGACY,
    "trl": _TRL_PPO,
    "trl_rloo": _TRL_RLOO,
    "trl_grpo": _TRL_GRPO,
    "openrlhf": _OPENRLHF,
    "verl": _VERL,
    "trlx": _TRLX,
    "deepspeed_chat": _DEEPSPEED_CHAT,
    "cleanrl": _CLEANRL,
    "sb3": _SB3,
    "sb2": _SB2,
    "trl_online_dpo": _TRL_ONLINE_DPO,
    "trl_async_grpo": _TRL_ASYNC_GRPO,
    "other": _OTHER,
    "unknown": _GENERIC,
    "unknown_rl": _GENERIC_RL,
}

# -- framework detection -----------------------------------------------------------------------
# Tag markers (matched against raw and ``train/``-stripped tags; a trailing ``*`` is a prefix):
# weight 3 = unique to that framework, lower = shared with others.
MARKERS: dict[str, dict[str, float]] = {
    "trl_legacy": {
        "ppo/mean_scores": 3,
        "env/reward_mean": 2,
        "ppo/loss/policy": 3,
        "ppo/policy/approxkl": 3,
        "ppo/mean_non_score_reward": 3,
        "ppo/val/var_explained": 3,
        "objective/kl_coef": 2,
        "tokens/responses_len_mean": 2,
    },
    "trl": {
        "objective/scores": 2,
        "objective/rlhf_reward": 3,
        "objective/non_score_reward": 3,
        "policy/approxkl_avg": 3,
        "policy/clipfrac_avg": 2,
        "loss/policy_avg": 2,
        "loss/value_avg": 3,
        "val/clipfrac_avg": 3,
        "val/num_eos_tokens": 2,
        "objective/kl": 1,
        "rewards_curve": 2,
        "kl_curve": 1,
    },
    "trl_grpo": {
        "frac_reward_zero_std": 3,
        "reward_std": 2,
        "completions/mean_length": 2,
        "completion_length": 2,
        "completions/clipped_ratio": 1,
        "clip_ratio/region_mean": 2,
        "clip_ratio/low_mean": 1,
        "clip_ratio/high_max": 1,
        "completions/mean_terminated_length": 2,
        "num_tokens": 1,
        "rewards/*": 2,
    },
    "trl_async_grpo": {"perf/weight_sync_s": 3, "sample/staleness_mean": 3, "batch/packing_ratio": 2, "perf/rollout_wait_s": 2},
    "trl_online_dpo": {
        "objective/scores_margin": 3,
        "val/contain_eos_token": 3,
        "rewards/margins": 2,
        "rewards/accuracies": 2,
        "logps/chosen": 1,
        "objective/non_score_reward": 1,
    },
    "openrlhf": {
        "actor_lr": 3,
        "critic_lr": 2,
        "ppo_clip_ratio": 3,
        "response_clip_ratio": 2,
        "total_length": 2,
        "act_lr": 3,
        "glen": 3,
        "dynamic_filtering_pass_rate": 3,
        "group_reward_std": 2,
        "actor_grad_norm": 2,
        "policy_loss": 1,
        "critic_loss": 1,
        "return": 1,
        "response_length": 1,
    },
    "verl": {
        "actor/pg_loss": 3,
        "actor/ppo_kl": 3,
        "actor/pg_clipfrac": 3,
        "critic/score/mean": 3,
        "critic/rewards/mean": 2,
        "response_length/mean": 2,
        "timing_s/*": 2,
        "training/global_step": 2,
        "train/num_gen_batches": 2,
        "actor/entropy": 1,
    },
    "trlx": {
        "losses/total_loss": 3,
        "policy/sqrt_kl": 4,
        "kl_ctl_value": 3,
        "rollout_scores/mean": 3,
        "values/values_error": 3,
        "learning_rate_group_0": 2,
        "policy/approx_kl": 1,
    },
    "deepspeed_chat": {"actor_loss_sum": 3, "critic_loss_sum": 3, "actor_loss": 2, "critic_loss": 1, "reward": 1},
    "cleanrl": {
        "charts/episodic_return": 3,
        "losses/old_approx_kl": 3,
        "losses/approx_kl": 2,
        "losses/explained_variance": 2,
        "charts/SPS": 2,
        "charts/learning_rate": 2,
        "losses/clipfrac": 2,
    },
    "sb3": {
        "train/approx_kl": 3,
        "train/entropy_loss": 3,
        "train/policy_gradient_loss": 3,
        "train/clip_fraction": 3,
        "rollout/ep_rew_mean": 2,
        "train/n_updates": 1,
    },
    "sb2": {
        "loss/approximate_kullback-leibler": 4,
        "loss/value_function_loss": 3,
        "loss/policy_gradient_loss": 3,
        "loss/clip_factor": 3,
        "input_info/*": 2,
        "loss/entropy_loss": 1,
        "episode_reward": 1,
    },
    "other": {
        "env/all/reward/total": 3,
        "optim/kl_sample_train_v1": 3,
        "optim/entropy": 2,
        "progress/done_frac": 2,
        "mismatch_kl/mean": 3,
        "masked_mismatch_kl/mean": 2,
        "batch/solve_none": 3,
        "completion_len/mean": 2,
        "is_truncated/mean": 2,
        "optim/grad_norm": 1,
        "optim/lr": 1,
    },
}

# Config markers: flattened config keys (exact, or as a dotted suffix; trailing ``.`` = prefix).
CONFIG_MARKERS: dict[str, dict[str, float]] = {
    "verl": {"actor_rollout_ref.": 5, "algorithm.adv_estimator": 2},
    "trlx": {"method.init_kl_coef": 3, "method.name": 2, "train.tracker": 1},
    "openrlhf": {
        "actor_learning_rate": 2,
        "critic_learning_rate": 1,
        "micro_train_batch_size": 2,
        "micro_rollout_batch_size": 2,
        "reward_pretrain": 2,
    },
    "trl_legacy": {"adap_kl_ctrl": 3, "tracker_project_name": 2, "init_kl_coef": 1, "mini_batch_size": 1, "ppo_epochs": 1},
    "trl": {"num_ppo_epochs": 3, "sft_model_path": 2, "missing_eos_penalty": 1, "kl_estimator": 1},
    "trl_grpo": {"num_generations": 1, "max_completion_length": 1, "use_vllm": 1, "scale_rewards": 1},
    "sb3": {"policy_class": 2, "clip_range": 2, "n_epochs": 1, "gae_lambda": 1, "ent_coef": 1},
    "cleanrl": {"update_epochs": 2, "clip_coef": 2, "anneal_lr": 2, "clip_vloss": 2, "num_minibatches": 1},
    "other": {"remove_constant_reward_groups": 3, "kl_penalty_coef": 2, "loss.mask_ratio_low": 3, "async_level": 2, "loss_fn": 1},
}
MIN_FRAMEWORK_SCORE = 3.0
# A synonym tag with this many times the points of the preferred spelling is read instead.
DENSER_SYNONYM = 10
# Tags showing a classic-RL (episodes) log rather than an LLM one, for the generic table.
_EPISODE_MARKERS = ("episode_reward", "eprewmean", "mean 100 episode reward", "mean_episode_rewards", "Rewards/mean_episodes", "ep_rew_mean", "rollout/ep_rew_mean")

HF_PREFIX = "train/"
EVAL_PREFIXES = ("eval/", "eval_", "test/")


def candidate_keys(tag: str) -> list[str]:
    """The keys a raw tag may be listed under: itself, then without ``train/``.

    The HF Trainer (TensorBoard/W&B) and OpenRLHF prefix every key with ``train/``, while
    SB3's own ``train/approx_kl`` keeps it, so the exact tag is tried first (formats.md §1e, §12.2).
    """
    keys = [tag]
    if tag.startswith(HF_PREFIX) and len(tag) > len(HF_PREFIX):
        keys.append(tag[len(HF_PREFIX) :])
    return keys


def _marker_hit(marker: str, keys: set[str], prefixes: Iterable[str]) -> bool:
    if marker.endswith("*"):
        stem = marker[:-1]
        return any(k.startswith(stem) for k in prefixes)
    return marker in keys


def _config_hit(marker: str, flat_keys: Iterable[str]) -> bool:
    for key in flat_keys:
        k = key.replace("/", ".")
        if marker.endswith("."):
            if k.startswith(marker) or ("." + marker) in k:
                return True
        elif k == marker or k.endswith("." + marker):
            return True
    return False


def framework_scores(tags: Iterable[str], flat_config: dict[str, Any]) -> dict[str, float]:
    """Evidence score per framework from tag and config markers."""
    keys: set[str] = set()
    for t in tags:
        keys.update(candidate_keys(t))
    scores: dict[str, float] = {}
    cfg_keys = list(flat_config)
    for fw in FRAMEWORK_ORDER:
        s = sum(w for m, w in MARKERS.get(fw, {}).items() if _marker_hit(m, keys, keys))
        s += sum(w for m, w in CONFIG_MARKERS.get(fw, {}).items() if _config_hit(m, cfg_keys))
        if s:
            scores[fw] = s
    return scores


def guess_framework(tags: Iterable[str], flat_config: dict[str, Any] | None = None) -> str:
    """The most likely framework id (see :data:`FRAMEWORKS`), ``unknown`` below the threshold.

    RLOO is told from its siblings by config (``rloo_k``) or, for RLOO <= 0.21, by the
    PPOv2 names without any critic key.
    """
    tags = list(tags)
    flat = flat_config or {}
    scores = framework_scores(tags, flat)
    if not scores:
        return "unknown"
    best = min(scores, key=lambda fw: (-scores[fw], FRAMEWORK_ORDER.index(fw)))
    if scores[best] < MIN_FRAMEWORK_SCORE:
        return "unknown"
    if best in ("trl", "trl_grpo"):
        keys = {k for t in tags for k in candidate_keys(t)}
        if _config_hit("rloo_k", list(flat)):
            return "trl_rloo"
        if best == "trl" and "loss/policy_avg" in keys and not keys & {"loss/value_avg", "val/clipfrac_avg"}:
            return "trl_rloo"  # RLOO 0.16-0.21: PPOv2 names, no critic (formats.md §1c)
    return best


def _is_classic_rl(tags: Iterable[str]) -> bool:
    keys = {k for t in tags for k in candidate_keys(t)}
    return any(m in keys for m in _EPISODE_MARKERS)


def table_for(framework: str, tags: Iterable[str] = ()) -> tuple[Alias, ...]:
    """The alias table used for a framework (``unknown`` picks the LLM or classic-RL spelling)."""
    if framework == "unknown":
        return ALIASES["unknown_rl"] if _is_classic_rl(tags) else ALIASES["unknown"]
    return ALIASES[framework]


# -- mapping -------------------------------------------------------------------------------------
@dataclass
class MappingResult:
    mapping: dict[str, str]  # raw tag -> canonical
    info: dict[str, MetricInfo]  # canonical -> meaning
    notes: list[str]


def map_tags(
    tags: Iterable[str],
    framework: str,
    config: dict[str, Any] | None = None,
    aliases: dict[str, str] | None = None,
    counts: dict[str, int] | None = None,
) -> MappingResult:
    """Map raw tags to canonical names: user aliases, then the table, one raw tag per name.

    A tag literally named like a canonical metric takes that name first; otherwise the
    table order decides (e.g. TRL legacy ``env/reward_mean`` before ``ppo/mean_scores``),
    then the tag order (the orchestrator lists the most precise format first).  With
    ``counts`` (points per tag), a candidate with ``DENSER_SYNONYM`` times the points of the
    preferred one takes the name instead.
    """
    tags = list(dict.fromkeys(tags))
    cfg = config or {}
    mapping: dict[str, str] = {}
    info: dict[str, MetricInfo] = {}
    notes: list[str] = []
    claimed: set[str] = set()

    for raw, canonical in (aliases or {}).items():
        raw, canonical = str(raw), str(canonical)
        hits = [t for t in tags if raw in candidate_keys(t) and t not in mapping]
        if not hits:
            continue
        if canonical in claimed:
            notes.append(f"alias {raw!r} -> {canonical!r} ignored: {canonical!r} is already aliased")
            continue
        if canonical not in CANONICAL:
            notes.append(f"alias target {canonical!r} is not a canonical metric name; used as given")
        tag = hits[0]
        mapping[tag] = canonical
        claimed.add(canonical)
        info[canonical] = MetricInfo(canonical=canonical, raw_tag=tag, framework=framework, note="user alias")

    table = table_for(framework, tags)
    index: dict[str, tuple[int, Alias]] = {}
    patterns: list[tuple[int, Alias]] = []
    for i, a in enumerate(table):
        if "*" in a.raw:
            patterns.append((i, a))
        else:
            index.setdefault(a.raw, (i, a))
    for name in CANONICAL:  # identity: a tag already named canonically (lowest priority)
        if "*" not in name:
            index.setdefault(name, (len(table), Alias(name, name)))

    candidates: list[tuple[int, int, str, Alias]] = []
    for order, tag in enumerate(tags):
        if tag in mapping:
            continue
        for key in candidate_keys(tag):
            hit = index.get(key) or _pattern_hit(key, patterns)
            if hit is not None:
                prio, alias = hit
                candidates.append((-1 if key == alias.canonical else prio, order, tag, alias))
                break
    best: dict[str, tuple[int, int, str, Alias]] = {}
    for cand in sorted(candidates, key=lambda c: (c[0], c[1])):
        canonical, tag = cand[3].canonical, cand[2]
        if canonical in claimed:
            continue
        first = best.get(canonical)
        if first is None:
            best[canonical] = cand
        elif counts and counts.get(tag, 0) >= DENSER_SYNONYM * max(counts.get(first[2], 0), 1):
            # a synonym with many times the points wins: the preferred spelling came from a
            # truncated or down-sampled copy (a baselines progress.csv of 2 rows beside the
            # run's TensorBoard file)
            notes.append(f"{tag!r} ({counts[tag]} points) read as {canonical!r} instead of {first[2]!r} ({counts.get(first[2], 0)} points)")
            best[canonical] = cand
    for canonical, (_prio, _order, tag, alias) in best.items():
        mapping[tag] = canonical
        info[canonical] = _metric_info(alias, tag, framework, cfg)
    for tag in tags:
        if tag in mapping:
            continue
        guess = infer_canonical(tag)
        if guess is not None and guess.canonical not in info:
            mapping[tag] = guess.canonical
            info[guess.canonical] = MetricInfo(
                canonical=guess.canonical, raw_tag=tag, framework=framework, sign=guess.sign, note=guess.note, inferred=True
            )
    return MappingResult(mapping, info, notes)


def _pattern_hit(key: str, patterns: list[tuple[int, Alias]]) -> tuple[int, Alias] | None:
    """A ``*`` alias (one path segment, e.g. ``rewards/*/mean``) matching ``key``, made concrete."""
    parts = key.split("/")
    for prio, a in patterns:
        pat = a.raw.split("/")
        if len(pat) != len(parts):
            continue
        seg = [p for p, q in zip(parts, pat) if q == "*"]
        if all(q == "*" or p == q for p, q in zip(parts, pat)) and all(seg):
            return prio, replace(a, raw=key, canonical=a.canonical.replace("*", seg[0]))
    return None


def _metric_info(alias: Alias, tag: str, framework: str, config: dict[str, Any]) -> MetricInfo:
    estimator = alias.estimator
    note = alias.note
    if alias.estimator_hparam and config.get(alias.estimator_hparam):
        chosen = config[alias.estimator_hparam]
        if chosen != estimator:
            note = f"{note}; estimator {chosen} from config {alias.estimator_hparam}" if note else f"estimator {chosen} from config"
        estimator = chosen
    return MetricInfo(
        canonical=alias.canonical,
        raw_tag=tag,
        framework=framework,
        estimator=estimator,
        reduction=alias.reduction,
        sign=alias.sign,
        between=alias.between,
        note=note,
    )


def can_be_negative(info: MetricInfo | None) -> bool | None:
    """Whether the logged KL may legitimately be < 0 (None when the estimator is unknown)."""
    if info is None or info.estimator is None:
        return None
    return info.estimator not in NONNEGATIVE_ESTIMATORS


# -- Run construction ----------------------------------------------------------------------------
def _plain(v: Any, nested: bool = False) -> Any:
    """A JSON-friendly copy of a config value (one list level kept, anything deeper as text)."""
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (list, tuple)) and not nested:
        return [_plain(x, nested=True) for x in v]
    return str(v)


def _min_value(series: list[RawSeries], tag: str) -> float | None:
    vals = [s.values for s in series if s.tag == tag and len(s)]
    if not vals:
        return None
    arr = np.concatenate(vals)
    finite = arr[np.isfinite(arr)]
    return float(finite.min()) if len(finite) else None


def build_run(
    run_id: str,
    path: str,
    fmt: str,
    files: list[str],
    raw: RawRun,
    aliases: dict[str, str] | None = None,
) -> Run:
    """Canonicalise one run: framework, tag mapping, meanings, normalised config, frames."""
    issues = list(raw.issues)
    cfg_notes: list[str] = []
    series, totals = _split_totals(raw.series)
    flat = flatten_config({**totals, **raw.config}, cfg_notes)
    tags = list(dict.fromkeys(s.tag for s in series))
    framework = guess_framework(tags, flat)

    if framework == "trl_grpo":
        # GRPO logs k3 (>= 0, formats.md §8); a clearly negative ``kl`` can only be RLOO >= 0.22's k1.
        kl_tag = next((t for t in tags if "kl" in candidate_keys(t)), None)
        low = _min_value(series, kl_tag) if kl_tag else None
        if low is not None and low < -1e-4:
            framework = "trl_rloo"
            cfg_notes.append(f"{kl_tag} goes below 0 ({low:.3g}), impossible for GRPO's k3 estimator: read as RLOO (k1)")

    config = normalize_config(flat, framework)
    counts: dict[str, int] = {}
    for s in series:
        counts[s.tag] = counts.get(s.tag, 0) + len(s)
    result = map_tags(tags, framework, config, aliases, counts)
    _sign_inferred_entropy(result.info, series)
    log.debug("run %s: framework %s, %d of %d tags mapped", run_id, framework, len(result.mapping), len(tags))
    mapping = result.mapping
    claimed = set(mapping.values())

    def metric_of(tag: str) -> str:
        m = mapping.get(tag)
        if m is not None:
            return m
        # an unmapped tag spelled like a claimed canonical name must not merge into it
        return f"raw:{tag}" if tag in claimed else tag

    frame = RunFrame.from_series((metric_of(s.tag), s) for s in series)
    eval_frame = _eval_frame(raw.eval_series, framework, config, aliases) if raw.eval_series else None
    restarts = sorted(set(int(r) for r in raw.restarts))
    if framework == "sb2" and restarts:
        issues, restarts = _sb2_steps(issues, restarts, str(path))

    for note in cfg_notes + result.notes:
        issues.append(ReadIssue(path=str(path), message=note, level="warning"))
    return Run(
        id=run_id,
        path=str(path),
        format=fmt,
        frame=frame,
        files=list(files),
        framework=framework,
        config=config,
        raw_config={k: _plain(v) for k, v in flat.items()},
        mapping=mapping,
        unmapped=sorted(t for t in tags if t not in mapping),
        metric_info=result.info,
        texts=list(raw.texts),
        issues=issues,
        restarts=restarts,
        eval_frame=eval_frame,
        by_design=by_design(framework, config, frame.has),
    )


def _split_totals(series: list[RawSeries]) -> tuple[list[RawSeries], dict[str, float]]:
    """The series without the final-row totals (:data:`FINAL_TOTALS`, at most one point each),
    and those totals by name: HF's TensorBoard/W&B callbacks log ``train/train_runtime`` ... once."""
    keep: list[RawSeries] = []
    totals: dict[str, float] = {}
    for s in series:
        key = next((k for k in candidate_keys(s.tag) if k in FINAL_TOTALS), None)
        if key is not None and len(np.unique(s.steps)) <= 1:
            if len(s):
                totals[key] = float(s.values[-1])
            continue
        keep.append(s)
    return keep, totals


def _sign_inferred_entropy(info: dict[str, MetricInfo], series: list[RawSeries]) -> None:
    """An inferred entropy *loss* takes the sign its values show (:func:`name_tokens.entropy_sign`)."""
    meta = info.get("loss/entropy")
    if meta is None or not meta.inferred:
        return
    vals = [s.values for s in series if s.tag == meta.raw_tag]
    sign, why = entropy_sign(np.concatenate(vals) if vals else np.empty(0))
    meta.sign, meta.note = sign, f"{meta.note}; {why}"


def _sb2_steps(issues: list[ReadIssue], restarts: list[int], path: str) -> tuple[list[ReadIssue], list[int]]:
    """Stable-Baselines 2 steps go back by design, not because the run restarted.

    ppo2.py writes each minibatch's summary at ``(num_timesteps // update_fac + minibatch) *
    update_fac`` and ``total_episode_reward_logger`` writes each environment's episodes at
    ``num_timesteps + done index``: every rollout starts the environments' and the minibatches'
    counters again.  The readers' "steps go back" notes are replaced by this one.
    """
    kept = [i for i in issues if not (i.level == "info" and "steps go back" in i.message) and "more restart(s) not listed" not in i.message]
    kept.append(
        ReadIssue(
            path=path,
            message=f"steps go back {len(restarts)} time(s): Stable-Baselines 2 counts steps per minibatch and per environment within each rollout (not a restarted log)",
            level="info",
        )
    )
    return kept, []


def _strip_eval(tag: str) -> str:
    for p in EVAL_PREFIXES:
        if tag.startswith(p) and len(tag) > len(p):
            return tag[len(p) :]
    return tag


def _eval_frame(series: list[RawSeries], framework: str, config: dict[str, Any], aliases: dict[str, str] | None) -> RunFrame:
    """Eval points under canonical names where the stripped tag maps (``eval_reward`` -> reward/score)."""
    stripped = {s.tag: _strip_eval(s.tag) for s in series}
    result = map_tags(list(dict.fromkeys(stripped.values())), framework, config, aliases)
    return RunFrame.from_series((result.mapping.get(stripped[s.tag], s.tag), s) for s in series)


# -- documentation -------------------------------------------------------------------------------
def render_markdown() -> str:
    """docs/metrics.md: vocabulary, per-framework alias tables, detection markers, hyper-parameters."""
    out = [
        "# Metrics: canonical names, framework aliases, hyper-parameters",
        "",
        "Generated by `python -m ppo_doctor.metrics > docs/metrics.md` from the tables in",
        "`ppo_doctor/metrics.py` and `ppo_doctor/hparams.py`; do not edit by hand.",
        "Sources: `reference/formats.md` §0-§8. Values are never rescaled: the *estimator*,",
        "*reduction*, *sign* and *between* columns say what the logged number means.",
        "",
        "## Canonical metrics",
        "",
        "| canonical | meaning |",
        "|---|---|",
    ]
    out += [f"| `{k}` | {v} |" for k, v in CANONICAL.items()]
    out += [
        "",
        "KL estimators: `k1` = logp - ref_logp (mean unbiased, single values can be < 0); `k2` =",
        "0.5*(logp - ref_logp)^2 >= 0; `k3` = exp(-d) - 1 + d >= 0; `sqrt_k3` = square root of k3",
        "(trlx); `abs`, `full` >= 0. Reductions: `seq_sum` (summed over response tokens, grows with",
        "length) or `token_mean`. `between`: `ref` (policy vs reference) or `old` (PPO update).",
        "",
        "## Mapping rules",
        "",
        "* Tags are tried as logged, then without the `train/` prefix the HF Trainer and OpenRLHF add.",
        "* At most one raw tag per canonical metric: the first present in table order wins; a tag",
        "  already spelled canonically wins over the table. The others keep their raw names.",
        "* User aliases (`aliases = {raw = \"canonical\"}` in the config) override everything.",
        "* Eval series (`eval/`, `eval_`, `test/`) are mapped the same way into `Run.eval_frame`.",
        "* Estimators chosen in the config (`kl_estimator`, TRL legacy `kl_penalty`, veRL",
        "  `kl_loss_type`/`algorithm.kl_penalty`, OpenRLHF `use_kl_estimator_k3`) override the defaults.",
        "* A `*` in a raw tag stands for one path segment and is carried into the canonical name:",
        "  TRL's `rewards/<function>/mean` becomes `reward/fn/<function>/mean`, one per reward function.",
        "* A tag in no table is matched by the words of its name (`ppo_doctor/name_tokens.py`):",
        "  `Loss/entropy`, `entropy_loss`, `policy_gradient_loss`, `total_loss`, `value_loss` ... take",
        "  a canonical name marked *inferred* in `ppo-doctor metrics`; names with `std`/`min`/`max` or",
        "  another model's word (`discriminator`) are left alone.  An inferred entropy *loss* takes the",
        "  sign its values show: all <= 0 is -entropy (SB3 convention), all >= 0 the entropy itself.",
        f"* Final-row totals ({', '.join(f'`{k}`' for k in FINAL_TOTALS)}) with at most one point are",
        "  not series: they go to the run's config.",
        "* Critic-free runs (GRPO, RLOO, REINFORCE++ ...: `ppo_doctor/design.py`) and runs whose KL",
        "  coefficient is 0 say so once (`Run.by_design`); the value and KL rules are not listed as",
        "  missing a metric there.",
        "",
        "## Frameworks",
        "",
        "| id | what | tag markers (weight) |",
        "|---|---|---|",
    ]
    for fw, what in FRAMEWORKS.items():
        marks = ", ".join(f"`{m}` ({w:g})" for m, w in MARKERS.get(fw, {}).items()) or "-"
        out.append(f"| `{fw}` | {what} | {marks} |")
    out += [
        "",
        f"The framework with the highest marker score wins (ties in table order); below {MIN_FRAMEWORK_SCORE:g}",
        "the run is `unknown`. Config keys add evidence (e.g. `actor_rollout_ref.*` for veRL,",
        "`method.*` for trlx). `trl_rloo` is chosen over `trl`/`trl_grpo` when the config has",
        "`rloo_k`, when PPOv2 names come without any critic key (RLOO <= 0.21), or when a",
        "GRPO-style `kl` goes below 0 (GRPO's k3 cannot).",
        "",
    ]
    for fw, table in ALIASES.items():
        title = "`unknown`, classic-RL spellings (used when episode rewards are logged)" if fw == "unknown_rl" else f"`{fw}`"
        out += [f"### {title}", "", "| raw tag | canonical | estimator | reduction | sign | between | note |", "|---|---|---|---|---|---|---|"]
        for a in table:
            est = a.estimator or ""
            if a.estimator_hparam:
                est = f"{est} (config `{a.estimator_hparam}`)".strip()
            sign = "-1" if a.sign < 0 else ""
            out.append(f"| `{a.raw}` | `{a.canonical}` | {est} | {a.reduction or ''} | {sign} | {a.between or ''} | {a.note} |")
        out.append("")
    out += [
        "## Hyper-parameters",
        "",
        "Every source's config is flattened to dotted keys (W&B `{desc, value}` unwrapped, JSON /",
        "Python-literal / markdown-table strings expanded, MLflow strings parsed) and the first",
        "matching name below (exact or as a dotted suffix, not under `critic.`, `ref.`,",
        "`reward_model.`, `val_kwargs.` ...) gives the canonical value.",
        "",
        "| key | meaning | names (priority order) | framework-specific names |",
        "|---|---|---|---|",
    ]
    for hp in HPARAMS:
        names = ", ".join(f"`{n}`" for n in hp.names)
        special = "; ".join(
            f"{fw}: " + (", ".join(f"`{n}`" for n in ns) if ns else "(not read)") for fw, ns in hp.by_framework.items()
        )
        out.append(f"| `{hp.key}` | {hp.doc} | {names} | {special} |")
    out += [
        "",
        "Derived: `num_mini_batches` = batch_size / mini_batch_size when not given; `adaptive_kl`",
        "from veRL `kl_ctrl.type`, OpenRLHF `kl_target`, trlx `method.target`; veRL `kl_coef` is the",
        "KL-loss coefficient with `use_kl_loss`, 0 when neither KL loss nor KL-in-reward is on, else",
        "`algorithm.kl_ctrl.kl_coef`; `top_k` -1 (vLLM \"off\") becomes 0.",
        "",
    ]
    return "\n".join(out)


def main() -> None:
    sys.stdout.write(render_markdown())


if __name__ == "__main__":  # pragma: no cover
    main()


__all__ = [
    "CANONICAL",
    "FRAMEWORKS",
    "ALIASES",
    "Alias",
    "MARKERS",
    "CONFIG_MARKERS",
    "NONNEGATIVE_ESTIMATORS",
    "build_run",
    "guess_framework",
    "framework_scores",
    "map_tags",
    "table_for",
    "candidate_keys",
    "can_be_negative",
    "render_markdown",
]
