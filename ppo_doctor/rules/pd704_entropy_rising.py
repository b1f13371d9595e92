"""PD704 entropy-rising."""

from __future__ import annotations

from typing import Iterator

from ..detect import early_late
from ..results import Finding
from ..view import EntropyView
from .base import Example, RuleContext
from ..view.clip_higher import LARGE_ENTROPY_BONUS, clip_bounds
from .examples import flat, ramp, saturating
from .messages import fmt_num
from .reward_progress import COLLAPSE_DEFAULTS, collapsed, reward_arrays, reward_suffers
from .shapes import Stretch, SustainedRule


class EntropyRising(SustainedRule[EntropyView]):
    """Policy entropy climbs far above its early level while the reward does not improve.

    **What it detects.** The policy entropy (``policy/entropy``, per token; see PD701 for the
    units and signs it is read in) whose late median (last 10 %) is at least ``rise`` (50 %) and
    ``min_abs`` (0.1 nats) above its early median (first 10 %), with a sustained stretch above
    that level; only for an entropy that starts above 0 (a discrete or token distribution: the
    differential entropy of continuous actions has no scale a share can be taken of).

    The rise is judged by its outcome, the reward (``reward_progress.reward_suffers``):

    * the reward is stuck (its last window not clearly above its first points) or fell from its
      best for good: a **warning**, an **error** when it fell (reward-collapse's test): the
      policy is dissolving into noise and the task is lost with it;
    * the reward rose and kept its gain: an **info** note (a policy that explores more while it
      learns, as clip-higher and entropy bonuses intend);
    * no reward logged: an **info** note with the numbers.

    Only on an LLM run (``RunView.is_llm_rl``: a known LLM framework, LLM-only metrics or text
    samples), where the entropy is that of one token distribution.  Elsewhere the rise is an
    info note: a home-made or classic-RL log's "entropy" is often a sum over agents or action
    dimensions that grows when a curriculum adds them (a multi-agent Pac-Man run of the real-run
    set rises from 8 to 14 nats at each new maze stage while its return falls with the harder
    stage), which is no policy dissolving.

    The finding names the run's clip-higher (TRL ``epsilon_high``, veRL ``clip_ratio_high``) and
    entropy bonus (``entropy_coef``) when its config has them, and ranks those causes by them.

    **Why it matters.** Entropy that climbs for the whole run while the reward stalls is the
    signature of updates that push probability onto unlikely tokens faster than the reward can
    pay for them: too high a learning rate with a wide upper clip bound (DAPO's clip-higher), an
    entropy bonus that outweighs the advantages, or a tokenizer / chat-template mismatch that
    makes the trained tokens unlike the sampled ones.  Samples turn into random tokens; the
    question "what causes the unexpected increase in entropy during training?" (verl-project/verl
    #2738) is this rule's.

    **Known false positives.** A run that starts from a near-deterministic policy on purpose and
    is meant to explore (an entropy bonus switched on mid-run): check the reward after the run.

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan
    the finding is an info note saying what is watched, until ``fair_share`` of
    the plan is behind the run (:mod:`ppo_doctor.standing`).

    **Source.** verl-project/verl#2738 (entropy rising during GRPO); DAPO (Yu et al. 2025,
    arXiv:2503.14476) section 3.1 clip-higher, ``epsilon_high`` 0.28; TRL ``GRPOConfig.epsilon_high``
    and ``entropy_coef`` (grpo_config.py); Cui et al. 2025, "The Entropy Mechanism of Reinforcement
    Learning for Reasoning Language Models" (arXiv:2505.22617: a rare token with a high advantage raises the entropy) (docs/sources.md#entropy-rising).
    """

    code = "PD704"
    name = "entropy-rising"
    symptom = "unstable_updates"
    severity = "warning"
    # judged by the rule itself on the reward: a warning needs it stuck or falling (an outcome)
    basis = "outcome"
    evidence = "trend"
    requires = (("policy/entropy", "loss/entropy"), ("reward/score", "reward/total"))
    params = {"rise": 0.5, "min_abs": 0.1, "min_points": 20}
    causes = {"lr-too-high": 0.7, "clip-higher-too-wide": 0.5, "entropy-bonus-too-high": 0.4, "implementation-bug": 0.2}
    message = "policy entropy rose {change:.0%} ({first:num} -> {late:num}) {since} while {outcome}"

    direction = "up"

    def points(self, ctx: RuleContext) -> EntropyView | None:
        return ctx.view.entropy

    def level(self, ctx: RuleContext, x: EntropyView) -> float | None:
        if ctx.view.continuous_actions:
            return None
        first, late, _ = early_late(x.values)
        if not first > 0:
            return None
        level = max(first * (1.0 + ctx.params["rise"]), first + ctx.params["min_abs"])
        return level if late >= level else None

    def report(self, ctx: RuleContext, st: Stretch[EntropyView]) -> Iterator[Finding]:
        first, late, _ = early_late(st.points.values)
        suffers = reward_suffers(ctx, ctx.params["min_points"])
        if suffers is None:
            severity, outcome = "info", "no reward is logged to judge it by"
        else:
            bad, outcome = suffers.bad, suffers.text
            severity = ("error" if self._fell(ctx) else "warning") if bad else "info"
            if bad and not ctx.view.is_llm_rl:
                severity, outcome = "info", f"{outcome} (not judged: nothing marks this run as LLM RL, see the rule's documentation)"
        config, causes = self._config(ctx)
        evidence = ([st.points.note] if st.points.note else []) + config
        yield self.incident(
            ctx,
            st,
            observed={"first": first, "late": late, "change": late / first - 1.0, "peak": st.worst.peak_value},
            end_step=int(st.points.steps[-1]),
            severity=severity,
            evidence=evidence,
            causes=causes,
            fmt={"outcome": outcome},
        )

    @staticmethod
    def _fell(ctx: RuleContext) -> bool:
        """Whether the reward fell far from its best for good (reward-collapse's test and settings)."""
        reward = reward_arrays(ctx, 1)
        if reward is None:
            return False
        rc = ctx.params_of("reward-collapse", COLLAPSE_DEFAULTS)
        return collapsed(ctx, reward[0], rc["min_gain"], rc["drop"], rc["min_points"]) is not None

    def _config(self, ctx: RuleContext) -> tuple[list[str], dict[str, float]]:
        """Evidence from the run's config and the causes weighed by it: a clip-higher wider than the
        lower bound and a positive entropy bonus lead; a bonus of 0 cannot be the cause."""
        causes = dict(self.causes)
        evidence: list[str] = []
        bounds = clip_bounds(ctx.run)
        if bounds is not None and bounds.high > bounds.low:
            evidence.append(f"clip-higher: {bounds.key} = {fmt_num(bounds.high)} above the lower bound {fmt_num(bounds.low)}")
            causes["clip-higher-too-wide"] = 0.9
        coef = ctx.view.cfg_float("entropy_coef")
        if coef is not None and coef > LARGE_ENTROPY_BONUS:
            # a bonus this large raises the entropy by itself, whatever the learning rate
            evidence.append(f"entropy bonus: entropy_coef = {fmt_num(coef)}")
            causes["entropy-bonus-too-high"] = 1.0
            causes["lr-too-high"] = 0.4
        elif coef is not None and coef > 0:
            evidence.append(f"entropy bonus: entropy_coef = {fmt_num(coef)}")
            causes["entropy-bonus-too-high"] = 0.8
        elif coef == 0:
            causes.pop("entropy-bonus-too-high")
        return evidence, causes

    @classmethod
    def bad_example(cls):
        # a wide clip-higher at a high learning rate: entropy 0.6 -> 1.8 nats while the reward stays at 0.2
        return Example(
            series={"policy/entropy": ramp(120, 0.6, 1.8, sd=0.03, seed=61, begin=30), "reward/score": flat(120, 0.2, 0.03, seed=62)},
            config={"epsilon_high": 0.5, "learning_rate": 1e-4},
            framework="trl_grpo",
        )

    @classmethod
    def good_example(cls):
        # DAPO's clip-higher keeps the policy exploring: entropy eases up by a sixth while the reward rises
        return Example(
            series={"policy/entropy": ramp(120, 0.6, 0.7, sd=0.03, seed=63, begin=30), "reward/score": saturating(120, 0.1, 0.8, sd=0.03, seed=64)},
            config={"epsilon_high": 0.28},
            framework="trl_grpo",
        )

