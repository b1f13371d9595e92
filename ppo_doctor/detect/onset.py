"""Onset: the step where a change that ends in an incident began.

A threshold is crossed late: KL creeps up for a hundred steps before it passes 10.  The
onset is estimated on the prefix of the series up to the incident (inclusive) by the best
single split under two least-squares models, each with two parameters:

* **step**: one mean before the split, another after (an abrupt jump);
* **hinge**: flat before the split, a straight line after it, continuous at the split
  (a ramp that departs from a flat baseline; uneven step gaps are honoured).

Both are scanned over every split in one vectorised pass with cumulative sums (linear time,
like the first step of binary segmentation with an L2 cost; ruptures' ``Binseg``,
docs/sources.md#detectors).  Only splits whose change points in the incident's direction
count.  The model with the smaller error wins.  The fitted change (the jump, or the ramp's
rise up to the incident) must exceed ``min_effect`` noise standard deviations (noise from
first differences); otherwise the prefix holds no departure worth naming, the change is
abrupt, and the onset is the incident itself.  The onset is never after the incident.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._util import as_arrays, noise_sd

# a split must remove at least this share of the prefix's variance to count as a change
MIN_GAIN = 1e-9
# longer prefixes are scanned on block means of this many blocks at most: the onset of a
# million-point prefix is then resolved to 1/MAX_SCAN of it, and the scan stays fast
MAX_SCAN = 20_000


class Onset(NamedTuple):
    """Where a change began and which model found it."""

    idx: int  # index into the arrays given
    step: int
    model: str  # "step", "hinge" or "incident" (no earlier departure found)
    baseline: float  # mean level before the onset (the first value when the onset is at 0)


def _step_model(y: np.ndarray, sign: float) -> tuple[float, int, float]:
    """Best split for two means: (sse, tau, jump) with tau the first index after the split."""
    m = len(y)
    c1 = np.cumsum(y)
    c2 = np.cumsum(y * y)
    tau = np.arange(1, m)
    n1 = tau.astype(np.float64)
    n2 = (m - tau).astype(np.float64)
    s1, q1 = c1[tau - 1], c2[tau - 1]
    s2, q2 = c1[-1] - s1, c2[-1] - q1
    sse = (q1 - s1 * s1 / n1) + (q2 - s2 * s2 / n2)
    jump = s2 / n2 - s1 / n1
    sse = np.where(jump * sign > 0, sse, np.inf)
    j = int(np.argmin(sse))
    return float(sse[j]), int(tau[j]), float(jump[j])


def _hinge_model(t: np.ndarray, y: np.ndarray, sign: float) -> tuple[float, int, float]:
    """Best hinge y = a + b * max(0, t - t_tau): (sse, tau, rise at the last point).

    ``y`` must be centred.
    """
    m = len(y)
    span = float(t[-1] - t[0])
    if m < 3 or span <= 0:
        return float("inf"), 0, 0.0
    tn = (t - t[0]) / span

    def suffix(a: np.ndarray) -> np.ndarray:
        return np.cumsum(a[::-1])[::-1]

    ns = suffix(np.ones(m))
    t1 = suffix(tn)
    t2 = suffix(tn * tn)
    ys = suffix(y)
    ty = suffix(tn * y)
    tau = np.arange(0, m - 1)
    tt = tn[tau]
    u = t1[tau] - tt * ns[tau]
    uu = t2[tau] - 2 * tt * t1[tau] + tt * tt * ns[tau]
    uy = ty[tau] - tt * ys[tau]
    det = m * uu - u * u
    ok = det > 1e-12 * max(1.0, m * m)
    with np.errstate(divide="ignore", invalid="ignore"):
        b = np.where(ok, m * uy / np.where(ok, det, 1.0), 0.0)
        gain = np.where(ok, b * uy, -np.inf)
    gain = np.where(b * sign > 0, gain, -np.inf)
    j = int(np.argmax(gain))
    yy = float(np.dot(y, y))
    if not np.isfinite(gain[j]):
        return float("inf"), 0, 0.0
    return yy - float(gain[j]), int(tau[j]), float(b[j] * (tn[-1] - tn[tau[j]]))


def onset(steps: ArrayLike, values: ArrayLike, incident_idx: int, direction: str = "up", min_effect: float = 3.0) -> Onset:
    """Where the change leading to the point ``incident_idx`` began (see the module doc).

    ``direction``: "up" when the incident is a rise (KL, grad norm), "down" for a fall
    (entropy, reward collapse).  ``min_effect``: the smallest change, in noise standard
    deviations, that counts as a departure.  Non-finite points of the prefix are ignored.
    """
    s, v = as_arrays(steps, values)
    if len(s) == 0:
        raise ValueError("onset of an empty series")
    inc = int(min(max(incident_idx, 0), len(s) - 1))
    sign = 1.0 if direction == "up" else -1.0
    if direction not in ("up", "down"):
        raise ValueError(f"direction must be 'up' or 'down', not {direction!r}")
    idx = np.flatnonzero(np.isfinite(v[: inc + 1]))
    first_val = float(v[idx[0]]) if len(idx) else float("nan")
    if len(idx) < 3:
        return Onset(inc, int(s[inc]), "incident", first_val)
    x = v[idx]
    t = s[idx].astype(np.float64)
    block = -(-len(x) // MAX_SCAN)  # ceil
    if block > 1:
        # block means keep the shape of the prefix; split positions map back to block starts
        nb = len(x) // block
        head = len(x) - nb * block  # the ragged part goes first so the incident stays last
        xs = np.concatenate(([x[:head].mean()] if head else [], x[head:].reshape(nb, block).mean(axis=1)))
        ts = np.concatenate(([t[:head].mean()] if head else [], t[head:].reshape(nb, block).mean(axis=1)))
        starts = np.concatenate(([0] if head else [], head + np.arange(nb) * block)).astype(np.int64)
    else:
        xs, ts, starts = x, t, np.arange(len(x))
    y = xs - xs.mean()
    total = float(np.dot(y, y))
    if total <= 0:
        return Onset(inc, int(s[inc]), "incident", first_val)
    sse_step, tau_step, jump = _step_model(y, sign)
    sse_hinge, tau_hinge, rise = _hinge_model(ts, y, sign)
    best = min(sse_step, sse_hinge)
    if not np.isfinite(best) or total - best <= MIN_GAIN * total:
        return Onset(inc, int(s[inc]), "incident", first_val)
    # on a tie (an instant jump fits both) the step model names the first point of the new level
    hinge_wins = sse_hinge < sse_step - 1e-9 * total
    model, tau, effect = ("hinge", tau_hinge, rise) if hinge_wins else ("step", tau_step, jump)
    if abs(effect) < min_effect * noise_sd(x):
        return Onset(inc, int(s[inc]), "incident", first_val)
    k = int(starts[tau])
    baseline = float(x[:k].mean()) if k > 0 else first_val
    i = int(idx[k])
    return Onset(i, int(s[i]), model, baseline)
