"""PD205 train-eval-divergence."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ..detect import finite_xy, level_se, median, smooth_level, window_size
from ..results import Finding
from .base import Example, Rule, RuleContext
from .examples import flat, ramp, saturating
from .messages import fmt_num
from .outcome import MIN_AFTER, held_out_course

# The eval points a comparison needs: evaluation is sparse (HF Trainer's ``eval_steps``, SB3's
# ``EvalCallback(eval_freq=...)``).  How many must follow the point where the curves part, and the
# block the evaluation's level is taken over, are the held-out course's (outcome.MIN_AFTER, EVAL_BLOCK).
MIN_EVAL_POINTS = 5


class TrainEvalDivergence(Rule):
    """The training reward keeps rising while the held-out evaluation reward stays flat or falls.

    **What it detects.** Runs that evaluate on held-out data (TRL's ``eval_*`` rows, ``eval/``
    and ``test/`` tags, veRL's ``val-core/``, SB3's ``eval/mean_reward``) keep those points
    apart (``Run.eval_frame``).  With at least 5 evaluations, the point where the curves part is
    the first evaluation at the evaluation reward's best level (medians of 3 neighbouring
    evaluations, within two standard errors of the best), followed by at least 3 evaluations.  It fires when, from there to the end, the training reward (its local
    level at that step against the median of its last 10 %) rose by ``min_change`` standard
    errors and by at least ``min_late_share`` (a quarter) of its whole rise over the run (from
    the median of its first 10 %: a training reward that only creeps on toward its own plateau
    while the evaluation sits at its own is two curves levelling off, not parting), while the evaluation stayed at or below its best, the gap between the two widened by
    ``min_change`` standard errors of the two together, and the training reward ends above the
    evaluation: the training reward now claims more than the held-out data shows.  Error when
    the evaluation also fell significantly and ended at or below its first level (whatever the
    run learnt that carried over is gone).  The onset is the step where the curves part.

    **Why it matters.** In an LLM run the policy is learning the reward, not the task: the
    reward model (or verifier) is being exploited on the training prompts, the signature of
    reward over-optimisation (Gao et al. 2023: the gold score falls while the proxy rises).  In
    a classic-RL run the policy over-fits its training environments (Cobbe et al. 2019: train
    and test returns part as the number of training levels shrinks).  Either way the
    checkpoint to keep is the one where the curves parted, and training on wastes the rest.

    **Known false positives.** An evaluation set much harder than the training data, where the
    held-out score has reached its ceiling for the model's size; an evaluation scored by a
    different reward than training (the two curves then measure different things).  A
    training reward that is still below the evaluation (SB3 evaluates deterministically, so a
    stochastic training return catching up with its deterministic evaluation) is not
    reported.

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan
    the finding is an info note saying what is watched, until ``fair_share``
    of the plan (default 1.0: all of it) is behind the run, past warm-up; a live run with no
    known plan is judged when it ends (:mod:`ppo_doctor.standing`).

    **Source.** Gao, Schulman, Hilton 2023 "Scaling Laws for Reward Model Overoptimization"; Cobbe
    et al. 2019 "Quantifying Generalization in Reinforcement Learning"; TRL/transformers
    ``Trainer.evaluate`` (``eval_`` keys, docs/sources.md#hf-trainer-logs), SB3 ``EvalCallback``
    (``eval/mean_reward``) (docs/sources.md#train-eval-divergence).
    """

    code = "PD205"
    name = "train-eval-divergence"
    symptom = "reward_hacking"
    severity = "warning"
    basis = "outcome"
    evidence = "trend"
    requires = (("reward/score", "reward/total"),)
    requires_eval = (("reward/score", "reward/total"),)
    params = {"min_change": 3.0, "min_late_share": 0.25, "min_points": 20}
    causes = {"overfitting-to-training": 0.9, "reward-model-flawed": 0.6, "kl-coef-too-low": 0.4}
    message = (
        "training reward rose {train_from:num} -> {train_to:num} from step {start_step} while the evaluation "
        "reward went {eval_from:num} -> {eval_to:num}: {meaning}"
    )

    def evaluate(self, ctx: RuleContext) -> Iterator[Finding]:
        p = ctx.params
        train = ctx.req[0]
        if len(train) < p["min_points"] or ctx.run.eval_frame is None:
            return
        metric = next(m for group in self.requires_eval for m in group if ctx.run.eval_frame.has(m))
        # the curves part where the evaluation first reached its best level
        course = held_out_course(*finite_xy(*ctx.run.eval_frame.arrays(metric)), train.steps, MIN_EVAL_POINTS)
        if course is None:
            return  # too few evaluations, or the evaluation is still at its best
        es, ev, level, se_eval, part = course
        se_train = level_se(train.values, window_size(len(train), 0.1, 3))
        w = window_size(len(train), 0.1, 3)
        train_level = float(np.interp(es[part], train.steps, smooth_level(train.values, w)))
        train_late = float(median(train.values[-w:]))
        eval_best, eval_late = float(np.max(level[part:])), float(median(ev[-MIN_AFTER:]))
        gain = train_late - train_level
        widened = gain - (eval_late - eval_best)
        total = train_late - float(median(train.values[:w]))
        if not gain >= p["min_late_share"] * total:
            return  # both curves levelled off: the training reward only creeps on toward its plateau
        if not (gain >= p["min_change"] * max(se_train, 1e-12) and widened >= p["min_change"] * max(np.hypot(se_train, se_eval), 1e-12)):
            return
        if train_late <= eval_late:
            return  # the training reward catches up with the evaluation: not ahead of it
        eval_first = float(level[0])
        fell = eval_best - eval_late >= p["min_change"] * max(se_eval, 1e-12) and eval_late <= eval_first
        if ctx.view.is_classic_rl:
            meaning = "the policy over-fits its training environments (what it learns there does not carry over)"
        else:
            meaning = "the policy is learning the reward, not the task (reward hacking on the training prompts)"
        yield self.finding(
            ctx,
            metric=train.metric,
            observed={"train_from": train_level, "train_to": train_late, "eval_from": eval_best, "eval_to": eval_late},
            start_step=int(es[part]),
            threshold_step=int(es[part]),
            peak_step=int(es[part]),
            end_step=int(max(train.steps[-1], es[-1])),
            severity="error" if fell else self.severity,
            causes={"overfitting-to-training": 0.9} if ctx.view.is_classic_rl else dict(self.causes),
            evidence=[
                f"evaluation {metric}: {len(ev)} points from step {int(es[0])}; at its best level ({fmt_num(eval_best)}) from step {int(es[part])}, "
                f"{len(ev) - 1 - part} evaluations after it",
                f"gap widened by {fmt_num(widened)} = {fmt_num(widened / max(float(np.hypot(se_train, se_eval)), 1e-12))} s.e.",
            ],
            fmt={"meaning": meaning},
        )

    @classmethod
    def bad_example(cls) -> Example:
        # the training reward climbs all run; the held-out reward follows to step ~60, then sags
        evals = np.r_[saturating(7, 0.1, 0.5, rate=3, sd=0.0), np.linspace(0.5, 0.35, 8)]
        return Example(
            series={"reward/score": ramp(150, 0.1, 2.0, sd=0.05, seed=51)},
            eval_series={"reward/score": (np.arange(0, 150, 10), evals)},
        )

    @classmethod
    def good_example(cls) -> Example:
        # both climb together and level off together
        return Example(
            series={"reward/score": saturating(150, 0.1, 1.0, sd=0.03, seed=52)},
            eval_series={"reward/score": (np.arange(0, 150, 10), saturating(15, 0.1, 0.9, sd=0.0) + flat(15, 0.0, 0.01, seed=53))},
        )
