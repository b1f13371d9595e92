"""One read-only view of a run: what rules and diagnosis know about it, read one way.

A rule (through :class:`ppo_doctor.rules.base.RuleContext`) and the cause evidence of
:mod:`ppo_doctor.diagnose.evidence` both ask the same questions of a run: a config value as a
number, a flag or a name; what the run trains (classic RL or an LLM) and with which framework;
what it lacks by design (a critic, a KL term); a metric's finite points with its sign
convention undone; the KL and the entropy in the units they are judged in; whether the actions
are continuous; when the returns were constant; where the run stands against its plan.  :class:`RunView` answers each once, with one reader per kind of value, so a
fix to how a setting or a series is read reaches every rule and every cause together.

The view never changes the run; it caches what it computes, so build it once per analysis (the
engine and the diagnosis each hold one per run).
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from ..canonical.design import CRITIC_FREE_FRAMEWORKS, VALUE_METRICS, kl_coefficient
from ..canonical.frameworks import GRPO_FRAMEWORKS, Domain, domain
from ..canonical.hparams import parse_scalar, scalar_float
from ..detect import median
from ..standing import Standing
from .actions import ActionSpace, action_space
from .entropy import EntropyView, entropy_view
from .returns import ReturnsView, returns_view
from .kl import SEQ_KL_BAND, TOKEN_KL_BAND, KLView, first_kl, kl_view, per_token_kl
from .placeholder import placeholders
from .series import finite_series, metric_sign

if TYPE_CHECKING:
    from ..run import Run

# Config keys that only a critic's training reads (TRL PPOConfig ``vf_coef`` / ``cliprange_value``,
# OpenRLHF ``--critic_learning_rate`` canonicalised as ``value_lr``).
CRITIC_SETTINGS = ("value_lr", "vf_coef", "cliprange_value")


class RunView:
    """Read-only questions about one run, each answered one way (module docstring)."""

    def __init__(self, run: Run):
        self.run = run

    # -- what the run is ---------------------------------------------------------------
    @cached_property
    def framework(self) -> str:
        """The framework id in lower case (``ppo_doctor.canonical.frameworks.FRAMEWORKS``), "unknown" if unset."""
        return (self.run.framework or "unknown").lower()

    @cached_property
    def domain(self) -> Domain:
        """``"classic"``, ``"llm"`` or ``"unknown"`` (:func:`ppo_doctor.canonical.frameworks.domain`)."""
        return domain(self.run.framework, self.run.frame.has, texts=self.run.generates_text)

    @property
    def is_classic_rl(self) -> bool:
        """A classic-RL run (SB3/CleanRL/baselines): rules about a reference model do not apply."""
        return self.domain == "classic"

    @property
    def is_llm_rl(self) -> bool:
        """An LLM RL run (RLHF PPO, GRPO, ...): a known LLM framework, LLM-only metrics, or texts."""
        return self.domain == "llm"

    @property
    def is_grpo(self) -> bool:
        """A GRPO run, whose KL term is off by default (beta = 0 in TRL since 0.19)."""
        return self.framework in GRPO_FRAMEWORKS

    @property
    def critic_free(self) -> bool:
        return self.run.critic_free

    @property
    def kl_off(self) -> bool:
        return self.run.kl_off

    def has_critic(self) -> bool | None:
        """True when a value metric or a critic's setting is there, False when the run is
        critic-free by design or by framework (:mod:`ppo_doctor.canonical.design`), None when nothing tells."""
        if any(self.has(m) for m in VALUE_METRICS) or any(self.has_cfg(k) for k in CRITIC_SETTINGS):
            return True
        if self.run.critic_free or self.framework in CRITIC_FREE_FRAMEWORKS:
            return False
        return None

    @cached_property
    def standing(self) -> Standing:
        """Where the run stands (``Run.standing``), read once for every rule."""
        return self.run.standing

    def planned_points(self, n: int) -> int:
        """The points a series of ``n`` will have when the run reaches its plan (``n`` on a
        finished run or one whose plan is unknown): "sustained over 5 % of the run" means 5 % of
        the planned run, so that the first few points of a live prefix are not a sustained stretch."""
        share = self.standing.share
        if share is None or share >= 1.0 or share <= 0.0:
            return n
        return int(np.ceil(n / share))

    # -- its configuration -------------------------------------------------------------
    def has_cfg(self, key: str) -> bool:
        return key in self.run.config

    def cfg(self, *keys: str) -> Any:
        """The first of ``keys`` set (not None) in the canonical config, else None."""
        for k in keys:
            v = self.run.config.get(k)
            if v is not None:
                return v
        return None

    def cfg_float(self, *keys: str) -> float | None:
        """A numeric setting (:func:`ppo_doctor.canonical.hparams.scalar_float`: ``"1e-5"`` is parsed,
        booleans and NaN are not numbers)."""
        return scalar_float(self.cfg(*keys))

    def cfg_int(self, *keys: str) -> int | None:
        """A setting as an integer (rounded), or None."""
        f = self.cfg_float(*keys)
        return None if f is None else int(round(f))

    def cfg_bool(self, *keys: str) -> bool | None:
        """A flag: True/False, also as the strings YAML and MLflow leave ("true", "off"), else None."""
        v = parse_scalar(self.cfg(*keys))
        return v if isinstance(v, bool) else None

    def cfg_str(self, *keys: str) -> str | None:
        """A setting that is a non-empty string, else None."""
        v = self.cfg(*keys)
        return v if isinstance(v, str) and v else None

    def kl_coefficient(self) -> tuple[float | None, str]:
        """The KL coefficient and where it was read (:func:`ppo_doctor.canonical.design.kl_coefficient`)."""
        return kl_coefficient(self.run)

    # -- its series --------------------------------------------------------------------
    @cached_property
    def placeholders(self) -> dict[str, float]:
        """Metrics written as one exact value on every point while the reward moves: not
        measured (:mod:`.placeholder`), so :meth:`has` says they are absent."""
        return placeholders(self.run)

    def has(self, metric: str) -> bool:
        return self.run.frame.has(metric) and metric not in self.placeholders

    def arrays(self, metric: str) -> tuple[np.ndarray, np.ndarray]:
        """Steps and raw values of ``metric`` (NaN/Inf kept)."""
        return self.run.frame.arrays(metric)

    def finite(self, metric: str, signed: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Steps and finite values of ``metric``, sign convention undone when ``signed``."""
        return finite_series(self.run, metric, signed)

    def values(self, metric: str) -> np.ndarray:
        """The finite values of ``metric`` as logged (empty when absent)."""
        if not self.has(metric):
            return np.empty(0)
        return self.finite(metric, signed=False)[1]

    def median(self, metric: str) -> float | None:
        v = self.values(metric)
        return float(median(v)) if len(v) else None

    def informative_median(self, metric: str) -> float | None:
        """The median, or None when the metric is exactly 0 throughout: a clip fraction or an
        old-vs-new KL that never moves is what one update per batch logs (ratio 1 by
        construction, e.g. GRPO's default ``num_iterations=1``), not a measured small update."""
        vals = self.values(metric)
        if not len(vals) or not np.any(vals):
            return None
        return float(median(vals))

    def first_present(self, *metrics: str) -> str | None:
        return next((m for m in metrics if self.has(m)), None)

    def raw(self, metric: str) -> str:
        """The name the run logged ``metric`` under."""
        info = self.run.metric_info.get(metric)
        return info.raw_tag if info else metric

    @cached_property
    def kl(self) -> KLView | None:
        """``kl/ref`` in judged units with the default bands (:func:`.kl.kl_view`)."""
        return kl_view(self)

    def kl_in(self, seq_band: float, token_band: float) -> KLView | None:
        """``kl/ref`` judged against the given bands (a rule's own ``seq_band``/``token_band``)."""
        if (seq_band, token_band) == (SEQ_KL_BAND, TOKEN_KL_BAND):
            return self.kl
        return kl_view(self, seq_band, token_band)

    @cached_property
    def entropy(self) -> EntropyView | None:
        """Policy entropy, sign undone and per token where convertible (:func:`.entropy.entropy_view`)."""
        return entropy_view(self)

    @cached_property
    def action_space(self) -> ActionSpace | None:
        """Continuous or discrete actions and what says so (:func:`.actions.action_space`), None when nothing tells."""
        return action_space(self)

    @cached_property
    def returns(self) -> ReturnsView:
        """When the critic's returns were constant, where rare new returns arrived, whether the
        reward is a rolling mean of episodes (:mod:`.returns`)."""
        return returns_view(self)

    @property
    def continuous_actions(self) -> bool:
        return self.action_space is not None and self.action_space.kind == "continuous"


__all__ = [
    "ActionSpace",
    "EntropyView",
    "KLView",
    "ReturnsView",
    "RunView",
    "SEQ_KL_BAND",
    "TOKEN_KL_BAND",
    "first_kl",
    "metric_sign",
    "per_token_kl",
]
