"""PD501 reward-oscillation."""

from __future__ import annotations

from ..view.returns import one_per_window
from .base import Example, RuleContext
from .examples import saturating, sine
from .inputs import Input
from .shapes import OscillationRule


class RewardOscillation(OscillationRule[Input]):
    """The mean reward swings back and forth without converging.

    **What it detects.** After removing the trend, the smoothed mean reward alternates between
    high and low at least ``min_swings`` times (4 full cycles), the swings are at least
    ``min_structure`` times larger than smoothed noise would be and at least
    ``min_rel_amplitude`` of the reward's range, and they do not die out (last-third amplitude
    at least ``min_decay`` of the first third's).  See :mod:`ppo_doctor.detect.oscillation`.

    **Why it matters.** The guide's "performance fluctuation": the policy overshoots and falls
    back, update after update, instead of settling.  Typical causes are update steps that are
    too large (learning rate, PPO epochs, large batches) and an unstable critic.

    A reward that is a rolling mean of the last N episodes (SB3 ``rollout/ep_rew_mean``,
    baselines ``eprewmean``: N = 100) is judged on its points one window apart (N episodes at the
    logged mean episode length): neighbouring points share most of their episodes, so their
    differences understate the mean's noise and its slow wander looks structured.

    **Outcome.** Swings are a sign (``basis = "sign"``): kept as a warning only when the reward
    fell after they began (:func:`.outcome.judge_sign`); around a level the run keeps or raises
    they cost nothing the author cares about, and on a reward that never rose the absence of
    progress is stagnation, PD301's symptom.  No run of the labelled real-run set needs the
    symptom; a legged-robot run whose 100-episode reward swings with the waves of episodes that
    time out together was a false alarm.

    **Known false positives.** Curricula or periodic evaluation mixed into the training
    reward; a rolling mean of episodes whose episode length is not logged (its window's span in
    steps is unknown, so its points are judged as they are: raise ``min_structure`` for those).

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan
    the finding is an info note saying what is watched, until ``fair_share``
    of the plan (default 1.0: all of it) is behind the run, past warm-up; a live run with no
    known plan is judged when it ends (:mod:`ppo_doctor.standing`).

    **Source.** The troubleshooting guide ("performance fluctuation"); AUTOTRAINER's
    oscillating-loss rule (adjacent extrema gaps over a share of epochs)
    (docs/sources.md#oscillation).
    """

    code = "PD501"
    name = "reward-oscillation"
    symptom = "oscillation"
    severity = "warning"
    basis = "sign"
    watch = "the reward's level: swings around a level the run keeps or raises cost nothing"
    evidence = "trend"
    requires = (("reward/score", "reward/total"),)
    causes = {"lr-too-high": 0.8, "too-many-ppo-epochs": 0.5, "batch-too-large": 0.3, "value-lr-mistuned": 0.3}
    message = "reward oscillates: {swings} swings of about +-{amplitude:num} (period ~{period:num} steps), not dying out"

    def points(self, ctx: RuleContext) -> Input | None:
        """The reward, or, for a rolling mean of episodes with its episode length logged, its
        points one averaging window apart (:func:`~ppo_doctor.view.returns.one_per_window`)."""
        x = ctx.req[0]
        apart = one_per_window(ctx.view, x.steps, x.values)
        return x if apart is None else Input(x.metric, *apart)

    @classmethod
    def bad_example(cls):
        return Example(series={"reward/score": sine(300, 2.0, 1.0, period=40, sd=0.2, seed=35)})

    @classmethod
    def good_example(cls):
        return Example(series={"reward/score": saturating(300, 0.0, 3.0, sd=0.3, seed=36)})
