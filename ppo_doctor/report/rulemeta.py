"""The rules a report covers, for the machine-readable formats (SARIF rule descriptors, JUnit
test cases).

A renderer is a pure function of the report: the rule metadata travels in it
(:attr:`Report.rules <ppo_doctor.results.Report.rules>`, filled by the analysis from the rule
registry, the single source of each rule's code, name, summary, docstring and default
severity).  A rule that fired but that list lacks (a report built elsewhere, or by an older
version) is still described from its findings, so no result ever points at a missing
descriptor.
"""

from __future__ import annotations

from typing import Iterable

from ..results import Finding, Report, RuleMeta


def _from_finding(f: Finding) -> RuleMeta:
    return RuleMeta(code=f.code, name=f.name, summary=f.name, severity=f.severity, symptom=f.symptom)


def catalog(report: Report, rules: Iterable[RuleMeta] | None = None, *, selected_only: bool = False) -> list[RuleMeta]:
    """The rules a report covers, by code: ``rules`` (default: the report's own), only those the
    analysis ran when ``selected_only``, plus any rule the report mentions that they lack."""
    known = report.rules if rules is None else rules
    metas = {m.code: m for m in known if m.selected or not selected_only}
    for rr in report.runs:
        for f in rr.findings:
            metas.setdefault(f.code, _from_finding(f))
        for na in rr.not_applicable:
            metas.setdefault(na.code, RuleMeta(code=na.code, name=na.name, requires=tuple(na.missing)))
    return [metas[c] for c in sorted(metas)]
