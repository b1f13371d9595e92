"""Policy entropy as judged: the sign convention undone, per token where it can be.

SB3 logs ``train/entropy_loss`` = -entropy (``stable_baselines3/ppo/ppo.py``: ``entropy_loss =
-th.mean(entropy)``); TRL's PPOTrainer logs ``objective/entropy`` as a sum over the response
tokens (``trl/trainer/ppo_trainer.py``: ``mean_entropy = (-logprobs).sum(1).mean()``), divided
here by the response length when it is logged, so that a shorter answer is not read as a
collapse.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..detect import align, finite_xy
from .series import metric_sign

if TYPE_CHECKING:
    from . import RunView


class EntropyView(NamedTuple):
    """Policy entropy as judged: sign convention undone, per token when convertible."""

    metric: str
    steps: np.ndarray
    values: np.ndarray  # entropy (sign convention undone), per token when convertible
    note: str


def entropy_view(view: RunView) -> EntropyView | None:
    """Policy entropy: ``policy/entropy``, else SB3-style ``loss/entropy`` (sign applied).

    The mapping records SB3's negation as ``sign=-1``; for an SB3 run without that record the
    sign is assumed.
    """
    metric = view.first_present("policy/entropy", "loss/entropy")
    if metric is None:
        return None
    steps, values = view.arrays(metric)
    sign = metric_sign(view.run, metric)
    info = view.run.metric_info.get(metric)
    if metric == "loss/entropy" and info is None and "sb3" in view.framework:
        sign = -1
    s, v = finite_xy(steps, values * sign)
    notes = ["sign flipped (logged as -entropy)"] if sign == -1 else []
    if info is not None and info.reduction == "seq_sum" and view.has("len/response_mean"):
        ls, lv = view.arrays("len/response_mean")
        common, ia, ib = align(s, ls)
        ok = np.isfinite(lv[ib]) & (lv[ib] > 0)
        if ok.sum() >= max(3, len(s) // 2):
            s, v = common[ok], v[ia][ok] / lv[ib][ok]
            notes.append("divided by response length (logged as a sequence sum)")
    return EntropyView(metric, s, v, "; ".join(notes))
