"""PD208 held-out-task-falls."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ..detect import median, window_size
from ..results import Finding
from .base import Example, Rule, RuleContext
from .examples import flat, saturating
from .messages import fmt_num
from .outcome import MIN_AFTER, MIN_EVAL_POINTS, held_out_course, held_out_series
from .reward_progress import LEARNING_RISE, MIN_FALL_SHARE


class HeldOutTaskFalls(Rule):
    """The held-out evaluation falls below where it started while the training reward holds.

    **What it detects.** A run that evaluates on held-out data (``Run.eval_frame``: the
    evaluation reward, else a task metric such as ``eval_acc`` or ``eval/accuracy``) with at
    least 6 evaluations.  The evaluation's level is the median of 3 neighbouring evaluations;
    its best is the first evaluation within two standard errors of the highest level, followed
    by at least 3 evaluations.  It fires when the median of the last 3 evaluations is
    ``min_fall`` standard errors below that best and at or below the first level (the run lost
    what it learnt of the task, and more), by at least ``min_loss`` (a fifth, outcome's
    ``MIN_FALL_SHARE``) of the best level on a score with a natural zero (no negative value:
    accuracy, pass rate, a non-negative reward; a return that can be negative has no such
    scale and is left to PD204 and PD205), while the training reward, from the best
    evaluation's step to its last 10 % (window means of 10 % of the run), did not fall by
    ``LEARNING_RISE`` standard errors: the training reward still pays for what the policy does.  A training
    reward that falls with it is a collapse (PD204); one that rises while the evaluation
    *reward* parts from it is PD205's divergence.

    **Why it matters.** The held-out score is what the run's author cares about; the training
    reward is a proxy.  When the proxy holds and the task is lost, the policy is satisfying the
    reward some other way: an easy format term, a verifier's loophole, a reward model's bias
    (Gao et al. 2023: the gold score falls while the proxy holds or rises).  The checkpoint at
    the best evaluation is the one to keep.

    **Known false positives.** An evaluation scored differently from training (a harder set,
    a changed grader); an evaluation so small that its noise hides the trend (the standard error
    comes from its own point-to-point noise, so a noisy evaluation needs a larger fall).

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan
    the finding is an info note saying what is watched, until ``fair_share``
    of the plan (default 1.0: all of it) is behind the run, past warm-up; a live run with no
    known plan is judged when it ends (:mod:`ppo_doctor.standing`).

    **Source.** Gao, Schulman, Hilton 2023 "Scaling Laws for Reward Model Overoptimization";
    the troubleshooting guide's reward hacking ("the reward is high but the outputs are bad")
    (docs/sources.md#train-eval-divergence, docs/sources.md#reward-hacking).
    """

    code = "PD208"
    name = "held-out-task-falls"
    symptom = "reward_hacking"
    severity = "error"
    basis = "outcome"
    evidence = "trend"
    requires = (("reward/score", "reward/total"),)
    params = {"min_fall": 3.0, "min_loss": MIN_FALL_SHARE, "min_points": 20}
    causes = {"reward-model-flawed": 0.9, "overfitting-to-training": 0.6, "kl-coef-too-low": 0.3}
    message = (
        "held-out {name} fell {best:num} -> {late:num} (first {first:num}, best at step {peak_step}) "
        "while the training reward held ({train_from:num} -> {train_to:num}): {meaning}"
    )

    def evaluate(self, ctx: RuleContext) -> Iterator[Finding]:
        p = ctx.params
        train = ctx.req[0]
        held = held_out_series(ctx.run)
        if held is None or len(train) < p["min_points"]:
            return
        name = held[0]
        course = held_out_course(held[1], held[2], train.steps, MIN_EVAL_POINTS)
        if course is None:
            return  # too few evaluations, or the evaluation is still at its best
        es, ev, level, se_eval, part = course
        best, late, first = float(np.max(level[part:])), float(median(ev[-MIN_AFTER:])), float(level[0])
        if not (best - late >= p["min_fall"] * max(se_eval, 1e-12) and late <= first):
            return
        if float(np.min(ev)) < 0 or best - late < p["min_loss"] * best:
            return  # a score with no natural zero, or a loss the author would not call the task lost
        # window means, not medians: a GRPO reward is a mean of few discrete scores, whose window
        # median can jump a whole score step while the mean holds
        w = window_size(len(train), 0.1, 3)
        start = min(int(np.searchsorted(train.steps, es[part])), len(train) - w)
        before, after = train.values[start : start + w], train.values[-w:]
        train_from, train_to = float(np.mean(before)), float(np.mean(after))
        se_train = float(np.hypot(np.std(before), np.std(after))) / np.sqrt(w)
        if train_to - train_from <= -LEARNING_RISE * max(se_train, 1e-12):
            return  # the training reward fell with it: a collapse (PD204), not a proxy that holds
        # the finding holds from the first evaluation whose level is that far below the best and
        # at or below the first; the best evaluation is where the fall began (context)
        low = (np.arange(len(level)) > part) & (level <= best - p["min_fall"] * se_eval) & (level <= first)
        onset = int(es[int(np.flatnonzero(low)[0])]) if low.any() else int(es[-1])
        if ctx.view.is_classic_rl:
            meaning = "the policy over-fits its training environments (what it learnt there no longer carries over)"
        else:
            meaning = "the policy satisfies the reward without the task (reward hacking)"
        yield self.finding(
            ctx,
            metric=train.metric,
            observed={"best": best, "late": late, "first": first, "train_from": train_from, "train_to": train_to},
            start_step=onset,
            threshold_step=onset,
            peak_step=int(es[part]),
            end_step=int(max(train.steps[-1], es[-1])),
            evidence=[
                f"evaluation {name}: {len(ev)} points from step {int(es[0])}, best level {fmt_num(best)} at step {int(es[part])}, "
                f"last {MIN_AFTER} at {fmt_num(late)} ({fmt_num((best - late) / max(se_eval, 1e-12))} s.e. below)",
            ],
            fmt={"name": name, "meaning": meaning},
        )

    @classmethod
    def bad_example(cls) -> Example:
        # the training reward holds its level while held-out accuracy falls from 0.55 to 0.3
        acc = np.r_[0.5, 0.56, 0.55, 0.47, 0.4, 0.36, 0.33, 0.31, 0.3, 0.29, 0.3]
        return Example(
            series={"reward/score": flat(500, 1.3, 0.2, seed=81)},
            eval_series={"eval_acc": (np.arange(0, 501, 50), acc)},
        )

    @classmethod
    def good_example(cls) -> Example:
        # both rise and level off together
        return Example(
            series={"reward/score": saturating(500, 0.5, 1.5, sd=0.2, seed=82)},
            eval_series={"eval_acc": (np.arange(0, 501, 50), saturating(11, 0.4, 0.6, sd=0.0) + flat(11, 0.0, 0.005, seed=83))},
        )
