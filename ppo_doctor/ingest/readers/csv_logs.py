"""Tabular text logs: SB3 / baselines ``progress.csv``, Lightning ``metrics.csv``, generic CSV.

One row per logging call, one column per key (``docs/sources.md#sb3-logger-keys``):

* SB3 writes ``progress.csv`` with the union of keys in first-seen order and rewrites the file
  with an extended header when a key appears, leaving empty cells; an interrupted rewrite can leave
  a second header line mid-file.  Step = ``time/total_timesteps``; ``nan`` is written literally.
* OpenAI-baselines loggers use plain names with spaces (``mean 100 episode reward``) and step
  columns such as ``total_timesteps``, ``nupdates`` or ``num episodes``.
* Lightning's ``CSVLogger`` writes sparse rows keyed by ``step`` (and ``epoch``).
* TensorBoard's "Download CSV" of one scalar writes ``Wall time,Step,Value``: the tag is read from
  the file name ``run-<run>-tag-<tag>.csv`` (:data:`TENSORBOARD_EXPORT`), or is its stem.
* Anything else with a header and numeric rows: a step-like column if there is one, else the row
  index (with a warning).  ``;`` and tab delimiters are recognised.

W&B exports (a ``_step`` column, or ``<run> - <metric>`` headers) belong to the ``wandb_csv`` reader.
Three paths, fastest first, each falling back to the next when a file is not what it can read:

1. an all-numeric table: under 1 MiB (``PARSER_IMPORT_BYTES``) parsed in Python, which costs
   less than importing pyarrow; larger, pyarrow's CSV reader with every column typed float64, which parses on
   all cores and keeps an empty cell (null: not logged) apart from a written ``nan`` (a logged NaN);
2. other clean tables: ``pandas.read_csv``;
3. files with repeated or changed header lines or ragged rows: row by row with the ``csv`` module,
   so that each problem can be reported.

Each path records the file line of every row (the header is line 1; a row's line is its last
physical line, as ``csv.reader.line_num`` counts), which the series carry as ``lines``.
"""

from __future__ import annotations

import csv
import io
import logging
import re
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ...lazy import pd
from ...detect import distinct
from ...errors import LogReadError
from ...frame import RawRun, RawSeries, ReadIssue
from ...canonical.frameworks import is_eval_key
from .. import filebytes
from ..base import HEAD_BYTES, PARSER_IMPORT_BYTES
from ..console import NUMBER_WRAPPER
from ..tabular import EPOCH_FLOOR, to_wall_seconds, usable_steps
from ..storage import as_path, is_url, open_binary, size_of

NAME = "csv_logs"
log = logging.getLogger(__name__)

# Step columns in order of preference: the cumulative environment-step / trainer-step counters
# first (SB3 ``time/total_timesteps``, baselines ``total_timesteps`` / ``total timesteps`` /
# ppo1's ``TimestepsSoFar``, the curiosity PPO's ``tcount``, HF ``global_step``, Lightning
# ``step``, Spinning Up ``TotalEnvInteracts``), then update, episode and epoch counters, which
# advance by another unit and only stand in when no cumulative step is logged.
STEP_COLUMNS = (
    "time/total_timesteps",
    "total_timesteps",
    "total timesteps",
    "total_steps",
    "timesteps",
    "timestep",
    "env_steps",
    "serial_timesteps",
    "totalenvinteracts",
    "timestepssofar",
    "tcount",
    "global_step",
    "train/global_step",
    "step",
    "iteration",
    "iter",
    "time/iterations",
    "nupdates",
    "n_updates",
    "train/n_updates",
    "updates",
    "update",
    "num episodes",
    "num_episodes",
    "episode",
    "episodes",
    "epoch",
)
# Wall-clock columns; used as wall time only when they hold absolute epoch seconds.  ``wall time``:
# TensorBoard's CSV download of a scalar (see :data:`TENSORBOARD_EXPORT`).
WALL_COLUMNS = ("wall_time", "wall time", "timestamp", "time")
# TensorBoard's scalars dashboard downloads one tag of one run as CSV with the header
# ``Wall time,Step,Value`` (``tensorboard/plugins/scalar/scalars_plugin.py``, ``scalars_impl``) and
# names the file ``run-<run>-tag-<tag>.csv``, each '/' of the tag written '_': the tag is in the
# file name only.  A renamed export's metric is its file's stem.
TENSORBOARD_EXPORT = re.compile(r"^run-.*-tag-(.+)$")
TENSORBOARD_VALUE = "Value"
_DELIMITERS = (",", ";", "\t")
_WANDB_PANEL = re.compile(r".+ - .+")
_BLANK = re.compile(rb"\s*\Z")
# Longest line read, header included (16 MiB: ~200,000 columns of SB3-style names). Sniffing
# reads on past the 4 KiB head until the header and first row end (an SB3 progress.csv with
# 123 columns has a 4.6 KB header); a longer header is refused with a message saying
# so, a longer row (the zero-filled tail a killed writer leaves) is skipped as the file streams in.
MAX_LINE_BYTES = 16 << 20


def _split_header(line: str, delim: str) -> list[str]:
    return [c.strip().strip('"') for c in line.split(delim)]


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def sniff(path: Path, head: bytes) -> bool:
    """A header line of names, then a row with numbers, in one of the known delimiters.

    When the head holds less than the two lines, the file is read on up to the end of its
    first row (at most :data:`MAX_LINE_BYTES`); a named ``.csv``/``.tsv`` file whose header
    is longer than that is claimed so that the reader can say why it is not read.
    """
    if len(head) >= HEAD_BYTES and head.count(b"\n") < 2 and b"\0" not in head and delimiter(head.decode("utf-8", "replace")):
        try:
            head = filebytes.read_lines_head(path, 2, MAX_LINE_BYTES)
        except OSError:
            return False
        if b"\n" not in head and len(head) >= MAX_LINE_BYTES:
            return as_path(path).suffix.lower() in (".csv", ".tsv")
    text = head.decode("utf-8", "replace").lstrip("\ufeff")
    lines = [l for l in text.splitlines() if l.strip()]
    # NUL bytes in the two lines looked at mean a binary file; later ones are damage the reader reports
    if len(lines) < 2 or "\0" in lines[0] or "\0" in lines[1]:
        return False
    delim = delimiter(lines[0])
    if delim is None:
        return False
    cells = _split_header(lines[0], delim)
    if any(_is_number(c) for c in cells if c) or sum(1 for c in cells if c) < 2:
        return False
    if "_step" in cells or any(_WANDB_PANEL.fullmatch(c) for c in cells):
        return False  # W&B history / panel export: the wandb_csv reader owns these
    row = lines[1].split(delim)
    return len(row) >= 2 and any(_is_number(c.strip()) for c in row)


def delimiter(header: str) -> str | None:
    counts = {d: header.count(d) for d in _DELIMITERS}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] else None


def read(path: Path) -> list[RawRun]:
    fast = _python_run(path)
    if fast is None:
        fast = _arrow_run(path)
    if fast is not None:
        return [fast]
    try:
        # One read: a file that grows while it is parsed (a live run) is parsed as one snapshot.
        data, long = filebytes.read_capped_lines(path, MAX_LINE_BYTES)
    except OSError as exc:
        raise LogReadError(str(path), f"cannot read file ({exc.strerror or exc})") from exc
    if long and long[0].number == 1:
        raise LogReadError(str(path), f"header line longer than {MAX_LINE_BYTES} bytes (MAX_LINE_BYTES): not read", offset=0)
    # pandas may parse the file itself while it is what was read: not when lines were left out
    snapshot = _Snapshot(path, len(data)) if not long else None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if _BLANK.match(data):
        raise LogReadError(str(path), "empty file")
    end = data.find(b"\n")
    first = data[: end if end >= 0 else len(data)].decode("utf-8", "replace").rstrip("\r")
    delim = delimiter(first)
    if delim is None:
        raise LogReadError(str(path), "no delimiter (, ; or tab) in the header line", offset=0)
    # pandas parses the nan spellings itself so that every numeric column stays float (text
    # columns cost 5-20x more: benchmarks/RESULTS.md, "Other formats vs pandas"); the few NaN
    # cells are then looked up in the bytes to tell a written nan (a logged NaN) from an empty cell (not logged at this row).
    table = _fast_table(data, delim, nan_words=True, snapshot=snapshot)
    empty: dict[str, np.ndarray] | None = None
    block = None
    if table is not None:
        block = _numeric_block(table)
        empty = _empty_nan_cells(data, delim, table, block)
        if empty is None:  # lines do not map to rows: let pandas keep "nan" as text instead
            table, block = _fast_table(data, delim, snapshot=snapshot), None
    issues: list[ReadIssue] = []
    lines: np.ndarray | None
    if table is None:
        table, issues, lines = _careful_table(path, data, delim)
    else:
        lines = row_lines(data, delim, len(table))
    issues[:0] = [
        ReadIssue(str(path), f"line {ln.number} skipped: {ln.length} bytes, over the {MAX_LINE_BYTES}-byte line limit (MAX_LINE_BYTES)", offset=ln.offset)
        for ln in long
    ]
    return _table_to_runs(path, table, issues, lines, empty=empty, block=block)


def _arrow_run(path: Path) -> RawRun | None:
    """The all-numeric fast path, or None when the file needs pandas or the careful reader.

    pyarrow's reader (fast_float, correctly rounded) with every column typed float64 either
    reads the whole table or raises on the first cell that is not a number, an empty cell or a
    ``nan``/``inf`` spelling: a text column, a header line inside the file, a ragged row, a
    quoted line break.  Those files go down the other paths, unchanged.  Measured on
    benchmarks/ 1M-point CSV, ``pandas.read_csv`` time / this read, median of ~70
    alternating pairs: 0.97x in benchmarks/RESULTS.md (interquartile 0.86-1.10), 0.80-1.10x
    across other runs of the same day: parity within the machine's noise.  pyarrow's parse alone is
    1.06-1.16x pandas (both parse on both cores; a perf profile puts 75 % of pyarrow's time in
    splitting fields and converting floats); joining each column's per-block chunks costs the
    rest.  The pandas path needed ~25 ms more for the pass that tells a written ``nan`` from an
    empty cell and for its snapshot copy.
    """
    try:
        with path.open("rb") as fh:
            size = size_of(fh)
            fh.seek(max(size - 1, 0))
            last = fh.read(1)
        head = filebytes.read_lines_head(path, 2, MAX_LINE_BYTES)
    except OSError:
        return None  # the main path reports it
    plain = _plain_header(head)
    if plain is None or last != b"\n":
        return None  # a last line without its end may be cut short: the careful path handles it
    names, delim = plain
    import pyarrow as pa
    import pyarrow.csv as pacsv

    # pyarrow reads a local path itself; a remote file through its fsspec file object
    remote = open_binary(path) if is_url(path) else None
    source = path if remote is None else remote
    try:
        table = pacsv.read_csv(
            source,
            # an empty line is a row (all null) instead of nothing, so that rows stay lines
            parse_options=pacsv.ParseOptions(delimiter=delim, ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(
                column_types={n: pa.float64() for n in names},
                null_values=[""],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowException, ValueError, OSError) as exc:
        log.debug("%s: not an all-numeric table for pyarrow (%s)", path, exc)
        return None
    finally:
        if remote is not None:
            remote.close()
    if not _Snapshot(path, size).unchanged() or table.num_rows == 0:
        return None  # grew while parsed (a live run): parse one snapshot of its bytes instead
    if table.column_names != names:
        return None
    numeric: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    dense = np.ones(table.num_rows, dtype=bool)  # shared, read only: the usual column has no empty cell
    # one chunk per parsed block: arrow joins them in C++ for all columns at once (2x faster
    # than numpy joining each column's chunks in to_numpy)
    for name, col in zip(names, table.combine_chunks().columns):
        values = col.to_numpy()
        numeric[name] = (values, ~col.is_null().to_numpy() if col.null_count else dense)
    if all(logged is not dense for _, logged in numeric.values()) and not np.logical_or.reduce([logged for _, logged in numeric.values()]).all():
        return None  # a row with no cell: an empty line (or only delimiters), which pandas' path skips
    return _columns_to_run(path, table.num_rows, numeric, {}, [], lines=_dense_lines(table.num_rows))


# A cell the small-file path parses with float(): a plain decimal number, a nan/inf spelling that
# pyarrow reads the same, or empty (not logged).  Anything else (spaces, quotes, 1_000, text)
# goes to pyarrow, so the two paths give the same table (tests/test_arrow_fast_paths.py).
# Each cell text matches in one way only, so a failed match backtracks linearly, not exponentially.
_CELL = rb"(?:[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|-?(?:nan|NaN|inf|Infinity))?"


def _python_run(path: Path) -> RawRun | None:
    """The all-numeric fast path for a local file under :data:`.base.PARSER_IMPORT_BYTES`:
    the table :func:`_arrow_run` would read, parsed by ``float`` cell by cell without importing
    pyarrow (0.15 s, more than pyarrow's parse saves on a small file: benchmarks/RESULTS.md, "One
    small check").  None when the file is larger, or anything in it is not a plain number or an empty cell (then pyarrow's path
    decides); a CR, a BOM, a blank or ragged row and a missing last line end send it on too."""
    if is_url(path):
        return None
    try:
        size = path.stat().st_size
        if size >= PARSER_IMPORT_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    second_end = data.find(b"\n", data.find(b"\n") + 1)
    if len(data) != size or second_end < 0 or not data.endswith(b"\n") or b"\r" in data or data.startswith(b"\xef\xbb\xbf"):
        return None
    plain = _plain_header(data[: second_end + 1])
    if plain is None:
        return None
    names, delim = plain
    sep = delim.encode()
    body = data[data.find(b"\n") + 1 :]
    if re.fullmatch(rb"(?:%s(?:%s%s)*\n)+" % (_CELL, re.escape(sep), _CELL), body) is None:
        return None
    cells: list[bytes] = []
    width = len(names)
    for line in body.split(b"\n")[:-1]:  # the file ends with a line end: the last piece is empty
        row = line.split(sep)
        if len(row) != width:
            return None
        cells.extend(row)
    n = len(cells) // width
    values = np.array([float(c) if c else np.nan for c in cells], dtype=np.float64).reshape(n, width).T.copy()
    logged = np.array([c != b"" for c in cells], dtype=bool).reshape(n, width).T.copy()
    dense = np.ones(n, dtype=bool)  # shared, read only, as on the pyarrow path
    numeric = {name: (values[j], logged[j] if not logged[j].all() else dense) for j, name in enumerate(names)}
    return _columns_to_run(path, n, numeric, {}, [], lines=_dense_lines(n))


def _dense_lines(rows: int) -> np.ndarray:
    """The lines of a table with no line but its header and its rows: row i is line i + 2."""
    return np.arange(2, rows + 2, dtype=np.int32)


def row_lines(data: bytes, delim: str, rows: int) -> np.ndarray | None:
    """The line of each of the ``rows`` rows pandas read from ``data``, or None when they cannot
    be told (then a finding points at the file, not at a line).

    Each line is a row unless the file has blank lines (pandas skips them) or a quoted cell with
    a line break; then the rows are found again with the ``csv`` module, and kept only when
    there are as many as pandas found.  Shared with :mod:`.wandb_csv`."""
    if data.count(b"\n") + (not data.endswith(b"\n")) == rows + 1:
        return _dense_lines(rows)
    reader = csv.reader(data.decode("utf-8", "replace").split("\n"), delimiter=delim)
    lines: list[int] = []
    try:
        for cells in reader:
            if any(c.strip(" \t\r") for c in cells) or len(cells) > 1:  # pandas skips a blank line
                lines.append(reader.line_num)
    except csv.Error:
        return None
    return np.asarray(lines[1:], dtype=np.int32) if len(lines) == rows + 1 else None


def _plain_header(head: bytes) -> tuple[list[str], str] | None:
    """(names, delimiter) when the header is plain: unique non-empty unquoted names without
    surrounding spaces, and the first row is all numbers or empty cells (else the file has a
    text column and the pyarrow attempt would be wasted)."""
    text = head.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "replace")
    lines = text.split("\n", 2)
    if len(lines) < 3:
        return None
    header, first = lines[0].rstrip("\r"), lines[1].rstrip("\r")
    delim = delimiter(header)
    if delim is None or '"' in header or "\ufffd" in header:
        return None
    names = header.split(delim)
    if any(not n or n != n.strip() for n in names) or len(set(names)) != len(names):
        return None
    cells = first.split(delim)
    if len(cells) != len(names) or not all(c == "" or _is_number(c) for c in cells):
        return None
    return names, delim


NumericBlock = tuple[list[str], np.ndarray]


def _numeric_block(df: pd.DataFrame) -> NumericBlock:
    """The plain numeric and bool columns as one float64 array (one conversion for all of them)."""
    plain = [c for c, t in df.dtypes.items() if pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t)]
    # selecting every column costs pandas a block take per column (8.8 s of 25 for 200,000 columns)
    chosen = df if len(plain) == df.shape[1] else df[plain]
    return plain, chosen.to_numpy(dtype=np.float64, na_value=np.nan)


def _empty_nan_cells(data: bytes, delim: str, df: pd.DataFrame, block: NumericBlock) -> dict[str, np.ndarray] | None:
    """For each numeric column with NaN: which of its rows were an empty cell in the file.

    None when the file's lines cannot be matched one to one with the table's rows (blank lines,
    quoted line breaks, an index column): the caller then falls back to the text-column path.
    """
    plain, values = block
    nan_all = np.isnan(values)
    # only float columns can hold a NaN (an int or bool column has none)
    where_nan = np.asarray(nan_all.any(axis=0))
    if not where_nan.any():
        return {}
    cols = [c for c, has in zip(plain, where_nan.tolist()) if has]
    nan = nan_all[:, where_nan]
    rows = np.flatnonzero(nan.any(axis=1))
    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 0x0A)
    if len(ends) != len(df) + 1:
        return None
    d = delim.encode()
    width = len(df.columns)
    where = {c: df.columns.get_loc(c) for c in cols}
    out = {c: np.zeros(len(df), dtype=bool) for c in cols}
    for r in rows.tolist():
        line = data[ends[r] + 1 : ends[r + 1]].rstrip(b"\r")
        if b'"' in line:
            cells = [c.encode() for c in next(csv.reader([line.decode("utf-8", "replace")], delimiter=delim))]
        else:
            cells = line.split(d)
        if len(cells) > width:
            return None
        for c in out:
            j = where[c]
            out[c][r] = j >= len(cells) or not cells[j].strip()
    return out


# How numpy, Python and torch print a NaN; other spellings still go through _numeric_column.
_NAN_SPELLINGS = ("nan", "NaN", "NAN", "-nan", "-NaN", "+nan", "+NaN")


class _Snapshot(NamedTuple):
    """The file and its size when it was read into memory."""

    path: Path
    size: int

    def unchanged(self) -> bool:
        try:
            return self.path.stat().st_size == self.size
        except OSError:
            return False


def _read_csv(data: bytes, snapshot: _Snapshot | None, **kw: Any) -> pd.DataFrame:
    """``pd.read_csv`` of ``data``: from the file itself while it still has the size it had
    when ``data`` was read (pandas parses a path about 1.6x faster than a file object or a
    ``BytesIO`` of the same bytes, measured on benchmarks/ 1M-point CSV), else from ``data``,
    so a live run's growing file is still parsed as the one snapshot the checks looked at."""
    if snapshot is not None and not is_url(snapshot.path) and snapshot.unchanged():
        df = pd.read_csv(snapshot.path, **kw)
        if snapshot.unchanged():
            return df
    return pd.read_csv(io.BytesIO(data), **kw)


def _fast_table(data: bytes, delim: str, *, nan_words: bool = False, snapshot: _Snapshot | None = None) -> pd.DataFrame | None:
    """pandas on the whole file, or None when the careful path must look at it.

    pandas' C parser raises on a row with too many cells, and a repeated or changed header line
    shows up as text in a column; a last line without its line end may be cut short, which only
    the careful path handles.  (A short row in the middle reads as empty cells, which is what it holds.)
    """
    if not data.endswith(b"\n") and data[data.rfind(b"\n") + 1 :].strip():
        return None
    try:
        # only an empty cell is missing: a written "nan" stays text here and becomes a logged NaN
        # ``nan_words``: nan spellings parse as NaN too; the caller then tells them from empty cells
        na = ["", *_NAN_SPELLINGS] if nan_words else [""]
        df = _read_csv(data, snapshot, sep=delim, engine="c", keep_default_na=False, na_values=na, encoding_errors="replace")
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError, OSError):
        return None
    df.columns = [str(c).strip() for c in df.columns]
    names = set(df.columns)
    for c, dtype in df.dtypes.items():  # dtypes, not df[c]: building 50 Series costs more than the check
        if not pd.api.types.is_numeric_dtype(dtype) and df[c].astype(str).str.strip().isin(names).any():
            return None  # a header line inside the file: the careful path skips or follows it
    return df


def _careful_table(path: Path, data: bytes, delim: str) -> tuple[pd.DataFrame, list[ReadIssue], np.ndarray]:
    """Row by row: repeated header lines skipped, changed headers followed, ragged rows reported;
    the table, the issues and the line of each row."""
    src = str(path)
    text = data.decode("utf-8", "replace")
    issues: list[ReadIssue] = []
    raw_lines = text.split("\n")
    offsets = np.concatenate([[0], np.cumsum([len(l.encode("utf-8", "replace")) + 1 for l in raw_lines])])
    header: list[str] | None = None
    columns: dict[str, list[tuple[int, str]]] = {}
    n_rows = 0
    at_lines: list[int] = []
    repeated = changed = 0
    long_rows: list[int] = []
    short_rows: list[int] = []
    partial = None
    broken: list[tuple[int, str]] = []
    reader = csv.reader(raw_lines, delimiter=delim)
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:  # a NUL byte, a field over the csv module's size limit ...
            broken.append((reader.line_num - 1, str(exc)))
            continue
        line = reader.line_num - 1
        if not cells or all(not c.strip() for c in cells):
            continue
        cells = [c.strip() for c in cells]
        if header is None:
            header = cells
            continue
        if line == len(raw_lines) - 1 and not text.endswith("\n"):
            # No line end: the writer may have been stopped inside the last cell ("0.25" cut
            # to "0.2"), so only the cells followed by a delimiter are known to be complete.
            partial = line
            cells = cells[:-1]
            if not any(cells) or _looks_like_header(cells, header) or cells == header[: len(cells)]:
                continue
        if cells == header:
            repeated += 1
            continue
        if _looks_like_header(cells, header):
            # SB3 rewrote its header with a new key (or another log was appended): follow it
            header = cells
            changed += 1
            continue
        if len(cells) > len(header):
            long_rows.append(line)
            continue
        if len(cells) < len(header) and line != partial:
            short_rows.append(line)
        for name, cell in zip(header, cells):
            if cell != "":
                columns.setdefault(name, []).append((n_rows, cell))
        n_rows += 1
        at_lines.append(line + 1)
    if header is None or n_rows == 0:
        raise LogReadError(src, "no data rows under the header")
    if repeated:
        issues.append(ReadIssue(src, f"{repeated} repeated header line(s) skipped", level="warning"))
    if changed:
        issues.append(ReadIssue(src, f"header line changed {changed} time(s) inside the file (a key was added); rows follow the newest header", level="warning"))
    for rows, what in ((long_rows, "more"), (short_rows, "fewer")):
        if rows:
            how = "skipped" if what == "more" else "read with empty cells"
            issues.append(
                ReadIssue(src, f"{len(rows)} row(s) with {what} cells than the header {how} (first at line {rows[0] + 1})", offset=int(offsets[rows[0]]))
            )
    if partial is not None:
        issues.append(ReadIssue(src, f"partial last line {partial + 1}: no line end, its last cell was not read (file cut short or still being written?)", offset=int(offsets[partial])))
    if broken:
        line, why = broken[0]
        issues.append(ReadIssue(src, f"{len(broken)} line(s) not readable as CSV skipped (first at line {line + 1}: {why})", offset=int(offsets[line])))
    frame = {}
    for name, items in columns.items():
        col = np.full(n_rows, None, dtype=object)
        idx = np.fromiter((i for i, _ in items), dtype=np.int64, count=len(items))
        col[idx] = [c for _, c in items]
        frame[name] = col
    return pd.DataFrame(frame, index=pd.RangeIndex(n_rows)), issues, np.asarray(at_lines, dtype=np.int32)


def _looks_like_header(cells: list[str], header: list[str]) -> bool:
    """A row of names that keeps at least half of the current ones (SB3 only ever adds keys)."""
    filled = [c for c in cells if c]
    if len(filled) < max(2, len(cells) // 2) or any(_is_number(c) for c in filled):
        return False
    return len(set(filled) & set(header)) * 2 >= len(header)


def _numeric_column(col: pd.Series) -> tuple[np.ndarray, np.ndarray, int] | None:
    """(values, logged mask, garbled cells) of a column, or None when it is not numeric.

    An empty cell is "not logged at this row" (SB3's first row, EvalCallback rows, Lightning's
    sparse rows); a written ``nan`` is a logged NaN and is kept.  A number written as the repr
    of its torch tensor or NumPy scalar (``tensor(-2.98, grad_fn=<NegBackward0>)``,
    ``np.float64(0.5)``: a home-made loop that logs ``str(loss)`` without ``.item()``) is that number.
    """
    present = col.notna().to_numpy().copy()
    if pd.api.types.is_bool_dtype(col) or pd.api.types.is_numeric_dtype(col):
        return col.to_numpy(dtype=np.float64, na_value=np.nan), present, 0
    text = col.astype(str).str.strip()
    if text.str.endswith(")").any():
        text = text.str.replace(_WRAPPED_NUMBER, r"\1", regex=True)
    present &= (text != "").to_numpy()
    vals = pd.to_numeric(text.where(present, None), errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
    parsed = ~np.isnan(vals) | text.str.lower().isin(_NAN_WORDS).to_numpy()
    # pandas gives up on integer literals longer than Python's 4300-digit limit; such an integer
    # is past the float range (1.8e308 has 309 digits), so it reads as +-inf like 1e400 does
    huge = present & ~parsed & text.str.fullmatch(r"[+-]?\d{300,}").to_numpy(dtype=bool, na_value=False)
    if huge.any():
        vals[huge] = np.where(text[huge].str.startswith("-").to_numpy(dtype=bool), -np.inf, np.inf)
        parsed |= huge
    ok = present & parsed
    if not ok.any() or ok.sum() * 2 < present.sum():
        return None  # mostly text: a label column, not a metric
    return vals, ok, int((present & ~parsed).sum())


_NAN_WORDS = ("nan", "-nan", "+nan")
# A number inside the repr of a torch tensor or a NumPy scalar, with what follows it (device,
# dtype, grad_fn) dropped.
_WRAPPED_NUMBER = rf"^{NUMBER_WRAPPER}\(\s*([^,()\s]+)\s*(?:,.*)?\)$"


def _table_to_runs(
    path: Path,
    df: pd.DataFrame,
    issues: list[ReadIssue],
    lines: np.ndarray | None,
    *,
    empty: dict[str, np.ndarray] | None = None,
    block: NumericBlock | None = None,
) -> list[RawRun]:
    """Columns to series: one run, or one per block of a long table (:func:`_run_blocks`).
    ``lines``: the file line of each row, if known.  ``empty`` (from
    :func:`_empty_nan_cells`): NaN in numeric columns may be written nans, and only the rows it
    marks were empty cells; without it every NaN there is empty.  ``block``:
    :func:`_numeric_block` of ``df`` when the caller has it already."""
    numeric: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    text_cols: dict[str, pd.Series] = {}
    garbled = 0
    plain, values = block if block is not None else _numeric_block(df)
    if plain:
        logged = ~np.isnan(values)
        for j, name in enumerate(plain):
            if empty is not None:
                gap = empty.get(name)
                logged[:, j] = True if gap is None else ~gap
            numeric[str(name)] = (values[:, j], logged[:, j])
    for name in df.columns:
        if name in numeric:
            continue
        got = _numeric_column(df[name])
        if got is None:
            text_cols[str(name)] = df[name]
        else:
            numeric[str(name)] = got[:2]
            garbled += got[2]
    found = _run_blocks(numeric, text_cols)
    if found is None:
        return [_columns_to_run(path, len(df), numeric, text_cols, issues, garbled, lines=lines)]
    key, blocks = found
    runs = []
    for label, a, b in blocks:
        where = "" if lines is None else f", lines {int(lines[a])}-{int(lines[b - 1])}"
        note = ReadIssue(
            str(path),
            f"{len(blocks)} runs in one table, told apart by its '{key}' column (each a block of rows whose steps start again): this is '{label}'{where}",
            level="info",
        )
        run = _columns_to_run(
            path,
            b - a,
            {k: (v[a:b], m[a:b]) for k, (v, m) in numeric.items()},
            {k: c.iloc[a:b] for k, c in text_cols.items() if k != key},
            [*issues, note],
            garbled if a == 0 else 0,
            lines=None if lines is None else lines[a:b],
        )
        run.name = label
        runs.append(run)
    return runs


def _run_blocks(numeric: dict[str, tuple[np.ndarray, np.ndarray]], text_cols: dict[str, pd.Series]) -> tuple[str, list[tuple[str, int, int]]] | None:
    """A long table of several runs (a seaborn-style ``arm,step,reward`` file a notebook writes
    for a comparison plot): a text column whose every value fills one block of rows, where the
    steps never go back inside a block and go back at every boundary between blocks.  Returns
    the column and each block's (value, first row, end row), or None.  A column that changes
    while the steps keep counting (a phase, a curriculum stage) names parts of one run."""
    step_col = _step_column(numeric)
    if step_col is None or not text_cols:
        return None
    values, logged = numeric[step_col]
    if not logged.all():
        return None
    for key, col in text_cols.items():
        if key.lower() in WALL_COLUMNS or col.isna().any():
            continue
        labels = col.astype(str).to_numpy()
        starts = np.r_[0, np.flatnonzero(labels[1:] != labels[:-1]) + 1]
        ends = np.r_[starts[1:], len(labels)]
        if len(starts) < 2 or len(set(labels[starts])) != len(starts) or (ends - starts).min() < 2:
            continue
        back = np.flatnonzero(values[1:] < values[:-1]) + 1
        if np.array_equal(back, starts[1:]):
            return key, [(str(labels[a]), int(a), int(b)) for a, b in zip(starts, ends)]
    return None


# The name pandas gives a column with an empty header: the row index ``DataFrame.to_csv()`` writes
# unless told ``index=False`` (a home-made loop's ``pd.DataFrame(history).to_csv(path)``).
PANDAS_INDEX = re.compile(r"^Unnamed: \d+$")


def _drop_row_index(numeric: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
    """Remove from ``numeric`` an unnamed column that counts the rows 0, 1, 2 ...: pandas' row
    index, not a measurement (as a metric it would be judged as one)."""
    for name in [k for k in numeric if PANDAS_INDEX.match(k)]:
        values, logged = numeric[name]
        if logged.all() and np.array_equal(values, np.arange(len(values))):
            del numeric[name]


def _columns_to_run(
    path: Path,
    n: int,
    numeric: dict[str, tuple[np.ndarray, np.ndarray]],
    text_cols: dict[str, pd.Series],
    issues: list[ReadIssue],
    garbled: int = 0,
    *,
    lines: np.ndarray | None,
) -> RawRun:
    """Columns (values, logged mask) of ``n`` rows to series: the step column found, wall-clock
    columns taken out, eval keys apart, restarts noted.  ``lines``: the file line of each row
    (int32), or None when it is not known."""
    src = str(path)
    _drop_row_index(numeric)
    step_col = _step_column(numeric)
    per_call = _per_call_counter(numeric, step_col)
    if per_call is not None:
        issues.append(
            ReadIssue(
                src,
                f"'{step_col}' goes back {per_call[1]} times (a counter each training call restarts, SB3's"
                f" learn() called again with reset_num_timesteps=True): steps read from '{per_call[0]}', which keeps counting",
                level="warning",
            )
        )
        step_col = per_call[0]
    if step_col is None:
        steps = np.arange(n, dtype=np.int64)
        have = np.ones(n, dtype=bool)
        issues.append(ReadIssue(src, "no step column (tried " + ", ".join(STEP_COLUMNS[:6]) + " ...): row index used as step", level="warning"))
    else:
        v, logged = numeric.pop(step_col)
        have = logged & usable_steps(np.where(logged, v, np.nan))
        steps = np.where(have, v, 0).astype(np.int64)
        if not have.all():
            issues.append(ReadIssue(src, f"{int((~have).sum())} row(s) without a usable '{step_col}' value skipped", level="warning"))
    wall = _wall(numeric, text_cols)
    if list(numeric) == [TENSORBOARD_VALUE] and wall is not None:
        numeric = {_tensorboard_export_tag(path): numeric[TENSORBOARD_VALUE]}
    if garbled:
        issues.append(ReadIssue(src, f"{garbled} non-numeric cell(s) in numeric columns skipped", level="warning"))
    ignored = [c for c in text_cols if c.lower() not in WALL_COLUMNS]
    if ignored:
        issues.append(ReadIssue(src, "non-numeric columns ignored: " + ", ".join(ignored[:8]) + (" ..." if len(ignored) > 8 else ""), level="warning"))
    run = RawRun(issues=issues)
    for name, (vals, logged) in numeric.items():
        keep = have & logged
        if keep.all():  # dense column: no copy
            s = RawSeries(tag=name, steps=steps, values=vals, wall_time=wall, source=src, lines=lines)
        elif keep.any():
            s = RawSeries(
                tag=name,
                steps=steps[keep],
                values=vals[keep],
                wall_time=None if wall is None else wall[keep],
                source=src,
                lines=None if lines is None else lines[keep],
            )
        else:
            continue
        (run.eval_series if is_eval_key(name) else run.series).append(s)
    if not run.series and not run.eval_series:
        raise LogReadError(src, "no numeric column with values")
    s_have = steps[have]
    run.restarts = [int(s_have[i]) for i in np.flatnonzero(s_have[1:] < s_have[:-1]) + 1]
    return run


# A step-like column with this few values over at least this many rows, never going back, is a
# setting written on every row, not the run's axis.
SETTING_VALUES, SETTING_ROWS = 3, 10


def _step_column(numeric: dict[str, tuple[np.ndarray, np.ndarray]]) -> str | None:
    """The first step-like column (STEP_COLUMNS order) holding whole numbers (a stray bad cell
    aside, see :func:`.tabular.usable_steps`) that is an axis: a column that never goes back and
    holds at most :data:`SETTING_VALUES` values over many rows is a setting (a home-made GRPO
    loop's ``total_steps`` holds its planned 300, then 500 after a restart, on each of 505 rows,
    beside ``step``).  A column that goes back is left to :func:`_per_call_counter`."""
    lower = {n.lower(): n for n in numeric}
    for cand in STEP_COLUMNS:
        name = lower.get(cand)
        if name is None:
            continue
        v, logged = numeric[name]
        fin = v[logged & np.isfinite(v)]
        if len(fin) >= SETTING_ROWS and len(distinct(fin)) <= SETTING_VALUES and _backs(v, logged) == 0:
            continue
        if usable_steps(np.where(logged, v, np.nan)) is not None:
            return name
    return None


# A step column that goes back this many times is a per-call counter, not a resumed run's (a
# resume from a checkpoint goes back once or twice): SB3's ``time/total_timesteps`` restarts at
# every ``learn()`` call made with ``reset_num_timesteps=True`` (its default), while
# ``train/n_updates`` (``model._n_updates``) keeps counting across calls; a classroom run of the
# real-run set calls ``learn(1000)`` 2,000 times, and read along the timesteps its 4,000 rows fall
# on two steps.
PER_CALL_RESTARTS = 3


def _per_call_counter(numeric: dict[str, tuple[np.ndarray, np.ndarray]], step_col: str | None) -> tuple[str, int] | None:
    """``(column, restarts)`` when ``step_col`` goes back at least :data:`PER_CALL_RESTARTS`
    times and a later step-like column (STEP_COLUMNS order) logged on every row it is never goes
    back: that column is the run's axis.  None otherwise (the restarts are then the run's own)."""
    if step_col is None:
        return None
    restarts = _backs(*numeric[step_col])
    if restarts < PER_CALL_RESTARTS:
        return None
    lower = {n.lower(): n for n in numeric}
    for cand in STEP_COLUMNS[STEP_COLUMNS.index(step_col.lower()) + 1 :]:
        name = lower.get(cand)
        if name is None:
            continue
        v, logged = numeric[name]
        if np.array_equal(logged, logged | numeric[step_col][1]) and usable_steps(np.where(logged, v, np.nan)) is not None and _backs(v, logged) == 0:
            return name, restarts
    return None


def _tensorboard_export_tag(path: Path) -> str:
    """The tag of a TensorBoard scalar export, from its file name (:data:`TENSORBOARD_EXPORT`)."""
    stem = Path(path.name).stem
    m = TENSORBOARD_EXPORT.match(stem)
    return m.group(1) if m else stem


def _backs(values: np.ndarray, logged: np.ndarray) -> int:
    """How many times the logged values go back."""
    v = values[logged & np.isfinite(values)]
    return int(np.count_nonzero(v[1:] < v[:-1]))


def _wall(numeric: dict[str, tuple[np.ndarray, np.ndarray]], text_cols: dict[str, pd.Series]) -> np.ndarray | None:
    """Absolute wall-clock times from a wall_time/timestamp/time column (removed from the metrics)."""
    for name in list(numeric):
        if name.lower() in WALL_COLUMNS:
            v, logged = numeric[name]
            fin = v[logged & np.isfinite(v)]
            # absolute times only: elapsed seconds (procgen log.csv "wall_time") stay a metric
            if len(fin) and fin.min() > EPOCH_FLOOR:
                numeric.pop(name)
                return to_wall_seconds(np.where(logged, v, np.nan).tolist())
    for name, col in text_cols.items():
        if name.lower() in WALL_COLUMNS:
            return to_wall_seconds(col.tolist())
    return None
