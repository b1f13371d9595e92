"""PD701 entropy-collapse."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ..results import Finding
from ..view import EntropyView
from ..view.actions import BELOW_ZERO, late_action_std
from . import population
from .base import Example, RuleContext
from .examples import decay, saturating
from ..detect import early_late, median
from .messages import fmt_num
from .outcome import tasks_stalled
from .reward_progress import reward_suffers, solved
from .shapes import Stretch, SustainedRule


class EntropyCollapse(SustainedRule[EntropyView]):
    """Policy entropy collapses: a large relative drop from its early level.

    **What it detects.** Entropy (``policy/entropy``, or SB3's ``train/entropy_loss`` with its
    sign undone, or TRL's sequence-summed entropy divided by the response length) whose late
    median (last 10 %) is at least ``drop`` (60 %) below its early median (first 10 %), with a
    sustained stretch below that level.  Error when the drop reaches ``error_drop`` (90 %) or the
    late entropy is under ``floor`` nats per token after the drop, except for classic-RL runs,
    where a near-deterministic policy at convergence is expected (warning at most).

    **Continuous actions.** A Gaussian policy's entropy is a differential entropy,
    ``0.5 ln(2 pi e sigma^2)`` per action dimension: it falls as the action std shrinks, which is
    how such a policy converges, and it goes below 0 once sigma < 0.24.  The run view tells such a
    run (``RunView.action_space``: a logged action std such as SB3's ``train/std``, an entropy
    falling through 0, or a Gymnasium continuous-control id such as ``Hopper-v4`` in the config
    or path).  There, and for any entropy below 0, a percentage means nothing (the zero of a
    differential entropy depends on the actions' units): the entropy is judged by its absolute
    fall, at least ``abs_drop`` nats (4.6 = ln 100: the action std shrank 100-fold in one
    dimension, or 10-fold in each of two).  On a run with continuous actions the fall is a
    symptom (a warning) only while the reward suffers: it fell far from its best for good
    (reward-collapse's test) or did not rise clearly above its first points
    (``reward_progress.reward_suffers``).  While the reward rose and kept its gain, or when no
    reward is logged, it is an info note that gives the late action std when it is logged.

    A discrete policy whose entropy is already under ``floor`` in its first window and at the
    log's first three points began near-deterministic (a run initialised from a trained policy,
    as ML-Agents' ``--initialize-from``, or a collapse before the log began): the fall in this log
    is an info note.  A first window under ``floor`` after first points above it is a collapse
    inside that window: the drop is judged from those points.

    When the reward rose clearly and ends at the top of its range (``reward_progress.solved``), the
    fall is an info note: a policy that solved its task (a math answer, a game) should become
    confident.  Not when the KL to the reference ends above its healthy band (the band of
    PD101): a reward ceiling reached by leaving the reference far behind is the policy
    collapsing onto a few outputs that the reward happens to pay (a mode collapse at high KL,
    the guide's policy collapse), not a solved task, and the drop is judged as without it.
    Nor when the run measures its task beside the reward (accuracy, success rate, a held-out
    reward) and no task series improved (``outcome.tasks_stalled``, PD211's test): the policy
    then solved its reward, not the task.

    **Why it matters.** The policy puts all its mass on a few outputs: mode collapse, repeated
    answers, no exploration; with RLHF often the footprint of reward hacking.

    **Known false positives.** Tasks with one right answer (the policy *should* become
    confident); entropy logged as a sequence sum without the response length (a shorter answer
    reads as lower entropy); a continuous-action run that nothing marks as one (no std logged,
    an entropy that stays above 0, no known task id), judged as a discrete policy.

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan
    the finding is an info note saying what is watched, until ``fair_share``
    of the plan (default 1.0: all of it) is behind the run, past warm-up; a live run with no
    known plan is judged when it ends (:mod:`ppo_doctor.standing`).

    **Source.** PTT (entropy drop >= 50 % or floor 0.1), rlwatch (< 1.0 for 50 steps), Andy Jones'
    RL debugging notes; huggingface/trl#204; SB3 sign convention (docs/sources.md#entropy,
    docs/sources.md#sign-conventions); SB3 ``train/std`` of Gaussian policies
    (``stable_baselines3/ppo/ppo.py``); Gymnasium's MuJoCo, Box2D and classic-control environment
    pages (Box action spaces).
    """

    code = "PD701"
    name = "entropy-collapse"
    symptom = "entropy_collapse"
    severity = "warning"
    basis = "sign"
    watch = "the reward: a falling entropy is confidence while the reward improves, a collapse if it stalls"
    evidence = "trend"
    requires = (("policy/entropy", "loss/entropy"),)
    params = {"drop": 0.6, "error_drop": 0.9, "floor": 0.05, "abs_drop": 4.6, "min_points": 20}
    causes = {"kl-coef-too-low": 0.6, "lr-too-high": 0.6, "reward-model-flawed": 0.4, "too-many-ppo-epochs": 0.3}
    message = "policy entropy fell {change} ({first:num} -> {late:num})"

    direction = "down"

    def points(self, ctx: RuleContext) -> EntropyView | None:
        return ctx.view.entropy

    def level(self, ctx: RuleContext, x: EntropyView) -> float | None:
        drop = self._drop(ctx, x)
        return None if drop is None else drop[0]

    def report(self, ctx: RuleContext, st: Stretch[EntropyView]) -> Iterator[Finding]:
        p = ctx.params
        view = st.points
        judged = self._drop(ctx, view)
        if judged is None:  # level() found the drop on this same view: never taken
            return
        _, drop, change = judged
        first, late = _early_late(view.values, p["floor"])
        continuous = ctx.view.continuous_actions
        differential = continuous or min(first, late) < -BELOW_ZERO  # the drop is in nats, not a share
        severe = not differential and (drop >= p["error_drop"] or late < p["floor"])
        if ctx.view.is_classic_rl:
            severe = False  # a deterministic policy at convergence is normal in classic RL
        # a reward at its ceiling while the task the run measures beside it did not improve
        # (PD211's test) solved its reward, not the task
        done = solved(ctx) if not tasks_stalled(ctx) else None
        away = _far_from_reference(ctx) if done else None
        if away:
            done = None
        evidence = ([view.note] if view.note else []) + ([done] if done else []) + ([away] if away else [])
        converging = False
        if continuous and not done:
            converging, why = _gaussian_converging(ctx)
            evidence += why
        observed = {"first": first, "late": late, "drop": drop, "min": float(np.min(view.values))}
        # a discrete policy already under the floor at the log's first points began
        # near-deterministic (initialised from a trained policy, or its collapse predates the log):
        # what it lost in this log is a share of almost nothing
        began_low = not differential and first < p["floor"]
        if began_low:
            evidence.append(f"the entropy began at {fmt_num(first)}, under {fmt_num(p['floor'])}: the policy was near-deterministic from the log's start")
        severity = "info" if done or converging or began_low else ("error" if severe else "warning")
        # a reward at its ceiling bought by running away from the reference is a runaway, judged
        # as such; any other falling entropy is a sign, a collapse only while the reward suffers
        basis = "runaway" if away else "sign"
        yield self.incident(
            ctx, st, observed=observed, end_step=int(view.steps[-1]), severity=severity, basis=basis, evidence=evidence, fmt={"change": change}
        )

    @staticmethod
    def _drop(ctx: RuleContext, view: EntropyView) -> tuple[float, float, str] | None:
        """(level, drop, how the message says it) when the entropy fell far enough, else None."""
        p = ctx.params
        first, late = _early_late(view.values, p["floor"])
        if ctx.view.continuous_actions or min(first, late) < -BELOW_ZERO:  # a discrete entropy is never negative
            # a differential entropy: its zero depends on the actions' units, so a percentage of
            # it means nothing; judge the absolute change (ln of how far the action std shrank,
            # summed over dimensions)
            drop = first - late
            if drop < p["abs_drop"]:
                return None
            return first - p["abs_drop"], drop, f"by {fmt_num(drop)} nats (differential entropy of continuous actions, judged by its absolute change)"
        if not first > 0:
            return None
        drop = 1.0 - late / first
        if drop < p["drop"]:
            return None
        return (1.0 - p["drop"]) * first, drop, f"{drop:.0%}"

    @classmethod
    def bad_example(cls):
        return Example(series={"policy/entropy": decay(150, 2.5, 0.03, rate=6, sd=0.02, seed=46)})

    @classmethod
    def good_example(cls):
        # entropy eases down by a third and stays there
        return Example(series={"policy/entropy": saturating(150, 2.5, 1.7, sd=0.05, seed=47)})


# How many of the log's first points show where the entropy began, beside its first window.
FIRST_POINTS = 3


def _early_late(values: np.ndarray, floor: float) -> tuple[float, float]:
    """The entropy's early level and its last window's median.  The early level is the first
    window's median, unless that is already under ``floor`` while the log's first
    :data:`FIRST_POINTS` points are not: then theirs.  A policy that went deterministic on its
    third update (blind set real46: an A2C run's entropy 0.73, 0.69, then 7e-4 for 200 updates)
    has a first window already collapsed, yet began anything but near-deterministic."""
    first, late, _ = early_late(values)
    if first < floor:
        first = max(first, float(median(values[:FIRST_POINTS])))
    return first, late


def _gaussian_converging(ctx: RuleContext) -> tuple[bool, list[str]]:
    """(True when the fall is a Gaussian policy converging, the evidence): the std of a policy
    with continuous actions shrinks as it converges, which is trouble only while the reward
    suffers (``reward_progress.reward_suffers``); without a reward the fall is not judged."""
    space = ctx.view.action_space
    evidence = [space.evidence] if space is not None else []
    std = late_action_std(ctx.view, space) if space is not None else None
    if std is not None:
        evidence.append(f"the action std ends at {fmt_num(std)}")
    suffers = reward_suffers(ctx)
    if suffers is None:
        return True, [*evidence, "no reward logged: a Gaussian's std shrinking is how it converges, not judged without the reward"]
    bad, why = suffers.bad, suffers.text
    return not bad, [*evidence, why]


def _far_from_reference(ctx: RuleContext) -> str | None:
    """Evidence text when ``kl/ref``'s last window (its median) is beyond what every healthy run
    of the reference population reaches (PD101's runaway limit, as configured)."""
    view = ctx.view.kl
    if view is None or len(view.values) < 3:
        return None
    _, late, _ = early_late(view.values)
    kl = ctx.params_of("kl-above-band", {"seq_runaway": population.runaway_limit("kl_ref_seq"), "token_runaway": population.runaway_limit("kl_ref_token")})
    limit = float(kl["token_runaway"] if view.reduction == "token_mean" else kl["seq_runaway"])
    if not late > limit:
        return None
    return (
        f"the reward ends at the top of its range, but the KL to the reference ends at {fmt_num(late)} {view.unit}, "
        f"beyond every healthy run ({fmt_num(limit)}): the policy ran away from its reference to get there, a collapse, not a solved task"
    )

