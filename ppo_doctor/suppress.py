"""Suppressions: per-run ignores from the config and a baseline of known findings.

``per_run_ignores`` (ruff's ``per-file-ignores`` for runs) maps a glob to rule codes, prefixes
or names skipped for the runs it matches; the glob is matched (``fnmatch``, case-sensitive
on every platform) against the run's path as written, its POSIX spelling and its id, so
``"runs/legacy-*"`` and ``"legacy-*"`` both work.  These rules do not run at all for that run,
whatever ``select`` says, as in ruff.

A **baseline** (``check --write-baseline FILE`` / ``check --baseline FILE``, like pylint's and
detekt's) records the findings a team accepts today so that CI fails only on new ones.  A
finding is identified by (run path, run id, rule code, metric) -- the id and rule as in SARIF's
``partialFingerprints`` -- not by its onset step, which moves when a run is re-logged.  The run
path (:func:`run_place`: relative to the working directory when the run is under it, as CI
runs from the checkout) keeps a baseline to its own runs: two projects each with a ``logs/``
run have the same run id under their own roots, and a baseline written for one must not hide
the other's findings.  Version 1 files, which have no paths, still match by id alone.
The file is plain JSON (read with ``json``, nothing executed).
"""

from __future__ import annotations

import json
import os
from fnmatch import fnmatchcase
from pathlib import Path, PurePath
from typing import Any, Iterable, Mapping, Sequence

from .errors import ConfigError, too_big
from .ingest.storage import is_url
from .results import Finding, Report
from .run import Run

BASELINE_VERSION = 2
BASELINE_VERSIONS = (1, 2)  # version 1: no run paths (match by run id alone)
# (run path, run id, rule code, metric); the path is None for an entry of a version 1 file
FindingKey = tuple["str | None", str, str, str]


def ignored_codes(run: Run, per_run_ignores: Mapping[str, Sequence[str]] | None) -> list[str]:
    """The selectors of every ``per_run_ignores`` glob that matches ``run``."""
    if not per_run_ignores:
        return []
    names = {run.path, PurePath(run.path).as_posix(), run.id}
    out: list[str] = []
    for pattern, codes in per_run_ignores.items():
        if any(fnmatchcase(name, pattern) for name in names):
            out.extend(codes)
    return out


def run_place(run: Run) -> str:
    """Where a run is, as a baseline records it: a URL as it is; a local path relative to the
    working directory when it is under it (the same from every checkout), else absolute."""
    if is_url(run.path) or run.path.startswith("<"):  # a URL, or a run given as data ("<dataframe>")
        return run.path
    absolute = os.path.abspath(run.path)
    here = os.getcwd()
    inside = os.path.commonpath([absolute, here]) == here
    return PurePath(os.path.relpath(absolute, here) if inside else absolute).as_posix()


def finding_key(run: Run, f: Finding) -> FindingKey:
    return (run_place(run), run.id, f.code, f.metric)


def baseline_document(report: Report) -> dict[str, Any]:
    """The baseline file's content for every finding of ``report``."""
    keys = sorted({finding_key(rr.run, f) for rr in report.runs for f in rr.findings}, key=lambda k: (k[0] or "", *k[1:]))
    return {
        "ppo_doctor_baseline": BASELINE_VERSION,
        "findings": [{"path": path, "run": run, "code": code, "metric": metric} for path, run, code, metric in keys],
    }


def write_baseline(report: Report, path: str | Path) -> int:
    """Write the baseline of ``report`` to ``path``; returns the number of findings recorded."""
    doc = baseline_document(report)
    Path(path).write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return len(doc["findings"])


def read_baseline(path: str | Path) -> set[FindingKey]:
    """The finding keys of a baseline file.

    Raises:
        ConfigError: the file is missing, not JSON, or not a baseline.
    """
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read baseline ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not a baseline file (invalid JSON: {exc})") from None
    except (RecursionError, ValueError) as exc:
        # valid JSON that json cannot hold: nested past Python's stack, or an integer past
        # int()'s digit limit
        raise ConfigError(f"{path}: not a ppo-doctor baseline ({too_big(exc)})") from None
    version = doc.get("ppo_doctor_baseline") if isinstance(doc, dict) else None
    entries = doc.get("findings") if isinstance(doc, dict) and version in BASELINE_VERSIONS else None
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ConfigError(f"{path}: not a ppo-doctor baseline (write one with check --write-baseline)")
    return {(None if version == 1 else str(e.get("path")), str(e.get("run")), str(e.get("code")), str(e.get("metric"))) for e in entries}


def drop_baselined(report: Report, known: Iterable[FindingKey]) -> int:
    """Remove the findings of ``report`` that the baseline knows; returns how many were removed.

    Verdicts and causes are left as analysed: a known problem is still a problem of the run,
    only the gate (``check``'s exit code) and the listed findings ignore it.
    """
    known = set(known)
    removed = 0
    for rr in report.runs:
        keep = [f for f in rr.findings if not _known(finding_key(rr.run, f), known)]
        rr.known += len(rr.findings) - len(keep)
        removed += len(rr.findings) - len(keep)
        rr.findings = keep
    return removed


def _known(key: FindingKey, known: set[FindingKey]) -> bool:
    """Whether the baseline holds the finding: for its own run, or by id alone (version 1)."""
    return key in known or (None, *key[1:]) in known
