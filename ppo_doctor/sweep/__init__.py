"""Sweeps: analyse every run of one or more roots and say which config values separate the
unhealthy runs from the healthy ones (docs/sweeps.md).

``sweep(paths)`` finds the runs (:func:`ppo_doctor.pipeline.find_sources`), analyses each where
the :class:`~ppo_doctor.settings.Schedule` says, keeps one :class:`~.report.SweepRow` per run (a
run that cannot be read is an ``error`` row, never a lost sweep), joins any sweep table found
beside the runs (recognised by :mod:`ppo_doctor.ingest.sweep_table`, joined by :mod:`.table`), and ranks parameter splits (:mod:`.attribution`) for the verdict
and for each symptom.  Parameters come from each run's own config (the canonical hyper-parameters
that ``metrics.build_run`` extracted), from the sweep table's parameter columns and, for a run
that has neither, from the ``key<value>`` tokens of its folder's name.
"""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ..config import coerce
from ..settings import Config, Schedule
from ..frame import ReadIssue
from ..ingest import display
from ..ingest.discover import RunSource
from ..ingest.storage import as_path
from ..ingest.sweep_table import table_texts
from ..pipeline import find_sources, stream
from .attribution import Attribution, attribute
from .report import FOLDER_NAME, SweepReport, SweepRow, error_row, sweep_row
from .table import SEED_KEYS, SweepTable, join, name_tokens

log = logging.getLogger(__name__)

OUTCOME = "unhealthy"
JUDGED = ("healthy", "unhealthy")


def sweep(
    paths: str | Path | Iterable[str | Path],
    config: Config | Mapping[str, Any] | None = None,
    schedule: Any = None,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> SweepReport:
    """Analyse every run under ``paths`` (folders, files or fsspec URLs) and attribute the
    unhealthy ones to config values."""
    cfg = coerce(config)
    path_list = [paths] if isinstance(paths, (str, Path)) else list(paths)
    sources, issues, table_paths = find_sources(path_list, cfg.excluded)
    report = SweepReport()
    slots: list[list[SweepRow]] = [[] for _ in sources]
    fn = partial(sweep_row, config=cfg)
    for done, out in enumerate(stream(sources, fn, schedule or cfg.schedule, aliases=cfg.aliases), 1):
        if progress is not None:
            progress(done, len(sources))
        report.errors.extend(out.errors)
        if out.results:
            slots[out.index] = list(out.results)
        else:
            src = sources[out.index]
            why = "; ".join(e.message for e in out.errors if e.level == "error") or "no run could be read"
            slots[out.index] = [error_row(src.id, display(src.root), why)]
    report.rows = [row for slot in slots for row in slot]
    tables = _tables(table_paths, report.rows)
    report.tables = [t.path for t in tables]
    # discovery notes each sweep table it skipped as a run; the report lists the joined ones instead
    report.errors = [e for e in issues if not (e.level == "info" and e.path in report.tables)] + report.errors
    order = _add_table_params(report.rows, tables)
    report.attribution = attribute_rows(report.rows, order + _add_folder_params(report.rows))
    return report


def attribute_rows(rows: list[SweepRow], order: list[str] | None = None) -> Attribution:
    """The attribution of the rows' verdicts and symptoms to their parameters (``order``: the
    parameters that win ties, e.g. the runs' own config keys before a table's columns)."""
    judged = [r for r in rows if r.verdict in JUDGED]
    outcomes: dict[str, dict[str, bool]] = {OUTCOME: {r.run: r.verdict == OUTCOME for r in judged}}
    for symptom in sorted({s for r in judged for s in r.symptoms}):
        outcomes[symptom] = {r.run: symptom in r.symptoms for r in judged}
    return attribute({r.run: r.params for r in judged}, outcomes, order=order or ())


def _add_table_params(rows: list[SweepRow], tables: list[SweepTable]) -> list[str]:
    """Put the tables' parameters on the rows (a run's own config wins); the parameter order."""
    own = sorted({k for r in rows for k in r.params})
    extra: list[str] = []
    by_id = {r.run: r for r in rows}
    for t in tables:
        for rid, values in t.params.items():
            for k, v in values.items():
                by_id[rid].params.setdefault(k, v)
        extra.extend(c for c in t.columns if c not in own and c not in extra)
    return own + extra


def _add_folder_params(rows: list[SweepRow]) -> list[str]:
    """Give a run that neither its config nor a sweep table gives settings the ``key<value>`` and
    ``key=value`` tokens of its folder's name (``rho0.10_seed42``, ``lr=3e-4``), marked as read
    there (``SweepRow.params_from``); a seed token is the run's seed, never a parameter
    (:data:`.table.SEED_KEYS`).  The parameters found this way, in order."""
    found: list[str] = []
    for row in rows:
        if row.params or row.verdict == "error":
            continue
        tokens = name_tokens(as_path(row.path).name)
        seeds = {k: v for k, v in tokens.items() if k in SEED_KEYS}
        row.seed = next((int(v) if float(v).is_integer() else v for v in seeds.values()), None)
        row.params = {k: v for k, v in tokens.items() if k not in SEED_KEYS}
        row.params_from = FOLDER_NAME if row.params or seeds else ""
        found.extend(k for k in row.params if k not in found)
    return found


def _tables(paths: list[Path], rows: list[SweepRow]) -> list[SweepTable]:
    """The sweep tables discovery found (read by :func:`ppo_doctor.ingest.sweep_table.table_texts`),
    each joined to the runs under its own folder (a table of one experiment never names the runs
    of another root that reuse its folder names)."""
    out = []
    for path, text in table_texts(paths):
        under = [r.run for r in rows if path.parent in as_path(r.path).parents]
        table = join(display(path), text, under)
        if table is not None:
            out.append(table)
    return out


__all__ = ["SweepReport", "SweepRow", "attribute_rows", "sweep", "sweep_row"]
