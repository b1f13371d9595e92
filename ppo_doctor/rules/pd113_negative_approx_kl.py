"""PD113 negative-approx-kl."""

from __future__ import annotations

import numpy as np

from ..detect import median
from .base import Example, Rule
from .examples import saturating
from .messages import fmt_num


class NegativeApproxKL(Rule):
    """The approx KL between the rollout policy and the updated policy is negative on nearly every update.

    **What it detects.** ``kl/old`` (SB3/CleanRL ``approx_kl``, veRL ``actor/ppo_kl``, a
    home-made loop's ``kl_divergence``) below ``-tol`` (PD112's float tolerance: 1e-6 of its
    typical magnitude, at least ``abs_tol``) on at least ``share`` (90 %) of at least
    ``min_points`` updates, with its median below ``-tol`` too.

    **Why it matters.** Whatever the estimator, what it estimates (the KL from the rollout
    policy to the updated one) is never negative.  k1, the mean of ``logp_old - logp_new``, is
    unbiased, so its batch means fall below 0 about half of the time when the true KL is near 0
    (GRPO runs of blind sets real21 and real23: 38-47 % of their updates; a TF2 PPO of the
    corpus: 57-68 %) and less often when it is larger; k2 and k3 are never negative.  An
    estimate below 0 on nine updates in ten is not noise: the log-probabilities are subtracted
    the wrong way round (``new - old``), or the old and new log-probabilities belong to
    different samples or actions.  Early stopping on ``target_kl`` never fires on such a
    number, and its magnitude says nothing of how far an update moved the policy.

    **Outcome or sign.** A sign: a logging bug is harmless when the policy learns (an Isaac Gym
    AMP walker in blind set real19 logs -0.03 on 99 % of its epochs while its episodes reach
    the time limit).  It warns when the reward stalls or falls after it
    (:func:`.outcome.judge_sign`), where the same bug may sit in the loss: the ratio
    ``exp(logp_new - logp_old)`` then pushes the policy the wrong way or not at all.

    **Known false positives.** A log that names a different quantity ``kl`` (a KL penalty's
    contribution to a loss, logged with a minus sign).

    **Evidence.** An event: judged on the points so far.

    **Source.** John Schulman, "Approximating KL Divergence" (k1, k2, k3: what each estimator
    can take); the estimator each framework logs (docs/sources.md#kl-estimators); the
    troubleshooting guide: implementation errors in the KL estimate (docs/sources.md#guides).
    """

    code = "PD113"
    name = "negative-approx-kl"
    symptom = "negative_kl"
    severity = "warning"
    basis = "sign"
    watch = "the reward: a sign error in the KL matters if it is also in the loss, which then does not improve the policy"
    requires = ("kl/old",)
    params = {"share": 0.9, "min_points": 20, "abs_tol": 1e-9, "rel_tol": 1e-6}
    causes = {"implementation-bug": 1.0}
    message = (
        "approx KL per update is negative on {negative:.0f} of {points:.0f} updates (median {median:num}, "
        "min {min:num}): a KL is never negative, so old and new log-probabilities are subtracted the wrong way "
        "round or do not belong to the same samples"
    )

    def evaluate(self, ctx):
        p = ctx.params
        kl = ctx.req[0]
        s, v = kl.steps, kl.values
        if len(v) < p["min_points"]:
            return
        tol = max(p["abs_tol"], p["rel_tol"] * float(median(np.abs(v))))
        negative = v < -tol
        share = float(np.mean(negative))
        mid = float(median(v))
        if share < p["share"] or mid >= -tol:
            return
        first = int(s[int(np.argmax(negative))])
        yield self.finding(
            ctx,
            metric=kl.metric,
            observed={"negative": float(negative.sum()), "negative_share": share, "points": float(len(v)), "median": mid, "min": float(np.min(v))},
            start_step=first,
            threshold_step=first,
            peak_step=int(s[int(np.argmin(v))]),
            end_step=int(s[-1]),
            evidence=[f"counted below -{fmt_num(tol)}: values closer to 0 are float rounding (PD112's tolerance)"],
        )

    @classmethod
    def bad_example(cls):
        # new - old instead of old - new: the estimate mirrors a small positive KL below 0
        return Example(series={"kl/old": -saturating(120, 0.1, 0.4, sd=0.03, seed=11), "reward/score": saturating(120, 1.0, 1.0, sd=0.3, seed=12)})

    @classmethod
    def good_example(cls):
        # a k1 estimate of a KL near 0: about half of its batches below 0
        rng = np.random.default_rng(13)
        return Example(series={"kl/old": rng.normal(0.001, 0.004, 120), "reward/score": saturating(120, 0.0, 1.0, sd=0.05, seed=14)})
