"""``ppo-doctor compare RUN_A RUN_B``: what changed between two runs.

First the config values that differ (the changed ``kl_coef`` or learning rate is usually
what a user looks for; canonical hyper-parameters in :data:`ppo_doctor.canonical.hparams.HPARAMS`
order, then the rest by name), then the verdicts, the findings present in one run and not
the other (matched by rule code and metric, since onsets move between runs), the top causes
of each, and the core metrics side by side (first / last / min / max of the finite values,
plus how many were NaN/Inf).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..canonical.hparams import HPARAM_KEYS
from ..results import Finding, RunReport
from .escape import fmt_num, md, plain, step_span
from .json_out import dumps, finite_json
from .summary import TOP_CAUSES, verdict_line

# Core metrics of the guides, mean reward and KL first (docs/sources.md#guides);
# the first present alternative is used, so runs logging reward/total only still compare.
CORE_METRICS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("reward", ("reward/score", "reward/total")),
    ("KL", ("kl/ref",)),
    ("value loss", ("loss/value",)),
    ("entropy", ("policy/entropy",)),
    ("grad norm", ("grad/norm",)),
)
STATS = ("first", "last", "min", "max")
MAX_VALUE_CHARS = 60  # a config value shown in a comparison (lists, long paths) is cut here
MISSING = "(not set)"


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
    config: list[tuple[str, Any, Any]] = field(default_factory=list)  # (key, A's value, B's value)

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
            "config_changes": [{"key": k, "a": finite_json(va), "b": finite_json(vb)} for k, va, vb in self.config],
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
    values = frame.arrays(metric)[1]
    finite = values[np.isfinite(values)]
    stats = MetricStats(metric=metric, nonfinite=int(len(values) - len(finite)))
    if len(finite):
        stats.first, stats.last = float(finite[0]), float(finite[-1])
        stats.min, stats.max = float(finite.min()), float(finite.max())
    return stats


_ABSENT = object()


def config_changes(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """The keys whose values differ (or that only one run sets), most telling first."""

    rank = {k: i for i, k in enumerate(HPARAM_KEYS)}
    keys = sorted(set(a) | set(b), key=lambda k: (rank.get(k, len(rank)), str(k)))
    out = []
    for k in keys:
        va, vb = a.get(k, _ABSENT), b.get(k, _ABSENT)
        if va is vb or (va is not _ABSENT and vb is not _ABSENT and _same(va, vb)):
            continue
        out.append((str(k), MISSING if va is _ABSENT else va, MISSING if vb is _ABSENT else vb))
    return out


def _same(x: Any, y: Any) -> bool:
    """Equal values; 4 and 4.0 are the same setting, True and 1 are not."""
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (x, y))
    if type(x) is not type(y) and not numbers:
        return False
    try:
        return bool(x == y)
    except (TypeError, ValueError):  # e.g. numpy arrays compare elementwise
        return repr(x) == repr(y)


def _value(v: Any) -> str:
    text = plain(v if isinstance(v, str) else repr(v))
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 3] + "..."


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
        config=config_changes(a.run.config, b.run.config),
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
    out.append("config changes:" + ("" if c.config else " none"))
    width = max((len(plain(k)) for k, _, _ in c.config), default=0)
    out += [f"  {plain(k):<{width}}  {_value(va)} -> {_value(vb)}" for k, va, vb in c.config]
    out.append("")
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
        "## Config changes",
        "",
    ]
    if c.config:
        out += ["| key | A | B |", "|---|---|---|"] + [f"| {md(k)} | {md(_value(va))} | {md(_value(vb))} |" for k, va, vb in c.config]
    else:
        out.append("none")
    out.append("")
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
