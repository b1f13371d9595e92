"""PD804 zeroed-losses."""

from __future__ import annotations

import numpy as np

from ..detect import align, mask_to_spans
from .base import Example, Rule
from .examples import decay, with_points
from .incidents import describe

LOSSES = ("loss/policy", "loss/value", "loss/total")


class ZeroedLosses(Rule):
    """The losses are exactly 0 at isolated steps amid non-zero values (TRL skipped the batch).

    **What it detects.** Steps where every logged loss (``loss/policy``, ``loss/value``,
    ``loss/total``, whichever are present) is exactly 0.0 while most other steps are not.
    TRL's legacy ``PPOTrainer`` multiplies the losses by 0 when the batch's mean ratio exceeds
    ``ratio_threshold`` (10), so those steps are skipped batches, not convergence.

    **Why it matters.** Each zeroed step is a batch whose update was too drastic: the ratio
    exploded.  A few mean the updates are on the edge; many mean most batches are thrown away.
    Error when at least ``error_share`` of the steps are zeroed.

    **Framework-specific.** Only TRL legacy logs (framework ``trl_legacy``) are judged: elsewhere an
    exact 0 has other, benign causes (GRPO's loss is 0 when every group's rewards are equal and
    beta = 0; SB3's losses are 0 when a batch has no reward at all).

    **Known false positives.** A loss that is not computed on some steps and logged as 0: only
    steps where *all* present losses are 0 count.

    **Source.** TRL legacy ``ppo_trainer.py`` ratio_threshold (PR #488, trl#101, #1857): zeroed
    losses are not convergence (docs/sources.md#zeroed-losses).
    """

    code = "PD804"
    name = "zeroed-losses"
    symptom = "unstable_updates"
    severity = "warning"
    basis = "sign"
    watch = "the reward: zeroed losses matter if it stops improving"
    requires = (LOSSES,)
    params = {"max_share": 0.5, "error_share": 0.2, "min_points": 10}
    causes = {"lr-too-high": 0.6, "too-many-ppo-epochs": 0.6, "batch-too-large": 0.3}
    message = (
        "all losses are exactly 0 at {count} step(s) ({steps}): skipped batches, not convergence "
        "(TRL zeroes the losses when the batch's PPO ratio exceeds ratio_threshold)"
    )

    def evaluate(self, ctx):
        p = ctx.params
        if ctx.view.framework != "trl_legacy":
            return
        present = [m for m in LOSSES if ctx.has(m)]
        steps: np.ndarray | None = None
        zero: np.ndarray | None = None
        for m in present:
            s, v = ctx.arrays(m)
            if steps is None or zero is None:
                steps, zero = s, v == 0
            else:
                common, ia, ib = align(steps, s)
                steps, zero = common, zero[ia] & (v[ib] == 0)
        if steps is None or zero is None or len(steps) < p["min_points"]:
            return
        share = float(zero.mean())
        if not zero.any() or share > p["max_share"]:
            return  # nothing zeroed, or losses that are simply 0 most of the time
        spans = mask_to_spans(steps, zero)
        count = int(zero.sum())
        first = spans[0].start_step
        yield self.finding(
            ctx,
            metric=present[0],
            observed={"count": count, "share": share},
            start_step=first,
            threshold_step=first,
            peak_step=first,
            end_step=spans[-1].end_step,
            severity="error" if share >= p["error_share"] else "warning",
            evidence=[f"losses checked: {', '.join(present)}"],
            fmt={"steps": describe(steps[zero].tolist())},
        )

    @classmethod
    def bad_example(cls):
        pol = with_points(decay(60, 0.5, 0.1, sd=0.02, seed=59), {30: 0.0, 44: 0.0})
        val = with_points(decay(60, 2.0, 0.4, sd=0.05, seed=60), {30: 0.0, 44: 0.0})
        return Example(series={"loss/policy": pol, "loss/value": val}, framework="trl_legacy")

    @classmethod
    def good_example(cls):
        # the policy loss crosses 0.0 exactly once while the value loss does not: not a skipped batch
        pol = with_points(decay(60, 0.5, 0.1, sd=0.02, seed=61), {30: 0.0})
        return Example(series={"loss/policy": pol, "loss/value": decay(60, 2.0, 0.4, sd=0.05, seed=62)}, framework="trl_legacy")
