"""Reader for W&B exports: UI panel CSVs and run-history CSV / Parquet files (docs/sources.md#wandb-exports).

Two layouts:

* **history export** (``run.history()`` / ``run.scan_history()`` saved with pandas, or the
  ``<run-id>-history`` Parquet artifact): one row per ``_step``, columns ``_step``,
  ``_runtime``, ``_timestamp`` and the metric keys, sparse (a key logged at another step is
  empty), often with an unnamed index column;
* **panel export** ("..." -> Export -> CSV): first column the x-axis (``Step``, ``Relative
  Time (Process)``, ``Relative Time (Wall)``, ``Wall Time`` or a custom x such as
  ``train/global_step``), then ``<run> - <metric>`` columns with ``__MIN``/``__MAX``
  companions; one file can hold several runs (``Group: <g> - <metric>`` for groups).

Both are often down-sampled (``run.history()`` returns ~500 rows, panels are bucketed), which
hides spikes (docs/sources.md#downsampled-histories); the reader says so when the steps look sampled.

A CSV's rows keep the file line they were read from (:func:`.csv_logs.row_lines`); a Parquet
file has no lines.

Empty cells mean "not logged".  A NaN written as text (``NaN``) is kept as a NaN point; note
that ``DataFrame.to_csv`` writes logged NaNs as empty cells too, so a pandas CSV cannot tell
them apart (Parquet can: nulls and NaNs are distinct there).
"""

from __future__ import annotations

import logging
import re
import warnings
from dataclasses import dataclass, field
from typing import Any
from pathlib import Path

import numpy as np

from ...lazy import pd
from ...errors import LogReadError
from ...frame import RawRun, RawSeries, ReadIssue, TextSample
from ...canonical.frameworks import is_eval_key
from . import files
from ..readers.csv_logs import row_lines
from ..storage import as_path, is_url, open_binary
from .csv_sniff import MAX_HEADER, PANEL_SEP, TIME_AXES, header_fields, is_panel
from .csv_sniff import sniff as sniff  # the reader protocol: NAME, sniff, read

log = logging.getLogger(__name__)

NAME = "wandb_csv"

_BUCKET_SUFFIXES = ("__MIN", "__MAX")
# Row counts that W&B's samplers return (run.history() samples=500, UI 1000, 10000 caps).
SAMPLED_SIZES = (500, 1000, 10_000)
_INDEX_COLUMN = re.compile(r"^(Unnamed: \d+|index|)$")


@dataclass
class _Column:
    """One exported column, decoded: numeric points and text cells."""

    values: np.ndarray  # float64, NaN kept where a NaN was logged
    present: np.ndarray  # bool: the cell holds a number
    texts: list[tuple[int, str]] = field(default_factory=list)  # (row, text)


# -- reading ------------------------------------------------------------------------------------


def read(path: Path) -> list[RawRun]:
    """Every run of a W&B export file (a panel CSV may hold several)."""
    path = as_path(path)
    try:
        with open_binary(path) as fh:
            first_line = fh.readline(MAX_HEADER)
    except OSError as exc:
        raise LogReadError(str(path), f"cannot read file: {exc.strerror or exc}") from None
    if first_line.startswith(b"PAR1"):
        columns = _read_parquet(path)
        return [_history_run(columns, path, None)]  # Parquet has no lines
    header = header_fields(first_line, complete=len(first_line) < MAX_HEADER) or []
    if "_step" in header:
        df = _read_csv(path)
        log.debug("%s: history export, %d rows x %d columns", path, len(df), df.shape[1])
        return [_history_run(_csv_columns(df), path, _csv_lines(path, len(df)))]
    if header and is_panel(header):
        # bucket columns are never used: not parsing them makes a panel export read ~2x faster
        df = _read_csv(path, usecols=lambda c: not str(c).endswith(_BUCKET_SUFFIXES))
        buckets = sum(c.endswith(_BUCKET_SUFFIXES) for c in header)
        log.debug("%s: panel export, %d rows x %d columns", path, len(df), df.shape[1])
        return _panel_runs(df, buckets, path, _csv_lines(path, len(df)))
    raise LogReadError(str(path), "not a W&B export: no _step column and no '<run> - <metric>' columns")


def _read_csv(path: Path, **kw: Any) -> pd.DataFrame:
    """``pandas.read_csv`` (C engine), where only empty cells are missing.

    ``"NaN"`` text stays a value (a logged NaN), see the module doc.
    """
    try:
        with warnings.catch_warnings():
            # mixed-type columns are handled by _text_column; pandas' chunk warning is noise
            warnings.simplefilter("ignore", pd.errors.DtypeWarning)
            if is_url(path):  # a remote export: pandas reads fsspec's file object
                with open_binary(path) as fh:
                    return pd.read_csv(fh, keep_default_na=False, na_values=[""], encoding_errors="replace", **kw)
            return pd.read_csv(path, keep_default_na=False, na_values=[""], encoding_errors="replace", **kw)
    except pd.errors.EmptyDataError:
        raise LogReadError(str(path), "empty file") from None
    except (pd.errors.ParserError, ValueError, OSError) as exc:
        raise LogReadError(str(path), f"malformed CSV: {str(exc).strip()}") from None


def _csv_lines(path: Path, rows: int) -> np.ndarray | None:
    """The file line of each of the ``rows`` rows pandas read (None when not known): a local
    file's bytes are read once more (from the page cache: pandas parsed the path itself); a
    remote export is not downloaded twice for them."""
    if is_url(path):
        return None
    try:
        with open_binary(path) as fh:
            data = fh.read()
    except OSError as exc:
        log.debug("%s: lines of the rows not known (%s)", path, exc)
        return None
    return row_lines(data.removeprefix(b"\xef\xbb\xbf"), ",", rows)


def _read_parquet(path: Path) -> dict[str, _Column]:
    """Columns of a Parquet history; pyarrow is optional (dev extra), so imported here."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise LogReadError(str(path), "reading Parquet needs the optional 'pyarrow' package (pip install pyarrow)") from None
    try:
        if is_url(path):  # a remote export: Parquet is read by ranges from fsspec's file object
            with open_binary(path) as fh:
                table = pq.read_table(fh)
        else:
            table = pq.read_table(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises many types for bad files
        raise LogReadError(str(path), f"unreadable Parquet file: {exc}") from None
    import pyarrow as pa
    import pyarrow.compute as pc

    columns: dict[str, _Column] = {}
    for name, col in zip(table.column_names, table.columns):
        valid = pc.is_valid(col).to_numpy(zero_copy_only=False)
        if pa.types.is_integer(col.type) or pa.types.is_floating(col.type):
            # nulls are "not logged", NaNs are logged NaNs: Arrow keeps them apart
            values = pc.cast(col.fill_null(0), pa.float64(), safe=False).to_numpy(zero_copy_only=False)
            columns[name] = _Column(values, valid)
        elif pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            cells = col.to_pylist()
            columns[name] = _text_column(pd.Series(cells, dtype=object))
    return columns


def _csv_columns(df: pd.DataFrame) -> dict[str, _Column]:
    out: dict[str, _Column] = {}
    for name in df.columns:
        col = _column(df[name])
        if col is not None:
            out[str(name)] = col
    return out


def _column(s: pd.Series) -> _Column | None:
    """Decode one CSV column (vectorised: this is where the reader spends its time)."""
    if pd.api.types.is_bool_dtype(s):
        return None  # a logged flag is not a metric
    if pd.api.types.is_numeric_dtype(s):
        values = s.to_numpy(dtype=np.float64, na_value=np.nan)
        return _Column(values, ~np.isnan(values))
    return _text_column(s)


def _text_column(s: pd.Series) -> _Column:
    """A column with some non-numeric cells: numbers and NaN/Infinity text stay points."""
    present = s.notna().to_numpy()
    text = s.astype("string").str.strip()
    num = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    lowered = text.str.lower()
    nan_text = lowered.isin(["nan", "-nan"]).to_numpy(dtype=bool, na_value=False)
    is_num = present & (~np.isnan(num) | nan_text)
    col = _Column(num, is_num)
    flags = lowered.isin(["true", "false"]).to_numpy(dtype=bool, na_value=False)
    for row in np.flatnonzero(present & ~is_num & ~flags).tolist():
        cell = str(s.iat[row])
        # pandas writes logged media (histograms, tables) as dict reprs: not text samples
        if "'_type'" not in cell and '"_type"' not in cell:
            col.texts.append((row, cell))
    return col


# -- history exports ----------------------------------------------------------------------------


def _integer_steps(col: _Column) -> tuple[np.ndarray, np.ndarray]:
    """int64 steps of a step column and the mask of rows that hold an integer step."""
    v = col.values
    ok = col.present & np.isfinite(v) & (np.abs(v) < 2.0**62)
    ok &= v == np.round(v)
    return np.where(ok, v, 0).astype(np.int64), ok


def _history_run(columns: dict[str, _Column], path: Path, lines: np.ndarray | None) -> RawRun:
    """A run-history table: ``_step`` per row, ``_timestamp`` as wall time, sparse metric columns;
    ``lines``: each row's file line, when known."""
    src = str(path)
    raw = RawRun()
    step_col = columns.get("_step")
    if step_col is None:
        raise LogReadError(src, "the _step column holds no numbers")
    steps, ok = _integer_steps(step_col)
    if not ok.any():
        raise LogReadError(src, "the _step column holds no integer steps")
    if not ok.all():
        raw.issues.append(ReadIssue(src, f"{int((~ok).sum())} row(s) without an integer _step skipped", level="warning"))
    wall_col = columns.get("_timestamp")
    wall = np.where(wall_col.present, wall_col.values, np.nan) if wall_col is not None else None

    for name, col in columns.items():
        if name.startswith("_") or _INDEX_COLUMN.match(name):
            continue
        mask = col.present & ok
        if mask.all():  # a dense column: no copy (RunFrame.from_series copies anyway)
            series = RawSeries(name, steps, col.values, wall, src, lines)
        elif mask.any():
            series = RawSeries(name, steps[mask], col.values[mask], wall[mask] if wall is not None else None, src, _at(lines, mask))
        else:
            series = None
        if series is not None:
            (raw.eval_series if is_eval_key(name) else raw.series).append(series)
        raw.texts += [TextSample(step=int(steps[r]), tag=name, text=t, source=src, line=_line(lines, r)) for r, t in col.texts if ok[r]]

    # return_counts: the plain np.unique imports numpy.ma (benchmarks/RESULTS.md "One small check")
    logged = np.unique(steps[ok], return_counts=True)[0]
    issue = downsampling_issue(logged, src)
    if issue is not None:
        raw.issues.append(issue)
    _merge_export_side_files(raw, path, int(logged[-1]))
    return raw


def _at(lines: np.ndarray | None, mask: np.ndarray) -> np.ndarray | None:
    return None if lines is None else lines[mask]


def _line(lines: np.ndarray | None, row: int) -> int | None:
    return None if lines is None else int(lines[row])


def downsampling_issue(steps: np.ndarray, path: str) -> ReadIssue | None:
    """A warning when sorted unique steps look like a sampled export (docs/sources.md#downsampled-histories).

    Sampled exports keep a spread-out subset of rows, so the gaps between kept steps are
    uneven; a full history logged every k steps has equal gaps.  Uneven gaps are suspicious
    when the row count is one of W&B's sample sizes, or when the step range is much larger
    than the number of rows.
    """
    if len(steps) < 3:
        return None
    gaps = np.diff(steps)
    if gaps.max() < 2 * gaps.min():  # (nearly) regular logging: not sampled
        return None
    n, span = len(steps), int(steps[-1] - steps[0])
    if n not in SAMPLED_SIZES and span < 1.5 * n * int(gaps.min()):
        return None
    return ReadIssue(
        path,
        f"looks down-sampled: {n} rows for steps {int(steps[0])}..{int(steps[-1])} with uneven gaps "
        f"({int(gaps.min())}..{int(gaps.max())}); spikes between kept rows are invisible. "
        "Export the full history (run.scan_history() or the run's .wandb file) instead",
        level="warning",
    )


def _merge_export_side_files(raw: RawRun, path: Path, last_step: int) -> None:
    """``<id>_config.json`` / ``<id>_summary.json`` saved beside ``<id>_history.csv``."""
    stem = path.name.rsplit(".", 1)[0]
    prefix = re.sub(r"[_-]?history$", "", stem)
    if not prefix or prefix == stem:
        return
    cfg = path.with_name(f"{prefix}_config.json")
    if cfg.is_file():
        config, issues = files.read_json_object(cfg, "config")
        raw.config.update(files.unwrap_config(config))
        raw.issues += issues
    summary_path = path.with_name(f"{prefix}_summary.json")
    if summary_path.is_file():
        summary, issues = files.read_json_object(summary_path, "summary")
        raw.issues += issues
        issue = files.summary_step_issue(summary, last_step, str(summary_path))
        if issue is not None:
            raw.issues.append(issue)


# -- panel exports ------------------------------------------------------------------------------


def _panel_runs(df: pd.DataFrame, buckets: int, path: Path, lines: np.ndarray | None) -> list[RawRun]:
    """One RawRun per run (or group) of a panel export (``lines``: each row's file line, if known).

    ``__MIN``/``__MAX`` columns are skipped: they are the extremes of the points W&B bucketed
    into each plotted x (wandb/wandb#5222), not points the run logged, and keeping them as
    extra tags would feed bucket envelopes to the rules.  Their presence is reported, since
    it proves the export is bucketed.
    """
    src = str(path)
    x_name = str(df.columns[0])
    x = _column(df.iloc[:, 0])
    if x is None or not x.present.any():
        raise LogReadError(src, f"the x-axis column {x_name!r} holds no numbers")
    per_run: dict[str, dict[str, _Column]] = {}
    for name in df.columns[1:]:
        run, _, metric = str(name).rpartition(PANEL_SEP)
        col = _column(df[name])
        if col is not None:
            per_run.setdefault(run, {})[metric] = col

    file_issues = []
    if buckets:
        file_issues.append(
            ReadIssue(
                src,
                f"panel export is bucketed: {buckets} __MIN/__MAX column(s) skipped; points between buckets are not in the file",
                level="warning",
            )
        )
    if x_name not in TIME_AXES:  # "Step" or a custom step metric such as train/global_step
        x_steps, x_ok = _integer_steps(x)
        # return_counts: the plain np.unique imports numpy.ma (benchmarks/RESULTS.md "One small check")
        issue = downsampling_issue(np.unique(x_steps[x_ok], return_counts=True)[0], src)
        if issue is not None:
            file_issues.append(issue)
    runs = []
    for run, cols in per_run.items():
        raw = RawRun(name=run, issues=list(file_issues))
        steps, wall, ok = _panel_steps(x_name, x, cols.pop("_step", None), raw, src)
        for metric, col in cols.items():
            mask = col.present & ok
            if mask.any():
                series = RawSeries(metric, steps[mask], col.values[mask], wall[mask] if wall is not None else None, src, _at(lines, mask))
                (raw.eval_series if is_eval_key(metric) else raw.series).append(series)
            raw.texts += [TextSample(step=int(steps[r]), tag=metric, text=t, source=src, line=_line(lines, r)) for r, t in col.texts if ok[r]]
        runs.append(raw)
    return runs


def _panel_steps(
    x_name: str, x: _Column, step_col: _Column | None, raw: RawRun, src: str
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """Steps (and wall times) of a panel export's rows for one run, and which rows are usable."""
    wall = None
    if x_name == "Wall Time":
        # seconds since the epoch, or milliseconds in some exports [U: docs/sources.md#unverified]
        wall = np.where(x.values > 1e11, x.values / 1000.0, x.values)
    if x_name in TIME_AXES:
        if step_col is not None:
            steps, ok = _integer_steps(step_col)
            return steps, wall, ok
        raw.issues.append(
            ReadIssue(src, f"x axis is {x_name!r} and there is no _step column: steps are row numbers", level="warning")
        )
        return np.arange(len(x.values), dtype=np.int64), wall, x.present.copy()
    steps, ok = _integer_steps(x)
    if not ok.all():
        raw.issues.append(ReadIssue(src, f"{int((~ok).sum())} row(s) without an integer {x_name!r} skipped", level="warning"))
    return steps, wall, ok
