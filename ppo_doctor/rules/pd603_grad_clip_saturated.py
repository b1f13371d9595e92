"""PD603 grad-clip-saturated."""

from __future__ import annotations

import numpy as np

from ..detect import median
from ..view import RunView
from .base import Example, Rule
from .examples import flat


class GradClipSaturated(Rule):
    """Nearly every update is clipped: the gradient norm sits far above ``max_grad_norm``.

    **What it detects.** With ``max_grad_norm`` known from the config, at least ``share`` of
    the second half of the run has a (pre-clip) ``grad/norm`` above it.  A warning when the
    median there is at least ``warn_ratio`` (10) times the limit, the same factor PD602 and PTT
    use for an exploding norm; information when it is between ``ratio`` (3) and 10 times.

    **Why it matters.** Clipping every step by a modest factor is clipping doing its job: with
    Adam, rescaling every gradient by a similar factor barely changes the update (Adam divides
    by the gradients' running scale), so a norm of 3x the limit is a fact about the run worth
    knowing, not instability.  Norms ten or a hundred times the limit are the slow form of
    gradient explosion: every update as large as allowed, its direction set by outlier
    batches, usually from a learning rate that is too high or advantages that are too large
    (rewards not normalised).

    **Known false positives.** Frameworks that log the post-clip norm (then it never exceeds the
    limit and the rule is silent); a deliberately tight clip.

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan
    the finding is an info note saying what is watched, until ``fair_share``
    of the plan (default 1.0: all of it) is behind the run, past warm-up; a live run with no
    known plan is judged when it ends (:mod:`ppo_doctor.standing`).

    **Source.** The troubleshooting guide ("watch gradient magnitudes; clipping helps with
    explosions"); PTT grad-norm rule (> 10x = explode); CleanRL/37-details max_grad_norm 0.5;
    veRL/OpenRLHF log the pre-clip norm (docs/sources.md#grad-clipping).
    """

    code = "PD603"
    name = "grad-clip-saturated"
    symptom = "gradient_explosion"
    severity = "warning"
    basis = "sign"
    watch = "the reward: a gradient always at the clip matters if learning stalls"
    evidence = "trend"
    requires = ("grad/norm",)
    params = {"share": 0.9, "ratio": 3.0, "warn_ratio": 10.0, "min_points": 20}
    causes = {"lr-too-high": 0.6, "reward-not-normalized": 0.5, "reward-not-clipped": 0.3}
    message = "grad/norm exceeds max_grad_norm={max_grad_norm:g} on {share:.0%} of the second half (median {median:num}, {times:num}x the limit): every update is clipped"

    @classmethod
    def missing(cls, run):
        out = super().missing(run)
        mgn = RunView(run).cfg_float("max_grad_norm")
        if mgn is None or mgn <= 0:
            out.append("config max_grad_norm")
        return out

    def evaluate(self, ctx):
        p = ctx.params
        mgn = ctx.view.cfg_float("max_grad_norm")
        s, v = ctx.req[0].steps, ctx.req[0].values
        if mgn is None or mgn <= 0 or len(v) < p["min_points"]:
            return
        half = len(v) // 2
        tail = v[half:]
        share = float(np.mean(tail > mgn))
        med = float(median(tail))
        if share < p["share"] or med < p["ratio"] * mgn:
            return
        over = np.flatnonzero(v > mgn)
        yield self.finding(
            ctx,
            metric="grad/norm",
            observed={"share": share, "median": med, "max_grad_norm": mgn},
            start_step=int(s[over[0]]),
            threshold_step=int(s[over[0]]),
            peak_step=int(s[int(np.argmax(v))]),
            end_step=int(s[-1]),
            severity="warning" if med >= p["warn_ratio"] * mgn else "info",
            evidence=[f"config: max_grad_norm={mgn:g}"],
            fmt={"times": med / mgn},
        )

    @classmethod
    def bad_example(cls):
        return Example(series={"grad/norm": np.abs(flat(100, 20.0, 3.0, seed=44))}, config={"max_grad_norm": 1.0})

    @classmethod
    def good_example(cls):
        return Example(series={"grad/norm": np.abs(flat(100, 0.6, 0.2, seed=45))}, config={"max_grad_norm": 1.0})
