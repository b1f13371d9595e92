"""PD805 sampler-trainer-mismatch."""

from __future__ import annotations

import math
from typing import Iterator, NamedTuple

import numpy as np

from ..canonical.hparams import lookup, parse_scalar, scalar_float
from ..detect import Span, early_late, median, sustained_spans
from ..results import Finding
from .base import Example, Rule, RuleContext
from .examples import flat, ramp, saturating
from .incidents import incident, sustain_window
from .messages import fmt_num
from .reward_progress import COLLAPSE_DEFAULTS, collapsed, reward_arrays, reward_suffers

# The gap between the sampler's and the trainer's log-probabilities of the sampled tokens, best
# first: TRL's and OpenRLHF's mean |logp| difference, veRL's k3 KL (never negative), veRL's k1 KL
# (can be negative: judged by its size).
GAP_METRICS = ("mismatch/logp_diff_mean", "mismatch/k3_kl", "mismatch/kl")

# Where a run's config says whether the gap is corrected by importance sampling (TRL
# ``GRPOConfig``, veRL ``algorithm.rollout_correction``, OpenRLHF's arguments), and its cap.
IS_SWITCHES = ("vllm_importance_sampling_correction", "enable_vllm_is_correction", "algorithm.rollout_correction.rollout_is")
IS_CAPS = ("vllm_importance_sampling_clip_max", "vllm_importance_sampling_cap", "algorithm.rollout_correction.rollout_is_threshold")

# Metrics whose non-finite values after the gap opened are numbers breaking.
BREAKABLE = ("reward/score", "reward/total", "kl/ref", "loss/policy", "loss/total", "grad/norm")


class Sign(NamedTuple):
    """The mismatch seen: which metric, its finite points, the sustained spans beyond its level,
    what it shows in words and its numbers."""

    metric: str
    steps: np.ndarray
    values: np.ndarray
    spans: list[Span]
    direction: str
    text: str
    observed: dict[str, float]


class SamplerTrainerMismatch(Rule):
    """The inference engine and the trainer disagree more and more, and the run pays for it.

    **What it detects.** Two signs of a sampler/trainer mismatch, each on a sustained stretch:

    1. the **gap grows**: the log-probability gap between the sampler and the trainer for the
       same tokens (TRL ``sampling/sampling_logp_difference/mean`` and OpenRLHF ``logprobs_diff``,
       read as ``mismatch/logp_diff_mean``; veRL ``rollout_corr/k3_kl`` and ``rollout_corr/kl``,
       read as ``mismatch/k3_kl`` and ``mismatch/kl``) ends at least ``growth`` (3x) its early
       median;
    2. the **importance weights leave their band**: the mean importance-sampling weight (TRL
       ``sampling/importance_sampling_ratio/mean``, veRL ``rollout_corr/rollout_is_mean``, read as
       ``mismatch/is_ratio_mean``), 1 when the two agree, is off by more than a factor
       ``1 + band`` (1.2), after an early window inside it.  TRL's masking modes set the weight of
       a masked sequence to 0, so a mean far below 1 is a share of the batch thrown away.

    A sign alone is an info note with its numbers.  It is a **warning** with a consequence:
    the reward stalls (``reward_progress.reward_suffers``, judged once the run had its fair share
    of its plan, :mod:`ppo_doctor.standing`) or falls, the KL to the reference ends
    above its band (PD101's), the clip fraction ends at or above ``clipfrac`` (0.3, PD802's
    level), or a reward, KL, loss or gradient norm turns non-finite after the sign began; or as
    a **runaway**: the gap still accelerating (its last third rose more than its middle third).
    An **error** when the reward collapsed from its best (reward-collapse's test) or numbers broke.
    The finding says whether the run's config corrects the gap (TRL
    ``vllm_importance_sampling_correction``, veRL ``algorithm.rollout_correction.rollout_is``,
    OpenRLHF ``--enable_vllm_is_correction``) and with which cap.

    **Why it matters.** GRPO trains on samples from an inference engine (vLLM, SGLang) whose
    kernels and precision differ from the trainer's; the update is then off-policy without
    knowing it, and the gap tends to grow as the policy sharpens.  A growing gap or weights far
    from 1 precede many "sudden collapse" reports ("GRPO stable for SGLang but collapses for
    vLLM", areal-project/AReaL#1290; huggingface/trl#4772), and the fix is known: truncated
    importance sampling and its cap, matching dtypes and kernels, the sampler's own settings.

    **Known false positives.** A gap that grows from a tiny start (1e-4 to 3e-4 nats) while the
    run is fine: an info note, never a warning without a consequence or a runaway.

    **Source.** TRL ``GRPOTrainer`` (grpo_trainer.py: ``sampling/sampling_logp_difference/*``,
    ``sampling/importance_sampling_ratio/*``; grpo_config.py ``vllm_importance_sampling_*``);
    veRL ``rollout_corr_helper.py`` and its rollout-correction guide ("monitor ``rollout_corr/kl``,
    ``rollout_corr/log_ppl_abs_diff``, ``rollout_corr/chi2_token``"); OpenRLHF ``logprobs_diff``
    and ``--enable_vllm_is_correction``; Yao et al. 2025, "Your Efficient RL Framework Secretly
    Brings You Off-Policy RL Training" (truncated importance sampling); Qi et al. 2025,
    arXiv:2510.26788 (the mismatch grows before collapse; FP16 removes most of it);
    areal-project/AReaL#1290, huggingface/trl#4772 (docs/sources.md#sampler-trainer-mismatch).
    """

    code = "PD805"
    name = "sampler-trainer-mismatch"
    symptom = "unstable_updates"
    severity = "warning"
    # judged by the rule itself: a warning needs a consequence (an outcome) or a runaway gap
    basis = "outcome"
    requires = ((*GAP_METRICS, "mismatch/is_ratio_mean"),)
    params = {"growth": 3.0, "band": 0.2, "clipfrac": 0.3, "min_points": 20}
    causes = {"sampler-trainer-mismatch": 1.0, "lr-too-high": 0.3, "implementation-bug": 0.3}
    message = "{what} {since}; {outcome}"

    def evaluate(self, ctx: RuleContext) -> Iterator[Finding]:
        gap = self._gap_series(ctx)
        signs = [s for s in (self._gap(ctx, gap), self._weights(ctx)) if s is not None]
        if not signs:
            return
        sign = min(signs, key=lambda s: s.spans[0].start_step)
        since = int(sign.spans[0].start_step)
        consequences, broke = self._consequences(ctx, since)
        runaway = self._runaway(ctx, gap)
        if consequences:
            severity = "error" if broke else "warning"
            outcome = " and ".join(consequences)
        elif runaway:
            severity, outcome = "warning", runaway
        else:
            severity, outcome = "info", "no consequence yet (reward, KL, clipping and numbers hold)"
        evidence = [s.text for s in signs] + ([runaway] if runaway and consequences else []) + self._correction(ctx)
        basis = "outcome" if consequences else "runaway" if runaway else "sign"
        yield incident(
            self,
            ctx,
            metric=sign.metric,
            steps=sign.steps,
            values=sign.values,
            span=sign.spans[0],
            direction=sign.direction,
            observed=sign.observed,
            end_step=int(sign.steps[-1]),
            severity=severity,
            basis=basis,
            evidence=evidence,
            fmt={"what": " and ".join(s.text for s in signs), "outcome": outcome},
        )

    # -- the signs ------------------------------------------------------------------------
    def _gap_series(self, ctx: RuleContext) -> tuple[str, np.ndarray, np.ndarray] | None:
        metric = ctx.first_present(*GAP_METRICS)
        if metric is None:
            return None
        s, v = ctx.finite(metric)
        if len(v) < ctx.params["min_points"]:
            return None
        return metric, s, np.abs(v)  # veRL's k1 KL can be negative: its size is the gap

    def _gap(self, ctx: RuleContext, series: tuple[str, np.ndarray, np.ndarray] | None) -> Sign | None:
        """The gap (``_gap_series``) grown ``growth`` times its early median, on a sustained stretch."""
        if series is None:
            return None
        metric, s, v = series
        first, late, _ = early_late(v)
        growth = ctx.params["growth"]
        if not (first > 0 and late >= growth * first):
            return None
        k, w = sustain_window(ctx.planned_points(len(v)))
        spans = sustained_spans(s, v >= growth * first, k, w, values=v)
        if not spans:
            return None
        text = f"the sampler/trainer gap ({ctx.view.raw(metric)}) grew {late / first:.1f}x ({fmt_num(first)} -> {fmt_num(late)})"
        return Sign(metric, s, v, spans, "up", text, {"first": first, "late": late, "growth": late / first})

    def _weights(self, ctx: RuleContext) -> Sign | None:
        """The mean importance weight outside ``[1 / (1 + band), 1 + band]`` on a sustained
        stretch, after an early window inside it."""
        if not ctx.has("mismatch/is_ratio_mean"):
            return None
        s, v = ctx.finite("mismatch/is_ratio_mean")
        if len(v) < ctx.params["min_points"]:
            return None
        limit = math.log1p(ctx.params["band"])
        with np.errstate(divide="ignore"):
            off = np.abs(np.log(np.where(v > 0, v, 1e-12)))
        first, late, _ = early_late(off)
        if first > limit:
            return None  # out of band from the start: no departure to date, the gap is read instead
        k, w = sustain_window(ctx.planned_points(len(v)))
        spans = sustained_spans(s, off > limit, k, w, values=off)
        if not spans:
            return None
        worst = float(v[spans[0].peak_idx])
        low, high = 1.0 / (1.0 + ctx.params["band"]), 1.0 + ctx.params["band"]
        text = (
            f"the mean importance weight ({ctx.view.raw('mismatch/is_ratio_mean')}) left its band "
            f"[{fmt_num(low)}, {fmt_num(high)}] (reaching {fmt_num(worst)})"
        )
        return Sign("mismatch/is_ratio_mean", s, v, spans, "down" if worst < 1 else "up", text, {"worst": worst, "late": float(median(v[-w:]))})

    # -- what the run paid ------------------------------------------------------------------
    def _consequences(self, ctx: RuleContext, since: int) -> tuple[list[str], bool]:
        """(what went wrong beside the sign, whether it broke: a reward collapse or non-finite numbers)."""
        out: list[str] = []
        broke = False
        reward = reward_arrays(ctx, ctx.params["min_points"])
        if reward is not None:
            rc = ctx.params_of("reward-collapse", COLLAPSE_DEFAULTS)
            fell = collapsed(ctx, reward[0], rc["min_gain"], rc["drop"], rc["min_points"])
            if fell is not None:
                pd = fell[1]
                out.append(f"the reward collapsed from its best ({fmt_num(pd.peak)} -> {fmt_num(pd.late)})")
                broke = True
            elif ctx.run.standing.fair():
                # a stuck reward is an absence of progress: judged once the run had its chance
                # (ppo_doctor.standing), so that a live run is not warned in its first updates
                suffers = reward_suffers(ctx, ctx.params["min_points"])
                if suffers is not None and suffers[0]:
                    out.append(suffers[1])
        kl = ctx.view.kl
        if kl is not None and len(kl.values) >= 3:
            _, late, _ = early_late(kl.values)
            if late > kl.band:
                out.append(f"the KL to the reference ends at {fmt_num(late)} {kl.unit}, above its band ({fmt_num(kl.band)})")
        if ctx.has("policy/clipfrac"):
            _, cf = ctx.finite("policy/clipfrac")
            if len(cf) >= 3 and early_late(cf)[1] >= ctx.params["clipfrac"]:
                out.append(f"the clip fraction ends at {fmt_num(early_late(cf)[1])} (>= {fmt_num(ctx.params['clipfrac'])}): clipping saturates")
        broken = [m for m in BREAKABLE if ctx.has(m) and _non_finite_after(ctx, m, since)]
        if broken:
            out.append(f"{', '.join(ctx.view.raw(m) for m in broken)} turned non-finite")
            broke = True
        return out, broke

    def _runaway(self, ctx: RuleContext, series: tuple[str, np.ndarray, np.ndarray] | None) -> str | None:
        """Text when the gap (``_gap_series``) is still accelerating: it grew ``growth`` times and its
        last third's rise (median to median) exceeds its middle third's."""
        if series is None:
            return None
        metric, _, v = series
        thirds = [float(median(part)) for part in np.array_split(v, 3)]
        m1, m2, m3 = thirds
        if not (m1 > 0 and m3 >= ctx.params["growth"] * m1 and m3 - m2 > m2 - m1 > 0):
            return None
        return f"the gap is still accelerating ({ctx.view.raw(metric)} by thirds {fmt_num(m1)} -> {fmt_num(m2)} -> {fmt_num(m3)})"

    @staticmethod
    def _correction(ctx: RuleContext) -> list[str]:
        """What the run's config says about importance-sampling correction, as evidence."""
        flat_config = {**ctx.run.config, **ctx.run.raw_config}
        switch = lookup(flat_config, IS_SWITCHES)
        if switch is None:
            return []
        key, value = switch
        on = parse_scalar(value)
        if on in (False, None, "null", "none", "None"):
            return [f"importance-sampling correction is off ({key} = {value})"]
        cap = lookup(flat_config, IS_CAPS)
        capped = f", capped at {fmt_num(scalar_float(cap[1]))} ({cap[0]})" if cap and scalar_float(cap[1]) is not None else ""
        return [f"importance-sampling correction is on ({key} = {value}){capped}"]

    @classmethod
    def bad_example(cls):
        # vLLM and the trainer drift apart (logp gap 0.02 -> 0.2) and the reward falls from its best
        return Example(
            series={
                "mismatch/logp_diff_mean": np.r_[flat(60, 0.02, 0.002, seed=71), ramp(60, 0.02, 0.2, sd=0.004, seed=72)],
                "reward/score": np.r_[saturating(60, 0.1, 0.7, sd=0.02, seed=73), ramp(60, 0.7, 0.1, sd=0.02, seed=74)],
            },
            config={"vllm_importance_sampling_correction": False},
            framework="trl_grpo",
        )

    @classmethod
    def good_example(cls):
        # the gap wanders around 0.02 while the reward rises
        return Example(
            series={
                "mismatch/logp_diff_mean": flat(120, 0.02, 0.002, seed=75),
                "mismatch/is_ratio_mean": flat(120, 1.0, 0.01, seed=76),
                "reward/score": saturating(120, 0.1, 0.7, sd=0.02, seed=77),
            },
            framework="trl_grpo",
        )


def _non_finite_after(ctx: RuleContext, metric: str, since: int) -> bool:
    """Whether ``metric`` has a non-finite value at or after step ``since``."""
    s, v = ctx.arrays(metric)
    after = s >= since
    return bool(after.any() and not np.isfinite(v[after]).all())
