"""PD204 reward-collapse."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ..results import Finding
from ..standing import FAIR_SHARE
from .base import Example, Rule, RuleContext, as_trend
from .examples import flat, saturating
from .messages import fmt_num
from .outcome import held_out_kept, rating_kept
from .reward_progress import COLLAPSE_DEFAULTS, collapsed, decisive, phase_starts


class RewardCollapse(Rule):
    """The reward climbed to a level, then fell far below its peak and stayed there.

    **What it detects.** On the robust local level of the mean reward (block medians, so one
    high point is not a peak): the reward rose from its first window's median to its highest
    level by at least ``min_gain`` standard errors of a window median (and by 1 % of that level:
    ``reward_progress.MIN_RELATIVE_MOVE``, a return frozen within a hundredth of its value does
    not rise or fall), then fell below the
    halfway mark of its fall before the last window, never came back above it, and ended
    having lost at least ``drop`` (50 %) of the gain.  Error when at least ``error_drop``
    (80 %) of the gain is gone (the run is back where it started: the learning is lost);
    warning otherwise.  A reward whose first window already sits at its peak (it rose inside
    the first window, or the run started at its best) has no gain to lose a share of: it
    collapses when it falls by ``min_gain`` standard errors, by at least ``drop`` of the
    peak's magnitude and by a fifth (``MIN_FALL_SHARE``) of the band its points wandered in
    before the fall (a level near zero has no magnitude to lose a share of), and stays there;
    that is an error (it ends below where it started).
    A reward the log holds over several rows (a loop that recomputes it every tenth step) is
    read at its changes (``detect.at_changes``), so that its copies do not make the noise, and
    with it the standard errors, read near zero.  The finding's onset is the step where the
    reward fell below the halfway mark for good, where the collapse holds; the peak it fell from
    is context in the message.

    **Why it matters.** Classic-RL PPO's "performance collapse": a policy that had learned
    forgets it, usually because late updates are as large as early ones (a learning rate too
    high or not annealed, too many epochs on each batch) or the critic's errors grew; in RLHF
    it follows a KL blow-up.  The best checkpoint is the one at the peak.

    When the fall begins where a new training call began on the same step axis (SB3's
    ``time/iterations`` restarts at 1 while the timesteps go on: ``reward_progress.phase_starts``), between
    the peak's window and the point where the reward fell, the finding is an info note: a
    second ``learn()`` call is how curricula and environment changes are written, so the
    reward may measure a harder task from there, which the log cannot tell.

    When the run evaluates on held-out data and that evaluation did not fall with it (at least
    3 evaluations after the fall, their median at or above the evaluation's level around the
    peak: :func:`.outcome.held_out_kept`), the finding is an info note: what the author
    measures held, so the training reward measured something else there (longer or harder
    training episodes, a changed environment).  So is a fall while a self-play rating (an Elo)
    did not fall (:func:`.outcome.rating_kept`): the reward is a score against a league that
    got stronger, and the rating is what tracks learning.

    **Known false positives.** A curriculum or an environment that gets harder during the run
    (the reward's meaning changed) without a visible new training call; a reward that is
    re-scaled mid-run.

    **Evidence.** A decisive fall is an event, judged when it holds (issue 41: a reward whose
    sign flips at step 80 of 160 and stays negative is not left to run to its end): the run lost
    at least ``error_drop`` of its gain (or, started at its best, fell by at least ``drop`` of
    the peak's magnitude), by at least ``decisive`` noise standard errors of a window median, and
    stayed down for at least a window, on a reward that is not a rolling mean of the last N
    episodes (SB3's ``rollout/ep_rew_mean``, whose point-to-point noise understates how far it
    wanders) nor one that jumps between levels from point to point (a win/loss return per
    episode: ``detect.switches``).  Any other fall is a trend: on a live run short of its plan
    an info note saying what is watched, until ``fair_share`` of the
    plan (default 1.0: all of it) is behind the run, past warm-up (:mod:`ppo_doctor.standing`).

    **Source.** Engstrom et al. 2020 "Implementation Matters" (LR annealing); Huang et al. 2022
    "The 37 implementation details of PPO"; Dohare et al. 2023 "Overcoming policy collapse in
    deep RL" (performance collapse of long PPO runs) (docs/sources.md#reward-collapse).
    """

    code = "PD204"
    name = "reward-collapse"
    symptom = "reward_collapse"
    severity = "warning"
    basis = "outcome"
    evidence = "event"  # a decisive fall; any other is a trend, watched in evaluate
    requires = (("reward/score", "reward/total"),)
    params = {
        "min_gain": COLLAPSE_DEFAULTS["min_gain"],
        "drop": COLLAPSE_DEFAULTS["drop"],
        "error_drop": COLLAPSE_DEFAULTS["error_drop"],
        "decisive": COLLAPSE_DEFAULTS["decisive"],
        "fair_share": FAIR_SHARE,
        "min_points": COLLAPSE_DEFAULTS["min_points"],
    }
    causes = {"lr-too-high": 0.8, "too-many-ppo-epochs": 0.6, "no-lr-annealing": 0.6, "value-undertrained": 0.4, "kl-coef-too-low": 0.3}
    message = (
        "reward {rise}, then fell below {mark:num} at step {threshold_step} and stayed down, ending at {late:num} ({lost})"
    )

    def evaluate(self, ctx: RuleContext) -> Iterator[Finding]:
        p = ctx.params
        found = collapsed(ctx, ctx.req[0].metric, p["min_gain"], p["drop"], p["min_points"])
        if found is None:
            return
        s, pd = found
        rose = pd.gain >= p["min_gain"] * max(pd.noise_se, 1e-12)
        lo, hi = int(s[max(0, pd.peak_idx - pd.window)]), int(s[pd.fall_idx])
        phase = next((x for x in phase_starts(ctx) if lo <= x <= hi), None)
        if rose:
            rise = f"climbed from {fmt_num(pd.first)} to a peak level of {fmt_num(pd.peak)} at step {int(s[pd.peak_idx])}"
            lost = f"{pd.lost_share:.0%} of the gain lost"
        else:
            rise = f"stood at its peak level of {fmt_num(pd.peak)} from the start (the median of its first {pd.window} points)"
            lost = f"{pd.fall / max(abs(pd.peak), abs(pd.late)):.0%} of that level lost"
        kept = held_out_kept(ctx.run, int(s[pd.peak_idx]), int(s[pd.fall_idx])) or rating_kept(
            ctx, int(s[max(0, pd.peak_idx - pd.window)]), int(s[pd.fall_idx])
        )
        finding = self.finding(
            ctx,
            metric=ctx.req[0].metric,
            observed={"first": pd.first, "peak": pd.peak, "late": pd.late, "lost_share": pd.lost_share},
            # the onset is where the collapse holds (the fall below the mark it stayed under), not
            # the peak it fell from: that is context in the message (docs/architecture.md, issue 37)
            start_step=int(s[pd.fall_idx]),
            threshold_step=int(s[pd.fall_idx]),
            peak_step=int(s[pd.peak_idx]),
            end_step=int(s[-1]),
            severity="info" if phase is not None or kept else ("error" if not rose or pd.lost_share >= p["error_drop"] else "warning"),
            evidence=([f"{kept}: the training episodes changed, not what the policy can do; a note"] if kept else [])
            + ([f"a new training call began at step {phase} (time/iterations restarts while the steps go on): "
                       "a curriculum stage or a new environment there would change what the reward measures; "
                       "the log cannot tell, so this is a note"] if phase is not None else [])
            + [
                f"gain {fmt_num(pd.gain)} = {fmt_num(pd.gain / max(pd.noise_se, 1e-12))} noise s.e. of a window median"
                if rose
                else f"fall {fmt_num(pd.fall)} = {fmt_num(pd.fall / max(pd.noise_se, 1e-12))} noise s.e. of a window median"
            ],
            fmt={"rise": rise, "mark": pd.mark, "lost": lost},
        )
        # a decisive fall that has held for a window is judged when it holds; any other waits for
        # a fair share of the plan (a prefix's dip can still recover)
        yield finding if decisive(ctx, s, pd, p) else as_trend(ctx, finding)

    @classmethod
    def bad_example(cls) -> Example:
        # CartPole-like: learns to ~450, collapses to ~60 at step 140 and never recovers
        r = np.r_[saturating(140, 20.0, 450.0, rate=4, sd=15.0, seed=71), flat(60, 60.0, 15.0, seed=72)]
        return Example(series={"reward/score": r}, framework="sb3")

    @classmethod
    def good_example(cls) -> Example:
        # learns and stays at its plateau, with one bad stretch it recovers from
        r = saturating(200, 20.0, 450.0, rate=4, sd=15.0, seed=73)
        r[120:130] = 150.0
        return Example(series={"reward/score": r}, framework="sb3")
