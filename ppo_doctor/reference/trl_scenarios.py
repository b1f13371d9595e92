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

from .scenarios import Scenario


def _s(*names: str) -> frozenset[str]:
    return frozenset(names)


def _trl(name: str, description: str, changes: dict | None = None, **kw: object) -> Scenario:
    return Scenario(name, description, dict(changes or {}), suite="trl", **kw)  # type: ignore[arg-type]


TRL_SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        _trl("grpo-healthy-s1", "GRPO defaults of this suite, seed 1", {"seed": 1}),
        _trl("grpo-healthy-s2", "GRPO defaults of this suite, seed 2", {"seed": 2}),
        _trl("grpo-healthy-s3", "GRPO defaults of this suite, seed 3", {"seed": 3}),
        _trl(
            "grpo-lr-x100",
            "learning rate 5e-3 (100x)",
            {"learning_rate": 5e-3},
            expected=_s("kl_blowup"),
            allowed=_s("entropy_collapse", "reward_hacking", "gradient_explosion", "stagnation", "oscillation"),
            top_cause="lr-too-high",
        ),
        _trl(
            "grpo-lr-x1000",
            "learning rate 5e-2 (1000x)",
            {"learning_rate": 5e-2},
            expected=_s("kl_blowup", "entropy_collapse"),
            allowed=_s("reward_hacking", "gradient_explosion", "stagnation", "oscillation"),
            top_cause="lr-too-high",
        ),
        _trl(
            "grpo-lr-zero",
            "learning rate 5e-10 (1e-5 of the default): nothing is learned",
            {"learning_rate": 5e-10},
            expected=_s("stagnation"),
            top_cause="lr-too-low",
        ),
        _trl(
            "grpo-beta0-hackable",
            "beta 0 (TRL's default) and a reward that pays 0.3 per '!'",
            {"beta": 0.0, "rewards": ("hackable",)},
            expected=_s("reward_hacking"),
            allowed=_s("entropy_collapse"),
            top_cause="reward-model-flawed",
        ),
        _trl(
            "grpo-noise-reward",
            "the reward is pure noise, N(0, 1), independent of the completion",
            {"rewards": ("noise",)},
            expected=_s("stagnation"),
            top_cause="reward-model-flawed",
        ),
        _trl(
            "grpo-nan-reward",
            "the reward function returns NaN from step 60 on",
            {"nan_from_step": 60},
            expected=_s("nan", "stagnation"),
            top_cause="implementation-bug",
        ),
        _trl(
            "grpo-reward-x1000-unscaled",
            "rewards x1000 with reward scaling off (scale_rewards='none')",
            {"reward_scale": 1000.0, "scale_rewards": "none"},
            expected=_s("gradient_explosion"),
            allowed=_s("kl_blowup", "entropy_collapse", "reward_hacking"),
            top_cause="reward-not-normalized",
        ),
        _trl(
            "grpo-sparse-reward",
            "reward 1 only for a completion with 4+ positive adjectives, else 0: most groups have zero std",
            {"rewards": ("sparse",), "sparse_min_positive": 4},
            expected=_s("stagnation"),
            top_cause="weak-learning-signal",
        ),
        _trl(
            "grpo-temperature-high",
            "sampling temperature 4",
            {"temperature": 4.0},
            expected=_s("stagnation"),
            top_cause="generation-settings",
        ),
        _trl(
            "grpo-temperature-low",
            "sampling temperature 0.05",
            {"temperature": 0.05},
            expected=_s("stagnation"),
            allowed=_s("entropy_collapse", "kl_blowup"),
            top_cause="generation-settings",
        ),
        _trl(
            "grpo-reward-glitch",
            "the scorer returns 50 for every completion at steps 60-61",
            {"glitch_steps": (60, 61)},
            expected=_s("reward_spike"),
            top_cause="reward-model-flawed",
        ),
    )
}
