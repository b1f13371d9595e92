"""In-memory tables as one run: a pandas DataFrame in wide or long form, or a dict of arrays.

* **wide** (``wandb.Api().run(...).history()``, ``pd.DataFrame(trainer.state.log_history)``): one
  row per logged step, a step column (``_step``, ``step``, ``global_step``, ``Step``; else the
  index) and one numeric column per metric.  A NaN cell is "not logged at this step": W&B's
  ``history()`` fills the gaps between metrics logged at different steps with NaN, and a table
  cannot tell that NaN from a logged one (give the long form to keep logged NaNs).  ``_timestamp``
  is the wall time; ``_runtime`` and other ``_``-prefixed W&B bookkeeping columns are not metrics.
* **long** (tbparse's ``SummaryReader(...).scalars``): columns ``step``, ``tag``, ``value`` and
  optionally ``wall_time``; every row is a point, NaN and Inf kept.
* **dict**: metric name -> 1-D array of values, with an optional ``step`` (or ``_step``) entry of
  the same length; without one, steps are 0, 1, 2 ...

Anything else raises :class:`~ppo_doctor.errors.PPODoctorError` naming what is accepted.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ...errors import PPODoctorError
from ...frame import RawRun, RawSeries, ReadIssue

STEP_COLUMNS = ("_step", "step", "global_step", "Step", "steps")
LONG_COLUMNS = ("step", "tag", "value")
ACCEPTED = (
    "a path or URL, a pandas DataFrame in wide form (a step column such as _step/step/global_step plus "
    "one column per metric, as wandb's run.history()) or long form (columns step, tag, value, as "
    "tbparse's reader.scalars), or a dict of metric name -> 1-D array (optional 'step' key)"
)


def is_table(data: Any) -> bool:
    """Whether ``data`` is in-memory data (a DataFrame or a mapping) rather than a path."""
    return isinstance(data, dict) or _is_dataframe(data)


def raw_run(data: Any, source: str = "<dataframe>") -> RawRun:
    """One :class:`RawRun` from a DataFrame (wide or long form) or a dict of arrays."""
    if isinstance(data, dict):
        return _from_dict(data, source)
    if _is_dataframe(data):
        if all(c in data.columns for c in LONG_COLUMNS):
            return _from_long(data, source)
        return _from_wide(data, source)
    raise PPODoctorError(f"cannot analyse a {type(data).__name__}: expected {ACCEPTED}")


def _is_dataframe(data: Any) -> bool:
    # a DataFrame exists only once pandas is imported: asking about a path must not import it
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(data, pd.DataFrame)


def _numeric(values: Any) -> np.ndarray | None:
    """``values`` as float64, or None when they are not numbers (text, objects)."""
    arr = np.asarray(values)
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        try:
            arr = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError):
            return None
        return None if arr.ndim != 1 else arr
    return arr.astype(np.float64, copy=False) if arr.ndim == 1 else None


# int64's range as floats: 2**63 is exact in float64, and the first float past the range
_LOW, _HIGH = -(2.0**63), 2.0**63


def _steps(values: Any, what: str) -> tuple[np.ndarray, np.ndarray]:
    """``values`` as int64 steps, and which of them are within int64.  A step past int64 is
    refused with a warning (:func:`_outside_note`), as the JSONL reader refuses it, never cast
    (a cast wraps it to another step, silently, issue 39); a step that is no whole number is an
    error."""
    arr = np.asarray(values)
    if arr.dtype.kind == "i":  # already integers: kept exact (a float holds 53 bits)
        return arr.astype(np.int64, copy=False), np.ones(len(arr), dtype=bool)
    if arr.dtype.kind == "u":
        keep = arr <= np.iinfo(np.int64).max
        return np.where(keep, arr, 0).astype(np.int64), keep
    if arr.dtype == object and all(isinstance(v, int) and not isinstance(v, bool) for v in arr.tolist()):
        ints = arr.tolist()  # Python integers past 64 bits: numpy keeps them as objects
        keep = np.array([_LOW <= v < _HIGH for v in ints], dtype=bool)
        return np.array([v if k else 0 for v, k in zip(ints, keep)], dtype=np.int64), keep
    num = _numeric(values)
    if num is None or not np.all(np.isfinite(num)) or np.any(num != np.round(num)):
        raise PPODoctorError(f"{what}: steps must be whole numbers")
    keep = (num >= _LOW) & (num < _HIGH)
    return np.where(keep, num, 0).astype(np.int64), keep


def _outside_note(run: RawRun, source: str, what: str, keep: np.ndarray) -> None:
    """A warning for the rows whose step is past int64 (left out of every series)."""
    if not keep.all():
        run.issues.append(ReadIssue(source, f"{what}: {int((~keep).sum()):,} row(s) whose step is past int64 left out", level="warning"))


def _from_wide(df: Any, source: str) -> RawRun:
    step_col = next((c for c in STEP_COLUMNS if c in df.columns), None)
    what = f"DataFrame column {step_col or 'index'}"
    steps, keep = _steps(df[step_col] if step_col is not None else df.index, what)
    wall = _numeric(df["_timestamp"]) if "_timestamp" in df.columns else None
    run = RawRun()
    _outside_note(run, source, what, keep)
    skipped = []
    for col in df.columns:
        name = str(col)
        if col == step_col or name.startswith("_"):
            continue
        values = _numeric(df[col])
        if values is None:
            skipped.append(name)
            continue
        logged = ~np.isnan(values) & keep
        if logged.any():
            run.series.append(
                RawSeries(name, steps[logged], values[logged], None if wall is None else wall[logged], source=source)
            )
    if skipped:
        run.issues.append(ReadIssue(source, f"{len(skipped)} non-numeric column(s) are not metrics (e.g. {skipped[0]})", level="warning"))
    if not run.series:
        raise PPODoctorError(f"the DataFrame has no numeric metric column; expected {ACCEPTED}")
    return run


def _from_long(df: Any, source: str) -> RawRun:
    steps, keep = _steps(df["step"], "DataFrame column step")
    values = _numeric(df["value"])
    if values is None:
        raise PPODoctorError("DataFrame column value: values must be numbers")
    wall = _numeric(df["wall_time"]) if "wall_time" in df.columns else None
    tags = df["tag"].astype(str).to_numpy()
    run = RawRun()
    _outside_note(run, source, "DataFrame column step", keep)
    for tag in dict.fromkeys(tags[keep].tolist()):
        sel = (tags == tag) & keep
        run.series.append(RawSeries(tag, steps[sel], values[sel], None if wall is None else wall[sel], source=source))
    if not run.series:
        raise PPODoctorError("the long-form DataFrame has no rows")
    return run


def _from_dict(data: dict, source: str) -> RawRun:
    step_key = next((k for k in ("step", "_step") if k in data), None)
    run = RawRun()
    steps: np.ndarray | None = None
    keep: np.ndarray | None = None
    if step_key is not None:
        steps, keep = _steps(data[step_key], f"dict entry {step_key!r}")
        _outside_note(run, source, f"dict entry {step_key!r}", keep)
    for key, col in data.items():
        if key == step_key:
            continue
        values = _numeric(col)
        if values is None:
            raise PPODoctorError(f"dict entry {key!r} is not a 1-D array of numbers; expected {ACCEPTED}")
        s = np.arange(len(values), dtype=np.int64) if steps is None else steps
        if len(s) != len(values):
            raise PPODoctorError(f"dict entry {key!r} has {len(values)} values but {step_key!r} has {len(s)} steps")
        if keep is not None and not keep.all():
            s, values = s[keep], values[keep]
        run.series.append(RawSeries(str(key), s, values, source=source))
    if not run.series:
        raise PPODoctorError(f"the dict holds no metric; expected {ACCEPTED}")
    return run
