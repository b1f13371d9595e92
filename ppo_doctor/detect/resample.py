"""Judge a series on its step axis when its points are spread unevenly over the steps.

Most logs write a point every N steps (an optimizer step, an SB3 rollout of ``n_steps``), and the
points are the run's time.  A log of episode returns writes a point per finished episode instead
(CleanRL's ``charts/episodic_return``, a home-made JAX loop's per-episode return): short episodes
write many points and long ones few, so a policy that balances a CartPole for 500 steps writes
one point where one that falls after 6 writes 80.  Windows of *points* (the first 10 % of the
run, a block median) then weigh the failing stretches of a run many times over: a run that held
500 for 300k steps and then fell to 6 for 150k is, in points, a run at 6 from the start.

:func:`even_in_steps` spots such a spread (the points per step differ by :data:`UNEVEN_RATIO`
or more between stretches of the run) and returns the means of equal step bins, one value per
bin with points: the average of the episodes that ended in that stretch of training.  Evenly
logged series come back unchanged.

:func:`at_changes` reads a sample-and-hold series at its changes: a loop that writes a row every
step but recomputes the reward every tenth repeats each value nine times, and the repeats are
not measurements.  Left in, they make nine of ten point-to-point differences zero, so the noise
(a MAD of differences) reads near zero and a small fall reads as decisive.
"""

from __future__ import annotations

import numpy as np

from ._util import sticky
from .order_stats import median

# The run's step range is cut into this many equal stretches to compare their point counts.
STRETCHES = 20
# Points per step differing by this factor between the densest stretch and a typical one:
# an episode-per-point log whose episodes got several times longer or shorter.  Logs written
# every N steps differ by at most a rounding (or a gap where a run was resumed).
UNEVEN_RATIO = 4.0
# The resampled series has at most this many bins: 0.2 % of the run each, finer than any
# window the trend rules use (10 % of the run).
MAX_BINS = 500


def uneven(steps: np.ndarray) -> bool:
    """The points of ``steps`` (sorted) are spread unevenly over the step range: the densest of
    :data:`STRETCHES` equal stretches holds at least :data:`UNEVEN_RATIO` times the points of the
    median stretch that holds any."""
    if len(steps) < 2 * STRETCHES or steps[-1] <= steps[0]:
        return False
    counts, _ = np.histogram(steps, bins=STRETCHES, range=(float(steps[0]), float(steps[-1])))
    held = counts[counts > 0]
    return bool(len(held) > 1 and counts.max() >= UNEVEN_RATIO * float(median(held)))


def even_in_steps(steps: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(steps, values)`` unchanged when evenly spread over the steps; else the mean of each of
    up to :data:`MAX_BINS` equal step bins that holds points, at the bin's last step.  Both
    arrays finite, ``steps`` sorted."""
    if not uneven(steps):
        return steps, values
    bins = min(MAX_BINS, len(values))
    edges = np.linspace(float(steps[0]), float(steps[-1]), bins + 1)
    idx = np.clip(np.searchsorted(edges, steps, side="right") - 1, 0, bins - 1)
    counts = np.bincount(idx, minlength=bins)
    sums = np.bincount(idx, weights=values.astype(np.float64), minlength=bins)
    last = np.zeros(bins, dtype=steps.dtype)
    np.maximum.at(last, idx, steps)
    held = counts > 0
    return last[held], sums[held] / counts[held]


# A series is held when at least this share of its points repeat their predecessor exactly:
# most of its points are copies, not measurements.
HELD_SHARE = 0.5


def at_changes(steps: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(steps, values)`` of a held series (at least :data:`HELD_SHARE` of its points repeat
    their predecessor, and most of its runs of equal values are longer than one point) at the
    first point of each run of equal values; any other series unchanged.  A constant series is not held, nor is a :func:`~._util.sticky` one (one value on
    half its points: a sparse reward, a rate at its cap), whose repeats are its level.  Both
    arrays finite, ``steps`` sorted."""
    if len(values) < 3:
        return steps, values
    new = np.empty(len(values), dtype=bool)
    new[0] = True
    np.not_equal(values[1:], values[:-1], out=new[1:])
    if new.mean() > 1.0 - HELD_SHARE or new.sum() == 1 or sticky(values):
        return steps, values
    # a loop that holds its value repeats every value: most runs of equal values are longer than
    # one point.  A series that moves point to point and sits, now and then, at one level for a
    # long stretch (a return at its cap, a policy that fails the same way on every episode) has
    # mostly single-point runs: its repeats are measurements of that level (real23: an
    # InvertedPendulum return at 1000, then at 3 for its last 35 iterations)
    lengths = np.diff(np.r_[np.flatnonzero(new), len(values)])
    if float(median(lengths)) < 2:
        return steps, values
    return steps[new], values[new]
