"""PD905 short-run."""

from __future__ import annotations

from .base import Example, Rule
from .examples import flat

CORE = ("reward/score", "reward/total", "kl/ref", "kl/old", "loss/policy", "loss/value", "loss/total")


class ShortRun(Rule):
    """The run is too short to judge trends.

    **What it detects.** The longest core metric (reward, KL, losses) has fewer than
    ``min_points`` points, or the log holds no scalar at all.

    **Why it matters.** Trend, onset and oscillation rules need history; on a short run they
    stay silent on purpose (conservative), so "no finding" means less than usual.

    **Known false positives.** None: it is context (info).

    **Source.** Quality bar of this project: be conservative on short runs; AUTOTRAINER only judges
    after 30 % of the epochs (docs/sources.md#short-runs).
    """

    code = "PD905"
    name = "short-run"
    symptom = "log_quality"
    severity = "info"
    basis = "log"
    requires = ()
    params = {"min_points": 20}
    causes = {}
    message = "{what}: trend and stability rules need at least {min_points} points and were not conclusive"

    def evaluate(self, ctx):
        frame = ctx.run.frame
        counts = {m: frame.count(m) for m in CORE if frame.has(m)}
        longest = max(counts.values(), default=0)
        if longest >= ctx.params["min_points"]:
            return
        if len(frame) == 0:
            what = "the log holds no scalar values"
        elif not counts:
            what = "no reward, KL or loss metric"
        else:
            what = f"only {longest} point(s) in the longest core metric"
        rng = frame.step_range()
        first, last = (None, None) if rng is None else rng
        yield self.finding(ctx, metric="", observed={"points": longest}, start_step=first, threshold_step=first, end_step=last, fmt={"what": what})

    @classmethod
    def bad_example(cls):
        return Example(series={"reward/score": flat(5, 1.0, 0.1)})

    @classmethod
    def good_example(cls):
        return Example(series={"reward/score": flat(50, 1.0, 0.1)})
