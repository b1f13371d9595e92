"""--format gitlab: a GitLab Code Quality report, for a merge request's Code Quality widget.

The format is GitLab's ("Code Quality report format",
https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format): a JSON array with
one object per problem, each with a description, a check_name, a fingerprint unique in the
report, a severity (info, minor, major, critical or blocker) and a location: the file's path
relative to the repository and location.lines.begin.  One object per finding, at the log that
holds its metric and the line of its onset step where the reader recorded it (line 1 in a
binary log), as the SARIF and GitHub outputs place it; one per read problem, at line 1.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

from ..results import Report
from . import RenderOptions
from .json_out import dumps
from .sarif import finding_locations, fingerprint
from .workspace import in_workspace

# ppo-doctor's severities in GitLab's words (as pylint-gitlab maps pylint's: an error is critical)
SEVERITY = {"error": "critical", "warning": "major", "info": "info"}


def _path(path: str) -> str:
    """The widget matches a problem to a file by its path relative to the repository."""
    return in_workspace(path, Path.cwd().resolve()) or Path(path).as_posix()


def _issue(description: str, check_name: str, key: str, severity: str, path: str, line: int | None) -> dict[str, Any]:
    return {
        "description": description,
        "check_name": check_name,
        "fingerprint": key,
        "severity": severity,
        "location": {"path": _path(path), "lines": {"begin": line if line is not None else 1}},
    }


def to_gitlab(report: Report) -> list[dict[str, Any]]:
    issues = []
    seen: Counter[str] = Counter()
    for rr in report.runs:
        for f, (path, line) in zip(rr.findings, finding_locations(rr)):
            # SARIF's stable (run, rule, metric) key; a rule that fires twice on one metric of one
            # run gets its occurrence number in, as GitLab wants every fingerprint unique
            key = fingerprint(rr.run, f)
            seen[key] += 1
            if seen[key] > 1:
                key = hashlib.sha256(f"{key}\x1f{seen[key]}".encode()).hexdigest()[:32]
            description = f"{f.code} {f.name} ({rr.run.id}): {f.message}"
            issues.append(_issue(description, f.code, key, SEVERITY[f.severity], path, line))
    for e in report.errors:
        key = hashlib.sha256(f"read\x1f{e.path}\x1f{e}".encode("utf-8", "replace")).hexdigest()[:32]
        issues.append(_issue(f"ppo-doctor could not read the log: {e}", "read-error", key, SEVERITY.get(e.level, "major"), e.path, None))
    return issues


def render(report: Report, options: RenderOptions) -> str:
    """The report as GitLab's Code Quality JSON (options are not used: it has no colour or plots)."""
    return dumps(to_gitlab(report)) + "\n"
