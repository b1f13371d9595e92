"""PD901 missing-reward."""

from __future__ import annotations

from .base import Example, Rule
from .examples import flat, ramp

REWARDS = ("reward/score", "reward/total")


class MissingReward(Rule):
    """No reward metric was found in the log.

    **What it detects.** The run has neither ``reward/score`` nor ``reward/total`` (after the
    alias table; an unmapped reward tag can be mapped with ``aliases`` in the config).

    **Why it matters.** Mean reward is, with KL, the first thing the guides tell you to watch.
    Without it, reward spikes, hacking, stagnation and oscillation cannot be judged, and the
    verdict says so instead of calling the run healthy.

    **Known false positives.** Supervised (SFT) runs, which have no reward by nature; a reward
    logged under a custom name (add an alias).

    **Source.** The guides' metrics to watch, mean reward and KL first (docs/sources.md#guides);
    one metric under several prefixes (docs/sources.md#metric-prefixes).
    """

    code = "PD901"
    name = "missing-reward"
    symptom = "log_quality"
    severity = "warning"
    requires = ()
    params = {}
    causes = {}
    message = "no reward metric (reward/score or reward/total) in this log: reward spikes, hacking and stagnation were not judged"

    def evaluate(self, ctx):
        if any(ctx.has(m) for m in REWARDS):
            return
        rng = ctx.run.frame.step_range()
        first, last = (None, None) if rng is None else rng
        yield self.finding(ctx, metric="reward/score", observed={}, start_step=first, threshold_step=first, end_step=last)

    @classmethod
    def bad_example(cls):
        return Example(series={"loss/policy": flat(20, 0.3, 0.05), "kl/ref": flat(20, 2.0, 0.2)})

    @classmethod
    def good_example(cls):
        return Example(series={"reward/score": ramp(20, 1.0, 2.0, sd=0.1)})
