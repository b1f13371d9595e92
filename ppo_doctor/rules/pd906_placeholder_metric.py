"""PD906 placeholder-metric."""

from __future__ import annotations

import numpy as np

from .base import Example, Rule
from .examples import flat, saturating


class PlaceholderMetric(Rule):
    """A metric holds one exact value on every point while the reward moves: it was not measured.

    **What it detects.** A quantity that cannot stay exactly constant while a policy learns
    (KL, entropy, clip fraction, ratio, losses, gradient norms, critic statistics) holds one
    exact value on each of its points (at least 20) while the reward takes other values
    (:mod:`ppo_doctor.view.placeholder`).  A discrete policy's entropy at exactly ln(k) is a
    uniform policy, a measurement (PD305), and is not reported here.

    **Why it matters.** Home-made loops write ``approx_kl = 0.0`` or ``entropy = 0.0`` for what
    they never compute.  Read as a measurement, such a column says "the update does not move the
    policy" or "the entropy is frozen" about a run whose reward, accuracy and lengths all move.
    A placeholder is not evidence: the rules that need the metric are listed as not applicable
    ("a constant placeholder, not measured"), and the other rules do not read it.

    **Known false positives.** A metric that truly is constant because the policy never changes
    while the reward moves by chance alone (a random policy on a noisy task); the reward rules
    judge that run.

    **Source.** A home-made GRPO loop whose constant ``approx_kl`` and ``entropy`` columns were read
    as "the optimiser step does not change the policy" (docs/sources.md#placeholders).
    """

    code = "PD906"
    name = "placeholder-metric"
    symptom = "log_quality"
    severity = "info"
    basis = "log"
    requires = ()
    params = {}
    causes = {}
    message = "{names} hold one exact value on every point while the reward moves: not measured, not read as evidence"

    def evaluate(self, ctx):
        held = ctx.view.placeholders
        if not held:
            return
        names = ", ".join(f"{ctx.view.raw(m)} (= {value:g})" for m, value in held.items())
        first = min(int(ctx.run.frame.arrays(m)[0][0]) for m in held)
        yield self.finding(ctx, metric=next(iter(held)), observed={"metrics": float(len(held))}, start_step=first, threshold_step=first, fmt={"names": names})

    @classmethod
    def bad_example(cls):
        return Example(series={"reward/score": saturating(60, 0.1, 0.8, sd=0.05, seed=3), "kl/old": np.zeros(60)}, framework="unknown")

    @classmethod
    def good_example(cls):
        return Example(series={"reward/score": saturating(60, 0.1, 0.8, sd=0.05, seed=3), "kl/old": np.abs(flat(60, 0.01, 0.003, seed=4))}, framework="unknown")
