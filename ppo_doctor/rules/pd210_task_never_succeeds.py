"""PD210 task-never-succeeds."""

from __future__ import annotations

import re
from typing import Iterator, NamedTuple

import numpy as np

from ..detect import finite_xy, window_size
from ..run import Run
from ..results import Finding
from .base import Example, Rule, RuleContext
from .examples import saturating
from .messages import fmt_num

# The last part of a metric's name that says it is the rate at which the task succeeds: a win
# rate (``env/win_rate``, ``win_rate_100``), a success rate (SB3's ``rollout/success_rate``,
# ``final_success_rate``, garage's ``SuccessRate``), a solve or pass rate.  Not a bare ``win`` or
# ``success``: those are as often counts as per-episode flags.
SUCCESS_RATE = re.compile(r"(^|_)(win|success|solve|pass)_?rate(_\d+)?$", re.I)


class SuccessRate(NamedTuple):
    """A success rate the run logs: its ``name`` (``evaluation`` prefixed when held out), finite
    ``steps`` and ``values``, and its ``scale`` (1 for a share, 100 for a percentage)."""

    name: str
    steps: np.ndarray
    values: np.ndarray
    scale: float


def success_rates(run: Run) -> list[SuccessRate]:
    """Every success rate (:data:`SUCCESS_RATE`) the run logs, training or evaluation, whose
    values are a share in [0, 1] or a percentage in [0, 100]."""
    out = []
    for frame, prefix in ((run.frame, ""), (run.eval_frame, "evaluation ")):
        if frame is None:
            continue
        for metric in frame.metrics:
            if not SUCCESS_RATE.search(metric.split("/")[-1]):
                continue
            s, v = finite_xy(*frame.arrays(metric))
            if not len(v) or float(np.min(v)) < 0 or float(np.max(v)) > 100:
                continue
            out.append(SuccessRate(prefix + metric, s, v, 1.0 if float(np.max(v)) <= 1 else 100.0))
    return out


class TaskNeverSucceeds(Rule):
    """The win or success rate the run logs never leaves zero.

    **What it detects.** A rate at which the task succeeds that the run logs, in training or
    in evaluation (a name ending in ``win_rate``, ``success_rate``, ``solve_rate`` or
    ``pass_rate``: SB3's ``rollout/success_rate``, ``env/win_rate``, ``final_success_rate``,
    ``SuccessRate``), as a share in [0, 1] or a percentage in [0, 100], with at least
    ``min_points`` points, whose level (means over windows of 10 % of its points) stays at or
    below ``max_level`` (1 %) of its scale everywhere in the run: at most one success in a
    hundred, at the start, at the end and in between.  A rate that holds one exact value at
    every point is not judged: a column written as 0.0 from its first row to its last cannot be
    told from a placeholder (PD906).

    **Why it matters.** The success rate is the task the author trains for; the training reward
    is a proxy built around it (shaping for distance, survival or evasion).  A policy that never
    wins or never reaches its goal did not learn the task, whatever its reward did: a reward
    that rises while the success rate sits at zero has learned the shaping.  The guides'
    "reward plateaus while the policy stops improving", judged on the measure the author logs.

    A percentage is told from a share by its values: one that never passes 1 (never above 1 %)
    is read as a share and not judged, a miss rather than a false alarm.

    **Known false positives.** A first stage of a curriculum whose success is meant to come
    later, with no plan in the log to say so; a rate of a rare sub-goal named like the task's
    success.

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan the
    finding is an info note saying what is watched, until ``fair_share`` of the plan (default
    1.0: all of it) is behind the run, past warm-up; a live run with no known plan is judged
    when it ends (:mod:`ppo_doctor.standing`).

    **Source.** The troubleshooting guide ("vanishing gradients / stalled training": the
    policy stops improving); Stable-Baselines3's ``rollout/success_rate`` (the share of
    successful episodes among the last 100, from the environment's ``is_success``)
    (docs/sources.md#stagnation).
    """

    code = "PD210"
    name = "task-never-succeeds"
    symptom = "stagnation"
    severity = "warning"
    basis = "outcome"
    evidence = "trend"
    requires = (("reward/score", "reward/total"),)
    params = {"max_level": 0.01, "min_points": 20}
    causes = {"weak-learning-signal": 0.8, "env-reward-exploitable": 0.5, "ent-coef-too-low": 0.4}
    message = "{name} never left zero: its level stayed at or below {level} over {n} points; the training reward went {train_from:num} -> {train_to:num}"

    def evaluate(self, ctx: RuleContext) -> Iterator[Finding]:
        p = ctx.params
        train = ctx.req[0]
        for rate in success_rates(ctx.run):
            v = rate.values
            if len(v) < p["min_points"] or np.ptp(v) == 0:
                continue
            w = window_size(len(v), 0.1, 3)
            level = np.convolve(v, np.ones(w) / w, mode="valid")
            highest = float(np.max(level))
            if highest > p["max_level"] * rate.scale:
                continue
            tw = window_size(len(train), 0.1, 3)
            yield self.finding(
                ctx,
                metric=train.metric,
                observed={"highest_level": highest, "train_from": float(np.mean(train.values[:tw])), "train_to": float(np.mean(train.values[-tw:]))},
                start_step=int(rate.steps[0]),
                threshold_step=int(rate.steps[min(len(v) - 1, w - 1)]),
                peak_step=int(rate.steps[int(np.argmax(v))]),
                end_step=int(max(train.steps[-1], rate.steps[-1])),
                evidence=[f"{rate.name}: {len(v)} points from step {int(rate.steps[0])} to {int(rate.steps[-1])}, highest point {fmt_num(float(np.max(v)))}"],
                fmt={
                    "name": rate.name,
                    "level": f"{fmt_num(100 * highest / rate.scale)} %",
                    "n": len(v),
                },
            )
            return

    @classmethod
    def bad_example(cls) -> Example:
        # a shaped reward climbs while the win rate stays at 0 with one win in 300 episodes
        wins = np.zeros(300)
        wins[200:] = 1.0 / 300
        return Example(series={"reward/score": saturating(300, 0.2, 0.9, sd=0.05, seed=95), "win_rate": wins})

    @classmethod
    def good_example(cls) -> Example:
        return Example(series={"reward/score": saturating(300, 0.2, 0.9, sd=0.05, seed=96), "win_rate": saturating(300, 0.0, 0.6, sd=0.02, seed=97)})
