"""Fault scenarios: each changes a few fields of :class:`~ppo_doctor.reference.ppo.Args` to
inject one fault from the guides, and states what a correct diagnosis must find.

``expected`` symptoms must be detected (recall); ``allowed`` ones are plausible side effects
that do not count as false positives (a KL blow-up often collapses entropy too); anything else
detected is a false positive.  ``top_cause`` is the cause id the diagnosis must rank first.
Healthy scenarios expect no symptom and no cause.

When a scenario does not show its fault, the scenario is changed, never its expectation; one
that the tiny loop cannot make show its fault by any realistic mechanism stays available to
``simulate`` with ``scored=False`` and ``validate`` leaves it out of the scorecard unless it is
named (``-s NAME``), with the reason in its entry.

``suite`` says which trainer runs it: ``"ppo"`` (the reference loop, these scenarios) or
``"trl"`` (TRL's own GRPOTrainer, ``trl_scenarios.py``); ``changes`` are fields of that
suite's arguments (:class:`~ppo_doctor.reference.ppo.Args` or
:class:`~ppo_doctor.reference.trl_suite.GrpoArgs`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..results import SYMPTOMS


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    changes: dict[str, Any] = field(default_factory=dict)
    expected: frozenset[str] = frozenset()
    allowed: frozenset[str] = frozenset()
    top_cause: str | None = None
    suite: str = "ppo"
    scored: bool = True

    def __post_init__(self) -> None:
        bad = (self.expected | self.allowed) - set(SYMPTOMS)
        if bad:
            raise ValueError(f"scenario {self.name}: unknown symptom(s) {sorted(bad)}")

    @property
    def healthy(self) -> bool:
        return not self.expected

    def args(self, **overrides: Any) -> Any:
        """The suite's arguments for this scenario (``overrides`` win, e.g. steps, seed)."""
        fields = {"exp_name": self.name, **self.changes, **overrides}
        if self.suite == "trl":
            from .trl_suite import GrpoArgs

            return GrpoArgs(**fields)
        from .ppo import Args

        return Args(**fields)

    def with_seed(self, seed: int) -> "Scenario":
        return replace(self, name=f"{self.name}-s{seed}", changes={**self.changes, "seed": seed})


def _s(*names: str) -> frozenset[str]:
    return frozenset(names)


# Side effects that a run whose policy drifts far from the reference commonly shows as well.
_DRIFT = _s("entropy_collapse", "reward_hacking", "oscillation", "reward_collapse")

SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario("healthy-s1", "default settings, seed 1", {"seed": 1}),
        Scenario("healthy-s2", "default settings, seed 2", {"seed": 2}),
        Scenario("healthy-s3", "default settings, seed 3", {"seed": 3}),
        Scenario(
            "kl-coef-zero",
            "no KL penalty: nothing holds the policy near the reference",
            {"kl_coef": 0.0},
            expected=_s("kl_blowup"),
            allowed=_DRIFT,
            top_cause="kl-coef-too-low",
        ),
        Scenario(
            "lr-x100",
            "learning rate 100x the default (gradient clipping still on)",
            {"learning_rate": 1e-2},
            expected=_s("kl_blowup"),
            allowed=_DRIFT | _s("gradient_explosion", "reward_spike", "value_instability", "nan", "stagnation", "unstable_updates"),
            top_cause="lr-too-high",
        ),
        Scenario(
            "too-many-ppo-epochs",
            "24 PPO epochs per batch instead of 4 (60 steps by default, the run is 6x slower per step): "
            "each batch moves the policy far, approx-KL and clip fraction soar",
            {"num_ppo_epochs": 24, "steps": 60},
            # the update itself is too large (ratio, clip fraction, approx KL to the old policy)
            expected=_s("unstable_updates"),
            allowed=_DRIFT | _s("value_instability", "kl_blowup"),
            top_cause="too-many-ppo-epochs",
        ),
        Scenario(
            "topk-sampling",
            "responses sampled with top_k=2 while the KL uses the full distribution, under an "
            "entropy bonus (ent_coef 0.2) and TRL legacy's KL coefficient 0.2: the bonus spreads "
            "probability over tokens top-k never samples, so every sampled token looks less likely "
            "than under the reference, the logged k1 KL goes and stays negative and the penalty "
            "pays a bonus; the same settings with top_k=0 keep the KL positive",
            # Top-k alone does not do it here (top_k 1-3, beta 0.05-1, shared or separate critic:
            # second-half median k1 between +0.2 and +4 nats): PPO moves the logit of an unsampled
            # token j only through -pi_j * E[A | s], which pulls the tail back as soon as the KL
            # turns negative, so the tail needs a force of its own.  This 57-token toy does not
            # reproduce whatever moves an LLM's 50k-token tail; the entropy bonus stands in.  Measured
            # second-half median k1 per sequence: -2.2 / -2.3 / -3.1 nats for seeds 1-3, and
            # +1.1 (never below 0) for seed 1 with top_k=0 and everything else equal.
            {"top_k": 2, "ent_coef": 0.2, "kl_coef": 0.2},
            expected=_s("negative_kl"),
            # as in min-length: the negative per-token KL is paid out as a noisy bonus, so the
            # returns become hard to predict and the critic's loss rises (explained variance ~0),
            # and the policy can trade score for that bonus (seed 2: the score climbed to 0.97,
            # then fell to 0.75 once the KL turned negative)
            allowed=_s("reward_hacking", "value_instability", "reward_collapse"),
            top_cause="generation-settings",
        ),
        Scenario(
            "min-length",
            "EOS forbidden before 15 of at most 16 new tokens, with TRL legacy's value head on the "
            "policy: the policy piles probability on the EOS it is never allowed to sample, so every "
            "forced token looks less likely than under the reference",
            {"min_new_tokens": 15, "response_length": 16, "value_model": "shared"},
            expected=_s("negative_kl"),
            allowed=_s("reward_hacking", "entropy_collapse", "value_instability", "reward_collapse"),
            top_cause="generation-settings",
        ),
        Scenario(
            "reward-unnormalized-x100",
            "scores multiplied by 100, no normalisation, whitening or clipping",
            {"reward_scale": 100.0},
            expected=_s("value_instability"),
            # scores x100 make the KL penalty (beta 0.05 per nat) 100x weaker against the score, so
            # the policy drifts from the reference as the reward rises: a KL blow-up and PD202's
            # reward-with-KL pattern follow from the fault itself
            allowed=_s("reward_spike", "oscillation", "gradient_explosion", "kl_blowup", "reward_hacking"),
            top_cause="reward-not-normalized",
        ),
        # Not scored: no realistic setting of this loop makes a too-high critic
        # learning rate harm the run.  The critic reaches the policy only through whitened GAE
        # advantages, and on 1-20-token responses they rank responses by their score with almost
        # any critic, so the reward rises in every variant tried (seed 1, 120 updates; score =
        # mean of the last 12 updates, EV = median explained variance; healthy: 0.94, EV 0.31):
        # critic LR 0.03 / 0.3 -> 0.94 / 0.93 (EV 0.03 / 0.01: the critic dies after a value-loss
        # spike of 19.5 at step 1); 0.03 / 0.3 with value clipping off -> 0.94 / 0.92; 1.0 -> 0.96;
        # 3.0 -> NaN weights at step 3 (nan, not value trouble); TRL legacy's value head on the
        # policy -> 0.96 (EV -1..-80).  With lam 0.6 (an effective GAE horizon of 2.5 tokens, as
        # lam 0.95 is 20 tokens of a 200-token LLM response; healthy 0.94, EV 0.44): 0.01 / 0.03 /
        # 0.1 / 0.3 -> 0.94 / 0.73 / 0.89 / 0.82 (EV 0.66 / 0.00 / 0.15 / 0.01), and 0.3 with the
        # shared head -> 0.71 against its own healthy 0.89 (EV -1.7, PD403 info: the reward still
        # rises 0.0 -> 0.71, first and last 12 updates).  A weak critic while the reward rises is a note under the verdict
        # contract, so the label value_instability (a warning) is not what these runs show.
        Scenario(
            "value-lr-high",
            "value-model learning rate 3000x the policy's: the critic blows up, then stays dead "
            "(not scored: the reward rises anyway in this loop)",
            {"critic_learning_rate": 0.3},
            expected=_s("value_instability"),
            allowed=_s("oscillation", "gradient_explosion"),
            top_cause="value-lr-mistuned",
            scored=False,
        ),
        Scenario(
            "policy-not-from-sft",
            "PPO starts from a randomly initialised policy; the reference is the SFT model",
            {"policy_init": "random"},
            expected=_s("kl_blowup"),
            allowed=_DRIFT | _s("value_instability", "unstable_updates"),
            top_cause="policy-not-from-sft",
        ),
        Scenario(
            "hackable-reward",
            "the reward pays for every '!': the policy learns to spam it",
            {"scorer": "hackable"},
            expected=_s("reward_hacking", "kl_blowup"),
            allowed=_s("entropy_collapse", "reward_spike"),
            top_cause="reward-model-flawed",
        ),
        Scenario(
            "lr-tiny",
            "learning rate 1/1000 of the default: nothing is learned (the critic shares it)",
            {"learning_rate": 1e-7},
            expected=_s("stagnation"),
            # the value model learns nothing either: its loss stays at the returns' variance
            allowed=_s("value_instability"),
            top_cause="lr-too-low",
        ),
        # An unclipped outlier: the scorer returns 1000x its usual scores for one batch (a reward
        # model meeting out-of-distribution inputs) while score normalisation, score clipping and
        # gradient clipping are all off.  The critic's squared error on that batch makes the
        # pre-clip gradient norm jump by orders of magnitude, and without clipping the whole
        # gradient enters Adam's second moment, which then damps the critic's steps for hundreds
        # of updates.  (The earlier no-grad-clip-high-lr scenario was dropped: in this Adam loop
        # a learning rate 30x the default collapses the policy with clipping on as much as
        # without, and its norm peaked at 2-5x its early level: no explosion to find.)
        Scenario(
            "no-grad-clip-reward-outlier",
            "one batch of scores 1000x too large, with score normalisation, score clipping and "
            "gradient clipping off",
            {"max_grad_norm": None, "reward_outlier_steps": (60,), "reward_outlier_scale": 1000.0},
            expected=_s("gradient_explosion"),
            allowed=_s("reward_spike", "value_instability", "oscillation", "stagnation", "reward_collapse"),
            top_cause="no-grad-clipping",
        ),
    )
}

# ``healthy`` is an alias of the first seed; ``--seed`` picks another.
ALIASES = {"healthy": "healthy-s1"}


def get(name: str) -> Scenario:
    """The scenario called ``name`` (or an alias); raises KeyError with the choices."""
    key = ALIASES.get(name, name)
    if key not in SCENARIOS:
        raise KeyError(f"unknown scenario {name!r}; choose from {', '.join(names())}")
    return SCENARIOS[key]


def names() -> list[str]:
    return list(ALIASES) + list(SCENARIOS)
