"""PD952 identical-generations."""

from __future__ import annotations

from .base import Example
from .examples import PLAIN_SAMPLES
from .shapes import TextSampleRule
from .textstats import near_duplicate_share, split_early_late


class IdenticalGenerations(TextSampleRule):
    """Late samples for different prompts are near-identical: the policy collapsed to one answer.

    **What it detects.** Among the text samples from the last quarter of the sampled steps (at
    least ``min_samples``), the share that has a near-identical twin (Jaccard similarity of
    word 3-grams >= 0.8) is at least ``max_share`` (0.5), while the early samples were
    diverse.  When prompts are logged, only samples for different prompts are compared.

    **Why it matters.** Mode collapse: huggingface/trl#204 ended with "every prompt gets the same
    response" while the reward converged and the KL kept growing.  The policy has found one
    output the reward model likes; diversity (and usefulness) is gone.

    With samples from one step only there is nothing to have collapsed from: the finding is an
    info note (a structured task, a JSON action per state, answers alike by design).

    **Known false positives.** Tasks with one canonical answer (classification-style prompts,
    refusals by design); samples that all come from the same prompt.

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan
    the finding is an info note saying what is watched, until ``fair_share``
    of the plan (default 1.0: all of it) is behind the run, past warm-up; a live run with no
    known plan is judged when it ends (:mod:`ppo_doctor.standing`).

    **Source.** huggingface/trl#204; the guides ("compare with the SFT model's samples")
    (docs/sources.md#generated-text).
    """

    code = "PD952"
    name = "identical-generations"
    symptom = "entropy_collapse"
    severity = "warning"
    basis = "outcome"
    evidence = "trend"
    requires = ()
    params = {"max_share": 0.5, "min_samples": 4}
    causes = {"kl-coef-too-low": 0.8, "reward-model-flawed": 0.7, "lr-too-high": 0.4}
    message = "{share:.0%} of late samples are near-identical across prompts ({early})"

    def evaluate(self, ctx):
        p = ctx.params
        early, late = split_early_late(ctx.run.texts)
        if len({s.prompt for s in late if s.prompt is not None}) == 1 and all(s.prompt is not None for s in late):
            return  # one prompt sampled several times: identical answers are not a collapse
        if len(late) < p["min_samples"]:
            return
        share = near_duplicate_share([s.text for s in late])
        if share < p["max_share"]:
            return
        one_step = early == late  # one sampled step: no earlier samples to have been diverse
        early_share = near_duplicate_share([s.text for s in early])
        if not one_step and early_share >= p["max_share"]:
            return
        first = min(s.step for s in late)
        yield self.finding(
            ctx,
            metric="texts",
            observed={"share": share, "samples": len(late), **({} if one_step else {"early": early_share})},
            start_step=first,
            threshold_step=first,
            peak_step=max(s.step for s in late),
            end_step=max(s.step for s in late),
            evidence=[f"e.g. {late[0].text[:100]!r}"],
            # a collapse is a change: with samples from one step only, a task with one answer per
            # state (a JSON action, a label) looks the same, so it is a note
            severity="info" if one_step else self.severity,
            fmt={"early": "no earlier sampled step" if one_step else f"early: {early_share:.0%}"},
        )

    @classmethod
    def bad_example(cls):
        same = "Thank you for your question! I am happy to help with anything you need today."
        return Example(series={}, texts=[(0, t) for t in PLAIN_SAMPLES] + [(400, same)] * 3 + [(400, same + " Really.")])

    @classmethod
    def good_example(cls):
        return Example(series={}, texts=[(0, t) for t in PLAIN_SAMPLES] + [(400, t) for t in PLAIN_SAMPLES])
