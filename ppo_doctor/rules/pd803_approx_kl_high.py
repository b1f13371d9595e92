"""PD803 approx-kl-high."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ..results import Finding
from .base import Example, RuleContext
from .clipping import unclipped_causes
from .examples import flat, saturating
from . import population
from .inputs import Input
from .messages import fmt_num
from .outcome import still_growing
from .shapes import Stretch, SustainedRule


class ApproxKLHigh(SustainedRule[Input]):
    """The approx KL between the rollout policy and the updated policy is over target.

    **What it detects.** ``kl/old`` (TRL ``policy/approxkl_avg``, SB3/CleanRL ``approx_kl``,
    veRL ``actor/ppo_kl``) above a limit for a sustained stretch.  The limit is 1.5 x the
    configured early-stop threshold (``early_stop_kl``: SB3/CleanRL's ``target_kl``; Spinning Up
    and SB3 stop the epoch there) when the run sets one, else ``max_kl`` (0.05, the upper of
    Spinning Up's usual targets 0.01 / 0.05), scaled by (clip range / 0.2)^2 when the config sets
    a clip range (the ratio is held in [1-eps, 1+eps], so the KL one update may reach grows with
    eps^2: :mod:`.population`).  Above the limit alone is a *sign*: a warning needs the reward to
    stall or fall after it (:func:`.outcome.judge_sign`).  It is a **runaway** when the sustained
    median also goes beyond what every healthy run of the reference population reaches
    (``runaway_kl``, from docs/population.md, in the same clip-range units) while still climbing
    at its last points: a warning, an error at ``error_factor`` (10) times the limit.  A level
    beyond the population that has stopped climbing is not enough: held out, an SB3 MuJoCo run
    learning well at approx KL 1-10 per update is beyond every other healthy run.

    **Why it matters.** This KL is per update, per token: how far one optimisation phase moves
    the policy.  Sustained high values mean updates are too aggressive (learning rate, epochs,
    minibatches), the precursor of ratio blow-ups, clipping saturation and KL-to-reference
    growth.  In classic RL (SB3/CleanRL) it is the main trust-region health signal.

    **Known false positives.** k1 estimates (veRL ``ppo_kl``, CleanRL ``old_approx_kl``) are
    noisy per batch; very small models at high learning rates by design.

    **Source.** Spinning Up PPO (target_kl 0.01, early stop at 1.5x); SB3 target_kl; PTT approx_kl
    > 0.02 (high > 0.06); torchrl/rsl_rl adaptive bands (docs/sources.md#approx-kl).
    """

    code = "PD803"
    name = "approx-kl-high"
    symptom = "unstable_updates"
    severity = "warning"
    basis = "sign"
    watch = "the reward: a large update per epoch matters if it stalls or falls"
    requires = ("kl/old",)
    params = {
        "max_kl": 0.05,
        "target_factor": 1.5,
        "error_factor": 10.0,
        "runaway_kl": population.runaway_limit("kl_old"),
        "min_points": 5,
    }
    causes = {"lr-too-high": 0.8, "too-many-ppo-epochs": 0.7, "batch-too-large": 0.2}
    message = "approx KL per update stays above {limit:num} ({source}) {since} (median {median:num} there)"

    def level(self, ctx: RuleContext, x: Input) -> float:
        # the old-vs-new early-stop threshold, not the adaptive controller's ref-KL target_kl
        target = ctx.view.cfg_float("early_stop_kl")
        if target is not None and target > 0:
            return ctx.params["target_factor"] * target
        return float(ctx.params["max_kl"]) * population.clip_scale(ctx.view)

    def report(self, ctx: RuleContext, st: Stretch[Input]) -> Iterator[Finding]:
        p = ctx.params
        target = ctx.view.cfg_float("early_stop_kl")
        source = f"{p['target_factor']:g} x early-stop KL {target:g}" if target is not None and target > 0 else "no early-stop KL configured"
        scale = population.clip_scale(ctx.view)
        if scale != 1.0 and not (target is not None and target > 0):
            source += f", x{scale:.3g} for clip range {ctx.view.cfg_float('cliprange'):g}"
        causes, evidence = unclipped_causes(ctx, self.causes)
        runaway = max(float(p["runaway_kl"]) * scale, st.level)
        basis = "sign"
        if st.median > runaway and still_growing(st.points.steps, st.points.values):
            basis = "runaway"
            evidence.append(f"median {fmt_num(st.median)} is beyond every healthy run of the reference population ({fmt_num(runaway)}, docs/population.md)")
        severity = "error" if st.median >= p["error_factor"] * st.level else "warning"
        observed = {"median": st.median, "peak": st.worst.peak_value, "limit": st.level}
        yield self.incident(ctx, st, observed=observed, severity=severity, basis=basis, causes=causes, evidence=evidence, fmt={"source": source})

    @classmethod
    def bad_example(cls):
        return Example(series={"kl/old": saturating(100, 0.005, 0.12, sd=0.01, seed=57)}, framework="sb3")

    @classmethod
    def good_example(cls):
        return Example(series={"kl/old": np.abs(flat(100, 0.012, 0.004, seed=58))}, framework="sb3", config={"early_stop_kl": 0.02})
