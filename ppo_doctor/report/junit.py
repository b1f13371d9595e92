"""``--format junit``: JUnit XML, one test suite per run and one test case per rule.

CI systems (GitLab, Jenkins, Azure) render JUnit natively.  A rule's test case *fails*
when the rule fired at or above ``--fail-on``, is *skipped* when the run lacks the metrics
the rule needs, and passes otherwise (findings below ``--fail-on`` are listed in its
``system-out``).  Unreadable inputs become a suite of *errored* cases, one per file.

The document validates against the JUnit schema Jenkins' xUnit plugin checks reports with
(``junit-10.xsd``, kept as test data in ``tests/data``): ``testsuites > testsuite > testcase >
failure|skipped|error``; ``skipped`` is counted on each ``<testsuite>`` only (the schema has
no such attribute on ``<testsuites>``), and every element carries ``time``.  A rule check has
no duration of its own, so ``time`` is 0: the reports of a log are not timed tests.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from ..results import SEVERITY_RANK, Finding, Report, RunReport
from . import RenderOptions
from .escape import step_span, xml_text
from .rulemeta import RuleMeta, catalog

NO_TIME = "0"


def _fails(f: Finding, fail_on: str) -> bool:
    return fail_on != "never" and SEVERITY_RANK[f.severity] >= SEVERITY_RANK[fail_on]


def _describe(f: Finding) -> str:
    return f"{f.severity} {f.code} {f.name} on {f.metric} at steps {step_span(f.start_step, f.end_step)}: {f.message}"


def _el(parent: ET.Element, tag: str, text: str | None = None, **attrs: Any) -> ET.Element:
    el = ET.SubElement(parent, tag, {k: xml_text(v) for k, v in attrs.items()})
    if text is not None:
        el.text = xml_text(text)
    return el


def _run_suite(root: ET.Element, rr: RunReport, rules: list[RuleMeta], fail_on: str) -> dict[str, int]:
    run = rr.run
    suite = _el(root, "testsuite", name=run.id)
    props = _el(suite, "properties")
    for key, value in (("path", run.path), ("framework", run.framework), ("verdict", rr.verdict), ("verdict_reason", rr.verdict_reason)):
        _el(props, "property", name=key, value=value)
    na = {n.code: n for n in rr.not_applicable}
    by_code: dict[str, list[Finding]] = {}
    for f in rr.findings:
        by_code.setdefault(f.code, []).append(f)
    counts = {"tests": 0, "failures": 0, "skipped": 0}
    for meta in rules:
        case = _el(suite, "testcase", classname=f"ppo-doctor.{run.id}", name=f"{meta.code} {meta.name}", time=NO_TIME)
        counts["tests"] += 1
        found = by_code.get(meta.code, [])
        failing = [f for f in found if _fails(f, fail_on)]
        if failing:
            counts["failures"] += 1
            worst = max(failing, key=lambda f: SEVERITY_RANK[f.severity])
            _el(case, "failure", "\n".join(_describe(f) for f in failing), message=worst.message, type=worst.severity)
        elif meta.code in na and not found:
            counts["skipped"] += 1
            _el(case, "skipped", message="not applicable: missing " + ", ".join(na[meta.code].missing))
        elif found:
            _el(case, "system-out", "\n".join(_describe(f) for f in found))
    for key, count in counts.items():
        suite.set(key, str(count))
    suite.set("errors", "0")
    suite.set("time", NO_TIME)
    return counts


def _error_suite(root: ET.Element, report: Report) -> int:
    suite = _el(root, "testsuite", name="ppo-doctor read errors")
    errors = [e for e in report.errors if e.level == "error"]
    for e in errors:
        case = _el(suite, "testcase", classname="ppo-doctor.read", name=e.path, time=NO_TIME)
        _el(case, "error", str(e), message=e.message, type="LogReadError")
    for key, value in (("tests", len(errors)), ("failures", 0), ("skipped", 0), ("errors", len(errors)), ("time", NO_TIME)):
        suite.set(key, str(value))
    return len(errors)


def to_junit(report: Report, options: RenderOptions, rules: list[RuleMeta] | None = None) -> ET.Element:
    """The ``<testsuites>`` element for ``report``."""
    metas = catalog(report, rules, selected_only=True)
    root = ET.Element("testsuites", {"name": "ppo-doctor"})
    total = {"tests": 0, "failures": 0, "skipped": 0, "errors": 0}  # skipped: per suite only
    for rr in report.runs:
        for key, value in _run_suite(root, rr, metas, options.fail_on).items():
            total[key] += value
    if any(e.level == "error" for e in report.errors):
        n = _error_suite(root, report)
        total["tests"] += n
        total["errors"] += n
    for key in ("tests", "failures", "errors"):
        root.set(key, str(total[key]))
    root.set("time", NO_TIME)
    return root


def render(report: Report, options: RenderOptions) -> str:
    """The JUnit XML document as text."""
    root = to_junit(report, options)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
