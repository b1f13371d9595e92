"""PD951 repetitive-generations."""

from __future__ import annotations

from .base import Example
from .examples import PLAIN_SAMPLES
from .shapes import TextSampleRule
from .textstats import mean, repetition, split_early_late, top_phrase

LOOPED = [
    "This movie is great great great. This movie is great great great. This movie is great great great.",
    "Best film ever ever ever. Best film ever ever ever. Best film ever ever ever. Best film ever ever.",
    "I love it I love it I love it I love it I love it I love it I love it",
    "Amazing amazing amazing amazing amazing amazing amazing amazing amazing",
]


class RepetitiveGenerations(TextSampleRule):
    """Late generated samples repeat the same phrase over and over.

    **What it detects.** In the text samples from the last quarter of the sampled steps, the
    mean share of repeated word 3-grams is at least ``max_repetition`` (0.5) and at least
    ``min_increase`` above the early samples' (so a task whose answers are repetitive by nature
    does not fire).

    **Why it matters.** Repetition is the most common footprint of reward-model exploitation:
    the reward model scores a phrase highly and the policy says it again and again (the guides'
    "repeated phrases, unnatural style"; MOSS-RLHF#17: failed models repeat one sentence up to
    the maximum length).  Read the samples; add a repetition penalty to the reward, raise the
    KL penalty.

    With samples from one step only there is no earlier level to rise from: an info note.

    **Known false positives.** Lists, code and poems with refrains; very short samples (below
    six 3-grams they count as not repeated).

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan
    the finding is an info note saying what is watched, until ``fair_share``
    of the plan (default 1.0: all of it) is behind the run, past warm-up; a live run with no
    known plan is judged when it ends (:mod:`ppo_doctor.standing`).

    **Source.** The guides ("inspect generated text"); OpenLMLab/MOSS-RLHF#17; OLMo 2 on repeated
    n-grams (docs/sources.md#generated-text).
    """

    code = "PD951"
    name = "repetitive-generations"
    symptom = "reward_hacking"
    severity = "warning"
    basis = "outcome"
    evidence = "trend"
    requires = ()
    params = {"max_repetition": 0.5, "min_increase": 0.2}
    causes = {"reward-model-flawed": 1.0, "reward-hacking-length": 0.8, "kl-coef-too-low": 0.5}
    message = "late samples repeat themselves ({late:.0%} repeated 3-grams, {early}), e.g. '{phrase}' x{count}"

    def evaluate(self, ctx):
        p = ctx.params
        early, late = split_early_late(ctx.run.texts)
        late_rep = mean([repetition(s.text) for s in late])
        one_step = early == late  # one sampled step: nothing to compare the repetition with
        early_rep = 0.0 if one_step else mean([repetition(s.text) for s in early])
        if late_rep < p["max_repetition"] or late_rep - early_rep < p["min_increase"]:
            return
        phrase, count = top_phrase([s.text for s in late])
        steps = sorted(s.step for s in late if repetition(s.text) >= p["max_repetition"]) or [late[0].step]
        yield self.finding(
            ctx,
            metric="texts",
            observed={"late": late_rep, **({} if one_step else {"early": early_rep})},
            start_step=steps[0],
            threshold_step=steps[0],
            peak_step=steps[-1],
            end_step=max(s.step for s in late),
            evidence=[f"sample at step {steps[-1]}: {next(s.text for s in late if s.step == steps[-1])[:120]!r}"],
            # a task whose answers repeat by nature looks the same at a single sampled step
            severity="info" if one_step else self.severity,
            fmt={"phrase": phrase[:60], "count": count, "early": "no earlier sampled step" if one_step else f"early {early_rep:.0%}"},
        )

    @classmethod
    def bad_example(cls):
        return Example(series={}, texts=[(0, t) for t in PLAIN_SAMPLES] + [(500, t) for t in LOOPED])

    @classmethod
    def good_example(cls):
        return Example(series={}, texts=[(0, t) for t in PLAIN_SAMPLES] + [(500, t) for t in reversed(PLAIN_SAMPLES)])
