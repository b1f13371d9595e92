"""A rule's inputs: each entry of its ``requires``, resolved once to a finite, signed series.

The engine hands a rule ``ctx.req``: for every ``requires`` entry the first present metric of
the group, its steps and its finite values with the logger's sign convention undone (SB3 logs
``train/entropy_loss`` = -entropy: :mod:`ppo_doctor.view.series`), and the early/late window medians that most
rules compare.  A rule no longer re-lists its metrics or repeats the filtering.
"""

from __future__ import annotations

from functools import cached_property
from typing import Iterable

import numpy as np

from ..records import record
from ..detect import early_late, window_size
from ..run import Run
from ..view.series import finite_series


def windows(n: int, frac: float = 0.1, lo: int = 3, hi: int | None = None) -> int:
    """Size of the early / late comparison windows for a series of ``n`` points."""
    return window_size(n, frac, lo, hi)


@record
class Input:
    """One resolved ``requires`` entry: the metric chosen and its finite, signed points."""

    metric: str
    steps: np.ndarray
    values: np.ndarray

    def __len__(self) -> int:
        return len(self.values)

    @cached_property
    def _early_late(self) -> tuple[float, float, int]:
        return early_late(self.values)

    @property
    def early(self) -> float:
        """Median of the first window (10 % of the points, at least 3)."""
        return self._early_late[0]

    @property
    def late(self) -> float:
        """Median of the last window."""
        return self._early_late[1]

    @property
    def window(self) -> int:
        """Points in each of the early and late windows."""
        return self._early_late[2]


def resolve(run: Run, requires: tuple[str | tuple[str, ...], ...], unmeasured: Iterable[str] = ()) -> tuple[Input, ...]:
    """Each entry of ``requires`` as an :class:`Input`: the first metric of its group the run
    has and measured (``unmeasured``: placeholders, :mod:`ppo_doctor.view.placeholder`); the
    engine runs a rule only when every group has one."""
    skip = set(unmeasured)
    out = []
    for req in requires:
        group = (req,) if isinstance(req, str) else tuple(req)
        metric = next((m for m in group if run.frame.has(m) and m not in skip), None)
        if metric is None:
            raise LookupError(f"no metric of {'|'.join(group)} in the run")
        out.append(Input(metric, *finite_series(run, metric)))
    return tuple(out)
