"""PD306 degenerate-groups."""

from __future__ import annotations

import math
from typing import Iterator

import numpy as np

from ..detect import finite_xy, median, moving_average, quantum, summarize
from ..results import Finding
from ..standing import FAIR_SHARE
from .base import Example, RuleContext, as_trend
from .examples import flat, saturating
from .inputs import Input
from .messages import fmt_num
from .reward_progress import LEARNING_RISE, reward_arrays
from .shapes import Stretch, SustainedRule


def agreement(position: float, share: float) -> str:
    """Where the degenerate groups agree, from the mean reward's ``position`` on a score bounded
    by 0 (the bottom) and 1 (the top) and the ``share`` of groups whose samples all scored alike.

    A group whose samples all score alike scores the bottom (``b`` of the groups), the top
    (``a``) or some value between; the other ``1 - share`` groups are mixed, strictly between
    the two.  So the mean's position satisfies ``a <= position <= a + 1 - share``, hence
    ``a >= position + share - 1`` and ``b = share - a >= share - position``: "top" when that
    bound puts most of the degenerate groups at the top, "bottom" when most are at the bottom,
    "" when the mean cannot tell.
    """
    if position + share - 1 > share / 2:
        return "top"
    if share - position > share / 2:
        return "bottom"
    return ""


def bounded_score(values: np.ndarray) -> bool:
    """Every batch mean lies in ``[0, 1]``: read as a bounded score (accuracy, pass rate, format
    checks: the verifiable rewards GRPO is trained with), where 0 is "no sample earned anything"
    and 1 "every sample earned everything".  Any other reward's bounds are not in the log: the
    range of batch means a run reached says nothing about where its reward's top or bottom is."""
    return bool(len(values)) and float(np.min(values)) >= 0.0 and float(np.max(values)) <= 1.0


class DegenerateGroups(SustainedRule[Input]):
    """Most prompt groups of each batch give no learning signal: all their samples score alike.

    **What it detects.** GRPO, RLOO and DAPO-style trainers normalise each sample's reward
    against its prompt's group; a group whose samples all got the same reward has zero advantage
    and adds nothing to the gradient.  TRL logs the share of such groups as
    ``frac_reward_zero_std`` (``reward/zero_std_frac``).  The share is judged over at least
    ``min_groups`` (20) groups, averaging neighbouring steps when a step holds fewer: a step
    with one prompt group logs 0 or 1, which is that group, not a share, and a share of 1 on a
    third of the steps is a third of the groups, not "all of them" (:meth:`DegenerateGroups.points`).
    It fires when that share stays above ``most`` (0.5) for a sustained stretch (60 % of a
    window of 5 % of the run), reporting the wasted share of the groups (the stretches' median)
    and the step it began.  Whether the groups
    agree at the reward's top (the prompts are too easy) or its bottom (too hard) is read from
    the mean reward over the stretches when the reward is a score bounded by 0 and 1
    (:func:`bounded_score`): the mixed groups lie strictly between top and bottom, so the mean
    bounds the share of degenerate groups on each side (:func:`agreement`).  For any other
    reward the side is not named.

    Warning (stagnation) when the groups agree at the bottom and the reward does not rise from
    the stretch's start to the end of the run (``LEARNING_RISE`` noise standard errors): most of
    every batch teaches nothing and the run is not learning.  That is a trend, judged once the
    run has had a fair chance (``fair_share`` of its plan), except when (nearly) every group
    agrees (the median share at least ``nearly_all``) anywhere but at the reward's top, for at
    least ``event_points`` logged points when every group agrees (exactly no gradient) and for at
    least ``event_share`` (10 %) of the plan's points as well when only nearly every group does (a
    weak signal remains, and a sparse reward's first successes can still come), with the reward not rising (or a reward that holds one
    value on every step, wherever it sits): then the run gets (nearly) no gradient at all, the
    steps left in its plan cannot help it, and it is judged where it stands: an error, its budget
    wasted (an event: a live run is stopped there, issue 41).  An info note otherwise: at the
    top the policy has solved most of its prompts (a saturated task, not a broken run, as
    ``diagnose.evidence.weak_learning_signal`` reads it), and a reward that still rises is
    learning from the groups that differ; the wasted share and the fixes are worth knowing.

    **Why it matters.** Every degenerate group costs its generations and its forward and
    backward passes and contributes nothing; as more groups agree the effective batch shrinks
    and the gradient gets noisier (DAPO's "gradient-decreasing problem").  Too easy: filter the
    solved groups (dynamic sampling) or move to harder prompts.  Too hard: easier prompts first,
    more generations per prompt, a denser reward.

    **Known false positives.** A bounded score with levels between 0 and 1 whose groups agree
    in the middle (the mean then places them wrongly, or cannot place them); a trainer that
    already filters degenerate groups before the update logs the share before filtering.

    **Evidence.** No gradient at all (above) is an event, judged where the run stands.  Any
    other finding is a trend: on a live run short of its plan an info note
    saying what is watched, until ``fair_share`` of the plan (default 1.0: all of it) is behind
    the run, past warm-up; a live run with no known plan is judged when it ends
    (:mod:`ppo_doctor.standing`).

    **Source.** DAPO (Yu et al. 2025, arXiv:2503.14476) §3.2 dynamic sampling; DeepSeekMath (Shao
    et al. 2024) group-relative advantages; TRL ``GRPOTrainer`` ``frac_reward_zero_std``
    (docs/sources.md#degenerate-groups).
    """

    code = "PD306"
    name = "degenerate-groups"
    symptom = "stagnation"
    severity = "warning"
    basis = "outcome"
    evidence = "event"  # an event when nearly all groups agree; a trend otherwise (report)
    requires = ("reward/zero_std_frac",)
    params = {"most": 0.5, "nearly_all": 0.9, "event_points": 10, "event_share": 0.1, "fair_share": FAIR_SHARE, "min_points": 10, "min_groups": 20}
    causes = {"prompts-too-hard": 0.9, "weak-learning-signal": 0.6}
    message = (
        "{median:.0%} of the prompt groups (median) had identical rewards, zero advantage, {since} "
        "to step {end_step}: {where}"
    )

    level_param = "most"

    def points(self, ctx: RuleContext) -> Input | None:
        """The share of degenerate groups, each point averaged over enough steps to hold
        ``min_groups`` groups.

        TRL logs the share per step, over that step's groups, so the values move in steps of
        one group: ``1 / quantum`` groups per step (:func:`ppo_doctor.detect.quantum`).  With one
        group per step (a small batch) each point is 0 or 1, that group and not a share, and the
        spans of 1s read alone would say "every group" of a run whose groups agree on a third of
        its steps (a TRL GRPO run of real22 was stopped so while its reward rose 0.30 -> 0.63).
        A share over ``min_groups`` (20) groups has a standard error of at most 0.11
        (0.5 / sqrt(20)), small enough to tell "most" from "a third"; many groups per step need
        no averaging, and a share that holds is unchanged by it.
        """
        x: Input = ctx.req[0]
        step = quantum(x.values)
        per_step = max(1, int(round(1.0 / step))) if step > 0 else ctx.params["min_groups"]
        window = math.ceil(ctx.params["min_groups"] / per_step)
        return x if window <= 1 else Input(x.metric, x.steps, moving_average(x.values, window))

    def report(self, ctx: RuleContext, st: Stretch[Input]) -> Iterator[Finding]:
        share = st.median
        reward = reward_arrays(ctx, ctx.params["min_points"])
        side, evidence, rising, constant = "", [], False, False
        if reward is not None:
            metric, rs, rv = reward
            # one value on every step: no group ever differed, whatever that value is (a reward at
            # its top from the first step is a broken or trivial reward, not a task learned)
            constant = bool(np.all(rv == rv[0]))
            if constant:
                evidence.append(f"{metric} is {fmt_num(float(rv[0]))} on every logged step: the reward never varied")
            inside = np.zeros(len(rs), dtype=bool)
            for sp in st.spans:
                inside |= (rs >= sp.start_step) & (rs <= sp.end_step)
            if inside.any() and bounded_score(rv):
                mean = float(median(rv[inside]))
                side = agreement(mean, share)
                evidence.append(f"{metric} median {fmt_num(mean)} over the stretch, on a score bounded by 0 and 1")
            elif inside.any():
                evidence.append(f"{metric}'s bounds are not known (its batch means run from {fmt_num(float(np.min(rv)))} to {fmt_num(float(np.max(rv)))})")
            after = summarize(*finite_xy(rs[rs >= st.first.start_step], rv[rs >= st.first.start_step]))
            rising = after.n >= 3 and after.change > 0 and after.change_in_noise >= LEARNING_RISE
            if rising:
                evidence.append(f"{metric} still rose {fmt_num(after.first)} -> {fmt_num(after.last)} from step {st.first.start_step}")
        if side == "top":
            where = ("most of them agree at the reward's top, the prompts are too easy for the policy "
                     "(try dynamic sampling, which drops solved groups, or harder prompts)")
            causes = {"prompts-too-easy": 0.9}
        elif side == "bottom":
            where = ("most of them agree at the reward's bottom, the prompts are too hard or the reward too sparse "
                     "(try easier prompts first, more generations per prompt, a denser reward)")
            causes = dict(self.causes)
        else:
            where = "the log cannot tell whether they agree at the reward's top (too easy) or its bottom (too hard)"
            causes = {"prompts-too-easy": 0.5, "prompts-too-hard": 0.5}
        p = ctx.params
        covered = sum(sp.end_idx - sp.start_idx + 1 for sp in st.spans) / len(st.points.values)
        evidence.insert(0, f"above {p['most']:g} for {covered:.0%} of the logged points")
        nearly_all = sum(sp.end_idx - sp.start_idx + 1 for sp in st.spans if float(median(st.points.values[sp.start_idx : sp.end_idx + 1])) >= p["nearly_all"])
        # every group agreeing (or a reward that never varied) is exactly no gradient: provable after
        # event_points; nearly every group leaves a weak signal, so that waits for event_share of the
        # plan too (a sparse reward's first successes can still come)
        provable = constant or float(np.min(st.covered)) >= 1.0 - 1e-9
        needed = p["event_points"] if provable else max(p["event_points"], math.ceil(p["event_share"] * ctx.planned_points(len(st.points.values))))
        no_gradient = share >= p["nearly_all"] and nearly_all >= needed and (side != "top" or constant) and not rising
        if no_gradient:
            evidence.append(
                f"{nearly_all} logged points with at least {p['nearly_all']:.0%} of the groups in agreement: (nearly) no gradient,"
                " so the steps left in the plan cannot help"
            )
        finding = self.incident(
            ctx,
            st,
            # no gradient at all: the run's budget is wasted from here on (an error, which a live
            # callback stops on); most groups wasted at the bottom: a warning
            severity="error" if no_gradient else "warning" if side == "bottom" and not rising else "info",
            causes=causes,
            evidence=evidence,
            end_step=int(st.points.steps[-1]) if st.last.end_idx == len(st.points.values) - 1 else st.last.end_step,
            fmt={"where": where},
        )
        # short of nearly all, an absence of progress is a trend: judged on a fair share of the plan
        yield finding if no_gradient else as_trend(ctx, finding)

    @classmethod
    def bad_example(cls) -> Example:
        # a sparse reward on prompts beyond reach: 80 % of the groups score 0 throughout, nothing improves
        return Example(
            series={"reward/zero_std_frac": np.clip(flat(100, 0.8, 0.05, seed=61), 0, 1), "reward/score": np.abs(flat(100, 0.05, 0.01, seed=62))},
            framework="trl_grpo",
        )

    @classmethod
    def good_example(cls) -> Example:
        # most groups differ while the reward climbs
        return Example(
            series={"reward/zero_std_frac": np.clip(flat(100, 0.2, 0.05, seed=63), 0, 1), "reward/score": saturating(100, 0.1, 0.7, sd=0.03, seed=64)},
            framework="trl_grpo",
        )
