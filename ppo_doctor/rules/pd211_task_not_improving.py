"""PD211 task-not-improving."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ..results import Finding
from .base import Example, Rule, RuleContext
from .examples import flat, saturating
from .outcome import TASK_MIN_RISE, tasks_stalled
from .reward_progress import rise, trend_arrays


class TaskNotImproving(Rule):
    """The training reward rises while the task the run measures beside it does not.

    **What it detects.** A run that logs its task apart from the training reward: a held-out
    evaluation reward, or a metric that measures the task (accuracy, correctness, a success,
    pass, solve or win rate, a rating: :func:`.outcome.task_series`, at least 8 points), none of
    which holds one exact value at every point (a placeholder: PD906's question, not evidence).
    It fires when the training reward improved over the run (PD301's test,
    ``reward_progress.rise``: its last 10 % ``min_rise`` standard errors above its first 10 %,
    by median and mean, or by its Theil-Sen trend, and by a hundredth of its level) while no task
    series did by the same test, so the task ended level with where it began or below it.  Not
    reported when a task series reached its plateau inside its first window and ends at the top
    of its range (a task solved before it was first measured), nor when one rose by
    reward-collapse's ``min_gain`` standard errors and lost it (``reward_progress.rose_once``: a
    collapse of the task, PD204's and PD208's question, not an absence of progress).  Runs whose
    reward has fewer than ``min_points`` points are not judged.

    **Outcome or sign.** An outcome: the measure of the task the author logs did not improve.
    It is PD301's mirror: there a task that improves makes a flat reward a note; here a reward
    that improves does not make a flat task progress.

    **Why it matters.** The task is what the author trains for; the training reward is a proxy
    for it (a learned or rule-based reward, shaping for distance or survival, a format bonus).
    A policy that raises the proxy without moving the task learned the proxy: the guides'
    "reward plateaus while the policy stops improving", judged on the measure of the task, and
    the start of reward over-optimisation (Gao et al. 2023: the proxy rises while the gold score
    does not).

    **Known false positives.** A task metric on much harder data than the reward (a held-out set
    at the model's ceiling); a sub-goal's rate named like the task's; a task that is meant to
    move only after the reward has (a curriculum's first stage), with no plan in the log to say so.

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan the finding
    is an info note saying what is watched, until ``fair_share`` of the plan (default 1.0: all of
    it) is behind the run (:mod:`ppo_doctor.standing`).

    **Source.** The troubleshooting guide ("vanishing gradients / stalled training": the policy
    stops improving); Gao, Schulman, Hilton 2023 "Scaling Laws for Reward Model
    Overoptimization" (docs/sources.md#stagnation).
    """

    code = "PD211"
    name = "task-not-improving"
    symptom = "stagnation"
    severity = "warning"
    basis = "outcome"
    evidence = "trend"
    requires = (("reward/score", "reward/total"),)
    params = {"min_rise": TASK_MIN_RISE, "min_points": 20}
    causes = {"reward-model-flawed": 0.9, "env-reward-exploitable": 0.9, "weak-learning-signal": 0.4}
    message = "the training reward rose {train_first:num} -> {train_last:num} but {name} did not improve ({first:num} -> {last:num} over {n} points): the policy improves its reward, not the task"

    def evaluate(self, ctx: RuleContext) -> Iterator[Finding]:
        p = ctx.params
        metric = ctx.req[0].metric
        s, v = trend_arrays(ctx, metric)
        if len(v) < p["min_points"]:
            return
        train = rise(s, v, p["min_rise"])
        if not train.improved:
            return  # a flat reward is PD301's; a task that also did not move is its evidence
        flat_tasks = tasks_stalled(ctx, p["min_rise"])
        if not flat_tasks:
            return  # no task logged, or one improved, was solved before it was measured, or collapsed
        name, ts, tv, r = flat_tasks[0]
        yield self.finding(
            ctx,
            metric=metric,
            observed={"first": r.t.first, "last": r.t.last, "train_first": train.t.first, "train_last": train.t.last},
            start_step=int(ts[0]),
            threshold_step=int(ts[min(len(ts) - 1, r.t.window - 1)]),
            peak_step=int(ts[int(np.argmax(tv))]),
            end_step=int(max(s[-1], ts[-1])),
            evidence=[t.evidence() for t in flat_tasks],
            fmt={"name": name, "n": len(tv)},
        )

    @classmethod
    def bad_example(cls) -> Example:
        # a shaped reward climbs while the accuracy it stands for wanders at its first level
        return Example(series={"reward/score": saturating(200, 0.2, 0.9, sd=0.05, seed=211), "accuracy": flat(200, 0.4, 0.03, seed=212)})

    @classmethod
    def good_example(cls) -> Example:
        return Example(series={"reward/score": saturating(200, 0.2, 0.9, sd=0.05, seed=213), "accuracy": saturating(200, 0.3, 0.7, sd=0.03, seed=214)})
