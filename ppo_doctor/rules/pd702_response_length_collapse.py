"""PD702 response-length-collapse."""

from __future__ import annotations

import numpy as np

from ..detect import sustained_spans
from .base import Example, Rule, RuleContext
from .common import learning_despite_critic, incident, sustain_window
from .inputs import early_late
from .messages import fmt_num
from .examples import decay, saturating


class ResponseLengthCollapse(Rule):
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

    **Source.** PTT output-length drop rule (>= 20 % warn, >= 35 % high); N+ implementation
    details for RLHF with PPO (EOS handling) (thresholds-and-peers.md §4.1, §4.2).
    """

    code = "PD702"
    name = "response-length-collapse"
    symptom = "entropy_collapse"
    severity = "warning"
    requires = ("len/response_mean",)
    params = {"ratio": 0.5, "empty": 1.0, "eos_only": 3.0, "min_points": 20}
    causes = {"reward-model-flawed": 0.5, "kl-coef-too-low": 0.4, "generation-settings": 0.4, "implementation-bug": 0.3}
    message = "responses shrank to {pct} of their early length ({first_s} -> {late_s} tokens){what}"

    def evaluate(self, ctx):
        p = ctx.params
        s, v = ctx.finite("len/response_mean")
        if len(v) < p["min_points"]:
            return
        first, late, _ = early_late(v)
        eos_only = late <= p["eos_only"]
        if not first > 0 or (late >= p["ratio"] * first and not eos_only):
            return
        truncated = self._truncated_early(ctx)
        if truncated is not None and not eos_only:
            return  # early answers were cut at the cap: shorter ones that end by themselves are learning to stop
        learning = None if eos_only else learning_despite_critic(ctx)
        k, w = sustain_window(len(v))
        spans = sustained_spans(s, v < p["ratio"] * first, k, w, values=v, peak="min")
        if not spans:
            return
        yield incident(
            self,
            ctx,
            metric="len/response_mean",
            steps=s,
            values=v,
            span=spans[0],
            direction="down",
            observed={"first": first, "late": late, "min": float(np.min(v))},
            peak_step=min(spans, key=lambda sp: sp.peak_value).peak_step,
            end_step=int(s[-1]),
            severity="error" if late <= p["empty"] else ("info" if learning else "warning"),
            evidence=[e for e in (truncated, learning) if e],
            fmt={
                "pct": f"{late / first:.0%}",
                "first_s": fmt_num(first),
                "late_s": fmt_num(late),
                "what": ": the policy answers with little more than EOS" if eos_only else "",
            },
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
