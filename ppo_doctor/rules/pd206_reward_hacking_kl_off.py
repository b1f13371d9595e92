"""PD206 reward-hacking-kl-off."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ..detect import median, sustained_spans
from ..results import Finding
from .base import Example, Rule, RuleContext
from .examples import flat, ramp
from .incidents import incident, sustain_window
from ..detect import early_late
from .messages import fmt_num
from .outcome import task_improved
from .textstats import hacking_evidence


class RewardHackingKLOff(Rule):
    """With the KL term off, the reward climbs far past its early range while responses grow or degenerate.

    **What it detects.** Only on an LLM run whose KL term is off by configuration (TRL GRPO's
    ``beta = 0``, its default; veRL without a KL loss or KL in the reward: ``Run.kl_off``),
    where no KL metric can show the policy running away.  The evidence is then the reward and
    the samples, and two independent signals must agree:

    1. the reward's late median (last 10 %) stands more than ``spread`` early batch standard
       deviations (``reward/std``, the spread of one batch's samples; without it, of the early
       points) above its early median, for a sustained stretch: the mean of late batches is
       beyond what even the best early samples scored;
    2. the responses changed with it: ``len/response_mean`` grew at least ``growth`` times over
       the same stretch, or the late generated samples repeat themselves, are near-identical or
       are made of symbols (:func:`.textstats.hacking_evidence`).

    Then it is an error, from the step where the reward departed from its early level; an
    info note when a task the run measures beside the reward (an accuracy, a pass rate, a
    held-out evaluation: :func:`.outcome.task_improved`) rose clearly over the run, since answers
    that grow while they solve more are learning, not a hack.  A
    reward that rises within the range its early samples showed (a bounded accuracy or
    sentiment reward being learnt) never fires, nor a reward rise alone, nor a length growth
    alone (PD703 says that).

    **Why it matters.** Without a KL term nothing anchors the policy to its reference: the
    textbook hack is a reward paid per token or per pattern, and the policy learns to emit it
    (Skalse et al. 2022, "Defining and Characterizing Reward Hacking"; Gao et al. 2023, reward
    model overoptimisation).  DAPO and Dr. GRPO drop the KL term on purpose for verifiable
    rewards; with a learnt or heuristic reward that invites exactly this.

    **Known false positives.** Long chain-of-thought runs with an unbounded reward (a sum of
    per-step rewards) whose length growth is the goal: check the samples.

    **Source.** TRL GRPOTrainer (``beta`` default 0.0 since 0.19, grpo_config.py); DAPO (arXiv
    2503.14476, no KL term); Skalse et al. 2022 (arXiv 2209.13085); Gao et al. 2023 (arXiv
    2210.10760) (docs/sources.md#reward-hacking-kl-off).
    """

    code = "PD206"
    name = "reward-hacking-kl-off"
    symptom = "reward_hacking"
    severity = "error"
    basis = "outcome"
    requires = (("reward/score", "reward/total"),)
    params = {"spread": 3.0, "growth": 1.5, "min_points": 20}
    causes = {"reward-hacking-length": 0.9, "reward-model-flawed": 0.8, "kl-coef-too-low": 0.6}
    message = "with the KL term off, the reward rose {first:num} -> {late:num} ({sigmas:.1f} early batch std above its early level; past the early samples' range {since}) and {with_}"

    def evaluate(self, ctx: RuleContext) -> Iterator[Finding]:
        p = ctx.params
        if not ctx.view.kl_off or not ctx.view.is_llm_rl:
            return
        metric, s, v = ctx.req[0].metric, ctx.req[0].steps, ctx.req[0].values
        if len(v) < p["min_points"]:
            return
        first, late, w = early_late(v)
        spread = self._early_spread(ctx, v, w)
        if not spread > 0 or late <= first + p["spread"] * spread:
            return
        top = first + p["spread"] * spread
        k, win = sustain_window(ctx.planned_points(len(v)))
        spans = sustained_spans(s, v > top, k, win, values=v)
        if not spans:
            return
        partner = self._responses(ctx, int(spans[0].start_step))
        if not partner:
            return
        # a task the run measures beside the reward (an accuracy, a pass rate, a held-out
        # evaluation) that rose with it says the policy learned: longer answers that solve more
        # are no hack, and the two signals alone are then a note (a Tinker run whose LLM-judge
        # reward and judged correctness climb together while its answers grow 1.7x was stopped
        # live at step 29 of 50, blind set real47)
        task = task_improved(ctx)
        if task:
            partner = [*partner, f"but {task}: the task improves with the reward"]
        yield incident(
            self,
            ctx,
            metric=metric,
            steps=s,
            values=v,
            span=spans[0],
            direction="up",
            observed={"first": first, "late": late, "spread": spread, "sigmas": (late - first) / spread},
            peak_step=max(spans, key=lambda sp: sp.peak_value).peak_step,
            end_step=int(s[-1]),
            evidence=partner,
            severity="info" if task else self.severity,
            fmt={"with_": " and ".join(partner)},
        )

    @staticmethod
    def _early_spread(ctx: RuleContext, v: np.ndarray, w: int) -> float:
        """The early batch standard deviation (median of the first window of ``reward/std``),
        else the standard deviation of the early points."""
        if ctx.has("reward/std"):
            _, sd = ctx.finite("reward/std")
            if len(sd) >= w:
                return float(median(sd[:w]))
        return float(np.std(v[:w]))

    def _responses(self, ctx: RuleContext, since: int) -> list[str]:
        """What the responses show beside the reward: a length grown ``growth`` times since the
        reward left its early range, or degenerate late samples."""
        out: list[str] = []
        if ctx.has("len/response_mean"):
            s, v = ctx.finite("len/response_mean")
            if len(v) >= ctx.params["min_points"]:
                first, late, _ = early_late(v)
                after = v[s >= since]
                if first > 0 and late >= ctx.params["growth"] * first and len(after) and median(after) >= ctx.params["growth"] * first:
                    out.append(f"responses grew {late / first:.1f}x longer ({fmt_num(first)} -> {fmt_num(late)} tokens)")
        out += hacking_evidence(ctx.run.texts)
        return out

    @classmethod
    def bad_example(cls):
        # beta 0, a reward paid per '!': the mean climbs from 0.2 to 3 while responses double
        return Example(
            series={
                "reward/score": ramp(120, 0.2, 3.0, sd=0.1, seed=51, begin=40),
                "reward/std": flat(120, 0.7, 0.05, seed=52),
                "len/response_mean": ramp(120, 6.0, 14.0, sd=0.3, seed=53, begin=40),
            },
            config={"kl_coef": 0.0},
            framework="trl_grpo",
        )

    @classmethod
    def good_example(cls):
        # beta 0, a bounded reward learnt inside its early range, lengths steady
        return Example(
            series={
                "reward/score": ramp(120, 0.1, 0.5, sd=0.05, seed=54, begin=10),
                "reward/std": flat(120, 0.5, 0.05, seed=55),
                "len/response_mean": flat(120, 7.0, 0.3, seed=56),
            },
            config={"kl_coef": 0.0},
            framework="trl_grpo",
        )
