"""How the mean reward progressed: clearly rising, solved, collapsed after a peak, or restarted.

Rules that judge another metric read the reward beside it: a weak critic or shorter answers are
no trouble while the policy learns well (:func:`learning_despite_critic`), a falling entropy is
confidence on a solved task (:func:`solved`), a reward that did improve and lost it is a collapse
(:func:`collapsed`, PD204), not an absence of progress (PD301), and a new training call on a
continuing step axis can change what the reward measures (:func:`phase_starts`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Mapping, NamedTuple

import numpy as np

from ..detect import PeakDrop, TrendSummary, at_changes, even_in_steps, finite_xy, median, peak_drop, percentile, quantum, smooth_level, summarize, switches, winsorized
from .messages import fmt_num

if TYPE_CHECKING:
    from .base import RuleContext

# How many noise standard errors of a window median the reward must rise by for "the policy
# learns well" (PD203 and PD202 use 3 for a significant reward change).
LEARNING_RISE = 3.0


def trend_arrays(ctx: RuleContext, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Finite steps and values of ``metric`` as its trend is judged: at its changes when the log
    holds each value over several rows (:func:`~ppo_doctor.detect.at_changes`: the copies are not
    measurements and would make the noise read near zero), and on the step axis
    (:func:`~ppo_doctor.detect.even_in_steps`), so that a log of one point per episode does not
    weigh a stretch of short, failing episodes by their number."""
    return even_in_steps(*at_changes(*ctx.finite(metric)))


def reward_arrays(ctx: RuleContext, min_points: int) -> tuple[str, np.ndarray, np.ndarray] | None:
    """``(metric, steps, values)`` of the mean reward (``reward/score``, else ``reward/total``),
    finite, when it has at least ``min_points`` points; else None.  For rules that read the
    reward beside their own metric."""
    metric = ctx.first_present("reward/score", "reward/total")
    if metric is None:
        return None
    s, v = ctx.finite(metric)
    return (metric, s, v) if len(v) >= min_points else None


def _rising_reward(ctx: RuleContext, min_points: int) -> tuple[TrendSummary, np.ndarray] | None:
    """The reward's trend summary and finite values when it rose clearly (by at least
    :data:`LEARNING_RISE` noise standard errors over at least ``min_points`` points), else None."""
    reward = reward_arrays(ctx, min_points)
    if reward is None:
        return None
    metric, _, _ = reward
    t = summarize(*trend_arrays(ctx, metric))
    if not (t.change > 0 and t.change_in_noise >= LEARNING_RISE):
        return None
    return t, trend_arrays(ctx, metric)[1]


def learning_despite_critic(ctx: RuleContext, min_points: int = 20) -> str | None:
    """Evidence text when the mean reward rose clearly over the run, else None.

    A critic that explains little of the returns while the reward rises well is a note, not a
    symptom (value rules PD403 and PD405 then report at info level, as PD702 does for answers
    that got shorter but are more than EOS): the policy learns
    regardless, and once a task is solved the returns sit at a cap, where they have almost no
    variance left to explain (explained variance = 1 - Var(returns - values) / Var(returns)).
    """
    rising = _rising_reward(ctx, min_points)
    if rising is None:
        return None
    t, _ = rising
    return f"the reward rose {fmt_num(t.first)} -> {fmt_num(t.last)} ({fmt_num(t.change_in_noise)} noise s.e.): the policy learns despite the critic"


# A reward that kept this share of its way up to its 95th percentile ends "at the top": a noisy
# bounded reward (accuracy over a small batch) wanders below its best points by chance.
TOP_SHARE = 0.8


def solved(ctx: RuleContext, min_points: int = 20) -> str | None:
    """Evidence text when the reward rose clearly and its last window sits at the top of the run's
    range (within two standard errors of its 95th percentile, or at least :data:`TOP_SHARE` of
    the way from its first window to it), else None: a task the policy solved, where becoming
    confident (lower entropy) is what learning looks like.  A run whose training diverged
    (:attr:`~ppo_doctor.standing.Standing.diverged`: its loss or gradient norm non-finite to the
    end) solved nothing: its weights are gone."""
    if ctx.run.standing.diverged is not None:
        return None
    rising = _rising_reward(ctx, min_points)
    if rising is None:
        return None
    t, v = rising
    se = t.noise * math.sqrt(2.0 / max(1, t.window))
    top = float(percentile(v, 95))
    if not (t.last >= top - 2 * se or t.last - t.first >= TOP_SHARE * (top - t.first)):
        return None
    return f"the reward rose {fmt_num(t.first)} -> {fmt_num(t.last)} and ends at the top of its range: the policy solved its task"


# Counters that a trainer resets at the start of each training call while the step axis goes on:
# SB3's ``time/iterations`` is a local of ``OnPolicyAlgorithm.learn`` (``iteration = 0``, logged by
# ``_dump_logs``), so a second ``learn(..., reset_num_timesteps=False)`` restarts it at 1 while
# ``time/total_timesteps``, the step, continues.  Curricula and environment swaps are written so
# (``model.set_env(harder); model.learn(...)``).
PHASE_COUNTERS = ("time/iterations",)


def phase_starts(ctx: RuleContext) -> list[int]:
    """Steps where a new training call began on a continuing step axis: a phase counter
    (:data:`PHASE_COUNTERS`) fell back.  What the reward measures may change there."""
    out: list[int] = []
    for metric in PHASE_COUNTERS:
        if ctx.has(metric):
            s, v = finite_xy(*ctx.arrays(metric))
            out += [int(x) for x in s[1:][np.diff(v) < 0]]
    return sorted(set(out))


# reward-collapse's (PD204) defaults for :func:`collapsed`; PD301 applies the same test with
# PD204's configured values (``RuleContext.params_of``), falling back to these.
COLLAPSE_DEFAULTS = {"min_gain": 4.0, "drop": 0.5, "min_points": 30, "error_drop": 0.8, "decisive": 10.0}


def decisive(ctx: RuleContext, s: np.ndarray, pd: PeakDrop, params: Mapping[str, float]) -> bool:
    """A collapse (:func:`collapsed`) that is judged when it holds, not on the whole plan (with
    reward-collapse's ``params``): the run lost at least ``error_drop`` of its gain (or never
    rose ``min_gain`` noise standard errors: it started at its best), by at least ``decisive``
    noise standard errors of a window median, has stayed down for a window, and the reward is not
    a rolling mean of the last N episodes (SB3's ``rollout/ep_rew_mean``: :attr:`RunView.returns`
    moves together from point to point, so its point-to-point noise understates how far it
    wanders, and 5 healthy SB3 runs of the labelled real-run set were stopped live at dips they
    recovered from), nor one that jumps between levels from point to point (:func:`_switching`).
    Any other fall may still recover on a run short of its plan."""
    rose = pd.gain >= params["min_gain"] * max(pd.noise_se, 1e-12)
    far = not rose or pd.lost_share >= params["error_drop"]
    held = pd.fall_idx is not None and pd.fall_idx < len(s) - pd.window
    smoothed = ctx.view.returns.rolling is not None
    return bool(far and held and not smoothed and not _switching(ctx) and pd.fall >= params["decisive"] * max(pd.noise_se, 1e-12))


def _switching(ctx: RuleContext) -> bool:
    """The reward jumps between levels from point to point (``detect.switches``: a win/loss
    return per episode), so its point-to-point noise sees only the jitter within a level and a
    few losses in a row read as a fall of many noise units: such a fall is watched on the plan
    like any other (the blind sets real21 and real22: a tabular Q-learning run stopped live at
    episode 30 of 1,000 on three losses, and a car whose per-episode laps dip twice, each
    time recovered, stopped at the first dip)."""
    metric = ctx.first_present("reward/score", "reward/total")
    return metric is not None and switches(trend_arrays(ctx, metric)[1])


# A move smaller than this share of the reward's level is no move (a rise inside the first
# window, a gain or a fall): a return that stays within a hundredth of its value over the run is
# a frozen outcome, whatever its float jitter's standard errors say.  Blind set real32: a
# billiards policy whose return held -13.34 +- 0.006 while its action std ran away read as
# "solved inside the first window" because its first point sat 0.016 (0.1 %) lower.  The
# labelled runs whose reward spans under 2 % of its level (13, from 12 repositories) are all
# labelled stagnation.  The share was chosen after that run was seen (a thousandth did not reach
# it): a tuning bounded by the labelled runs.  Blind set real34 then showed it on a gain: an
# energy-allocation PPO return held at -477 +- 3 for 1M steps "climbed" 4 (0.8 %) to -474 and
# "collapsed" back.
MIN_RELATIVE_MOVE = 1e-2


# A gain or a fall must span at least this many of the series' smallest steps (its quantum).
MIN_QUANTA = 3


def collapsed(ctx: RuleContext, metric: str, min_gain: float, drop: float, min_points: int) -> tuple[np.ndarray, PeakDrop] | None:
    """``(steps, PeakDrop)`` when ``metric`` fell far below an established peak level for good:
    after climbing significantly, it lost at least ``drop`` of that gain; or, when its first
    window already sat at the peak (a rise inside the first window, or a run started at its
    best), it fell significantly by at least ``drop`` of the peak's magnitude.  A fall still
    under way at the last points is judged on them (:func:`_falling_at_the_end`): a decisive fall
    at the edge of a log is a collapse, not "too late to tell".  None otherwise
    (PD204 reports it; PD301 does not call such a reward "not improving": it did improve once, or
    started high)."""
    s, v = trend_arrays(ctx, metric)
    if len(v) < min_points:
        return None
    pd = peak_drop(s, v)
    if pd is None or pd.recovered:
        return None
    # a move of one or two of the series' smallest steps is a count of rare events (one more
    # success among the 100 episodes of a rolling mean), not a level the policy reached or lost
    # nor is a move under a hundredth of the level (:data:`MIN_RELATIVE_MOVE`)
    floor = max(min_gain * max(pd.noise_se, 1e-12), MIN_QUANTA * quantum(v), MIN_RELATIVE_MOVE * abs(pd.peak))
    before_the_end = pd.fall_idx is not None and pd.fall_idx < len(v) - pd.window  # it fell, then stayed down for a window
    if not before_the_end:
        # a fall still under way at the last points: judged on them (a window of the end would
        # average the fall with the level before it), a collapse when they sit below the mark
        pd = _falling_at_the_end(v, pd)
        if pd is None:
            return None
    if not pd.fall >= floor:
        return None
    if pd.gain >= floor:
        far = pd.lost_share >= drop
    else:
        # no gain to lose a share of: the fall is "far" against the level itself, so that a
        # reward at 1.0 that ends at 0 collapses and one that ends at 0.99 does not; and against
        # the band its points wandered in before the fall, since a level near zero has no
        # magnitude to lose a share of (a DQN return wandering -7..+7 whose level slid
        # 1.0 -> -0.04 lost "104 %" of it: blind set real25)
        before = v[: max(pd.fall_idx or 0, pd.window)]
        band = float(percentile(before, 95) - percentile(before, 5))
        far = pd.fall >= drop * max(abs(pd.peak), abs(pd.late)) and pd.fall >= MIN_FALL_SHARE * band
    return (s, pd) if far else None


def _falling_at_the_end(v: np.ndarray, pd: PeakDrop) -> PeakDrop | None:
    """``pd`` judged on the last :data:`EDGE_POINTS` (at least a third of a window): their median as
    the late level and the start of the last stretch of points below the halfway mark as the fall,
    when that median is the lowest level since the peak and below the mark; else None.  The last
    stretch, not the first point below the mark: a noisy reward (one return per episode) dips
    below it many times and comes back, and only the stretch it has not come back from is the
    fall that holds (a LunarLander DQN's five crashed episodes in a row, after which it went on
    learning, read as a fall held since a dip 40 episodes earlier: blind set real28)."""
    k = max(EDGE_POINTS, pd.window // 3)
    if len(v) - pd.peak_idx <= k:
        return None
    tail = float(median(v[-k:]))
    if not tail < pd.mark:
        return None
    above = np.flatnonzero(v[pd.peak_idx :] >= pd.mark)
    start = int(pd.peak_idx + (above[-1] + 1 if len(above) else 0))
    if start >= len(v):
        return None  # the last point is back above the mark: no stretch below it holds at the end
    # the lowest level since the peak: below every point before the last stretch (a stretch
    # longer than k, the last 43 of a SAC Ant's 750 epochs, holds its own lowest points); none
    # lies before it when no single point since the peak of the level (a rolling median) reached
    # the mark
    before = v[pd.peak_idx : min(start, len(v) - k)]
    if len(before) and not tail < float(np.min(before)):
        return None
    return pd._replace(late=tail, fall_idx=start)


class Rise(NamedTuple):
    """A series' trend (:func:`.detect.summarize`), the standard error ``se`` of a window median
    from its point-to-point noise, and whether it ``improved``: its Theil-Sen trend lies
    ``min_rise`` standard errors above its first window, or its last window does, by its median
    and by its (winsorized) mean alike (PD301's test, which PD209 applies to the held-out
    evaluation)."""

    t: TrendSummary
    se: float
    limit: float
    improved: bool
    means: tuple[float, float]  # the first and last windows' winsorized means

    def median_only(self) -> str:
        """Words for a last window whose median cleared the bar while the windows' means did
        not (so it is no rise), else ''."""
        if self.t.change < self.limit or self.improved:
            return ""
        return f"; the window medians rose but their means only went {fmt_num(self.means[0])} -> {fmt_num(self.means[1])}"


def rise(s: np.ndarray, v: np.ndarray, min_rise: float) -> Rise:
    """:class:`Rise` of the series ``(s, v)`` with ``min_rise`` noise standard errors as its bar.

    A rise of the last window over the first counts only when the windows' means agree with
    their medians, and by at least a hundredth of the first window's level
    (:data:`MIN_RELATIVE_MOVE`: a rolling mean of many episodes moves by many of its tiny
    point-to-point standard errors without moving; blind set real39: a Pendulum PPO return
    that went -9.78 -> -9.69 and then held -9.69 on every point for 80 % of the run).  The
    median of a window of noisy or few-valued points (a reward that is 0 or
    1 per sample, an integer game score) can jump by a level that the points as a whole did not
    move.  A GRPO run on rewards shuffled across the batch had "risen" 0 -> 0.096 by its window
    medians, 2.4 standard errors, while its window means went -0.001 -> 0.029 and its Theil-Sen
    trend 0.015 (benchmarks/grpo_matrix.py, shuffled-reward-s2); a drone DQN's return 'rose'
    -21.5 -> -10.6 by medians while its tenths' means went -21.8 -> -19.9 (blind set real25)."""
    t = summarize(s, v)
    se = float(t.noise * np.sqrt(2.0 / max(1, t.window)))
    # nor is a move under a hundredth of the level a rise (:data:`MIN_RELATIVE_MOVE`), however
    # many standard errors of a smooth running mean it spans
    limit = max(min_rise * max(se, 1e-12), MIN_RELATIVE_MOVE * abs(t.first))
    points = winsorized(finite_xy(s, v)[1])
    means = (float(np.mean(points[: t.window])), float(np.mean(points[-t.window :]))) if t.window else (t.first, t.last)
    improved = (t.change >= limit and means[1] - means[0] >= limit) or t.fitted_change >= limit
    return Rise(t, se, limit, bool(improved), means)


def rose_once(s: np.ndarray, v: np.ndarray) -> bool:
    """The series' local level rose above its first window by reward-collapse's ``min_gain``
    (:data:`COLLAPSE_DEFAULTS`) noise standard errors at some point: it improved, whatever it did
    after (a fall from there is a collapse, PD204's and PD208's question, not an absence of
    progress; PD209 and PD211 read a held-out or task series with it)."""
    pd = peak_drop(s, v)
    return pd is not None and pd.gain >= COLLAPSE_DEFAULTS["min_gain"] * max(pd.noise_se, 1e-12)


def reached_ceiling(v: np.ndarray, window: int, limit: float) -> bool:
    """The reward rose to its plateau inside the first window and sits at the top of its range:
    the first point is well below the first window's median (by ``limit`` and by at least
    :data:`MIN_RELATIVE_MOVE` of that median's magnitude), and the last window's median is
    within ``limit`` of the run's 95th percentile (a task solved early, not a stuck policy)."""
    if len(v) <= window:
        return False
    early, late = float(median(v[:window])), float(median(v[-window:]))
    top = float(percentile(v, 95))
    rose = early - float(v[0]) > max(limit, MIN_RELATIVE_MOVE * abs(early))
    return bool(rose and late >= top - limit)


# Points at the end of a series that judge a fall still under way (a third of a window, at least this).
EDGE_POINTS = 3


# The reward's level before the policy learned anything: the median of its first points (a
# rise inside the first 10 % window, as on a task learned within a few updates, is a rise).
START_POINTS = 3


# A fall must cover this share of the run's reward range (5th to 95th percentile) to be an outcome:
# a move the author would see on the curve, not noise (outcome.py's falls after a sign, PD208's
# held-out falls and :func:`fell_from_start` use it); and this many noise standard errors, more
# than the 3 of a plain change: the level it falls from (the best of many windows, or three
# points) sits above the true level by chance.
MIN_FALL_SHARE = 0.2
FALL_NOISE = 4.0


def fell_from_start(v: np.ndarray, t: TrendSummary) -> str | None:
    """Evidence when the reward ``v`` (trend arrays, summary ``t``) only got worse than the policy
    it started from, else None: its last window sits below the median of its first
    :data:`START_POINTS` points by :data:`FALL_NOISE` standard errors and by
    :data:`MIN_FALL_SHARE` of its range, and its local level never came back to them after the
    first window; the last window's winsorized mean must sit below them by as much (the median
    of few-valued points can drop a level the points did not).  A rise from the trough of such a
    fall is a partial recovery, not learning: a
    PPO CarRacing run that fell -52 -> -330 within its first 30k steps and climbed back to -217
    had "risen" from its first 10 % window (blind set real20)."""
    if len(v) <= max(START_POINTS, t.window):
        return None
    start = float(median(v[:START_POINTS]))
    se = t.noise * math.sqrt(1.0 / START_POINTS + 1.0 / max(1, t.window))
    spread = float(percentile(v, 95) - percentile(v, 5))
    # by the last window's median and by its (winsorized) mean alike, as a rise (:func:`rise`)
    late_mean = float(np.mean(winsorized(v)[-t.window :]))
    for fall in (start - t.last, start - late_mean):
        if not (fall >= FALL_NOISE * se and fall >= MIN_FALL_SHARE * spread):
            return None
    if (smooth_level(v, t.window)[t.window :] >= start).any():
        return None
    return f"the reward fell from {fmt_num(start)} (its first points) to {fmt_num(t.last)} and never came back"


class Suffering(NamedTuple):
    """Whether the reward suffers (:func:`reward_suffers`), the evidence in words, and whether it
    is stuck (an absence of progress) rather than fallen, or fell decisively."""

    bad: bool
    text: str
    stuck: bool = False
    decisive: bool = False  # a collapse judged when it holds (:func:`decisive`)


def reward_suffers(ctx: RuleContext, min_points: int = 20) -> Suffering | None:
    """Whether the mean reward suffers, with the evidence in words; None without a reward of
    ``min_points`` points.  It suffers when it fell far from its best for good (:func:`collapsed`
    with reward-collapse's settings) or is stuck: its last window does not sit clearly
    (:data:`LEARNING_RISE` noise standard errors) above its first :data:`START_POINTS` points,
    nor above its first window (or by its fitted change) by as many standard errors of a window
    median, or it only got worse than its first points (:func:`fell_from_start`: a rise from the
    trough of an early fall is no rise).
    For a change of the policy that is convergence while the policy gets better and a symptom
    while it does not (a Gaussian policy's std shrinking, PD701 and PD305)."""
    reward = reward_arrays(ctx, min_points)
    if reward is None:
        return None
    metric, s, v = reward
    rc = ctx.params_of("reward-collapse", COLLAPSE_DEFAULTS)
    fell = collapsed(ctx, metric, rc["min_gain"], rc["drop"], rc["min_points"])
    if fell is not None:
        pd = fell[1]
        return Suffering(
            True, f"the reward fell from its best ({fmt_num(pd.peak)} -> {fmt_num(pd.late)}) and stayed down", decisive=decisive(ctx, fell[0], pd, rc)
        )
    t = summarize(s, v)
    start = float(median(v[:START_POINTS]))
    se = t.noise * math.sqrt(1.0 / START_POINTS + 1.0 / max(1, t.window))
    gain = t.last - start
    if gain > 0 and gain >= LEARNING_RISE * se:
        return Suffering(False, f"the reward rose from {fmt_num(start)} (its first points) to {fmt_num(t.last)} and kept it")
    worse = fell_from_start(v, t)
    if worse is not None:
        return Suffering(True, worse, stuck=True)
    # the same rise measured from the first window (or as the fitted change over the run) instead
    # of the first three points: three points of a noisy GRPO reward are a weak baseline, and a
    # real TRL run rising 3.6 -> 5.3 was "stuck" to the KL rules while PD301 saw it improve
    limit = LEARNING_RISE * max(t.noise * math.sqrt(2.0 / max(1, t.window)), 1e-12)
    if t.change >= limit or t.fitted_change >= limit:
        return Suffering(False, f"the reward rose from {fmt_num(t.first)} (its first window) to {fmt_num(t.last)} and kept it")
    return Suffering(True, f"the reward is stuck: it ends at {fmt_num(t.last)}, no clear rise over its first points ({fmt_num(start)})", stuck=True)
