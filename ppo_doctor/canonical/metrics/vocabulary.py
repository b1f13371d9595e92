"""The canonical metric vocabulary (written out in docs/metrics.md): every
canonical name with what it means, the HF Trainer's final-row totals, and the KL estimators
that cannot be negative."""

from __future__ import annotations

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
    "mismatch/k3_kl": "the same KL by the k3 estimator (never negative)",
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
# into the run's config (docs/sources.md#hf-trainer-logs); one logged every step stays a series.
FINAL_TOTALS = ("train_runtime", "train_samples_per_second", "train_steps_per_second", "total_flos", "train_loss", "train_tokens_per_second")

# Estimators whose value cannot be negative (docs/sources.md#kl-estimators): a negative value from one of them
# is not "negative KL" from generation settings but a bug or a misread log.
NONNEGATIVE_ESTIMATORS = frozenset({"k2", "k3", "sqrt_k3", "full", "abs"})
