"""Which kind of training a run's causes and fixes are written for, and in which framework's words.

A symptom has different causes in different kinds of training: an SB3 agent whose entropy
collapses has no reward model and no KL penalty to a reference, but may have no entropy bonus
(SB3's ``ent_coef`` defaults to 0.0); a value loss that diverges on a chess board wants
``VecNormalize``, not TRL's ``whiten_rewards``.  :func:`cause_domain` names the kind:

* ``"classic"``: a classic-RL run: SB3, SB2, CleanRL (:func:`ppo_doctor.canonical.frameworks.domain`),
  and a log of an unknown trainer that logs classic-RL episode returns (openai/baselines' ``eprewmean``,
  a home-made gym loop's ``episode_reward``; :data:`CLASSIC_RETURN_TAGS`).  The run view keeps those
  "unknown" (PD902's note depends on it, ``canonical/frameworks.py``); for causes they are classic RL;
* ``"grpo"``: an LLM run that learns from groups of samples scored by reward functions (TRL
  ``GRPOTrainer``, or a group size ``num_generations`` > 1 without a critic);
* ``"preference"``: offline preference optimisation (TRL's DPOTrainer and its kin, ``trl_dpo``):
  no sampling, no reward, no critic, no KL term; its causes are the optimiser's and the pairs';
* ``"rlhf"``: any other LLM run (PPO against a reward model, RLOO, ...);
* ``"unknown"``: nothing tells; every cause stays possible.

:func:`classic_flavour` and :class:`ArgNames` write a classic-RL fix in the arguments of the framework
the run came from (SB3, SB2, CleanRL or baselines), or in those of SB3, CleanRL and baselines together
when the trainer is not known.  The spellings are checked against the frameworks' sources
(``docs/sources.md#classic-rl-arguments``): ``stable_baselines3/ppo/ppo.py`` (``PPO.__init__``),
``cleanrl/ppo_continuous_action.py`` (``Args`` and ``make_env``), ``baselines/ppo2/ppo2.py``
(``learn``) and ``baselines/common/vec_env/vec_normalize.py``, stable-baselines
``stable_baselines/ppo2/ppo2.py`` (``PPO2.__init__``).
"""

from __future__ import annotations

from typing import Literal

from ..canonical.frameworks import EPISODE_TAGS, PREFERENCE_FRAMEWORKS, candidate_keys
from ..view import RunView

CauseDomain = Literal["classic", "rlhf", "grpo", "preference", "unknown"]
CAUSE_DOMAINS: tuple[CauseDomain, ...] = ("classic", "rlhf", "grpo", "preference", "unknown")

# Episode-return tags of classic-RL loops (``canonical.frameworks.EPISODE_TAGS``) plus CleanRL's
# ``charts/episodic_return`` as ports of it log it, with or without the ``charts/`` prefix.
CLASSIC_RETURN_TAGS = frozenset(EPISODE_TAGS) | {"episodic_return", "charts/episodic_return"}
# Keys only openai/baselines' ppo2 logger writes (``baselines/ppo2/ppo2.py``: ``logger.logkv``).
BASELINES_PPO2_TAGS = frozenset({"eprewmean", "serial_timesteps"})


def _raw_tags(view: RunView) -> set[str]:
    run = view.run
    return {k for t in [*run.mapping, *run.unmapped] for k in candidate_keys(t)}


def cause_domain(view: RunView) -> CauseDomain:
    """The kind of training the run's causes are chosen and worded for (module docstring)."""
    if view.domain == "classic":
        return "classic"
    if view.framework in PREFERENCE_FRAMEWORKS:
        return "preference"
    if view.domain == "unknown":
        return "classic" if _raw_tags(view) & CLASSIC_RETURN_TAGS else "unknown"
    group = (view.cfg_float("num_generations") or 0) > 1 and view.has_critic() is not True
    return "grpo" if view.is_grpo or view.has("reward/zero_std_frac") or group else "rlhf"


# The frameworks whose argument names a classic-RL fix can use.
Flavour = Literal["sb3", "sb2", "cleanrl", "baselines"]
FLAVOUR_NAMES: dict[str, str] = {"sb3": "SB3", "sb2": "SB2", "cleanrl": "CleanRL", "baselines": "baselines"}


def classic_flavour(view: RunView) -> Flavour | None:
    """The classic-RL framework whose arguments the fixes name, None when it is not known."""
    if view.framework in ("sb3", "sb2", "cleanrl"):
        return view.framework  # type: ignore[return-value]
    if _raw_tags(view) & BASELINES_PPO2_TAGS:
        return "baselines"
    return None


# knob -> how each framework spells it.  SB3 ``PPO.__init__`` (learning_rate, n_steps, batch_size =
# the minibatch, n_epochs, gamma, gae_lambda, clip_range, clip_range_vf, ent_coef, vf_coef,
# max_grad_norm, target_kl); CleanRL ``Args`` as tyro flags (--learning-rate, --num-steps,
# --num-minibatches, --update-epochs, --anneal-lr, --gae-lambda, --clip-coef, --clip-vloss,
# --ent-coef, --vf-coef, --max-grad-norm, --target-kl); baselines ``ppo2.learn`` (lr, nsteps,
# nminibatches, noptepochs, lam, cliprange, ent_coef, vf_coef, max_grad_norm; no KL early stop;
# ``cliprange`` also clips the value); SB2 ``PPO2`` (learning_rate, n_steps, nminibatches,
# noptepochs, lam, cliprange, cliprange_vf, ent_coef, vf_coef, max_grad_norm; no KL early stop).
CLASSIC_ARGS: dict[str, dict[str, str]] = {
    "lr": {"sb3": "`learning_rate`", "sb2": "`learning_rate`", "cleanrl": "`--learning-rate`", "baselines": "`lr`"},
    "lr_schedule": {
        "sb3": "`learning_rate=linear_schedule(3e-4)` (a function of the remaining progress, SB3 docs)",
        "sb2": "`learning_rate` as a function of the remaining progress",
        "cleanrl": "`--anneal-lr` (on by default)",
        "baselines": "`lr=lambda frac: 3e-4 * frac`",
    },
    "n_steps": {"sb3": "`n_steps`", "sb2": "`n_steps`", "cleanrl": "`--num-steps`", "baselines": "`nsteps`"},
    "minibatch": {
        "sb3": "`batch_size` (the minibatch)",
        "sb2": "`nminibatches`",
        "cleanrl": "`--num-minibatches`",
        "baselines": "`nminibatches`",
    },
    "n_epochs": {"sb3": "`n_epochs`", "sb2": "`noptepochs`", "cleanrl": "`--update-epochs`", "baselines": "`noptepochs`"},
    "ent_coef": {"sb3": "`ent_coef`", "sb2": "`ent_coef`", "cleanrl": "`--ent-coef`", "baselines": "`ent_coef`"},
    "clip_range": {"sb3": "`clip_range`", "sb2": "`cliprange`", "cleanrl": "`--clip-coef`", "baselines": "`cliprange`"},
    "clip_range_vf": {
        "sb3": "`clip_range_vf`",
        "sb2": "`cliprange_vf`",
        "cleanrl": "`--clip-vloss`",
        "baselines": "`cliprange` (it clips the value too)",
    },
    "target_kl": {
        "sb3": "`target_kl`",
        "sb2": "(none in PPO2)",
        "cleanrl": "`--target-kl`",
        "baselines": "(none in ppo2)",
    },
    "vf_coef": {"sb3": "`vf_coef`", "sb2": "`vf_coef`", "cleanrl": "`--vf-coef`", "baselines": "`vf_coef`"},
    "max_grad_norm": {"sb3": "`max_grad_norm`", "sb2": "`max_grad_norm`", "cleanrl": "`--max-grad-norm`", "baselines": "`max_grad_norm`"},
    "gae_lambda": {"sb3": "`gae_lambda`", "sb2": "`lam`", "cleanrl": "`--gae-lambda`", "baselines": "`lam`"},
    "gamma": {"sb3": "`gamma`", "sb2": "`gamma`", "cleanrl": "`--gamma`", "baselines": "`gamma`"},
    "normalize": {
        "sb3": "`VecNormalize(env, norm_obs=True, norm_reward=True)`",
        "sb2": "`VecNormalize(env, norm_obs=True, norm_reward=True)`",
        "cleanrl": "`gym.wrappers.NormalizeObservation` and `gym.wrappers.NormalizeReward`",
        "baselines": "`VecNormalize(env, ob=True, ret=True)`",
    },
    "clip_reward": {
        "sb3": "`VecNormalize(clip_reward=10.0)` (or `ClipRewardEnv` on Atari)",
        "sb2": "`VecNormalize(clip_reward=10.0)`",
        "cleanrl": "`gym.wrappers.TransformReward(env, lambda r: np.clip(r, -10, 10))`",
        "baselines": "`VecNormalize(cliprew=10.0)` (or `ClipRewardEnv` on Atari)",
    },
    "check_env": {
        "sb3": "`stable_baselines3.common.env_checker.check_env(env)` and `VecCheckNan(env, raise_exception=True)`",
        "sb2": "`stable_baselines.common.env_checker.check_env(env)` and `VecCheckNan(env, raise_exception=True)`",
        "cleanrl": "`gymnasium.utils.env_checker.check_env(env)`",
        "baselines": "(no checker: assert finite, bounded observations and rewards in a wrapper)",
    },
    "record_video": {
        "sb3": "`VecVideoRecorder`",
        "sb2": "`VecVideoRecorder`",
        "cleanrl": "`--capture-video`",
        "baselines": "`VecVideoRecorder`",
    },
    "eval_callback": {
        "sb3": "`EvalCallback(eval_env, best_model_save_path=...)`",
        "sb2": "`EvalCallback(eval_env, best_model_save_path=...)`",
        "cleanrl": "(no callback: evaluate every few iterations and keep the best checkpoint; `--save-model` keeps the last)",
        "baselines": "`ppo2.learn(eval_env=...)` (logs `eval_eprewmean`)",
    },
}
# Frameworks named together when the run's own is unknown.
UNKNOWN_FLAVOURS: tuple[Flavour, ...] = ("sb3", "cleanrl", "baselines")


class ArgNames(dict[str, str]):
    """``str.format_map`` mapping: ``{n_epochs}`` -> the flavour's argument, or SB3's, CleanRL's and
    baselines' together (each prefixed with its framework) when the flavour is None."""

    def __init__(self, flavour: Flavour | None):
        super().__init__()
        self.flavour = flavour

    def __missing__(self, knob: str) -> str:
        spellings = CLASSIC_ARGS[knob]
        if self.flavour is not None:
            return f"{FLAVOUR_NAMES[self.flavour]} {spellings[self.flavour]}"
        return ", ".join(f"{FLAVOUR_NAMES[f]} {spellings[f]}" for f in UNKNOWN_FLAVOURS)


def render_classic(text: str, flavour: Flavour | None) -> str:
    """A classic-RL fix with its ``{knob}`` fields written in the run's framework's arguments."""
    return text.format_map(ArgNames(flavour))


__all__ = [
    "ArgNames",
    "CAUSE_DOMAINS",
    "CLASSIC_ARGS",
    "CauseDomain",
    "Flavour",
    "cause_domain",
    "classic_flavour",
    "render_classic",
]
