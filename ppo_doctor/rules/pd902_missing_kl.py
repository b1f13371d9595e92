"""PD902 missing-kl."""

from __future__ import annotations

from .base import Example, Rule
from .examples import flat, ramp


class MissingKL(Rule):
    """No KL-to-reference metric was found in an RLHF log.

    **What it detects.** The run has no ``kl/ref``.  Warning in general: the KL rules (blow-up,
    negative KL, reward hacking) could not run, so the run must not be called healthy *on KL*.
    Info when it is missing by design: GRPO with ``beta = 0`` (TRL's default since 0.19; veRL
    without ``use_kl_loss``/``use_kl_in_reward``), a configured KL coefficient of 0, or only the
    KL penalty term (``reward/kl_penalty``) is logged, or the run is offline preference
    optimisation (DPO and its kin: ``canonical.design``, the reference model is inside the loss), or nothing marks the log as an LLM run
    (an unknown framework without response lengths, text samples or a KL coefficient may well be
    classic RL).  Classic-RL runs (SB3, CleanRL) have no reference policy and are not flagged.

    **Why it matters.** The KL to the reference is the guides' main health signal for RLHF
    (policy collapse, hacking, negative KL); without it those symptoms are invisible.

    **Known false positives.** A KL logged under a custom name (map it with ``aliases``).

    **Source.** TRL GRPO ``beta = 0`` by default: a missing KL is normal
    (docs/sources.md#missing-kl-by-design); TRL GRPO docs; TRL Training FAQ (KL as the main
    stabiliser).
    """

    code = "PD902"
    name = "missing-kl"
    symptom = "log_quality"
    severity = "warning"
    basis = "log"
    requires = ()
    params = {}
    causes = {}
    message = "no KL-to-reference metric in this log{why}"

    def evaluate(self, ctx):
        run = ctx.run
        if ctx.has("kl/ref") or ctx.view.is_classic_rl or len(run.frame) == 0:
            return
        beta = ctx.view.cfg_float("kl_coef", "beta")
        if beta == 0:
            severity, why = "info", f": KL coefficient is 0 ({'GRPO ' if ctx.view.is_grpo else ''}beta=0), so no KL is computed by design"
        elif ctx.view.is_grpo and beta is None and ctx.run.framework_proof:
            severity, why = "info", ": GRPO logs no KL when beta=0 (TRL's default since 0.19)"
        elif ctx.view.is_grpo and beta is None:
            # a guess from metric names: TRL's default is not this run's setting
            severity, why = "info", ": the log looks like GRPO from its metric names, and TRL's GRPOTrainer logs none when beta=0; whether this run's KL term was off the log does not say"
        elif "kl" in run.by_design:  # an offline preference trainer: the reference is inside its loss
            severity, why = "info", f": {run.by_design['kl']}"
        elif ctx.has("reward/kl_penalty"):
            severity, why = "info", ": only the KL penalty term (reward/kl_penalty) is logged; KL health judged only through it"
        elif not ctx.view.is_llm_rl:
            severity, why = "info", ": nothing marks this log as LLM RL (classic RL has no reference policy); KL health not judged"
        else:
            severity, why = "warning", ": KL blow-up, negative KL and reward hacking were not judged"
        rng = run.frame.step_range()
        first, last = (None, None) if rng is None else rng
        yield self.finding(
            ctx,
            metric="kl/ref",
            observed={},
            start_step=first,
            threshold_step=first,
            end_step=last,
            severity=severity,
            fmt={"why": why},
        )

    @classmethod
    def bad_example(cls):
        return Example(series={"reward/score": flat(20, 1.0, 0.1), "loss/policy": flat(20, 0.3, 0.05)}, framework="openrlhf")

    @classmethod
    def good_example(cls):
        return Example(series={"reward/score": ramp(20, 1.0, 2.0, sd=0.1), "kl/ref": flat(20, 2.0, 0.1)})
