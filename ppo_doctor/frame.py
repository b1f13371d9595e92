"""RunFrame: every scalar point of one run in one long table, nothing dropped.

Columns (docs/architecture.md#contracts): ``step:int64, metric:str, value:float64 (NaN/Inf kept),
wall_time:float64, raw_tag:str, source:str``.  ``metric`` is the canonical name when the
alias table maps the raw tag, else the raw tag itself.  Beside them, when a reader of a text
log recorded it, the 1-based line of ``source`` each point was read from (one int32 a point,
absent for binary logs): what a SARIF region or a GitHub annotation points at
(:meth:`RunFrame.line_of`), so that no report has to open a log again.

The frame is built column-wise from per-tag arrays (readers never produce per-point Python
objects), and ``metric``/``raw_tag``/``source`` are held as codes into their names (categoricals
in ``df``) so that a 10-million-point run stays well under the memory budget.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, NamedTuple

import numpy as np


if TYPE_CHECKING:
    import pandas as pd

COLUMNS = ("step", "metric", "value", "wall_time", "raw_tag", "source")
LABEL_COLUMNS = ("metric", "raw_tag", "source")


@dataclass
class RawSeries:
    """One tag of one run as a reader found it (before canonicalisation)."""

    tag: str
    steps: np.ndarray  # int64, in file order (not sorted, duplicates kept)
    values: np.ndarray  # float64, NaN/Inf kept
    wall_time: np.ndarray | None = None  # float64 seconds since epoch, or None
    source: str = ""
    # int32 1-based line of ``source`` each point was read from (0: not known), or None when the
    # format has no lines (TensorBoard records, .wandb, ...): see RunFrame.line_of
    lines: np.ndarray | None = None

    def __post_init__(self) -> None:
        steps = np.asarray(self.steps)
        if steps.dtype.kind in "fu" and len(steps):
            # a cast would wrap NaN or 1e30 to some other step, silently (issue 39): every reader
            # refuses such a step with a note before it gets here; a plugin's reader is told
            if steps.dtype.kind == "u":
                bad = steps > np.iinfo(np.int64).max
            else:
                bad = ~(np.isfinite(steps) & (steps == np.round(steps)) & (steps >= -(2.0**63)) & (steps < 2.0**63))
            if bad.any():
                raise ValueError(f"tag {self.tag!r}: step {steps[bad][0].item()!r} is not an integer within int64")
        self.steps = steps.astype(np.int64, copy=False) if steps.dtype.kind in "iuf" else np.asarray(self.steps, dtype=np.int64)
        self.values = np.asarray(self.values, dtype=np.float64)
        if self.wall_time is not None:
            self.wall_time = np.asarray(self.wall_time, dtype=np.float64)
        if self.lines is not None:
            self.lines = np.asarray(self.lines, dtype=np.int32)
            if len(self.lines) != len(self.steps):
                raise ValueError(f"tag {self.tag!r}: {len(self.steps)} steps but {len(self.lines)} lines")
        if len(self.steps) != len(self.values):
            raise ValueError(f"tag {self.tag!r}: {len(self.steps)} steps but {len(self.values)} values")

    def __len__(self) -> int:
        return len(self.steps)


class RunFrame:
    """Long table of a run's points with per-metric accessors.

    ``series(metric)`` returns a float Series indexed by step, sorted by step, with the
    last value winning on duplicate steps (a restarted run overwrites what it re-logged;
    the restart itself is reported by the reader, never silently purged).

    The points are held as numpy columns (the three string columns as integer codes into a
    list of names, as a categorical holds them), so that reading a log and running the rules
    never imports pandas (pandas is half a second of a one-file ``check``: benchmarks/RESULTS.md,
    "Import cost").  ``df`` and ``series`` build pandas objects on first use; a frame made from a DataFrame
    (``RunFrame(df)``, the public constructor) keeps that DataFrame as its ``df``.
    """

    def __init__(self, df: pd.DataFrame):
        missing = [c for c in COLUMNS if c not in df.columns]
        if missing:
            raise ValueError(f"RunFrame needs columns {missing}")
        self._set_columns(
            _Columns(
                df["step"].to_numpy(dtype=np.int64),
                df["value"].to_numpy(dtype=np.float64),
                df["wall_time"].to_numpy(dtype=np.float64),
                {name: _codes(df[name]) for name in LABEL_COLUMNS},
            )
        )
        self._df: pd.DataFrame | None = df

    def _set_columns(self, columns: _Columns) -> None:
        self._cols = columns
        self._df = None
        self._cache: dict[str, pd.Series] = {}
        self._groups: dict[str, np.ndarray] | None = None
        self._tags: dict[str, list[str]] | None = None
        self._sorted: list[str] | None = None
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def __getstate__(self) -> dict:
        # Only the columns travel (``--jobs`` workers pickle their reports back): the per-metric
        # caches the rules filled would double the bytes (11.8 vs 5.4 MB for 200k points).
        return {"_cols": self._cols}

    def __setstate__(self, state: dict) -> None:
        self._set_columns(state["_cols"])

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_series(cls, items: Iterable[tuple[str, RawSeries]]) -> "RunFrame":
        """Build from ``(metric_name, RawSeries)`` pairs without per-point Python work."""
        items = list(items)
        # one Python pass over the items for the category codes, then whole-column numpy work:
        # per-item slice assignments cost seconds for 100,000 one-point tags
        # (benchmarks/RESULTS.md, "Hostile inputs")
        metric_cats: dict[str, int] = {}
        tag_cats: dict[str, int] = {}
        src_cats: dict[str, int] = {}
        ids = np.array(
            [(metric_cats.setdefault(m, len(metric_cats)), tag_cats.setdefault(s.tag, len(tag_cats)), src_cats.setdefault(s.source, len(src_cats))) for m, s in items],
            dtype=np.int32,
        ).reshape(-1, 3)
        lengths = np.array([len(s) for _, s in items], dtype=np.int64)
        metric_codes, tag_codes, src_codes = (np.repeat(ids[:, k], lengths) for k in range(3))
        steps = np.concatenate([s.steps for _, s in items]) if items else np.empty(0, np.int64)
        values = np.concatenate([s.values for _, s in items]) if items else np.empty(0, np.float64)
        if all(s.wall_time is not None for _, s in items):
            wall = np.concatenate([s.wall_time for _, s in items]) if items else np.empty(0, np.float64)
        else:
            wall = np.concatenate([s.wall_time if s.wall_time is not None else np.full(len(s), np.nan) for _, s in items])
        # one int32 a point only when some reader recorded lines; 0 where a series has none
        lines = None
        if any(s.lines is not None for _, s in items):
            lines = np.concatenate([s.lines if s.lines is not None else np.zeros(len(s), np.int32) for _, s in items])
        frame = cls.__new__(cls)
        labels = {"metric": (metric_codes, list(metric_cats)), "raw_tag": (tag_codes, list(tag_cats)), "source": (src_codes, list(src_cats))}
        frame._set_columns(_Columns(steps, values, wall, labels, lines))
        return frame

    @classmethod
    def empty(cls) -> "RunFrame":
        return cls.from_series([])

    # -- access -------------------------------------------------------------------------
    @property
    def df(self) -> pd.DataFrame:
        """The points as a DataFrame (the contract's columns; pandas is imported here)."""
        if self._df is None:
            self._df = self._cols.dataframe()
        return self._df

    def __len__(self) -> int:
        return len(self._cols.step)

    def column(self, name: str) -> np.ndarray:
        """One column of the table as a numpy array, without building the DataFrame: the numbers
        as they are, a string column as an object array of its labels (NaN where a hand-made
        frame had a missing value, as its categorical gives)."""
        if name not in LABEL_COLUMNS:
            return {"step": self._cols.step, "value": self._cols.value, "wall_time": self._cols.wall_time}[name]
        codes, names = self._cols.labels[name]
        # code -1 (missing) picks the NaN appended last
        return np.array([*names, np.nan], dtype=object)[codes]

    def _index(self) -> dict[str, np.ndarray]:
        """Row positions of each metric, built once: every per-metric accessor is O(its
        points), so a pass over all metrics is linear in points and tags (one full-column
        scan per metric would make ``metrics`` quadratic in tags: benchmarks/RESULTS.md, "Hostile
        inputs")."""
        if self._groups is None:
            codes, names = self._cols.labels["metric"]
            order = np.argsort(codes, kind="stable")
            sorted_codes = codes[order]
            bounds = np.flatnonzero(np.diff(sorted_codes)) + 1
            chunks = np.split(order, bounds) if len(order) else []
            self._groups = {names[codes[chunk[0]]]: chunk for chunk in chunks}
        return self._groups

    @property
    def metrics(self) -> list[str]:
        if self._sorted is None:
            self._sorted = sorted(self._index())
        return list(self._sorted)

    def has(self, metric: str) -> bool:
        return metric in self._index()

    def count(self, metric: str) -> int:
        idx = self._index().get(metric)
        return 0 if idx is None else len(idx)

    def series(self, metric: str) -> pd.Series:
        """Values of ``metric`` indexed by step (sorted; last value wins on duplicates).

        The contract's pandas accessor, for users and the plots; the engine reads :meth:`arrays`."""
        cached = self._cache.get(metric)
        if cached is not None:
            return cached
        import pandas as pd

        steps, values = self.arrays(metric)
        s = pd.Series(values, index=pd.Index(steps, dtype=np.int64, name="step"), name=metric)
        self._cache[metric] = s
        return s

    def arrays(self, metric: str) -> tuple[np.ndarray, np.ndarray]:
        """``(steps, values)`` of :meth:`series` as numpy arrays, without building a Series
        (a rule that looks at every metric pays pandas' per-Series cost once per tag)."""
        cached = self._arrays.get(metric)
        if cached is not None:  # rules ask for the same metric several times
            return cached
        idx = self._index().get(metric)
        if idx is None:
            return np.empty(0, np.int64), np.empty(0, np.float64)
        steps, values = self._cols.step[idx], self._cols.value[idx]
        # stable sort keeps file order among equal steps, so the last logged value wins
        order = np.argsort(steps, kind="stable")
        steps, values = steps[order], values[order]
        if len(steps) > 1:
            keep = np.append(steps[1:] != steps[:-1], True)
            steps, values = steps[keep], values[keep]
        # read-only, as Series.to_numpy() gives them under copy-on-write: callers share them
        steps.flags.writeable = values.flags.writeable = False
        self._arrays[metric] = (steps, values)
        return steps, values

    def raw_tags(self, metric: str) -> list[str]:
        if self._tags is None:
            self._tags = self._tags_by_metric()
        return list(self._tags.get(metric, ()))

    def _tags_by_metric(self) -> dict[str, list[str]]:
        """The raw tags of every metric, from one pass over the (metric, raw_tag) code pairs."""
        m_codes, m_names = self._cols.labels["metric"]
        t_codes, t_names = self._cols.labels["raw_tag"]
        ok = (m_codes >= 0) & (t_codes >= 0)  # -1: a missing value in a hand-made frame
        # return_counts: the plain np.unique imports numpy.ma (benchmarks/RESULTS.md "One small check")
        pairs = np.unique(m_codes[ok].astype(np.int64) << 32 | t_codes[ok].astype(np.int64), return_counts=True)[0]
        out: dict[str, list[str]] = {}
        for m, t in zip((pairs >> 32).tolist(), (pairs & 0xFFFFFFFF).tolist()):
            out.setdefault(m_names[m], []).append(t_names[t])
        return {m: sorted(tags) for m, tags in out.items()}

    def line_of(self, metric: str, step: int, source: str) -> int | None:
        """The line of ``source`` that first logged ``metric`` at ``step`` (1-based, the lowest of
        them when a restart logged the step again), or None: no such point, or a reader that
        records no lines (binary formats, a frame made from a DataFrame)."""
        idx = self._index().get(metric)
        line = self._cols.line
        src_codes, src_names = self._cols.labels["source"]
        if idx is None or line is None or source not in src_names:
            return None
        at = idx[(self._cols.step[idx] == step) & (src_codes[idx] == src_names.index(source))]
        known = line[at]
        known = known[known > 0]
        return int(known.min()) if len(known) else None

    def step_range(self) -> tuple[int, int] | None:
        if not len(self):
            return None
        s = self._cols.step
        return int(s.min()), int(s.max())


class _Columns(NamedTuple):
    """The table's columns: the numbers, and each string column as (codes, names)."""

    step: np.ndarray  # int64
    value: np.ndarray  # float64
    wall_time: np.ndarray  # float64
    labels: dict[str, tuple[np.ndarray, list[str]]]  # LABEL_COLUMNS -> (int codes, -1 = missing; names)
    line: np.ndarray | None = None  # int32 source line of each point (0: not known), None: no reader had lines

    def dataframe(self) -> pd.DataFrame:
        import pandas as pd

        def cat(name: str) -> pd.Categorical:
            codes, names = self.labels[name]
            return pd.Categorical.from_codes(codes, categories=names, validate=False) if names else pd.Categorical([])

        columns = {"step": self.step, "metric": cat("metric"), "value": self.value, "wall_time": self.wall_time, "raw_tag": cat("raw_tag"), "source": cat("source")}
        return pd.DataFrame(columns)


def _codes(col: pd.Series) -> tuple[np.ndarray, list[str]]:
    """A string column of a DataFrame as (integer codes, names): its own when categorical."""
    import pandas as pd

    cat = col.cat if isinstance(col.dtype, pd.CategoricalDtype) else pd.Categorical(col)
    return np.asarray(cat.codes), cat.categories.tolist()


@dataclass
class TextSample:
    """A generated text the run logged (prompt / response / reward) at a step."""

    step: int
    tag: str
    text: str
    prompt: str | None = None
    reward: float | None = None
    source: str = ""
    line: int | None = None  # the 1-based line of ``source`` it was read from, when the format has lines


@dataclass
class ReadIssue:
    """A problem met while reading: the file, the byte offset when known, and what happened."""

    path: str
    message: str
    offset: int | None = None
    level: str = "error"  # "error" (data lost/unreadable) or "warning"

    def __str__(self) -> str:
        where = self.path + (f" at byte {self.offset}" if self.offset is not None else "")
        return f"{where}: {self.message}"


@dataclass
class RawRun:
    """What a reader returns for one run found in one file (most files hold one run)."""

    series: list[RawSeries] = field(default_factory=list)
    config: dict = field(default_factory=dict)
    texts: list[TextSample] = field(default_factory=list)
    issues: list[ReadIssue] = field(default_factory=list)
    restarts: list[int] = field(default_factory=list)  # steps at which the log goes back / restarts
    name: str | None = None  # set when one file holds several runs (W&B panel CSV, ...)
    eval_series: list[RawSeries] = field(default_factory=list)  # eval rows kept apart
