"""What the run's logs say about the returns its critic regresses on: when they were constant,
and whether the logged reward is a rolling mean of episodes.

A value loss is the critic's squared error against the returns, so its size follows their
spread: while every return is the same (a game lost at once every time, a sparse task never
solved, a task held at its ceiling) the critic fits a constant and the loss goes to about 0,
and explained variance, ``1 - Var(returns - values) / Var(returns)``, divides by zero.  When the
returns start to vary (a first win) the loss jumps to about their variance: the return grew,
not the critic diverged.  The value rules (PD401-PD406) ask these questions of the view:

- ``constant``: the updates whose returns were all equal.  SB3, CleanRL and baselines write an
  explained variance of NaN exactly then (``stable_baselines3/common/utils.py``
  ``explained_variance``, CleanRL ``ppo.py``, ``baselines/common/math_util.py``: ``np.nan if
  var_y == 0``); a batch ``reward/std`` of 0 says it of the scores.
- ``new_returns``: in a run whose episode-return mean stays exactly unchanged at most updates
  (at least :data:`SPARSE_SHARE`: almost no episode ends with another return than the one it
  replaces, a sparse task), the updates where it moved: a rare episode's return arrived.
- ``rolling``: the logged reward is a mean over the last N episodes (SB3 ``rollout/ep_rew_mean``,
  ``ep_info_buffer = deque(maxlen=stats_window_size)``, 100 by default; baselines ppo2
  ``eprewmean`` over ``deque(maxlen=100)``): its spread is the spread of a mean of N returns,
  about 1/sqrt(N) of the per-episode spread the critic fits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..detect import align, finite_xy

if TYPE_CHECKING:
    from . import RunView

# Raw tags of a reward that is a rolling mean over the last N episodes, with N (module docstring);
# also rsl_rl's ``Train/mean_reward`` (on_policy_runner.py: ``rewbuffer = deque(maxlen=100)``) and
# skrl's ``Reward / Total reward (mean)`` (``_track_rewards = collections.deque(maxlen=100)``), and
# rl_games' ``rewards/step`` (``game_rewards = AverageMeter(value_size, games_to_track)``, 100 by default),
# and Sample Factory's ``reward/reward`` (``deque(maxlen=cfg.stats_avg)``, 100 by default).
ROLLING_EPISODE_MEANS = {
    "rollout/ep_rew_mean": 100,
    "ep_rew_mean": 100,
    "eprewmean": 100,
    "EpRewMean": 100,
    "eprew": 100,
    "mean 100 episode reward": 100,
    "Train/mean_reward": 100,
    "Reward / Total reward (mean)": 100,
    "rewards/step": 100,
    "rewards/frame": 100,
    "reward/reward": 100,
}

# Raw tags of the mean episode length logged beside such a rolling mean (SB3 ``rollout/ep_len_mean``
# from the same ``ep_info_buffer``; baselines ppo2 ``eplenmean``), on a step axis of environment
# steps.  rsl_rl's and skrl's lengths are not listed: their step is the iteration, or one
# environment's step of thousands run in parallel, so N episodes' span on it is unknown.
EPISODE_LENGTH_TAGS = ("rollout/ep_len_mean", "ep_len_mean", "eplenmean")

# A run whose episode-return mean is exactly unchanged at this share of its updates has sparse
# returns: three updates in four end no episode with a new return.
SPARSE_SHARE = 0.75


class ReturnsView(NamedTuple):
    """What the logs say about the returns (module docstring)."""

    constant: np.ndarray  # sorted steps of updates whose returns were all equal
    constant_from: str  # which metric said so ("" when none did)
    new_returns: np.ndarray  # sorted steps where a sparse episode-return mean moved (empty otherwise)
    rolling: int | None  # N when the reward is a rolling mean of N episodes
    rolling_tag: str  # its raw tag ("" when not rolling)

    def constant_at(self, steps: np.ndarray) -> np.ndarray:
        """Boolean mask of ``steps`` (sorted) at which the returns were constant."""
        # a lookup in the sorted ``constant``: np.isin may sort through the plain np.unique, which
        # imports numpy.ma (benchmarks/RESULTS.md "One small check")
        if not len(self.constant):
            return np.zeros(len(steps), dtype=bool)
        at = np.minimum(np.searchsorted(self.constant, steps), len(self.constant) - 1)
        return self.constant[at] == steps

    def new_return_near(self, steps: np.ndarray, lag: int = 1) -> np.ndarray:
        """Boolean mask of ``steps`` within ``lag`` logged points of a step where a rare new return
        arrived: the value loss and the episode mean of one update can be written a point apart."""
        out = np.zeros(len(steps), dtype=bool)
        if not len(self.new_returns) or not len(steps):
            return out
        pos = np.searchsorted(steps, self.new_returns)
        for shift in range(-lag, lag + 1):
            idx = pos + shift
            idx = idx[(idx >= 0) & (idx < len(steps))]
            out[idx] = True
        return out


def _constant_steps(view: RunView) -> tuple[np.ndarray, str]:
    if view.has("value/explained_var") and view.has("loss/value"):
        es, ev = view.arrays("value/explained_var")
        ls, lv = view.arrays("loss/value")
        common, ie, il = align(es, ls)
        nan_ev = np.isnan(ev[ie]) & np.isfinite(lv[il])
        if nan_ev.any():
            return common[nan_ev], view.raw("value/explained_var")
    if view.has("reward/std"):
        s, v = finite_xy(*view.arrays("reward/std"))
        zero = v == 0
        if zero.any():
            return s[zero], view.raw("reward/std")
    return np.empty(0, dtype=np.int64), ""


def _new_returns(view: RunView) -> np.ndarray:
    metric = view.first_present("reward/score", "reward/total")
    if metric is None:
        return np.empty(0, dtype=np.int64)
    s, v = view.finite(metric)
    if len(v) < 20:
        return np.empty(0, dtype=np.int64)
    moved = np.diff(v) != 0
    if 1.0 - moved.mean() < SPARSE_SHARE:
        return np.empty(0, dtype=np.int64)
    return s[1:][moved]


def one_per_window(view: RunView, steps: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The points of a rolling mean of N episodes (``steps``/``values``: finite, sorted) that
    share no episode: each kept point lies at least N episodes, at the mean episode length logged
    beside it, after the last kept one.  None when the reward is no rolling mean or no episode
    length is logged (the window's span in steps is then unknown).

    Neighbouring points of a 100-episode mean logged every rollout share most of their episodes,
    so their differences are far smaller than the mean's own sampling noise: a detector that
    takes its noise from first differences (``detect.oscillation``) sees structure in what is
    the slow wander of a mean over a sliding window.  Points one window apart are independent
    means."""
    n = view.returns.rolling
    tag = next((t for t in EPISODE_LENGTH_TAGS if view.has(t)), None)
    if n is None or tag is None or len(steps) == 0:
        return None
    ls, lv = finite_xy(*view.arrays(tag))
    if len(lv) == 0:
        return None
    # the episode length at each point: the last one logged at or before it
    at = np.clip(np.searchsorted(ls, steps, side="right") - 1, 0, len(lv) - 1)
    span = n * np.maximum(lv[at], 1.0)
    keep = [0]
    while True:
        i = keep[-1]
        j = int(np.searchsorted(steps, steps[i] + span[i], side="left"))
        if j >= len(steps):
            break
        keep.append(j)
    idx = np.asarray(keep)
    return steps[idx], values[idx]


def returns_view(view: RunView) -> ReturnsView:
    constant, source = _constant_steps(view)
    metric = view.first_present("reward/score", "reward/total")
    tag = view.raw(metric) if metric else ""
    n = ROLLING_EPISODE_MEANS.get(tag)
    return ReturnsView(constant, source, _new_returns(view), n, tag if n else "")
