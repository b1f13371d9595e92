"""MLflow file store runs: ``mlruns/<experiment>/<run>/``.

Layout of ``mlflow/store/tracking/file_store.py`` (mlflow 3.17, ``docs/sources.md#mlflow-file-store``):

* ``metrics/<key>``: one file per metric, a key with ``/`` becomes nested folders
  (``metrics/actor/pg_loss``).  Lines are ``<timestamp ms> <value> <step>``, optionally followed
  by ``<dataset name> <dataset digest>`` (MLflow 3); legacy 2-field lines have no step (0).
  Values are Python ``repr`` floats, so ``nan``, ``inf`` and ``-inf`` appear literally.
* ``params/<key>``: the value as text -> config; ``tags/mlflow.runName`` -> run name.
* ``meta.yaml`` (read with ``yaml.safe_load``, aliases bounded: :mod:`.safe_yaml`): status (integer enum), times, lifecycle stage.

Unlike the other readers, ``read`` takes the run *folder* (discovery passes it).  The experiment's
own ``meta.yaml`` supplies the experiment name.  Deleted runs live in ``mlruns/.trash`` and are
never reached by discovery.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from ...lazy import yaml
from ...errors import LogReadError
from ...frame import RawRun, RawSeries, ReadIssue
from .. import filebytes, safe_yaml
from ..base import is_int64
from ..storage import as_path, open_binary, realpath, scandir

NAME = "mlflow"

# mlflow.entities.RunStatus
_STATUS = {1: "RUNNING", 2: "SCHEDULED", 3: "FINISHED", 4: "FAILED", 5: "KILLED"}
_MAX_META_BYTES = 1 << 20
# A metric file line is "<ts> <value> <step>" (~40 bytes): a longer one (a zero-filled tail) is
# skipped as the file streams in (docs/architecture.md#inputs-are-untrusted); the smallest limit
# filebytes.read_capped_lines takes.
_MAX_LINE_BYTES = 1 << 20
_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
_INT = re.compile(r"[-+]?\d+")


def is_run_dir(path: Path) -> bool:
    """An MLflow run folder: ``meta.yaml`` beside a ``metrics/`` folder."""
    return (path / "meta.yaml").is_file() and (path / "metrics").is_dir()


def sniff(path: Path, head: bytes) -> bool:
    return path.is_dir() and is_run_dir(path)


def read(path: Path) -> list[RawRun]:
    if not is_run_dir(path):
        raise LogReadError(str(path), "not an MLflow run folder (needs meta.yaml and metrics/)")
    run = RawRun()
    meta = _yaml(path / "meta.yaml", run.issues)
    if meta.get("lifecycle_stage") == "deleted":
        run.issues.append(ReadIssue(str(path), "run is marked deleted in MLflow", level="warning"))
    status = meta.get("status")
    if isinstance(status, int):
        run.config["mlflow.status"] = _STATUS.get(status, str(status))
    for key in ("run_id", "run_name", "experiment_id", "start_time", "end_time"):
        if key in meta:
            run.config[f"mlflow.{key}"] = meta[key]
    exp = _yaml(path.parent / "meta.yaml", run.issues) if (path.parent / "meta.yaml").is_file() else {}
    if "name" in exp:
        run.config["mlflow.experiment_name"] = exp["name"]
    for key, value in _key_files(path / "params", run.issues):
        run.config[key] = _param_value(value)
    for key, value in _key_files(path / "tags", run.issues):
        run.config[f"tag/{key}"] = value
    if "tag/mlflow.runName" in run.config:
        run.config["run_name"] = run.config["tag/mlflow.runName"]
    elif "mlflow.run_name" in run.config:
        run.config["run_name"] = run.config["mlflow.run_name"]
    for key, file in _walk_keys(path / "metrics", run.issues):
        series = _read_metric(key, file, run.issues)
        if series is not None:
            run.series.append(series)
    if not run.series:
        # say why, naming the first damaged metric file (its issues would be lost with the run)
        damage = next((i for i in run.issues if i.level == "error" and i.path.startswith(str(path / "metrics"))), None)
        if damage is not None:
            raise LogReadError(damage.path, f"MLflow run without any readable metric value: {damage.message}", offset=damage.offset)
        raise LogReadError(str(path / "metrics"), "MLflow run without any metric values")
    return [run]


def _yaml(file: Path, issues: list[ReadIssue]) -> dict[str, Any]:
    try:
        with open_binary(file) as fh:
            raw = fh.read(_MAX_META_BYTES + 1)
        if len(raw) > _MAX_META_BYTES:
            raise ValueError("larger than 1 MiB")
        data = safe_yaml.safe_load(raw)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        issues.append(ReadIssue(str(file), f"meta.yaml not read ({type(exc).__name__})", level="warning"))
        return {}
    return data if isinstance(data, dict) else {}


def _walk_keys(root: Path, issues: list[ReadIssue]) -> list[tuple[str, Path]]:
    """(key, file) for every file under ``root``; nested folders join the key with ``/``."""
    out: list[tuple[str, Path]] = []
    if not root.is_dir():
        return out
    stack = [(root, "")]
    seen: set[str] = set()
    while stack:
        folder, prefix = stack.pop()
        try:
            real = realpath(folder)
            if real in seen:
                continue
            seen.add(real)
            entries = sorted(scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            issues.append(ReadIssue(str(folder), f"cannot list folder ({exc.strerror or exc})"))
            continue
        for entry in entries:
            if entry.is_dir():
                stack.append((as_path(entry.path), f"{prefix}{entry.name}/"))
            elif entry.is_file():
                out.append((f"{prefix}{entry.name}", as_path(entry.path)))
    out.sort()
    return out


def _key_files(root: Path, issues: list[ReadIssue]) -> list[tuple[str, str]]:
    out = []
    for key, file in _walk_keys(root, issues):
        try:
            out.append((key, file.read_bytes()[:_MAX_META_BYTES].decode("utf-8", "replace")))
        except OSError as exc:
            issues.append(ReadIssue(str(file), f"cannot read ({exc.strerror or exc})", level="warning"))
    return out


def _param_value(text: str) -> Any:
    """MLflow stores every param as text: give numbers and booleans back their type."""
    t = text.strip()
    if _INT.fullmatch(t):
        return int(t)
    if _NUMBER.fullmatch(t):
        return float(t)
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    return text


def _read_metric(key: str, file: Path, issues: list[ReadIssue]) -> RawSeries | None:
    try:
        data, long = filebytes.read_capped_lines(file, _MAX_LINE_BYTES)
    except OSError as exc:
        issues.append(ReadIssue(str(file), f"cannot read ({exc.strerror or exc})"))
        return None
    issues.extend(ReadIssue(str(file), f"line {ln.number} skipped: {ln.length} bytes, over the {_MAX_LINE_BYTES}-byte line limit", offset=ln.offset) for ln in long)
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    ts: list[float] = []
    vals: list[float] = []
    steps: list[int] = []
    bad: list[int] = []
    # FileStore appends "<ts> <value> <step>\n" per point (file_store.py _log_run_metric): a
    # last line without its line end was cut while being written, its step may be cut short.
    cut = len(lines) - 1 if not text.endswith("\n") else None
    for i, line in enumerate(lines):
        parts = line.split()
        if i == cut:
            if parts:
                bad.append(i)
            continue
        if len(parts) not in (2, 3, 5):
            if parts:
                bad.append(i)
            continue
        try:
            t = float(parts[0])
            v = float(parts[1])
            s = int(parts[2]) if len(parts) > 2 else 0
        except ValueError:
            bad.append(i)
            continue
        if not is_int64(s):  # MLflow steps are Java longs: no such step was logged
            bad.append(i)
            continue
        ts.append(t)
        vals.append(v)
        steps.append(s)
    if bad:
        offset = sum(len(l.encode("utf-8", "replace")) + 1 for l in lines[: bad[0]])
        partial = bad == [len(lines) - 1] and not text.endswith("\n")
        why = "partial last line (file cut short?)" if partial else "line(s) not of the form '<timestamp> <value> <step>'"
        issues.append(ReadIssue(str(file), f"{len(bad)} {why} skipped (first: line {bad[0] + 1})", offset=offset))
    if not vals:
        if not bad:
            issues.append(ReadIssue(str(file), "metric file is empty", level="warning"))
        return None
    # MLflow timestamps are milliseconds since the epoch
    return RawSeries(tag=key, steps=np.asarray(steps), values=np.asarray(vals), wall_time=np.asarray(ts) / 1000.0, source=str(file))
