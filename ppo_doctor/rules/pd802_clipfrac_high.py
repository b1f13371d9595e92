"""PD802 clipfrac-high."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ..results import Finding
from .base import Example, RuleContext
from .clipping import unclipped_causes
from .examples import flat, saturating
from . import population
from .inputs import Input
from .messages import fmt_num
from .outcome import still_growing
from .shapes import Stretch, SustainedRule


class ClipfracHigh(SustainedRule[Input]):
    """A large share of tokens hits the PPO clip, update after update.

    **What it detects.** ``policy/clipfrac`` above ``max_clipfrac`` (0.3) for a sustained
    stretch (60 % of a window of 5 % of the run).  Above the line alone is a *sign*: a warning
    needs the reward to stall or fall after it (:func:`.outcome.judge_sign`).  It is a **runaway**
    when the stretches' median also goes beyond what every healthy run of the reference
    population reaches (``runaway_clipfrac``, docs/population.md) while still climbing at its
    last points (a share cannot go an order of magnitude beyond).  Error above
    ``error_clipfrac`` (0.6).

    **Why it matters.** The clip fraction is the share of tokens whose ratio left [1-eps, 1+eps]
    during the update; when a third or more are clipped every step the optimiser is pushing
    past the trust region on each batch: learning rate too high or too many epochs/minibatches.

    **Configuration-aware.** A clip fraction of exactly 0 with one epoch and one minibatch is
    expected (ratio = 1 by construction) and is never a symptom here (see PD304).

    **Known false positives.** Very small clip ranges (eps 0.05) clip more by design; classic
    RL with many epochs per batch often sits around 0.1-0.3 (below the default threshold).

    **Source.** PTT clip_fraction > 0.3 (its comment: "typically < 0.2"); folklore band 0.1-0.3
    (weakly sourced); DAPO#11 / verl#791 for the zero case (docs/sources.md#clipfrac).
    """

    code = "PD802"
    name = "clipfrac-high"
    symptom = "unstable_updates"
    severity = "warning"
    basis = "sign"
    watch = "the reward: heavy clipping matters if it stalls or falls"
    requires = ("policy/clipfrac",)
    params = {"max_clipfrac": 0.3, "error_clipfrac": 0.6, "runaway_clipfrac": population.runaway_limit("clipfrac"), "min_points": 5}
    causes = {"lr-too-high": 0.7, "too-many-ppo-epochs": 0.7, "batch-too-large": 0.2}
    message = "clip fraction stays above {max_clipfrac:g} {since} (median {median:num} there, peak value {peak:num})"

    level_param = "max_clipfrac"
    error_param = "error_clipfrac"

    def report(self, ctx: RuleContext, st: Stretch[Input]) -> Iterator[Finding]:
        causes, evidence = unclipped_causes(ctx, self.causes)
        epochs = ctx.view.cfg_int("ppo_epochs")
        if epochs is not None:
            evidence.insert(0, f"config: ppo_epochs={epochs}")
        runaway = max(float(ctx.params["runaway_clipfrac"]), st.level)
        basis = "sign"
        if st.median > runaway and still_growing(st.points.steps, st.points.values):
            basis = "runaway"
            evidence.append(f"median {fmt_num(st.median)} is beyond every healthy run of the reference population ({fmt_num(runaway)}, docs/population.md)")
        yield self.incident(ctx, st, causes=causes, evidence=evidence, basis=basis)

    @classmethod
    def bad_example(cls):
        return Example(series={"policy/clipfrac": saturating(100, 0.05, 0.45, sd=0.03, seed=55)}, config={"ppo_epochs": 16})

    @classmethod
    def good_example(cls):
        return Example(series={"policy/clipfrac": np.abs(flat(100, 0.12, 0.03, seed=56))}, config={"ppo_epochs": 4})
