"""PD303 lr-near-zero."""

from __future__ import annotations

import numpy as np

from ..detect import mask_to_spans
from ..view import RunView
from .base import Example, Rule
from .examples import flat


class LRNearZero(Rule):
    """The learning rate is effectively zero for the whole run.

    **What it detects.** The largest logged ``opt/lr`` is below ``min_lr`` (default 1e-8), or,
    when no learning rate is logged, the configured ``lr`` is.  Warm-up from 0 and decay to 0 at
    the end are normal and do not fire: only the peak counts.  A logged rate that is exactly 0
    everywhere may be a rounding artefact (veRL <= 0.4 prints 3 decimals, docs/sources.md#logged-precision): the
    configured ``lr`` decides then, and without one the finding is only info.

    **Why it matters.** With no step size the policy cannot move; reward and KL stay flat and
    the run wastes its budget (stagnation).  RLHF learning rates are around 1e-7 .. 1e-5
    (PPO-max uses 5e-7; TRL's default is 1.41e-5).

    **Known false positives.** A learning rate logged in a scaled unit, or a frozen-policy
    control run.

    Severity: error (a run with no step size is wasted, whatever else it shows).

    **Evidence.** An event: a step size below 1e-8 is a measured fact, not a trend, so it is
    judged at once, except while the run is still inside its learning-rate warm-up (the peak
    is still to come: nothing is said before the warm-up ends).

    **Source.** The learning rates of published PPO recipes (docs/sources.md#reference-recipes,
    docs/sources.md#learning-rate-floor); the troubleshooting guide: stalled training with the
    learning rate too low (docs/sources.md#guides).
    """

    code = "PD303"
    name = "lr-near-zero"
    symptom = "stagnation"
    severity = "error"
    basis = "outcome"
    requires = ()
    params = {"min_lr": 1e-8}
    causes = {"lr-too-low": 1.0}
    message = "the learning rate never exceeds {lr:num} ({source}): the policy cannot move"

    @classmethod
    def missing(cls, run):
        if run.frame.has("opt/lr") or RunView(run).cfg_float("lr") is not None:
            return []
        return ["opt/lr|config lr"]

    def evaluate(self, ctx):
        p = ctx.params
        config_lr = ctx.view.cfg_float("lr")
        standing = ctx.run.standing
        if standing.done is not None and standing.done <= standing.warmup:
            return  # still warming up: the logged rate has not reached its peak yet
        if ctx.has("opt/lr"):
            s, v = ctx.finite("opt/lr")
            if len(v) == 0:
                return
            peak = float(np.max(v))
            if peak >= p["min_lr"]:
                return
            rounded = peak == 0.0 and float(np.min(v)) == 0.0
            if rounded and config_lr is not None and config_lr >= p["min_lr"]:
                return  # printed as 0.000 by a 3-decimal logger; the config has the real value
            span = mask_to_spans(s, np.ones(len(v), dtype=bool), v)[0]
            yield self.finding(
                ctx,
                metric="opt/lr",
                observed={"lr": peak},
                start_step=int(s[0]),
                threshold_step=int(s[0]),
                peak_step=span.peak_step,
                end_step=int(s[-1]),
                severity="info" if rounded and config_lr is None else self.severity,
                evidence=["logged as exactly 0 everywhere: possibly rounded by the logger"] if rounded else [],
                fmt={"source": "logged opt/lr"},
            )
            return
        lr = config_lr
        if lr is not None and lr < p["min_lr"]:
            rng = ctx.run.frame.step_range()
            first, last = (None, None) if rng is None else rng
            yield self.finding(
                ctx,
                metric="opt/lr",
                observed={"lr": lr},
                start_step=first,
                threshold_step=first,
                peak_step=first,
                end_step=last,
                evidence=[f"config: lr={lr:g}"],
                fmt={"source": "config lr"},
            )

    @classmethod
    def bad_example(cls):
        return Example(series={"opt/lr": flat(50, 1e-11), "reward/score": flat(50, 0.3, 0.1)})

    @classmethod
    def good_example(cls):
        return Example(series={"opt/lr": flat(50, 1.41e-5), "reward/score": flat(50, 0.3, 0.1)})
