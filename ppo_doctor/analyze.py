"""The whole straight line: discover -> ingest -> canonicalise -> detect -> diagnose -> Report."""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path
from typing import Any

from .ingest import map_runs
from .report.model import Report, RunReport
from .run import Run

log = logging.getLogger(__name__)


def analyze_run(run: Run, config: dict[str, Any] | None = None) -> RunReport:
    """Rules and diagnosis for one already-loaded run."""
    from .diagnose import rank_causes
    from .rules.engine import run_rules, verdict_for

    cfg = config or {}
    findings, not_applicable = run_rules(run, cfg)
    verdict, reason = verdict_for(run, findings, not_applicable)
    # causes explain symptoms: a run with none (healthy, or unknown) is not given "likely causes"
    # built from its info notes alone, which would contradict its verdict
    causes = rank_causes(findings, run) if verdict == "unhealthy" else []
    return RunReport(
        run=run, verdict=verdict, verdict_reason=reason, findings=findings, causes=causes, not_applicable=not_applicable
    )


def analyze(path: str | Path | list, config: dict[str, Any] | None = None, *, jobs: int = 1) -> Report:
    """Analyse every run under ``path`` (a file, a folder, or a list of them).

    With ``jobs > 1`` each run is read and analysed in a worker process (``map_runs``): the
    rules cost as much as the reading, so running only the readers in parallel barely helped.
    """
    cfg = config or {}
    paths = path if isinstance(path, (list, tuple)) else [path]
    report = Report()
    for p in paths:
        for run_reports, errors in map_runs(p, partial(analyze_run, config=cfg), jobs=jobs, aliases=cfg.get("aliases")):
            report.errors.extend(errors)
            report.runs.extend(run_reports)
    return report
