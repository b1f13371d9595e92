"""Non-finite values: NaN, +Inf and -Inf masks with the first step of each kind.

Readers keep NaN/Inf exactly as logged (frame.py contract; docs/sources.md#nan-encodings lists the many
encodings), so this is the one place that decides what counts as non-finite.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ._util import as_arrays
from .spans import Span, mask_to_spans


@dataclass
class NonFinite:
    """Where a series is not finite."""

    nan: np.ndarray
    posinf: np.ndarray
    neginf: np.ndarray
    first_step: int | None
    first_kind: str | None  # "nan", "+inf" or "-inf"
    last_finite_step: int | None
    recovered: bool  # a finite value follows the first non-finite one

    @property
    def any(self) -> np.ndarray:
        return self.nan | self.posinf | self.neginf

    @property
    def count(self) -> int:
        return int(self.any.sum())

    def counts(self) -> dict[str, int]:
        """Number of points of each non-finite kind."""
        return {"nan": int(self.nan.sum()), "+inf": int(self.posinf.sum()), "-inf": int(self.neginf.sum())}

    def spans(self, steps: ArrayLike) -> list[Span]:
        """Runs of consecutive non-finite points."""
        return mask_to_spans(steps, self.any)


def nonfinite(steps: ArrayLike, values: ArrayLike) -> NonFinite:
    """Classify every point; ``first_*`` are None when the series is all finite."""
    s, v = as_arrays(steps, values)
    if np.isfinite(v).all():  # the common case, ~10x cheaper than the three masks
        none = np.zeros(len(v), dtype=bool)
        return NonFinite(none, none, none, None, None, int(s[-1]) if len(s) else None, False)
    nan = np.isnan(v)
    posinf = np.isposinf(v)
    neginf = np.isneginf(v)
    bad = nan | posinf | neginf
    hit = np.flatnonzero(bad)
    good = np.flatnonzero(~bad)
    if len(hit) == 0:
        return NonFinite(nan, posinf, neginf, None, None, int(s[-1]) if len(s) else None, False)
    i = int(hit[0])
    kind = "nan" if nan[i] else ("+inf" if posinf[i] else "-inf")
    last_finite = int(s[good[-1]]) if len(good) else None
    recovered = bool(len(good) and good[-1] > i)
    return NonFinite(nan, posinf, neginf, int(s[i]), kind, last_finite, recovered)
