"""JSON lines logs (one object per line) and columnar JSON documents.

Handles the shapes seen in the wild (``reference/formats.md`` §3, §7, §12):

* plain JSON lines with a step key (``step``, ``global_step``, ``_step``, ``iteration`` ...), nested
  dicts flattened with ``/``, ``NaN``/``Infinity`` tokens (Python's ``json`` accepts them);
* veRL's ``FileLogger`` lines ``{"step": n, "data": {...}}``; veRL >= 0.7 writes NaN/Inf as
  ``null`` (orjson), so a null in an otherwise numeric key is read as NaN and reported;
* SB3 ``progress.json`` (one object per line, step ``time/total_timesteps``);
* several runs appended concurrently to one file (every step twice, order ``0,1,2,0,1,3,2 ...``):
  split into ``part1``, ``part2`` ... when the steps separate cleanly into increasing sequences;
* a single JSON object holding equal-length numeric arrays (``{"kl_curve": [...], "beta": 0.1}``):
  each array is a series indexed by position, scalars are config.

Speed (1,000,000 points must read at least as fast as ``pandas.read_json(lines=True)``): a file of
flat, all-number lines without ``null`` is parsed by pyarrow's JSON reader straight into columns
(on all cores, doubles exact); any other clean file is parsed in one call by pandas' bundled ujson
(``precise_float``), then records are grouped by key tuple and an all-number group becomes one 2-D
array in one numpy call; only mixed columns (null, text, nested dicts) are converted value by value.
This record-to-column machinery is shared with :mod:`.trainer_state` (HF ``log_history`` rows are
the same kind of dicts).
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

try:  # pandas' bundled ujson parses ~2x faster than json; precise_float keeps exact doubles
    from pandas.io.json import ujson_loads as _ujson_loads
except ImportError:  # pragma: no cover - pandas without it: the standard parser is used
    _ujson_loads = None

from ..errors import LogReadError
from ..frame import RawRun, RawSeries, ReadIssue, TextSample
from ..frameworks import is_eval_key
from . import filebytes

NAME = "jsonl"
log = logging.getLogger(__name__)

# Step keys in order of preference. ``time/total_timesteps`` is SB3's x-axis (formats.md §7);
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
# Hyper-parameter files a training script commonly writes next to its log.
CONFIG_NAMES = ("config.json", "hparams.json", "args.json", "params.json")
# Files that Hugging Face writes beside checkpoints: model artefacts, never training logs.
MODEL_ARTEFACTS = frozenset(
    {
        "config.json",
        "generation_config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
        "vocab.json",
        "added_tokens.json",
        "adapter_config.json",
        "preprocessor_config.json",
        "model.safetensors.index.json",
        "pytorch_model.bin.index.json",
    }
)
# Lines whose payload is one dict under these names (beside the step) are unwrapped (veRL FileLogger).
WRAPPER_KEYS = ("data", "metrics")
# Nested dicts deeper than this are not flattened (a log never needs it; a hostile file might).
MAX_DEPTH = 32
# More concurrent writers to one file than this is not a plausible layout: treat as disorder.
MAX_WRITERS = 8
_CHUNK_LINES = 4096
# Longest line read (16 MiB). Parsing a line costs about 14x its size in Python objects (a
# 350 MB line of numbers took 4.8 GB, issue 19); a longer line is skipped with a message naming
# the file and line (no metric logger writes one: a wide W&B-style record is ~100 KB).
MAX_LINE_BYTES = 16 << 20

_LEAD = re.compile(rb"(?:\xef\xbb\xbf)?\s*")
_BLANK_REST = re.compile(rb"\s*\Z")
_NONFINITE_WORDS = frozenset({"nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"})
_NUMERIC_ARRAY_RE = re.compile(rb'"[^"\n]{1,200}"\s*:\s*\[\s*(-?[0-9.]|NaN|-?Infinity|null)')


# ---------------------------------------------------------------------------------------------
# shared helpers
# ---------------------------------------------------------------------------------------------
def sibling_config(path: Path) -> tuple[dict[str, Any], list[ReadIssue]]:
    """Hyper-parameters from a ``config.json`` / ``hparams.json`` / ``args.json`` beside ``path``."""
    config: dict[str, Any] = {}
    issues: list[ReadIssue] = []
    for name in CONFIG_NAMES:
        cfg = path.parent / name
        if cfg == path or not cfg.is_file():
            continue
        try:
            data = json.loads(cfg.read_bytes())
        except (OSError, ValueError, RecursionError) as exc:
            issues.append(ReadIssue(str(cfg), f"config file not read ({type(exc).__name__})", level="warning"))
            continue
        if isinstance(data, dict):
            for k, v in data.items():
                config.setdefault(k, v)
    return config, issues


def parse_int(text: str) -> int | float:
    """A JSON integer literal; one longer than Python's int-from-text limit (4300 digits,
    ``sys.set_int_max_str_digits``) is read as a float (+-inf), like any integer past the float
    range (see :func:`_big`), instead of failing the whole line."""
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


@dataclass
class Columns:
    """Numeric columns, text fields and oddities gathered from a list of flat-ish records."""

    n: int = 0
    numeric: dict[str, list[tuple[np.ndarray, np.ndarray]]] = field(default_factory=dict)
    real: Counter = field(default_factory=Counter)  # non-null numeric values per key
    nulls: Counter = field(default_factory=Counter)
    non_numeric: Counter = field(default_factory=Counter)
    raw: dict[str, list[tuple[np.ndarray, list]]] = field(default_factory=dict)  # kept as objects
    texts: dict[str, list[tuple[int, Any]]] = field(default_factory=dict)
    too_deep: int = 0

    def keys(self) -> list[str]:
        """Keys holding at least one number (a key that is only ever null has no type)."""
        return [k for k in self.numeric if self.real[k]]

    def column(self, key: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(record positions, float values) of one numeric key, in record order."""
        pieces = self.numeric.get(key)
        if not pieces or not self.real[key]:
            return None
        if len(pieces) == 1:
            return pieces[0]
        pos = np.concatenate([p for p, _ in pieces])
        val = np.concatenate([v for _, v in pieces])
        order = np.argsort(pos, kind="stable")
        return pos[order], val[order]

    def raw_column(self, key: str) -> list[tuple[int, Any]]:
        out: list[tuple[int, Any]] = []
        for pos, vals in self.raw.get(key, ()):
            out.extend(zip(pos.tolist(), vals))
        out.sort(key=lambda t: t[0])
        return out


def collect_columns(records: list[dict], *, keep_raw: Iterable[str] = ()) -> Columns:
    """Transpose records into per-key columns (numpy conversion per key and key-set group).

    ``keep_raw`` names top-level keys whose values are kept as Python objects too (time stamps).
    """
    cols = Columns(n=len(records))
    _collect(records, np.arange(len(records), dtype=np.int64), "", cols, frozenset(keep_raw), 0)
    return cols


def _collect(records: list[dict], positions: np.ndarray, prefix: str, cols: Columns, keep_raw: frozenset, depth: int) -> None:
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
            _convert(f"{prefix}{key}", pos, vals, cols, keep_raw, depth)


_PLAIN_NUMBERS = frozenset({float, int, bool})


def _number_block(group: list[dict], width: int) -> np.ndarray | None:
    """All values of records sharing one key tuple as a (records x keys) float array, when they
    are all plain numbers (no null, string, dict or list); None otherwise."""
    # the first record decides whether to try: a string column (ids, paths) must not be converted,
    # while a stray numeric string inside a numeric column may be; null, dict or list raise below
    if not width or not set(map(type, group[0].values())) <= _PLAIN_NUMBERS:
        return None
    try:
        flat = np.fromiter(chain.from_iterable(map(dict.values, group)), dtype=np.float64, count=len(group) * width)
    except (TypeError, ValueError, OverflowError):  # null, text, nested value, or an int beyond float range
        return None
    return flat.reshape(len(group), width)


def _convert(name: str, pos: np.ndarray, vals: tuple, cols: Columns, keep_raw: frozenset, depth: int) -> None:
    # numpy infers the column type in C: numbers give a numeric dtype, numbers mixed with null give
    # object dtype (converted when no string hides in it); numeric-looking strings are NOT numbers
    # (Tinker's checkpoint names "000020"), so a 'U' dtype always takes the slow path.
    arr = None
    try:
        inferred = np.asarray(vals)
        if inferred.ndim == 1 and inferred.dtype.kind in "fiub":
            arr = inferred.astype(np.float64)
        elif inferred.ndim == 1 and inferred.dtype.kind == "O" and not any(type(v) is str for v in vals):
            arr = np.asarray(vals, dtype=np.float64)
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
            num_val.append(_big(v))
            cols.real[name] += 1
        elif t is dict:
            sub_pos.append(p)
            sub_rec.append(v)
        elif leaf in TEXT_KEYS and (t is str or (t is list and v and all(type(x) is str for x in v))):
            cols.texts.setdefault(name, []).append((p, v))
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
            _collect(sub_rec, np.asarray(sub_pos, dtype=np.int64), name + "/", cols, keep_raw, depth + 1)


def _big(x: Any) -> float:
    """float(x), with integers beyond the float range read as +-inf instead of raising."""
    try:
        return float(x)
    except OverflowError:
        return np.inf if x > 0 else -np.inf


# ---------------------------------------------------------------------------------------------
# from columns to a RawRun
# ---------------------------------------------------------------------------------------------
@dataclass
class StepInfo:
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
        s = RawSeries(tag=key, steps=steps[pos], values=val, wall_time=None if wall is None else wall[pos], source=source)
        (run.eval_series if eval_all or is_eval_key(key) else run.series).append(s)
    run.texts = _texts(cols, steps, source, select)
    return run


# Numbers that describe one generated sample in a samples file, not a batch-level metric.
SAMPLE_NUMBER_KEYS = frozenset({"reward", "rewards", "score", "scores", "length", "response_length", "id", "idx", "index"})


def _sample_rewards(cols: Columns, steps: np.ndarray) -> dict[tuple[int, str, str | None], float]:
    """(step, response, prompt) -> reward for the records of a samples file."""
    key = next((k for k in cols.keys() if k.rsplit("/", 1)[-1].lower() in ("reward", "rewards", "score", "scores")), None)
    col = cols.column(key) if key else None
    if col is None:
        return {}
    reward_at = dict(zip(col[0].tolist(), col[1].tolist()))
    prompts = {p: v for k, items in cols.texts.items() if k.rsplit("/", 1)[-1].lower() in PROMPT_KEYS for p, v in items}
    out: dict[tuple[int, str, str | None], float] = {}
    for k, items in cols.texts.items():
        if k.rsplit("/", 1)[-1].lower() in RESPONSE_KEYS:
            for p, v in items:
                if isinstance(v, str) and p in reward_at:
                    pr = prompts.get(p)
                    out[(int(steps[p]), v, pr if isinstance(pr, str) else None)] = reward_at[p]
    return out


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
            out.extend(TextSample(step=step, tag=key, text=t, prompt=q, source=source) for t, q in zip(texts, prs))
    return out


def column_notes(cols: Columns, path: str, *, numeric_nulls_note: str, exclude: Iterable[str] = ()) -> list[ReadIssue]:
    """Warnings about nulls read as NaN, ignored non-numeric fields and over-deep nesting."""
    issues: list[ReadIssue] = []
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


# ---------------------------------------------------------------------------------------------
# the format module
# ---------------------------------------------------------------------------------------------
def sniff(path: Path, head: bytes) -> bool:
    """JSON lines (first line an object) or one JSON object holding numeric arrays."""
    if path.name in MODEL_ARTEFACTS:
        return False
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text.startswith(b"{"):
        return False
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return True  # named JSON lines: let the reader say which line is damaged
    if b"\n" in text:
        first = text.split(b"\n", 1)[0].strip()
        if first != b"{":
            try:
                return isinstance(json.loads(first), dict)
            except (ValueError, RecursionError):
                return False
    elif len(head) < 4096:
        try:
            return isinstance(json.loads(text), dict)
        except (ValueError, RecursionError):
            return False
    elif text.startswith(b'{"'):
        return True  # a first line longer than the head: JSON lines with wide records
    # a pretty-printed document: claim it only when it holds numeric arrays and is no trainer_state
    return b'"log_history"' not in text and _NUMERIC_ARRAY_RE.search(text) is not None


def read(path: Path) -> list[RawRun]:
    try:
        data, long = filebytes.read_capped_lines(path, MAX_LINE_BYTES)
    except OSError as exc:
        raise LogReadError(str(path), f"cannot read file ({exc.strerror or exc})") from exc
    skipped = [
        ReadIssue(str(path), f"line {ln.number} skipped: {ln.length} bytes, over the {MAX_LINE_BYTES}-byte limit for one JSON line (MAX_LINE_BYTES)", offset=ln.offset)
        for ln in long
    ]
    runs = _read_data(path, data, skipped)
    if skipped and runs:
        runs[0].issues[:0] = skipped
    return runs


def _read_data(path: Path, data: bytes, skipped: list[ReadIssue]) -> list[RawRun]:
    start = _LEAD.match(data).end()  # type: ignore[union-attr]
    if start == len(data):
        if skipped:
            raise LogReadError(str(path), "no JSON object read: " + skipped[0].message, offset=skipped[0].offset)
        raise LogReadError(str(path), "empty file")
    nl = data.find(b"\n", start)
    first_line = data[start : nl if nl >= 0 else len(data)].strip()
    single = nl < 0 or _BLANK_REST.match(data, nl) is not None
    if first_line == b"{" or (single and _NUMERIC_ARRAY_RE.search(data)):
        doc = _read_document(path, data)
        if doc is not None:
            return doc
    fast = _arrow_columns(path, data)
    if fast is not None:
        cols, time_keys = fast
        return _columns_to_runs(path, cols, None, time_keys, list(range(1, cols.n + 1)), [])
    records, lines, issues = parse_lines(path, data)
    if not records:
        first = skipped[0] if skipped else issues[0] if issues else None
        raise LogReadError(str(path), "no JSON object found" + (f" ({first.message})" if first else ""), offset=first.offset if first else None)
    return _records_to_runs(path, records, lines, issues, data=data)


def _arrow_columns(path: Path, data: bytes) -> tuple[Columns, list[str]] | None:
    """(columns, time keys) of a file whose lines are flat objects of plain numbers, read by
    pyarrow in one typed pass; None for every other file (the record path reads it).

    Lines may log different keys (train and eval lines): a key missing from a line is a null
    in pyarrow's table, which is only unambiguous when the file has no ``null`` token at all.
    pyarrow skips blank lines, so the row count must equal the line count; it rejects a key
    given twice in one object (``json`` would keep the last) and a key changing type; text
    shows in the schema.  Doubles parse exactly (checked against ``json.loads`` in the tests).
    Measured on benchmarks/ 1M-point JSONL: 2.2-2.7x ``pandas.read_json(lines=True)`` (issue 6).
    """
    if not data.startswith(b"{") or b"\r" in data or b"null" in data:
        return None
    lines = data.count(b"\n") + (not data.endswith(b"\n"))
    # one brace and no bracket per line: only flat objects reach pyarrow, whose recursive parser
    # crashes the process on deeply nested input (a 100,000-deep [[[...]]] in the hostile tests)
    if data.count(b"{") != lines or b"[" in data:
        return None
    table = arrow_records(data, lines, path)
    if table is None:
        return None
    head = min(table.num_rows, 50)  # the record path looks for time keys in the first 50 lines
    time_keys = [k for k in TIME_KEYS if k in table.column_names and table.column(k).slice(0, head).null_count < head]
    cols = arrow_table_columns(table, time_keys)
    return None if cols is None else (cols, time_keys)


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


def arrow_table_columns(table: Any, time_keys: Iterable[str] = ()) -> Columns | None:
    """:class:`Columns` of a pyarrow table of records, or None when a column is not plain
    numbers (int, double, bool).  A null is a key its record did not log, so the caller must
    have made sure the input had no ``null`` token.  Shared with :mod:`.trainer_state`."""
    import pyarrow as pa

    plain = (pa.types.is_integer, pa.types.is_floating, pa.types.is_boolean)
    if not all(any(is_t(t) for is_t in plain) for t in table.schema.types):
        return None
    n = table.num_rows
    cols = Columns(n=n)
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


def _whole_file(data: bytes) -> list[dict] | None:
    """Every line of a clean file in one parse, or None (then lines are checked one by one).

    The lines are joined with commas into one array; the parse must give exactly one object per
    line, otherwise (a blank, broken or multi-object line) the careful per-chunk path runs.
    """
    if not data.startswith(b"{") or b"\r" in data:
        return None
    n = data.count(b"\n")
    if data.endswith(b"\n"):
        # the last newline becomes a comma: close the array with a null instead of copying a slice
        blob, n = b"".join((b"[", data.replace(b"\n", b","), b"null]")), n + 1
    else:
        blob, n = b"".join((b"[", data.replace(b"\n", b","), b"]")), n + 1
    objs = _loads_array(blob, fast=True)
    if objs is None or len(objs) != n:
        return None
    if data.endswith(b"\n"):
        objs.pop()
    if not all(type(o) is dict for o in objs):
        return None
    return objs


def parse_lines(path: Path, data: bytes, *, fast: bool = True) -> tuple[list[dict], list[int], list[ReadIssue]]:
    """Every object line of the file, its 1-based line number, and one issue per bad line.

    Chunks of lines are parsed as one JSON array (one C call instead of thousands) when every
    line of the chunk looks like a whole object; otherwise the chunk is parsed line by line.
    """
    whole = _whole_file(data) if fast else None
    if whole is not None:
        return whole, list(range(1, len(whole) + 1)), []
    raw_lines = data.split(b"\n")
    ends_clean = data.endswith(b"\n")
    records: list[dict] = []
    line_nos: list[int] = []
    bad: list[tuple[int, str]] = []  # (0-based line index, why)
    for a in range(0, len(raw_lines), _CHUNK_LINES):
        chunk = [(i, raw_lines[i].strip()) for i in range(a, min(a + _CHUNK_LINES, len(raw_lines)))]
        chunk = [(i, l) for i, l in chunk if l]
        if not chunk:
            continue
        if all(l[:1] == b"{" and l[-1:] == b"}" for _, l in chunk):
            objs = _loads_array(b"[" + b",".join(l for _, l in chunk) + b"]", fast=fast)
            if objs is not None and len(objs) == len(chunk) and all(type(o) is dict for o in objs):
                records.extend(objs)
                line_nos.extend(i + 1 for i, _ in chunk)
                continue
        for i, l in chunk:
            try:
                obj = json.loads(l, parse_int=parse_int)
            except RecursionError:
                bad.append((i, f"line {i + 1} skipped: nesting too deep"))
                continue
            except ValueError as exc:
                objs = _run_together(l)
                if objs:
                    records.extend(objs)
                    line_nos.extend([i + 1] * len(objs))
                    bad.append((i, f"line {i + 1}: {len(objs)} JSON object(s) read, the rest of the line is damaged (a lost line break?)"))
                    continue
                partial = i == len(raw_lines) - 1 and not ends_clean
                bad.append((i, f"line {i + 1} skipped: " + ("partial last line (file cut short?)" if partial else f"not valid JSON ({_short(exc)})")))
                continue
            if type(obj) is not dict:
                bad.append((i, f"line {i + 1} skipped: not a JSON object ({type(obj).__name__})"))
                continue
            records.append(obj)
            line_nos.append(i + 1)
    issues: list[ReadIssue] = []
    if bad:
        offsets = np.concatenate([[0], np.cumsum([len(l) + 1 for l in raw_lines])])
        for i, message in bad[:20]:
            issues.append(ReadIssue(str(path), message, offset=int(offsets[i])))
        if len(bad) > 20:
            issues.append(ReadIssue(str(path), f"{len(bad) - 20} more damaged line(s)", offset=int(offsets[bad[20][0]])))
    return records, line_nos, issues


_BETWEEN_OBJECTS = frozenset(bytes(range(0x21)))  # whitespace and control bytes: a damaged line break


def _run_together(line: bytes) -> list[dict]:
    """The complete objects at the start of a damaged line: ``{..}{..}`` (a line break lost or
    damaged, two writers racing) or ``{..}`` followed by stray bytes; reading stops at the
    first thing that is not an object after whitespace or control bytes."""
    text = line.decode("utf-8", "surrogateescape")
    decoder = json.JSONDecoder(parse_int=parse_int)
    out: list[dict] = []
    pos = 0
    while pos < len(text) and text[pos] == "{":
        try:
            obj, pos = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            break
        out.append(obj)
        while pos < len(text) and ord(text[pos]) in _BETWEEN_OBJECTS:
            pos += 1
    return out


def _loads_array(blob: bytes, *, fast: bool = False) -> list | None:
    """Parse a JSON array; None when it is not valid JSON.

    ``fast`` uses pandas' ujson (about twice as fast; ``precise_float`` keeps exact doubles) but it
    reads the ``NaN`` token as null, so callers check for nulls afterwards (see ``read``).
    """
    if fast and _ujson_loads is not None:
        try:
            return _ujson_loads(blob, precise_float=True)
        except (ValueError, OverflowError, RecursionError, TypeError):
            pass  # out-of-range numbers, odd bytes: let the standard parser decide
    try:
        return json.loads(blob)
    except (ValueError, RecursionError):
        return None


def _short(exc: Exception) -> str:
    msg = str(exc)
    return msg if len(msg) < 80 else msg[:77] + "..."


def _unwrap(records: list[dict]) -> tuple[list[dict], str | None]:
    """veRL's ``{"step": n, "data": {...}}``: lift the wrapped dict to the top level."""
    for wk in WRAPPER_KEYS:
        if not any(isinstance(r.get(wk), dict) for r in records[:100]):
            continue  # the usual flat file: no need to look at every line
        hits = sum(1 for r in records if isinstance(r.get(wk), dict) and len(r) <= 3)
        if hits and hits >= len(records) // 2:
            out = []
            for r in records:
                inner = r.get(wk)
                if isinstance(inner, dict):
                    merged = {k: v for k, v in r.items() if k != wk}
                    merged.update(inner)
                    out.append(merged)
                else:
                    out.append(r)
            return out, wk
    return records, None


def _records_to_runs(
    path: Path, records: list[dict], line_nos: list[int], issues: list[ReadIssue], *, data: bytes | None = None
) -> list[RawRun]:
    records, wrapper = _unwrap(records)
    time_keys = [k for k in TIME_KEYS if any(k in r for r in records[:50])]
    cols = collect_columns(records, keep_raw=time_keys)
    if data is not None and any(cols.nulls.values()) and b"NaN" in data:
        # the fast parser read NaN tokens as null: parse again with json, which keeps them apart
        records, line_nos, issues = parse_lines(path, data, fast=False)
        return _records_to_runs(path, records, line_nos, issues)
    return _columns_to_runs(path, cols, wrapper, time_keys, line_nos, issues)


def _columns_to_runs(
    path: Path, cols: Columns, wrapper: str | None, time_keys: list[str], line_nos: list[int], issues: list[ReadIssue]
) -> list[RawRun]:
    """Runs from the columns of one file: the step key chosen, wall-clock keys taken out, samples
    files, interleaved writers and restarts recognised.  ``wrapper``: the key veRL lines were
    unwrapped from, if any."""
    src = str(path)
    info = choose_steps(cols)
    notes = list(issues)
    if info.key is None:
        notes.append(ReadIssue(src, "no step key found (tried step, global_step, _step, iteration ...): line order used as step", level="warning"))
    elif info.missing:
        notes.append(ReadIssue(src, f"{info.missing} line(s) without a usable '{info.key}' (missing, not an integer or past int64) given the step of the line before", level="warning"))
    wall = None
    exclude = {info.key} if info.key else set()
    for tk in time_keys:
        items = cols.raw_column(tk)
        secs = to_wall_seconds(v for _, v in items)
        finite = secs[np.isfinite(secs)]
        # seconds since the epoch (after 1973) or ISO text; a small number is elapsed time, a metric
        if not len(finite) or finite.min() < EPOCH_FLOOR:
            continue
        wall = np.full(cols.n, np.nan)
        wall[[p for p, _ in items]] = secs
        exclude.add(tk)
        break
    null_note = (
        "veRL >= 0.7 writes NaN/Inf as null (orjson)" if wrapper == "data" else "null usually stands for NaN/Inf or a value not logged"
    )
    notes.extend(column_notes(cols, src, numeric_nulls_note=null_note, exclude=time_keys))
    config, cfg_issues = sibling_config(path)
    notes.extend(cfg_issues)

    if not any(k not in exclude for k in cols.keys()):
        # a file without metrics (Tinker's checkpoints.jsonl: names and paths per batch) adds nothing
        return [RawRun(config=config, texts=build_raw_run(cols, info.steps, src, exclude=exclude).texts)]
    per_sample = len(np.unique(info.steps)) < len(info.steps)
    if per_sample and cols.texts and all(k in exclude or k.rsplit("/", 1)[-1].lower() in SAMPLE_NUMBER_KEYS for k in cols.keys()):
        # a samples file (prompt, response, reward per line, several lines per step): the numbers
        # describe single generations, not the batch, so they are not metric series of the run
        texts = build_raw_run(cols, info.steps, src, exclude=exclude).texts
        rewards = _sample_rewards(cols, info.steps)
        for t in texts:
            t.reward = rewards.get((t.step, t.text, t.prompt))
        return [RawRun(config=config, texts=texts, issues=notes)]
    repeats = len(info.steps) > 1 and bool(np.any(info.steps[1:] <= info.steps[:-1]))
    part = split_interleaved(info.steps) if repeats and relogged(cols, info.steps, exclude) else None
    if part is not None:
        k = int(part.max()) + 1
        runs = []
        for j in range(k):
            sel = part == j
            run = build_raw_run(cols, info.steps, src, exclude=exclude, wall=wall, select=sel)
            run.name = f"part{j + 1}"
            run.config = dict(config)
            first = line_nos[int(np.argmax(sel))]
            run.issues = list(notes) + [
                ReadIssue(
                    src,
                    f"{k} runs written to the same file (steps repeat in interleaved order); split into part1..part{k}, "
                    f"this is part{j + 1} ({int(sel.sum())} lines, first at line {first})",
                    level="warning",
                )
            ]
            runs.append(run)
        return runs

    run = build_raw_run(cols, info.steps, src, exclude=exclude, wall=wall)
    run.config = config
    run.issues = notes
    # a step lower than the one before is a restart; an equal step is just another line of it
    back = np.flatnonzero(info.steps[1:] < info.steps[:-1]) + 1 if len(info.steps) > 1 else np.array([], dtype=np.int64)
    if len(back):
        run.restarts = [int(info.steps[i]) for i in back]
        run.issues.append(
            ReadIssue(
                src,
                f"step goes back {len(back)} time(s) (first at line {line_nos[int(back[0])]}, step "
                f"{int(info.steps[back[0] - 1])} -> {int(info.steps[back[0]])}); the last value logged for a step wins",
                level="warning",
            )
        )
    return [run]


def _read_document(path: Path, data: bytes) -> list[RawRun] | None:
    """A single JSON object with equal-length numeric arrays (None when it is not one)."""
    src = str(path)
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None
    flat: dict[str, Any] = {}
    _flatten(doc, "", flat, 0)
    arrays: dict[str, np.ndarray] = {}
    config: dict[str, Any] = {}
    for k, v in flat.items():
        if isinstance(v, list):
            if v and all(x is None or type(x) in (int, float, bool) for x in v) and any(x is not None for x in v):
                try:
                    arrays[k] = np.asarray(v, dtype=np.float64)
                except OverflowError:
                    arrays[k] = np.asarray([np.nan if x is None else _big(x) for x in v], dtype=np.float64)
        else:
            config[k] = v
    if not arrays:
        return None
    lengths = Counter(len(a) for a in arrays.values())
    n = max(lengths, key=lambda L: (lengths[L], L))
    run = RawRun(config=config)
    steps = np.arange(n, dtype=np.int64)
    for k, a in arrays.items():
        if len(a) == n:
            (run.eval_series if is_eval_key(k) else run.series).append(RawSeries(tag=k, steps=steps, values=a, source=src))
    run.issues.append(ReadIssue(src, f"JSON document of per-step arrays without step numbers: array position (0..{n - 1}) used as step", level="warning"))
    others = sorted(k for k, a in arrays.items() if len(a) != n)
    if others:
        run.issues.append(ReadIssue(src, f"arrays of another length than {n} ignored: {', '.join(others[:8])}", level="warning"))
    cfg, cfg_issues = sibling_config(path)
    for k, v in cfg.items():
        run.config.setdefault(k, v)
    run.issues.extend(cfg_issues)
    return [run]


def _flatten(obj: dict, prefix: str, out: dict, depth: int) -> None:
    for k, v in obj.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and depth < MAX_DEPTH:
            _flatten(v, key + "/", out, depth + 1)
        else:
            out[key] = v
