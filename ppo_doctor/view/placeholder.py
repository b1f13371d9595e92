"""Placeholders: a metric column that a logger writes without measuring anything.

Home-made loops often log a fixed value for what they never compute (``approx_kl = 0.0``,
``entropy = 0.0``, ``clip_fraction = 0.0``), and a rule would read that as "the update does not
move the policy" or "the entropy is frozen" while the reward, the accuracy and the lengths move.
A metric that holds one exact value on every point of a run while the reward moves is *not
measured* (docs/architecture.md#contracts): rules do not read it, and PD906 says so as a
log-quality note.  It is never evidence.

Only quantities that cannot stay exactly constant while a policy learns are checked (the
policy's KL, entropy, clip fraction, ratio, losses, gradient norms, critic statistics); a
learning rate, a KL coefficient or a truncation rate may legitimately be constant.  An entropy is
a placeholder only when it is exactly 0 on every point: a constant entropy above 0 is a
measurement (a discrete policy at ln(k) is uniform and never left its initialisation, PD305's
case; a Gaussian policy with a fixed std has a constant entropy while its mean learns).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..detect import finite_xy, summarize

if TYPE_CHECKING:
    from ..run import Run

# The metrics a learning policy cannot hold exactly constant.
CHECKED = (
    "kl/ref",
    "kl/old",
    "policy/entropy",
    "loss/entropy",
    "policy/clipfrac",
    "policy/ratio_mean",
    "loss/policy",
    "loss/value",
    "value/explained_var",
    "value/clipfrac",
    "grad/norm",
    "grad/norm_critic",
)
# Points a constant needs before it is a placeholder rather than a short log.
MIN_POINTS = 20
REWARDS = ("reward/score", "reward/total")
ENTROPIES = ("policy/entropy", "loss/entropy")
# The reward "moves" when its last window differs from its first by this many noise standard
# errors of a window median (the rules' significant change, reward_progress.LEARNING_RISE): then
# the policy changed, and a KL or entropy of exactly one value did not measure it.  A reward that
# only wobbles is consistent with a frozen policy, whose KL of exactly 0 is a measurement.
MOVES = 3.0


def _constant(run: Run, metric: str) -> float | None:
    _, v = finite_xy(*run.frame.arrays(metric))
    if len(v) < MIN_POINTS or not np.all(v == v[0]):
        return None
    return float(v[0])


def reward_moves(run: Run) -> bool:
    """Whether the run's mean reward moves (:data:`MOVES`): only then does a metric of one exact
    value fail to measure a policy that changed."""
    reward = next((m for m in REWARDS if run.frame.has(m)), None)
    if reward is None:
        return False
    t = summarize(*run.frame.arrays(reward))
    return t.n >= MIN_POINTS and t.change_in_noise >= MOVES


def placeholders(run: Run) -> dict[str, float]:
    """Each checked metric that holds one exact value on every point while the reward moves
    (:data:`MOVES`), with that value."""
    if not reward_moves(run):
        return {}
    out = {}
    for metric in CHECKED:
        if not run.frame.has(metric):
            continue
        value = _constant(run, metric)
        if value is None or (metric in ENTROPIES and value != 0.0):
            continue
        out[metric] = value
    return out
