"""Fault scenarios for TRL's own ``GRPOTrainer`` (``validate --suite trl``).

Each scenario changes a few fields of :class:`~ppo_doctor.reference.trl_suite.GrpoArgs` and is
a :class:`~ppo_doctor.reference.scenarios.Scenario` with ``suite="trl"``, scored like the PPO
reference scenarios.  The base run: the reference loop's SFT GPT-2, 120 steps of 4 prompts x 8
completions, learning rate 5e-5, beta 0.04, temperature 1, the grammar's sentiment reward
(tanh(#positive - #negative adjectives), in (-1, 1)), TRL 1.16's defaults otherwise
(loss_type "dapo", scale_rewards "group", max_grad_norm 1).

Every label below says what the run's own curves show (measured with TRL 1.16.0, seed 1 unless
noted, one torch thread); where the curves show more than the injected fault, the extra
symptoms are ``allowed``.  GRPO is critic-free: no scenario expects a value symptom.
"""

from __future__ import annotations

from typing import Any

from .scenarios import Scenario


def _s(*names: str) -> frozenset[str]:
    return frozenset(names)


def _trl(name: str, description: str, changes: dict[str, Any] | None = None, **kw: Any) -> Scenario:
    return Scenario(name, description, dict(changes or {}), suite="trl", **kw)


TRL_SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        _trl("grpo-healthy-s1", "GRPO defaults of this suite, seed 1: reward 0.12 -> 0.29 (noisy, peak 0.48), KL <= 0.13 nats per "
            "token, entropy 1.64 -> 1.54, responses 5.4-7.4 tokens, at most 3 % truncated", {"seed": 1}),
        _trl("grpo-healthy-s2", "GRPO defaults of this suite, seed 2: reward -0.09 -> 0.31 (peak 0.65), KL <= 0.08, entropy "
            "1.71 -> 1.49", {"seed": 2}),
        _trl("grpo-healthy-s3", "GRPO defaults of this suite, seed 3: reward -0.05 -> 0.43 (peak 0.63), KL <= 0.08, entropy "
            "1.63 -> 1.62", {"seed": 3}),
        _trl(
            "grpo-lr-x100",
            "learning rate 5e-3 (100x): KL 0.43 at step 2, 6 by step 8, peak 34, 5.2 at the end; the reward "
            "sits at its ceiling 1.0 (std ~0) from step 8 with 10-16-token responses: the policy spams positive "
            "adjectives",
            {"learning_rate": 5e-3},
            expected=_s("kl_blowup"),
            allowed=_s("entropy_collapse", "reward_hacking", "gradient_explosion", "stagnation", "oscillation"),
            top_cause="lr-too-high",
        ),
        _trl(
            "grpo-lr-x1000",
            "learning rate 5e-2 (1000x): KL 5.2 at step 2, 5.5 at the end (peak 6.6); entropy 1.64 -> "
            "below 0.01 from step 29; the reward sits at 1.0 for steps 4-30, at 0.76 for steps 34-55 and at "
            "0 from step 58 to the end (one fixed 16-token response, every group zero-std), grad norm "
            "below 1e-3 from step 58.  The reward's fall is not what the fault always does: on held-out "
            "seeds 4 and 10 the reward stays at its ceiling to the end (seeds 1 and 7 collapse), so "
            "reward_collapse is an allowed outcome, not an expected one; KL blow-up and the entropy "
            "collapse happen on every seed",
            {"learning_rate": 5e-2},
            expected=_s("kl_blowup", "entropy_collapse"),
            allowed=_s("reward_collapse", "reward_hacking", "gradient_explosion", "stagnation", "oscillation"),
            top_cause="lr-too-high",
        ),
        _trl(
            "grpo-lr-zero",
            "learning rate 5e-10 (1e-5 of the default): KL exactly 0 throughout, reward noise around 0 "
            "(0.12 at step 1, -0.09 at step 120)",
            {"learning_rate": 5e-10},
            expected=_s("stagnation"),
            top_cause="lr-too-low",
        ),
        _trl(
            "grpo-beta0-hackable",
            "beta 0 (TRL's default) and a reward that pays 0.3 per '!': reward 0.2 -> 2.5 while responses "
            "grow 6.4 -> 12.9 tokens and entropy falls 1.64 -> 0.88; no KL is logged (beta 0).  The exploit "
            "is the reward paying per repeated token, so the response length grows with it: the catalog's "
            "'reward-hacking-length' (exploited through length or repetition, no penalty term; fix: a "
            "length/repetition term in the reward) names it more precisely than the generic "
            "'reward-model-flawed'",
            {"beta": 0.0, "rewards": ("hackable",)},
            expected=_s("reward_hacking"),
            allowed=_s("entropy_collapse"),
            top_cause="reward-hacking-length",
        ),
        _trl(
            "grpo-noise-reward",
            "the reward is pure noise, N(0, 1), independent of the completion: reward mean flat around 0 "
            "(std ~1), KL <= 0.014, entropy and lengths unchanged",
            {"rewards": ("noise",)},
            expected=_s("stagnation"),
            top_cause="reward-model-flawed",
        ),
        _trl(
            "grpo-nan-reward",
            "the reward function returns NaN from step 60 on: TRL logs reward and reward_std as null in "
            "trainer_state.json and not at all in TensorBoard from step 60; the advantages become 0, so the "
            "grad norm falls from 0.56-1.26 before to 0.009-0.09 (only the KL term pulls)",
            {"nan_from_step": 60},
            expected=_s("nan", "stagnation"),
            # the injected fault is the reward function's NaN: the catalog names it as such
            top_cause="reward-function-nan",
        ),
        _trl(
            "grpo-reward-x1000-unscaled",
            "rewards x1000 with reward scaling off (scale_rewards='none'): the pre-clip grad norm is "
            "310-920 at every step (max_grad_norm 1: every update clipped), loss -127..119; AdamW and "
            "clipping absorb the scale, so reward (x1000), KL (<= 0.11) and entropy follow the healthy run's "
            "course",
            {"reward_scale": 1000.0, "scale_rewards": "none"},
            expected=_s("gradient_explosion"),
            allowed=_s("kl_blowup", "entropy_collapse", "reward_hacking"),
            top_cause="reward-not-normalized",
        ),
        _trl(
            "grpo-sparse-reward",
            "reward 1 only for a completion with 4+ positive adjectives, else 0: one of 3840 completions "
            "is ever paid (step 73); frac_reward_zero_std 1.0 and grad norm exactly 0 up to it, "
            "0.0007-0.03 after (the KL term)",
            {"rewards": ("sparse",), "sparse_min_positive": 4},
            expected=_s("stagnation"),
            top_cause="weak-learning-signal",
        ),
        _trl(
            "grpo-temperature-high",
            "sampling temperature 4: entropy 3.68-3.71 (of log 57 = 4.04) throughout, responses 10-15 "
            "tokens and 25-75 % truncated at 16, reward noise in -0.43..0.36, KL <= 0.011",
            {"temperature": 4.0},
            expected=_s("stagnation"),
            top_cause="generation-settings",
        ),
        _trl(
            "grpo-temperature-low",
            "sampling temperature 0.05: near-greedy, so from step 15 most steps' completions are all "
            "the same review: reward 0.964 with std 6e-8 (TRL's frac_reward_zero_std stays 0: its isclose "
            "misses that float32 residue); grad norm 7-21 over steps 1-11 (logits / 0.05), then 0.017-9; "
            "KL at the sampling temperature 0.18-1.09 nats per token from step 12",
            {"temperature": 0.05},
            expected=_s("stagnation"),
            allowed=_s("entropy_collapse", "kl_blowup"),
            top_cause="generation-settings",
        ),
        _trl(
            "grpo-reward-glitch",
            "the scorer returns 50 for every completion at steps 60-61: two reward points at 50 among "
            "values of -0.14..0.58; the group std is 0 there, so the advantages are 0 and training goes on",
            {"glitch_steps": (60, 61)},
            expected=_s("reward_spike"),
            top_cause="reward-model-flawed",
        ),
    )
}
