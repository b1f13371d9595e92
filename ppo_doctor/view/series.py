"""A metric's finite points with the logger's sign convention undone.

SB3 logs ``train/entropy_loss`` = -entropy (``stable_baselines3/common/on_policy_algorithm.py``
and ``ppo/ppo.py``: ``entropy_loss = -th.mean(entropy)``); the metric mapping records such a
negation as ``MetricInfo.sign = -1``, and every reader of a run's values undoes it here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..detect import finite_xy

if TYPE_CHECKING:
    from ..run import Run


def metric_sign(run: Run, metric: str) -> int:
    """+1, or -1 when the framework logs the negation (SB3 ``train/entropy_loss``)."""
    info = run.metric_info.get(metric)
    if info is not None and info.sign in (1, -1):
        return int(info.sign)
    return 1


def finite_series(run: Run, metric: str, signed: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Steps and finite values of ``metric`` (sign convention applied when ``signed``)."""
    steps, values = run.frame.arrays(metric)
    s, v = finite_xy(steps, values)
    if signed and metric_sign(run, metric) == -1:
        v = -v
    return s, v
