"""PD304 policy-not-updating."""

from __future__ import annotations

import numpy as np

from ..results import Finding
from .base import Example, Rule, RuleContext
from .examples import flat
from .messages import fmt_num
from .movement import no_movement_evidence


class PolicyNotUpdating(Rule):
    """Clip fraction and approx KL stay at zero although each batch gets several updates.

    **What it detects.** With ``ppo_epochs > 1`` or ``num_mini_batches > 1`` in the config,
    ``policy/clipfrac`` is exactly 0 on at least ``share`` of the steps and/or ``kl/old`` stays
    below ``kl_floor``: after the first minibatch update the ratio should move off 1, so this
    means the optimiser step changes nothing.

    **Configuration-aware (a known trap).** With ``ppo_epochs == 1`` and a single minibatch the
    update is computed with the rollout policy itself, the ratio is exactly 1 and the clip
    fraction is 0 *by construction*: that is not a symptom and the rule stays silent
    (DAPO#11, verl#791: "clip_ratio has no effect").  It also stays silent when the config
    does not say how many updates a batch gets.

    A clip fraction of 0 without an approx KL near 0 counts only when something else shows the
    policy not moving (a KL to the reference under 5 % of its band, near-zero gradients, a
    learning rate under 1e-8; PD301's list): small updates keep every ratio inside the clip
    range, e.g. GRPO's ``num_iterations=2`` at a learning rate of 1e-6, and the config's update
    count is then no reason for stagnation.

    **A frozen policy.** Whatever the config says, approx KL exactly 0 and an entropy that
    never changes over at least ``frozen_points`` (100) updates mean the policy does not move
    between batches either: an error (no learning over the whole run).

    **Why it matters.** A run that never updates its policy cannot learn (stagnation): a
    learning rate of 0, frozen parameters, or a loss that does not reach the policy.

    **Known false positives.** Logs where the clip fraction is not computed (always written as
    0) by the framework.

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan
    the finding is an info note saying what is watched, until ``fair_share``
    of the plan (default 1.0: all of it) is behind the run, past warm-up; a live run with no
    known plan is judged when it ends (:mod:`ppo_doctor.standing`).

    **Source.** BytedTsinghua-SIA/DAPO#11, verl-project/verl#791; TRL/CleanRL clipfrac definitions
    (docs/sources.md#policy-not-updating).
    """

    code = "PD304"
    name = "policy-not-updating"
    symptom = "stagnation"
    severity = "warning"
    basis = "sign"
    watch = "the reward: an update that does not move the policy matters if it does not improve"
    evidence = "trend"
    requires = (("policy/clipfrac", "kl/old"),)
    params = {"share": 0.9, "kl_floor": 1e-9, "min_points": 10, "frozen_points": 100}
    causes = {"lr-too-low": 0.8, "implementation-bug": 0.6}
    message = "{what}{although}: the optimiser step does not change the policy"

    def evaluate(self, ctx):
        p = ctx.params
        frozen = self._frozen(ctx)
        if frozen is not None:
            yield frozen
            return
        epochs = ctx.view.cfg_int("ppo_epochs")
        minibatches = ctx.view.cfg_int("num_mini_batches")
        if epochs is None and minibatches is None:
            return
        updates = max(1, epochs or 1) * max(1, minibatches or 1)
        if updates <= 1:
            return  # ratio == 1 by construction: clipfrac 0 is expected
        what = []
        steps = []
        if ctx.has("policy/clipfrac"):
            s, v = ctx.finite("policy/clipfrac")
            if len(v) >= p["min_points"] and float(np.mean(v == 0)) >= p["share"]:
                what.append(f"clip fraction is 0 on {np.mean(v == 0):.0%} of steps")
                steps.append(s)
        if ctx.has("kl/old"):
            s, v = ctx.finite("kl/old")
            if len(v) >= p["min_points"] and float(np.mean(np.abs(v) < p["kl_floor"])) >= p["share"]:
                what.append(f"approx KL per update stays below {fmt_num(p['kl_floor'])}")
                steps.append(s)
        if not what:
            return
        evidence = [f"config: ppo_epochs={epochs}, num_mini_batches={minibatches}"]
        if len(what) == 1 and what[0].startswith("clip fraction"):
            # a clip fraction of 0 alone is what small updates log (GRPO's num_iterations=2 at a
            # learning rate of 1e-6 keeps every ratio inside the clip range): it says the policy
            # does not move only when something else says so too
            moving = no_movement_evidence(ctx)
            if not moving:
                return
            evidence.extend(moving)
        all_steps = np.concatenate(steps)
        first, last = int(all_steps.min()), int(all_steps.max())
        yield self.finding(
            ctx,
            metric="policy/clipfrac" if ctx.has("policy/clipfrac") else "kl/old",
            observed={"updates": updates},
            start_step=first,
            threshold_step=first,
            peak_step=first,
            end_step=last,
            evidence=evidence,
            fmt={"what": " and ".join(what), "although": f" although each batch gets {updates} updates"},
        )

    def _frozen(self, ctx: RuleContext) -> Finding | None:
        """An error finding when approx KL is exactly 0 and the entropy exactly constant over at
        least ``frozen_points`` updates: whatever the update schedule, a policy that changes
        between batches changes its entropy, so this one never moves."""
        p = ctx.params
        ent = ctx.view.entropy
        if not ctx.has("kl/old") or ent is None:
            return None
        s, kl = ctx.finite("kl/old")
        if len(kl) < p["frozen_points"] or len(ent.values) < p["frozen_points"] or np.any(kl != 0):
            return None
        spread = float(np.max(ent.values) - np.min(ent.values))
        if spread > 1e-9 * max(1.0, abs(float(ent.values[0]))):
            return None
        return self.finding(
            ctx,
            metric="kl/old",
            observed={"points": len(kl), "entropy": float(ent.values[0])},
            start_step=int(s[0]),
            threshold_step=int(s[0]),
            peak_step=int(s[0]),
            end_step=int(s[-1]),
            severity="error",
            evidence=[f"entropy ({ent.metric}) is exactly {fmt_num(float(ent.values[0]))} on all {len(ent.values)} points"],
            fmt={"what": f"approx KL per update is exactly 0 on all {len(kl)} points and the entropy never changes", "although": ""},
        )

    @classmethod
    def bad_example(cls):
        return Example(series={"policy/clipfrac": flat(50, 0.0), "kl/old": flat(50, 0.0)}, config={"ppo_epochs": 4, "num_mini_batches": 4})

    @classmethod
    def good_example(cls):
        # the trap: one epoch, one minibatch -> ratio == 1, clipfrac == 0 by construction
        return Example(series={"policy/clipfrac": flat(50, 0.0), "kl/old": flat(50, 0.0)}, config={"ppo_epochs": 1, "num_mini_batches": 1})
