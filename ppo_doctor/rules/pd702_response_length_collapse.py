"""PD702 response-length-collapse."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ..results import Finding
from .base import Example, RuleContext
from .examples import decay, saturating
from .inputs import Input
from ..detect import early_late
from .reward_progress import learning_despite_critic
from .shapes import Stretch, SustainedRule


class ResponseLengthCollapse(SustainedRule[Input]):
    """Generated responses become much shorter than at the start.

    **What it detects.** ``len/response_mean`` whose late median (last 10 %) is below
    ``ratio`` (50 %) of its early median (first 10 %), with a sustained stretch below that
    level.  Error when the late median is at most ``empty`` tokens (the policy answers with
    nothing but EOS); a late median of at most ``eos_only`` tokens is reported whatever the
    early length and the message says so.  When most early responses were truncated at the
    length cap (``len/response_clip_ratio`` >= 50 % early), the early length is the cap, not
    the policy's: answers that learn to end by themselves are not a collapse, and only an
    EOS-only end is reported.  While the reward rises clearly (3 noise standard errors) a
    shorter answer that is more than EOS is an info note: the policy learned to answer briefly.

    **Why it matters.** A collapse of length is a collapse of behaviour: the policy found that
    short (or empty) answers avoid penalties, e.g. a KL penalty summed over tokens, a reward
    model that punishes content, or an EOS/padding bug (N+ implementation details: EOS and pad
    must differ or the model never learns to stop / stops at once).

    **Known false positives.** Runs with a deliberate length penalty; tasks whose SFT answers
    were padded with filler the RL stage rightly removes.

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan
    the finding is an info note saying what is watched, until ``fair_share``
    of the plan (default 1.0: all of it) is behind the run, past warm-up; a live run with no
    known plan is judged when it ends (:mod:`ppo_doctor.standing`).

    **Source.** PTT output-length drop rule (>= 20 % warn, >= 35 % high); N+ implementation details
    for RLHF with PPO (arXiv:2403.17031: EOS handling) (docs/sources.md#response-length).
    """

    code = "PD702"
    name = "response-length-collapse"
    symptom = "entropy_collapse"
    severity = "warning"
    basis = "outcome"
    evidence = "trend"
    requires = ("len/response_mean",)
    params = {"ratio": 0.5, "empty": 1.0, "eos_only": 3.0, "min_points": 20}
    causes = {"reward-model-flawed": 0.5, "kl-coef-too-low": 0.4, "generation-settings": 0.4, "implementation-bug": 0.3}
    message = "responses shrank to {pct} of their early length ({first:num} -> {late:num} tokens){what}"
    direction = "down"

    def level(self, ctx: RuleContext, x: Input) -> float | None:
        p = ctx.params
        eos_only = x.late <= p["eos_only"]
        if not x.early > 0 or (x.late >= p["ratio"] * x.early and not eos_only):
            return None
        if not eos_only and self._truncated_early(ctx) is not None:
            return None  # early answers were cut at the cap: shorter ones that end by themselves are learning to stop
        return p["ratio"] * x.early

    def report(self, ctx: RuleContext, st: Stretch[Input]) -> Iterator[Finding]:
        p, x = ctx.params, st.points
        eos_only = x.late <= p["eos_only"]
        learning = None if eos_only else learning_despite_critic(ctx)
        severity = "error" if x.late <= p["empty"] else ("info" if learning else "warning")
        yield self.incident(
            ctx,
            st,
            observed={"first": x.early, "late": x.late, "min": float(np.min(x.values))},
            end_step=int(x.steps[-1]),
            severity=severity,
            evidence=[e for e in (self._truncated_early(ctx), learning) if e],
            fmt={"pct": f"{x.late / x.early:.0%}", "what": ": the policy answers with little more than EOS" if eos_only else ""},
        )

    @staticmethod
    def _truncated_early(ctx: RuleContext) -> str | None:
        """Evidence when most early responses hit the length cap (``len/response_clip_ratio``)."""
        if not ctx.has("len/response_clip_ratio"):
            return None
        _, c = ctx.finite("len/response_clip_ratio")
        if len(c) < 3:
            return None
        early, _, _ = early_late(c)
        return f"{early:.0%} of the early responses were truncated at the length cap" if early >= 0.5 else None

    @classmethod
    def bad_example(cls):
        return Example(series={"len/response_mean": decay(120, 48.0, 6.0, sd=1.0, seed=48)})

    @classmethod
    def good_example(cls):
        return Example(series={"len/response_mean": saturating(120, 48.0, 40.0, sd=2.0, seed=49)})
