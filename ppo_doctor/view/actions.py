"""Whether the policy's actions are continuous or discrete, and what says so.

A discrete policy's entropy is between 0 and ln(number of actions); a Gaussian policy's is a
differential entropy, ``sum_i 0.5 ln(2 pi e sigma_i^2)`` over the action dimensions: it falls as
the action std shrinks, which is how such a policy converges, and it goes below 0 once a std is
under ``1 / sqrt(2 pi e)`` (about 0.24).  The rules that judge an entropy (PD701, PD305) read it
differently for the two, so the run view answers the question once, with its evidence:

- a logged action std: SB3 records ``train/std`` = ``exp(log_std).mean()`` for a policy with a
  ``log_std`` parameter, i.e. a Gaussian (``stable_baselines3/ppo/ppo.py``, ``train``); CleanRL
  and home-made loops log ``logstd`` / ``action_std``; rsl_rl (legged_gym, Isaac Lab) logs
  ``Policy/mean_noise_std``, the mean of its Gaussian's std parameter (``OnPolicyRunner.log``);
- an entropy that falls from above 0 to clearly below it (:data:`BELOW_ZERO`), which no discrete
  distribution does (one that is below 0 throughout may be a sign convention misread);
- an environment id in the config, the run's path or its id that names a continuous-control
  task of Gymnasium (MuJoCo: https://gymnasium.farama.org/environments/mujoco/, Box2D:
  https://gymnasium.farama.org/environments/box2d/, classic control:
  https://gymnasium.farama.org/environments/classic_control/): their action spaces are ``Box``.

An LLM's actions are tokens, a discrete vocabulary.  Nothing said: None.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal, NamedTuple

import numpy as np

from ..canonical.name_tokens import words
from ..detect import early_late

if TYPE_CHECKING:
    from . import RunView

ActionKind = Literal["continuous", "discrete"]

# Gymnasium ids of the continuous-control tasks (Box action spaces), with their version suffix
# (``Hopper-v4``): MuJoCo, Box2D (LunarLanderContinuous, BipedalWalker[Hardcore], CarRacing) and
# classic control (Pendulum, MountainCarContinuous).  The suffix keeps words such as "Ant" in a
# path from matching.
CONTINUOUS_TASKS = (
    "HumanoidStandup",
    "Humanoid",
    "HalfCheetah",
    "Hopper",
    "Walker2d",
    "Ant",
    "Swimmer",
    "Reacher",
    "InvertedDoublePendulum",
    "InvertedPendulum",
    "Pusher",
    "Pendulum",
    "MountainCarContinuous",
    "LunarLanderContinuous",
    "BipedalWalkerHardcore",
    "BipedalWalker",
    "CarRacing",
)
_TASK_ID = re.compile(r"(?<![A-Za-z0-9])(" + "|".join(CONTINUOUS_TASKS) + r")-v\d+")

# A logged action std is a tag made only of these words with one of _STD among them
# (``train/std``, ``charts/action_std``, ``logstd``, ``policy/log_std``); a word of anything
# else (``reward``, ``adv``, ``value``) makes it another quantity's spread.
_STD = frozenset({"std", "logstd", "stddev"})
_STD_CONTEXT = frozenset({"train", "charts", "losses", "policy", "actor", "pi", "action", "actions", "log", "mean", "avg", "noise"}) | _STD


class ActionSpace(NamedTuple):
    """The kind of actions and the evidence, in words, for the reports."""

    kind: ActionKind
    evidence: str
    std_tag: str | None = None  # the logged action std, when there is one
    log_std: bool = False  # its values are ln(std)


# Spinning Up's EpochLogger writes a quantity's statistics over an epoch side by side
# (``log_tabular(key, with_min_and_max=True)``: AverageLogPi, StdLogPi, MaxLogPi, MinLogPi): a
# std tag with such a sibling is the spread of that quantity, not an action std.
_SIBLING_STATS = ("average", "mean", "max", "min")


def _spread_of_a_logged_quantity(tag: str, metrics: list[str]) -> bool:
    """``tag`` (a std) has a sibling that is the same name with an average, max or min instead."""
    rest = sorted(w for w in words(tag) if w not in _STD)
    return any(sorted([*rest, stat]) == sorted(words(m)) for m in metrics for stat in _SIBLING_STATS if m != tag)


def action_std_tag(view: RunView) -> tuple[str, bool] | None:
    """``(tag, is_log)`` of a logged action std (module docstring), else None."""
    metrics = list(view.run.frame.metrics)
    for tag in metrics:
        ws = set(words(tag))
        if ws & _STD and ws <= _STD_CONTEXT and not _spread_of_a_logged_quantity(tag, metrics):
            return tag, bool(ws & {"log", "logstd"})
    return None


def task_id(view: RunView) -> str | None:
    """A continuous-control Gymnasium id named in the config, the run's path or its id."""
    run = view.run
    texts = [v for v in (*run.config.values(), *run.raw_config.values()) if isinstance(v, str)]
    for text in (*texts, run.path, run.id):
        m = _TASK_ID.search(text)
        if m:
            return m.group(0)
    return None


def action_std_series(view: RunView) -> tuple[str, np.ndarray, np.ndarray] | None:
    """The logged action std as ``(tag, steps, std)``, a logged ln(std) undone; else None."""
    found = action_std_tag(view)
    if found is None:
        return None
    tag, is_log = found
    s, v = view.finite(tag, signed=False)
    return tag, s, (np.exp(v) if is_log else v)


def late_action_std(view: RunView, space: ActionSpace) -> float | None:
    """The median action std over the last 10 % of its points, when it is logged."""
    if space.std_tag is None:
        return None
    _, v = view.finite(space.std_tag, signed=False)
    if len(v) < 3:
        return None
    late = early_late(v)[1]
    return float(np.exp(late)) if space.log_std else late


# How far below 0 an entropy must end to be a differential one.  A discrete policy that became
# deterministic logs an entropy of 0 give or take float rounding (ML-Agents' 2048 player ends at
# -1.2e-7 nats); every Gaussian policy in ../shared that fell through 0 ends 0.2 nats or more below it.
BELOW_ZERO = 0.01


def action_space(view: RunView) -> ActionSpace | None:
    """Continuous or discrete actions, with the evidence (module docstring), else None."""
    if view.is_llm_rl:
        return ActionSpace("discrete", "an LLM policy: its actions are tokens of a vocabulary")
    std = action_std_tag(view)
    if std is not None:
        return ActionSpace("continuous", f"an action std is logged ({std[0]}): a Gaussian policy", std[0], std[1])
    ent = view.entropy
    if ent is not None and len(ent.values) >= 3:
        first, late, _ = early_late(ent.values)
        # window medians: a stray noisy point is not a negative entropy.  Falling through 0, not
        # merely below it: a value below 0 throughout is as likely a misread sign convention or
        # an entropy penalty (stable-baselines PPO1 logs ``entropy_loss`` = -ent_coef * entropy)
        if first > 0 and late < -BELOW_ZERO:
            return ActionSpace("continuous", f"the entropy falls through 0 ({first:.3g} -> {late:.3g}): a differential entropy, continuous actions")
    task = task_id(view)
    if task is not None:
        return ActionSpace("continuous", f"{task} is a continuous-control task (Gymnasium: Box actions)")
    return None
