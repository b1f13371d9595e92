"""``ppo-doctor compare RUN_A RUN_B``: what changed between two runs.

Verdicts, the findings present in one run and not the other (matched by rule code and
metric, since onsets move between runs), the top causes of each, and the core metrics side
by side (first / last / min / max of the finite values, plus how many were NaN/Inf).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..findings import Finding
from .escape import fmt_num, md, plain, step_span
from .json_out import dumps
from .model import RunReport
from .summary import TOP_CAUSES, verdict_line

# Core metrics of the guides (reference/guides-digest.md "Metrics the guides say to watch");
# the first present alternative is used, so runs logging reward/total only still compare.
CORE_METRICS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("reward", ("reward/score", "reward/total")),
    ("KL", ("kl/ref",)),
    ("value loss", ("loss/value",)),
    ("entropy", ("policy/entropy",)),
    ("grad norm", ("grad/norm",)),
)
STATS = ("first", "last", "min", "max")


@dataclass
class MetricStats:
    """Summary of one metric of one run (None when the run does not log it)."""

    metric: str | None
    first: float | None = None
    last: float | None = None
    min: float | None = None
    max: float | None = None
    nonfinite: int = 0


@dataclass
class Comparison:
    """The differences between two analysed runs."""

    a: RunReport
    b: RunReport
    only_a: list[Finding] = field(default_factory=list)
    only_b: list[Finding] = field(default_factory=list)
    both: list[tuple[Finding, Finding]] = field(default_factory=list)
    metrics: list[tuple[str, MetricStats, MetricStats]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        def side(rr: RunReport) -> dict[str, Any]:
            return {
                "run": rr.run.id,
                "path": rr.run.path,
                "verdict": rr.verdict,
                "symptoms": rr.symptoms,
                "top_causes": [c.to_dict() for c in rr.causes[:TOP_CAUSES]],
            }

        return {
            "a": side(self.a),
            "b": side(self.b),
            "only_a": [f.to_dict() for f in self.only_a],
            "only_b": [f.to_dict() for f in self.only_b],
            "both": [{"a": fa.to_dict(), "b": fb.to_dict()} for fa, fb in self.both],
            "metrics": [
                {"name": name, "a": sa.__dict__, "b": sb.__dict__} for name, sa, sb in self.metrics
            ],
        }


def metric_stats(rr: RunReport, candidates: tuple[str, ...]) -> MetricStats:
    """First/last/min/max of the first metric in ``candidates`` that the run logs."""
    frame = rr.run.frame
    metric = next((m for m in candidates if frame.has(m)), None)
    if metric is None:
        return MetricStats(metric=None)
    values = frame.series(metric).to_numpy(dtype=np.float64)
    finite = values[np.isfinite(values)]
    stats = MetricStats(metric=metric, nonfinite=int(len(values) - len(finite)))
    if len(finite):
        stats.first, stats.last = float(finite[0]), float(finite[-1])
        stats.min, stats.max = float(finite.min()), float(finite.max())
    return stats


def compare(a: RunReport, b: RunReport) -> Comparison:
    """Compare two analysed runs."""
    key = lambda f: (f.code, f.metric)  # noqa: E731 - a finding's identity across runs
    in_a = {key(f): f for f in a.findings}
    in_b = {key(f): f for f in b.findings}
    return Comparison(
        a=a,
        b=b,
        only_a=[f for k, f in in_a.items() if k not in in_b],
        only_b=[f for k, f in in_b.items() if k not in in_a],
        both=[(f, in_b[k]) for k, f in in_a.items() if k in in_b],
        metrics=[(name, metric_stats(a, alts), metric_stats(b, alts)) for name, alts in CORE_METRICS],
    )


def _finding_line(f: Finding) -> str:
    return f"{f.severity} {f.code} {f.name} on {f.metric}, steps {step_span(f.start_step, f.end_step)}: {f.message}"


def _stat_cells(s: MetricStats) -> list[str]:
    if s.metric is None:
        return ["-"] * len(STATS)
    return [fmt_num(getattr(s, k)) for k in STATS]


def render_text(c: Comparison) -> str:
    """Plain text (log-derived strings stripped of control characters)."""
    out = [f"A: {plain(c.a.run.id)}  {verdict_line(c.a)}", f"B: {plain(c.b.run.id)}  {verdict_line(c.b)}", ""]
    for title, items in (("only in A", c.only_a), ("only in B", c.only_b)):
        out.append(f"{title}:" + ("" if items else " none"))
        out += [f"  {plain(_finding_line(f))}" for f in items]
    if c.both:
        out.append("in both:")
        out += [
            f"  {plain(fa.code)} {plain(fa.metric)}: onset {fa.start_step} (A) vs {fb.start_step} (B)" for fa, fb in c.both
        ]
    out += ["", "top causes:"]
    for label, rr in (("A", c.a), ("B", c.b)):
        causes = ", ".join(f"{plain(x.title)} ({fmt_num(x.confidence, 2)})" for x in rr.causes[:TOP_CAUSES])
        out.append(f"  {label}: {causes or 'none'}")
    out += ["", f"{'metric':<12} {'':<2} " + " ".join(f"{s:>10}" for s in STATS) + f" {'NaN/Inf':>8}"]
    for name, sa, sb in c.metrics:
        for label, s in (("A", sa), ("B", sb)):
            shown = name if label == "A" else ""
            out.append(f"{shown:<12} {label:<2} " + " ".join(f"{v:>10}" for v in _stat_cells(s)) + f" {s.nonfinite:>8}")
    return "\n".join(out) + "\n"


def render_markdown(c: Comparison) -> str:
    """A GitHub-flavoured Markdown comparison."""
    out = [
        "# ppo-doctor compare",
        "",
        f"- **A** {md(c.a.run.id)}: {md(verdict_line(c.a))}",
        f"- **B** {md(c.b.run.id)}: {md(verdict_line(c.b))}",
        "",
    ]
    for title, items in (("Only in A", c.only_a), ("Only in B", c.only_b)):
        out += [f"## {title}", ""] + ([f"- {md(_finding_line(f))}" for f in items] or ["none"]) + [""]
    out += ["## Top causes", "", "| | causes |", "|---|---|"]
    for label, rr in (("A", c.a), ("B", c.b)):
        out.append(f"| {label} | " + (md(", ".join(x.title for x in rr.causes[:TOP_CAUSES])) or "none") + " |")
    out += ["", "## Core metrics", "", "| metric | run | " + " | ".join(STATS) + " | NaN/Inf |", "|---" * (len(STATS) + 3) + "|"]
    for name, sa, sb in c.metrics:
        for label, s in (("A", sa), ("B", sb)):
            out.append(f"| {name} | {label} | " + " | ".join(_stat_cells(s)) + f" | {s.nonfinite} |")
    return "\n".join(out) + "\n"


def render_json(c: Comparison) -> str:
    """The comparison as strict JSON."""
    return dumps(c.to_dict()) + "\n"


RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}
