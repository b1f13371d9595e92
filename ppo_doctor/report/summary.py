"""Small views of a :class:`RunReport` shared by the human formats (text, Markdown, HTML)."""

from __future__ import annotations

from collections import Counter

from ..canonical.design import FAMILY_RULES
from ..results import SEVERITY_RANK, Cost, Finding, NotApplicable, Report, RunReport
from ..verdict import unhealthy_reason
from .escape import plain

TOP_CAUSES = 3


def verdict_line(rr: RunReport, *, findings_listed: bool = False) -> str:
    """``UNHEALTHY: kl_blowup from step 410 (PD101 ...): <message>`` (plain, log text stripped):
    the verdict and its one-sentence reason, the same in every output.

    ``findings_listed``: the report lists every finding under this line, so the deciding
    finding's message is left out here (it is shown once, on its own line).
    """
    brief = unhealthy_reason(rr.findings, with_message=False) if findings_listed and rr.verdict == "unhealthy" else ""
    reason = plain(brief or rr.verdict_reason)
    if rr.verdict == "healthy":
        return "HEALTHY" + (f": {reason}" if reason else "")
    if rr.verdict == "unknown":
        return "UNKNOWN: " + (reason or "the run lacks the metrics to judge")
    return f"{rr.verdict.upper()}: {reason or ', '.join(rr.symptoms)}"


def hours_text(hours: float) -> str:
    """``2.5 h``, or minutes under an hour (``12 min``)."""
    return f"{hours:.3g} h" if hours >= 1 else f"{hours * 60:.3g} min"


def cost_line(cost: Cost) -> str:
    """``cost: 112 of 119 steps (94 %) trained after the onset at step 8; 1.87 min of wall time
    (wall-clock times)``, with device-hours when the config names the devices."""
    out = (
        f"cost: {cost.steps_after} of {cost.steps} steps "
        f"({cost.share:.0%}) trained after the onset at step {cost.onset_step}"
    )
    if cost.hours_after is not None:
        out += f"; {hours_text(cost.hours_after)} of wall time (from {cost.hours_from})"
        if cost.device_hours is not None:
            out += f" on {cost.devices} devices ({cost.devices_from}) = {cost.device_hours:.3g} device-hours"
    return out


def ordered_findings(rr: RunReport) -> list[Finding]:
    """Worst first, then by onset step, then by code."""
    return sorted(rr.findings, key=lambda f: (-SEVERITY_RANK[f.severity], f.start_step or 0, f.code))


def severity_counts(rr: RunReport) -> str:
    """``2 error, 1 warning``, and ``3 known (baseline)`` for the findings a baseline left out,
    so that a run whose findings are all known never reads UNHEALTHY with none (empty when
    there is no finding at all)."""
    counts = Counter(f.severity for f in rr.findings)
    known = [f"{rr.known} known (baseline)"] if rr.known else []
    return ", ".join([f"{counts[s]} {s}" for s in ("error", "warning", "info") if counts[s]] + known)


def verdict_tally(report: Report) -> str:
    """``2 unhealthy, 1 healthy`` over every run of the report."""
    verdicts = Counter(rr.verdict for rr in report.runs)
    return ", ".join(f"{verdicts[v]} {v}" for v in ("unhealthy", "unknown", "healthy") if verdicts[v])


def split_not_applicable(rr: RunReport) -> tuple[list[NotApplicable], list[str]]:
    """The rules that lack a metric the log should have had, and one sentence per thing the run
    lacks by design (``critic-free (...): the value-function rules do not apply``)."""

    missing = [n for n in rr.not_applicable if not n.by_design]
    said: list[str] = []
    for family, why in rr.run.by_design.items():
        if any(n.by_design == why for n in rr.not_applicable):
            said.append(f"{why}: {FAMILY_RULES.get(family, 'its rules')} do not apply")
    return missing, said
