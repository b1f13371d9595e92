"""PD209 held-out-not-improving."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ..detect import median, summarize, window_size
from ..results import Finding
from .base import Example, Rule, RuleContext
from .examples import flat, saturating
from .messages import fmt_num
from .outcome import held_out_series
from .reward_progress import LEARNING_RISE, reached_ceiling, rise, rose_once


def _at_training_floor(value: float, train: np.ndarray) -> bool:
    """``value`` is the training reward's floor: its lowest value, which the median of its last
    10 % equals (a sparse task's timeout return, or a score of 0, that the training episodes
    reach and end at).  A constant evaluation there is the task's bound, measured, not a
    placeholder a loop writes without evaluating: a placeholder has no reason to equal it."""
    late = train[-window_size(len(train), 0.1, 3) :]
    return bool(value == float(np.min(train)) and float(median(late)) == value)


class HeldOutNotImproving(Rule):
    """The held-out evaluation the author reports never improves over the run.

    **What it detects.** A run that evaluates its policy apart from training (the evaluation
    reward, else a task metric such as ``eval_acc``: :func:`.outcome.held_out_series`; CS285's
    ``Eval_AverageReturn``, SB3's ``eval/mean_reward``) at least ``min_points`` times within
    its training steps, where that evaluation does not improve: the median of its last 10 %
    is within ``min_rise`` standard errors of its first 10 %, and its Theil-Sen trend is no
    larger (PD301's test, with PD301's defaults, on the evaluation instead of the training
    reward).  Not reported when the evaluation fell by more than ``LEARNING_RISE`` standard
    errors (a fall is PD208's or PD205's), when its level rose above its first window by
    reward-collapse's ``min_gain`` (4) standard errors at some point (it improved, then lost it:
    PD204's and PD208's question), when it reached its plateau inside its first window
    and ends at the top of its range (a task solved before the first evaluations), nor when it
    holds one exact value at every evaluation (a placeholder: PD906's log-quality question, not
    evidence), unless that value is the training reward's floor (its lowest value, where its last
    10 % sits: :func:`_at_training_floor`): then it is the task's bound, measured (a maze whose
    every evaluation episode times out at -100 while the exploring policy's return does too).

    **Why it matters.** The evaluation is what the run's author reports; the training reward
    is collected by an exploring or sampling policy, on training data, and can rise on its own
    (an exploration bonus, a replay of lucky episodes, a proxy the policy satisfies).  A policy
    whose evaluation never moves did not learn the task, whatever its training curve shows:
    the guides' "reward plateaus while the policy stops improving".

    **Known false positives.** A task solved before the first evaluation whose evaluation
    wanders at its ceiling without a first point below it; an evaluation on so few episodes
    that its noise hides a slow rise (the standard error comes from its own point-to-point
    noise, so a noisy evaluation needs a larger rise to count, and a slow one may not).

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan the
    finding is an info note saying what is watched, until ``fair_share`` of the plan (default
    1.0: all of it) is behind the run, past warm-up; a live run with no known plan is judged
    when it ends (:mod:`ppo_doctor.standing`).

    **Source.** The troubleshooting guide ("vanishing gradients / stalled training": the
    policy stops improving); CS285's homework infrastructure, which logs ``Eval_AverageReturn``
    from evaluation episodes sampled apart from the training batch (docs/sources.md#stagnation).
    """

    code = "PD209"
    name = "held-out-not-improving"
    symptom = "stagnation"
    severity = "warning"
    basis = "outcome"
    evidence = "trend"
    requires = (("reward/score", "reward/total"),)
    params = {"min_rise": 2.0, "min_points": 20}
    causes = {"weak-learning-signal": 0.7, "overfitting-to-training": 0.5, "lr-too-low": 0.4}
    message = "held-out {name} did not improve over {n} evaluations ({first:num} -> {last:num}, noise {noise:num}){train}"

    def evaluate(self, ctx: RuleContext) -> Iterator[Finding]:
        p = ctx.params
        train = ctx.req[0]
        held = held_out_series(ctx.run)
        if held is None:
            return
        name, es, ev = held
        inside = (es >= train.steps[0]) & (es <= train.steps[-1])
        es, ev = es[inside], ev[inside]
        if len(ev) < p["min_points"]:
            return
        if np.ptp(ev) == 0 and not _at_training_floor(float(ev[0]), train.values):
            return  # one exact value at every evaluation: a placeholder, not measured
        r = rise(es, ev, p["min_rise"])
        t, se, limit = r.t, r.se, r.limit
        if r.improved:
            return
        if t.change <= -LEARNING_RISE * max(se, 1e-12):
            return  # it fell: PD208 / PD205 judge a held-out fall against the training reward
        if reached_ceiling(ev, t.window, limit):
            return  # solved within the first evaluations
        if rose_once(es, ev):
            return  # it improved, then lost it: a collapse (PD204, PD208), not a policy that never learned
        tr = summarize(train.steps, train.values)
        yield self.finding(
            ctx,
            metric=train.metric,
            observed={"first": t.first, "last": t.last, "noise": t.noise, "train_first": tr.first, "train_last": tr.last},
            start_step=int(es[0]),
            threshold_step=int(es[min(len(es) - 1, t.window - 1)]),
            peak_step=int(es[int(np.argmax(ev))]),
            end_step=int(max(train.steps[-1], es[-1])),
            evidence=[
                f"evaluation {name}: {len(ev)} points from step {int(es[0])} to {int(es[-1])}, best {fmt_num(float(np.max(ev)))}"
                + (", every one at the training reward's floor" if np.ptp(ev) == 0 else "")
            ],
            fmt={
                "name": name,
                "n": len(ev),
                "train": r.median_only() + f"; the training reward went {fmt_num(tr.first)} -> {fmt_num(tr.last)}",
            },
        )

    @classmethod
    def bad_example(cls) -> Example:
        # an exploring policy's training return climbs; the greedy evaluation stays at the floor
        return Example(
            series={"reward/score": saturating(200, -150.0, -60.0, rate=3, sd=5.0, seed=91)},
            eval_series={"reward/score": (np.arange(0, 200, 5), flat(40, -148.0, 3.0, seed=92))},
        )

    @classmethod
    def good_example(cls) -> Example:
        # training return and evaluation rise together
        return Example(
            series={"reward/score": saturating(200, -150.0, -60.0, rate=3, sd=5.0, seed=93)},
            eval_series={"reward/score": (np.arange(0, 200, 5), saturating(40, -150.0, -50.0, rate=3, sd=4.0, seed=94))},
        )
