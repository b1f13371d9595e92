"""The cause catalog: every cause of PPO/RLHF instability the two guides name, with fixes.

Sources (``reference/guides-digest.md``; originals in ``reference/seeds/``): the RLHF PPO
troubleshooting guide (``000_*``, "causes and solutions" 1-4) and TRL's PPO training FAQ
(``003_*``: negative KL, generation settings, debugging advice).  Typical values come from
``reference/thresholds-and-peers.md`` §4.2 (recipes) and §5 (user threads); each fix names
the knob, the direction and a typical value.

Cause ids are fixed (DESIGN.md "Causes"); rules refer to them in ``Rule.causes``.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Cause:
    """One possible root cause: what it is, why it produces its symptoms, how to fix it."""

    id: str
    title: str
    explanation: str
    fixes: tuple[str, ...]
    source: str  # where in the guides (or the peer threads) this cause comes from
    knobs: tuple[str, ...] = field(default=())  # canonical hyper-parameters involved
    # (fix index, canonical knob, "raise" | "lower", low, high, domain): that fix moves the knob
    # into [low, high] for runs of that domain ("any", "llm" or "classic"); diagnosis drops it for
    # a run whose config (or, for the learning rate, logged rate) already sits there or beyond
    # (a run with kl_coef 0.2 is not told to "raise it toward 0.05-0.2").
    fix_ranges: tuple[tuple[int, str, str, float, float, str], ...] = field(default=())


CAUSES: tuple[Cause, ...] = (
    Cause(
        "kl-coef-too-low",
        "KL penalty coefficient (beta) too low",
        "The reward being optimised is R = r - beta*KL(policy || reference). With a small or zero beta "
        "nothing holds the policy near the SFT model: KL climbs and stays high, the text drifts into "
        "incoherence and the policy starts exploiting the reward model.",
        (
            "Raise the initial KL coefficient (TRL `kl_coef`/`init_kl_coef`, OpenRLHF `--init_kl_coef`, veRL "
            "`algorithm.kl_ctrl.kl_coef` or `actor.kl_loss_coef`) toward 0.05-0.2 (TRL legacy default 0.2, "
            "N+ implementation details 0.05).",
            "Or use an adaptive KL controller with a target: TRL legacy `adap_kl_ctrl=True, target=6, horizon=10000` "
            "(Ziegler et al. 2019; the guide cites targets of 3-10), veRL `kl_ctrl.type=adaptive`, OpenRLHF `--kl_target`.",
            "Keep the sequence-level KL inside the 0-10 band the TRL FAQ recommends; stop or roll back to a "
            "checkpoint when it leaves the band.",
        ),
        "guide 000 cause 1 (KL problems: beta too low); FAQ 003 'why a reference model'",
        ("kl_coef", "adaptive_kl", "target_kl"),
        ((0, "kl_coef", "raise", 0.05, 0.2, "any"),),
    ),
    Cause(
        "adaptive-kl-target-too-high",
        "Adaptive KL target set too high",
        "An adaptive controller only raises beta when the measured KL exceeds its target. A target far "
        "above the healthy band lets the policy drift a long way before the penalty reacts; the guide "
        "says to tune the target, not just beta.",
        (
            "Lower the adaptive target to about 6 nats (sequence-level; the guide's range is 3-10) "
            "(TRL legacy `target`, OpenRLHF `--kl_target`, veRL `kl_ctrl.target_kl`).",
            "Shorten the controller horizon (TRL default 10000 episodes) so beta reacts faster.",
            "Watch `kl/coef`: a steadily rising beta often precedes numerical instability (TRL logging docs).",
        ),
        "guide 000 cause 1 fix 'adaptive KL controller ... tune the target KL value'",
        ("adaptive_kl", "target_kl"),
    ),
    Cause(
        "lr-too-high",
        "Policy learning rate too high",
        "Each PPO update moves the policy too far: the importance ratio leaves the trust region, clipping "
        "saturates, KL to the old and the reference policy jumps, and metrics swing instead of converging.",
        (
            "Lower the policy learning rate 3-10x; LLM RLHF recipes use about 1e-6 to 1.4e-5 (TRL default "
            "1.41e-5, PPO-max 5e-7); classic-control PPO uses about 3e-4 with linear annealing.",
            "Add warm-up and decay instead of a constant high rate.",
            "Clip gradients (`max_grad_norm` 0.5-1.0) so single batches cannot take huge steps.",
            "If the instability started after a hyper-parameter change, revert it or try intermediate values.",
        ),
        "guide 000 cause 1 (updates too aggressive: learning rate too high); diagnostics 'hyper-parameter sensitivity'",
        ("lr",),
    ),
    Cause(
        "no-lr-annealing",
        "Learning rate not annealed",
        "Classic-RL PPO decays its learning rate linearly to 0 over training (CleanRL `anneal_lr=True`, the "
        "baselines Atari and MuJoCo settings). Held constant, late updates are as large as the first ones "
        "while the policy is already good, and a run that learned well can fall off its peak and stay down "
        "(the 'performance collapse' of long PPO runs).",
        (
            "Decay the learning rate linearly to 0 over the run (CleanRL `--anneal-lr`, SB3 "
            "`learning_rate=lambda progress: lr * progress`, HF `lr_scheduler_type='linear'`).",
            "Keep the best checkpoint by reward and stop when the reward has plateaued.",
        ),
        "Engstrom et al. 2020 'Implementation Matters' (LR annealing is one of PPO's code-level optimisations); "
        "Huang et al. 2022 '37 implementation details of PPO' (detail 4)",
        ("lr",),
    ),
    Cause(
        "too-many-ppo-epochs",
        "Too many optimisation passes per rollout batch",
        "Every extra epoch or minibatch step over the same rollouts pushes the policy further from the one "
        "that generated them; the ratio drifts from 1, clipping saturates and updates become off-policy "
        "(trl#454: 4 epochs x 16 minibatches = 64 updates per batch).",
        (
            "Reduce PPO epochs per batch (`ppo_epochs`/`num_ppo_epochs`/`n_epochs`) to 1-4 and the number of "
            "minibatches per epoch (OpenAI's summarisation runs used 1 minibatch).",
            "Add old-vs-new KL early stopping: `target_kl` about 0.01-0.02, stop the epochs at 1.5x the target "
            "(Spinning Up, SB3).",
            "Watch the ratio (should stay near 1.0; TRL skips batches above 10) and the clip fraction (below 0.2-0.3).",
        ),
        "guide 000 cause 1 (too many PPO epochs); fix 'reduce PPO iterations'",
        ("ppo_epochs", "num_mini_batches"),
        ((0, "ppo_epochs", "lower", 1.0, 4.0, "any"),),
    ),
    Cause(
        "batch-too-large",
        "Rollout batch too large for the update schedule",
        "The guide lists an overly large batch among the causes of over-aggressive updates: a big rollout "
        "batch split into many gradient steps keeps optimising on data from an increasingly stale policy; "
        "MOSS-RLHF found smaller, more on-policy batches more stable.",
        (
            "Reduce the rollout batch (`batch_size`, veRL `data.train_batch_size`, OpenRLHF `--rollout_batch_size`) "
            "or the number of gradient steps taken on it, so updates stay on-policy.",
            "When scaling the batch up, scale the learning rate and the number of minibatches deliberately "
            "and change one thing at a time.",
        ),
        "guide 000 cause 1 (updates too aggressive: batch size too large); MOSS-RLHF#17",
        ("batch_size", "mini_batch_size", "num_mini_batches"),
    ),
    Cause(
        "no-grad-clipping",
        "No (or ineffective) gradient clipping",
        "Without a gradient-norm limit a single bad batch (an outlier reward, a near-zero probability) "
        "produces a huge update; gradient norms explode and the policy or critic can diverge to NaN.",
        (
            "Enable gradient clipping with `max_grad_norm` 0.5-1.0 (CleanRL/SB3 0.5, HF Trainer and veRL "
            "`grad_clip` 1.0) for the policy and, separately, the value network.",
            "Skip or zero updates whose gradient norm is non-finite (verl#789).",
            "If norms still spike, lower the learning rate as well.",
        ),
        "guide 000 cause 1 fix 'use gradient clipping'; diagnostics 'check gradients'",
        ("max_grad_norm",),
        ((0, "max_grad_norm", "lower", 0.5, 1.0, "any"),),
    ),
    Cause(
        "policy-not-from-sft",
        "Policy (or reference) not initialised from the SFT model",
        "PPO should start from the SFT checkpoint and measure KL against that same checkpoint. Starting "
        "from the pretrained base, or using a reference that differs from the initial policy (e.g. a base "
        "model reference with SFT PEFT adapters, trl#1340), gives a high KL from step 0 and an unstable run.",
        (
            "Initialise the PPO policy from the SFT checkpoint, not the pretrained base model.",
            "Make the reference model the same SFT checkpoint; with PEFT, build the reference from the SFT "
            "adapter (trl#1340).",
            "Check `kl/ref` at the first step: it should be about 0 when policy and reference start equal.",
        ),
        "guide 000 cause 1 fix 'initialise the policy correctly'; trl#1340",
        ("init_from", "ref_model"),
    ),
    Cause(
        "reward-model-flawed",
        "Reward model miscalibrated, noisy or exploitable",
        "The reward model scores behaviour that is not actually better (repetition, odd style, excessive "
        "exclamation marks or emoji, adversarial text), so reward rises while quality does not; noisy or "
        "poorly calibrated scores also make the reward jump around.",
        (
            "Inspect generated samples regularly, especially high-reward ones at the onset step: do they "
            "exploit the reward model? Compare with the SFT model's samples.",
            "Check the reward model on extreme cases (clearly good vs clearly bad responses must score "
            "differently) and on the dataset distribution; look at the reward distribution for skew and outliers.",
            "Recalibrate or retrain the reward model (better preference data, training objective, calibration).",
            "Start with a single reward signal before combining several.",
        ),
        "guide 000 cause 2 (reward-signal problems); FAQ 003 'check the reward model'",
        (),
    ),
    Cause(
        "reward-not-normalized",
        "Rewards not normalised or scaled",
        "Unnormalised rewards (large or drifting scale) produce huge advantages and returns: the policy "
        "update and especially the value loss blow up, and the critic cannot follow a moving scale "
        "(DeepSpeedExamples#556).",
        (
            "Normalise rewards per batch: subtract the mean and divide by the std (TRL `whiten_rewards=True`, "
            "OpenRLHF `--normalize_reward`, which needs the RM mean/std set (OpenRLHF#693)), or use running "
            "mean-std scaling.",
            "Alternatively normalise the reward model so SFT samples score mean 0, std 1 (Ziegler et al. 2019).",
            "Remove large constant reward multipliers (`reward_scale`).",
        ),
        "guide 000 cause 2 fix 'reward normalisation/scaling'",
        ("whiten_rewards", "reward_scale"),
    ),
    Cause(
        "reward-not-clipped",
        "Rewards not clipped",
        "Occasional extreme reward values dominate the batch and produce reward spikes and unstable updates.",
        (
            "Clip rewards to a fixed range such as [-10, 10] (PPO-max `reward_clip` 10, trlx `cliprange_reward` 10).",
            "Look at the reward distribution for outliers before and after clipping.",
        ),
        "guide 000 cause 2 fix 'reward clipping'",
        ("reward_clip",),
    ),
    Cause(
        "reward-hacking-length",
        "Reward exploited through length or repetition (no penalty term)",
        "The policy found a cheap way to raise the score, typically longer answers or repeated phrases, "
        "which the reward model over-rewards (OpenRLHF#236, MOSS-RLHF#17); a KL that is too weak lets it "
        "get there fast.",
        (
            "Add terms to the reward beyond the RM score: a length or repetition penalty, or TRL's "
            "`missing_eos_penalty` (N+ details use -1 when no EOS is produced).",
            "Increase the KL penalty (maintainer advice in OpenRLHF#236).",
            "Inspect the samples around the onset step to confirm the exploit.",
        ),
        "guide 000 cause 2 fix 'modify the reward function (repetition or length penalties)'",
        ("kl_coef",),
    ),
    Cause(
        "value-lr-mistuned",
        "Value-function learning rate mistuned",
        "The critic learns too fast (value loss swings or diverges) or too slowly (it cannot track the "
        "returns); either way the advantages are wrong and the policy update becomes unstable.",
        (
            "Give the value function its own learning rate, often higher than the policy's (PPO-max: critic "
            "1.5e-6 vs policy 5e-7; veRL `critic.optim.lr`, OpenRLHF `--critic_learning_rate`); lower it if "
            "the value loss diverges.",
            "Clip the value network's gradients separately.",
            "Clip value predictions (`cliprange_value` about 0.2).",
        ),
        "guide 000 cause 3 (value LR too high); fix 'tune the value learning rate'",
        ("value_lr", "lr"),
    ),
    Cause(
        "value-undertrained",
        "Value function undertrained or too weak",
        "The critic does not predict the returns (explained variance near or below 0), so advantages are "
        "mostly noise; value loss stays high and the policy performance fluctuates.",
        (
            "Train the value network more per batch (more value iterations or a higher `vf_coef`) and "
            "warm it up before PPO starts.",
            "Size the value network like the policy, or initialise it from the SFT (or reward) model minus its last layer.",
            "Scale the returns (running reward normalisation) so the MSE target stays learnable.",
        ),
        "guide 000 cause 3 (undertrained value function, unsuitable architecture)",
        ("vf_coef", "value_lr"),
    ),
    Cause(
        "gae-lambda",
        "GAE lambda (advantage estimation) mistuned",
        "With a low lambda the advantages lean on a poor critic (biased); without GAE or with lambda near "
        "1 and a long horizon they are high-variance; both destabilise the update.",
        (
            "Use GAE and tune lambda within 0.9-1.0 (0.95 is the common default; gamma 1.0 for LLM RLHF).",
            "If the critic is poor, prefer a higher lambda and fix the critic first.",
        ),
        "guide 000 cause 3 fix 'use GAE, tune lambda (0.9-1.0)'",
        ("lam", "gamma"),
    ),
    Cause(
        "generation-settings",
        "Rollouts not sampled purely from the policy (generation settings)",
        "top-k / top-p sampling, `min_length`/`min_new_tokens` (EOS suppressed) or greedy decoding produce "
        "tokens the policy would not sample; the policy can then make the KL estimate negative (log p < "
        "log p_ref on the chosen tokens) and farm the -beta*KL term as a bonus (TRL FAQ, trl#1017).",
        (
            "Generate rollouts by pure sampling: `min_length=-1, top_k=0, top_p=1.0, do_sample=True, "
            "pad_token_id=tokenizer.eos_token_id` and cap length with `max_new_tokens` (TRL FAQ).",
            "Remove `min_new_tokens`, `no_repeat_ngram_size` and repetition penalties from rollout generation (trl#1017).",
            "Compute log-probs at the sampling temperature; keep temperature/top_k/top_p giving enough "
            "diversity without random text.",
            "If negative KL appears with other settings, revert to these and check whether it persists.",
        ),
        "FAQ 003 'negative KL' and 'how to generate text for training'; guide 000 cause 4 (generation settings)",
        ("top_k", "top_p", "min_length", "min_new_tokens", "do_sample", "temperature"),
    ),
    Cause(
        "implementation-bug",
        "Implementation or data-handling bug",
        "Unpredictable behaviour, NaN losses, crashes, a KL that is negative although its estimator cannot "
        "be, or results unlike similar setups usually come from a bug: advantage/GAE computation, the KL "
        "estimate, the gradient update, batching, or padding and masking.",
        (
            "Start from a working example (e.g. TRL's) and change one thing at a time; start small, then scale.",
            "Review the PPO update, the GAE/advantage computation and the KL estimate (estimator, sign, "
            "log-prob alignment); unit-test each component.",
            "Check batching, padding and attention/loss masks (separate EOS and pad tokens, left padding).",
            "Guard numerics: clamp the log-ratio before exp() in the k3 estimator (verl#751), watch fp16 overflow.",
            "Check the generations for truncation or prompt/post-processing bugs.",
        ),
        "guide 000 cause 4 (implementation and configuration errors); FAQ 003 'how to debug your use case'",
        (),
    ),
    Cause(
        "reward-function-nan",
        "The reward function returns NaN (or nothing)",
        "A reward that turns NaN at a step and stays so comes from the scorer, not from the update: a "
        "division by zero or a log of 0 in a rule-based reward, a reward model whose logits overflow, a "
        "verifier that fails and returns None. TRL's GRPOTrainer averages the rewards with nanmean and "
        "logs null (trainer_state.json) or nothing (TensorBoard) for a key that is all NaN; the "
        "advantages of those groups are 0 or NaN, so the gradients collapse and the run stops learning.",
        (
            "Make the reward function return a finite float for every completion: guard divisions and logs, "
            "catch the scorer's exceptions and return a penalty (e.g. 0 or -1) instead of NaN or None.",
            "In TRL, None is only for a completion a reward function does not apply to; make sure at least one "
            "reward function scores every sample (TRL warns 'All reward functions returned None').",
            "Run the reward function on a few logged completions of the step where the reward stopped, and "
            "assert `math.isfinite` on its outputs in a unit test.",
            "For a reward model: check its dtype (fp16 logits overflow), and clip or normalise its scores.",
        ),
        "TRL GRPOTrainer (_calculate_rewards: torch.nanmean; 'All reward functions returned None' warning); "
        "guide 000 cause 4 (implementation errors)",
        (),
    ),
    Cause(
        "lr-too-low",
        "Learning rate too low (or stuck at 0)",
        "Updates are too small to change the policy: reward plateaus, KL stays near 0 and nothing improves; "
        "a scheduler that decays or warms up to 0 has the same effect.",
        (
            "Raise the learning rate toward the usual range (LLM RLHF about 1e-6 to 1e-5; classic PPO about 3e-4).",
            "Check the scheduler: warm-up finished, no decay to 0, the optimiser actually receives the rate.",
        ),
        "guide 000 symptom 'vanishing gradients / stalled training' (learning signal too weak, optimisation stalled)",
        ("lr",),
        ((0, "lr", "raise", 1e-6, 1e-5, "llm"), (0, "lr", "raise", 3e-4, 3e-4, "classic")),
    ),
    Cause(
        "weak-learning-signal",
        "Learning signal too weak (no reward variance, penalty dominates)",
        "The advantages are near zero: rewards barely differ within a batch or prompt group (GRPO groups "
        "with identical rewards give no gradient), the reward is constant, or a very strong KL penalty "
        "outweighs it.",
        (
            "Check the reward variance: with GRPO/RLOO filter or resample prompts whose groups all get the "
            "same reward (`frac_reward_zero_std`), use easier prompts or a denser reward.",
            "Check the reward actually reaches the trainer (not constant, not all zero).",
            "Lower an overly strong KL coefficient.",
        ),
        "guide 000 symptom 'vanishing gradients' ('the learning signal is too weak'); FAQ 003 'check the reward model'",
        ("kl_coef", "num_generations"),
    ),
    Cause(
        "overfitting-to-training",
        "The policy over-fits what it is trained on (the reward model, or the training environments)",
        "The training reward keeps rising while the reward on held-out data stays flat or falls. In an LLM "
        "run the policy has found what the reward model (or verifier) pays for on the training prompts "
        "beyond what the task is: reward over-optimisation, where the proxy score rises as the gold score "
        "falls (Gao et al. 2023). In classic RL the policy memorises its training environments or levels "
        "and does not generalise to others (Cobbe et al. 2019).",
        (
            "Stop early on the evaluation metric: keep the checkpoint where the held-out reward peaked "
            "(HF/TRL `load_best_model_at_end=True` with `metric_for_best_model` set to the evaluation reward; "
            "SB3 `EvalCallback(best_model_save_path=...)`).",
            "LLM runs: check the reward model on held-out prompts against gold labels or a second reward model, "
            "and retrain, ensemble or constrain it where they disagree; raise the KL coefficient (toward "
            "0.05-0.2) so the policy stays near the reference.",
            "Classic RL: train on more and more varied environments (more procedurally generated levels, "
            "domain randomisation, more environment seeds) and keep the evaluation environments apart.",
        ),
        "Gao, Schulman, Hilton 2023 'Scaling Laws for Reward Model Overoptimization'; Cobbe et al. 2019 "
        "'Quantifying Generalization in Reinforcement Learning'; guide 000 cause 3 (reward model problems)",
        ("kl_coef",),
    ),
    Cause(
        "prompts-too-easy",
        "Prompts too easy: most groups are all correct",
        "GRPO, RLOO and DAPO learn from the reward differences inside each prompt's group of samples. When "
        "every sample of a group earns the top reward the group's advantages are all zero and it adds "
        "nothing to the gradient, only cost: the effective batch shrinks as the policy improves, which DAPO "
        "(arXiv:2503.14476) calls the gradient-decreasing problem.",
        (
            "Use dynamic sampling: drop the groups whose rewards are all equal and sample more prompts until "
            "the batch is full (DAPO; veRL `algorithm.filter_groups.enable=True`, OpenRLHF `--dynamic_filtering`).",
            "Move to harder prompts (a curriculum by pass rate), or retire the prompts the policy always solves.",
        ),
        "DAPO (Yu et al. 2025, arXiv:2503.14476) §3.2 dynamic sampling; TRL GRPO `frac_reward_zero_std`",
        (),
    ),
    Cause(
        "prompts-too-hard",
        "Prompts too hard or reward too sparse: most groups score nothing",
        "When no sample of a group earns any reward the group's advantages are all zero: the policy gets "
        "no gradient from those prompts, and a sparse (all-or-nothing) reward on prompts beyond the "
        "model's reach leaves most of each batch without a learning signal.",
        (
            "Start from easier prompts (a curriculum by pass rate) or filter out the prompts no sample solves.",
            "Sample more generations per prompt (`num_generations`, veRL `rollout.n`, OpenRLHF "
            "`--n_samples_per_prompt`) so a rarely solved prompt gets a correct sample now and then.",
            "Make the reward denser: partial credit (format, intermediate steps) instead of all-or-nothing.",
            "Use dynamic sampling (DAPO; veRL `algorithm.filter_groups.enable=True`) so the batch holds groups "
            "that differ.",
        ),
        "DAPO (Yu et al. 2025, arXiv:2503.14476) §3.2; DeepSeekMath (Shao et al. 2024) GRPO group advantages",
        ("num_generations",),
    ),
    Cause(
        "reward-dominated-by-query",
        "Reward dominated by the query",
        "The score depends mostly on the prompt, which the policy cannot change, so the part the response "
        "controls is small and noisy; the reward looks flat or erratic although the model is fine.",
        (
            "Normalise the reward by the query: use reward(query + response) - reward(query).",
            "Check the score distribution across prompts vs across responses to the same prompt; per-prompt "
            "baselines (RLOO/GRPO group means) or whitening also help.",
        ),
        "FAQ 003 'check the reward model' (reward dominated by the query)",
        (),
    ),
    Cause(
        "response-truncation",
        "Responses truncated by the length cap",
        "Many responses hit the maximum length without an EOS, so the reward is computed on cut-off text "
        "and the value targets are wrong; the FAQ warns that bad settings can truncate generations early.",
        (
            "Raise the response length cap (`max_new_tokens`, `response_length`, veRL `data.max_response_length`) "
            "or penalise missing EOS (TRL `missing_eos_penalty`).",
            "Check EOS and pad handling and the post-processing of generations.",
        ),
        "FAQ 003 'check the generations' (truncation from bad settings)",
        ("max_new_tokens",),
    ),
)

CAUSE_IDS = tuple(c.id for c in CAUSES)
_BY_ID = {c.id: c for c in CAUSES}

# Default support per symptom, used for a finding whose rule declares no causes of its own
# (from the guides' symptom -> cause lists; guides-digest.md "Causes and fixes").
SYMPTOM_CAUSES: dict[str, dict[str, float]] = {
    "kl_blowup": {
        "kl-coef-too-low": 1.0,
        "lr-too-high": 0.6,
        "too-many-ppo-epochs": 0.5,
        "adaptive-kl-target-too-high": 0.3,
        "policy-not-from-sft": 0.3,
        "batch-too-large": 0.2,
        "no-grad-clipping": 0.2,
    },
    "negative_kl": {"generation-settings": 1.0, "implementation-bug": 0.5, "reward-model-flawed": 0.2},
    "reward_hacking": {"reward-model-flawed": 1.0, "kl-coef-too-low": 0.7, "reward-hacking-length": 0.6, "reward-not-clipped": 0.3},
    "reward_spike": {"reward-not-clipped": 0.7, "reward-not-normalized": 0.7, "reward-model-flawed": 0.6, "lr-too-high": 0.3},
    "stagnation": {
        "lr-too-low": 0.8,
        "weak-learning-signal": 0.8,
        "reward-model-flawed": 0.4,
        "reward-dominated-by-query": 0.4,
        "implementation-bug": 0.2,
        "generation-settings": 0.3,
    },
    "value_instability": {
        "value-lr-mistuned": 0.8,
        "value-undertrained": 0.7,
        "reward-not-normalized": 0.6,
        "gae-lambda": 0.3,
        "no-grad-clipping": 0.3,
    },
    "oscillation": {"lr-too-high": 0.8, "too-many-ppo-epochs": 0.6, "value-undertrained": 0.4, "batch-too-large": 0.3},
    "gradient_explosion": {"no-grad-clipping": 1.0, "lr-too-high": 0.7, "reward-not-normalized": 0.4},
    "nan": {"implementation-bug": 0.8, "lr-too-high": 0.5, "no-grad-clipping": 0.5},
    "entropy_collapse": {"lr-too-high": 0.6, "kl-coef-too-low": 0.6, "too-many-ppo-epochs": 0.4, "reward-hacking-length": 0.3},
    # the update itself is too large (ratio, clip fraction, approx KL to the old policy)
    "unstable_updates": {"lr-too-high": 0.9, "too-many-ppo-epochs": 0.8, "batch-too-large": 0.3, "no-grad-clipping": 0.3},
    # reward climbed, then fell far below its peak and stayed there (classic-RL "performance collapse")
    "reward_collapse": {"lr-too-high": 0.8, "too-many-ppo-epochs": 0.6, "no-lr-annealing": 0.6, "value-undertrained": 0.4},
    "log_quality": {},
}


def get_cause(cause_id: str) -> Cause | None:
    """The catalog entry for an id, or None."""
    return _BY_ID.get(cause_id)


__all__ = ["Cause", "CAUSES", "CAUSE_IDS", "SYMPTOM_CAUSES", "get_cause"]
