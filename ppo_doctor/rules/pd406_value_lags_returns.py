"""PD406 value-lags-returns."""

from __future__ import annotations

import numpy as np

from ..detect import align, early_late, sustained_spans
from .base import Example, Rule
from .examples import flat, saturating
from .incidents import incident, sustain_window
from .messages import fmt_num


class ValueLagsReturns(Rule):
    """The critic's mean prediction stays far from the mean return it is trained on.

    **What it detects.** The gap between ``return/mean`` (the value targets) and
    ``value/mean`` (the critic's predictions), in units of the scores' spread across the batch
    (``reward/std``).  Warning when, at the end of the run, the gap's median is more than
    ``bias_max`` (1) standard deviation of the scores and more than ``rel_min`` (10 %) of the
    mean return, and the gap stays that wide for a sustained stretch (the usual k-of-n window).

    **Why it matters.** Explained variance is blind to this: it compares variances, so a
    critic that follows the returns' ups and downs but sits far below them scores well.
    A constant bias is not harmless in GAE: with gamma = 1 each token's advantage carries a
    different share of it, so the advantages tilt along the response instead of ranking
    actions.  The typical cause is a reward on a scale the critic cannot follow: value
    clipping (TRL ``cliprange_value`` 0.2, in reward units) and a small value learning rate
    with gradient clipping let the prediction crawl toward returns in the tens or hundreds
    (DeepSpeedExamples#556; the guides' "normalise rewards").  Also a value learning rate far
    too low, or a critic with too few updates.

    **Known false positives.** The first steps of any run, while an untrained value head
    starts at zero (only the end of the run is judged); a batch whose scores are all equal
    has no spread to measure against: such updates (``RunView.returns``) are not counted, and
    the 10 % floor keeps such runs quiet unless the gap is large against the returns themselves.

    **Evidence.** A trend: judged on the whole run.  On a live run short of its plan
    the finding is an info note saying what is watched, until ``fair_share``
    of the plan (default 1.0: all of it) is behind the run, past warm-up; a live run with no
    known plan is judged when it ends (:mod:`ppo_doctor.standing`).

    **Source.** The troubleshooting guide (value-function instability; reward normalisation); TRL
    legacy ``ppo/val/mean`` and ``ppo/returns/mean``, veRL ``critic/values/mean`` and
    ``critic/returns/mean``; DeepSpeedExamples#556 (docs/sources.md#value-loss).
    """

    code = "PD406"
    name = "value-lags-returns"
    symptom = "value_instability"
    severity = "warning"
    basis = "outcome"
    evidence = "trend"
    requires = ("value/mean", "return/mean", "reward/std")
    params = {"bias_max": 1.0, "rel_min": 0.1, "min_points": 20}
    causes = {"reward-not-normalized": 0.7, "value-lr-mistuned": 0.5, "value-undertrained": 0.5}
    message = (
        "the critic's mean prediction ends {late_gap:num} away from the mean return ({late_value:num} vs {late_return:num}), "
        "{late_ratio:num}x the scores' standard deviation: it does not keep up with its targets"
    )

    def evaluate(self, ctx):
        p = ctx.params
        (sv, vv), (sr, rv), (sd_s, sd_v) = ((x.steps, x.values) for x in ctx.req)
        steps, iv, ir = align(sv, sr)
        steps, i2, isd = align(steps, sd_s)
        if len(steps) < p["min_points"]:
            return
        value, ret, sd = vv[iv][i2], rv[ir][i2], np.abs(sd_v[isd])
        gap = np.abs(ret - value)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(sd > 0, gap / sd, np.inf)
        # an update whose scores were all equal has no spread to measure the gap in
        over = (ratio > p["bias_max"]) & (gap > p["rel_min"] * np.abs(ret)) & ~ctx.view.returns.constant_at(steps)
        _, late_gap, w = early_late(gap)
        _, late_ratio, _ = early_late(ratio)
        _, late_ret, _ = early_late(ret)
        if not (late_ratio > p["bias_max"] and late_gap > p["rel_min"] * abs(late_ret)):
            return
        k, n = sustain_window(ctx.planned_points(len(steps)))
        spans = sustained_spans(steps, over, k, n, values=gap)
        if not spans or spans[-1].end_step < int(steps[len(steps) - w]):
            return  # the gap closed before the last points: a critic that caught up
        last = spans[-1]
        _, late_value, _ = early_late(value)
        shown = min(late_ratio, 1e6)
        yield incident(
            self,
            ctx,
            metric="value/mean",
            steps=steps,
            values=gap,
            span=last,
            direction="up",
            observed={"late_gap": late_gap, "late_ratio": shown, "late_return": late_ret, "late_value": late_value},
            evidence=[
                f"over the last {w} points: mean return {fmt_num(late_ret)}, mean value {fmt_num(late_value)}, "
                f"scores' std {fmt_num(early_late(sd)[1])}",
                f"{int(over.sum())} of {len(steps)} points with the gap over {fmt_num(p['bias_max'])} std",
            ],
        )

    @classmethod
    def bad_example(cls):
        # rewards x100: returns climb to ~80 while value clipping lets the prediction crawl to ~9
        n = 120
        return Example(
            series={
                "return/mean": saturating(n, 5.0, 80.0, sd=4.0, seed=60),
                "value/mean": saturating(n, 0.0, 9.0, sd=0.2, seed=61),
                "reward/std": saturating(n, 68.0, 28.0, sd=3.0, seed=62),
            }
        )

    @classmethod
    def good_example(cls):
        # the critic starts at zero and catches up within the first tenth of the run
        n = 120
        ret = saturating(n, 0.5, 0.9, sd=0.03, seed=63)
        value = ret - np.r_[np.linspace(0.5, 0.0, 12), np.zeros(n - 12)] + flat(n, 0.0, 0.02, seed=64)
        return Example(series={"return/mean": ret, "value/mean": value, "reward/std": flat(n, 0.4, 0.03, seed=65)})
