"""Per-framework alias tables: raw tag (without the ``train/`` prefix the HF/OpenRLHF loggers
add) -> canonical metric, with what the logged number means (estimator, reduction, sign,
between). One ordered table per framework id of :data:`ppo_doctor.canonical.frameworks.FRAMEWORKS`
(:data:`ALIASES`); the first present in table order wins (:mod:`.mapping`). Sources:
the framework facts of docs/sources.md (from docs/sources.md#trl-legacy-ppo-metrics to
docs/sources.md#sb3-logger-keys).
"""

from __future__ import annotations

from typing import Any, NamedTuple

class Alias(NamedTuple):
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

# Per-framework tables, in priority order (docs/sources.md, framework facts). Within a table the first
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
    # TRL legacy statistics (docs/sources.md#trl-legacy-ppo-metrics) that users and the reference loop keep logging
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
        # TRL 0.14-0.15 logged each reward function's batch mean as ``rewards/{reward_func_name}``
        # (grpo_trainer.py ``self._metrics[f"rewards/{reward_func_name}"]``)
        _a("rewards/*", "reward/fn/*/mean", note="TRL 0.14-0.15 name of one reward function's mean"),
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

# The DPO family's implicit rewards (beta-scaled log-ratios to the reference, not task rewards)
# and sequence log-probabilities: DPOTrainer, KTOTrainer (trl/trainer), ORPO and CPO
# (trl/experimental), OnlineDPOTrainer (TRL 1.16, ``_metrics`` / ``self.stats``).
_DPO_IMPLICIT = (
    _a("rewards/chosen", "dpo/chosen"),
    _a("rewards/rejected", "dpo/rejected"),
    _a("rewards/margins", "dpo/margin"),
    _a("rewards/accuracies", "dpo/accuracy"),
    _a("logps/chosen", "dpo/logp_chosen"),
    _a("logps/rejected", "dpo/logp_rejected"),
)

# TRL OnlineDPOTrainer (trl/experimental/online_dpo, ``self.stats``): PPOv2-style objective/*
# plus the DPO implicit rewards.
_TRL_ONLINE_DPO = (
    _a("objective/scores", "reward/score", note="reward function / reward model score of the completions"),
    _a("objective/scores_margin", "reward/score_margin", note="score(chosen) - score(rejected)"),
    _a("objective/rlhf_reward", "reward/total", note="score + non_score_reward"),
    _a("objective/non_score_reward", "reward/kl_penalty", reduction=_SEQ, note="-beta * seq-sum k1"),
    _a("objective/kl", "kl/ref", estimator="k1", reduction=_SEQ, between="ref", note="sum over tokens of logp - ref_logp, batch mean: can be < 0"),
    _a("objective/entropy", "policy/entropy", reduction=_SEQ, note="seq-sum of -logp of the sampled tokens: a length-dependent proxy"),
    _a("beta", "kl/coef", note="DPO beta in use (a schedule when beta is a list)"),
    *_DPO_IMPLICIT,
    _a("val/contain_eos_token", "len/eos_frac"),
    *_HF_LOOP,
)

# TRL's offline preference trainers (DPOTrainer, KTOTrainer, ORPO, CPO; LLaMA-Factory's trainers
# subclass them): nothing is sampled, so there is no reward or KL series, only the implicit
# rewards, whose accuracy is the run's measure of progress (canonical.task_metrics).
_TRL_DPO = (*_DPO_IMPLICIT, *_HF_LOOP)

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
    _a("rollout_corr/k3_kl", "mismatch/k3_kl", estimator="k3", reduction=_TOK, note="the same KL by the k3 estimator (>= 0)"),
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
    _a("actor_loss", "loss/policy", note="last minibatch of the step (TensorBoard); the console prints the step's mean"),
    _a("critic_loss", "loss/value", note="last minibatch of the step (TensorBoard); the console prints the step's mean"),
    # what ReMax, a DeepSpeed-Chat fork, prints on its reward line besides the reward
    # (ingest/readers/deepspeed_chat_console.py, docs/sources.md#deepspeed-chat-console-logs)
    _a(
        "kl",
        "kl/ref",
        estimator="k1",
        reduction=_TOK,
        between="ref",
        note="ReMax: logp - ref_logp over answer tokens, token mean (the full KL when the rollout kept it): can be < 0",
    ),
    _a("entropy", "policy/entropy", reduction=_TOK, note="ReMax: answer-token mean; 0 when the rollout kept no entropy"),
    _a("response_length", "len/response_mean", note="ReMax: answer tokens, printed rounded to whole tokens"),
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
    # the off-policy scripts (dqn*.py, sac_continuous_action.py, td3/ddpg_continuous_action.py):
    # the Q-network's TD loss and its mean prediction on the sampled batch
    _a("losses/td_loss", "loss/value", note="DQN: the Q-network's TD loss"),
    _a("losses/q_values", "value/mean", note="DQN: mean Q of the batch's actions"),
    _a("losses/qf_loss", "loss/value", note="SAC/TD3/DDPG: the Q-functions' TD loss"),
    _a("losses/qf1_loss", "loss/value"),
    _a("losses/qf1_values", "value/mean", note="SAC/TD3/DDPG: mean Q1 of the batch's actions"),
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

# Stable-Baselines3's DQN (and sb3-contrib's QR-DQN): ``train/loss`` is the Q-network's TD loss
# (dqn.py ``train``: the smooth L1 loss between the current and the target Q-values), the
# critic's loss, not a total of policy and value terms.  Only DQN logs ``rollout/exploration_rate``
# (dqn.py ``_on_step``), which tells its log from the other algorithms' (docs/sources.md#sb3-logger-keys).
SB3_DQN_MARKER = "rollout/exploration_rate"
SB3_DQN = tuple(_a("train/loss", "loss/value", note="DQN: the Q-network's TD loss") if a.raw == "train/loss" else a for a in _SB3)

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

# OpenAI Spinning Up's EpochLogger (``progress.txt``, tab-separated; docs/sources.md#spinning-up-logger-keys):
# per-epoch averages; ``KL`` is the mean of logp_old - logp after the policy update (k1, old vs
# new), ``Entropy`` the policy's before it, ``VVals`` the critic's predictions; the off-policy
# algorithms' critic is a Q-function, its TD loss ``LossQ`` (``LossQ1`` / ``LossQ2`` in the
# TensorFlow SAC) and its predictions ``QVals`` (``Q1Vals`` / ``Q2Vals`` with twin critics).
_SPINUP = (
    _a("AverageEpRet", "reward/score", note="mean return of the episodes that ended in the epoch"),
    _a("StdEpRet", "reward/std"),
    _a("KL", "kl/old", estimator="k1", between="old"),
    _a("Entropy", "policy/entropy"),
    _a("ClipFrac", "policy/clipfrac"),
    _a("LossPi", "loss/policy"),
    _a("LossV", "loss/value"),
    _a("AverageVVals", "value/mean"),
    _a("LossQ", "loss/value", note="DDPG, TD3, SAC (PyTorch): the Q-functions' TD loss (summed over twin Q-functions)"),
    _a("LossQ1", "loss/value", note="SAC (TensorFlow 1): the first Q-function's TD loss"),
    _a("AverageQVals", "value/mean", note="DDPG: the Q-function's mean prediction"),
    _a("AverageQ1Vals", "value/mean", note="TD3, SAC: the first Q-function's mean prediction"),
)

# OpenAI baselines ppo1 (``pposgd_simple.py``), trpo_mpi and acktr (docs/sources.md#classic-rl-arguments):
# ``EpRewMean`` is the mean return of the last 100 episodes; ppo1's losses are ``loss_<name>``
# of its loss_names (``kl`` between the old and the new policy); ``ev_tdlam_before`` / acktr's
# ``EVBefore`` the critic's explained variance of the batch before its update.
_BASELINES_TABULAR = (
    _a("EpRewMean", "reward/score", note="mean return of the last 100 episodes"),
    _a("ev_tdlam_before", "value/explained_var"),
    _a("EVBefore", "value/explained_var"),
    _a("loss_kl", "kl/old", between="old"),
    _a("loss_ent", "policy/entropy"),
    _a("loss_pol_surr", "loss/policy"),
    _a("loss_vf_loss", "loss/value"),
)

# OpenAI's curiosity PPO (openai/large-scale-curiosity cppo_agent.py, random-network-distillation
# ppo_agent.py, and their ports): ``eprew`` is the mean of a deque of the last 100 episode returns,
# the optimiser's statistics are ``opt_<name>``, ``ev`` the explained variance, ``tcount`` the
# timesteps.
_CURIOSITY = (
    _a("eprew", "reward/score", note="mean return of the last 100 episodes"),
    _a("opt_approxkl", "kl/old", between="old"),
    _a("opt_clipfrac", "policy/clipfrac"),
    _a("opt_ent", "policy/entropy"),
    _a("opt_pg", "loss/policy"),
    _a("opt_vf", "loss/value"),
    _a("ev", "value/explained_var"),
)

# OpenAI baselines DDPG (``baselines/ddpg/training.py``): ``rollout/return_history`` is the mean of
# a deque of the last 100 episode returns, ``rollout/return`` the mean over the epoch's episodes.
_BASELINES_DDPG = (
    _a("rollout/return_history", "reward/score", note="mean return of the last 100 episodes"),
    _a("rollout/return", "reward/score", note="mean return of the epoch's episodes"),
    _a("rollout/Q_mean", "value/mean", note="mean Q of the actions taken in the epoch"),
)

# Classic-RL custom loggers (baselines, procgen ports): episode returns are the reward, and
# a bare ``kl`` is the old-vs-new KL of the PPO update (baselines ppo1/ppo2), not a ref-KL.
# Unity ML-Agents' TensorBoard statistics (page Using-Tensorboard.md: "Environment/Cumulative
# Reward - the mean cumulative episode reward over all agents. Should increase during a successful
# training session"; docs/sources.md#classic-rl-arguments)
_MLAGENTS = (
    _a("Environment/Cumulative Reward", "reward/score", note="ML-Agents: mean cumulative episode reward over all agents"),
    # MA-POCA's team return (poca/trainer.py), read where the agents' own rewards are a constant
    # (an environment that pays only group rewards: ``map_tags``' constant synonyms)
    _a("Environment/Group Cumulative Reward", "reward/score", note="ML-Agents MA-POCA: mean cumulative group reward"),
    _a("Policy/Extrinsic Value Estimate", "value/mean"),
    _a("Policy/Entropy", "policy/entropy"),
    _a("Losses/Policy Loss", "loss/policy"),
    _a("Losses/Value Loss", "loss/value"),
    _a("Policy/Learning Rate", "opt/lr"),
)

# skrl's agents (skrl/agents/torch/base.py ``track_data``): "Total reward" is the cumulative
# reward of the last finished episodes (``_track_rewards``, a deque of 100), the curve skrl keeps
# its best checkpoint by; "Instantaneous reward" is the mean per-step reward of one rollout step,
# which zig-zags within each episode and is not what the author reads (docs/sources.md#classic-rl-arguments)
_SKRL = (
    _a("Reward / Total reward (mean)", "reward/score", note="skrl: mean return of the last finished episodes"),
    _a("Loss / Policy loss", "loss/policy"),
    _a("Loss / Value loss", "loss/value"),
    _a("Loss / Entropy loss", "loss/entropy"),
    _a("Learning / Learning rate", "opt/lr"),
)

# rl_games (a2c_common.py ``write_stats`` and ``train``; IsaacGymEnvs' runs/<task>/summaries):
# ``rewards/step`` is a running mean return of about the last ``games_to_track`` (100) finished
# games (torch_ext.AverageMeter) against
# the frames played (``/frame`` in older releases; ``/iter`` and ``/time`` are copies against the
# epoch and the seconds, left off the step axis); ``info/kl`` the mean KL between the policy before
# and after the update; ``losses/a_loss`` / ``losses/c_loss`` the actor and critic losses.
_RL_GAMES = (
    _a("rewards/step", "reward/score", note="rl_games: running mean return of about the last 100 finished games"),
    _a("rewards/frame", "reward/score", note="rl_games: running mean return of about the last 100 finished games"),
    _a("losses/a_loss", "loss/policy"),
    _a("losses/c_loss", "loss/value"),
    _a("losses/entropy", "policy/entropy"),
    _a("info/kl", "kl/old", between="old"),
    _a("info/last_lr", "opt/lr"),
)

# Sample Factory (sample_factory/algo/runners/runner.py, learning/learner.py): ``reward/reward`` is
# the mean return of the last ``stats_avg`` (100 by default) finished episodes; the learner's
# ``train/kl_divergence`` is the KL between the behaviour policy that sampled the batch and the
# policy being trained (``kl_old``), an old-vs-new KL, not a KL to a reference.
_SAMPLE_FACTORY = (
    _a("reward/reward", "reward/score", note="Sample Factory: mean return of the last stats_avg (100) episodes"),
    _a("train/kl_divergence", "kl/old", between="old", note="Sample Factory: KL to the behaviour policy (kl_old)"),
    _a("train/fraction_clipped", "policy/clipfrac"),
    _a("train/entropy", "policy/entropy"),
    _a("train/policy_loss", "loss/policy"),
    _a("train/value_loss", "loss/value"),
    _a("train/loss", "loss/total"),
    _a("train/grad_norm", "grad/norm"),
    _a("train/lr", "opt/lr"),
)

_GENERIC_RL = (
    _a("eprewmean", "reward/score"),
    # the Monitor wrapper's episode file (ingest/readers/sb3_monitor.py)
    _a("monitor/r", "reward/score", note="the return of each finished episode (Monitor's r)"),
    _a("episode_reward", "reward/score"),
    _a("mean 100 episode reward", "reward/score"),
    _a("mean_episode_rewards", "reward/score"),
    _a("Rewards/mean_episodes", "reward/score"),
    _a("ep_rew_mean", "reward/score"),
    _a("kl", "kl/old", between="old"),
    # a home-made PPO's "kl_divergence" is its update's KL, as its bare "kl" (real22's economics PPO)
    _a("kl_divergence", "kl/old", between="old"),
    _a("kl_div", "kl/old", between="old"),
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
    # a Q-learning agent's mean predicted Q (keras-rl's DQNAgent metrics_names, the CS285 homework
    # logger's q_values): the critic's estimate of the return (Q_LEARNING reads its "loss")
    _a("mean_q", "value/mean", note="keras-rl DQN: mean of the Q-network's outputs"),
    _a("q_values", "value/mean", note="CS285 DQN/SAC: mean predicted Q"),
    # SB3's logger names, for a run too short to carry the sb3 markers or written by another
    # loop that borrowed them (docs/sources.md#sb3-logger-keys)
    *_SB3,
    *_SPINUP,
    *_BASELINES_TABULAR,
    *_BASELINES_DDPG,
    *_CURIOSITY,
    *_MLAGENTS,
    *_SKRL,
    *_RL_GAMES,
    *_SAMPLE_FACTORY,
)

# A classic-RL log with a Q-value estimate (:data:`Q_MARKERS`) and no policy or value loss is a
# Q-learning agent's: keras-rl's DQNAgent writes ``loss`` (the TD loss of its Q-network, dqn.py
# ``compute_loss``) beside ``mean_q``; its only loss is the critic's (as SB3_DQN's ``train/loss``).
Q_MARKERS = ("mean_q", "q_values")
Q_LEARNING = tuple(_a("loss", "loss/value", note="Q-learning: the Q-network's TD loss") if a.raw == "loss" else a for a in _GENERIC_RL)

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
    "trl_dpo": _TRL_DPO,
    "trl_async_grpo": _TRL_ASYNC_GRPO,
    "other": _OTHER,
    "unknown": _GENERIC,
    "unknown_rl": _GENERIC_RL,
}
