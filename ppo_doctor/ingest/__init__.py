"""Ingestion: discover runs under a path, read every file with its format module, and
canonicalise the result into :class:`~ppo_doctor.run.Run` objects.

``load(path)`` never raises for bad input: unreadable files become entries of
``LoadResult.errors`` (file, offset, message) and every other run is still returned.
"""

from __future__ import annotations

import importlib
import logging
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from ..errors import LogReadError, PPODoctorError
from ..frame import RawRun, RawSeries, ReadIssue, RunFrame
from ..run import Run
from .base import read_head

log = logging.getLogger(__name__)

# Format modules in priority order: when two formats of one run hold the same raw tag, the
# earlier (more precise, less likely down-sampled) one is kept and the other is not counted twice.
FORMAT_MODULES = (
    "tensorboard",
    "wandb_binary",
    "trainer_state",
    "jsonl",
    "mlflow",
    "wandb_csv",
    "csv_logs",
    "verl_console",
)


@dataclass
class LoadResult:
    runs: list[Run] = field(default_factory=list)
    errors: list[ReadIssue] = field(default_factory=list)


def readers() -> list[ModuleType]:
    mods = []
    for name in FORMAT_MODULES:
        try:
            mods.append(importlib.import_module(f"{__name__}.{name}"))
        except ImportError:  # a format module not written yet must not break the others
            log.debug("format module %s unavailable", name)
    return mods


def reader_for(name: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{name}")


def sniff(path: Path) -> ModuleType | None:
    head = read_head(path)
    for mod in readers():
        try:
            if mod.sniff(path, head):
                return mod
        except Exception:  # noqa: BLE001 - a sniffer must never take the walk down
            log.debug("sniffer %s failed on %s", mod.NAME, path, exc_info=True)
    return None


def _read_source(source: Any, aliases: dict[str, str] | None) -> tuple[list[Run], list[ReadIssue]]:
    """Read every file of one discovered run and build its Run(s)."""
    from ..metrics import build_run

    errors: list[ReadIssue] = []
    per_file: list[tuple[str, str, list[RawRun]]] = []
    for fmt, fpath in source.files:
        try:
            raws = reader_for(fmt).read(Path(fpath))
        except LogReadError as exc:
            errors.append(ReadIssue(path=exc.path, message=exc.message, offset=exc.offset))
            continue
        except PPODoctorError as exc:
            errors.append(ReadIssue(path=str(fpath), message=str(exc)))
            continue
        except Exception as exc:  # noqa: BLE001 - a reader bug must not hide the other runs
            log.debug("reader %s crashed on %s", fmt, fpath, exc_info=True)
            errors.append(ReadIssue(path=str(fpath), message=f"internal reader error ({type(exc).__name__}: {exc})"))
            continue
        per_file.append((fmt, str(fpath), raws))

    runs: list[Run] = []
    merged = RawRun()
    merged_files: list[str] = []
    formats: list[str] = []
    for fmt, fpath, raws in per_file:
        named = [r for r in raws if r.name]
        if len(raws) > 1 or named:
            # one file, several runs (W&B panel CSV, interleaved JSONL): each is its own run
            for r in raws:
                rid = f"{source.id}/{r.name}" if r.name else source.id
                runs.append(build_run(rid, str(source.root), fmt, [fpath], r, aliases))
            continue
        if not raws:
            continue
        _merge(merged, raws[0], fmt, formats)
        merged_files.append(fpath)
        if fmt not in formats:
            formats.append(fmt)
    if merged_files:
        runs.insert(0, build_run(source.id, str(source.root), "+".join(formats), merged_files, merged, aliases))
    return runs, errors


def _merge(into: RawRun, raw: RawRun, fmt: str, formats_seen: list[str]) -> None:
    have = {s.tag for s in into.series}
    if formats_seen and fmt not in formats_seen:
        # a second format of the same run: only tags the first formats lack are added
        dup = [s.tag for s in raw.series if s.tag in have]
        into.series.extend(s for s in raw.series if s.tag not in have)
        if dup:
            into.issues.append(
                ReadIssue(
                    path=raw.series[0].source if raw.series else "",
                    message=f"{len(dup)} tag(s) also present in {formats_seen[0]} data were not counted twice",
                    level="warning",
                )
            )
    else:
        into.series.extend(raw.series)
    into.eval_series.extend(raw.eval_series)
    for k, v in raw.config.items():
        into.config.setdefault(k, v)
    into.texts.extend(raw.texts)
    into.issues.extend(raw.issues)
    into.restarts.extend(raw.restarts)


def load(path: str | Path, *, jobs: int = 1, aliases: dict[str, str] | None = None) -> LoadResult:
    """Discover and read every run under ``path``."""
    from .discover import discover

    result = LoadResult()
    p = Path(path)
    if not p.exists() and not p.is_symlink():
        result.errors.append(ReadIssue(path=str(path), message="no such file or directory"))
        return result
    sources, issues = discover(p)
    result.errors.extend(issues)
    if jobs > 1 and len(sources) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            outs = list(pool.map(_read_source, sources, [aliases] * len(sources)))
    else:
        outs = [_read_source(s, aliases) for s in sources]
    for runs, errors in outs:
        result.runs.extend(runs)
        result.errors.extend(errors)
    return result


def load_runs(path: str | Path, **kw: Any) -> list[Run]:
    """Every run under ``path`` (see :func:`load` for the errors)."""
    return load(path, **kw).runs


def concat_series(parts: list[RawSeries]) -> RawSeries:
    """Join several pieces of one tag (e.g. several event files of one run) in order."""
    if len(parts) == 1:
        return parts[0]
    wall = None
    if any(p.wall_time is not None for p in parts):
        wall = np.concatenate([p.wall_time if p.wall_time is not None else np.full(len(p), np.nan) for p in parts])
    return RawSeries(
        tag=parts[0].tag,
        steps=np.concatenate([p.steps for p in parts]),
        values=np.concatenate([p.values for p in parts]),
        wall_time=wall,
        source=parts[0].source,
    )


__all__ = ["LoadResult", "load", "load_runs", "readers", "reader_for", "sniff", "RunFrame"]
