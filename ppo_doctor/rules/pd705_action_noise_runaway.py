"""PD705 action-noise-runaway."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ..detect import early_late
from ..results import Finding
from ..view.actions import action_std_series
from . import population
from .base import Example, Rule, RuleContext
from .examples import decay, flat
from .messages import fmt_num
from .outcome import still_growing


class ActionNoiseRunaway(Rule):
    """A Gaussian policy's action std grows without bound.

    **What it detects.** The action std a run logs for its Gaussian policy (SB3's ``train/std``,
    ``action_std``, ``logstd`` with the log undone: ``view.actions.action_std_series``) whose
    median over the last 10 % of its points is at least ``runaway`` times that over the first
    10 %, and which is still climbing at its last points (``outcome.still_growing``: a significant
    rise over the last quarter, at least half the rise of the quarter before).  A **runaway**
    (the verdict contract): a warning whatever the reward did.

    ``runaway`` is the growth no healthy run of the reference population reaches
    (``population.runaway_limit("action_std_growth")``, docs/population.md), never below 2: twice
    the std SB3 and CleanRL start a Gaussian from (log std 0), at which 62 % of the sampled actions
    of an action space normalised to [-1, 1] fall outside it and are clipped to its bounds.  The
    healthy runs of the labelled set end at 0.2-1.2 times their first std; the three runs of
    the set whose std grew 29-50 times (an SB3 acrobot twice, an A2C trader) acted at random by
    their end.

    **Why it matters.** A policy learning its task narrows its noise: PPO trains the log std as a
    free parameter and on a task it learns the std shrinks (rsl_rl#67: "the parameter should
    generally decrease").  One that keeps growing means the gradient pays for spreading the actions:
    an entropy bonus that outweighs the advantages, advantages that carry no signal, or actions
    clipped to the action space's bounds, so that wider noise costs nothing (rlpyt#124: log std
    climbing to 2.3, every action at its bound; garage#255: "std explodes").  The actions become
    noise and the return, if logged, stops improving or falls.

    **Known false positives.** A run that starts from a near-deterministic policy on purpose (a
    small ``log_std_init``) and is meant to widen it first: the growth then levels off, which the
    still-climbing test leaves alone.

    **Source.** rlpyt#124, garage#255, rsl_rl#67 and RLlib's ``log_std_clip_param``
    (ray-project/ray#47827) (docs/sources.md#action-noise).
    """

    code = "PD705"
    name = "action-noise-runaway"
    symptom = "unstable_updates"
    severity = "warning"
    basis = "runaway"
    params = {"runaway": population.runaway_limit("action_std_growth"), "min_points": 20}
    causes = {"action-noise-unbounded": 0.9, "entropy-bonus-too-high": 0.6, "lr-too-high": 0.3}
    message = "action std grew {growth:num}x ({first:num} -> {late:num}) and is still growing: the policy's actions turn into noise"

    def evaluate(self, ctx: RuleContext) -> Iterator[Finding]:
        found = action_std_series(ctx.view)
        if found is None:
            return
        tag, s, v = found
        if len(v) < ctx.params["min_points"]:
            return
        first, late, _ = early_late(v)
        if not first > 0:
            return
        growth = late / first
        if growth < ctx.params["runaway"] or not still_growing(s, v):
            return
        limit = first * ctx.params["runaway"]
        beyond = np.flatnonzero(v >= limit)
        yield self.finding(
            ctx,
            metric=tag,
            observed={"first": first, "late": late, "growth": growth},
            start_step=int(s[0]),
            threshold_step=int(s[beyond[0]]) if len(beyond) else int(s[-1]),
            peak_step=int(s[int(np.argmax(v))]),
            end_step=int(s[-1]),
            evidence=[f"{fmt_num(growth)}x is beyond every healthy run of the reference population ({fmt_num(ctx.params['runaway'])}x, docs/population.md)"],
        )

    @classmethod
    def bad_example(cls):
        # SB3 PPO whose log std climbs steadily: std 1 -> 20 and still climbing
        return Example(series={"train/std": np.exp(np.linspace(0.0, 3.0, 200)) * (1 + flat(200, 0.0, 0.01, seed=71))}, framework="sb3")

    @classmethod
    def good_example(cls):
        # a policy converging: std 1 -> 0.4
        return Example(series={"train/std": decay(200, 1.0, 0.4, sd=0.01, seed=72)}, framework="sb3")
