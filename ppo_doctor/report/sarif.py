"""``--format sarif``: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

One SARIF run for the invocation; one result per finding, located at the log file that holds
the finding's metric, with a logical location naming the run, metric and onset step.  Rule
descriptors come from the rules' own docs (``rulemeta``).  Reader problems become tool
execution notifications, so a half-broken log is visible without being a "result".

Locations are relative URIs (``%SRCROOT%`` = the working directory, ``LOGROOT`` for logs
elsewhere), declared in ``originalUriBaseIds``.  GitHub's SARIF support page asks for
``region.startLine`` on every result (sarif-sdk validation rule GH1003): in a JSONL, CSV or
``trainer_state.json`` log it is the line of the onset step, which the reader recorded for each
point (:meth:`ppo_doctor.frame.RunFrame.line_of`; no log is opened here), in a binary log
line 1 (``properties.lineKnown`` says which).  ``partialFingerprints`` carries our own
versioned key made from (run, rule, metric), which stays stable while the run keeps the
problem (GitHub computes its ``primaryLocationLineHash`` itself).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .._version import __version__
from ..results import Finding, Report, RunReport
from ..run import Run
from . import RenderOptions
from .json_out import dumps, finite_json
from .rulemeta import RuleMeta, catalog
from .workspace import in_workspace

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
LOGROOT = "LOGROOT"
FINGERPRINT_KEY = "ppoDoctorFinding/v1"
# SARIF levels (spec section 3.27.10); "note" is SARIF's word for informational
LEVEL = {"error": "error", "warning": "warning", "info": "note"}


class _Bases:
    """Relative artifact URIs and the ``originalUriBaseIds`` they are relative to.

    A file under the working directory is relative to ``%SRCROOT%`` (what GitHub code
    scanning resolves against the checkout); a file elsewhere is relative to ``LOGROOT``,
    the deepest folder holding every such file, so no result carries the absolute path of
    the machine that ran the check: only the two base ids name folders.
    """

    def __init__(self, root: Path, paths: list[str]):
        self.root = root
        outside = [_absolute(p) for p in paths if in_workspace(p, root) is None]
        self.logroot = Path(os.path.commonpath([str(a.parent) for a in outside])) if outside else None

    def location(self, path: str) -> dict[str, Any]:
        inside = in_workspace(path, self.root)
        if inside is not None:
            return {"uri": quote(inside, safe="/"), "uriBaseId": SRCROOT}
        absolute = _absolute(path)
        if self.logroot is not None and _is_under(absolute, self.logroot):
            return {"uri": quote(absolute.relative_to(self.logroot).as_posix(), safe="/"), "uriBaseId": LOGROOT}
        return {"uri": quote(absolute.name)}

    def original_uri_base_ids(self) -> dict[str, Any]:
        ids: dict[str, Any] = {SRCROOT: {"uri": self.root.as_uri().rstrip("/") + "/"}}
        if self.logroot is not None:
            ids[LOGROOT] = {"uri": self.logroot.as_uri().rstrip("/") + "/", "description": {"text": "the folder of the logs outside the working directory"}}
        return ids


def _absolute(path: str) -> Path:
    p = Path(path)
    try:
        return (p if p.is_absolute() else Path.cwd() / p).resolve()
    except OSError:
        return Path(os.path.abspath(p))


def _is_under(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


def artifact_location(path: str, root: Path) -> dict[str, Any]:
    """A SARIF artifactLocation relative to ``root`` (``%SRCROOT%``) or to the file's folder."""
    return _Bases(root, [path]).location(path)


def metric_file(run: Run, metric: str) -> str:
    """The file that logged ``metric`` (the point's ``source``); for the text rules (their
    metric is no scalar) the file of the text samples; else the run's first file."""
    if not run.frame.has(metric) and run.texts:
        source = next((t.source for t in run.texts if t.source), "")
        if source:
            return source
    if run.frame.has(metric):
        frame = run.frame
        sources = frame.column("source")[frame.column("metric") == metric]
        for src in dict.fromkeys(map(str, sources)):  # distinct, in file order
            if src and (src in run.files or Path(src).is_file()):
                return src
    return run.files[0] if run.files else run.path


def onset_line(run: Run, metric: str, step: int | None, source: str) -> int | None:
    """The line of ``source`` that logged ``metric`` at ``step`` as its reader recorded it (the
    first, when a restart logged the step again; a text sample's for the text rules), or None:
    no step, or a log without lines (TensorBoard, ``.wandb``)."""
    if step is None:
        return None
    if run.frame.has(metric):
        return run.frame.line_of(metric, int(step), source)
    lines = [t.line for t in run.texts if t.source == source and t.step == step and t.line is not None]
    return min(lines) if lines else None


def finding_locations(rr: RunReport) -> list[tuple[str, int | None]]:
    """``(file, line)`` of each finding of ``rr``: the file that logged its metric and the line
    of its onset step there (:func:`onset_line`), or None."""
    run = rr.run
    spots = []
    for f in rr.findings:
        path = metric_file(run, f.metric)
        spots.append((path, onset_line(run, f.metric, f.start_step, path)))
    return spots


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


def _result(rr: RunReport, f: Finding, rule_index: int, location: tuple[str, int | None], bases: "_Bases") -> dict[str, Any]:
    run = rr.run
    path, line = location
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
                    "artifactLocation": bases.location(path),
                    # GitHub wants a startLine on every result (GH1003): line 1 when unknown
                    "region": {"startLine": line or 1},
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
        # our own versioned key (SARIF 3.27.17); primaryLocationLineHash is GitHub's to compute
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(run, f)},
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
                "lineKnown": line is not None,
            }
        ),
    }


def _notifications(report: Report, bases: _Bases) -> list[dict[str, Any]]:
    out = []
    for e in report.errors:
        out.append(
            {
                "level": LEVEL.get(e.level, "warning"),
                "message": {"text": str(e)},
                "locations": [{"physicalLocation": {"artifactLocation": bases.location(e.path)}}],
            }
        )
    for rr in report.runs:
        for issue in rr.run.issues:
            out.append({"level": LEVEL.get(issue.level, "warning"), "message": {"text": f"[{rr.run.id}] {issue}"}})
    return out


def to_sarif(report: Report, rules: list[RuleMeta] | None = None, root: Path | None = None) -> dict[str, Any]:
    """The SARIF log as a dict (``rules`` and ``root`` default to the report's rules and cwd)."""
    root = (root or Path.cwd()).resolve()
    metas = catalog(report, rules)
    index = {m.code: i for i, m in enumerate(metas)}
    spots = {id(rr): finding_locations(rr) for rr in report.runs}
    bases = _Bases(root, [path for places in spots.values() for path, _ in places] + [e.path for e in report.errors])
    results = [
        _result(rr, f, index[f.code], spot, bases)
        for rr in report.runs
        for f, spot in zip(rr.findings, spots[id(rr)])
    ]
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
                        "toolExecutionNotifications": _notifications(report, bases),
                    }
                ],
                "originalUriBaseIds": bases.original_uri_base_ids(),
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
