"""Outcome before sign: what happened to the run after a sign appeared.

The verdict contract (docs/architecture.md#contracts) lets a finding warn only when it rests on
an *outcome* (what the run's author cares about got worse or stopped improving) or on a
*runaway*.  A rule whose condition is a *sign* (``Rule.basis = "sign"``: a KL over a band, a clip
fraction, a pre-clip gradient spike, a falling entropy) hands its finding to :func:`judge_sign`,
which keeps its severity when the outcome after the sign's onset is bad, and makes it an info
note with the reward's own story otherwise.

Degenerate text (late samples that repeat themselves, or are near-identical across prompts, far
more than early ones: :func:`text_degenerated`) is a bad outcome whatever the reward does.
Otherwise the outcome is read from the reward the run was trained on (``reward/score``, else
``reward/total``: for classic RL the episode return), and from what the author reports beside it:
the held-out evaluation reward and task metrics (accuracy, success, pass rate; :func:`task_improved`).
It is bad when

* the training diverged after the sign (its loss or gradient norm non-finite from some step to
  the end of an offline log: :attr:`~ppo_doctor.standing.Standing.diverged`), or
* the reward suffers over the run (:func:`.reward_progress.reward_suffers`: it collapsed from an
  established level, or it is stuck with no clear rise over its first points), or
* it fell after the sign's onset: the last window sits :data:`FALL_NOISE` noise standard errors
  below the best window the reward held from the onset on, and by at least :data:`MIN_FALL_SHARE`
  of the run's reward range (a move the author would see on the curve, not noise), or
* the reward rose while no task series the run logs beside it improved (:func:`tasks_stalled`,
  PD211's test): the rise is the proxy's, not evidence that the policy got better.

The guides describe symptoms this way: a KL that "rises sharply *and stays high*" with incoherent
text, a reward that "plateaus while the policy stops improving" (docs/sources.md#outcome-before-sign).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..canonical.task_metrics import is_task_metric
from ..detect import finite_xy, level_se, median, percentile, smooth_level, summarize
from ..results import Finding
from ..standing import FAIR_SHARE, Standing
from ..view.placeholder import reward_moves
from .messages import fmt_num
from .reward_progress import FALL_NOISE, LEARNING_RISE, MIN_FALL_SHARE, Rise, reached_ceiling, reward_suffers, rise, rose_once, trend_arrays
from .textstats import mean, near_duplicate_share, repetition, split_early_late

if TYPE_CHECKING:
    from ..frame import RunFrame
    from ..run import Run
    from .base import RuleContext

# Points the reward needs after a sign's onset before a fall after it can be judged.
MIN_POINTS_AFTER = 10
# Points a reward needs before its outcome is judged at all (the verdict's own minimum).
MIN_REWARD_POINTS = 20


@dataclass(frozen=True)
class Outcome:
    """Whether the run's objective got worse or stopped improving, and the evidence in words;
    ``stuck``: the bad outcome is an absence of progress (a trend), not a fall; ``reward``: it
    is read from the reward itself (not from degenerate text or a diverged training);
    ``decisive``: a reward collapse that reward-collapse (PD204) judges when it holds, not on
    the whole plan (:func:`.reward_progress.decisive`)."""

    bad: bool
    text: str
    stuck: bool = False
    reward: bool = False
    decisive: bool = False


def _fell_after(ctx: RuleContext, metric: str, step: int) -> str | None:
    """Evidence when the reward's last window sits clearly below the best window it held from
    ``step`` on (the level at the onset, or a peak reached after it), else None."""
    s, v = trend_arrays(ctx, metric)
    after = s >= step
    if int(after.sum()) < MIN_POINTS_AFTER:
        return None
    t = summarize(s[after], v[after])
    tail = v[after]
    w = max(1, t.window)
    # window medians half a window apart (a window is 10 % of the points: about 20 of them,
    # whatever the run's length)
    starts = range(0, len(tail) - 2 * w + 1, max(1, w // 2))
    windows = [float(median(tail[i : i + w])) for i in starts] or [t.first]
    best = max(windows)
    at = int(s[after][list(starts)[int(np.argmax(windows))]]) if len(starts) else int(s[after][0])
    se = t.noise * math.sqrt(2.0 / w)
    spread = float(percentile(v, 95) - percentile(v, 5))
    drop = best - t.last
    if drop >= FALL_NOISE * se and drop >= MIN_FALL_SHARE * spread:
        return f"the reward fell from {fmt_num(best)} (around step {at}) to {fmt_num(t.last)} at the last points"
    return None


# Points a task series needs before its rise is judged (evaluations are logged sparsely).
MIN_TASK_POINTS = 8


def task_series(ctx: RuleContext) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """The held-out evaluation reward and every task metric (:func:`~ppo_doctor.canonical.task_metrics.is_task_metric`) the run logs,
    training or evaluation, as ``(name, steps, finite values)``."""
    out = []
    for frame, prefix in ((ctx.run.eval_frame, "evaluation "), (ctx.run.frame, "")):
        if frame is None:
            continue
        for metric in frame.metrics:
            held_out_reward = prefix and metric in ("reward/score", "reward/total")
            if not (held_out_reward or is_task_metric(metric)):
                continue
            s, v = finite_xy(*frame.arrays(metric))
            if len(v) >= MIN_TASK_POINTS:
                out.append((prefix + metric, s, v))
    return out


# Evaluation is sparse (HF Trainer's ``eval_steps``, a loop that scores MATH-500 every 50
# steps): a held-out series needs this many points before its course is judged.
MIN_EVAL_POINTS = 6
# Evaluation rewards a reader leaves among the training series (SB3's EvalCallback's
# ``eval/mean_reward``, CleanRL-style eval loops written to TensorBoard, CS285's homework logger:
# ``Eval_AverageReturn`` and ``eval_return`` are the current policy's return on evaluation
# episodes, next to the collecting policy's ``Train_AverageReturn``; garage's
# ``Evaluation/AverageDiscountedReturn``; home-made ``eval/env_mean_return_per_episode``): a name
# whose first part says evaluation and whose last part names a return or a reward, not an
# extreme or a spread of it (CS285's ``Eval_MaxReturn``, ``Eval_StdReturn``: :data:`EXTREME_NAME`'s
# words, also where CamelCase joins them to the next word).
EVAL_PREFIX = re.compile(r"^(eval|evaluation)[/_]", re.I)
RETURN_WORD = re.compile(r"return|reward", re.I)
SPREAD_WORD = re.compile(r"(^|[_.])(max|min|std|best|peak|top)|Max|Min|Std|Best|Peak|Top")


def is_eval_reward(name: str) -> bool:
    """``name`` is a training-frame tag holding the evaluation's return (:data:`EVAL_PREFIX`,
    :data:`RETURN_WORD` in its last part, no :data:`SPREAD_WORD` there)."""
    last = name.split("/")[-1]
    return bool(EVAL_PREFIX.match(name) and RETURN_WORD.search(last) and not SPREAD_WORD.search(last))


def held_out_series(run: Run) -> tuple[str, np.ndarray, np.ndarray] | None:
    """The held-out series the author reports: the evaluation reward, else the first task
    metric (:func:`is_task_metric`: accuracy, success, pass rate; not a format score nor a
    running best) of the evaluation frame, as ``(name, steps, finite values)``; None when there is none with
    :data:`MIN_EVAL_POINTS` points."""
    candidates: list[tuple[str, RunFrame]] = []
    if run.eval_frame is not None:
        frame = run.eval_frame
        candidates += [(m, frame) for m in ("reward/score", "reward/total") if frame.has(m)]
        candidates += [(m, frame) for m in frame.metrics if is_task_metric(m)]
    # the tabular readers keep evaluation keys apart; TensorBoard and W&B leave SB3's
    # eval/mean_reward among the training tags, unmapped, under its own name
    candidates += [(m, run.frame) for m in run.frame.metrics if is_eval_reward(m)]
    for name, frame in candidates:
        s, v = finite_xy(*frame.arrays(name))
        if len(v) >= MIN_EVAL_POINTS:
            return name, s, v
    return None


# The held-out evaluation's level is the median of this many neighbouring evaluations, so that one
# lucky or unlucky evaluation is neither its best nor its end; at least this many follow its best.
EVAL_BLOCK = 3
MIN_AFTER = 3


class HeldOutCourse(NamedTuple):
    """A held-out series within the training's steps: its ``steps`` and ``values``, its
    ``level`` (medians of :data:`EVAL_BLOCK` neighbouring evaluations), the standard error
    ``se`` of that level, and ``best``: the index of the first evaluation within two standard
    errors of the highest level (on a noisy plateau the highest point is anywhere along it)."""

    steps: np.ndarray
    values: np.ndarray
    level: np.ndarray
    se: float
    best: int


def held_out_course(steps: np.ndarray, values: np.ndarray, within: np.ndarray, min_points: int) -> HeldOutCourse | None:
    """The course of a held-out series over the training steps ``within`` (:class:`HeldOutCourse`),
    for the rules that compare it with the training reward (PD205, PD208); None with fewer than
    ``min_points`` evaluations there, or fewer than :data:`MIN_AFTER` after the best (the
    evaluation is still at its best)."""
    inside = (steps >= within[0]) & (steps <= within[-1])
    steps, values = steps[inside], values[inside]
    if len(values) < min_points:
        return None
    level = smooth_level(values, EVAL_BLOCK)
    se = level_se(values, EVAL_BLOCK)
    best = int(np.flatnonzero(level >= float(np.max(level)) - 2 * se)[0])
    return HeldOutCourse(steps, values, level, se, best) if len(values) - 1 - best >= MIN_AFTER else None


# The self-play ratings among the task words (:data:`~ppo_doctor.canonical.task_metrics.TASK_NAME`) (ML-Agents' ``Self-play/ELO``, a league's
# ``learner_rating``; its comment says why they track learning).
RATING_NAME = re.compile(r"(^|[/_.])(elo|rating)($|[/_.])", re.I)


def rating_kept(ctx: RuleContext, since: int, fall_step: int) -> str | None:
    """Evidence when a self-play rating (:data:`RATING_NAME`) did not fall with a training reward
    that stood at its level from step ``since`` and fell at ``fall_step``: at least
    :data:`MIN_TASK_POINTS` points after the fall whose median is at or above the rating's median
    from ``since`` to the fall.  In a league the reward is a score against opponents that get
    stronger as the league fills: it fell because they did, not because the policy got weaker.
    None otherwise.  A win or
    success rate is no such evidence: it is a score against the same opponents as the reward,
    and a cumulative one lags any fall (blind sets real22 and real24)."""
    for metric in ctx.run.frame.metrics:
        if not RATING_NAME.search(metric):
            continue
        s, v = finite_xy(*ctx.run.frame.arrays(metric))
        before, after = v[(s >= since) & (s <= fall_step)], v[s > fall_step]
        if len(after) < MIN_TASK_POINTS or len(before) < MIN_TASK_POINTS:
            continue
        if float(median(after)) >= float(median(before)):
            return (
                f"the self-play rating {metric} did not fall: {fmt_num(float(median(before)))} up to the fall, "
                f"{fmt_num(float(median(after)))} after it (the opponents got stronger)"
            )
    return None


def held_out_kept(run: Run, peak_step: int, fall_step: int) -> str | None:
    """Evidence when the held-out evaluation (:func:`held_out_series`) did not fall with a
    training reward that fell after ``peak_step``: at least 3 evaluations after ``fall_step``
    whose median is at or above the evaluation's level at the peak (median of the 3 evaluations
    nearest it).  The author's outcome held; the training reward measured something else there
    (longer or harder training episodes, a changed environment).  None otherwise."""
    held = held_out_series(run)
    if held is None:
        return None
    name, s, v = held
    after = v[s > fall_step]
    nearest = v[np.argsort(np.abs(s - peak_step), kind="stable")[:3]]
    if len(after) < 3 or float(median(after)) < float(median(nearest)):
        return None
    return (
        f"held-out {name} did not fall: {fmt_num(float(median(nearest)))} around the peak, "
        f"{fmt_num(float(median(after)))} over the {len(after)} evaluations after the fall"
    )


def _sparse(ctx: RuleContext, points: int) -> bool:
    """A series of ``points`` points is logged less often than the training reward: fewer than
    half the reward's points (an evaluation every few training steps), or no reward to compare."""
    metric = ctx.first_present("reward/score", "reward/total")
    return metric is None or 2 * points < len(ctx.finite(metric)[1])


def task_improved(ctx: RuleContext) -> str | None:
    """Evidence when the held-out evaluation or a task metric rose clearly over the run
    (:data:`.reward_progress.LEARNING_RISE` noise standard errors of a window median), from its
    first window or from its first point, else None: the task the author cares about improved
    even where the training reward looks flat.  An evaluation is sparse, and its first point is
    often the policy before training (a loop that scores MATH-500 at step 1 and every 50 steps
    after: 15.6 % -> 45 % by step 50, then a plateau about 41 %): a rise inside its first window
    is a rise.  Only a sparse series (logged less often than the reward: :func:`_sparse`) is
    read from its first point: a metric logged with every training step, as SB3's
    ``rollout/success_rate``, starts from one noisy measurement over the first few episodes (a
    SAC run's success rate 'rose' 0 -> 0.04 while it fell 0.10 -> 0.04 from its best and its
    return collapsed: blind set real33)."""
    for name, s, v in task_series(ctx):
        t = summarize(s, v)
        if t.change > 0 and t.change_in_noise >= LEARNING_RISE:
            return f"{name} rose {fmt_num(t.first)} -> {fmt_num(t.last)}"
        if not _sparse(ctx, len(v)):
            continue
        from_first = t.last - float(v[0])
        if from_first > LEARNING_RISE * t.noise * math.sqrt(1.0 + 1.0 / max(1, t.window)):
            return f"{name} rose {fmt_num(float(v[0]))} (its first point) -> {fmt_num(t.last)}"
    return None


# The noise standard errors a task series must rise by to count as improved: PD301's and
# PD211's ``min_rise`` (reward_progress.rise).
TASK_MIN_RISE = 2.0


class StalledTask(NamedTuple):
    """A task series that did not improve: its name, steps, values and :class:`.reward_progress.Rise`."""

    name: str
    steps: np.ndarray
    values: np.ndarray
    rise: Rise

    def evidence(self) -> str:
        """The series in words, for a finding's evidence: its points, steps and first and last windows."""
        return f"{self.name}: {len(self.values)} points from step {int(self.steps[0])} to {int(self.steps[-1])}, first window {fmt_num(self.rise.t.first)}, last {fmt_num(self.rise.t.last)}"


def tasks_stalled(ctx: RuleContext, min_rise: float = TASK_MIN_RISE) -> list[StalledTask]:
    """The task series the run logs (:func:`task_series`; not one of one exact value beside a
    reward that moves: a placeholder, :mod:`ppo_doctor.view.placeholder`) when none of them
    improved by ``reward_progress.rise`` with ``min_rise``, else an empty list.  A task series
    that reached its plateau inside its first window and ends at the top of its range (solved
    before it was first measured), or that rose by reward-collapse's ``min_gain`` and lost it (a
    collapse of the task, PD204's and PD208's question: ``reward_progress.rose_once``), counts as
    improved."""
    stalled = []
    for name, s, v in task_series(ctx):
        if not np.ptp(v) > 0 and reward_moves(ctx.run):
            # one exact value while the reward moves was not measured (PD906's question); with
            # no reward, or one that does not move, it measures a task never learned (a DPO
            # run whose every batch has accuracy 0, margins 0 and a gradient norm of 0)
            continue
        r = rise(s, v, min_rise)
        if r.improved or reached_ceiling(v, r.t.window, r.limit) or rose_once(s, v):
            return []
        stalled.append(StalledTask(name, s, v, r))
    return stalled


# PD951's and PD952's defaults: late samples that repeat their 3-grams, or are near-identical
# across prompts, far more than early ones are degenerate text (the guides' "incoherent text").
REPETITIVE = {"max_repetition": 0.5, "min_increase": 0.2}
IDENTICAL = {"max_share": 0.5, "min_samples": 4}


def text_degenerated(ctx: RuleContext) -> str | None:
    """Evidence when the run's late text samples degenerated (PD951 / PD952's tests, with their
    configured parameters), else None: an outcome whatever the reward says (a reward that rises
    on "! ! ! !" is being gamed)."""
    if not ctx.run.texts:
        return None
    early, late = split_early_late(ctx.run.texts)
    if early == late:
        return None  # one sampled step: no earlier text to have degenerated from (PD951 / PD952)
    rep = ctx.params_of("repetitive-generations", REPETITIVE)
    late_rep = mean([repetition(t.text) for t in late])
    early_rep = mean([repetition(t.text) for t in early])
    if late_rep >= rep["max_repetition"] and late_rep - early_rep >= rep["min_increase"]:
        return f"the late text samples repeat themselves ({late_rep:.0%} repeated 3-grams, early {early_rep:.0%})"
    same = ctx.params_of("identical-generations", IDENTICAL)
    prompts = {t.prompt for t in late}
    if len(late) >= same["min_samples"] and not (len(prompts) == 1 and None not in prompts):
        share = near_duplicate_share([t.text for t in late])
        early_share = near_duplicate_share([t.text for t in early])
        if share >= same["max_share"] and share > early_share:
            return f"{share:.0%} of the late text samples are near-identical across prompts (early {early_share:.0%})"
    return None


def outcome_after(ctx: RuleContext, step: int | None) -> Outcome:
    """The run's outcome from ``step`` on (the whole run when None)."""
    degenerate = text_degenerated(ctx)
    if degenerate is not None:
        return Outcome(True, degenerate)
    diverged = ctx.run.standing.diverged
    if diverged is not None and (step is None or diverged >= step):
        # numbers that break for good are an outcome whatever the reward did before (the
        # issue's "numbers break"): the weights are gone, the run is over
        return Outcome(True, f"the training diverged: its loss or gradient norm is not finite from step {diverged:,} to the end")
    metric = ctx.first_present("reward/score", "reward/total")
    if metric is None or len(ctx.finite(metric)[1]) < MIN_REWARD_POINTS:
        return Outcome(False, "no reward logged with enough points to see an outcome")
    suffers = reward_suffers(ctx, MIN_REWARD_POINTS)
    if suffers is not None and suffers[0]:
        task = task_improved(ctx)
        if task is not None:
            return Outcome(False, f"{suffers[1]}, but {task}")
        return Outcome(True, suffers[1], stuck=suffers.stuck, reward=True, decisive=suffers.decisive)
    fell = _fell_after(ctx, metric, int(step) if step is not None else int(ctx.finite(metric)[0][0]))
    if fell is not None:
        return Outcome(True, fell, reward=True)
    rose = suffers[1] if suffers is not None else "the reward did not fall"
    stalled = tasks_stalled(ctx)
    if stalled and task_improved(ctx) is None:
        # the reward rose while the task the author measures beside it did not (PD211's test):
        # the reward's rise is no evidence that the policy got better
        flat = stalled[0]
        return Outcome(True, f"{rose}, but {flat.name} did not improve ({fmt_num(flat.rise.t.first)} -> {fmt_num(flat.rise.t.last)})", stuck=True, reward=True)
    return Outcome(False, rose)


def judge_sign(ctx: RuleContext, finding: Finding, watch: str, spikes: bool = False) -> Finding:
    """A sign rule's warning or error kept when it is a runaway or the outcome after its onset is
    bad (the evidence says which); otherwise an info note that gives the reward's story and what
    to ``watch``.  A reward-hacking sign is not confirmed by a reward that fell or stalled
    (hacking is a reward bought; a lost one is a collapse or stagnation, judged by their own
    rules), only by degenerate text or a diverged training; a stagnation sign (vanishing
    gradients) is confirmed by a reward that is stuck, not by one that rose and fell; a reward
    spike, an oscillation or any sign made of ``spikes`` (PD602's gradient spikes) by a reward
    that fell, not by one that is stuck (that is stagnation: a GRPO run whose groups rarely
    differ has a tiny typical gradient norm, and the odd batch with a signal is 100x it); a
    sustained sign (a gradient clipped on every update, PD603) is confirmed by a stuck reward.
    Info findings and runaways pass through."""
    if finding.severity == "info" or finding.basis in ("runaway", "outcome"):
        return finding
    out = outcome_after(ctx, finding.start_step)
    if out.bad and out.reward and (
        finding.symptom == "reward_hacking"
        or (finding.symptom == "stagnation" and not out.stuck)
        or ((spikes or finding.symptom in ("reward_spike", "oscillation")) and out.stuck)
    ):
        # hacking is a reward bought, not earned: a reward that fell or stalled is another
        # symptom (a collapse, stagnation); gradients that vanish after the reward fell (every
        # group at zero reward, no advantage left) are the collapse's aftermath, not a run that
        # never learned; and spikes on a reward that never rose did no damage to a level it
        # never had (rare successes of a sparse task, not a scorer that broke the run; a
        # gradient norm 300x a level set by steps whose groups had no reward spread, blind set
        # real49)
        return replace(
            finding,
            severity="info",
            basis="sign",
            message=f"{finding.message} (a sign, not {finding.symptom.replace('_', ' ')}: {out.text}; that is judged as its own symptom)",
        )
    if out.bad:
        # the message says what confirmed the sign, where the user reads it (a warning is a claim
        # about the run, and the outcome is the claim)
        kept = replace(
            finding, basis="outcome", message=f"{finding.message} (the outcome: {out.text})", evidence=[*finding.evidence, f"outcome: {out.text}"]
        )
        # the reward's course confirms a sign no sooner than the reward's own rules judge it: a
        # reward that has not risen yet is an absence of progress, judged on the whole plan like
        # PD301 (two healthy TRL GRPO runs of the real-run set were stopped at their first check
        # for a KL whose reward had not had time to rise), and a fall short of a decisive
        # collapse is watched like PD204's (a healthy GRPO run of the set was stopped at a dip
        # its reward climbed back from)
        standing = ctx.run.standing
        waits = out.reward and not out.decisive
        return watched(kept, standing, FAIR_SHARE) if waits and not standing.fair(FAIR_SHARE) else kept
    return replace(
        finding,
        severity="info",
        basis="sign",
        message=f"{finding.message} (a sign, not an outcome: {out.text}; watch {watch})",
    )


def still_growing(steps: np.ndarray, values: np.ndarray, min_points: int = 12) -> bool:
    """The series is still climbing at its last points without levelling off: the Theil-Sen rise
    over its last quarter is significant (3 noise standard errors of a window median) and at
    least half the rise over the quarter before it.  A quantity that levels off is not a runaway."""
    n = len(values)
    if n < min_points:
        return False
    q = n // 4
    last = summarize(steps[-q:], values[-q:])
    before = summarize(steps[-2 * q : -q], values[-2 * q : -q])
    if not (last.fitted_change > 0 and last.change > 0 and last.change_in_noise >= LEARNING_RISE):
        return False
    return last.fitted_change >= 0.5 * max(before.fitted_change, 0.0)


def watched(finding: Finding, standing: Standing, share: float) -> Finding:
    """A trend rule's finding on a run that has not had a fair chance yet: an info note that says
    so and when the rule will judge (a warning or an error is a claim about the whole run)."""
    if finding.severity == "info":
        return finding
    if standing.planned is not None and standing.done is not None:
        why = f"only {standing.done:,} of {standing.planned:,} planned steps so far; judged from step {standing.judged_from(share):,}"
    else:
        why = "the run is still being written and its planned length is unknown; judged when it ends"
    return replace(finding, severity="info", message=f"{finding.message} (watching: {why})")
