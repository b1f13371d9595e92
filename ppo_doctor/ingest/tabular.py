"""Records (flat-ish dicts, one per logged row) to columns to a :class:`~ppo_doctor.frame.RawRun`:
the tabular machinery shared by the readers of key-value logs (:mod:`.jsonl`, :mod:`.trainer_state`,
:mod:`.csv_logs`, :mod:`.wandb.binary`).

* :func:`collect_columns` groups records by key tuple and turns an all-number group into one 2-D
  array in one numpy call; only mixed columns (null, text, nested dicts) are converted value by
  value (:class:`Columns`); :class:`ColumnsBuilder` does the same for records given batch by
  batch (a reader holds one block's records, not the file's); :func:`arrow_records` /
  :func:`arrow_table_columns` read flat all-number records with pyarrow instead.
* :func:`choose_steps` picks the step column (:data:`STEP_KEYS`, in order of preference),
  :func:`split_interleaved` separates runs appended concurrently to one file, and
  :func:`build_raw_run` makes the series, texts (:data:`TEXT_KEYS`) and wall times
  (:func:`to_wall_seconds`); :func:`column_notes` reports what was odd about the columns.
* ``Columns.lines``: the file line of each record, when the reader knows it (JSON lines,
  ``trainer_state.json`` entries), carried into every series and text sample it makes.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import Any, Iterable, NamedTuple, Sequence

import numpy as np

from ..lazy import pd
from ..frame import RawRun, RawSeries, ReadIssue, TextSample
from ..textbounds import MAX_SAMPLE_CHARS, MAX_SAMPLES, Spread, cut_text
from ..canonical.frameworks import is_eval_key

log = logging.getLogger(__name__)

# Step keys in order of preference. ``time/total_timesteps`` is SB3's x-axis (docs/sources.md#sb3-logger-keys);
# ``_step`` is W&B's; ``batch`` is a last resort (Tinker's checkpoints.jsonl, custom loops).
STEP_KEYS = (
    "step",
    "global_step",
    "train/global_step",
    "_step",
    "iteration",
    "iter",
    "time/total_timesteps",
    "total_timesteps",
    "timesteps",
    "num_timesteps",
    "update",
    "batch",
)
# Wall-clock keys: numbers are seconds (or milliseconds) since the epoch, strings are ISO 8601.
TIME_KEYS = ("wall_time", "timestamp", "_timestamp", "time")
# Seconds since the epoch are above this (1973); smaller "time" values are elapsed seconds.
EPOCH_FLOOR = 1e8
# String fields that hold generated text (prompts / completions); matched on the last path part.
PROMPT_KEYS = frozenset({"prompt", "prompts", "query", "queries", "question", "questions"})
RESPONSE_KEYS = frozenset(
    {"completion", "completions", "response", "responses", "sample", "samples", "text", "texts", "generation", "generations"}
)
TEXT_KEYS = PROMPT_KEYS | RESPONSE_KEYS
# Nested dicts deeper than this are not flattened (a log never needs it; a hostile file might).
MAX_DEPTH = 32
# More concurrent writers to one file than this is not a plausible layout: treat as disorder.
MAX_WRITERS = 8
# Text values read as non-finite numbers in an otherwise numeric column.
_NONFINITE_WORDS = frozenset({"nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"})


def parse_int(text: str) -> int | float:
    """A JSON integer literal; one longer than Python's int-from-text limit (4300 digits,
    ``sys.set_int_max_str_digits``) is read as a float (+-inf), like any integer past the float
    range (see :func:`float_or_inf`), instead of failing the whole line."""
    try:
        return int(text)
    except ValueError:
        return float(text)


def to_wall_seconds(values: Iterable[Any]) -> np.ndarray:
    """Numbers (s or ms since epoch) or ISO 8601 strings -> float seconds since epoch (NaN if unknown)."""
    vals = list(values)
    out = np.full(len(vals), np.nan)
    if not vals:
        return out
    try:
        arr = np.asarray(vals, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        # naive ISO times are taken as UTC: the writer's time zone is not recorded
        parsed = pd.to_datetime(pd.Series(vals, dtype=object).astype(str), utc=True, errors="coerce", format="ISO8601")
        ok = parsed.notna().to_numpy()
        if ok.any():
            # via microseconds: pandas >= 3 keeps a year past 2262 in seconds, and subtracting a
            # nanosecond Timestamp from it overflowed (a fuzzed "4096-01-01")
            us = parsed[ok].dt.tz_convert(None).to_numpy().astype("datetime64[us]").astype(np.int64)
            out[ok] = us / 1e6
        return out
    # a number above 1e11 cannot be seconds since the epoch (year 5138): it is milliseconds
    return np.where(np.abs(arr) > 1e11, arr / 1000.0, arr)


# the file line of each record: a reader's list of them, or an int32 array
Lines = Sequence[int] | np.ndarray


@dataclass
class Columns:
    """Numeric columns, text fields and oddities gathered from a list of flat-ish records."""

    n: int = 0
    numeric: dict[str, list[tuple[np.ndarray, np.ndarray]]] = field(default_factory=dict)
    real: Counter = field(default_factory=Counter)  # non-null numeric values per key
    nulls: Counter = field(default_factory=Counter)
    non_numeric: Counter = field(default_factory=Counter)
    raw: dict[str, list[tuple[np.ndarray, list]]] = field(default_factory=dict)  # kept as objects
    # per key, an evenly spread part of its texts, bounded as they are read (ppo_doctor.textbounds)
    texts: dict[str, Spread] = field(default_factory=dict)
    texts_cut: int = 0  # text samples cut to MAX_SAMPLE_CHARS
    too_deep: int = 0
    lines: np.ndarray | None = None  # int32 file line of each record (1-based), None: not known

    def keys(self) -> list[str]:
        """Keys holding at least one number (a key that is only ever null has no type)."""
        return [k for k in self.numeric if self.real[k]]

    def column(self, key: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(record positions, float values) of one numeric key, in record order."""
        pieces = self.numeric.get(key)
        if not pieces or not self.real[key]:
            return None
        return _joined(pieces)

    def raw_column(self, key: str) -> list[tuple[int, Any]]:
        out: list[tuple[int, Any]] = []
        for pos, vals in self.raw.get(key, ()):
            out.extend(zip(pos.tolist(), vals))
        out.sort(key=lambda t: t[0])
        return out


def _joined(pieces: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """One (positions, values) column of its pieces (one per key-set group or batch), in record order."""
    if len(pieces) == 1:
        return pieces[0]
    pos = np.concatenate([p for p, _ in pieces])
    val = np.concatenate([v for _, v in pieces])
    # each piece is in record order: pieces that follow each other (batches) need no sort
    if all(a[-1] < b[0] for (a, _), (b, _) in zip(pieces, pieces[1:])):
        return pos, val
    order = np.argsort(pos, kind="stable")
    return pos[order], val[order]


def collect_columns(records: list[dict], *, keep_raw: Iterable[str] = (), lines: Lines | None = None) -> Columns:
    """Transpose records into per-key columns (numpy conversion per key and key-set group).

    ``keep_raw`` names top-level keys whose values are kept as Python objects too (time stamps);
    ``lines``: the file line of each record, if known (see :attr:`Columns.lines`).
    """
    builder = ColumnsBuilder(keep_raw)
    builder.add(records, lines)
    return builder.columns()


class ColumnsBuilder:
    """:class:`Columns` of records given batch by batch, in their order: a reader that parses its
    file a block at a time holds one block's records as Python objects, not every line's (10^6
    short samples held as dicts took about 1 GiB: issue 39).  ``keep_raw``: as for
    :func:`collect_columns`."""

    def __init__(self, keep_raw: Iterable[str] = ()) -> None:
        self.cols = Columns()
        self.keep_raw = frozenset(keep_raw)
        self.lines: list[np.ndarray] = []

    def add(self, records: list[dict], lines: Lines | None = None) -> None:
        """The next batch of records; ``lines``: their file lines, given for every batch or for none."""
        cols = self.cols
        texts: dict[str, list[tuple[int, Any]]] = {}
        _collect(records, np.arange(cols.n, cols.n + len(records), dtype=np.int64), "", cols, self.keep_raw, 0, texts)
        _offer_texts(cols, texts)
        cols.n += len(records)
        if lines is not None:
            self.lines.append(np.asarray(lines, dtype=np.int32))

    def columns(self) -> Columns:
        """The columns of every batch added, each numeric key one piece."""
        cols = self.cols
        if self.lines:
            cols.lines = record_lines(np.concatenate(self.lines), cols.n)
        before: list[tuple[np.ndarray, np.ndarray]] = []
        shared = np.empty(0, dtype=np.int64)
        for key, pieces in cols.numeric.items():
            pos, val = _joined(pieces)
            if len(pieces) == len(before) and all(a is b for (a, _), (b, _) in zip(pieces, before)):
                pos = shared  # the records of the key before (keys of one key set): one positions array for both
            cols.numeric[key] = [(pos, val)]
            before, shared = pieces, pos
        return cols


def _collect(
    records: list[dict], positions: np.ndarray, prefix: str, cols: Columns, keep_raw: frozenset, depth: int, texts: dict[str, list[tuple[int, Any]]]
) -> None:
    """Columns of ``records`` (at ``positions``) into ``cols``; their text values into ``texts``
    (per key, (position, value)) for :func:`_offer_texts`."""
    first = tuple(records[0]) if records else ()
    if all(map(first.__eq__, map(tuple, records))):
        groups: dict[tuple, list[int]] = {first: []}  # the usual case: every record has the same keys
    else:
        groups = {}
        for i, rec in enumerate(records):
            groups.setdefault(tuple(rec), []).append(i)
    for keys, members in groups.items():
        if len(groups) == 1:
            pos, group = positions, records
        else:
            pos, group = positions[members], [records[i] for i in members]
        if not prefix:
            for key in keys:
                if key in keep_raw:
                    cols.raw.setdefault(key, []).append((pos, [r[key] for r in group]))
        block = _number_block(group, len(keys))
        if block is not None:
            for j, key in enumerate(keys):
                name = f"{prefix}{key}"
                cols.real[name] += len(group)
                cols.numeric.setdefault(name, []).append((pos, block[:, j]))
            continue
        for key, vals in zip(keys, zip(*(r.values() for r in group))):
            _convert(f"{prefix}{key}", pos, vals, cols, keep_raw, depth, texts)


def _offer_texts(cols: Columns, texts: dict[str, list[tuple[int, Any]]]) -> None:
    """Offer one batch's texts to their key's :class:`Spread` in record order (the key-set groups
    of a batch are converted one after the other); those kept are cut to MAX_SAMPLE_CHARS."""
    for name, items in texts.items():
        kept = cols.texts.get(name)
        if kept is None:
            kept = cols.texts[name] = Spread()
        items.sort(key=itemgetter(0))
        cols.texts_cut += sum(len(v) > MAX_SAMPLE_CHARS if type(v) is str else _too_long(v) for _, v in items)
        kept.offer_all(items, _cut_item)


def _too_long(texts: list[str]) -> int:
    return sum(len(x) > MAX_SAMPLE_CHARS for x in texts[:MAX_SAMPLES])


def _cut_item(item: tuple[int, Any]) -> tuple[int, Any]:
    """(position, text or list of texts) with each text cut to MAX_SAMPLE_CHARS (a list to MAX_SAMPLES texts)."""
    p, v = item
    return (p, cut_text(v)) if type(v) is str else (p, [cut_text(x) for x in v[:MAX_SAMPLES]])


_PLAIN_NUMBERS = frozenset({float, int, bool})
# the values numpy may infer a column from: a string among them would make a fixed-width 'U'
# array as wide as the longest text times the values (one 100 KB completion in 2,000 lines: 800 MB)
_NUMBERS_OR_NULL = _PLAIN_NUMBERS | {type(None)}


def _number_block(group: list[dict], width: int) -> np.ndarray | None:
    """All values of records sharing one key tuple as a (records x keys) float array, when they
    are all plain numbers (no null, string, dict or list); None otherwise."""
    # the first record decides whether to try: a string column (ids, paths) must not be converted,
    # while a stray numeric string inside a numeric column may be; a dict or list raises below
    if not width or not set(map(type, group[0].values())) <= _PLAIN_NUMBERS:
        return None
    try:
        flat = np.fromiter(chain.from_iterable(map(dict.values, group)), dtype=np.float64, count=len(group) * width)
    except (TypeError, ValueError, OverflowError):  # text, nested value, or an int beyond float range
        return None
    if np.isnan(flat).any():
        return None  # numpy reads a null as NaN: let the columns count their nulls one by one
    return flat.reshape(len(group), width)


def _convert(
    name: str, pos: np.ndarray, vals: tuple, cols: Columns, keep_raw: frozenset, depth: int, texts: dict[str, list[tuple[int, Any]]]
) -> None:
    # numpy infers the column type in C: numbers give a numeric dtype, numbers mixed with null give
    # object dtype; numeric-looking strings are NOT numbers (Tinker's checkpoint names "000020"),
    # so a column holding a string (or a dict or list) always takes the slow path.
    arr = None
    if set(map(type, vals)) <= _NUMBERS_OR_NULL:
        try:
            inferred = np.asarray(vals)
            arr = inferred.astype(np.float64) if inferred.dtype.kind in "fiub" else np.asarray(vals, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            arr = None
    if arr is not None:
        nulls = vals.count(None) if inferred.dtype.kind == "O" else 0
        cols.nulls[name] += nulls
        cols.real[name] += len(vals) - nulls
        cols.numeric.setdefault(name, []).append((pos, arr))
        return
    # slow path: this column mixes numbers with strings, dicts or lists
    leaf = name.rsplit("/", 1)[-1].lower()
    num_pos: list[int] = []
    num_val: list[float] = []
    sub_pos: list[int] = []
    sub_rec: list[dict] = []
    for p, v in zip(pos.tolist(), vals):
        t = type(v)
        if v is None:
            cols.nulls[name] += 1
            num_pos.append(p)
            num_val.append(np.nan)
        elif t is float or t is int or t is bool:
            num_pos.append(p)
            num_val.append(float_or_inf(v))
            cols.real[name] += 1
        elif t is dict:
            sub_pos.append(p)
            sub_rec.append(v)
        elif leaf in TEXT_KEYS and (t is str or (t is list and v and all(type(x) is str for x in v))):
            texts.setdefault(name, []).append((p, v))
        elif t is str and v.strip().lower() in _NONFINITE_WORDS:
            # some loggers stringify non-finite floats ("nan", "Infinity")
            num_pos.append(p)
            num_val.append(float(v.strip().lower().replace("infinity", "inf")))
            cols.real[name] += 1
        else:
            cols.non_numeric[name] += 1
    if num_pos:
        cols.numeric.setdefault(name, []).append((np.asarray(num_pos, dtype=np.int64), np.asarray(num_val, dtype=np.float64)))
    if sub_rec:
        if depth >= MAX_DEPTH:
            cols.too_deep += len(sub_rec)
        else:
            _collect(sub_rec, np.asarray(sub_pos, dtype=np.int64), name + "/", cols, keep_raw, depth + 1, texts)


def record_lines(lines: Lines | None, n: int) -> np.ndarray | None:
    """``lines`` (one per record, or None) as the int32 array :attr:`Columns.lines` holds."""
    if lines is None:
        return None
    out = np.asarray(lines, dtype=np.int32)
    if len(out) != n:
        raise ValueError(f"{len(out)} line numbers for {n} records")
    return out


def float_or_inf(x: Any) -> float:
    """float(x), with integers beyond the float range read as +-inf instead of raising."""
    try:
        return float(x)
    except OverflowError:
        return np.inf if x > 0 else -np.inf


# ---------------------------------------------------------------------------------------------
# from columns to a RawRun
# ---------------------------------------------------------------------------------------------
class StepInfo(NamedTuple):
    """The step of each record of a table, the key it was read from (None: the record order) and
    how many records lacked a usable one (given the step of the record before)."""

    key: str | None
    steps: np.ndarray  # int64 per record
    missing: int = 0  # records without the step key (forward-filled)


def usable_steps(values: np.ndarray) -> np.ndarray | None:
    """Which values of a step key are usable steps (finite integers within int64), or None
    when the key is not a step key at all.

    A few values that are not (a damaged or hand-edited line, a step past int64: one in twenty,
    or a single one when at least four in five are good) are treated like a missing step
    instead of discarding the key for the whole file; a key with more of them (epoch
    fractions, say) is not a step key.
    """
    finite = np.isfinite(values)
    with np.errstate(invalid="ignore"):
        usable = finite & (values == np.round(values)) & (np.abs(values) <= 2**62)
    bad, good = int((finite & ~usable).sum()), int(usable.sum())
    if not good or bad > max(1, (bad + good) // 20) or good < 4 * bad:
        return None
    return usable


def choose_steps(cols: Columns, candidates: Iterable[str] = STEP_KEYS) -> StepInfo:
    """Pick the step key: the first candidate whose values are finite integers (see :func:`usable_steps`)."""
    for key in candidates:
        col = cols.column(key)
        if col is None:
            continue
        pos, val = col
        usable = usable_steps(val)
        if usable is None:
            continue
        steps = np.full(cols.n, -1, dtype=np.int64)
        have = np.zeros(cols.n, dtype=bool)
        steps[pos[usable]] = val[usable].astype(np.int64)
        have[pos[usable]] = True
        missing = int(cols.n - have.sum())
        if missing:
            # a record without a step belongs to the step logged just before it
            idx = np.where(have, np.arange(cols.n), 0)
            np.maximum.accumulate(idx, out=idx)
            first = int(np.argmax(have))
            steps = np.where(np.arange(cols.n) < first, steps[first], steps[idx])
        return StepInfo(key, steps, missing)
    return StepInfo(None, np.arange(cols.n, dtype=np.int64))


def relogged(cols: Columns, steps: np.ndarray, exclude: Iterable[str] = ()) -> bool:
    """Whether some key was logged twice at one step with different values.

    That is what two runs in one file look like; train and eval lines sharing a step (different
    keys) or a line written twice (same values) are not.
    """
    skip = set(exclude)
    for key in cols.keys():
        if key in skip:
            continue
        pos, val = cols.column(key)  # type: ignore[misc]
        st = steps[pos]
        if len(st) < 2:
            continue
        order = np.argsort(st, kind="stable")
        st, val = st[order], val[order]
        same_step = st[1:] == st[:-1]
        if not same_step.any():
            continue
        same_value = (val[1:] == val[:-1]) | (np.isnan(val[1:]) & np.isnan(val[:-1]))
        if np.any(same_step & ~same_value):
            return True
    return False


def split_interleaved(steps: np.ndarray) -> np.ndarray | None:
    """Part id per record when the steps are several runs written concurrently, else None.

    Each record joins the part whose last step is ``step - 1`` (dense logs), else the part with
    the largest last step below it, else opens a new part.  It is an interleaving (not a restart)
    only when the file goes back more often than ``parts - 1`` times (a restart appended after a
    run goes back once) and no part is a single record.
    """
    back = int(np.count_nonzero(steps[1:] <= steps[:-1])) if len(steps) > 1 else 0
    if back == 0:
        return None
    last: list[int] = []
    part = np.empty(len(steps), dtype=np.int64)
    for i, s in enumerate(steps.tolist()):
        best = -1
        for j, l in enumerate(last):
            if l == s - 1:
                best = j
                break
            if l < s and (best < 0 or l > last[best]):
                best = j
        if best < 0:
            if len(last) >= MAX_WRITERS:
                return None
            last.append(s)
            part[i] = len(last) - 1
        else:
            last[best] = s
            part[i] = best
    k = len(last)
    if k < 2 or back <= k - 1:
        return None
    if np.bincount(part, minlength=k).min() < 2:
        return None
    return part


def build_raw_run(
    cols: Columns,
    steps: np.ndarray,
    source: str,
    *,
    exclude: Iterable[str] = (),
    wall: np.ndarray | None = None,
    select: np.ndarray | None = None,
    eval_all: bool = False,
) -> RawRun:
    """Series (and text samples) of the records where ``select`` is true (all when None)."""
    run = RawRun()
    skip = set(exclude)
    for key in cols.keys():
        if key in skip:
            continue
        pos, val = cols.column(key)  # type: ignore[misc]
        if select is not None:
            keep = select[pos]
            pos, val = pos[keep], val[keep]
        if not len(pos):
            continue
        lines = None if cols.lines is None else cols.lines[pos]
        s = RawSeries(tag=key, steps=steps[pos], values=val, wall_time=None if wall is None else wall[pos], source=source, lines=lines)
        (run.eval_series if eval_all or is_eval_key(key) else run.series).append(s)
    run.texts = _texts(cols, steps, source, select)
    return run


# Top-level keys that name the phase a row was logged in (a home-made loop's ``{"split": "val", ...}``
# or ``{"log_type": "eval", ...}`` beside its training rows), and the phase names that mark an
# evaluation row.  Rows of an evaluation phase are held-out measurements, kept apart like the
# rows of an ``eval/`` key (:func:`~ppo_doctor.canonical.frameworks.is_eval_key`); other phase
# names (``rollout``, a curriculum stage) stay training rows.
PHASE_KEYS = ("split", "phase", "mode", "log_type", "type", "stage")
EVAL_PHASES = frozenset({"eval", "evaluation", "val", "valid", "validation", "test", "testing"})


def eval_rows(cols: Columns) -> tuple[str, np.ndarray] | None:
    """``(key, mask)`` of the records that a phase key (:data:`PHASE_KEYS`, kept raw) marks as
    evaluation rows, when the log has both evaluation and other rows; else None."""
    for key in PHASE_KEYS:
        items = cols.raw_column(key)
        phases = {v.strip().lower() for _, v in items if isinstance(v, str)}
        if not phases & EVAL_PHASES or not phases - EVAL_PHASES:
            continue
        mask = np.zeros(cols.n, dtype=bool)
        mask[[p for p, v in items if isinstance(v, str) and v.strip().lower() in EVAL_PHASES]] = True
        return key, mask
    return None


def mean_per_step(s: RawSeries) -> RawSeries:
    """``s`` with one point per step, the mean of its values there: an evaluation logged as one
    row per episode or game (25 rows at step 30) is measured by its mean, where the frame would
    keep the last row alone."""
    steps = np.asarray(s.steps)
    u, first, inv = np.unique(steps, return_index=True, return_inverse=True)
    if len(u) == len(steps):
        return s
    vals = np.asarray(s.values, dtype=np.float64)
    ok = np.isfinite(vals)
    total = np.bincount(inv, weights=np.where(ok, vals, 0.0), minlength=len(u))
    count = np.bincount(inv, weights=ok.astype(np.float64), minlength=len(u))
    # a step with no finite value keeps its first (NaN or inf is a measurement too: PD601)
    means = vals[first].copy()
    np.divide(total, count, out=means, where=count > 0)
    return RawSeries(
        tag=s.tag,
        steps=u,
        values=means,
        wall_time=None if s.wall_time is None else np.asarray(s.wall_time)[first],
        source=s.source,
        lines=None if s.lines is None else np.asarray(s.lines)[first],
    )


# Numbers that describe one generated sample in a samples file, not a batch-level metric.
SAMPLE_NUMBER_KEYS = frozenset({"reward", "rewards", "score", "scores", "length", "response_length", "id", "idx", "index"})


def sample_rewards(cols: Columns, steps: np.ndarray) -> dict[tuple[int, str, str | None], float]:
    """(step, response, prompt) -> reward for the records of a samples file."""
    key = next((k for k in cols.keys() if k.rsplit("/", 1)[-1].lower() in ("reward", "rewards", "score", "scores")), None)
    col = cols.column(key) if key else None
    if col is None:
        return {}
    prompts = {p: v for k, items in cols.texts.items() if k.rsplit("/", 1)[-1].lower() in PROMPT_KEYS for p, v in items}
    out: dict[tuple[int, str, str | None], float] = {}
    for k, items in cols.texts.items():
        if k.rsplit("/", 1)[-1].lower() in RESPONSE_KEYS:
            rewards = _values_at(col, [p for p, _ in items])
            for (p, v), reward in zip(items, rewards):
                if isinstance(v, str) and reward is not None:
                    pr = prompts.get(p)
                    out[(int(steps[p]), v, pr if isinstance(pr, str) else None)] = reward
    return out


def _values_at(col: tuple[np.ndarray, np.ndarray], positions: list[int]) -> list[float | None]:
    """The value of a column at each record position (the last one logged there), None where it has
    none: looked up in the sorted positions, not through a dict of every record's (10^6 of them)."""
    pos, val = col
    at = np.asarray(positions, dtype=np.int64)
    i = np.searchsorted(pos, at, side="right") - 1
    found = (i >= 0) & (pos[np.maximum(i, 0)] == at)
    return [v if ok else None for v, ok in zip(val[np.maximum(i, 0)].tolist(), found.tolist())]


def _texts(cols: Columns, steps: np.ndarray, source: str, select: np.ndarray | None) -> list[TextSample]:
    """Text samples; a prompt and a response logged in the same record are paired."""

    def leaf(key: str) -> str:
        return key.rsplit("/", 1)[-1].lower()

    prompts: dict[int, Any] = {}
    for key, items in cols.texts.items():
        if leaf(key) in PROMPT_KEYS:
            for p, v in items:
                prompts.setdefault(p, v)
    answered = {p for key, items in cols.texts.items() if leaf(key) in RESPONSE_KEYS for p, _ in items}
    out: list[TextSample] = []
    for key, items in cols.texts.items():
        is_prompt = leaf(key) in PROMPT_KEYS
        for p, v in items:
            if (select is not None and not select[p]) or (is_prompt and p in answered):
                continue  # a prompt with a response is shown with that response
            step = int(steps[p])
            texts = v if isinstance(v, list) else [v]
            pr = None if is_prompt else prompts.get(p)
            if isinstance(pr, list) and len(pr) == len(texts):
                prs = pr
            else:
                prs = [pr if isinstance(pr, str) else None] * len(texts)
            line = None if cols.lines is None else int(cols.lines[p])
            out.extend(TextSample(step=step, tag=key, text=t, prompt=q, source=source, line=line) for t, q in zip(texts, prs))
    return out


def text_notes(cols: Columns, path: str) -> list[ReadIssue]:
    """Warnings for the text samples the bounds of :mod:`ppo_doctor.textbounds` cut while reading."""
    issues = []
    if cols.texts_cut:
        issues.append(ReadIssue(path, f"{cols.texts_cut:,} text sample(s) cut to their first {MAX_SAMPLE_CHARS:,} characters", level="warning"))
    left = sum(k.offered - len(k) for k in cols.texts.values())
    if left:
        offered = sum(k.offered for k in cols.texts.values())
        issues.append(ReadIssue(path, f"{offered - left:,} of {offered:,} records' text samples kept while reading, evenly spread (at most {MAX_SAMPLES:,} a run are judged)", level="warning"))
    return issues


def column_notes(cols: Columns, path: str, *, numeric_nulls_note: str, exclude: Iterable[str] = ()) -> list[ReadIssue]:
    """Warnings about nulls read as NaN, ignored non-numeric fields and over-deep nesting."""
    issues = text_notes(cols, path)
    nulls = {k: n for k, n in cols.nulls.items() if n and cols.real[k]}
    if nulls:
        total = sum(nulls.values())
        keys = ", ".join(sorted(nulls)[:5]) + (" ..." if len(nulls) > 5 else "")
        issues.append(ReadIssue(path, f"{total} null value(s) in numeric fields read as NaN ({keys}); {numeric_nulls_note}", level="warning"))
    only_null = sorted(k for k, n in cols.nulls.items() if n and not cols.real[k] and k not in cols.non_numeric)
    if only_null:
        keys = ", ".join(only_null[:5]) + (" ..." if len(only_null) > 5 else "")
        issues.append(ReadIssue(path, f"fields that are always null ignored: {keys}", level="warning"))
    skip = set(exclude)
    ignored = {k: n for k, n in cols.non_numeric.items() if k not in cols.texts and k not in skip}
    if ignored:
        keys = ", ".join(sorted(ignored)[:8]) + (" ..." if len(ignored) > 8 else "")
        issues.append(ReadIssue(path, f"non-numeric fields ignored: {keys}", level="warning"))
    if cols.too_deep:
        issues.append(ReadIssue(path, f"{cols.too_deep} value(s) nested deeper than {MAX_DEPTH} levels ignored", level="warning"))
    return issues



def arrow_records(source: Any, rows: int, path: Path, *, multiline: bool = False) -> Any | None:
    """pyarrow's table of the JSON objects in ``source`` (bytes or a pyarrow buffer), or None
    when pyarrow rejects them (a key given twice or changing type, bad UTF-8 in a key) or finds
    other than ``rows`` objects.  ``multiline``: objects may span lines.  Shared with
    :mod:`.trainer_state`."""
    import pyarrow as pa
    import pyarrow.json as pajson

    try:
        table = pajson.read_json(pa.BufferReader(source), parse_options=pajson.ParseOptions(newlines_in_values=multiline))
        table.column_names  # keys decode here (bad UTF-8 raises)
    except (pa.ArrowException, ValueError) as exc:
        log.debug("%s: not flat records for pyarrow (%s)", path, exc)
        return None
    return table if table.num_rows == rows else None


def arrow_table_columns(table: Any, time_keys: Iterable[str] = (), lines: Lines | None = None) -> Columns | None:
    """:class:`Columns` of a pyarrow table of records, or None when a column is not plain
    numbers (int, double, bool).  A null is a key its record did not log, so the caller must
    have made sure the input had no ``null`` token.  ``lines``: each row's file line, if known.
    Shared with :mod:`.trainer_state`."""
    import pyarrow as pa

    plain = (pa.types.is_integer, pa.types.is_floating, pa.types.is_boolean)
    if not all(any(is_t(t) for is_t in plain) for t in table.schema.types):
        return None
    n = table.num_rows
    cols = Columns(n=n, lines=record_lines(lines, n))
    every = np.arange(n, dtype=np.int64)
    for name, col in zip(table.column_names, table.columns):
        if col.null_count:
            pos = np.flatnonzero(col.is_valid().to_numpy(zero_copy_only=False))
            col = col.drop_null()
        else:
            pos = every
        if not len(pos):
            continue
        values = col.to_numpy()
        if name in time_keys:
            cols.raw[name] = [(pos, values.tolist())]
        cols.numeric[name] = [(pos, values.astype(np.float64, copy=False))]
        cols.real[name] = len(pos)
    return cols

