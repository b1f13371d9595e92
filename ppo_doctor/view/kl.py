"""The reference KL in the units it is judged in, with the healthy band of its reduction.

TRL documents ``objective/kl`` as a sum over the response tokens and asks it to stay within
0-10 nats (TRL docs, "PPO Trainer" / "Training FAQ": "the KL should stay positive and below
about 10"); a token-mean KL (OpenRLHF, veRL) is judged against a per-token band of 0.3 nats,
which is those 10 nats over TRL's recommended 32 new tokens (10/32 = 0.31).  trlx logs the
square root of its k3 estimate (``trlx/models/modeling_ppo.py``: ``"policy/sqrt_kl"``), squared
here before judging.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..detect import early_late

if TYPE_CHECKING:
    from . import RunView

SEQ_KL_BAND = 10.0
TOKEN_KL_BAND = 0.3


class KLView(NamedTuple):
    """The reference KL as judged: values in nats (trlx's square root undone) and its band."""

    metric: str
    steps: np.ndarray
    values: np.ndarray
    reduction: str  # "seq_sum", "token_mean" or "unknown"
    estimator: str | None  # "k1", "k2", "k3", "full", "abs", None (unknown)
    band: float
    note: str

    @property
    def unit(self) -> str:
        return {"seq_sum": "nats per sequence", "token_mean": "nats per token"}.get(self.reduction, "nats")

    @property
    def can_be_negative(self) -> bool:
        """k1 (and an unknown estimator, which defaults to k1 in TRL/OpenRLHF) can dip below 0."""
        return self.estimator in (None, "k1")


def kl_view(view: RunView, seq_band: float = SEQ_KL_BAND, token_band: float = TOKEN_KL_BAND) -> KLView | None:
    """The ``kl/ref`` series in judged units with the matching healthy band, or None.

    A sequence sum is compared with TRL's 0-10 band, a token mean with the per-token band.
    When the reduction is unknown the sequence band is used (lenient: it never calls a
    healthy per-sequence KL too high) and the note says so.
    """
    if not view.has("kl/ref"):
        return None
    steps, values = view.finite("kl/ref", signed=False)
    info = view.run.metric_info.get("kl/ref")
    estimator = (info.estimator or None) if info else None
    reduction = (info.reduction or "unknown") if info else "unknown"
    notes = []
    if estimator == "sqrt_k3":
        values = np.square(values)
        estimator = "k3"
        notes.append("squared from trlx's square-root KL")
    if reduction == "seq_sum":
        band = seq_band
    elif reduction == "token_mean":
        band = token_band
    else:
        band = seq_band
        notes.append("reduction unknown, judged against the sequence-level band")
    return KLView("kl/ref", steps, values, reduction, estimator, band, "; ".join(notes))


def first_kl(kl: KLView, first_points: int = 3) -> tuple[float, int]:
    """(lowest KL over the first logged points, how many points): above the band means the
    policy and the reference already differed when logging began.

    The lowest, not the median: a policy initialised from the reference logs about 0 at its
    first rollout, and a learning rate large enough to jump far in one update shows 0 first and
    a high KL only after that update (a blow-up, not a wrong initialisation).
    """
    n_first = max(1, min(int(first_points), len(kl.values) // 20 or 1))
    return float(np.min(kl.values[:n_first])), n_first


def per_token_kl(view: RunView, kl: KLView) -> float | None:
    """Late per-token KL when a sequence-summed KL and the response length are both logged."""
    if kl.reduction != "seq_sum" or not view.has("len/response_mean") or len(kl.values) == 0:
        return None
    _, length = view.finite("len/response_mean")
    if len(length) == 0:
        return None
    _, late_len, _ = early_late(length)
    _, late_kl, _ = early_late(kl.values)
    return late_kl / late_len if late_len > 0 else None
