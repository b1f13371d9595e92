"""The run's clip-higher and entropy-bonus settings, read as each framework names them: what the
rising-entropy rule (PD704) says about a run and what diagnosis weighs its causes by.

Clip-higher (DAPO, arXiv:2503.14476, section 3.1) raises the PPO ratio's upper clip bound above the
lower one: TRL ``GRPOConfig.epsilon_high`` over ``epsilon``, veRL
``actor_rollout_ref.actor.clip_ratio_high`` over ``clip_ratio_low`` (verl/trainer/config/actor/actor.yaml);
both lower bounds default to 0.2 and DAPO uses 0.28 above it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..canonical.hparams import lookup, scalar_float
from ..run import Run

CLIP_HIGH_KEYS = ("epsilon_high", "actor_rollout_ref.actor.clip_ratio_high")
CLIP_LOW_KEYS = ("epsilon", "actor_rollout_ref.actor.clip_ratio_low")
DEFAULT_CLIP = 0.2
DAPO_CLIP_HIGH = 0.28
# An entropy bonus above this is large anywhere: TRL and veRL default to 0, classic PPO uses at most
# about 0.01 (CleanRL ``ppo.py``, baselines' Atari setting).
LARGE_ENTROPY_BONUS = 0.05


class ClipBounds(NamedTuple):
    """The upper clip bound as configured (its key and value) and the lower bound it is compared with."""

    key: str
    high: float
    low: float


def setting(run: Run, keys: tuple[str, ...]) -> tuple[str, Any] | None:
    """``(key, value)`` of the first of ``keys`` set (not None) in the run's flattened config, then
    in its canonical one."""
    for config in (run.raw_config, run.config):
        hit = lookup(config, keys)
        if hit is not None and hit[1] is not None:
            return hit
    return None


def clip_bounds(run: Run) -> ClipBounds | None:
    """The configured upper clip bound and its lower bound (the configured one, else the canonical
    ``cliprange``, else 0.2); None when no upper bound is configured."""
    hit = setting(run, CLIP_HIGH_KEYS)
    high = scalar_float(hit[1]) if hit else None
    if hit is None or high is None:
        return None
    low_hit = setting(run, CLIP_LOW_KEYS)
    low = scalar_float(low_hit[1]) if low_hit else scalar_float(run.config.get("cliprange"))
    return ClipBounds(hit[0], high, DEFAULT_CLIP if low is None else low)
