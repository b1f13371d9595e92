"""The cause catalog: every cause of PPO/RLHF instability the two guides name, with fixes.

Sources (docs/sources.md#guides): the RLHF PPO troubleshooting guide ("causes and solutions"
1-4) and the TRL Training FAQ (negative KL, generation settings, debugging advice).  Typical
values come from published recipes (docs/sources.md#reference-recipes) and the user threads
where a cause was found (docs/sources.md#cause-evidence); each fix names
the knob, the direction and a typical value.

A cause exists in some kinds of training only (:mod:`.domains`: ``classic``, ``rlhf``, ``grpo``,
``preference``): an SB3 agent has no reward model, no reference model and no generated text, an
LLM run has no environment to normalise, and offline preference optimisation (DPO) samples
nothing, has no reward, no critic and no PPO epochs.  ``Cause.domains`` says where it can be a cause, and a
:class:`Variant` rewrites its title, explanation or fixes for one domain: classic-RL fixes name
the SB3 / CleanRL / baselines arguments through ``{knob}`` fields (``domains.CLASSIC_ARGS``);
GRPO's reward comes from reward functions, not a reward model.  :data:`CLASSIC_SYMPTOM_CAUSES`
gives each symptom its classic-RL causes, merged into what a rule names.

Every fix stands on its own (no "Or ...", "Alternatively ..."): diagnosis drops the fixes a run's
config already satisfies (``Cause.fix_ranges``), so any fix may be the first one shown.

Cause ids are fixed (reports and the JSON schema carry them); rules refer to them in ``Rule.causes``.
"""

from __future__ import annotations

from typing import NamedTuple

# (fix index, canonical knob, "raise" | "lower", low, high, domain): see Cause.fix_ranges
FixRange = tuple[int, str, str, float, float, str]

LLM_DOMAINS = frozenset({"rlhf", "grpo"})
# the domains that sample from the policy and learn from rewards (an environment's or a scorer's)
RL_DOMAINS = frozenset({"classic", "rlhf", "grpo"})
ALL_DOMAINS = RL_DOMAINS | {"preference"}


class Variant(NamedTuple):
    """How a cause reads in one domain: each field set replaces the cause's own."""

    title: str | None = None
    explanation: str | None = None
    # classic-RL fixes may hold {knob} fields, written in the run's framework's arguments
    # (domains.CLASSIC_ARGS) when the cause is ranked
    fixes: tuple[str, ...] | None = None
    fix_ranges: tuple[FixRange, ...] | None = None


class Cause(NamedTuple):
    """One possible root cause: what it is, why it produces its symptoms, how to fix it."""

    id: str
    title: str
    explanation: str
    fixes: tuple[str, ...]
    source: str  # where in the guides (or the peer threads) this cause comes from
    knobs: tuple[str, ...] = ()  # canonical hyper-parameters involved
    # (fix index, canonical knob, "raise" | "lower", low, high, domain): that fix moves the knob
    # into [low, high] for runs of that domain ("any", "llm" or "classic"); diagnosis drops it for
    # a run whose config (or, for the learning rate, logged rate) already sits there or beyond
    # ("raise": at or above low; "lower": at or below high): a run with kl_coef 0.2 is not told
    # to "raise it toward 0.2".
    fix_ranges: tuple[FixRange, ...] = ()
    # the kinds of training it can be a cause in (domains.CauseDomain); a run of unknown kind keeps all
    domains: frozenset[str] = ALL_DOMAINS
    variants: tuple[tuple[str, Variant], ...] = ()  # (domain, how it reads there)

    def applies_to(self, domain: str) -> bool:
        """Whether the cause can explain a symptom of a run of ``domain`` ("unknown": any cause)."""
        return domain == "unknown" or domain in self.domains

    def in_domain(self, domain: str) -> Cause:
        """The cause as it reads for a run of ``domain``: its variant there applied, if any."""
        for where, v in self.variants:
            if where == domain:
                return self._replace(
                    title=v.title if v.title is not None else self.title,
                    explanation=v.explanation if v.explanation is not None else self.explanation,
                    fixes=v.fixes if v.fixes is not None else self.fixes,
                    fix_ranges=v.fix_ranges if v.fix_ranges is not None else self.fix_ranges,
                )
        return self


CAUSES: tuple[Cause, ...] = (
    Cause(
        "kl-coef-too-low",
        "KL penalty coefficient (beta) too low",
        "The reward being optimised is R = r - beta*KL(policy || reference). With a small or zero beta "
        "nothing holds the policy near the SFT model: KL climbs and stays high, the text drifts into "
        "incoherence and the policy starts exploiting the reward model.",
        (
            "Raise the initial KL coefficient (TRL `kl_coef`/`init_kl_coef`, OpenRLHF `--init_kl_coef`, veRL "
            "`algorithm.kl_ctrl.kl_coef` or `actor.kl_loss_coef`) toward 0.2 (recipes use 0.05-0.2: TRL legacy "
            "default 0.2, N+ implementation details 0.05 with a unit-scale reward), and above the reward the run "
            "gains per nat of KL, so that drifting costs more than it earns.",
            "Use an adaptive KL controller with a target, which raises beta while the KL is above it: TRL legacy "
            "`adap_kl_ctrl=True, target=6, horizon=10000` (Ziegler et al. 2019; the guide cites targets of 3-10), "
            "veRL `kl_ctrl.type=adaptive`, OpenRLHF `--kl_target`.",
            "Keep the sequence-level KL inside the 0-10 band the TRL FAQ recommends; stop or roll back to a "
            "checkpoint when it leaves the band.",
        ),
        "guide 000 cause 1 (KL problems: beta too low); FAQ 003 'why a reference model'",
        ("kl_coef", "adaptive_kl", "target_kl"),
        ((0, "kl_coef", "raise", 0.2, 0.2, "any"),),
        domains=LLM_DOMAINS,
        variants=(
            (
                "grpo",
                # GRPO puts the KL in the loss with a fixed coefficient: TRL GRPOConfig calls it
                # `beta` (no `kl_coef`, no adaptive controller), veRL `actor.kl_loss_coef`
                Variant(
                    fixes=(
                        "Raise the KL coefficient of the loss: TRL GRPOConfig `beta` (0 by default since TRL 0.19; "
                        "DeepSeekMath used 0.04), veRL `actor_rollout_ref.actor.use_kl_loss=True` with "
                        "`actor.kl_loss_coef`, OpenRLHF `--init_kl_coef` with `--use_kl_loss`.",
                        "Keep the per-token KL to the reference inside what runs that learn well reach "
                        "(docs/population.md); stop or roll back to a checkpoint when it keeps climbing.",
                    ),
                    fix_ranges=(),
                ),
            ),
        ),
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
        domains=LLM_DOMAINS,
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
        variants=(
            (
                "classic",
                Variant(
                    explanation="Each PPO update moves the policy too far: the importance ratio leaves the trust region, "
                    "clipping saturates, the approx KL to the old policy jumps, and the return swings or collapses "
                    "instead of converging.",
                    fixes=(
                        "Lower the learning rate ({lr}) 3-10x; classic PPO uses about 3e-4 (2.5e-4 on Atari) and "
                        "anneals it to 0 ({lr_schedule}).",
                        "Stop each update's epochs early when the approx KL to the old policy passes about 0.01-0.02 ({target_kl}).",
                        "Narrow the clip range ({clip_range}) to 0.1-0.2 so one update cannot move the ratio far.",
                        "Clip gradients at 0.5 ({max_grad_norm}) so single batches cannot take huge steps.",
                        "If the instability started after a hyper-parameter change, revert it or try intermediate values.",
                    ),
                ),
            ),
        ),
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
        variants=(
            (
                "classic",
                Variant(
                    fixes=(
                        "Decay the learning rate linearly to 0 over the run ({lr_schedule}).",
                        "Keep the best checkpoint by evaluation return ({eval_callback}) and stop when it has plateaued.",
                    ),
                ),
            ),
        ),
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
        variants=(
            (
                "classic",
                Variant(
                    explanation="Every extra epoch or minibatch step over the same rollout pushes the policy further from "
                    "the one that collected it; the ratio drifts from 1, clipping saturates and the update becomes "
                    "off-policy. Classic PPO runs 3-10 epochs (SB3 default 10, baselines' Atari setting 4).",
                    fixes=(
                        "Reduce the epochs per rollout ({n_epochs}) toward 4, or split the rollout into fewer, larger "
                        "minibatches ({minibatch}).",
                        "Stop the epochs early when the approx KL to the old policy passes about 0.01-0.02 ({target_kl}; "
                        "SB3 stops at 1.5x the target).",
                        "Watch the clip fraction (below 0.2-0.3) and the approx KL per update.",
                    ),
                ),
            ),
        ),
        domains=RL_DOMAINS,
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
        variants=(
            (
                "classic",
                Variant(
                    title="Rollout or minibatch size mistuned for the update schedule",
                    explanation="Each classic PPO update learns from one rollout (steps per environment x environments). "
                    "A short rollout gives noisy advantage estimates from a few episodes, and many small minibatches "
                    "over it take many noisy gradient steps: the updates swing instead of converging (SB3 and CleanRL "
                    "MuJoCo defaults: 2048 steps per environment; SB3 minibatch 64, CleanRL 32 minibatches).",
                    fixes=(
                        "Collect more steps per update ({n_steps}) or run more environments in parallel, so each update "
                        "averages over more episodes.",
                        "Use fewer, larger minibatches ({minibatch}) for the same rollout; change one of these at a "
                        "time and scale the learning rate deliberately.",
                    ),
                ),
            ),
        ),
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
        variants=(
            (
                "classic",
                Variant(
                    fixes=(
                        "Clip the gradient norm at 0.5 ({max_grad_norm}; the default of SB3, CleanRL and baselines).",
                        "Normalise observations and rewards ({normalize}) so that no batch carries outsized gradients.",
                        "If norms still spike, lower the learning rate ({lr}) as well.",
                    ),
                ),
            ),
        ),
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
        domains=LLM_DOMAINS | {"preference"},
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
        domains=LLM_DOMAINS,
        variants=(
            (
                "grpo",
                Variant(
                    title="Reward function miscalibrated, noisy or exploitable",
                    explanation="The reward functions (rule-based checks, a verifier, or a reward model used as one) pay "
                    "for completions that are not actually better: a format check met without the answer, a keyword or "
                    "a length the scorer counts, an answer extracted from the wrong place; reward rises while quality "
                    "does not, and noisy scoring makes the reward jump around.",
                    fixes=(
                        "Inspect completions regularly, especially high-reward ones at the onset step: do they satisfy "
                        "the reward function without solving the task?",
                        "Unit-test each reward function on clearly right and clearly wrong completions and on edge cases "
                        "(empty, truncated, badly formatted); look at each function's reward distribution for skew and outliers.",
                        "Tighten the reward functions (stricter answer extraction and checks); a reward model used as one "
                        "needs recalibrating or retraining.",
                        "Start with a single reward function before combining several (TRL `reward_weights` sets their mix).",
                    ),
                ),
            ),
        ),
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
            "Normalise the reward model itself so that SFT samples score mean 0, std 1 (Ziegler et al. 2019).",
            "Remove large constant reward multipliers (`reward_scale`).",
        ),
        "guide 000 cause 2 fix 'reward normalisation/scaling'",
        ("whiten_rewards", "reward_scale"),
        variants=(
            (
                "classic",
                Variant(
                    title="Observations or rewards not normalised",
                    explanation="Returns on a large or drifting scale (a game score in the hundreds, an unscaled MuJoCo "
                    "reward) give the critic a regression target it cannot follow: the value loss grows with the "
                    "squared return scale and can diverge, and the advantages swing with it; unscaled observations "
                    "make every layer's input drift. Classic PPO keeps running mean-std statistics of the observations "
                    "and of the discounted returns (Huang et al. 2022, '37 implementation details of PPO': observation "
                    "normalisation, reward scaling).",
                    fixes=(
                        "Normalise observations and rewards with running statistics: {normalize}; save the statistics "
                        "with the model and freeze them for evaluation.",
                        "Scale the environment's reward at its source (divide a game score by its range) so returns stay "
                        "within about +-10.",
                        "Remove large constant reward multipliers.",
                    ),
                ),
            ),
        ),
        domains=RL_DOMAINS,
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
        variants=(
            (
                "classic",
                Variant(
                    fixes=(
                        "Clip rewards (or normalised rewards) to a fixed range such as [-10, 10]: {clip_reward}.",
                        "Look at the reward distribution for outliers before and after clipping.",
                    ),
                ),
            ),
        ),
        domains=RL_DOMAINS,
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
        domains=LLM_DOMAINS,
        variants=(
            (
                "grpo",
                # TRL GRPOConfig has no `missing_eos_penalty` (a PPO/RLOO option): a GRPO run
                # shapes its reward through its reward functions and their weights
                Variant(
                    fixes=(
                        "Add a length or repetition penalty as a reward function of its own, and weigh it against the "
                        "task reward (TRL GRPOConfig `reward_weights`); do not let an easy component dominate.",
                        "Give truncated completions no reward signal (TRL GRPOConfig `mask_truncated_completions=True`) "
                        "and set `max_completion_length` to what the task needs.",
                        "Raise the KL coefficient of the loss (TRL GRPOConfig `beta`).",
                        "Inspect the samples around the onset step to confirm the exploit.",
                    ),
                ),
            ),
        ),
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
        variants=(
            (
                "classic",
                Variant(
                    title="Value-loss weight or value step mistuned",
                    explanation="SB3, CleanRL and baselines train policy and critic with one optimiser and one learning "
                    "rate; the value loss enters the total loss times vf_coef. Too much weight, or a trunk the two share, "
                    "lets the value gradients swamp the policy's; too little leaves the critic behind the returns. "
                    "Either way the advantages are wrong and the update becomes unstable.",
                    fixes=(
                        "Tune the value-loss weight ({vf_coef}; 0.5 is the default of all three): lower it if the value "
                        "loss swings or diverges, raise it if the critic lags.",
                        "Clip the value update ({clip_range_vf}), scaled to the returns (it depends on the reward scale).",
                        "Give the critic layers of its own instead of a trunk shared with the policy, so its gradients "
                        "do not reach the policy's features.",
                    ),
                ),
            ),
        ),
        domains=RL_DOMAINS,
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
        variants=(
            (
                "classic",
                Variant(
                    fixes=(
                        "Train the critic harder: a higher value-loss weight ({vf_coef}, default 0.5) or more epochs per "
                        "rollout ({n_epochs}).",
                        "Normalise the returns ({normalize}) so that the value target stays on a learnable scale.",
                        "Give the critic enough capacity: its own network, about the size of the policy's.",
                    ),
                ),
            ),
        ),
        domains=RL_DOMAINS,
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
        variants=(
            (
                "classic",
                Variant(
                    fixes=(
                        "Use GAE with lambda within 0.9-1.0 ({gae_lambda}; 0.95 is the default) and a discount of about "
                        "0.99 ({gamma}).",
                        "If the critic is poor, prefer a higher lambda and fix the critic first.",
                    ),
                ),
            ),
        ),
        domains=RL_DOMAINS,
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
        domains=LLM_DOMAINS,
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
        variants=(
            (
                "classic",
                Variant(
                    explanation="Unpredictable behaviour, NaN losses, crashes, a policy that never changes or results "
                    "unlike similar setups usually come from a bug: in the environment (NaN or unbounded observations, "
                    "wrong episode ends), the advantage/GAE computation, the action scaling, or a custom network.",
                    fixes=(
                        "Start from a published working configuration for the environment (the RL Baselines3 Zoo's or "
                        "CleanRL's benchmark hyper-parameters) and change one thing at a time; start small, then scale.",
                        "Check the environment: {check_env}; observations and rewards must be finite and bounded.",
                        "Check episode ends: a time-limit truncation must bootstrap from the value, a true termination must not.",
                        "Check the actions: continuous actions clipped or squashed to the space's bounds, discrete actions "
                        "of the right type and range.",
                    ),
                ),
            ),
        ),
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
        variants=(
            (
                "classic",
                Variant(
                    title="The environment returns a NaN reward (or observation)",
                    explanation="A reward that turns NaN at a step and stays so comes from the environment, not from "
                    "the update: a division by zero or a log of 0 in the reward, a simulator that diverges and returns "
                    "NaN or infinite states. The returns and advantages built from it are NaN, and so is every update after.",
                    fixes=(
                        "Find the step where the environment first returns a non-finite value: {check_env}.",
                        "Guard the reward computation (divisions, logs, distances of diverged states) and end the episode "
                        "when the simulation leaves its valid range.",
                    ),
                ),
            ),
        ),
        domains=RL_DOMAINS,
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
        variants=(
            (
                "preference",
                Variant(
                    fixes=(
                        "Raise the learning rate toward TRL DPOConfig's default, 1e-6 (preference tuning runs at "
                        "lower rates than SFT: DPOConfig overrides the Trainer's 5e-5).",
                        "Check the scheduler: warm-up finished, no decay to 0, the optimiser actually receives the rate.",
                    ),
                    fix_ranges=((0, "lr", "raise", 1e-6, 1e-6, "preference"),),
                ),
            ),
            (
                "classic",
                Variant(
                    fixes=(
                        "Raise the learning rate ({lr}) toward about 3e-4 (the SB3, CleanRL and baselines MuJoCo default).",
                        "Check the schedule: an annealed rate that reaches 0 early, or a schedule function read the wrong "
                        "way round (SB3 passes the remaining progress, from 1 down to 0).",
                    ),
                ),
            ),
        ),
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
        variants=(
            (
                "classic",
                Variant(
                    title="Learning signal too weak (reward sparse or constant)",
                    explanation="The advantages are near zero: the agent rarely or never sees a reward that differs "
                    "(a sparse reward on a task too hard for random exploration) or the reward is constant, so there is "
                    "nothing to learn from.",
                    fixes=(
                        "Check that the reward varies: log per-episode returns and look for a constant or always-zero reward.",
                        "Make the reward denser (shaping toward the goal, partial credit) or start from an easier version "
                        "of the task (a curriculum).",
                        "Keep exploring until a reward is found: an entropy bonus ({ent_coef}) of about 0.01.",
                    ),
                ),
            ),
            (
                "preference",
                Variant(
                    title="The preference pairs give no usable signal",
                    explanation="The implicit-reward accuracy stays at chance (or below it) and the margin near 0: "
                    "to the model the chosen and rejected completions of a pair are alike, or the preference labels "
                    "are noisy or inverted, so the loss has nothing consistent to push toward.",
                    fixes=(
                        "Check the pairs: the chosen completion must be the preferred one (an accuracy below 0.5 "
                        "that stays there is what swapped chosen/rejected columns train toward), and the two must differ.",
                        "Filter out pairs whose completions are near-duplicates or whose preference is a coin flip; "
                        "a smaller, cleaner preference set teaches more than a large noisy one.",
                        "Start from a model fine-tuned (SFT) on the chosen completions' domain, and keep the reference "
                        "model that model (TRL's DPOTrainer copies the policy when `ref_model` is None).",
                    ),
                ),
            ),
        ),
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
        variants=(
            (
                "classic",
                Variant(
                    title="The policy over-fits its training environments",
                    explanation="The training return keeps rising while the return on held-out environments or levels "
                    "stays flat or falls: the policy memorises its training environments and does not generalise to "
                    "others (Cobbe et al. 2019).",
                    fixes=(
                        "Stop early on the evaluation return: keep the checkpoint where it peaked ({eval_callback}).",
                        "Train on more and more varied environments (more procedurally generated levels, domain "
                        "randomisation, more environment seeds) and keep the evaluation environments apart.",
                    ),
                ),
            ),
        ),
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
        domains=LLM_DOMAINS,
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
        domains=LLM_DOMAINS,
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
        domains=LLM_DOMAINS,
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
        domains=LLM_DOMAINS,
        variants=(
            (
                "grpo",
                Variant(
                    fixes=(
                        "Raise the completion length cap (TRL GRPOConfig `max_completion_length`, veRL "
                        "`data.max_response_length`), or leave truncated completions out of the loss (TRL GRPOConfig "
                        "`mask_truncated_completions=True`, as DAPO's overlong filtering does).",
                        "Check EOS and pad handling and the post-processing of generations.",
                    ),
                ),
            ),
        ),
    ),
    Cause(
        "clip-higher-too-wide",
        "Upper clip bound (clip-higher) too wide for the learning rate",
        "Clip-higher (DAPO) raises the upper bound of the PPO ratio, epsilon_high, above the lower one so that "
        "unlikely tokens with a positive advantage can gain probability and the entropy does not collapse. "
        "Set wide, together with a high learning rate, each update lifts many unlikely tokens at once: the "
        "entropy climbs instead of settling, the text dissolves into noise and the reward stalls or falls.",
        (
            "Bring the upper clip bound back toward DAPO's 0.28 (TRL `epsilon_high`, veRL "
            "`actor_rollout_ref.actor.clip_ratio_high`), or to the lower bound (TRL `epsilon`, veRL `clip_ratio_low`, "
            "0.2) to switch clip-higher off.",
            "Lower the policy learning rate with it: DAPO pairs epsilon_high 0.28 with a learning rate of 1e-6.",
            "Watch the token entropy (TRL `entropy`, veRL `actor/entropy`): with clip-higher it should stay about level, "
            "not climb for the whole run.",
        ),
        "DAPO (Yu et al. 2025, arXiv:2503.14476) section 3.1 clip-higher; TRL `GRPOConfig.epsilon_high` (grpo_config.py); "
        "veRL `actor.clip_ratio_high` (verl/trainer/config/actor/actor.yaml); verl-project/verl#2738",
        ("cliprange", "lr"),
        domains=LLM_DOMAINS,
    ),
    Cause(
        "entropy-bonus-too-high",
        "Entropy bonus too large",
        "An entropy bonus adds coef x entropy to the objective. Large against the reward's advantages, it pays the "
        "policy for spreading its probability more than for solving the task: the entropy climbs for the whole "
        "run while the reward stalls, and an LLM's samples turn into random tokens.",
        (
            "Lower the entropy coefficient (TRL `entropy_coef`, default 0.0; veRL `actor_rollout_ref.actor.entropy_coeff`, "
            "default 0; OpenRLHF `--entropy_loss_coef`; SB3 and CleanRL `ent_coef`, about 0.01 at most) or drop it.",
            "Use a bonus that applies only below an entropy target (TRL `use_adaptive_entropy` with `entropy_target`, "
            "Skywork-OR1), so it cannot push the entropy up once the policy explores enough.",
        ),
        "TRL `GRPOConfig.entropy_coef` / `use_adaptive_entropy` (grpo_config.py, Skywork-OR1 arXiv:2505.22312); veRL "
        "`actor.entropy_coeff` (actor.yaml); Mnih et al. 2016 (A3C) entropy regularisation",
        ("entropy_coef",),
        variants=(
            (
                "classic",
                Variant(
                    explanation="An entropy bonus adds ent_coef x entropy to the PPO loss. Large against the advantages, it "
                    "pays the agent for acting at random more than for the return: the entropy climbs toward that of a "
                    "uniform policy while the return stalls.",
                    fixes=(
                        "Lower the entropy bonus ({ent_coef}) to about 0.01 (CleanRL `ppo.py`, baselines' Atari setting) "
                        "or 0.0 for continuous control (SB3's and CleanRL's default there).",
                    ),
                ),
            ),
        ),
        domains=RL_DOMAINS,
    ),
    Cause(
        "sampler-trainer-mismatch",
        "The inference engine and the trainer disagree on the policy's probabilities",
        "The rollouts are sampled by an inference engine (vLLM, SGLang) with its own kernels, precision and "
        "sometimes stale or differently loaded weights, while the loss uses the trainer's log-probabilities of the "
        "same tokens. When the two differ the update is off-policy without saying so; the gap tends to grow as the "
        "policy sharpens and precedes many sudden collapses of long GRPO runs.",
        (
            "Correct for the gap with truncated importance sampling: TRL `vllm_importance_sampling_correction=True` "
            "(its default) with `vllm_importance_sampling_clip_max` (formerly `vllm_importance_sampling_cap`, default 3.0) "
            "and `vllm_importance_sampling_mode`; veRL `algorithm.rollout_correction.rollout_is=token` (or `sequence`) "
            "with `rollout_is_threshold=2.0`; OpenRLHF `--enable_vllm_is_correction` with `--vllm_is_truncated_threshold`.",
            "Drop the worst mismatched samples instead of reweighting them: veRL `algorithm.rollout_correction.rollout_rs` "
            "with `rollout_rs_threshold`, TRL `vllm_importance_sampling_mode=\"sequence_mask\"`, OpenRLHF "
            "`--vllm_is_correction_type icepop`.",
            "Make the two compute the same numbers: the same dtype in the sampler and the trainer (FP16 on both removes "
            "most of the gap, Qi et al. 2025), the weights synced to the sampler after every update, no quantised or "
            "differently patched sampler model.",
            "Measure the gap: veRL `actor_rollout_ref.rollout.calculate_log_probs=True` logs `rollout_corr/*`; TRL logs "
            "`sampling/sampling_logp_difference/*` whenever `use_vllm` and the correction are on.",
        ),
        "TRL `GRPOConfig.vllm_importance_sampling_*` (grpo_config.py, grpo_trainer.py); veRL "
        "`algorithm.rollout_correction` (docs/algo/rollout_corr.md, rollout_correction.yaml); OpenRLHF "
        "`--enable_vllm_is_correction`; Yao et al. 2025 (truncated importance sampling); Qi et al. 2025 "
        "(arXiv:2510.26788); areal-project/AReaL#1290, huggingface/trl#4772",
        (),
        domains=LLM_DOMAINS,
    ),
    Cause(
        "reward-weights-unbalanced",
        "An easy reward component outweighs the task's",
        "With several reward functions the policy maximises their weighted sum. A component that is easy to earn "
        "(format, length, a judge's style score) and weighted as much as or more than the one that measures the task "
        "saturates first: the total keeps rising while correctness stalls or falls, and every group's advantages "
        "reward the format, not the answer.",
        (
            "Lower the easy component's weight against the task's (TRL `reward_weights`, in the order of "
            "`reward_funcs`; e.g. format 0.1-0.2 against correctness 1.0), or weight the task component most.",
            "Gate the easy component on the task: pay the format only when the answer is right, or subtract it when "
            "the answer is wrong, so it cannot be earned alone.",
            "Normalise each component within its group before summing (TRL "
            "`multi_objective_aggregation=\"normalize_then_sum\"`, GDPO) so that a saturated component stops "
            "contributing advantage.",
            "Judge the run on the task component (TRL `rewards/<name>/mean`) or a held-out evaluation, not on the total.",
        ),
        "huggingface/open-r1#255; TRL `GRPOConfig.reward_weights` and `multi_objective_aggregation` (grpo_config.py, "
        "GDPO arXiv:2601.05242); Skalse et al. 2022 (arXiv:2209.13085) reward hacking",
        (),
        domains=LLM_DOMAINS,
    ),
    # -- classic RL only ------------------------------------------------------------------------
    Cause(
        "ent-coef-too-low",
        "Entropy bonus too small (or none)",
        "A PPO agent keeps exploring only through the entropy bonus ent_coef x entropy in its loss. With no bonus "
        "(SB3's and CleanRL's continuous-action default 0.0, baselines ppo2's 0.0) nothing stops the action "
        "distribution from narrowing as soon as one action pays a little: the entropy collapses, exploration "
        "stops and the agent settles on what it found first.",
        (
            "Add or raise the entropy bonus ({ent_coef}) to about 0.01 (CleanRL `ppo.py` and baselines' Atari "
            "setting); 0.001-0.01 for continuous control.",
            "Watch the policy entropy: it should fall slowly over the run, not to near 0 in the first updates.",
        ),
        "SB3 `PPO(ent_coef=0.0)`, CleanRL `ppo_continuous_action.py` `ent_coef = 0.0`, baselines `ppo2.learn` "
        "(checked); CleanRL `ppo.py` and baselines `ppo2/defaults.py` (Atari) 0.01; Mnih et al. 2016 (A3C) entropy "
        "regularisation",
        ("entropy_coef",),
        ((0, "entropy_coef", "raise", 0.01, 0.01, "classic"),),
        domains=frozenset({"classic"}),
    ),
    Cause(
        "action-noise-unbounded",
        "Action noise left to grow",
        "A Gaussian policy's std is a free parameter the loss may widen. When the advantages carry little signal, an "
        "entropy bonus pays for spreading the actions, or the environment clips actions to its bounds so that wider "
        "noise costs nothing, the std climbs instead of shrinking: the actions turn into noise and the return stalls "
        "or falls.",
        (
            "Squash the actions instead of letting the environment clip them (SB3 `use_sde=True` with "
            "`policy_kwargs=dict(squash_output=True)`, or a tanh-squashed policy as in SAC) on an action space "
            "normalised to [-1, 1], so that a wider std is not free.",
            "Lower or drop the entropy bonus ({ent_coef}): 0.0 is SB3's and CleanRL's setting for continuous control.",
            "Bound the log std (RLlib `log_std_clip_param`, rsl_rl's log-std bounds) or start it lower (SB3 "
            "`policy_kwargs=dict(log_std_init=-0.5)`).",
            "Watch the action std (SB3 `train/std`): on a task the policy learns it shrinks over the run.",
        ),
        "rlpyt#124 (log std climbing, every action at its bound); garage#255 ('std explodes'); rsl_rl#67; "
        "ray-project/ray#47827 (`log_std_clip_param`); SB3 docs, RL Tips and Tricks (normalise the action space; "
        "`squash_output` with gSDE)",
        ("entropy_coef",),
        domains=frozenset({"classic"}),
    ),
    Cause(
        "env-reward-exploitable",
        "Environment reward mis-specified or exploitable",
        "The reward can be earned without doing the task (specification gaming): the agent loops on a bonus, "
        "stalls to avoid a penalty or exploits a simulator glitch, so the return jumps or climbs while the "
        "behaviour is wrong.",
        (
            "Watch episodes of the current policy ({record_video}) around the onset step: does it do the task, or farm the reward?",
            "Close the loophole in the reward: remove or bound the shaping term it farms (potential-based shaping keeps "
            "the optimal policy, Ng et al. 1999) and end episodes that stall.",
            "Judge the agent on the task's own success measure, not only on the shaped return.",
        ),
        "Krakovna et al. 2020 'Specification gaming: the flip side of AI ingenuity' (DeepMind); Ng, Harada, Russell "
        "1999 'Policy invariance under reward transformations'",
        (),
        domains=frozenset({"classic"}),
    ),
)

CAUSE_IDS = tuple(c.id for c in CAUSES)
_BY_ID = {c.id: c for c in CAUSES}

# Default support per symptom, used for a finding whose rule declares no causes of its own
# (from the guides' symptom -> cause lists; docs/sources.md#guides).
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


# Each symptom's causes in classic RL (SB3, CleanRL, baselines, home-made gym loops).  The rules'
# cause lists are written for LLM runs first, where the reward model, the KL penalty and the
# generation settings lead; a classic run has none of those, but an environment whose
# observations and rewards need normalising and an entropy bonus that keeps it exploring.  A
# finding of a classic run whose rule named a cause that cannot be one there gets those of these
# it did not name, in place of what was dropped (the rule's own weights stay: it knows its
# finding better than the symptom's defaults do); a rule that named classic causes only keeps its
# own list.  An episode return that spikes is not a per-step reward to clip: an environment that
# pays out hugely (a glitch, a farmed bonus) comes first, then the outsized value targets.  Sources: SB3 "Tips and Tricks when training an RL agent" (normalise
# observations and rewards, VecNormalize), Andrychowicz et al. 2021 "What Matters in On-Policy
# RL" (observation normalisation, entropy, learning rate), Huang et al. 2022 "37 implementation
# details of PPO"; the weights are ours.
CLASSIC_SYMPTOM_CAUSES: dict[str, dict[str, float]] = {
    "kl_blowup": {"lr-too-high": 0.8, "too-many-ppo-epochs": 0.6, "batch-too-large": 0.2},
    "negative_kl": {"implementation-bug": 1.0},
    "reward_hacking": {"env-reward-exploitable": 1.0},
    "reward_spike": {"env-reward-exploitable": 0.6, "reward-not-normalized": 0.5, "reward-not-clipped": 0.4, "lr-too-high": 0.3},
    "stagnation": {
        "lr-too-low": 0.8,
        "weak-learning-signal": 0.8,
        "ent-coef-too-low": 0.4,
        "reward-not-normalized": 0.3,
        "implementation-bug": 0.3,
    },
    "value_instability": {
        "reward-not-normalized": 0.8,
        "value-undertrained": 0.6,
        "value-lr-mistuned": 0.5,
        "gae-lambda": 0.3,
        "no-grad-clipping": 0.3,
    },
    "oscillation": {"lr-too-high": 0.8, "too-many-ppo-epochs": 0.6, "value-undertrained": 0.4, "batch-too-large": 0.3},
    "gradient_explosion": {"no-grad-clipping": 1.0, "lr-too-high": 0.7, "reward-not-normalized": 0.5},
    "nan": {"implementation-bug": 0.8, "lr-too-high": 0.5, "no-grad-clipping": 0.5, "reward-not-normalized": 0.3},
    "entropy_collapse": {"ent-coef-too-low": 0.8, "lr-too-high": 0.6, "too-many-ppo-epochs": 0.4},
    "unstable_updates": {"lr-too-high": 0.9, "too-many-ppo-epochs": 0.8, "batch-too-large": 0.3, "no-grad-clipping": 0.3},
    "reward_collapse": {"lr-too-high": 0.8, "too-many-ppo-epochs": 0.6, "no-lr-annealing": 0.6, "value-undertrained": 0.4},
    "log_quality": {},
}


def get_cause(cause_id: str) -> Cause | None:
    """The catalog entry for an id, or None."""
    return _BY_ID.get(cause_id)


def causes_in_domain(named: dict[str, float], symptom: str, domain: str) -> dict[str, float]:
    """The causes a finding supports in a run of ``domain``: those it names (``named``; its
    symptom's defaults when it names none) that can be causes there.  In a classic-RL run, when
    one it named cannot be, its symptom's :data:`CLASSIC_SYMPTOM_CAUSES` that it did not name are
    added."""
    base = named if named else SYMPTOM_CAUSES.get(symptom, {})
    out = {cid: w for cid, w in base.items() if (c := _BY_ID.get(cid)) is None or c.applies_to(domain)}
    if domain == "classic" and len(out) < len(base):
        for cid, w in CLASSIC_SYMPTOM_CAUSES.get(symptom, {}).items():
            out.setdefault(cid, w)
    return out


__all__ = [
    "CAUSES",
    "CAUSE_IDS",
    "CLASSIC_SYMPTOM_CAUSES",
    "SYMPTOM_CAUSES",
    "Cause",
    "Variant",
    "causes_in_domain",
    "get_cause",
]
