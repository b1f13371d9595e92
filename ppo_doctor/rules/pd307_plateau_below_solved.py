"""PD307 plateau-below-solved."""

from __future__ import annotations

import math

import numpy as np

from ..canonical.tasks import solved_level
from ..detect import median, summarize
from .base import Example, Rule
from .examples import saturating
from .reward_progress import COLLAPSE_DEFAULTS, START_POINTS, collapsed, trend_arrays

# The return's range (lowest to highest point) must cover at least this share of the way from its
# first points to the solved level to be read as the task's episode return: a per-step reward of
# the same task (LunarLander's -1..1 per step against a solved return of 200) spans a sliver of it.
SCALE_SHARE = 0.1


def _held_solved(v: np.ndarray, level: float) -> bool:
    """The return sat at or above the solved ``level`` on :data:`START_POINTS` consecutive points
    somewhere in the run: the policy reached the task, not one or two lucky episodes."""
    if len(v) < START_POINTS:
        return False
    runs = np.lib.stride_tricks.sliding_window_view(v, START_POINTS)
    return bool((runs.min(axis=1) >= level).any())


class PlateauBelowSolved(Rule):
    """The return stopped improving far below the level that solves its task.

    **What it detects.** The run trains on a standard Gymnasium task whose solved level is
    published with the environment (:mod:`ppo_doctor.canonical.tasks`: its ``reward_threshold``,
    e.g. LunarLander 200, CartPole-v1 475, read from an ``env_id`` setting or the run's id), and
    its episode return (the mean reward of :mod:`.reward_progress`, on its step axis and at its
    changes) ends less than ``share`` of the way from its first points to that level, while the
    second half of the run shows no rise of ``min_rise`` standard errors of a window median (nor
    a fitted one): the policy stopped improving, short of the task.  Not reported when the run
    started at or above the solved level, when its return sat at or above it on three
    consecutive points somewhere (``START_POINTS``: it reached the task and does not hold it, a
    swing or a collapse, not a plateau short of it), when the return's range covers less than a tenth of the
    way to it (a per-step reward, not an episode return), when it fell from a peak it had reached
    (PD204 reward-collapse, judged with that rule's settings), on runs of fewer than ``min_points``
    points, or on a log stopped short of its known plan (the budget its author set for reaching
    the level was not spent).

    **Outcome or sign.** An outcome: the return the author trains for stopped improving.  On its
    own axis such a curve looks like a policy that learned and converged (a LunarLander return
    that climbs -250 -> -50 within the first 5 % of a run and hovers there for the rest); the
    task's solved level is what says the plateau is a failure, not a ceiling.

    **Why it matters.** The guide's "reward plateaus while the policy stops improving": the
    policy settled in a local optimum (a lander that hovers to avoid crashing until the episode
    times out, a pole balanced for 50 steps), often because exploration ended early (entropy
    collapsed) or the step size is wrong for the task.

    **Known false positives.** A task with a modified reward (shaping, scaling, a custom
    wrapper) under a standard name; a run given a budget its author knew to be too short, with
    no plan in the log to say so.

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan the finding
    is an info note saying what is watched, until ``fair_share`` of the plan (default 1.0: all of
    it) is behind the run (:mod:`ppo_doctor.standing`).

    **Source.** The troubleshooting guide ("vanishing gradients / stalled training": the reward
    plateaus while the policy stops improving); Gymnasium's environment registrations
    (``reward_threshold``); docs/sources.md#stagnation.
    """

    code = "PD307"
    name = "plateau-below-solved"
    symptom = "stagnation"
    severity = "warning"
    basis = "outcome"
    evidence = "trend"
    requires = (("reward/score", "reward/total"),)
    params = {"share": 0.5, "min_rise": 2.0, "min_points": 20}
    causes = {"ent-coef-too-low": 0.6, "lr-too-high": 0.5, "weak-learning-signal": 0.4, "lr-too-low": 0.3}
    message = (
        "return stopped improving at {last:num} over the second half of the run, {reached} of the way from its "
        "first points ({start:num}) to {task}'s solved level {level:num} (Gymnasium's reward_threshold; {where})"
    )

    def evaluate(self, ctx):
        p = ctx.params
        solved = solved_level(ctx.run)
        if solved is None or ctx.run.standing.partial:
            return
        metric = ctx.req[0].metric
        s, v = trend_arrays(ctx, metric)
        if len(v) < p["min_points"]:
            return
        start = float(median(v[:START_POINTS]))
        gap = solved.level - start
        if gap <= 0:
            return  # it started solved
        if _held_solved(v, solved.level):
            # it did not stop short of the task: it reached it and does not hold it (a swing or a
            # collapse, judged by their own rules; blind sets real25 and real26: InvertedPendulum
            # returns that swing between 1000 and 100)
            return
        t = summarize(s, v)
        reached = (t.last - start) / gap
        if reached >= p["share"]:
            return
        if float(v.max() - v.min()) < SCALE_SHARE * gap:
            return  # not on the scale of the task's episode returns
        half = len(v) // 2
        second = summarize(s[half:], v[half:])
        limit = p["min_rise"] * max(second.noise * math.sqrt(2.0 / max(1, second.window)), 1e-12)
        if second.change >= limit or second.fitted_change >= limit:
            return  # still improving
        rc = ctx.params_of("reward-collapse", COLLAPSE_DEFAULTS)
        if collapsed(ctx, metric, rc["min_gain"], rc["drop"], rc["min_points"]) is not None:
            return  # it reached a level and lost it: PD204 reward-collapse
        yield self.finding(
            ctx,
            metric=metric,
            observed={"start": start, "last": t.last, "level": solved.level, "reached": reached},
            start_step=int(s[half]),
            threshold_step=int(s[half]),
            end_step=int(s[-1]),
            fmt={"reached": f"{max(reached, 0.0):.0%}", "task": solved.task, "where": solved.where},
        )

    @classmethod
    def bad_example(cls):
        # a LunarLander return that climbs to -50 early and hovers there
        return Example(series={"reward/score": saturating(300, -250.0, -50.0, rate=20.0, sd=30.0, seed=23)}, config={"env_id": "LunarLander-v3"})

    @classmethod
    def good_example(cls):
        # the same task learned: the return reaches the solved level and holds it
        return Example(series={"reward/score": saturating(300, -250.0, 230.0, rate=6.0, sd=30.0, seed=24)}, config={"env_id": "LunarLander-v3"})

