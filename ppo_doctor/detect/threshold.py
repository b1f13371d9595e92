"""Threshold masks: which points lie above, below or outside a band.

Non-finite handling is explicit: NaN never counts as crossing (it is reported by
:mod:`.nonfinite`), while +Inf is above every threshold and -Inf below every one.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def above(values: ArrayLike, threshold: float, inclusive: bool = False) -> np.ndarray:
    """True where ``value > threshold`` (``>=`` when inclusive); NaN is False."""
    v = np.asarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return v >= threshold if inclusive else v > threshold


def below(values: ArrayLike, threshold: float, inclusive: bool = False) -> np.ndarray:
    """True where ``value < threshold`` (``<=`` when inclusive); NaN is False."""
    v = np.asarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return v <= threshold if inclusive else v < threshold


def outside(values: ArrayLike, low: float | None = None, high: float | None = None) -> np.ndarray:
    """True where the value is below ``low`` or above ``high`` (either bound may be None)."""
    v = np.asarray(values, dtype=np.float64)
    m = np.zeros(len(v), dtype=bool)
    if low is not None:
        m |= below(v, low)
    if high is not None:
        m |= above(v, high)
    return m
