"""The causes of a value that could not be computed, and when the reward function is to blame.

A NaN or Inf in a loss or a gradient is a bug in the loss or the masking first, then steps so
large that the numbers overflow (the guides' "NaN" section; veRL issues 751 and 789).  A mean
reward that turns non-finite before anything the update computes does is the reward function's
output, not the optimiser's.  Shared by PD601 and PD604, which see the same failure two ways.
"""

from __future__ import annotations

import numpy as np

from .base import RuleContext

NAN_CAUSES = {"implementation-bug": 0.7, "lr-too-high": 0.5, "reward-not-normalized": 0.3, "no-grad-clipping": 0.3}
# A mean reward that turns non-finite (or stops being logged: TRL's null) before anything the
# update computes does: the reward function's output, not the optimiser (catalog
# ``reward-function-nan``); an update that blew up reaches the loss or the gradients first.
REWARD_NAN_CAUSES = {"reward-function-nan": 1.0, "implementation-bug": 0.4}
REWARD_METRICS = ("reward/score", "reward/total")


# What the update computes from the reward: one of them broken before the reward means the update
# broke first (a NaN model still samples, and its samples are scored).
UPDATE_METRICS = ("loss/policy", "loss/total", "loss/value", "grad/norm", "kl/ref", "kl/old", "policy/entropy")


def reward_nan_causes(ctx: RuleContext, metric: str, first_bad: int, causes: dict[str, float]) -> tuple[dict[str, float], list[str]]:
    """``(causes, evidence)`` for a metric that turned non-finite (or stopped) at ``first_bad``:
    :data:`REWARD_NAN_CAUSES` with a sentence saying why when it is the mean reward and nothing the
    update computes broke earlier, else ``causes`` unchanged."""
    if metric not in REWARD_METRICS and metric != "reward/std":
        return causes, []
    for m in UPDATE_METRICS:
        if ctx.has(m):
            s, v = ctx.arrays(m)
            bad = s[~np.isfinite(v)]
            if len(bad) and int(bad[0]) < first_bad:
                return causes, []
    return dict(REWARD_NAN_CAUSES), [
        f"the reward broke at step {first_bad} before any loss, KL or gradient did: the reward function "
        "returned NaN or nothing (TRL logs null, and nothing to TensorBoard, for a reward that is NaN for every sample)"
    ]
