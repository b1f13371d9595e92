"""``--format sarif``: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

One SARIF run for the invocation; one result per finding, located at the log file that holds
the finding's metric, with a logical location naming the run, metric and onset step.  Rule
descriptors come from the rules' own docs (``rulemeta``).  Reader problems become tool
execution notifications, so a half-broken log is visible without being a "result".

GitHub's SARIF support page asks for ``region.startLine`` on every result (sarif-sdk
validation rule GH1003) and uses ``partialFingerprints`` to match alerts across uploads;
a log file has no meaningful line, so results point at line 1 and carry a fingerprint
made from (run, rule, metric), which stays stable while the run keeps the problem.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .. import __version__
from ..findings import Finding
from ..run import Run
from . import RenderOptions
from .json_out import dumps, finite_json
from .model import Report, RunReport
from .rulemeta import RuleMeta, catalog

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
# SARIF levels (spec section 3.27.10); "note" is SARIF's word for informational
LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def artifact_location(path: str, root: Path) -> dict[str, Any]:
    """A SARIF artifactLocation: repository-relative when under ``root``, else a file URI."""
    p = Path(path)
    absolute = p if p.is_absolute() else (Path.cwd() / p)
    try:
        rel = absolute.resolve().relative_to(root)
    except (ValueError, OSError):
        return {"uri": absolute.resolve().as_uri()}
    return {"uri": quote(rel.as_posix(), safe="/"), "uriBaseId": SRCROOT}


def metric_file(run: Run, metric: str) -> str:
    """The file that logged ``metric`` (the point's ``source``), else the run's first file."""
    if run.frame.has(metric):
        df = run.frame.df
        sources = df.loc[df["metric"] == metric, "source"]
        for src in sources.astype(str).unique():
            if src and (src in run.files or Path(src).is_file()):
                return src
    return run.files[0] if run.files else run.path


def fingerprint(run: Run, f: Finding) -> str:
    """Stable identity of a finding across re-analyses of the same run."""
    key = "\x1f".join((run.id, f.code, f.metric))
    return hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:32]


def rule_descriptor(meta: RuleMeta) -> dict[str, Any]:
    """A reportingDescriptor built from the rule's own documentation."""
    short = meta.summary or meta.name or meta.code
    full = meta.doc or short
    desc: dict[str, Any] = {
        "id": meta.code,
        "name": meta.name or meta.code,
        "shortDescription": {"text": short},
        "fullDescription": {"text": full},
        "help": {"text": full, "markdown": full},
        "defaultConfiguration": {"level": LEVEL.get(meta.severity, "warning")},
        "properties": {"tags": [t for t in ("ppo", meta.symptom) if t]},
    }
    if meta.requires:
        desc["properties"]["requires"] = list(meta.requires)
    return desc


def _result(rr: RunReport, f: Finding, rule_index: int, root: Path) -> dict[str, Any]:
    run = rr.run
    where = f"step {f.start_step}" if f.start_step is not None else "whole run"
    if f.end_step is not None and f.end_step != f.start_step:
        where = f"steps {f.start_step}-{f.end_step}"
    return {
        "ruleId": f.code,
        "ruleIndex": rule_index,
        "level": LEVEL[f.severity],
        "message": {"text": f"[{run.id}] {f.message} ({f.metric}, {where})"},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": artifact_location(metric_file(run, f.metric), root),
                    "region": {"startLine": 1},
                },
                "logicalLocations": [
                    {
                        "name": where,
                        "fullyQualifiedName": f"{run.id}/{f.metric}@{f.start_step}",
                        "kind": "step",
                    }
                ],
            }
        ],
        "partialFingerprints": {"primaryLocationLineHash": fingerprint(run, f)},
        "properties": finite_json(
            {
                "run": run.id,
                "symptom": f.symptom,
                "metric": f.metric,
                "startStep": f.start_step,
                "endStep": f.end_step,
                "peakStep": f.peak_step,
                "thresholdStep": f.threshold_step,
                "observed": f.observed,
            }
        ),
    }


def _notifications(report: Report, root: Path) -> list[dict[str, Any]]:
    out = []
    for e in report.errors:
        out.append(
            {
                "level": "error" if e.level == "error" else "warning",
                "message": {"text": str(e)},
                "locations": [{"physicalLocation": {"artifactLocation": artifact_location(e.path, root)}}],
            }
        )
    for rr in report.runs:
        for issue in rr.run.issues:
            out.append({"level": "warning", "message": {"text": f"[{rr.run.id}] {issue}"}})
    return out


def to_sarif(report: Report, rules: list[RuleMeta] | None = None, root: Path | None = None) -> dict[str, Any]:
    """The SARIF log as a dict (``rules`` and ``root`` default to the registry and cwd)."""
    root = (root or Path.cwd()).resolve()
    metas = catalog(report, rules)
    index = {m.code: i for i, m in enumerate(metas)}
    results = [_result(rr, f, index[f.code], root) for rr in report.runs for f in rr.findings]
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "ppo-doctor",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": [rule_descriptor(m) for m in metas],
                    }
                },
                "invocations": [
                    {
                        "executionSuccessful": bool(report.runs) or not report.errors,
                        "toolExecutionNotifications": _notifications(report, root),
                    }
                ],
                "originalUriBaseIds": {SRCROOT: {"uri": root.as_uri().rstrip("/") + "/"}},
                "results": results,
                "properties": finite_json(
                    {
                        "runs": [
                            {
                                "run": rr.run.id,
                                "verdict": rr.verdict,
                                "verdictReason": rr.verdict_reason,
                                "symptoms": rr.symptoms,
                                "topCauses": [c.id for c in rr.causes[:3]],
                            }
                            for rr in report.runs
                        ]
                    }
                ),
            }
        ],
    }


def render(report: Report, options: RenderOptions) -> str:
    """The SARIF log as indented JSON text."""
    return dumps(to_sarif(report)) + "\n"
