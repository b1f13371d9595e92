"""Hugging Face / TRL ``trainer_state.json`` and bare lists of Trainer log dicts.

``transformers.Trainer`` saves ``json.dumps(asdict(state), indent=2, sort_keys=True)`` into every
``checkpoint-N/`` and into ``output_dir`` (``docs/sources.md#hf-trainer-logs``).  What is read:

* ``log_history``: one dict per ``Trainer.log`` call, the unprefixed keys plus ``step`` (and
  usually ``epoch``).  Rows with ``eval_*`` / ``test_*`` keys are evaluation rows and go to
  ``RawRun.eval_series``; the final row (``train_runtime``, ``train_loss`` ...) is a run summary
  and goes to the config, not to a series.
* every other top-level field (``global_step``, ``logging_steps``, ``train_batch_size`` ...) -> config.
* NaN/Inf are bare ``NaN``/``Infinity`` tokens (not strict JSON): Python's ``json`` reads them.
* a bare JSON list of the same dicts (``log_history`` saved on its own) and trainer states saved
  under other names are recognised by content.
* a file cut short keeps every complete ``log_history`` entry (incremental scan) and reports the
  byte offset where the damage starts.
* the line each entry starts on (its ``{``) is recorded for the points it holds
  (:func:`_entry_lines`), so that a finding can point at the entry of its onset step.

Speed: ``json.loads`` of a large state is most of the read, and pandas users pay it too; an
indented state of 1 MiB or more (``PARSER_IMPORT_BYTES``) whose entries are flat numbers goes to
pyarrow's JSON reader instead (:func:`_arrow_history`), with the same result.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import LogReadError
from ...frame import RawRun, ReadIssue
from ...canonical.frameworks import HF_EVAL_ROW_PREFIXES
from .. import filebytes
from ..base import PARSER_IMPORT_BYTES
from ..tabular import Columns, StepInfo, arrow_records, arrow_table_columns, build_raw_run, choose_steps, collect_columns, column_notes, parse_int

NAME = "trainer_state"

# Keys of the summary row ``Trainer.train`` logs last (transformers trainer.py, ``speed_metrics``).
SUMMARY_MARKERS = ("train_runtime", "train_samples_per_second", "train_steps_per_second")
STEP_KEYS = ("step", "global_step")
# The key of the rows ppo_doctor's DoctorCallback adds to ``log_history`` (its alerts): the
# doctor's own words, never a metric of the run.
DOCTOR_ROW_KEY = "ppo_doctor"

_LEAD = re.compile(rb"(?:\xef\xbb\xbf)?\s*")
_LOG_KEY = re.compile(rb'"(?:step|global_step)"\s*:')
_LOG_HISTORY = re.compile(r'"log_history"\s*:\s*\[')
_TOP_INDENT = re.compile(rb'\{\n( +)"')  # json.dumps(indent=k): the first key's line
_TOP_LIST = re.compile(rb"\[\n( +)\{")  # a bare list of entries, json.dumps(indent=k): the first entry


def sniff(path: Path, head: bytes) -> bool:
    """A JSON object with ``log_history``, or a JSON list whose first dict has a ``step`` key."""
    text = head[_LEAD.match(head).end() :]  # type: ignore[union-attr]
    if text.startswith(b"{"):
        return b'"log_history"' in head or path.name == "trainer_state.json"
    if text.startswith(b"["):
        return text[1:].lstrip().startswith(b"{") and _LOG_KEY.search(head) is not None
    return False


def read(path: Path) -> list[RawRun]:
    try:
        data, tail = filebytes.read_content(path)  # a zero tail (crashed writer) is not loaded
    except OSError as exc:
        raise LogReadError(str(path), f"cannot read file ({exc.strerror or exc})") from exc
    if _LEAD.match(data).end() == len(data):  # type: ignore[union-attr]
        raise LogReadError(str(path), "empty file" if not tail else filebytes.zero_tail_message(tail), offset=len(data) if tail else None)
    runs = _read_data(path, data)
    if tail:
        runs[0].issues.append(ReadIssue(str(path), filebytes.zero_tail_message(tail), offset=len(data), level="warning"))
    return runs


def _read_data(path: Path, data: bytes) -> list[RawRun]:
    # a small state is parsed by json alone: importing pyarrow would cost more than it saves
    fast = _arrow_history(path, data) if len(data) >= PARSER_IMPORT_BYTES else None
    if fast is not None:
        return [fast]
    issues: list[ReadIssue] = []
    lines: np.ndarray | None = None
    try:
        doc: Any = _loads(data)
    except (ValueError, RecursionError) as exc:
        rows, config, issue, lines = _recover(path, data, exc)
        issues.append(issue)
    else:
        if isinstance(doc, dict):
            history = doc.get("log_history")
            if not isinstance(history, list):
                raise LogReadError(str(path), "JSON object without a 'log_history' list: not a trainer state")
            rows = history
            config = {k: v for k, v in doc.items() if k != "log_history"}
            lines = _entry_lines(data, len(rows))
        elif isinstance(doc, list):
            rows, config = doc, {}
            lines = _entry_lines(data, len(rows))
        else:
            raise LogReadError(str(path), f"expected a JSON object or list, found {type(doc).__name__}")
    return [_rows_to_run(path, rows, config, issues, lines)]


def _history_span(data: bytes) -> tuple[bytes, int, int] | None:
    """``(entry indent, start, end)`` of the ``log_history`` list of a state written by
    ``json.dumps(..., indent=k)``, or of such a bare list of entries (the bytes between ``[``
    and the line of its ``]``); None in another layout.  A raw line break cannot occur inside
    a JSON string, so a line break + the top-level indent + ``"log_history": [`` is the
    top-level key, and the first line break + that indent + ``]`` after it closes the list (a
    list inside an entry is indented deeper)."""
    bare = _TOP_LIST.match(data)
    if bare is not None:
        end = data.find(b"\n]", 1)
        return None if end < 0 else (bare.group(1), 1, end)
    m = _TOP_INDENT.match(data)
    if m is None:
        return None
    ind = m.group(1)
    key = b"\n" + ind + b'"log_history": ['
    at = data.find(key)
    if at < 0:
        return None
    start = at + len(key)
    end = data.find(b"\n" + ind + b"]", start)
    return None if end < 0 else (ind * 2, start, end)


def _entry_lines(data: bytes, n: int) -> np.ndarray | None:
    """The line (1-based) on which each of the ``n`` entries of the list of
    :func:`_history_span` opens: an entry is a line of the entry indent and ``{`` (a dict
    inside an entry opens on its key's line).  None in another layout or when the count is
    not ``n`` (an entry that is no object)."""
    span = _history_span(data)
    if span is None:
        return None
    ind, start, end = span
    opener = b"\n" + ind + b"{"
    lines = np.empty(n, dtype=np.int32)
    pos, newlines = start, data.count(b"\n", 0, start)
    for k in range(n):
        at = data.find(opener, pos, end)
        if at < 0:
            return None
        newlines += data.count(b"\n", pos, at) + 1  # the opener's own line break
        lines[k] = newlines + 1
        pos = at + 1
    return lines if data.find(opener, pos, end) < 0 else None


def _flat_entry_lines(data: bytes, start: int, end: int, keys: np.ndarray) -> np.ndarray | None:
    """:func:`_entry_lines` of flat entries (``keys``: how many each holds) between ``start`` and
    ``end``, without searching for them: ``json.dumps(indent=k)`` writes a flat entry as a
    line of ``{``, one line a key and a line of ``}`` (``{}`` alone: one line).  The layout is
    checked, not assumed: the list must hold exactly that many lines, else None."""
    per = np.where(keys > 0, keys + 2, 1)
    if data.count(b"\n", start, end) != int(per.sum()):
        return None
    first = data.count(b"\n", 0, start) + 2  # the line after the ``"log_history": [`` line
    return (first + np.concatenate(([0], np.cumsum(per[:-1])))).astype(np.int32)


def _loads(data: bytes) -> Any:
    """``json.loads``, retried with :func:`parse_int` only when an integer is too long for ``int``:
    a Python ``parse_int`` hook on every integer costs ~5% of the read of a large file."""
    try:
        return json.loads(data)
    except ValueError as exc:
        if "integer string conversion" not in str(exc):
            raise
    return json.loads(data, parse_int=parse_int)


def _recover(path: Path, data: bytes, exc: Exception) -> tuple[list, dict, ReadIssue, np.ndarray]:
    """Every complete ``log_history`` entry of a damaged file, its config, where it broke, and
    the line each entry starts on."""
    # surrogateescape keeps one character per undecodable byte, so byte offsets stay exact
    text = data.decode("utf-8", "surrogateescape")
    start = len(text) - len(text.lstrip("\ufeff \t\r\n"))

    def offset(char_pos: int) -> int:
        return len(text[:char_pos].encode("utf-8", "surrogateescape"))

    where = getattr(exc, "pos", None)
    config: dict[str, Any] = {}
    if text.startswith("[", start):
        pos = start + 1
    else:
        m = _LOG_HISTORY.search(text)
        if m is None:
            detail = getattr(exc, "msg", type(exc).__name__)
            raise LogReadError(str(path), f"not valid JSON ({detail})", offset=offset(where) if where is not None else None)
        pos = m.end()
        try:  # the fields before log_history (sort_keys puts global_step, epoch ... there)
            head = json.loads(text[: m.start()] + '"log_history": null}')
            config = {k: v for k, v in head.items() if k != "log_history"} if isinstance(head, dict) else {}
        except (ValueError, RecursionError):
            config = {}
    decoder = json.JSONDecoder(parse_int=parse_int)
    rows: list = []
    lines: list[int] = []
    n = len(text)
    line, counted = 1, 0  # the line of text[counted]

    def found() -> np.ndarray:
        return np.asarray(lines, dtype=np.int32)

    while True:
        while pos < n and text[pos] in " \t\r\n":
            pos += 1
        if pos >= n:
            msg = f"file ends inside log_history (cut short?): {len(rows)} complete entries kept"
            return rows, config, ReadIssue(str(path), msg, offset=offset(pos)), found()
        if text[pos] == "]":
            at = offset(where) if where is not None else offset(pos)
            return rows, config, ReadIssue(str(path), f"damaged after log_history; its {len(rows)} entries kept", offset=at), found()
        try:
            obj, end = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            msg = f"log_history entry {len(rows) + 1} is cut short or damaged: {len(rows)} complete entries kept"
            return rows, config, ReadIssue(str(path), msg, offset=offset(pos)), found()
        line += text.count("\n", counted, pos)
        counted = pos
        rows.append(obj)
        lines.append(line)
        pos = end
        while pos < n and text[pos] in " \t\r\n":
            pos += 1
        if pos < n and text[pos] == ",":
            pos += 1


def _rows_to_run(path: Path, rows: list, config: dict, issues: list[ReadIssue], lines: np.ndarray | None) -> RawRun:
    """The run of the ``log_history`` entries ``rows`` (``lines``: the line of each, if known)."""
    train: list[dict] = []
    evals: list[dict] = []
    train_at: list[int] = []  # the entries' places in ``rows``, for their lines
    eval_at: list[int] = []
    summary: dict[str, Any] = {}
    odd = 0
    # Consecutive entries nearly always have the same keys: classify a key set once (comparing
    # dict views is one C-level set comparison; testing 50 keys per row in Python was 40% of the read).
    last_keys: Any = None
    kind = ""
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            odd += 1
            continue
        keys = row.keys()
        if keys != last_keys:
            last_keys, kind = keys, row_kind(row)
        if kind == "doctor":
            continue
        if kind == "summary":
            summary.update({k: v for k, v in row.items() if k not in STEP_KEYS})
        elif kind == "eval":
            evals.append(row)
            eval_at.append(i)
        else:
            train.append(row)
            train_at.append(i)
    if odd:
        issues.append(ReadIssue(str(path), f"{_count(odd, 'log entry', 'log entries')} that are not JSON objects ignored", level="warning"))
    train_cols = collect_columns(train, lines=None if lines is None else lines[train_at]) if train else None
    eval_cols = collect_columns(evals, lines=None if lines is None else lines[eval_at]) if evals else None
    return _build_run(path, train_cols, eval_cols, summary, config, issues)


def _build_run(
    path: Path, train: Columns | None, evals: Columns | None, summary: dict[str, Any], config: dict, issues: list[ReadIssue]
) -> RawRun:
    """The run from the train and eval entries' columns, the summary entry and the other fields."""
    src = str(path)
    run = RawRun(config=dict(config))
    for k, v in summary.items():
        run.config.setdefault(k, v)
    if train is not None:
        info = choose_steps(train, STEP_KEYS)
        _step_notes(src, info, issues, "log")
        part = build_raw_run(train, info.steps, src, exclude=STEP_KEYS)
        run.series, run.texts = part.series, part.texts
        # the eval prefixes of other frameworks (test/...) are not HF's: keep every train key a series
        run.series.extend(part.eval_series)
        issues.extend(column_notes(train, src, numeric_nulls_note="GRPOTrainer logs None when every value of a key was NaN"))
        run.restarts = _restarts(info.steps)
        _duplicate_note(src, info.steps, issues)
    if evals is not None:
        info = choose_steps(evals, STEP_KEYS)
        _step_notes(src, info, issues, "eval")
        keep_out = [k for k in evals.keys() if not k.startswith(HF_EVAL_ROW_PREFIXES)]
        run.eval_series = build_raw_run(evals, info.steps, src, exclude=keep_out, eval_all=True).eval_series
    if train is None and evals is None and not summary:
        damage = next((i for i in issues if i.offset is not None), None)
        if damage is not None:  # cut short before its first entry: say where, not "empty"
            raise LogReadError(src, damage.message, offset=damage.offset)
        raise LogReadError(src, "log_history is empty: nothing was logged")
    run.issues = issues
    return run


def _arrow_history(path: Path, data: bytes) -> RawRun | None:
    """The run of a trainer state as ``json.dumps(..., indent=k)`` writes it whose entries are
    flat objects of plain numbers, read by pyarrow's JSON reader; None for any other file (the
    ``json`` path reads it, with the same result).

    Why the text can be cut apart without parsing it: a raw line break cannot occur inside a JSON
    string, so a line break + the top-level indent + ``"log_history": [`` is the top-level key, a
    line break + that indent + ``]`` closes its list, and a line break + two indents + ``},`` +
    a line break + two indents + ``{`` sits between two entries.  Dropping that comma leaves
    whitespace-separated objects, which pyarrow reads as records.  Checks that send a file back
    to the ``json`` path: the fields around the list must parse as an object without a second
    ``log_history``; the list must have no ``[`` and one ``{`` per entry (flat entries; pyarrow's
    recursive parser crashes on deep nesting) and, when an entry leaves a key out, no ``null``
    (pyarrow's null would mean both); pyarrow must give one row per entry, reject no key (given
    twice, changing type) and type every column as a number.  Summary entries
    (``train_runtime`` ...) are few and are parsed by ``json``, so config values keep their JSON
    types.  Measured on benchmarks/ 1M-point trainer_state.json (benchmarks/RESULTS.md): 0.31 s against
    0.75 s for ``json.load`` + ``pandas.DataFrame(log_history)`` (2.5x; the ``json`` path took
    about what pandas takes).
    """
    m = _TOP_INDENT.match(data)
    if m is None:
        return None
    ind = m.group(1)
    key = b"\n" + ind + b'"log_history": ['
    at = data.find(key + b"\n" + ind * 2 + b"{")
    if at < 0:
        return None
    start = at + len(key)
    end = data.rfind(b"\n" + ind + b"]", start)  # HF sorts keys: the ones after log_history are short
    if end < 0:
        return None
    sep = b"\n" + ind * 2 + b"},\n" + ind * 2 + b"{"
    n = data.count(sep, start, end) + 1
    if data.find(b"[", start, end) >= 0 or data.count(b"{", start, end) != n:
        return None
    try:
        rest = _loads(data[: at + len(key) - 1] + b"null" + data[end + len(ind) + 2 :])
    except (ValueError, RecursionError):
        return None
    if not isinstance(rest, dict) or rest.get("log_history", 0) is not None:  # json keeps a repeated key's last
        return None
    import pyarrow as pa

    # same length: offsets stay, and only the list's bytes are handed to pyarrow (no copy)
    fixed = pa.py_buffer(data.replace(sep, sep.replace(b"},", b"} ")))
    table = arrow_records(fixed.slice(start, end - start), n, path, multiline=True)
    if table is None:
        return None
    names = table.column_names
    # a null in the table is a key an entry did not log, unless the file wrote null itself
    if any(col.null_count for col in table.columns) and data.find(b"null", start, end) >= 0:
        return None
    valid = {name: col.is_valid().to_numpy(zero_copy_only=False) for name, col in zip(names, table.columns) if col.null_count}
    is_summary = _any_valid(table, valid, [k for k in names if k in SUMMARY_MARKERS])
    is_eval = _any_valid(table, valid, [k for k in names if k.startswith(HF_EVAL_ROW_PREFIXES)]) & ~is_summary
    is_train = ~(is_summary | is_eval)
    summary: dict[str, Any] = {}
    try:
        rows = _entries(data, start, end, sep, np.flatnonzero(is_summary), n)
    except (ValueError, RecursionError):
        return None
    for row in rows:
        summary.update({k: v for k, v in row.items() if k not in STEP_KEYS})
    keys = np.full(n, len(names), dtype=np.int64)  # pyarrow's nulls are keys an entry left out
    for v in valid.values():
        keys -= ~v
    lines = _flat_entry_lines(data, start, end, keys)
    parts: list[Columns | None] = []
    for mask in (is_train, is_eval):
        if not mask.any():
            parts.append(None)
            continue
        cols = arrow_table_columns(table if mask.all() else table.filter(pa.array(mask)), lines=None if lines is None else lines[mask])
        if cols is None:
            return None
        parts.append(cols)
    config = {k: v for k, v in rest.items() if k != "log_history"}
    return _build_run(path, parts[0], parts[1], summary, config, [])


def _any_valid(table: Any, valid: dict[str, np.ndarray], names: list[str]) -> np.ndarray:
    """Rows where at least one of ``names`` was logged."""
    out = np.zeros(table.num_rows, dtype=bool)
    for name in names:
        if name not in valid:
            return np.ones(table.num_rows, dtype=bool)
        out |= valid[name]
    return out


def _entries(data: bytes, start: int, end: int, sep: bytes, rows: np.ndarray, n: int) -> list[dict]:
    """The entries at ``rows`` of the ``n`` between ``start`` and ``end``, parsed by ``json``;
    walked from the end, where the Trainer writes its one summary entry."""
    if not len(rows):
        return []
    wanted = set(rows.tolist())
    close = sep.index(b"}") + 1  # a separator starts with the line that closes the entry before it
    out: list[dict] = []
    stop = end
    for k in range(n - 1, min(wanted) - 1, -1):
        cut = data.rfind(sep, start, stop) if k else start
        if k in wanted:
            out.append(_loads(data[cut + len(sep) - 1 if k else start : stop]))
        stop = cut + close
    return out[::-1]


def row_kind(row: dict) -> str:
    """``doctor`` (a DoctorCallback alert), ``summary`` (the Trainer's final train_runtime
    entry), ``eval`` (eval_/test_ keys) or ``train``."""
    if DOCTOR_ROW_KEY in row:
        return "doctor"
    if any(k in row for k in SUMMARY_MARKERS):
        return "summary"
    if any(k.startswith(HF_EVAL_ROW_PREFIXES) for k in row):
        return "eval"
    return "train"


def _step_notes(src: str, info: StepInfo, issues: list[ReadIssue], kind: str) -> None:
    if info.key is None:
        issues.append(ReadIssue(src, f"{kind} entries have no 'step': their order is used as step", level="warning"))
    elif info.missing:
        issues.append(ReadIssue(src, f"{_count(info.missing, kind + ' entry', kind + ' entries')} without a usable '{info.key}' given the step before", level="warning"))


def _restarts(steps: np.ndarray) -> list[int]:
    if len(steps) < 2:
        return []
    back = np.flatnonzero(steps[1:] < steps[:-1]) + 1
    return [int(steps[i]) for i in back]


def _duplicate_note(src: str, steps: np.ndarray, issues: list[ReadIssue]) -> None:
    # return_counts: the plain np.unique imports numpy.ma (benchmarks/RESULTS.md "One small check")
    dup = len(steps) - len(np.unique(steps, return_counts=True)[0])
    if dup:
        issues.append(
            ReadIssue(
                src,
                f"{_count(dup, 'entry repeats', 'entries repeat')} an earlier step (per-micro-batch logs or a restart); "
                "the last value logged for a step wins",
                level="warning",
            )
        )


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"
