"""Framework facts, in one place: which trainers the analyzer knows, which of them train LLMs
and which classic-control / game policies, and how their logs name evaluation series.

* :data:`FRAMEWORKS`: the framework ids :func:`guess_framework` returns (``Run.framework``),
  with what each one is; :data:`MARKERS` and :data:`CONFIG_MARKERS`, the tag and config keys
  that point to each; :data:`FORMAT_FRAMEWORKS`, the log formats only one of them writes.
* :func:`domain`: ``"llm"``, ``"classic"`` or ``"unknown"`` for a run, decided by its
  framework id alone when the id is known, else by its mapped metrics: one that only LLM
  training produces (a reference KL, response lengths) or generated texts make it an LLM run.
  Ids are compared whole, never as substrings, so a name that merely contains "gym" or "trl"
  decides nothing. The rules (``rules/common``) and the diagnosis (``diagnose/evidence``) both
  read it. An unknown framework's log with classic-RL episode-return tags (:data:`EPISODE_TAGS`,
  :func:`logs_episodes`) is read with the classic-RL spellings of the generic alias table, but
  its domain stays ``"unknown"``: classifying it as classic RL would drop PD902's "KL health not
  judged" note on three corpus runs (gail-ppo-cartpole-tf2, procgen-starpilot-ppo-conceptppo,
  tf1-a2c-minigrid-stagnant), a behaviour change left to its own issue.
* :data:`EVAL_PREFIXES` and :func:`is_eval_key`: keys of evaluation rows, kept apart from the
  training series by every reader; :data:`VERL_CONSOLE_EVAL_PREFIXES` and
  :data:`HF_EVAL_ROW_PREFIXES` are the two formats whose names differ (see there).

Sources: the framework facts of docs/sources.md, per-framework metric keys (from
docs/sources.md#trl-legacy-ppo-metrics to docs/sources.md#sb3-logger-keys).
"""

from __future__ import annotations

import re

from typing import Any, Callable, Iterable, Literal

Domain = Literal["llm", "classic", "unknown"]

FRAMEWORKS: dict[str, str] = {
    "trl_legacy": "TRL PPOTrainer <= 0.11 (log_stats: ppo/*, env/*, objective/*)",
    "trl": "TRL PPOv2 / new PPOTrainer 0.9-1.12 (objective/*, policy/*_avg, loss/*_avg, val/*)",
    "trl_rloo": "TRL RLOOTrainer (<= 0.21 like PPOv2 without a critic; >= 0.22 GRPO-style, k1 kl)",
    "trl_grpo": "TRL GRPOTrainer (reward, reward_std, kl (k3), completions/*, clip_ratio/*)",
    "trl_async_grpo": "TRL AsyncGRPOTrainer (experimental): GRPO names, but kl is to the rollout policy; perf/*, sample/*",
    "trl_online_dpo": "TRL OnlineDPOTrainer (objective/* like PPOv2, rewards/{chosen,rejected,margins,accuracies})",
    "trl_dpo": "TRL's offline preference trainers, DPOTrainer and its kin (ORPO, KTO, CPO; LLaMA-Factory builds on them): "
    "rewards/{chosen,rejected,margins,accuracies} without objective/*, nothing sampled",
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

# Classic-control / game trainers (SB3, SB2, CleanRL): no reference policy, so no reference KL;
# lr 3e-4 and 10 PPO epochs are their normal recipe (CleanRL defaults, 37-details blog;
# docs/sources.md#reference-recipes).
CLASSIC_RL_FRAMEWORKS = frozenset({"sb3", "sb2", "cleanrl"})
# Every other known id trains a language model.
LLM_FRAMEWORKS = frozenset(FRAMEWORKS) - CLASSIC_RL_FRAMEWORKS - {"unknown"}
# TRL's GRPO trainers: the KL term is off by default (beta = 0 since TRL 0.19).
GRPO_FRAMEWORKS = frozenset({"trl_grpo", "trl_async_grpo"})
# Offline preference optimisation (DPO and its kin): nothing sampled, no reward, no KL series.
PREFERENCE_FRAMEWORKS = frozenset({"trl_dpo"})

# Canonical metrics only LLM training produces: a KL to a reference model, its coefficient or
# penalty, response lengths.
LLM_METRICS = ("kl/ref", "kl/coef", "reward/kl_penalty", "len/response_mean", "len/response_clip_ratio")
# Raw tags of classic-RL episode returns (baselines, SB3's Monitor, Spinning Up, custom ports; docs/sources.md#sb3-logger-keys):
# an unknown framework's log that has one is read with the classic-RL spellings.
EPISODE_TAGS = (
    "episode_reward",
    "monitor/r",  # the Monitor wrapper's monitor.csv (SB3, baselines)
    "eprewmean",
    "mean 100 episode reward",
    "mean_episode_rewards",
    "Rewards/mean_episodes",
    "ep_rew_mean",
    "rollout/ep_rew_mean",
    "AverageEpRet",  # Spinning Up's EpochLogger
    "EpRewMean",  # baselines ppo1 / trpo_mpi / acktr
    "rollout/return_history",  # baselines DDPG
    "eprew",  # OpenAI's curiosity PPO (large-scale-curiosity, random-network-distillation)
    "Environment/Cumulative Reward",  # Unity ML-Agents
    "Reward / Total reward (mean)",  # skrl
    "rewards/step",  # rl_games
    "rewards/frame",  # rl_games before 1.6
    "reward/reward",  # Sample Factory
)

# The HF Trainer (TensorBoard/W&B) and OpenRLHF prefix every key with ``train/``.
HF_PREFIX = "train/"


def candidate_keys(tag: str) -> list[str]:
    """The keys a raw tag may be listed under: itself, then without ``train/``.

    The HF Trainer (TensorBoard/W&B) and OpenRLHF prefix every key with ``train/``, while
    SB3's own ``train/approx_kl`` keeps it, so the exact tag is tried first (docs/sources.md#metric-prefixes).
    """
    keys = [tag]
    if tag.startswith(HF_PREFIX) and len(tag) > len(HF_PREFIX):
        keys.append(tag[len(HF_PREFIX) :])
    return keys


def logs_episodes(tags: Iterable[str]) -> bool:
    """Whether raw tags include a classic-RL episode return (:data:`EPISODE_TAGS`), compared whole."""
    keys = {k for t in tags for k in candidate_keys(t)}
    return any(m in keys for m in EPISODE_TAGS)


def domain(framework: str | None, has: Callable[[str], bool] = lambda _m: False, *, texts: bool = False) -> Domain:
    """What a run trains: ``"classic"`` for a classic-RL framework id, ``"llm"`` for an LLM
    one; a run of an unknown framework is ``"llm"`` when it logs an LLM-only metric
    (:data:`LLM_METRICS`, ``has`` tells which canonical metrics it has) or generated ``texts``,
    else ``"unknown"``. Ids are compared whole (a made-up id such as ``"gymnastics"`` is
    unknown, not classic)."""
    fw = (framework or "unknown").lower()
    if fw in CLASSIC_RL_FRAMEWORKS:
        return "classic"
    if fw in LLM_FRAMEWORKS:
        return "llm"
    return "llm" if texts or any(has(m) for m in LLM_METRICS) else "unknown"


# -- guessing the framework of a log ----------------------------------------------------------------
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
    # DPOTrainer (``logits/chosen`` until TRL 0.2x), ORPOTrainer (``log_odds_ratio``,
    # ``log_odds_chosen``), LLaMA-Factory's ORPO (``odds_ratio_loss``); the implicit rewards are
    # shared with OnlineDPOTrainer, which ``guess_framework`` tells apart by its objective/* names
    "trl_dpo": {
        "rewards/margins": 2,
        "rewards/accuracies": 2,
        "logps/chosen": 1,
        "logits/chosen": 2,
        "log_odds_ratio": 3,
        "log_odds_chosen": 3,
        "odds_ratio_loss": 3,
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
    # its ``_sum`` tags are its own; ``actor_loss``, ``critic_loss`` and ``reward`` are what any
    # home-made actor-critic loop calls its numbers (a LunarLander PPO of the labelled set read
    # as DeepSpeed-Chat, and so as LLM RL, on those three alone)
    "deepspeed_chat": {"actor_loss_sum": 3, "critic_loss_sum": 3, "actor_loss": 1, "critic_loss": 1, "reward": 0.5},
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
        # the logger's own bookkeeping, written by every SB3 algorithm, on- and off-policy
        # (OnPolicyAlgorithm / OffPolicyAlgorithm ``_dump_logs``): an off-policy log (DDPG, TD3,
        # SAC) has none of PPO's train/* names, and its train/actor_loss, train/critic_loss are
        # DeepSpeed-Chat's names too (blind set real19: an SB3 DDPG log read as DeepSpeed-Chat)
        "time/total_timesteps": 2,
        "time/fps": 1,
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
# Log formats only one trainer writes: a run read from one names its framework, whatever its tags
# score.  DeepSpeed-Chat's console lines carry ``reward``, ``actor_loss`` and ``critic_loss``
# alone, which are too common to be markers (see MARKERS), while their layout is its own
# (ingest/readers/deepspeed_chat_console.py).
FORMAT_FRAMEWORKS: dict[str, str] = {"deepspeed_chat_console": "deepspeed_chat"}
# One name is no fingerprint: a home-made loop borrows a name a framework also writes (a CS336
# GRPO loop's ``train/clip_fraction``, SB3's spelling, read the run as SB3 and so as classic RL,
# issue 37: "a guess is not a fact").  A framework needs two of its markers (tags or config keys),
# or one config key that scores :data:`MIN_FRAMEWORK_SCORE` alone.
MIN_FRAMEWORK_MARKERS = 2
# What only OnlineDPOTrainer of the DPO family logs: scores and a KL of completions it sampled.
ONLINE_DPO_PREFIX = "objective/"
ONLINE_DPO_EOS = "val/contain_eos_token"


def flattened(name: str) -> str:
    """``name`` as a home-made export writes it when it flattens a namespaced metric into one
    column name, ``/`` as ``_`` (``actor/pg_clipfrac`` -> ``actor_pg_clipfrac``: the veRL
    agent-loop CSV of the labelled set real21).  Alias tables and framework markers accept that
    spelling after their own: it is the name with its separators lost, not a new name."""
    return name.replace("/", "_")


def _marker_hit(marker: str, keys: set[str], prefixes: Iterable[str]) -> bool:
    if marker.endswith("*"):
        stem = marker[:-1]
        return any(k.startswith(stem) for k in prefixes)
    return marker in keys or ("/" in marker and flattened(marker) in keys)


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
    """Evidence score per framework from tag and config markers; a framework with fewer than
    :data:`MIN_FRAMEWORK_MARKERS` of its markers in the log scores nothing, unless one of them is a
    config key that scores :data:`MIN_FRAMEWORK_SCORE` alone."""
    keys: set[str] = set()
    for t in tags:
        keys.update(candidate_keys(t))
    scores: dict[str, float] = {}
    cfg_keys = list(flat_config)
    for fw in FRAMEWORK_ORDER:
        hits = [w for m, w in MARKERS.get(fw, {}).items() if _marker_hit(m, keys, keys)]
        cfg = [w for m, w in CONFIG_MARKERS.get(fw, {}).items() if _config_hit(m, cfg_keys)]
        # a config key that scores alone is the trainer's own settings tree (veRL's actor_rollout_ref)
        if len(hits) + len(cfg) >= MIN_FRAMEWORK_MARKERS or max(cfg, default=0) >= MIN_FRAMEWORK_SCORE:
            scores[fw] = sum(hits) + sum(cfg)
    return scores


def format_framework(fmt: str) -> str | None:
    """The framework that a run's format (reader names joined by ``+``) names
    (:data:`FORMAT_FRAMEWORKS`), or None."""
    return next((FORMAT_FRAMEWORKS[f] for f in fmt.split("+") if f in FORMAT_FRAMEWORKS), None)


def guess_framework(tags: Iterable[str], flat_config: dict[str, Any] | None = None, fmt: str = "") -> str:
    """The most likely framework id (see :data:`FRAMEWORKS`), ``unknown`` below the threshold;
    the framework a format only one trainer writes names (:func:`format_framework`) when ``fmt``,
    the run's format, is one.

    RLOO is told from its siblings by config (``rloo_k``) or, for RLOO <= 0.21, by the
    PPOv2 names without any critic key.  OnlineDPOTrainer is told from the offline preference
    trainers (``trl_dpo``), whose implicit rewards it shares, by what only sampling produces: its
    ``objective/*`` scores and KL, ``val/contain_eos_token`` (docs/sources.md#trl-dpo-metrics).
    """
    named = format_framework(fmt)
    if named is not None:
        return named
    tags = list(tags)
    flat = flat_config or {}
    scores = framework_scores(tags, flat)
    if not scores:
        return "unknown"
    best = min(scores, key=lambda fw: (-scores[fw], FRAMEWORK_ORDER.index(fw)))
    if scores[best] < MIN_FRAMEWORK_SCORE:
        return "unknown"
    keys = {k for t in tags for k in candidate_keys(t)}
    if best in ("trl_online_dpo", "trl_dpo"):
        sampled = any(k.startswith(ONLINE_DPO_PREFIX) for k in keys) or ONLINE_DPO_EOS in keys
        return "trl_online_dpo" if sampled else "trl_dpo"
    if best in ("trl", "trl_grpo"):
        if _config_hit("rloo_k", list(flat)):
            return "trl_rloo"
        if best == "trl" and "loss/policy_avg" in keys and not keys & {"loss/value_avg", "val/clipfrac_avg"}:
            return "trl_rloo"  # RLOO 0.16-0.21: PPOv2 names, no critic (docs/sources.md#trl-rloo-metrics)
    return best


def framework_proof(framework: str, flat_config: dict[str, Any], fmt: str) -> str:
    """What in the log proves ``framework`` (its config keys, or a file layout only that trainer
    writes), or "" when only its metric names point at it: then the framework is a guess, said as
    "looks like ...", and none of its defaults is assumed (issue 37: a home-made GRPO loop that
    logs TRL's names is not TRL)."""
    hits = [m for m in CONFIG_MARKERS.get(framework, {}) if _config_hit(m, list(flat_config))]
    if hits:
        return "its config (" + ", ".join(sorted(hits)[:3]) + ")"
    if framework.startswith("trl") and "trainer_state" in fmt.split("+"):
        return "the Hugging Face Trainer's trainer_state.json with TRL's metric names"
    if format_framework(fmt) == framework:
        names = ", ".join(f for f in fmt.split("+") if f in FORMAT_FRAMEWORKS)
        return f"its log format ({names}), which only {FRAMEWORKS[framework].split(' (')[0]} writes"
    return ""


# -- evaluation series ------------------------------------------------------------------------------
# Keys of evaluation rows, kept apart from training series by every reader of key-value logs
# (JSONL, CSV, W&B, MLflow, live monitors): HF Trainer's rewrite_logs (``eval/``, ``test/``) and
# its flat ``eval_`` keys (docs/sources.md#hf-trainer-logs), veRL's validation metrics
# (``val-core/``, ``val-aux/``, docs/sources.md#verl-metrics), Lightning-style ``validation/``.
# ``val/`` is NOT here: in TRL it is the value head / policy ratio (``val/clipfrac_avg``,
# ``val/ratio``, docs/sources.md#trl-ppo-metrics), not validation.
EVAL_PREFIXES = ("eval/", "eval_", "test/", "val-core/", "val-aux/", "validation/")
# veRL's console log has no TRL keys beside it, and older veRL prints validation as ``val/``.
VERL_CONSOLE_EVAL_PREFIXES = ("val-core/", "val-aux/", "val/")
# Rows of trainer_state.json's log_history: HF Trainer's evaluate/predict rows carry flat
# ``eval_`` / ``test_`` keys (``metric_key_prefix``), never the ``/`` forms of rewrite_logs.
HF_EVAL_ROW_PREFIXES = ("eval_", "test_")


def is_eval_key(tag: str) -> bool:
    """True for keys of evaluation / test rows (kept apart as ``RawRun.eval_series``)."""
    return tag.startswith(EVAL_PREFIXES)


# Text a trainer writes about its own settings (Unity ML-Agents' ``Hyperparameters/text_summary``,
# a ``config`` or ``args`` dump): never a sample the policy generated, so never a mark of LLM RL.
SETTINGS_TEXT = re.compile(r"(^|[/_. ])(hyperparameters?|hparams|config|configuration|args|arguments|settings)([/_. ]|$)", re.I)


def is_settings_text(tag: str) -> bool:
    """True for a text tag that holds the run's settings (:data:`SETTINGS_TEXT`), not a sample."""
    return bool(SETTINGS_TEXT.search(tag))


# What ppo_doctor's own live callbacks write into a run's TensorBoard / W&B log (alert texts and
# one count per severity, docs/live.md): the doctor's words, never a metric or a sample of the run.
DOCTOR_TAG_PREFIX = "ppo_doctor/"


def is_doctor_tag(tag: str) -> bool:
    """True for a tag the doctor itself logged (:data:`DOCTOR_TAG_PREFIX`)."""
    return tag.startswith(DOCTOR_TAG_PREFIX)


def strip_eval_prefix(tag: str) -> str:
    """The training name of an eval key (``eval_reward`` -> ``reward``), for mapping it."""
    for p in EVAL_PREFIXES:
        if tag.startswith(p) and len(tag) > len(p):
            return tag[len(p) :]
    return tag


__all__ = [
    "FRAMEWORKS",
    "FRAMEWORK_ORDER",
    "MARKERS",
    "CONFIG_MARKERS",
    "MIN_FRAMEWORK_SCORE",
    "MIN_FRAMEWORK_MARKERS",
    "FORMAT_FRAMEWORKS",
    "format_framework",
    "framework_scores",
    "guess_framework",
    "CLASSIC_RL_FRAMEWORKS",
    "LLM_FRAMEWORKS",
    "GRPO_FRAMEWORKS",
    "PREFERENCE_FRAMEWORKS",
    "LLM_METRICS",
    "EPISODE_TAGS",
    "HF_PREFIX",
    "Domain",
    "candidate_keys",
    "flattened",
    "logs_episodes",
    "domain",
    "EVAL_PREFIXES",
    "VERL_CONSOLE_EVAL_PREFIXES",
    "HF_EVAL_ROW_PREFIXES",
    "is_eval_key",
    "strip_eval_prefix",
]
