"""The whole straight line: discover -> ingest -> canonicalise -> detect -> diagnose -> Report."""

from __future__ import annotations

import logging
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, Mapping

from .config import coerce
from .cost import failure_cost
from .diagnose import rank_causes
from .errors import PPODoctorError
from .ingest.readers.dataframe import ACCEPTED, is_table, raw_run
from .canonical.metrics import build_run
from .pipeline import map_runs
from .results import Report, RunReport
from .rules import registry
from .rules.engine import run_rules
from .run import Run
from .settings import Config
from .verdict import verdict_for

log = logging.getLogger(__name__)


def analyze_run(run: Run, config: Config | Mapping[str, Any] | None = None) -> RunReport:
    """Rules and diagnosis for one already-loaded run (``config``: see :func:`ppo_doctor.config.coerce`)."""
    findings, not_applicable = run_rules(run, coerce(config))
    verdict, reason = not_read_in_full(run, *verdict_for(run, findings, not_applicable))
    # causes explain symptoms: a run with none (healthy, or unknown) is not given "likely causes"
    # built from its info notes alone, which would contradict its verdict
    causes = rank_causes(findings, run) if verdict == "unhealthy" else []
    report = RunReport(
        run=run, verdict=verdict, verdict_reason=reason, findings=findings, causes=causes, not_applicable=not_applicable
    )
    report.cost = failure_cost(report)
    return report


def not_read_in_full(run: Run, verdict: str, reason: str) -> tuple[str, str]:
    """The verdict of a run some of whose log files could not be read: what was read may show
    what is wrong, never that the whole run is healthy."""
    if not run.unread:
        return verdict, reason
    others = f" (and {len(run.unread) - 1} more)" if len(run.unread) > 1 else ""
    note = f"not read in full: {run.unread[0]}{others}"
    if verdict == "healthy":
        return "unknown", note
    return verdict, f"{reason}; {note}" if reason else note


def analyze(
    path: Any,
    config: Config | Mapping[str, Any] | None = None,
    *,
    jobs: int | None = None,
    executor: str | None = None,
    dask: str | None = None,
    dask_timeout: float | None = None,
    hparams: dict[str, Any] | None = None,
    name: str = "dataframe",
) -> Report:
    """Analyse every run under ``path`` (a file, a folder, or a list of them), or one run given as
    data: a pandas DataFrame in wide form (as wandb's ``run.history()``) or long form (step/tag/value,
    as tbparse), or a dict of arrays (:mod:`ppo_doctor.ingest.readers.dataframe`; ``hparams`` is then that
    run's config and ``name`` its id).

    Runs are scheduled by :mod:`ppo_doctor.pipeline`: in this process, in ``jobs`` local processes
    (``executor="processes"``, the default when ``jobs > 1``: the rules cost as much as the reading,
    so each worker reads *and* analyses its run), or on Dask (``executor="dask"``, ``dask`` = a
    scheduler address, or a LocalCluster of ``jobs`` workers when None; ``dask_timeout``: seconds to
    wait for the cluster and a worker before failing).  These are the settings' own keys
    (``Config.schedule``, the one way they reach the pipeline): a keyword argument given here
    overrides the one in ``config``.
    """

    cfg = coerce(config)  # validated and coerced once, for every run
    if is_table(path):
        run = run_from_data(path, hparams=hparams, name=name, aliases=cfg.aliases)
        return Report(runs=[analyze_run(run, cfg)], rules=registry.metadata(cfg.select, cfg.ignore))

    paths = path if isinstance(path, (list, tuple)) else [path]
    bad = [p for p in paths if not isinstance(p, (str, Path))]
    if bad:
        raise PPODoctorError(f"cannot analyse a {type(bad[0]).__name__}: expected {ACCEPTED}")
    report = Report(rules=registry.metadata(cfg.select, cfg.ignore))
    # keyword arguments win over the settings' own executor keys
    cfg = replace(
        cfg,
        jobs=cfg.jobs if jobs is None else jobs,
        executor=cfg.executor if executor is None else executor,
        dask=cfg.dask if dask is None else dask,
        dask_timeout=cfg.dask_timeout if dask_timeout is None else dask_timeout,
    )
    for run_reports, errors in map_runs(paths, partial(analyze_run, config=cfg), cfg.schedule, aliases=cfg.aliases, exclude=cfg.excluded):
        report.errors.extend(errors)
        report.runs.extend(run_reports)
    return report


def run_from_data(data: Any, *, hparams: dict[str, Any] | None = None, name: str = "dataframe", aliases: dict[str, str] | None = None) -> Run:
    """One canonical :class:`Run` from a DataFrame or a dict of arrays (see :func:`analyze`)."""

    raw = raw_run(data, source=f"<{name}>")
    raw.config = dict(hparams or {})
    return build_run(name, f"<{name}>", "dataframe", [], raw, aliases)
