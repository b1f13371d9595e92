"""What a run lacks by design: a critic (GRPO, RLOO, REINFORCE++) or a KL term (beta = 0).

A rule that needs a value metric cannot run on a critic-free run, and a KL rule cannot run when
the KL coefficient is 0; neither is a gap in the log.  :func:`by_design` says so once per run
(``Run.by_design``, family -> why), so the report writes "critic-free" and "KL off by
configuration" instead of listing every value and KL rule as missing a metric: GRPO, RLOO and
REINFORCE++ train no critic, and a KL term is off by default in TRL GRPO and veRL
(docs/sources.md#missing-kl-by-design).

* **critic-free**: no value metric is logged and either the config names a critic-free
  advantage estimator (veRL ``algorithm.adv_estimator``, OpenRLHF ``--advantage_estimator`` /
  ``algo.advantage.estimator``: everything but ``gae``), or the framework has no critic at all
  (TRL's GRPOTrainer, RLOOTrainer, OnlineDPOTrainer and offline DPOTrainer family; Tinker cookbook and prime-rl train with
  group baselines).  A run that logs a value metric has a critic, whatever its name says.
* **no KL series**: an offline preference trainer (DPO and its kin, ``trl_dpo``) samples nothing
  and puts the reference model inside its loss; its implicit rewards are the log-ratios.
* **KL off**: no ``kl/ref`` is logged and the config's KL coefficient is 0 (TRL ``beta``, veRL
  without ``use_kl_loss`` / ``use_kl_in_reward``, ...), or the run is TRL's GRPOTrainer without a
  ``beta`` in its config: it logs ``kl`` whenever ``beta != 0`` (grpo_trainer.py, TRL 1.16:
  ``if self.beta != 0.0: self._metrics[mode]["kl"]...``), so a GRPO log without ``kl`` ran with
  beta = 0, its default.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..detect.order_stats import median
from .frameworks import PREFERENCE_FRAMEWORKS
from .hparams import scalar_float

if TYPE_CHECKING:
    from ..run import Run

# Canonical metrics only a critic (value model) produces.
VALUE_METRICS = frozenset({"loss/value", "value/clipfrac", "value/explained_var", "value/mean", "value/error", "grad/norm_critic", "opt/lr_critic"})
# Canonical metrics only a KL-to-reference term produces.
KL_METRICS = frozenset({"kl/ref", "kl/coef", "reward/kl_penalty"})
FAMILY_METRICS = {"critic": VALUE_METRICS, "kl": KL_METRICS}
# What the rules of a family are called in a report ("critic-free (...): the value-function rules do not apply").
FAMILY_RULES = {"critic": "the value-function rules", "kl": "the KL rules"}

# veRL core_algos.AdvantageEstimator and OpenRLHF's --advantage_estimator choices without a critic.
CRITIC_FREE_ESTIMATORS = frozenset(
    {
        "grpo",
        "grpo_passk",
        "grpo_vectorized",
        "rloo",
        "rloo_vectorized",
        "reinforce",
        "reinforce_baseline",
        "reinforce_plus_plus",
        "reinforce_plus_plus_baseline",
        "remax",
        "opo",
        "gpg",
        "group_norm",
        "dr_grpo",
        "optimal_token_baseline",
        "tir_optimal_token_baseline",
    }
)
CRITIC_FREE_FRAMEWORKS = {
    "trl_grpo": "TRL GRPOTrainer",
    "trl_async_grpo": "TRL AsyncGRPOTrainer",
    "trl_rloo": "TRL RLOOTrainer",
    "trl_online_dpo": "TRL OnlineDPOTrainer",
    "trl_dpo": "TRL's DPOTrainer family",
    "other": "Tinker cookbook / prime-rl (group-baseline policy gradient)",
}


# Why an offline preference trainer logs no KL: the reference model is inside its loss.
OFFLINE_PREFERENCE = (
    "offline preference optimisation: the reference model enters through the loss's log-ratios, "
    "logged as the implicit rewards rewards/*, and nothing is sampled"
)


def by_design(framework: str, config: dict[str, Any], has: Callable[[str], bool], proven: bool = True) -> dict[str, str]:
    """``{"critic": why, "kl": why}`` for what the run lacks by design (either key may be absent).

    ``proven``: the log proves the framework (``Run.framework_proof``).  A framework guessed from
    metric names alone is said as "looks like", and its defaults are not assumed: a TRL-named
    log without ``beta`` in its config is not said to have run with TRL's default beta = 0."""
    out: dict[str, str] = {}
    if not any(has(m) for m in VALUE_METRICS):
        est = config.get("adv_estimator")
        est = est.lower() if isinstance(est, str) else None
        if est in CRITIC_FREE_ESTIMATORS:
            out["critic"] = f"critic-free (advantage estimator {est}, no value function)"
        elif est is None and framework in CRITIC_FREE_FRAMEWORKS:
            name = CRITIC_FREE_FRAMEWORKS[framework]
            out["critic"] = (
                f"critic-free ({name} has no value function)"
                if proven
                else f"critic-free (looks like {name} from its metric names, which has no value function; no value metric is logged)"
            )
    if not has("kl/ref"):
        beta = scalar_float(config.get("kl_coef"))
        if framework in PREFERENCE_FRAMEWORKS:
            out["kl"] = "no KL series by design (" + ("" if proven else "looks like ") + OFFLINE_PREFERENCE + ")"
        elif beta == 0:
            out["kl"] = "KL off by configuration (KL coefficient 0: no KL is computed)"
        elif beta is None and framework == "trl_grpo" and proven:
            out["kl"] = "KL off by configuration (GRPOTrainer logs kl whenever beta != 0: this run used beta = 0, TRL's default)"
    return out


def family_of(group: str) -> str | None:
    """The by-design family a rule's missing requirement (``"a|b"`` = any of) belongs to."""
    metrics = group.split("|")
    for family, members in FAMILY_METRICS.items():
        if all(m in members for m in metrics):
            return family
    return None


def kl_coefficient(run: "Run") -> tuple[float | None, str]:
    """The run's KL coefficient and where it was read: ``"config"`` (the canonical ``kl_coef``),
    ``"logged"`` (the median of its finite ``kl/coef`` points, an adaptive controller's value),
    or ``(None, "")``.  One reading for the rules (PD101's "no penalty pulls the KL back") and
    the diagnosis (``kl-coef-too-low``)."""
    beta = scalar_float(run.config.get("kl_coef"))
    if beta is not None:
        return beta, "config"
    if run.frame.has("kl/coef"):
        c = run.frame.arrays("kl/coef")[1]
        c = c[np.isfinite(c)]
        if len(c):
            return float(median(c)), "logged"
    return None, ""
