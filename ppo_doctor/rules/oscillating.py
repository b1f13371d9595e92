"""Shared judgement for the oscillation rules (PD501 reward, PD502 KL).

The detector (:func:`ppo_doctor.detect.oscillation`) measures swings; a series oscillates
"without converging" here when it has at least ``min_swings`` alternations (by default 8,
i.e. 4 full cycles), the swings stand well above smoothed noise
(``structure``), they are a visible share of the series' range (``min_rel_amplitude``), and
the last third still swings at least ``min_decay`` times as much as the first third.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..detect import Oscillation, oscillation


def judge(steps: np.ndarray, values: np.ndarray, params: dict[str, Any]) -> Oscillation | None:
    """The oscillation measurement when it passes every threshold in ``params``, else None."""
    if len(values) < params["min_points"]:
        return None
    o = oscillation(steps, values)
    if o.swings < params["min_swings"] or not o.structure >= params["min_structure"]:
        return None
    if not o.rel_amplitude >= params["min_rel_amplitude"] or not o.decay >= params["min_decay"]:
        return None
    return o


DEFAULT_PARAMS = {"min_swings": 8, "min_structure": 3.0, "min_rel_amplitude": 0.2, "min_decay": 0.5, "min_points": 40}


def peak_step(steps: np.ndarray, values: np.ndarray, o: Oscillation) -> int | None:
    """Step of the highest point between the first and the last alternation."""
    if o.start_step is None:
        return None
    inside = (steps >= o.start_step) & (steps <= o.end_step)
    if not inside.any():
        return o.start_step
    return int(steps[inside][int(np.argmax(values[inside]))])
