"""PD703 response-length-explosion."""

from __future__ import annotations

import numpy as np

from ..detect import sustained_spans
from .base import Example, Rule
from .examples import flat, ramp
from .incidents import incident, sustain_window
from ..detect import early_late
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
    Truncated answers also lose their EOS, which changes the reward they get.

    **Known false positives.** Tasks where longer reasoning is the goal (long chain-of-thought
    GRPO runs grow their length on purpose); check the samples.

    **Evidence.** A trend: judged on the whole run.  On a run short of its plan (live, or
    stopped early) the finding is an info note saying what is watched, until ``fair_share``
    of the plan (default 1.0: all of it) is behind the run, past warm-up; a live run with no
    known plan is judged when it ends (:mod:`ppo_doctor.standing`).

    **Source.** Secrets of RLHF Part I (arXiv:2307.04964); OpenRLHF/OpenRLHF#236 (also #693);
    DeepSpeedExamples#556 (docs/sources.md#response-length).
    """

    code = "PD703"
    name = "response-length-explosion"
    symptom = "reward_hacking"
    severity = "warning"
    basis = "sign"
    watch = "the reward and the truncation rate: longer answers matter if the reward stops improving"
    evidence = "trend"
    requires = (("len/response_mean", "len/response_clip_ratio"),)
    params = {"growth": 2.0, "clip_share": 0.5, "min_points": 20}
    causes = {"reward-hacking-length": 0.9, "reward-model-flawed": 0.7, "kl-coef-too-low": 0.5}
    message = "{what}: the policy may be exploiting a length bias of the reward"

    def evaluate(self, ctx):
        p = ctx.params
        if ctx.has("len/response_mean"):
            s, v = ctx.finite("len/response_mean")
            if len(v) >= p["min_points"]:
                first, late, _ = early_late(v)
                if first > 0 and late >= p["growth"] * first:
                    k, w = sustain_window(ctx.planned_points(len(v)))
                    spans = sustained_spans(s, v >= p["growth"] * first, k, w, values=v)
                    if spans:
                        yield incident(
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
                        )
                        return
        if ctx.has("len/response_clip_ratio"):
            s, v = ctx.finite("len/response_clip_ratio")
            if len(v) < p["min_points"]:
                return
            first, late, _ = early_late(v)
            if late < p["clip_share"] or first >= p["clip_share"] / 2:
                return
            k, w = sustain_window(ctx.planned_points(len(v)))
            spans = sustained_spans(s, v >= p["clip_share"], k, w, values=v)
            if not spans:
                return
            yield incident(
                self,
                ctx,
                metric="len/response_clip_ratio",
                steps=s,
                values=v,
                span=spans[0],
                direction="up",
                observed={"first": first, "late": late, "max": float(np.max(v))},
                end_step=int(s[-1]),
                causes={**self.causes, "response-truncation": 0.8},
                fmt={"what": f"{late:.0%} of responses hit the length limit at the end (from {first:.0%})"},
            )

    @classmethod
    def bad_example(cls):
        return Example(series={"len/response_mean": ramp(150, 40.0, 160.0, sd=4.0, seed=50, begin=50)})

    @classmethod
    def good_example(cls):
        return Example(series={"len/response_mean": flat(150, 45.0, 4.0, seed=51), "len/response_clip_ratio": flat(150, 0.05, 0.01, seed=52)})
