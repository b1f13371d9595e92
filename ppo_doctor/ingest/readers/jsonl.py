"""JSON lines logs (one object per line) and columnar JSON documents.

Handles the shapes seen in the wild (docs/sources.md#verl-metrics,
docs/sources.md#sb3-logger-keys, docs/sources.md#nan-encodings):

* plain JSON lines with a step key (``step``, ``global_step``, ``_step``, ``iteration`` ...), nested
  dicts flattened with ``/``, ``NaN``/``Infinity`` tokens (Python's ``json`` accepts them);
* veRL's ``FileLogger`` lines ``{"step": n, "data": {...}}``; veRL >= 0.7 writes NaN/Inf as
  ``null`` (orjson), so a null in an otherwise numeric key is read as NaN and reported;
* SB3 ``progress.json`` (one object per line, step ``time/total_timesteps``);
* training and evaluation rows in one file, told apart by a phase key (``"split": "val"``,
  ``"log_type": "eval"``: :data:`.tabular.PHASE_KEYS`, :data:`.tabular.EVAL_PHASES`): the
  evaluation rows are the run's held-out series, one mean per step (a loop that writes one row
  per evaluated game or episode), and the training rows alone its training series;
* several runs appended concurrently to one file (every step twice, order ``0,1,2,0,1,3,2 ...``):
  split into ``part1``, ``part2`` ... when the steps separate cleanly into increasing sequences;
* a single JSON object holding equal-length numeric arrays (``{"kl_curve": [...], "beta": 0.1}``):
  each array is a series indexed by position, scalars are config;
* a JSON array of records (``json.dump(history, f)`` of a list of dicts, pandas'
  ``orient="records"``): one record a row, its position the step unless the records hold a step key;
* a table written by pandas' ``DataFrame.to_json``: ``orient="index"`` (``{"0": {"reward": ...},
  "1": {...}}``, what ``pd.DataFrame(trainer.state.log_history).to_json(orient="index")`` gives)
  or the default ``orient="columns"`` (``{"reward": {"0": ..., "1": ...}}``): one row a record,
  the row label the step unless the rows hold a step key.

Speed (1,000,000 points must read at least as fast as ``pandas.read_json(lines=True)``): a file of
flat, all-number lines without ``null`` is parsed by pyarrow's JSON reader straight into columns
(on all cores, doubles exact).  Any other file is read a block of lines (:data:`_BLOCK_BYTES`) at
a time: a clean block is parsed in one call by pandas' bundled ujson (``precise_float``), its
records are grouped by key tuple and an all-number group becomes one 2-D array in one numpy call
(only mixed columns, with null, text or nested dicts, are converted value by value), and the
block's records are dropped before the next is parsed.  So memory follows the numbers and the
text samples kept, not the lines (10^6 lines of short samples held as dicts took 1.2 GiB: issue
39).  A file under 1 MiB (``PARSER_IMPORT_BYTES``) is parsed by ``json``, as importing pyarrow
or pandas would cost more than their parse saves.
The record-to-column machinery is :mod:`.tabular`, shared with :mod:`.trainer_state` (HF
``log_history`` rows are the same kind of dicts), :mod:`.csv_logs` and :mod:`.wandb.binary`.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from ...errors import LogReadError
from ...frame import RawRun, RawSeries, ReadIssue
from ...canonical.frameworks import is_eval_key
from ...lazy import pd
from .. import filebytes
from ..base import PARSER_IMPORT_BYTES
from ..tabular import (
    EPOCH_FLOOR,
    MAX_DEPTH,
    PHASE_KEYS,
    SAMPLE_NUMBER_KEYS,
    STEP_KEYS,
    TIME_KEYS,
    Columns,
    ColumnsBuilder,
    arrow_records,
    arrow_table_columns,
    build_raw_run,
    choose_steps,
    column_notes,
    eval_rows,
    text_notes,
    float_or_inf,
    mean_per_step,
    parse_int,
    relogged,
    sample_rewards,
    split_interleaved,
    to_wall_seconds,
)

NAME = "jsonl"
log = logging.getLogger(__name__)

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
# The first records decide the wrapper (one wrapping a dict in the first 100) and the time keys (seen in the first 50).
_HEAD = 100
# Lines are parsed and turned into columns a block of about this many bytes at a time, so that
# only one block's records are Python objects at once.  Small blocks stay in the CPU caches:
# 10^6 short samples read in 1.7 s with 64 or 128 KiB blocks, 2.4 s with 256 KiB, 3.2 s with 1 MiB.
_BLOCK_BYTES = 1 << 17
_CHUNK_LINES = 4096
_LISTED_DAMAGE = 20  # damaged lines named one by one; the others are counted
# Longest line read (16 MiB). Parsing a line costs about 14x its size in Python objects (a
# 350 MB line of numbers took 4.8 GB: benchmarks/RESULTS.md, "Hostile inputs"); a longer line is
# skipped with a message naming the file and line (no metric logger writes one: a wide W&B-style record is ~100 KB).
MAX_LINE_BYTES = 16 << 20

_LEAD = re.compile(rb"(?:\xef\xbb\xbf)?\s*")
_BLANK_REST = re.compile(rb"\s*\Z")
_NUMERIC_ARRAY_RE = re.compile(rb'"[^"\n]{1,200}"\s*:\s*\[\s*(-?[0-9.]|NaN|-?Infinity|null)')
# The start of a pandas ``DataFrame.to_json`` table: a row label holding a record
# (``orient="index"``) or a column holding a row label (``orient="columns"``).
_FRAME_RE = re.compile(rb'\s*\{\s*(?:"-?\d+"\s*:\s*\{|"[^"\n]{1,200}"\s*:\s*\{\s*"-?\d+"\s*:)')
# A table of fewer rows is no log (a dict of settings keyed by a number).
_MIN_FRAME_ROWS = 2
# A string value (a colon, then a quote): pyarrow would read such a file only to find a text
# column it does not take (10^6 short samples: 0.4 s and 80 MB for nothing).  The search costs
# about as much as the other checks of the file (70 ms a 100 MB); a key ending in a colon
# matches too, and its file is read by the record path.
_STRING_VALUE = re.compile(rb':\s*"')


# ---------------------------------------------------------------------------------------------
# hyper-parameters beside the log
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


# ---------------------------------------------------------------------------------------------
# the format module
# ---------------------------------------------------------------------------------------------
def sniff(path: Path, head: bytes) -> bool:
    """JSON lines (first line an object) or one JSON object holding numeric arrays."""
    if path.name in MODEL_ARTEFACTS:
        return False
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"["):
        # a JSON array of records (``json.dump(history, f)`` of a list of dicts, pandas'
        # ``to_json(orient="records")``): claimed when its first element is an object
        return text[1:].lstrip(b" \t\r\n").startswith(b"{")
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
    # a pretty-printed document: claim it only when it holds numeric arrays or a pandas table, and
    # is no trainer_state
    return b'"log_history"' not in text and (_NUMERIC_ARRAY_RE.search(text) is not None or _FRAME_RE.match(text) is not None)


def read(path: Path) -> list[RawRun]:
    try:
        data, long = filebytes.read_capped_lines(path, MAX_LINE_BYTES)
    except OSError as exc:
        raise LogReadError(str(path), f"cannot read file ({exc.strerror or exc})") from exc
    skipped = [
        ReadIssue(str(path), f"line {ln.number} skipped: {ln.length} bytes, over the {MAX_LINE_BYTES}-byte limit for one JSON line (MAX_LINE_BYTES)", offset=ln.offset)
        for ln in long
    ]
    found = _read_data(path, data, skipped)
    del data  # the runs are made from the columns alone: at 10^6 lines the file's bytes were a quarter of the peak
    runs = found if isinstance(found, list) else _columns_to_runs(path, *found)
    if skipped and runs:
        runs[0].issues[:0] = skipped
    return runs


# the columns of a file's lines, the wrapper unwrapped (if any), the time keys, the damaged lines
_Found = tuple[Columns, str | None, list[str], list[ReadIssue]]


def _read_data(path: Path, data: bytes, skipped: list[ReadIssue]) -> list[RawRun] | _Found:
    """The runs of a JSON document, or what :func:`_columns_to_runs` makes the runs of JSON lines from."""
    start = _LEAD.match(data).end()  # type: ignore[union-attr]
    if start == len(data):
        if skipped:
            raise LogReadError(str(path), "no JSON object read: " + skipped[0].message, offset=skipped[0].offset)
        raise LogReadError(str(path), "empty file")
    nl = data.find(b"\n", start)
    first_line = data[start : nl if nl >= 0 else len(data)].strip()
    if data.startswith(b"[", start):
        return _read_records_array(path, data)
    single = nl < 0 or _BLANK_REST.match(data, nl) is not None
    if first_line == b"{" or (single and (_NUMERIC_ARRAY_RE.search(data) or _FRAME_RE.match(data, start))):
        doc = _read_document(path, data)
        if doc is not None:
            return doc
    fast = _arrow_columns(path, data) if len(data) >= PARSER_IMPORT_BYTES else None
    if fast is not None:
        cols, time_keys = fast
        return cols, None, time_keys, []
    damage = _Damage()
    cols, stream = _stream_columns(lambda: _parsed_blocks(data, True, damage))
    issues = damage.issues(path)
    if not cols.n:
        first = skipped[0] if skipped else issues[0] if issues else None
        raise LogReadError(str(path), "no JSON object found" + (f" ({first.message})" if first else ""), offset=first.offset if first else None)
    return cols, stream.wrapper, stream.time_keys, issues


def _arrow_columns(path: Path, data: bytes) -> tuple[Columns, list[str]] | None:
    """(columns, time keys) of a file whose lines are flat objects of plain numbers, read by
    pyarrow in one typed pass; None for every other file (the record path reads it).

    Lines may log different keys (train and eval lines): a key missing from a line is a null
    in pyarrow's table, which is only unambiguous when the file has no ``null`` token at all.
    pyarrow skips blank lines, so the row count must equal the line count; it rejects a key
    given twice in one object (``json`` would keep the last) and a key changing type; text
    shows in the schema.  Doubles parse exactly (checked against ``json.loads`` in the tests).
    Measured on benchmarks/ 1M-point JSONL: 2.2-2.7x ``pandas.read_json(lines=True)``
    (benchmarks/RESULTS.md, "Other formats vs pandas").
    """
    if not data.startswith(b"{") or b"\r" in data or b"null" in data or _STRING_VALUE.search(data):
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
    # one row per line (counted above), so row i is line i + 1
    cols = arrow_table_columns(table, time_keys, lines=np.arange(1, lines + 1, dtype=np.int32))
    return None if cols is None else (cols, time_keys)



def _whole_block(block: bytes, fast: bool) -> list[dict] | None:
    """Every line of a clean block in one parse, or None (then lines are checked one by one).

    The lines are joined with commas into one array; the parse must give exactly one object per
    line, otherwise (a blank, broken or multi-object line) the careful per-chunk path runs.
    """
    if not block.startswith(b"{") or b"\r" in block:
        return None
    n = block.count(b"\n")
    if block.endswith(b"\n"):
        # the last newline becomes a comma: close the array with a null instead of copying a slice
        blob, n = b"".join((b"[", block.replace(b"\n", b","), b"null]")), n + 1
    else:
        blob, n = b"".join((b"[", block.replace(b"\n", b","), b"]")), n + 1
    objs = _loads_array(blob, fast=fast)
    if objs is None or len(objs) != n:
        return None
    if block.endswith(b"\n"):
        objs.pop()
    if not all(type(o) is dict for o in objs):
        return None
    return objs


class _Damage:
    """The damaged lines of a file: the first :data:`_LISTED_DAMAGE` with their byte offset, the rest counted."""

    def __init__(self) -> None:
        self.listed: list[tuple[int, str]] = []  # one more than listed: the "more" issue points at it
        self.count = 0

    def clear(self) -> None:
        self.listed.clear()
        self.count = 0

    def add(self, offset: int, message: str) -> None:
        if len(self.listed) <= _LISTED_DAMAGE:
            self.listed.append((offset, message))
        self.count += 1

    def issues(self, path: Path) -> list[ReadIssue]:
        out = [ReadIssue(str(path), message, offset=offset) for offset, message in self.listed[:_LISTED_DAMAGE]]
        if self.count > _LISTED_DAMAGE:
            out.append(ReadIssue(str(path), f"{self.count - _LISTED_DAMAGE} more damaged line(s)", offset=self.listed[_LISTED_DAMAGE][0]))
        return out


def parse_lines(path: Path, data: bytes, *, fast: bool = True) -> tuple[list[dict], list[int], list[ReadIssue]]:
    """Every object line of the file, its 1-based line number, and one issue per bad line (the
    first :data:`_LISTED_DAMAGE`, then a count).  ``fast``: see :func:`_parsed_blocks`."""
    damage = _Damage()
    records: list[dict] = []
    line_nos: list[int] = []
    for recs, lines in _parsed_blocks(data, fast, damage):
        records += recs
        line_nos += lines
    return records, line_nos, damage.issues(path)


def _parsed_blocks(data: bytes, fast: bool, damage: _Damage) -> Iterator[tuple[list[dict], list[int]]]:
    """The object lines of the file, block by block of about :data:`_BLOCK_BYTES` of whole lines,
    with their 1-based line numbers; damaged lines go to ``damage`` (emptied first, as a second
    pass finds them again).

    ``fast``: pandas' ujson may parse a file of :data:`.base.PARSER_IMPORT_BYTES` or more, except
    a block holding a ``NaN`` token, which ujson reads as null.
    """
    damage.clear()
    fast = fast and len(data) >= PARSER_IMPORT_BYTES
    cut_short = not data.endswith(b"\n")
    start = first = 0
    while start < len(data):
        nl = data.find(b"\n", start + _BLOCK_BYTES - 1)
        end = len(data) if nl < 0 else nl + 1
        block = data[start:end]
        yield _parse_block(block, start, first, fast and b"NaN" not in block, cut_short and end == len(data), damage)
        first += block.count(b"\n")
        start = end


def _parse_block(block: bytes, start: int, first: int, fast: bool, cut_short: bool, damage: _Damage) -> tuple[list[dict], list[int]]:
    """The object lines of a block of whole lines starting at byte ``start``, line index ``first``
    of the file; ``cut_short``: its last line is the file's, without a newline.

    A clean block is parsed in one call; otherwise chunks of lines are parsed as one JSON array
    (one C call instead of thousands) when every line of the chunk looks like a whole object, and
    line by line when not.
    """
    whole = _whole_block(block, fast)
    if whole is not None:
        return whole, list(range(first + 1, first + 1 + len(whole)))
    raw_lines = block.split(b"\n")
    records: list[dict] = []
    line_nos: list[int] = []
    bad: list[tuple[int, str]] = []  # (0-based line index in the block, why)
    for a in range(0, len(raw_lines), _CHUNK_LINES):
        chunk = [(i, raw_lines[i].strip()) for i in range(a, min(a + _CHUNK_LINES, len(raw_lines)))]
        chunk = [(i, l) for i, l in chunk if l]
        if not chunk:
            continue
        if all(l[:1] == b"{" and l[-1:] == b"}" for _, l in chunk):
            objs = _loads_array(b"[" + b",".join(l for _, l in chunk) + b"]", fast=fast)
            if objs is not None and len(objs) == len(chunk) and all(type(o) is dict for o in objs):
                records.extend(objs)
                line_nos.extend(first + i + 1 for i, _ in chunk)
                continue
        for i, l in chunk:
            n = first + i + 1
            try:
                obj = json.loads(l, parse_int=parse_int)
            except RecursionError:
                bad.append((i, f"line {n} skipped: nesting too deep"))
                continue
            except ValueError as exc:
                objs = _run_together(l)
                if objs:
                    records.extend(objs)
                    line_nos.extend([n] * len(objs))
                    bad.append((i, f"line {n}: {len(objs)} JSON object(s) read, the rest of the line is damaged (a lost line break?)"))
                    continue
                partial = cut_short and i == len(raw_lines) - 1
                bad.append((i, f"line {n} skipped: " + ("partial last line (file cut short?)" if partial else f"not valid JSON ({_short(exc)})")))
                continue
            if type(obj) is not dict:
                bad.append((i, f"line {n} skipped: not a JSON object ({type(obj).__name__})"))
                continue
            records.append(obj)
            line_nos.append(n)
    if bad:
        offsets = start + np.concatenate([[0], np.cumsum([len(l) + 1 for l in raw_lines])])
        for i, message in bad:
            damage.add(int(offsets[i]), message)
    return records, line_nos


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
    if fast:
        try:
            return pd.io.json.ujson_loads(blob, precise_float=True)
        except (ValueError, OverflowError, RecursionError, TypeError):
            pass  # out-of-range numbers, odd bytes: let the standard parser decide
    try:
        return json.loads(blob)
    except (ValueError, RecursionError):
        return None


def _short(exc: Exception) -> str:
    msg = str(exc)
    return msg if len(msg) < 80 else msg[:77] + "..."


def _unwrap(records: list[dict], wrapper: str) -> tuple[list[dict], int]:
    """veRL's ``{"step": n, "data": {...}}``: the records with the wrapped dict lifted to the top
    level, and how many were such lines (the wrapper and at most two keys beside it)."""
    out = []
    hits = 0
    for r in records:
        inner = r.get(wrapper)
        if isinstance(inner, dict):
            hits += len(r) <= 3
            merged = {k: v for k, v in r.items() if k != wrapper}
            merged.update(inner)
            out.append(merged)
        else:
            out.append(r)
    return out, hits


class _RecordStream:
    """Columns of a log's records, given batch by batch as its lines are parsed.

    The first :data:`_HEAD` records decide what the whole file decides: the wrapper to unwrap (the
    first of :data:`WRAPPER_KEYS` not in ``tried`` that wraps a dict in one of them) and the time
    keys.  Whether the wrapper was right (it must wrap at least half the lines) is known at the
    end: :meth:`columns` is None when it was not, and the caller reads again without it.
    """

    def __init__(self, tried: frozenset[str]) -> None:
        self.tried = tried
        self.wrapper: str | None = None
        self.hits = 0
        self.time_keys: list[str] = []
        self.builder: ColumnsBuilder | None = None
        self.head: list[dict] = []
        self.head_lines: list[int] = []

    def add(self, records: list[dict], lines: list[int]) -> None:
        if self.builder is not None:
            self._add(records, lines)
            return
        self.head += records
        self.head_lines += lines
        if len(self.head) >= _HEAD:
            self._start()

    def _start(self) -> None:
        head, lines = self.head, self.head_lines
        self.head, self.head_lines = [], []
        self.wrapper = next((wk for wk in WRAPPER_KEYS if wk not in self.tried and any(isinstance(r.get(wk), dict) for r in head[:_HEAD])), None)
        first = _unwrap(head[:50], self.wrapper)[0] if self.wrapper else head[:50]
        self.time_keys = [k for k in TIME_KEYS if any(k in r for r in first)]
        # a phase key's values are text: kept raw so that evaluation rows can be told apart
        phases = [k for k in PHASE_KEYS if any(isinstance(r.get(k), str) for r in first)]
        self.builder = ColumnsBuilder(keep_raw=self.time_keys + phases)
        self._add(head, lines)

    def _add(self, records: list[dict], lines: list[int]) -> None:
        assert self.builder is not None
        if self.wrapper:
            records, hits = _unwrap(records, self.wrapper)
            self.hits += hits
        self.builder.add(records, lines)

    def columns(self) -> Columns | None:
        """The columns of every record added, None when the wrapper was guessed wrong."""
        if self.builder is None:
            self._start()
        assert self.builder is not None
        cols = self.builder.columns()
        if self.wrapper and not (self.hits and self.hits >= cols.n // 2):
            return None
        return cols


def _stream_columns(batches: Callable[[], Iterable[tuple[list[dict], list[int]]]]) -> tuple[Columns, _RecordStream]:
    """The columns of the records that ``batches()`` gives (with their line numbers), and the
    stream that read them (its wrapper and time keys); ``batches`` is called again for each
    wrapper guessed wrong from the first lines (rare: most of a file is wrapped or none of it)."""
    tried: set[str] = set()
    while True:
        stream = _RecordStream(frozenset(tried))
        for records, lines in batches():
            stream.add(records, lines)
        cols = stream.columns()
        if cols is not None:
            return cols, stream
        assert stream.wrapper is not None
        tried.add(stream.wrapper)


def records_to_runs(path: Path, records: list[dict], line_nos: list[int], issues: list[ReadIssue]) -> list[RawRun]:
    """The runs of parsed lines (:func:`parse_lines`) as :func:`read` makes them."""
    cols, stream = _stream_columns(lambda: [(records, line_nos)])
    return _columns_to_runs(path, cols, stream.wrapper, stream.time_keys, issues)


def _line(cols: Columns, record: int) -> int:
    """The file line of a record (its 1-based number when the lines are not known)."""
    return record + 1 if cols.lines is None else int(cols.lines[record])


def _columns_to_runs(path: Path, cols: Columns, wrapper: str | None, time_keys: list[str], issues: list[ReadIssue]) -> list[RawRun]:
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
        return [RawRun(config=config, texts=build_raw_run(cols, info.steps, src, exclude=exclude).texts, issues=text_notes(cols, src))]
    # return_counts: the plain np.unique imports numpy.ma (benchmarks/RESULTS.md "One small check")
    per_sample = len(np.unique(info.steps, return_counts=True)[0]) < len(info.steps)
    if per_sample and cols.texts and all(k in exclude or k.rsplit("/", 1)[-1].lower() in SAMPLE_NUMBER_KEYS for k in cols.keys()):
        # a samples file (prompt, response, reward per line, several lines per step): the numbers
        # describe single generations, not the batch, so they are not metric series of the run
        texts = build_raw_run(cols, info.steps, src, exclude=exclude).texts
        rewards = sample_rewards(cols, info.steps)
        for t in texts:
            t.reward = rewards.get((t.step, t.text, t.prompt))
        return [RawRun(config=config, texts=texts, issues=notes)]
    phase = eval_rows(cols)
    if phase is not None:
        return [_with_eval_rows(cols, info.steps, src, exclude, wall, config, notes, *phase)]
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
            first = _line(cols, int(np.argmax(sel)))
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
    back = _step_backs(info.steps)
    if len(back):
        run.restarts = [int(info.steps[i]) for i in back]
        run.issues.append(
            ReadIssue(
                src,
                f"step goes back {len(back)} time(s) (first at line {_line(cols, int(back[0]))}, step "
                f"{int(info.steps[back[0] - 1])} -> {int(info.steps[back[0]])}); the last value logged for a step wins",
                level="warning",
            )
        )
    return [run]


def _step_backs(steps: np.ndarray) -> np.ndarray:
    """Positions where the step is lower than the one before (a restart; an equal step is just
    another line of the same step)."""
    return np.flatnonzero(steps[1:] < steps[:-1]) + 1 if len(steps) > 1 else np.array([], dtype=np.int64)


def _with_eval_rows(
    cols: Columns, steps: np.ndarray, src: str, exclude: set[str], wall: np.ndarray | None, config: dict, notes: list[ReadIssue], key: str, is_eval: np.ndarray
) -> RawRun:
    """One run of a log whose phase ``key`` marks evaluation rows (``is_eval``): its other rows are
    the training series, its evaluation rows the held-out ones, one mean per step (a row per game
    or episode evaluated).  The steps of the training rows alone say whether the run restarted."""
    run = build_raw_run(cols, steps, src, exclude=exclude, wall=wall, select=~is_eval)
    held = build_raw_run(cols, steps, src, exclude=exclude, wall=wall, select=is_eval, eval_all=True)
    run.eval_series += [mean_per_step(s) for s in held.eval_series]
    run.config = config
    run.issues = notes + [
        ReadIssue(src, f"{int(is_eval.sum())} row(s) whose '{key}' names an evaluation phase read as held-out evaluation, apart from the training rows", level="info")
    ]
    train = steps[~is_eval]
    back = _step_backs(train)
    if len(back):
        run.restarts = [int(train[i]) for i in back]
        run.issues.append(ReadIssue(src, f"step goes back {len(back)} time(s) in the training rows (first {int(train[back[0] - 1])} -> {int(train[back[0]])}); the last value logged for a step wins", level="warning"))
    return run


def _read_document(path: Path, data: bytes) -> list[RawRun] | None:
    """A single JSON object with equal-length numeric arrays (None when it is not one)."""
    src = str(path)
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None
    frame = _frame_rows(doc)
    if frame is not None:
        rows, labels, orient = frame
        if not any(k in row for row in rows for k in STEP_KEYS):
            rows = [{"step": label, **row} for row, label in zip(rows, labels)]
            note = f"pandas table (DataFrame.to_json, orient={orient!r}) without a step key: its row label used as step"
            return records_to_runs(path, rows, labels, [ReadIssue(src, note, level="info")])
        return records_to_runs(path, rows, labels, [])
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
                    arrays[k] = np.asarray([np.nan if x is None else float_or_inf(x) for x in v], dtype=np.float64)
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


def _read_records_array(path: Path, data: bytes) -> list[RawRun]:
    """A JSON array of records, one per logged step or episode (a home-made loop's
    ``json.dump(history, f)``, pandas' ``to_json(orient="records")``): read as JSON lines are,
    the position in the array as the step when no record holds a step key."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise LogReadError(str(path), f"not a JSON array of records ({_short(exc)})") from exc
    rows = [r for r in doc if isinstance(r, dict)] if isinstance(doc, list) else []
    if len(rows) < _MIN_FRAME_ROWS:
        raise LogReadError(str(path), "a JSON array without at least two objects: no records to read")
    issues = []
    if len(rows) < len(doc):
        issues.append(ReadIssue(str(path), f"{len(doc) - len(rows)} array element(s) that are not objects skipped", level="warning"))
    positions = list(range(len(rows)))
    if not any(k in row for row in rows for k in STEP_KEYS):
        rows = [{"step": i, **row} for i, row in zip(positions, rows)]
        issues.append(ReadIssue(str(path), "JSON array of records without a step key: each record's position used as step", level="info"))
    return records_to_runs(path, rows, positions, issues)


def _frame_rows(doc: dict) -> tuple[list[dict], list[int], str] | None:
    """The rows of a pandas ``DataFrame.to_json`` table in row-label order, their integer labels
    and the orient, or None when ``doc`` is not one: ``orient="index"`` maps each row label to a
    record of plain values, ``orient="columns"`` maps each column to its values by row label."""
    values = list(doc.values())
    if not values or not all(isinstance(v, dict) for v in values):
        return None
    if all(_is_label(k) for k in doc) and all(not isinstance(x, (dict, list)) for row in values for x in row.values()):
        by_label = {int(k): row for k, row in doc.items()}
        orient = "index"
    elif all(_is_label(k) for col in values for k in col):
        by_label = {}
        for name, col in doc.items():
            for k, x in col.items():
                by_label.setdefault(int(k), {})[name] = x
        orient = "columns"
    else:
        return None
    if len(by_label) < _MIN_FRAME_ROWS:
        return None
    labels = sorted(by_label)
    return [by_label[k] for k in labels], labels, orient


def _is_label(key: str) -> bool:
    """A pandas default row label: an integer written as a string."""
    return key.lstrip("-").isdigit()


def _flatten(obj: dict, prefix: str, out: dict, depth: int) -> None:
    for k, v in obj.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and depth < MAX_DEPTH:
            _flatten(v, key + "/", out, depth + 1)
        else:
            out[key] = v
