"""PD402 value-loss-spikes."""

from __future__ import annotations

import numpy as np

from ..detect import approx_median, default_window, spikes
from .base import Example, Rule, RuleContext
from .examples import decay, flat, with_points
from .inputs import Input
from .shapes import Stretch, stretch_incident
from .value_scale import reward_scale


class ValueLossSpikes(Rule):
    """The value loss swings wildly: spikes of ``factor`` times its local level.

    **What it detects.** Points of ``loss/value`` at least ``factor`` (10) times their local
    level and at least ``z`` robust z-scores above it, judged on a log scale because losses are
    positive and their spikes multiplicative.  A spike must also be material: at least
    ``min_share`` (0.1) of the squared reward scale (|median reward| + spread, as PD401/PD404),
    i.e. a value error of about a third of the rewards' magnitude, enough to flip the sign of
    typical advantages.  A critic that fits a saturated reward to 1e-4 and then jumps to 1e-2
    is ten times worse and still nearly exact.  A warning when the spikes recur (at least
    ``min_recurring``, 3); one or two are an info note: value spikes are common in classic RL (a
    rare large return) and hurt one batch, they do not break the run alone.

    **Returns that begin to vary.** A spike is the returns' spread appearing, not the critic,
    and is left out, when most of the points before it were updates whose returns were all
    equal (``RunView.returns``: an explained variance of NaN, a ``reward/std`` of 0) and its own
    were not: a critic fitted to a constant meets its first varying returns.  Likewise a spike
    within a point of a new episode return in a run whose episode-return mean stays exactly
    unchanged at three updates in four or more (a sparse task: the value loss jumps on the rare
    update that ends a successful episode).

    **Why it matters.** The guide's "value loss too high: stays high or swings wildly".  Value
    spikes come from returns the critic has never seen (an unnormalised or unclipped reward,
    a reward-model outlier) or a value learning rate that is too high, and they corrupt the
    advantages of that batch.

    **Known false positives.** Rare, genuinely surprising episodes in classic RL (a first
    success) that neither of the above marks; one-off spikes after a checkpoint reload.
    Without a reward metric the materiality floor is not applied.

    **Source.** The troubleshooting guide ("value loss too high"); TRL logging docs ("value loss
    will spike / NaN when not going well"); PTT value-loss rule (docs/sources.md#value-loss).
    """

    code = "PD402"
    name = "value-loss-spikes"
    symptom = "value_instability"
    severity = "warning"
    basis = "sign"
    watch = "the reward and explained variance: value-loss spikes matter if the critic stops tracking returns"
    requires = ("loss/value",)
    params = {"factor": 10.0, "z": 6.0, "min_share": 0.1, "min_recurring": 3, "min_points": 20}
    causes = {"reward-not-clipped": 0.7, "reward-not-normalized": 0.6, "value-lr-mistuned": 0.6, "reward-model-flawed": 0.3}
    message = "value loss spiked {count} time(s), up to {peak:num} at step {peak_step} (>= {factor:g}x its local level)"

    def evaluate(self, ctx):
        p = ctx.params
        s, v = ctx.req[0].steps, ctx.req[0].values
        pos = v > 0
        s, v = s[pos], v[pos]
        if len(v) < p["min_points"]:
            return
        logv = np.log10(v)
        found = spikes(s, logv, z=p["z"], direction="up", min_deviation=float(np.log10(p["factor"])))
        scale = reward_scale(ctx)
        if scale:
            floor = float(np.log10(p["min_share"] * scale**2))
            found = [sp for sp in found if sp.peak_value >= floor]
        found = [sp for sp in found if not _returns_began_to_vary(ctx, s, sp.peak_idx)]
        if not found:
            return
        st = Stretch(Input(ctx.req[0].metric, s, logv), found, "up")
        observed = {"count": len(found), "peak": float(10**st.worst.peak_value), "median": approx_median(v)}
        # one or two spikes the loss comes straight back from are surprises (a rare large
        # return), not an unstable critic; recurring ones are
        severity = "warning" if len(found) >= p["min_recurring"] else "info"
        yield stretch_incident(self, ctx, st, observed=observed, severity=severity)

    @classmethod
    def bad_example(cls):
        return Example(series={"loss/value": with_points(decay(150, 1.0, 0.2, sd=0.02, seed=27), {40: 20.0, 70: 15.0, 110: 40.0})})

    @classmethod
    def good_example(cls):
        # a critic that fits a saturated unit-scale reward almost exactly: 10x jumps from 1e-4
        # are still tiny errors against the squared reward scale
        return Example(
            series={
                "loss/value": with_points(np.abs(decay(150, 1e-3, 1e-4, sd=2e-6, seed=28)), {70: 5e-3, 110: 1e-2}),
                "reward/score": flat(150, 1.0, 0.01, seed=35),
            }
        )


def _returns_began_to_vary(ctx: RuleContext, steps: np.ndarray, idx: int) -> bool:
    """The spike at ``steps[idx]`` is the returns' spread appearing, not the critic: most of the
    points before it had returns that were all equal (a critic fitted to a constant, its loss
    about 0), or a rare new return arrived with it in a run whose episode returns hardly ever
    change (a first success in a sparse task) (:mod:`ppo_doctor.view.returns`)."""
    returns = ctx.view.returns
    before = steps[max(0, idx - default_window(len(steps))) : idx]
    if len(before) and returns.constant_at(before).mean() >= 0.5 and not returns.constant_at(steps[idx : idx + 1])[0]:
        return True
    return bool(returns.new_return_near(steps)[idx])
