"""PD903 downsampled-history."""

from __future__ import annotations

import re

import numpy as np

from .base import Example, Rule
from .incidents import describe

# Point counts that down-sampling readers produce: TensorBoard UI 1,000, EventAccumulator's
# default 10,000 per tag (plugin accumulator 500), wandb run.history() ~500 (docs/sources.md#downsampled-histories).
SAMPLED_COUNTS = frozenset({500, 1000, 10000})
SAMPLED_RE = re.compile(r"down-?sampl|sub-?sampl|reservoir|bucket|sampled", re.IGNORECASE)


def uneven(steps: np.ndarray, cv: float) -> bool:
    """Step gaps vary more than a regular logging interval would (coefficient of variation)."""
    gaps = np.diff(steps)
    if len(gaps) < 2 or gaps.mean() <= 0:
        return False
    return float(gaps.std() / gaps.mean()) > cv


class DownsampledHistory(Rule):
    """The log looks down-sampled: spikes and onsets may be hidden.

    **What it detects.** A reader reported down-sampling (e.g. a W&B CSV panel export or a
    sampled history), or a metric holds exactly 500, 1,000 or 10,000 points with uneven step
    gaps (coefficient of variation above ``gap_cv``): the signature of reservoir sampling by
    TensorBoard's EventAccumulator (10,000 per tag by default), the TensorBoard UI (1,000) or
    ``wandb run.history()`` (~500).

    **Why it matters.** Sampling drops points at random: a one-step reward spike or the first
    NaN may be gone, and onsets shift.  Re-export the full history (raw event files,
    ``scan_history``, the ``.wandb`` file) for a complete diagnosis.

    **Known false positives.** A run that really logged exactly 1,000 points with irregular
    steps (e.g. logging on episode ends).

    **Source.** The sampling of TensorBoard's ``EventAccumulator`` and UI and of W&B's
    ``run.history()`` and panel exports (docs/sources.md#downsampled-histories).
    """

    code = "PD903"
    name = "downsampled-history"
    symptom = "log_quality"
    severity = "warning"
    basis = "log"
    requires = ()
    params = {"gap_cv": 0.1}
    causes = {}
    message = "the history looks down-sampled ({why}): short spikes and exact onsets may be missing"

    def evaluate(self, ctx):
        run = ctx.run
        reasons = [i.message for i in run.issues if SAMPLED_RE.search(i.message)]
        sampled = []
        for metric in run.frame.metrics:
            if run.frame.count(metric) in SAMPLED_COUNTS:
                s, _ = ctx.arrays(metric)
                if len(s) in SAMPLED_COUNTS and uneven(s, ctx.params["gap_cv"]):
                    sampled.append(f"{metric} ({len(s)} points)")
        if not reasons and not sampled:
            return
        why = []
        if reasons:
            why.append("reader: " + reasons[0])
        if sampled:
            why.append(f"exactly 500/1000/10000 points with uneven gaps: {describe(sampled, 3)}")
        rng = run.frame.step_range()
        first, last = (None, None) if rng is None else rng
        yield self.finding(
            ctx,
            metric=sampled[0].split(" ")[0] if sampled else "",
            observed={"metrics": len(sampled)},
            start_step=first,
            threshold_step=first,
            end_step=last,
            evidence=reasons + sampled,
            fmt={"why": "; ".join(why)},
        )

    @classmethod
    def bad_example(cls):
        steps = np.sort(np.random.default_rng(63).choice(np.arange(50_000), 1000, replace=False))
        return Example(series={"reward/score": (steps, np.linspace(0, 1, 1000))})

    @classmethod
    def good_example(cls):
        steps = np.arange(1000) * 50
        return Example(series={"reward/score": (steps, np.linspace(0, 1, 1000))})
