"""PD302 vanishing-gradients."""

from __future__ import annotations

import numpy as np

from ..detect import median, sustained_spans
from .base import Example, Rule, RuleContext
from .examples import decay, flat
from .incidents import incident, sustain_window
from ..detect import early_late
from .reward_progress import reward_arrays


class VanishingGradients(Rule):
    """Gradient norms shrink to a tiny fraction of their early level.

    **What it detects.** ``grad/norm`` (and ``grad/norm_critic``) whose late median (last 10 %)
    is below ``factor`` times its early median (first 10 %), with a sustained stretch below
    that level.  Each logged norm is judged separately.  Exact zeros amid ordinary norms are
    steps with no signal at all (a GRPO batch whose prompt groups all got equal rewards gives no
    gradient) and are left out, unless the whole last window is zero.  Also: the reward stops
    being logged (or turns non-finite) before the end while the norm goes on, and after its
    last value the norm sits, sustained, below ``after_reward_factor`` (10 %) of its median
    before it.  That is the learning signal vanishing with the reward (TRL writes a NaN reward
    as a missing one and its advantages become 0; only the KL term still pulls, PD604): with
    no reward left to judge, the gradients are the evidence that the run stopped learning.

    **Why it matters.** Near-zero gradients mean the update no longer changes the model:
    stalled training, the guide's "vanishing gradients".  Causes include a detached graph or
    masked-out loss (implementation), advantages that are all zero (no learning signal), or a
    learning-rate schedule that is effectively off.

    **Known false positives.** Runs that legitimately converge to a sharp optimum in classic
    RL; a logged norm that is post-clip and scaled.

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan
    the finding is an info note saying what is watched, until ``fair_share``
    of the plan (default 1.0: all of it) is behind the run, past warm-up; a live run with no
    known plan is judged when it ends (:mod:`ppo_doctor.standing`).

    **Source.** PTT grad-norm rule (< 0.01x the early baseline = vanish); DeepDiagnosis mean |g| <
    1e-7; AUTOTRAINER vanishing-gradient ratio (docs/sources.md#vanishing-gradients).
    """

    code = "PD302"
    name = "vanishing-gradients"
    symptom = "stagnation"
    severity = "warning"
    basis = "sign"
    watch = "the reward: small gradients matter only if it stops improving"
    evidence = "trend"
    requires = (("grad/norm", "grad/norm_critic"),)
    params = {"factor": 0.01, "after_reward_factor": 0.1, "min_points": 10}
    causes = {"weak-learning-signal": 0.7, "implementation-bug": 0.4, "lr-too-low": 0.3}
    message = "{metric} fell from {first:num} to {late:num} ({how}): gradients vanish"

    def evaluate(self, ctx):
        p = ctx.params
        stop = _reward_stop(ctx, p["min_points"])
        for metric in ("grad/norm", "grad/norm_critic"):
            if not ctx.has(metric):
                continue
            s, v = ctx.finite(metric)
            if len(v) < p["min_points"]:
                continue
            _, _, w0 = early_late(v)
            if np.any(v[-w0:] != 0):
                # exact zeros amid ordinary norms are steps with no signal at all (a GRPO batch whose
                # groups all got equal rewards), not a gradient shrinking: judge the others
                keep = v != 0
                s, v = s[keep], v[keep]
                if len(v) < p["min_points"]:
                    continue
            first, late, _ = early_late(v)
            k, w = sustain_window(ctx.planned_points(len(v)))
            how = f"below {p['factor']:.0%} of its early level"
            spans = []
            if first > 0 and late < p["factor"] * first:
                spans = sustained_spans(s, v < p["factor"] * first, k, w, values=v, peak="min")
            if not spans and stop is not None:
                reward, last = stop
                before, after = v[s <= last], v[s > last]
                if len(before) >= p["min_points"] and len(after) >= p["min_points"]:
                    first, late = float(median(before)), float(median(after))
                    if first > 0 and late < p["after_reward_factor"] * first:
                        low = (s > last) & (v < p["after_reward_factor"] * first)
                        spans = sustained_spans(s, low, k, w, values=v, peak="min")
                        how = (
                            f"medians before and after {reward} stopped after step {last}: under "
                            f"{p['after_reward_factor']:.0%} of its level, no reward, no advantages"
                        )
            if not spans:
                continue
            yield incident(
                self,
                ctx,
                metric=metric,
                steps=s,
                values=v,
                span=spans[0],
                direction="down",
                log_scale=True,
                observed={"first": first, "late": late, "min": float(np.min(v))},
                end_step=spans[-1].end_step,
                fmt={"how": how},
            )

    @classmethod
    def bad_example(cls):
        return Example(series={"grad/norm": decay(100, 1.0, 1e-5, rate=8, seed=22)})

    @classmethod
    def good_example(cls):
        return Example(series={"grad/norm": flat(100, 0.8, 0.1, seed=23)})


def _reward_stop(ctx: RuleContext, min_points: int) -> tuple[str, int] | None:
    """``(reward metric, its last finite step)`` when the reward stops before the run's last
    logged gradient norm; None when it goes on to the end or was never logged enough."""
    reward = reward_arrays(ctx, min_points)
    if reward is None:
        return None
    metric, s, _ = reward
    ends = [int(ctx.arrays(m)[0][-1]) for m in ("grad/norm", "grad/norm_critic") if ctx.has(m) and len(ctx.arrays(m)[0])]
    return (metric, int(s[-1])) if ends and int(s[-1]) < max(ends) else None
