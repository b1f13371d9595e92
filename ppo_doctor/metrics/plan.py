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
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from ..hparams import parse_scalar

PLAN_KEYS = ("max_steps", "trainer.total_training_steps", "total_timesteps", "n_timesteps")
WARMUP_STEP_KEYS = ("warmup_steps", "actor_rollout_ref.actor.optim.lr_warmup_steps")
WARMUP_RATIO_KEYS = ("warmup_ratio", "actor_rollout_ref.actor.optim.lr_warmup_steps_ratio")


def _number(value: Any) -> float | None:
    v = parse_scalar(value) if isinstance(value, str) else value
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def planned_length(flat: Mapping[str, Any]) -> tuple[int | None, str]:
    """``(planned last step, the key it was read from)``, or ``(None, "")``."""
    for key in PLAN_KEYS:
        v = _number(flat.get(key))
        if v is not None and v >= 1:
            return int(v), key
    return None, ""


def warmup_length(flat: Mapping[str, Any], planned: int | None) -> int:
    """Steps of learning-rate warm-up (0 when none is configured)."""
    for key in WARMUP_STEP_KEYS:
        v = _number(flat.get(key))
        if v is not None and v > 0:
            return int(v)
    if planned:
        for key in WARMUP_RATIO_KEYS:
            v = _number(flat.get(key))
            if v is not None and 0 < v < 1:
                return int(math.ceil(v * planned))
    return 0


__all__ = ["PLAN_KEYS", "planned_length", "warmup_length"]
