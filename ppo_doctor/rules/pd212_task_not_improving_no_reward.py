"""PD212 task-not-improving-no-reward."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ..results import Finding
from .base import Example, Rule, RuleContext
from .examples import flat, saturating
from .outcome import TASK_MIN_RISE, tasks_stalled


class TaskNotImprovingNoReward(Rule):
    """The run logs no training reward, and the task it measures does not improve.

    **What it detects.** A run with no mean reward (``reward/score`` or ``reward/total``: PD901
    says so) that logs its task instead: a held-out evaluation reward, or a metric that measures
    the task (accuracy, correctness, a success, pass, solve or win rate, a rating:
    :func:`.outcome.task_series`), none of which improved over the run by PD301's test
    (``reward_progress.rise`` with ``min_rise`` standard errors of a window median, by median and
    mean, or by the Theil-Sen trend, and by a hundredth of the level), on at least
    ``min_points`` points of the longest such series.  Not reported when a task series reached
    its plateau inside its first window and ends at the top of its range, when one rose by
    reward-collapse's ``min_gain`` standard errors and lost it (a collapse, not an absence of
    progress): :func:`.outcome.tasks_stalled`, the test PD211 applies beside a reward.  A task
    series of one exact value is judged: with no reward moving beside it, it is no placeholder
    (PD906's test) but a task never learned, as a DPO run whose every batch has accuracy 0,
    margins 0 and a gradient norm of 0 (blind set real47).

    **Outcome or sign.** An outcome: with no training reward in the log, the task metric is the
    measure of progress the author left, as an on-policy distillation loop that logs the
    student's correct rate and its reverse KL to the teacher but no reward, or a preference
    optimisation whose batch accuracy is its measure of progress.

    **Why it matters.** The guides' "reward plateaus while the policy stops improving", judged
    on what the run measures: a run whose only measure of its task does not move spent its
    compute without learning it.

    **Known false positives.** A task metric on data far harder than what the run trains on (a
    held-out set at the model's ceiling); a run meant to hold a task level while it optimises
    something it does not log (a distillation that trades nothing for speed).

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan the finding
    is an info note saying what is watched, until ``fair_share`` of the plan (default 1.0: all of
    it) is behind the run (:mod:`ppo_doctor.standing`).

    **Source.** The troubleshooting guide ("vanishing gradients / stalled training": the policy
    stops improving) (docs/sources.md#stagnation).
    """

    code = "PD212"
    name = "task-not-improving-no-reward"
    symptom = "stagnation"
    severity = "warning"
    basis = "outcome"
    evidence = "trend"
    requires = ()
    params = {"min_rise": TASK_MIN_RISE, "min_points": 20}
    causes = {"weak-learning-signal": 0.8, "lr-too-low": 0.5}
    message = "{name} did not improve over {n} points ({first:num} -> {last:num}), and the run logs no training reward: the task is not being learned"

    def evaluate(self, ctx: RuleContext) -> Iterator[Finding]:
        p = ctx.params
        if ctx.first_present("reward/score", "reward/total") is not None:
            return  # with a reward, a stalled task is PD211's and a flat reward PD301's
        stalled = tasks_stalled(ctx, p["min_rise"])
        if not stalled:
            return  # no task logged, or one improved, was solved before it was measured, or collapsed
        name, s, v, r = max(stalled, key=lambda t: len(t.values))
        if len(v) < p["min_points"]:
            return
        yield self.finding(
            ctx,
            metric=name,
            observed={"first": r.t.first, "last": r.t.last, "noise": r.t.noise},
            start_step=int(s[0]),
            threshold_step=int(s[min(len(s) - 1, r.t.window - 1)]),
            peak_step=int(s[int(np.argmax(v))]),
            end_step=int(s[-1]),
            evidence=[t.evidence() for t in stalled],
            fmt={"name": name, "n": len(v)},
        )

    @classmethod
    def bad_example(cls) -> Example:
        # a distillation loop's correct rate wanders at its first level; no reward is logged
        return Example(series={"accuracy": flat(200, 0.66, 0.02, seed=215), "loss/total": flat(200, 0.1, 0.01, seed=216)})

    @classmethod
    def good_example(cls) -> Example:
        return Example(series={"accuracy": saturating(200, 0.5, 0.75, sd=0.02, seed=217), "loss/total": flat(200, 0.1, 0.01, seed=218)})
