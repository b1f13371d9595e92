"""A run's planned length and learning-rate warm-up, read from its flattened config
(:class:`ppo_doctor.standing.Standing` judges where the run stands against them).

Only exact keys count: ``max_steps`` nested under another section is something else (an
environment's episode limit, ``cursor.max_steps``; a generation budget), and a non-positive
value means "not set" (HF ``TrainingArguments.max_steps = -1`` when the run is sized in epochs).

* ``max_steps``: HF ``TrainerState`` / ``TrainingArguments`` (``trainer_state.json`` keeps the
  resolved figure), every TRL trainer;
* ``trainer.total_training_steps``: veRL (``ray_trainer.py``; None until it is computed);
* ``total_timesteps`` / ``n_timesteps``: CleanRL's ``Args.total_timesteps`` and RL Zoo's
  hyper-parameter files, in the environment steps SB3 and CleanRL log as their x-axis;
* warm-up: HF ``warmup_steps`` / ``warmup_ratio``, veRL ``actor_rollout_ref.actor.optim.lr_warmup_steps``
  / ``lr_warmup_steps_ratio``.

With none of them, a logged learning rate that decays on a straight line and has not reached 0
gives the plan: HF's ``linear`` scheduler (``get_linear_schedule_with_warmup``: the rate falls
linearly to 0 at ``num_training_steps``) and SB3's ``linear_schedule`` (the rate times
``progress_remaining``) both end where the line meets 0.  Only an exact line counts (a schedule is
computed, not noisy), with enough of it logged and its end still ahead.
"""

from __future__ import annotations

import math
import reprlib
from typing import Any, Mapping

import numpy as np

from ...standing import step_count
from ..hparams import scalar_float

PLAN_KEYS = ("max_steps", "trainer.total_training_steps", "total_timesteps", "n_timesteps")
WARMUP_STEP_KEYS = ("warmup_steps", "actor_rollout_ref.actor.optim.lr_warmup_steps")
WARMUP_RATIO_KEYS = ("warmup_ratio", "actor_rollout_ref.actor.optim.lr_warmup_steps_ratio")


def planned_length(flat: Mapping[str, Any], notes: list[str] | None = None) -> tuple[int | None, str]:
    """``(planned last step, the key it was read from)``, or ``(None, "")``.  A value that is no
    step count within int64 (``1e308``, ``10**40``) is not a plan: it is passed over, with a line
    in ``notes`` saying so."""
    for key in PLAN_KEYS:
        v = scalar_float(flat.get(key))
        if v is not None and v >= 1:
            n = step_count(int(v))
            if n is not None:
                return n, key
            _refused(notes, key, flat.get(key), "planned length")
    return None, ""


def warmup_length(flat: Mapping[str, Any], planned: int | None, notes: list[str] | None = None) -> int:
    """Steps of learning-rate warm-up (0 when none is configured; one that is no step count
    within int64 is noted in ``notes`` and taken as none)."""
    for key in WARMUP_STEP_KEYS:
        v = scalar_float(flat.get(key))
        if v is not None and v > 0:
            n = step_count(int(v))
            if n is not None:
                return n
            _refused(notes, key, flat.get(key), "warm-up")
    if planned:
        for key in WARMUP_RATIO_KEYS:
            v = scalar_float(flat.get(key))
            if v is not None and 0 < v < 1:
                return int(math.ceil(v * planned))
    return 0


def _refused(notes: list[str] | None, key: str, value: Any, what: str) -> None:
    if notes is not None:
        notes.append(f"{key} = {reprlib.repr(value)} is not a number of steps within int64: the run's {what} is taken as unknown")


# A schedule is computed: its decay fits a line to float precision (R^2 of 0.9999); at least this
# many points after the peak; the line's end at least 1 % past the last logged step and more than
# one logging interval past it (a rate logged before its step, as TRL's PPO CSV of the blind set
# does, reaches 0 one step after the last update: 32 updates read as "31 of 32"), and the rate
# not yet under 2 % of its peak (a schedule that reached its end has nothing to extrapolate).
LR_LINE_R2 = 0.9999
LR_LINE_MIN_POINTS = 5
LR_END_AHEAD = 1.01
LR_NOT_DONE = 0.02


def planned_from_lr(steps: np.ndarray, lr: np.ndarray) -> int | None:
    """The step where a linearly decaying learning rate reaches 0, when it is still ahead."""
    ok = np.isfinite(lr)
    s, v = steps[ok].astype(np.float64), lr[ok]
    if len(v) < LR_LINE_MIN_POINTS:
        return None
    peak = int(np.argmax(v))
    s, v = s[peak:], v[peak:]
    if len(v) < LR_LINE_MIN_POINTS or not v[0] > 0 or v[-1] < LR_NOT_DONE * v[0] or not v[-1] < v[0]:
        # a rate that did not fall has no decay to extrapolate (a constant one fits a line of
        # slope -1e-25 to float rounding: a "plan" of 1e22 steps, real22's SB3 BipedalWalker)
        return None
    slope, icept = np.polyfit(s, v, 1)
    if not slope < 0:
        return None
    resid = v - (slope * s + icept)
    total = float(np.sum((v - v.mean()) ** 2))
    if total <= 0 or 1.0 - float(np.sum(resid**2)) / total < LR_LINE_R2:
        return None
    end = -icept / slope
    interval = float(np.median(np.diff(s)))
    if not (end >= LR_END_AHEAD * s[-1] and end > s[-1] + 1.5 * interval):
        return None
    return step_count(int(round(end))) if math.isfinite(end) else None


__all__ = ["PLAN_KEYS", "planned_from_lr", "planned_length", "warmup_length"]
