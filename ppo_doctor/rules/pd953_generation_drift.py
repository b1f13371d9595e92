"""PD953 generation-drift."""

from __future__ import annotations

from .base import Example
from .examples import PLAIN_SAMPLES
from .shapes import TextSampleRule
from .textstats import js_divergence, mean, split_early_late, unusual_char_share

SPAM = [
    "Wow!!! Best movie ever!!! 😍😍😍 !!!",
    "!!! Amazing !!! 🔥🔥🔥 Loved it !!! 🔥",
    "So good!!!!! 😍😍 10/10 !!!!! 🎉🎉",
    "Great!!! 👍👍👍 Must watch!!! 👍",
]


class GenerationDrift(TextSampleRule):
    """Late samples drift away from the early ones into an unnatural style.

    **What it detects.** Compares the samples of the first and last quarter of the sampled
    steps.  Warning when the late samples are at least ``max_unusual`` (10 %) symbols, emoji
    or '!' and at least twice the early share: the excessive exclamation marks and emoji of the
    TRL FAQ.  Info when only the vocabulary drifted strongly (Jensen-Shannon divergence of the
    word distributions at least ``max_js``), which training is meant to do to some degree.

    **Why it matters.** The TRL FAQ's reason for a KL penalty: optimising the reward alone lets
    the policy find patterns that score high but are not good language.  Drift in style is how
    that shows in the samples before the metrics make it obvious.

    **Known false positives.** Tasks whose outputs are code, math or markup (many symbols by
    nature), or whose style is meant to change (a persona).

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan
    the finding is an info note saying what is watched, until ``fair_share``
    of the plan (default 1.0: all of it) is behind the run, past warm-up; a live run with no
    known plan is judged when it ends (:mod:`ppo_doctor.standing`).

    **Source.** TRL Training FAQ ("why a reference model and KL"); the guides ("compare with the
    SFT model's samples") (docs/sources.md#generated-text).
    """

    code = "PD953"
    name = "generation-drift"
    symptom = "reward_hacking"
    severity = "warning"
    basis = "outcome"
    evidence = "trend"
    requires = ()
    params = {"max_unusual": 0.1, "max_js": 0.6}
    causes = {"reward-model-flawed": 0.9, "kl-coef-too-low": 0.6}
    message = "late samples drifted from the early ones: {what}"

    def evaluate(self, ctx):
        p = ctx.params
        early, late = split_early_late(ctx.run.texts)
        if early == late:
            return  # one sample step: nothing to compare
        odd_early = mean([unusual_char_share(s.text) for s in early])
        odd_late = mean([unusual_char_share(s.text) for s in late])
        js = js_divergence([s.text for s in early], [s.text for s in late])
        if odd_late >= p["max_unusual"] and odd_late >= 2 * odd_early:
            severity = "warning"
            what = f"{odd_late:.0%} of their characters are symbols, emoji or '!' (early: {odd_early:.0%})"
        elif js >= p["max_js"]:
            severity = "info"
            what = f"their vocabulary changed strongly (Jensen-Shannon divergence {js:.2f})"
        else:
            return
        first = min(s.step for s in late)
        yield self.finding(
            ctx,
            metric="texts",
            observed={"unusual_early": odd_early, "unusual_late": odd_late, "js": js},
            start_step=first,
            threshold_step=first,
            peak_step=max(s.step for s in late),
            end_step=max(s.step for s in late),
            severity=severity,
            evidence=[f"early: {early[0].text[:80]!r}", f"late: {late[-1].text[:80]!r}"],
            fmt={"what": what},
        )

    @classmethod
    def bad_example(cls):
        return Example(series={}, texts=[(0, t) for t in PLAIN_SAMPLES] + [(300, t) for t in SPAM])

    @classmethod
    def good_example(cls):
        return Example(series={}, texts=[(0, t) for t in PLAIN_SAMPLES] + [(300, t) for t in reversed(PLAIN_SAMPLES)])
