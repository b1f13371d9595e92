"""PD202 reward-hacking."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..detect import quantiles, summarize, sustained_spans
from ..view import SEQ_KL_BAND, TOKEN_KL_BAND
from .base import Example, Rule, RuleContext
from .examples import ramp, saturating
from .incidents import incident, sustain_window
from .outcome import judge_sign
from ..detect import early_late
from .messages import fmt_num
from .textstats import hacking_evidence


def supporting_evidence(ctx: RuleContext) -> list[str]:
    """Signs of exploitation besides reward and KL: longer answers, lower entropy, reward std
    collapse, degenerate samples (Secrets of RLHF I; OpenRLHF#236; trl#204)."""
    out = []
    if ctx.has("len/response_mean"):
        _, ln = ctx.finite("len/response_mean")
        a, b, _ = early_late(ln)
        if len(ln) >= 5 and a > 0 and b / a >= 1.5:
            out.append(f"responses grew {b / a:.1f}x longer ({fmt_num(a)} -> {fmt_num(b)} tokens)")
    ent = ctx.view.entropy
    if ent is not None and len(ent.values) >= 5:
        a, b, _ = early_late(ent.values)
        if a > 0 and b <= 0.5 * a:
            out.append(f"entropy fell {1 - b / a:.0%} ({fmt_num(a)} -> {fmt_num(b)})")
    if ctx.has("reward/std"):
        _, sd = ctx.finite("reward/std")
        a, b, _ = early_late(sd)
        if len(sd) >= 5 and a > 0 and b <= 0.3 * a:
            out.append(f"reward std across the batch fell {1 - b / a:.0%}: responses converge on one pattern")
    out.extend(hacking_evidence(ctx.run.texts))
    return out


class RewardHacking(Rule):
    """Reward keeps rising while the KL to the reference rises much faster, past its band.

    **What it detects.** Over the run, the mean reward rises (significantly, against its own
    noise) while ``kl/ref`` rises and ends above its healthy band (see PD101 for units).  The
    strength of the evidence is PTT's slope-ratio rule made unit-free: KL gain in bands
    divided by reward gain as a share of the reward's 5-95 % range; a ratio above ``ratio``
    means the policy buys little reward with a lot of divergence.  Error when the ratio is
    high, when the KL ends above twice the band, or when supporting evidence agrees: responses
    much longer, entropy halved, reward std collapsed, or degenerate text samples (repeated
    phrases, identical answers, symbol spam).  Otherwise the reward rising with a KL a little past
    its band is a sign (:func:`.outcome.judge_sign`): a warning only when the outcome after it is
    bad (degenerate text, a reward that falls back), else an info note saying what to watch.

    **Why it matters.** Over-optimisation of a proxy reward (Gao et al. 2022): the reward model
    scores the policy ever higher while real quality falls; the guides' "rapid reward rise
    together with very high KL".  Read the samples.

    The KL must stay above the band for a sustained stretch (PD101's window): isolated KL
    spikes (left-padding artefacts, one bad batch) are not drift.

    **Known false positives.** A run whose KL budget is deliberately large; a reward that really
    keeps improving with a weak KL penalty (the slope ratio stays low and no other evidence
    agrees, so it stays a warning).

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan
    the finding is an info note saying what is watched, until ``fair_share``
    of the plan (default 1.0: all of it) is behind the run, past warm-up; a live run with no
    known plan is judged when it ends (:mod:`ppo_doctor.standing`).

    **Source.** The troubleshooting guide ("rapid reward rise together with very high KL"); PTT
    reward hacking rule (KL slope / reward slope > 3 over 50 steps); Secrets of RLHF Part I
    (arXiv:2307.04964: longer answers, rapidly growing KL); huggingface/trl#204,
    huggingface/open-r1#373 (docs/sources.md#reward-hacking).
    """

    code = "PD202"
    name = "reward-hacking"
    symptom = "reward_hacking"
    severity = "error"
    basis = "outcome"
    evidence = "trend"
    requires = (("reward/score", "reward/total"), "kl/ref")
    params = {"seq_band": SEQ_KL_BAND, "token_band": TOKEN_KL_BAND, "ratio": 3.0, "min_reward_rise": 3.0, "min_points": 20}
    # what the weak case, a sign, asks the user to watch
    watch = "the samples and any held-out metric: a reward that keeps climbing while the text degenerates or accuracy falls is hacking"
    causes = {"reward-model-flawed": 0.9, "kl-coef-too-low": 0.8, "lr-too-high": 0.3, "reward-not-normalized": 0.2}
    message = (
        "reward rose {reward_first:num} -> {reward_last:num} while KL rose {kl_first:num} -> {kl_last:num} {unit} "
        "(band {band:num}; KL gain per reward gain {ratio:num}){meaning}"
    )

    def evaluate(self, ctx):
        p = ctx.params
        view = ctx.view.kl_in(p["seq_band"], p["token_band"])
        if view is None:
            return
        rmetric, rs, rv = ctx.req[0].metric, ctx.req[0].steps, ctx.req[0].values
        ks, kv, band = view.steps, view.values, view.band
        if len(rv) < p["min_points"] or len(kv) < p["min_points"]:
            return
        r, k = summarize(rs, rv), summarize(ks, kv)
        reward_rising = r.change > 0 and r.slope > 0 and r.change_in_noise >= p["min_reward_rise"]
        if not (reward_rising and k.change > 0 and k.slope > 0 and k.last > band):
            return
        lo, hi = quantiles(rv, [5, 95])
        r_gain = r.change / max(float(hi - lo), 1e-12)
        ratio = ((k.last - k.first) / band) / max(r_gain, 1e-9)
        support = supporting_evidence(ctx)
        strong = ratio >= p["ratio"] or k.last >= 2 * band or bool(support)
        kk, w = sustain_window(ctx.planned_points(len(kv)))
        spans = sustained_spans(ks, kv > band, kk, w, values=kv)
        if not spans:
            return  # KL points above the band that do not last are spikes (e.g. padding artefacts), not drift
        evidence = [f"reward {rmetric}: +{fmt_num(r.change)} ({fmt_num(r.change_in_noise)} noise s.e.)"]
        if ratio >= p["ratio"]:
            evidence.append(f"KL gain per reward gain {fmt_num(ratio)} >= {fmt_num(p['ratio'])} (PTT slope-ratio rule, unit-free)")
        evidence.extend(support)
        causes = dict(self.causes)
        if support:
            causes["reward-model-flawed"] = 1.0
        if any("longer" in e or "repeat" in e for e in support):
            causes["reward-hacking-length"] = 0.8  # the exploit is length or repetition
        found = incident(
            self,
            ctx,
            metric=view.metric,
            steps=ks,
            values=kv,
            span=spans[0],
            direction="up",
            observed={"reward_first": r.first, "reward_last": r.last, "kl_first": k.first, "kl_last": k.last, "ratio": ratio},
            peak_step=int(ks[int(np.argmax(kv))]),
            end_step=int(max(ks[-1], rs[-1])),
            severity="error" if strong else "warning",
            evidence=evidence,
            causes=causes,
            fmt={"unit": view.unit, "band": band, "meaning": ": the policy is exploiting the reward" if strong else ""},
        )
        if not strong:
            # a reward that rises with a KL somewhat past its band is what learning looks like
            # until something shows the reward is bought, not earned: a sign, kept as a warning
            # only when the outcome after it is bad (degenerate text, a reward that falls back)
            found = judge_sign(ctx, replace(found, basis="sign"), self.watch)
        yield found

    @classmethod
    def bad_example(cls):
        n = 200
        return Example(
            series={
                "reward/score": saturating(n, 1.0, 9.0, rate=3, sd=0.4, seed=12),
                "kl/ref": ramp(n, 0.0, 40.0, sd=1.5, seed=13),
                "len/response_mean": ramp(n, 40.0, 120.0, sd=3.0, seed=14),
            },
            metric_info={"kl/ref": {"estimator": "k1", "reduction": "seq_sum"}},
            texts=[(0, "The movie was fine, with a good cast."), (199, "great great great great great great great great great great great")],
        )

    @classmethod
    def good_example(cls):
        # reward improves and the KL settles inside the band
        n = 200
        return Example(
            series={"reward/score": saturating(n, 1.0, 4.0, sd=0.3, seed=15), "kl/ref": saturating(n, 0.0, 6.0, sd=0.8, seed=16)},
            metric_info={"kl/ref": {"estimator": "k1", "reduction": "seq_sum"}},
        )
