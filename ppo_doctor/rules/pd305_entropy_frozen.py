"""PD305 entropy-frozen."""

from __future__ import annotations

import math

import numpy as np

from ..detect import flat_spans, median
from .base import Example, Rule
from .examples import flat, saturating
from .reward_progress import reward_suffers


def uniform_actions(entropy: float) -> int | None:
    """k when ``entropy`` is ln(k) for a small integer k: a uniform policy over k actions."""
    if not 0.5 < entropy < math.log(10_000):
        return None
    k = round(math.exp(entropy))
    return k if k >= 2 and abs(math.log(k) - entropy) < 1e-3 else None


class EntropyFrozen(Rule):
    """Policy entropy does not move at all: the policy distribution is not being updated.

    **What it detects.** The policy entropy (see PD701 for units and signs) stays constant,
    within a relative ``tolerance``, over at least ``share`` of its points (flatline detector),
    on a run of at least ``min_points`` points.  When the constant is ln(k) for an integer k the
    policy is uniform over k actions: it never left its initialisation.

    **Continuous actions.** A Gaussian policy's entropy depends on its std alone, not on its
    mean: a std that is fixed, scheduled or not trained keeps the entropy constant while the
    policy learns.  On a run with continuous actions (``RunView.action_space``, see PD701) the
    finding is a symptom only while the reward suffers (``reward_progress.reward_suffers``:
    collapsed from its best, or no clear rise); otherwise, or without a reward, an info note.

    **Outcome or sign.** An entropy frozen at ln(k) on a discrete policy is an outcome: the
    policy never left its uniform initialisation, so it learned nothing whatever the reward did.
    Any other frozen entropy is a sign, kept as a warning only while the reward suffers.

    **Why it matters.** Learning changes the policy, and any change moves its entropy.  A frozen
    entropy means the updates do not reach the policy (learning rate 0, frozen parameters, a
    loss that is detached or multiplied by 0, or advantages that are all zero): stagnation.

    **Known false positives.** Entropy logged from a fixed evaluation distribution, or a
    constant placeholder value written by a custom logger; a Gaussian policy with a fixed std
    that nothing marks as continuous.

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan
    the finding is an info note saying what is watched, until ``fair_share``
    of the plan (default 1.0: all of it) is behind the run, past warm-up; a live run with no
    known plan is judged when it ends (:mod:`ppo_doctor.standing`).

    **Source.** The troubleshooting guide ("vanishing gradients / stalled training"); Andy Jones'
    "Debugging RL" notes (entropy/log|A| starts near 1 and should fall); DeepDiagnosis' "unchanging
    tensor" check (docs/sources.md#entropy).
    """

    code = "PD305"
    name = "entropy-frozen"
    symptom = "stagnation"
    severity = "warning"
    basis = "sign"
    watch = "the reward: a frozen entropy matters if the reward is stuck"
    evidence = "trend"
    requires = (("policy/entropy", "loss/entropy"),)
    params = {"tolerance": 1e-4, "share": 0.9, "min_points": 20}
    causes = {"lr-too-low": 0.8, "implementation-bug": 0.6, "weak-learning-signal": 0.5}
    message = "policy entropy stays at {value:num} for {count} of {n} points{uniform}: {frozen} is not changing"

    def evaluate(self, ctx):
        p = ctx.params
        view = ctx.view.entropy
        if view is None or len(view.values) < p["min_points"]:
            return
        s, v = view.steps, view.values
        spans = flat_spans(s, v, min_len=p["min_points"], rel_tol=p["tolerance"])
        count = sum(sp.length for sp in spans)
        if count < p["share"] * len(v):
            return
        value = float(median(v))
        continuous = ctx.view.continuous_actions
        k = None if continuous else uniform_actions(value)
        evidence = [f"ln({k}) = {math.log(k):.4f}: uniform over {k} actions"] if k else []
        severity = self.severity
        if continuous:
            # a Gaussian's entropy depends on its std alone: a std that is fixed or not trained
            # keeps it constant while the mean (the policy) learns
            space = ctx.view.action_space
            suffers = reward_suffers(ctx)
            evidence += [space.evidence] if space is not None else []
            evidence += [suffers[1]] if suffers is not None else ["no reward logged: a constant Gaussian entropy is a fixed std, not judged without the reward"]
            if suffers is None or not suffers[0]:
                severity = "info"
        yield self.finding(
            ctx,
            metric=view.metric,
            observed={"value": value, "count": count},
            start_step=spans[0].start_step,
            threshold_step=spans[0].start_step,
            peak_step=spans[0].start_step,
            end_step=spans[-1].end_step,
            evidence=evidence,
            severity=severity,
            # a policy uniform over its actions on every point provably never changed: whatever
            # the reward did, it did by chance (an outcome, not a sign to weigh against it)
            basis="outcome" if k else "sign",
            fmt={"n": len(v), "uniform": f" (= ln {k}, a uniform policy)" if k else "", "frozen": "the action std" if continuous else "the policy"},
        )

    @classmethod
    def bad_example(cls):
        # a 7-action policy that never leaves its uniform initialisation (entropy ln 7)
        return Example(series={"policy/entropy": flat(120, math.log(7))}, framework="unknown")

    @classmethod
    def good_example(cls):
        return Example(series={"policy/entropy": saturating(120, 1.9, 1.2, sd=0.01, seed=64)}, framework="unknown")
