"""Hugging Face Trainer / TRL console output: the log dicts the Trainer prints, one a line.

Users often keep only what a training printed (``python train.py | tee train.log``).
``transformers``' ``ProgressCallback.on_log`` (``trainer_callback.py``) prints every dict given
to ``Trainer.log`` under the progress bar with ``tqdm.write(str(logs))``, and ``PrinterCallback``
(``disable_tqdm=True``) with ``print``: the rows of ``trainer_state.json``'s ``log_history``
(:mod:`.trainer_state`) as Python reprs, between progress bars, warnings and other prints
(docs/sources.md#hf-trainer-console-logs).  What is read:

* every printed dict holding ``epoch`` (``Trainer.log`` adds it to every row) or a step key,
  wherever it is on its line (progress bars redraw with ``\\r`` before and after it; its end is
  found by its brackets, those inside strings not counted); other printed dicts are other
  prints and are passed over;
* values: numbers, the strings ``ProgressCallback`` makes of floats (``f"{v:.4g}"`` in
  transformers 5.24: ``'0.0123'``, ``'nan'``), and ``nan`` / ``inf`` / ``-inf`` and numpy 2's
  ``np.float64(0.1)`` as a plain ``print`` shows them.  The text is parsed by :mod:`ast` and
  only literals are taken from the tree (:func:`_literal`): nothing is evaluated;
* the rows hold no step: a training row's step is its place among them (1, 2, ...), the real
  step divided by ``logging_steps``, which a reader warning says; an evaluation row (``eval_*``
  keys, routed as :mod:`.trainer_state` routes them) gets the step of the training row printed
  before it.  A ``step`` / ``global_step`` key is used when the rows have one.  A training row
  cut short or split by other output (a buffered stdout line with stderr's progress bar in
  between) is not read but keeps its place in that order when its start is recognisable;
* the Trainer's final summary (``train_runtime`` ...) goes to the config, and ppo_doctor's own
  ``{'ppo_doctor': ...}`` rows are skipped.

A printed dict longer than :data:`MAX_DICT_CHARS` is not parsed (``ProgressCallback`` shortens
strings over 100 characters, so a row is a few KB), and lines are bounded as in every console
reader (:mod:`ppo_doctor.ingest.console`).
"""

from __future__ import annotations

import ast
import math
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ...errors import LogReadError
from ...frame import RawRun, ReadIssue
from ...canonical.frameworks import HF_EVAL_ROW_PREFIXES
from .. import console
from ..tabular import Columns, build_raw_run, choose_steps, collect_columns, column_notes
from .trainer_state import DOCTOR_ROW_KEY, STEP_KEYS, SUMMARY_MARKERS, row_kind

NAME = "hf_console"

# The longest printed dict parsed: parsing costs many times the text in Python objects.
MAX_DICT_CHARS = 1 << 20
STEP_NOTE = "no step in the printed log dicts: steps are their order (1, 2, ...); the real step is logging_steps times that"
# Where a printed dict starts (``str(dict)`` quotes a key with ``"`` when it holds a ``'``).
_START = re.compile(r"\{['\"]")
# What decides where a printed dict ends: its strings (whose brackets do not count; one left open
# runs to the end of the text, so that no string is tried twice) and brackets.
_TOKEN = re.compile(r"""'(?:[^'\\]|\\.)*'?|"(?:[^"\\]|\\.)*"?|[\[\](){}]""")
_OPEN = frozenset("[({")
# A key that makes a printed dict a log row of the Trainer.
_ROW_KEY = re.compile(r"['\"](?:epoch|step|global_step)['\"]: ")
_ROW_KEY_BYTES = re.compile(rb"['\"](?:epoch|step|global_step)['\"]: ")
# The start of a printed dict, its first key read: a row cut after this is recognisable.
_FIRST_KEY = re.compile(r"\{(?:'[^'\n]*'|\"[^\"\n]*\"): ")
_WRAPPER = re.compile(console.NUMBER_WRAPPER)
_NAMES = {"nan": math.nan, "inf": math.inf}


def sniff(path: Path, head: bytes) -> bool:
    """Two printed log dicts in the head, or in the first 16 MiB of a file named like a console log."""
    return console.scan(path, head, _two_rows)


def _two_rows(chunk: bytes) -> bool:
    first = _ROW_KEY_BYTES.search(chunk)
    if first is None or _ROW_KEY_BYTES.search(chunk, first.end()) is None:
        return False
    rows = 0
    for line in chunk.split(b"\n"):
        if _ROW_KEY_BYTES.search(line):
            rows += any(closed and _ROW_KEY.search(text) for piece in console.pieces(line) for text, closed in _printed_dicts(piece))
            if rows >= 2:
                return True
    return False


def _printed_dicts(piece: str) -> Iterator[tuple[str, bool]]:
    """The printed dicts in ``piece`` and whether each is closed; the last may run to the end of
    ``piece`` unclosed (cut short).  Brackets inside strings do not count."""
    start = _START.search(piece)
    while start is not None:
        depth = 0
        for token in _TOKEN.finditer(piece, start.start()):
            t = token.group()
            if len(t) == 1:
                depth += 1 if t in _OPEN else -1
                if depth <= 0:
                    yield piece[start.start() : token.end()], t == "}"
                    break
        else:
            yield piece[start.start() :], False
            return
        start = _START.search(piece, token.end())


@dataclass
class _Rows:
    """The log rows of a file as they are found, and what could not be read."""

    train: list[dict] = field(default_factory=list)
    train_lines: list[int] = field(default_factory=list)
    train_places: list[int] = field(default_factory=list)  # 1-based place among the training rows
    evals: list[dict] = field(default_factory=list)
    eval_lines: list[int] = field(default_factory=list)
    eval_places: list[int] = field(default_factory=list)  # training rows printed before it
    summary: dict[str, Any] = field(default_factory=dict)
    places: int = 0  # training rows so far, read or not
    broken: list[int] = field(default_factory=list)  # byte offsets of the lines of unread rows
    long: int = 0
    rounded: bool = False  # values printed as strings by ProgressCallback (4 significant digits)


def read(path: Path) -> list[RawRun]:
    src = str(path)
    lines, data, issues = console.read_lines(path)
    rows = _Rows()
    for line in lines:
        if b"{" in line.data:
            _take_line(line, rows)
    # the last line without a line end may have been cut while it was written (a live run, a killed job)
    if lines and not data.endswith(b"\n") and _cut_dict(lines[-1]):
        msg = f"partial last line {lines[-1].number}: a printed dict without its end was not read (file cut short or still being written?)"
        issues.append(ReadIssue(src, msg, offset=lines[-1].offset))
    if not rows.train and not rows.evals and not rows.summary:
        damage = next((i for i in issues if i.level == "error"), None)
        if damage is not None:
            raise LogReadError(src, damage.message, offset=damage.offset)
        raise LogReadError(src, "no printed log dict with an 'epoch' or step key found")
    return [_run(src, rows, issues)]


def _cut_dict(line: console.Line) -> bool:
    """Whether the last thing printed on ``line`` is a dict without its end."""
    shown = console.pieces(line.data)[-1]
    found = list(_printed_dicts(shown))
    return not found[-1][1] if found else shown.endswith("{")


def _take_line(line: console.Line, rows: _Rows) -> None:
    """The printed dicts of one line into ``rows``.  A dict without its end that a progress bar
    drew over (a ``\\r`` after it) is a row cut by the bar: it keeps its place in the order."""
    shown = console.pieces(line.data)
    for k, piece in enumerate(shown):
        for text, closed in _printed_dicts(piece):
            if closed:
                _take(text, line, rows)
            elif k < len(shown) - 1 and _FIRST_KEY.match(text):
                _lost(text, line, rows)


def _lost(text: str, line: console.Line, rows: _Rows) -> None:
    """A log row that is not read: counted, and kept in the order when it was a training row."""
    rows.broken.append(line.offset)
    rows.places += _kind_of_text(text) == "train"


def _take(text: str, line: console.Line, rows: _Rows) -> None:
    """One printed dict found on ``line`` into ``rows``, when it is a log row."""
    if len(text) > MAX_DICT_CHARS:
        if _ROW_KEY.search(text):
            rows.long += 1
            rows.places += _kind_of_text(text) == "train"
        return
    row = _parse(text)
    if row is None:
        if _ROW_KEY.search(text):
            _lost(text, line, rows)
        return
    if not any(k in row for k in ("epoch", *STEP_KEYS, DOCTOR_ROW_KEY)):
        return  # another print of a dict
    row, rounded = _numbers(row)
    rows.rounded |= rounded
    kind = row_kind(row)
    if kind == "summary":
        rows.summary.update({k: v for k, v in row.items() if k not in STEP_KEYS})
    elif kind == "eval":
        rows.evals.append(row)
        rows.eval_lines.append(line.number)
        rows.eval_places.append(rows.places)
    elif kind == "train":
        rows.places += 1
        rows.train.append(row)
        rows.train_lines.append(line.number)
        rows.train_places.append(rows.places)


def _kind_of_text(text: str) -> str:
    """What an unparsed row would have been, from its text: ``summary``, ``eval``, ``doctor`` or ``train``."""
    if any(f"'{k}'" in text for k in SUMMARY_MARKERS):
        return "summary"
    if any(f"'{p}" in text for p in HF_EVAL_ROW_PREFIXES):
        return "eval"
    return "doctor" if f"'{DOCTOR_ROW_KEY}'" in text else "train"


def _parse(text: str) -> dict[str, Any] | None:
    """A printed dict, its literals taken from the syntax tree (never evaluated); None when the
    text is no dict."""
    try:
        with warnings.catch_warnings():
            # a backslash that is no escape (a hostile line) is a SyntaxWarning on Python >= 3.12
            warnings.simplefilter("ignore")
            tree = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(tree, ast.Dict):
        return None
    value = _literal(tree, text)
    return value if isinstance(value, dict) else None


def _literal(node: ast.AST, text: str) -> Any:
    """The value a printed literal stands for: constants, ``nan`` / ``inf``, a sign, lists,
    tuples and dicts of them, and numbers wrapped in ``np.float64(...)`` / ``tensor(...)``.
    Anything else is kept as its text (a non-numeric field, ignored with a note)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in _NAMES:
        return _NAMES[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _literal(node.operand, text)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_literal(e, text) for e in node.elts]
    elif isinstance(node, ast.Dict):
        return {str(_literal(k, text)): _literal(v, text) for k, v in zip(node.keys, node.values) if k is not None}
    elif isinstance(node, ast.Call) and node.args and _WRAPPER.fullmatch(ast.get_source_segment(text, node.func) or ""):
        return _literal(node.args[0], text)
    return ast.get_source_segment(text, node)


def _numbers(row: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """``row`` with the numbers ``ProgressCallback`` printed as strings read back, and whether it had any."""
    out: dict[str, Any] = {}
    rounded = False
    for k, v in row.items():
        number = console.printed_number(v) if isinstance(v, str) else None
        out[k] = v if number is None else number
        rounded |= number is not None
    return out, rounded


def _run(src: str, rows: _Rows, issues: list[ReadIssue]) -> RawRun:
    run = RawRun(config=dict(rows.summary))
    steps = np.asarray(rows.train_places, dtype=np.int64)
    by_place = True  # the training rows' steps are their places
    if rows.train:
        cols = collect_columns(rows.train, lines=rows.train_lines)
        info = choose_steps(cols, STEP_KEYS)
        by_place = info.key is None
        steps = steps if by_place else info.steps
        part = build_raw_run(cols, steps, src, exclude=STEP_KEYS)
        # the eval prefixes of other frameworks (test/...) are not HF's: keep every train key a series
        run.series = part.series + part.eval_series
        run.texts = part.texts
        issues.extend(column_notes(cols, src, numeric_nulls_note="GRPOTrainer logs None when every value of a key was NaN"))
        issues.extend(_epoch_notes(cols, src))
    ordered = bool(rows.train) and by_place
    if rows.evals:
        cols = collect_columns(rows.evals, lines=rows.eval_lines)
        info = choose_steps(cols, STEP_KEYS)
        eval_steps = info.steps if info.key is not None else _eval_steps(rows, steps, by_place)
        ordered |= info.key is None and not rows.train
        keep_out = [k for k in cols.keys() if not k.startswith(HF_EVAL_ROW_PREFIXES)]
        run.eval_series = build_raw_run(cols, eval_steps, src, exclude=keep_out, eval_all=True).eval_series
    if ordered:
        issues.append(ReadIssue(src, STEP_NOTE, level="warning"))
    issues.extend(_damage_notes(src, rows))
    run.issues = issues
    return run


def _eval_steps(rows: _Rows, train_steps: np.ndarray, by_place: bool) -> np.ndarray:
    """Each evaluation row at the step of the training row printed before it (0 before the
    first); in print order (1, 2, ...) when no training row was printed."""
    before = np.asarray(rows.eval_places, dtype=np.int64)
    if not rows.train:
        return np.arange(1, len(before) + 1, dtype=np.int64)
    if by_place:
        return before
    at = np.searchsorted(np.asarray(rows.train_places, dtype=np.int64), before, side="right") - 1
    return np.where(at >= 0, train_steps[np.maximum(at, 0)], 0)


def _epoch_notes(cols: Columns, src: str) -> list[ReadIssue]:
    """A warning when ``epoch`` goes back: another training appended to the same log."""
    col = cols.column("epoch")
    if col is None or len(col[1]) < 2:
        return []
    back = int(np.count_nonzero(np.diff(col[1]) < 0))
    if not back:
        return []
    return [ReadIssue(src, f"epoch goes back {back} time(s): another training appended to the same log? Its rows are read as one run", level="warning")]


def _damage_notes(src: str, rows: _Rows) -> list[ReadIssue]:
    notes = []
    if rows.broken:
        msg = (
            f"{len(rows.broken)} printed log dict(s) cut short or split by other output were not read "
            "(stdout buffered by a pipe, with stderr's progress bar between the halves? python -u prints whole lines)"
        )
        notes.append(ReadIssue(src, msg, offset=rows.broken[0]))
    if rows.long:
        notes.append(ReadIssue(src, f"{rows.long} printed dict(s) longer than {MAX_DICT_CHARS} characters (MAX_DICT_CHARS) not parsed", level="warning"))
    if rows.rounded:
        notes.append(ReadIssue(src, "values printed with 4 significant digits (transformers' ProgressCallback prints floats as f'{v:.4g}')", level="info"))
    return notes
