"""``--format markdown``: a GitHub-flavoured Markdown report (PR comments, job summaries).

A summary table across runs, then per run its verdict, findings table, top causes with
fixes, the rules that could not run, warnings and a few logged text samples.  Log-derived
text goes through :func:`escape.md` (inline, tables) or :func:`escape.md_fenced` (fenced
samples), so ``|``, backticks, ``<`` and control characters cannot break the layout or
smuggle HTML into a renderer that allows it.
"""

from __future__ import annotations

from .._version import __version__
from ..results import Report, RunReport
from . import RenderOptions
from .escape import fmt_num, md, md_fenced, step_span
from .summary import TOP_CAUSES, cost_line, ordered_findings, severity_counts, split_not_applicable, verdict_line, verdict_tally

MAX_SAMPLES = 3
MAX_SAMPLE_CHARS = 600


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A GFM table; cells must already be escaped."""
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def _summary(report: Report) -> list[str]:
    rows = []
    for rr in report.runs:
        rows.append(
            [
                md(rr.run.id),
                f"**{rr.verdict}**",
                md(", ".join(rr.symptoms)) or "-",
                severity_counts(rr) or "-",
                md(rr.causes[0].title) if rr.causes else "-",
            ]
        )
    return _table(["run", "verdict", "symptoms", "findings", "top cause"], rows)


def _run(rr: RunReport) -> list[str]:
    run = rr.run
    rng = run.frame.step_range()
    out = [f"## {md(run.id)}", "", f"**{md(verdict_line(rr, findings_listed=True))}**", ""]
    steps = "no steps" if rng is None else f"steps {rng[0]}-{rng[1]}"
    out.append(f"{md(run.path)} ({md(run.framework)}, {md(run.format)}, {steps}, {len(run.frame)} points)")
    out.append("")
    if rr.findings:
        out += ["### Findings", ""]
        rows = [
            [
                f.severity,
                f"{md(f.code)} {md(f.name)}",
                md(f.symptom),
                md(f.metric),
                "-" if f.start_step is None else str(f.start_step),
                step_span(f.start_step, f.end_step),
                md(f.message),
            ]
            for f in ordered_findings(rr)
        ]
        out += _table(["severity", "rule", "symptom", "metric", "onset", "steps", "message"], rows) + [""]
    if rr.cost is not None:
        out += [md(cost_line(rr.cost)), ""]
    if rr.causes:
        out += ["### Likely causes", ""]
        for i, c in enumerate(rr.causes[:TOP_CAUSES], 1):
            out.append(f"{i}. **{md(c.title)}** ({md(c.id)}, confidence {fmt_num(c.confidence, 2)})")
            for ev in c.evidence_for:
                out.append(f"   - because {md(ev)}")
            for ev in c.evidence_against:
                out.append(f"   - against: {md(ev)}")
            for fix in c.fixes:
                out.append(f"   - **try:** {md(fix)}")
        out.append("")
    missing, by_design = split_not_applicable(rr)
    if missing or by_design:
        out += ["### Rules that could not run", ""]
        out += [f"- {md(why)}" for why in by_design]
        out += [f"- {md(n.code)} {md(n.name)}: missing {md(', '.join(n.missing))}" for n in missing]
        out.append("")
    if run.warnings:
        out += ["### Reader warnings", ""] + [f"- {md(w)}" for w in run.warnings] + [""]
    if run.texts:
        out += ["### Text samples", ""]
        for t in run.texts[:MAX_SAMPLES]:
            reward = "" if t.reward is None else f", reward {fmt_num(t.reward)}"
            out.append(f"step {t.step} ({md(t.tag)}{reward}):")
            out += ["", md_fenced(t.text[:MAX_SAMPLE_CHARS]), ""]
    return out


def render(report: Report, options: RenderOptions) -> str:
    """The whole Markdown report."""
    tally = verdict_tally(report)
    out = ["# ppo-doctor report", "", f"ppo-doctor {__version__}: {len(report.runs)} run(s)" + (f" ({tally})" if tally else ""), ""]
    if report.runs:
        out += _summary(report) + [""]
    for rr in report.runs:
        out += _run(rr)
    if report.errors:
        out += ["## Read problems", ""] + [f"- {e.level}: {md(str(e))}" for e in report.errors] + [""]
    return "\n".join(out).rstrip("\n") + "\n"
