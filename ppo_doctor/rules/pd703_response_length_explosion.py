"""PD703 response-length-explosion."""

from __future__ import annotations

import numpy as np

from dataclasses import replace

from ..detect import early_late, sustained_spans
from ..standing import FAIR_SHARE
from .base import Example, Rule, as_trend
from .examples import flat, ramp
from .incidents import incident, sustain_window
from .messages import fmt_num


class ResponseLengthExplosion(Rule):
    """Generated responses grow much longer, or most of them hit the length limit.

    **What it detects.** ``len/response_mean`` whose late median (last 10 %) is at least
    ``growth`` (2x) its early median, with a sustained stretch above that level; or
    ``len/response_clip_ratio`` (share of responses truncated at the maximum length) whose
    late median is at least ``clip_share`` (0.5) after starting below half of that.

    **Why it matters.** Length exploitation: reward models often prefer longer answers, and the
    policy learns to pad (Secrets of RLHF I: collapsed PPO gives longer answers with rapidly
    growing KL; OpenRLHF#236: spikes in response length, fixed by a larger KL penalty).
    Truncated answers also lose their EOS, which changes the reward they get (DAPO's overlong
    reward shaping exists because truncated samples are reward noise, arXiv:2503.14476).

    **Outcome or sign.** Longer answers, or half of them cut, are a sign: a warning only when the
    reward got worse or stopped improving after it (:mod:`.outcome`).  Nearly every answer cut
    (``truncated_share``, 0.9, held for a sustained stretch after starting below a quarter) is
    an outcome whatever the reward does, and an error: the policy no longer ends its answers, so
    what it is rewarded for is text nobody can use (in the real-trainer matrix no healthy run
    passes 19 % truncated before step 120 of 160; the runs that learned to spam the reward fill
    the limit: docs/live.md#real-trainer-matrix).  Runs whose answers start out truncated and get shorter
    (a base model rambling before it learns to stop) never start below a quarter and are left alone.

    **Known false positives.** Tasks where longer reasoning is the goal (long chain-of-thought
    GRPO runs grow their length on purpose); check the samples.  A maximum length set too short
    for the task gives the same error: raise it.

    **Evidence.** Nearly every answer cut is an event, judged at once.  The rest is a trend:
    judged on the whole run, and on a live run short of its plan an info
    note saying what is watched, until ``fair_share`` of the plan (default 1.0: all of it) is
    behind the run, past warm-up; a live run with no known plan is judged when it ends
    (:mod:`ppo_doctor.standing`).

    **Source.** Secrets of RLHF Part I (arXiv:2307.04964); OpenRLHF/OpenRLHF#236 (also #693);
    DeepSpeedExamples#556; DAPO (arXiv:2503.14476) section 3.4 (docs/sources.md#response-length).
    """

    code = "PD703"
    name = "response-length-explosion"
    symptom = "reward_hacking"
    severity = "warning"
    basis = "sign"
    watch = "the reward and the truncation rate: longer answers matter if the reward stops improving"
    evidence = "event"  # nearly every answer cut; the rest is a trend, watched in evaluate
    requires = (("len/response_mean", "len/response_clip_ratio"),)
    params = {"growth": 2.0, "clip_share": 0.5, "truncated_share": 0.9, "min_points": 20, "fair_share": FAIR_SHARE}
    causes = {"reward-hacking-length": 0.9, "reward-model-flawed": 0.7, "kl-coef-too-low": 0.5}
    message = "{what}: the policy may be exploiting a length bias of the reward"

    def evaluate(self, ctx):
        truncated = list(self._truncation(ctx)) if ctx.has("len/response_clip_ratio") else []
        if truncated and truncated[0].severity == "error":
            yield from truncated  # nearly every answer cut: the outcome, whatever the length did
            return
        grew = list(self._growth(ctx)) if ctx.has("len/response_mean") else []
        yield from grew or truncated

    def _growth(self, ctx):
        p = ctx.params
        s, v = ctx.finite("len/response_mean")
        if len(v) < p["min_points"]:
            return
        first, late, _ = early_late(v)
        if not (first > 0 and late >= p["growth"] * first):
            return
        k, w = sustain_window(ctx.planned_points(len(v)))
        spans = sustained_spans(s, v >= p["growth"] * first, k, w, values=v)
        if not spans:
            return
        yield as_trend(
            ctx,
            incident(
                self,
                ctx,
                metric="len/response_mean",
                steps=s,
                values=v,
                span=spans[0],
                direction="up",
                observed={"first": first, "late": late, "growth": late / first},
                peak_step=max(spans, key=lambda sp: sp.peak_value).peak_step,
                end_step=int(s[-1]),
                fmt={"what": f"responses grew {late / first:.1f}x longer ({fmt_num(first)} -> {fmt_num(late)} tokens)"},
            ),
        )

    def _truncation(self, ctx):
        """The truncation finding: an error when nearly every answer is cut for a sustained
        stretch, else a trend when half of them are at the end."""
        p = ctx.params
        s, v = ctx.finite("len/response_clip_ratio")
        if len(v) < p["min_points"]:
            return
        first, late, _ = early_late(v)
        if first >= p["clip_share"] / 2:
            return
        k, w = sustain_window(ctx.planned_points(len(v)))
        # nearly every answer cut, held: decided at once (a live run is stopped on it)
        spans = sustained_spans(s, v >= p["truncated_share"], k, w, values=v)
        decisive = bool(spans)
        if not decisive:
            if late < p["clip_share"]:
                return
            spans = sustained_spans(s, v >= p["clip_share"], k, w, values=v)
            if not spans:
                return
        level = float(np.median(v[(s >= spans[0].start_step) & (s <= spans[0].end_step)]))
        if decisive:
            what = f"{level:.0%} of responses hit the length limit from step {spans[0].start_step} (from {first:.0%})"
        else:
            what = f"{late:.0%} of responses hit the length limit at the end (from {first:.0%})"
        finding = incident(
            self,
            ctx,
            metric="len/response_clip_ratio",
            steps=s,
            values=v,
            span=spans[0],
            direction="up",
            observed={"first": first, "late": late, "max": float(np.max(v)), "held": level},
            end_step=int(s[-1]),
            causes={**self.causes, "response-truncation": 0.8},
            fmt={"what": what},
        )
        if not decisive:
            yield as_trend(ctx, finding)
            return
        yield replace(
            finding,
            severity="error",
            basis="outcome",
            message=f"{what}: the policy no longer ends its answers, and the reward pays for text cut off mid-way",
        )

    @classmethod
    def bad_example(cls):
        return Example(series={"len/response_mean": ramp(150, 40.0, 160.0, sd=4.0, seed=50, begin=50)})

    @classmethod
    def good_example(cls):
        return Example(series={"len/response_mean": flat(150, 45.0, 4.0, seed=51), "len/response_clip_ratio": flat(150, 0.05, 0.01, seed=52)})
