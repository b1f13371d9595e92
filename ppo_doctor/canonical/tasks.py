"""Which standard benchmark task a run trains on, and the episode return that counts as solving it.

A return that rose and then stopped far below what the task allows is a plateau the run's own
curve cannot show: on its own axis it looks like a policy that learned and converged.  For the
standard Gymnasium tasks the level that counts as solved is published with the environment: its
``reward_threshold`` (``gymnasium/envs/__init__.py``, read from ``gymnasium.registry`` in
Gymnasium 1.4), e.g. 200 for LunarLander and 475
for CartPole-v1.

Only tasks whose threshold any working agent reaches are listed: classic control, LunarLander,
the toy-text grids and the two MuJoCo balancing tasks.  The locomotion tasks' thresholds
(Hopper 3800, HalfCheetah 4800, Ant 6000) and those of BipedalWalker and CarRacing are expert
scores that healthy runs on common budgets end below, so they say nothing about a plateau.

The task is read from the run's config (an ``env_id`` / ``env`` / ``task`` setting, as CleanRL,
SB3 and the CS285 homework write it) or from its id (``runs/CartPole-v1__ppo__1``,
``lunarlander_v3_a2c_logs``).  Names that other suites reuse for other rewards are matched only
with their Gymnasium version (``CartPole-v1``, not Isaac Gym's ``Cartpole`` task or a swing-up
variant; ``Taxi-v3`` / ``Taxi-v4``, ``FrozenLake-v1``).  This module knows names and numbers, nothing of rules.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from ..run import Run


class SolvedLevel(NamedTuple):
    """A task the run trains on, the episode return that counts as solving it, and where the
    task's name was read."""

    task: str
    level: float
    where: str


# normalised name (lower case, letters and digits only) -> (task, Gymnasium reward_threshold).
# Longer names are tried first, so "mountaincarcontinuous" wins over "mountaincar".  An
# unversioned CartPole is not listed: Isaac Gym's "Cartpole" task and swing-up variants share
# the name with other rewards.
SOLVED_LEVELS: dict[str, tuple[str, float]] = {
    "cartpolev0": ("CartPole-v0", 195.0),
    "cartpolev1": ("CartPole-v1", 475.0),
    "acrobot": ("Acrobot-v1", -100.0),
    "mountaincar": ("MountainCar-v0", -110.0),
    "mountaincarcontinuous": ("MountainCarContinuous-v0", 90.0),
    "lunarlander": ("LunarLander", 200.0),
    "lunarlandercontinuous": ("LunarLanderContinuous", 200.0),
    "frozenlakev1": ("FrozenLake-v1", 0.70),
    "frozenlake8x8v1": ("FrozenLake8x8-v1", 0.85),
    "taxiv3": ("Taxi-v3", 8.0),
    "taxiv4": ("Taxi-v4", 8.0),
    "invertedpendulum": ("InvertedPendulum", 950.0),
    "inverteddoublependulum": ("InvertedDoublePendulum", 9100.0),
}
_BY_LENGTH = sorted(SOLVED_LEVELS, key=len, reverse=True)

# Config keys (the last part of a flattened key) that name the environment.
TASK_KEYS = frozenset({"env", "env_id", "env_name", "envname", "environment", "gym_id", "task", "task_name", "game"})


def _normalised(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _match(text: str) -> tuple[str, float] | None:
    norm = _normalised(text)
    return next((SOLVED_LEVELS[k] for k in _BY_LENGTH if k in norm), None)


def solved_level(run: Run) -> SolvedLevel | None:
    """The standard task ``run`` trains on and its solved level, or None when neither its config
    nor its id names one of :data:`SOLVED_LEVELS`.  A run whose path says it is an Isaac Gym
    task is not matched: those tasks reuse Gymnasium's names with their own rewards."""
    config = {**run.raw_config, **run.config}
    for key, value in config.items():
        if isinstance(value, str) and re.split(r"[./]", str(key))[-1].lower() in TASK_KEYS:
            hit = _match(value)
            if hit is not None:
                return SolvedLevel(hit[0], hit[1], f"config {key} = {value}")
    if "isaac" in _normalised(run.id):
        return None
    hit = _match(run.id)
    return SolvedLevel(hit[0], hit[1], f"run {run.id}") if hit is not None else None
