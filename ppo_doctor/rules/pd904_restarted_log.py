"""PD904 restarted-log."""

from __future__ import annotations

import numpy as np

from .base import Example, Rule
from .examples import ramp
from .incidents import describe


class RestartedLog(Rule):
    """The log goes back in steps: the run was restarted or resumed from a checkpoint.

    **What it detects.** The readers found steps that go backwards (``run.restarts``): a resumed
    run re-logging steps it had already logged, or a second run appended to the same file.
    DeepSpeed-Chat restarts its TensorBoard step at 0 every epoch.

    **Why it matters.** Where steps overlap, the later values win in the analysis (the frame
    keeps the last value per step), so a crash and its resume can hide each other.  Onsets
    near a restart deserve a look at the raw log.

    **Known false positives.** Frameworks whose step counter is per epoch by design.

    **Source.** DeepSpeed-Chat's per-epoch step index (docs/sources.md#deepspeed-chat-metrics) and
    what the step column counts in each framework (docs/sources.md#step-semantics); restarts are
    reported, not silently purged (the RunFrame contract, docs/architecture.md#contracts).
    """

    code = "PD904"
    name = "restarted-log"
    symptom = "log_quality"
    severity = "warning"
    basis = "log"
    requires = ()
    params = {}
    causes = {}
    # the readers give the distinct steps the log goes back to, not how often it went back there
    # (six launches appended to one per-episode CSV all go back to episode 0): no count is claimed
    message = "the log goes back to earlier steps (to step(s) {steps}): a restarted or resumed run, or several runs appended to one file"

    def evaluate(self, ctx):
        restarts = sorted(int(r) for r in ctx.run.restarts)
        if not restarts:
            return
        rng = ctx.run.frame.step_range()
        yield self.finding(
            ctx,
            metric="",
            observed={"count": len(restarts)},
            start_step=restarts[0],
            threshold_step=restarts[0],
            end_step=None if rng is None else rng[1],
            fmt={"steps": describe(restarts)},
        )

    @classmethod
    def bad_example(cls):
        # resumed from a checkpoint at step 60 after logging up to step 79
        steps = np.concatenate([np.arange(80), np.arange(60, 120)])
        return Example(series={"reward/score": (steps, ramp(len(steps), 1.0, 2.0, sd=0.1))})

    @classmethod
    def good_example(cls):
        return Example(series={"reward/score": ramp(40, 1.0, 2.0, sd=0.1)})
