"""Reader for W&B's binary transaction log ``run-<id>.wandb`` (docs/sources.md#wandb-transaction-log).

The file is what the W&B client writes locally for every run (online or offline); it is the
only place an offline run keeps its metrics.  Layout:

* framing = the LevelDB log format (``leveldb/doc/log_format.md``): a 7-byte file header
  ``":W&B"`` + uint16 LE ``0xBEE1`` + uint8 version 0, then 32 KiB blocks of records
  ``uint32 crc | uint16 length | uint8 type | data``; FULL/FIRST/MIDDLE/LAST fragments; fewer
  than 7 bytes left in a block are zero padding.  The checksum is zlib CRC-32 of the data
  seeded with the CRC-32 of the type byte (``wandb/sdk/internal/datastore.py``, wandb <= 0.29;
  checked on files of wandb 0.14.2, 0.15.5 and 0.31.0), not LevelDB's masked CRC32C
  (:mod:`.framing`);
* payload = a protobuf ``wandb_internal.Record`` (``wandb/proto/wandb_internal.proto``).

The protobuf is decoded with a small wire-format decoder (:mod:`.proto`), so the library
never imports wandb.  Metrics come from ``Record.history`` rows; ``HistoryItem`` has ``key`` (legacy Python
backend) or ``nested_key`` (Go wandb-core) and ``value_json`` (NaN/Infinity as bare tokens).
History rows are decoded in bulk, column-wise with numpy (:mod:`.history`), and their
numbers parsed by :mod:`.numparse`: a million points in about half a second, as fast as pandas reads the same
points from JSONL (issue #6).

Step: the row's ``_step``, unless ``define_metric(..., step_metric=...)`` gave the key another
x-axis (HF Trainer and OpenRLHF declare ``train/global_step``, docs/sources.md#wandb-transaction-log); then the
value of that metric in the row (or the last one logged before it), as W&B's own charts do.
A declared step metric is that axis, not a metric of its own.
This module reads the records in order and builds the run from the decoded columns.
"""

from __future__ import annotations

import fnmatch
import logging
import math
import mmap
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ...errors import LogReadError
from ...frame import RawRun, RawSeries, ReadIssue, TextSample
from ...canonical.frameworks import is_eval_key
from .. import filebytes
from . import files
from .files import TableRef
from .framing import BLOCK, FILE_HEADER, MAGIC, VERSION, iter_records
from .history import CHUNK_BYTES, NOT_JSON, Log, Pending, decode_rows
from .binary_sniff import sniff as sniff  # the reader protocol: NAME, sniff, read
from .proto import Malformed, config_items, fields, set_config, signed, str_fields, varint
from ..storage import as_path, has_fileno, open_binary, size_of

log = logging.getLogger(__name__)

NAME = "wandb_binary"

# Record oneof field numbers (wandb_internal.proto, docs/sources.md#wandb-transaction-log).
_R_HISTORY, _R_CONFIG, _R_METRIC, _R_RUN, _R_EXIT = 2, 5, 12, 17, 18
_HISTORY_TAG = bytes([_R_HISTORY << 3 | 2])

# Keys that W&B writes into every row; used for step and wall time, never analysed.
_STEP_KEY, _TIME_KEY = "_step", "_timestamp"
# Nested dict values deeper than this are not flattened into metrics (untrusted input).
_MAX_NESTING = 16
_TABLE_TYPES = ("table-file", "table", "partitioned-table", "joined-table")


class Decoded(NamedTuple):
    """A decoded ``.wandb`` file: the run, the tables its history logged, its last ``_step``."""

    run: RawRun
    tables: list[TableRef]
    last_step: int | None


def read(path: Path) -> list[RawRun]:
    """Read ``run-<id>.wandb`` and the side files of its run folder (``files/`` beside it)."""
    path = as_path(path)
    try:
        with open_binary(path) as fh:
            size = size_of(fh)
            if not has_fileno(fh):  # a remote file, which has no descriptor: streamed into memory once
                whole = fh.read()
                size = len(whole)
                end = min(size, -(-filebytes.content_end_of(whole) // BLOCK) * BLOCK)
                data: bytes | mmap.mmap = whole[:end]
            else:
                # a zero tail (crashed writer) is not mapped; the block holding the last non-zero
                # byte is, whole: its zero bytes may be a record's or the block's padding
                end = min(size, -(-filebytes.content_end(fh.fileno(), size) // BLOCK) * BLOCK)
                # mmap: a multi-GB log is paged in as it is scanned instead of copied into memory
                data = mmap.mmap(fh.fileno(), end, access=mmap.ACCESS_READ) if end else b""
    except (OSError, ValueError) as exc:
        raise LogReadError(str(path), f"cannot read file: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        decoded = decode(data, str(path))
    finally:
        if isinstance(data, mmap.mmap):
            data.close()
    raw = decoded.run
    if end < size:
        raw.issues.append(ReadIssue(str(path), filebytes.zero_tail_message(size - end), offset=end, level="warning"))
    side = files.read_side_files(path.parent / "files", decoded.tables)
    files.merge_side_files(raw, side)
    issue = files.summary_step_issue(side.summary, decoded.last_step, str(path.parent / "files" / "wandb-summary.json"))
    if issue is not None:
        raw.issues.append(issue)
    log.debug("%s: %d series, %d points", path, len(raw.series), sum(len(x) for x in raw.series))
    return [raw]


def read_run_folder(folder: Path) -> list[RawRun]:
    """Every run of a W&B run folder (``run-*``/``offline-run-*``): its ``.wandb`` log and ``files/``.

    A folder without a ``.wandb`` file (copied without it) still gives its config and text
    tables, with a warning that the metrics are missing.
    """
    folder = as_path(folder)
    logs = sorted(p for p in folder.glob("*.wandb") if p.is_file())
    if logs:
        runs: list[RawRun] = []
        for p in logs:
            runs += read(p)
        return runs
    side = files.read_side_files(folder / "files")
    if not (side.config or side.texts or side.summary or side.metadata):
        raise LogReadError(str(folder), "not a W&B run folder (no .wandb file and no files/ content)")
    raw = RawRun()
    files.merge_side_files(raw, side)
    raw.issues.append(ReadIssue(str(folder), "no run-<id>.wandb file: the run's metric history is missing", level="warning"))
    return [raw]


def decode(data: bytes | mmap.mmap, path: str) -> Decoded:
    """Decode the bytes of a ``.wandb`` file into a RawRun (without side files)."""
    if len(data) < FILE_HEADER:
        raise LogReadError(path, f"not a W&B log: {len(data)} bytes, shorter than the 7-byte header", offset=0)
    if data[: len(MAGIC)] != MAGIC:
        raise LogReadError(path, "not a W&B log: header is not ':W&B' + 0xBEE1", offset=0)
    if data[6] != VERSION:
        raise LogReadError(path, f"unsupported W&B log version {data[6]}", offset=6)

    lg = Log(path)
    pending = Pending()
    saw_exit = False
    for offset, payload in iter_records(data, path, lg.issues):
        body = _only_history(payload) if payload[:1] == _HISTORY_TAG else None
        if body is not None:  # the usual record: nothing but a history row
            pending.add(body, offset, len(lg.issues))
        else:
            try:
                for fno, wire, body in fields(payload):
                    if wire != 2:
                        continue
                    if fno == _R_HISTORY:
                        pending.add(body, offset, len(lg.issues))
                    elif fno == _R_CONFIG:
                        for op, key, value in config_items(body):
                            set_config(lg.config, op, key, value)
                    elif fno == _R_RUN:
                        _read_run_record(lg, body)
                    elif fno == _R_METRIC:
                        d = str_fields(body, {1: "name", 2: "glob", 4: "step_metric"})
                        if d.get("step_metric") or d.get("name"):
                            lg.metric_defs.append((d.get("name", ""), d.get("glob", ""), d.get("step_metric", "")))
                    elif fno == _R_EXIT:
                        saw_exit = True
                        lg.exit_code = 0
                        for efno, ewire, v in fields(body):
                            if efno == 1 and ewire == 0:
                                lg.exit_code = signed(v)
            except (Malformed, IndexError, ValueError, RecursionError) as exc:
                lg.issues.append(ReadIssue(path, f"malformed record skipped ({exc})", offset=offset))
                lg.malformed.add(offset)
        if pending.size >= CHUNK_BYTES:
            _flush(lg, pending)
            pending = Pending()
    _flush(lg, pending)
    if lg.exit_code:
        lg.issues.append(ReadIssue(path, f"the run exited with code {lg.exit_code}", level="warning"))
    elif not saw_exit and lg.n_rows:
        lg.issues.append(
            ReadIssue(path, "no exit record: the run crashed or was still running when the file was copied", level="warning")
        )
    return _build(lg)


def _read_run_record(lg: Log, body: bytes) -> None:
    """``RunRecord``: initial config (field 4) and identity (id, project, name, group, tags)."""
    names = {1: "run_id", 3: "project", 6: "group", 7: "job_type", 8: "display_name", 10: "tags"}
    lg.run_info.update(str_fields(body, names))
    for fno, wire, sub in fields(body):
        if fno == 4 and wire == 2:
            for op, key, value in config_items(sub):
                set_config(lg.config, op, key, value)


def _only_history(payload: bytes) -> memoryview | None:
    """The history body of a record (``payload`` starts with its tag) that holds nothing else:
    what wandb writes for each ``log`` call."""
    n = len(payload)
    if n > 3 and payload[1] >= 0x80 and payload[2] < 0x80:  # the usual two-byte length, inline
        length, pos = (payload[1] & 0x7F) | payload[2] << 7, 3
    else:
        try:
            length, pos = varint(payload, 1)
        except Malformed:
            return None
    return memoryview(payload)[pos:] if pos + length == n else None


def _flush(lg: Log, pending: Pending) -> None:
    """Decode a chunk of history rows and append its numeric points and per-row step/time."""
    if not pending.bodies:
        return
    chunk = decode_rows(lg, pending)
    n_rows = len(chunk.offsets)
    lg.n_rows += n_rows
    if not n_rows:
        return
    keys, local, vals, is_num = chunk.keys, chunk.item_rows, chunk.values, chunk.is_num
    rows = local + (lg.n_rows - n_rows)

    steps = np.full(n_rows, np.nan)
    walls = np.full(n_rows, np.nan)
    for name, target in ((_STEP_KEY, steps), (_TIME_KEY, walls)):
        kid = lg.key_ids.get(name.encode())
        if kid is not None:
            sel = is_num & (keys == kid)
            target[local[sel]] = vals[sel]
    found = np.isfinite(steps)
    row_steps = np.where(found, np.clip(steps, -(2.0**62), 2.0**62), 0).astype(np.int64)
    for i in np.flatnonzero(~found).tolist():  # rare: rows without an _step item
        stepnum = chunk.stepnums[i]
        prev = row_steps[i - 1] if i else lg.last_step
        row_steps[i] = stepnum if stepnum is not None else prev + 1  # else: the next log call
    lg.last_step = int(row_steps[-1])

    extra: list[tuple[int, int, float]] = []
    bad_rows: list[int] = []
    media = lg.media_prefixes()
    for i, value in chunk.others.items():  # in file order
        if value is NOT_JSON:
            bad_rows.append(int(local[i]))
            continue
        _non_scalar(lg, int(keys[i]), int(rows[i]), value, media, extra)
    if bad_rows:
        lg.issues.append(
            ReadIssue(lg.path, f"{len(bad_rows)} value(s) that are not JSON skipped", offset=chunk.offsets[bad_rows[0]])
        )
    keep = np.flatnonzero(is_num)
    num_keys, num_rows, num_vals = keys[keep], rows[keep], vals[keep]
    if extra:
        ek, er, ev = zip(*extra)
        num_keys = np.concatenate([num_keys, np.asarray(ek, dtype=np.int64)])
        num_rows = np.concatenate([num_rows, np.asarray(er, dtype=np.int64)])
        num_vals = np.concatenate([num_vals, np.asarray(ev, dtype=np.float64)])
    lg.num_keys.append(num_keys)
    lg.num_rows.append(num_rows)
    lg.num_vals.append(num_vals)
    lg.row_steps.append(row_steps)
    lg.row_walls.append(walls)


def float_or_inf(v: Any) -> float:
    try:
        return float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf


def _non_scalar(lg: Log, kid: int, row: int, value: Any, media: tuple[str, ...], extra: list, depth: int = 0) -> None:
    """Route a value that is not a number: text sample, table reference, nested metrics, or skip."""
    key = lg.key_names[kid]
    if key.startswith("_") or depth > _MAX_NESTING:
        return
    prefix = next((p for p in media if key.startswith(p)), None)
    if prefix is not None:
        # wandb-core writes a media dict as separate items: <key>/_type, <key>/path, ...
        if key == prefix + "path" and isinstance(value, str) and value.endswith(".table.json"):
            lg.tables.append((prefix[:-1], row, value))
        return
    if isinstance(value, str):
        lg.texts.append((key, row, value))
    elif isinstance(value, dict):
        if "_type" in value:  # legacy backend: the whole media dict in one value_json
            if value.get("_type") in _TABLE_TYPES and isinstance(value.get("path"), str):
                lg.tables.append((key, row, value["path"]))
            return
        for sub, v in value.items():
            sub_id = lg.key_id(f"{key}/{sub}".encode())
            if type(v) is float or type(v) is int:
                extra.append((sub_id, row, float_or_inf(v)))
            else:
                _non_scalar(lg, sub_id, row, v, media, extra, depth + 1)
    # lists (histogram bins, ...), booleans and null are not scalar metrics


def _step_metric_of(lg: Log, key: str) -> str | None:
    """The x-axis W&B would use for ``key``: the last exact ``define_metric``, else the last glob."""
    exact = [sm for name, _, sm in lg.metric_defs if name == key]
    if exact:
        sm = exact[-1]
    else:
        globs = [sm for _, glob, sm in lg.metric_defs if glob and fnmatch.fnmatchcase(key, glob)]
        sm = globs[-1] if globs else ""
    return sm if sm and sm != key else None


def _build(lg: Log) -> Decoded:
    """Group the decoded points into one RawSeries per key with resolved steps."""
    raw = RawRun(config=lg.config, issues=lg.issues)
    if lg.run_info or lg.exit_code is not None:
        info = dict(lg.run_info)
        if lg.exit_code is not None:
            info["exit_code"] = lg.exit_code
        raw.config["wandb_run"] = info
    keys = np.concatenate(lg.num_keys) if lg.num_keys else np.empty(0, np.int64)
    rows = np.concatenate(lg.num_rows) if lg.num_rows else np.empty(0, np.int64)
    vals = np.concatenate(lg.num_vals) if lg.num_vals else np.empty(0)
    row_steps = np.concatenate(lg.row_steps) if lg.row_steps else np.empty(0, np.int64)
    row_walls = np.concatenate(lg.row_walls) if lg.row_walls else np.empty(0)
    resolver = _StepResolver(lg, keys, rows, vals, row_steps)

    media = lg.media_prefixes()
    # a declared step metric is the x-axis of the keys that name it, as in W&B's own charts, not a
    # metric: kept as a series on ``_step``, a CS336 loop's ``grpo_step`` (0-659, one per
    # ``_step``) stretched a run whose metrics span steps 1-50 to step 659
    axes = {sm for _, _, sm in lg.metric_defs if sm}
    # stable: file order kept within a key; on 16-bit ids numpy's stable sort is a radix sort
    order = np.argsort(keys.astype(np.uint16) if len(lg.key_names) <= 1 << 16 else keys, kind="stable")
    bounds = np.flatnonzero(np.diff(keys[order])) + 1
    for idx in np.split(order, bounds) if len(order) else []:
        name = lg.key_names[int(keys[idx[0]])]
        if name.startswith("_") or name in axes or any(name.startswith(p) for p in media):
            continue
        r = rows[idx]
        series = RawSeries(tag=name, steps=resolver.steps(name, r), values=vals[idx], wall_time=row_walls[r], source=lg.path)
        (raw.eval_series if is_eval_key(name) else raw.series).append(series)

    by_key: dict[str, list[tuple[int, str]]] = {}
    for name, row, text in lg.texts:
        by_key.setdefault(name, []).append((row, text))
    for name, items in by_key.items():
        steps = resolver.steps(name, np.array([row for row, _ in items], dtype=np.int64))
        raw.texts += [TextSample(step=int(s), tag=name, text=t, source=lg.path) for s, (_, t) in zip(steps, items)]
    raw.texts.sort(key=lambda t: t.step)  # stable: file order within a step
    refs = [TableRef(key=name, path=rel, step=resolver.step(name, row)) for name, row, rel in lg.tables]
    raw.restarts = sorted(set(_backward_steps(row_steps) + resolver.restarts))
    raw.issues += resolver.issues
    return Decoded(raw, refs, int(row_steps.max()) if len(row_steps) else None)


class _StepResolver:
    """Steps of a key's points: the row's ``_step``, or the value of its ``define_metric`` step metric."""

    def __init__(self, lg: Log, keys: np.ndarray, rows: np.ndarray, vals: np.ndarray, row_steps: np.ndarray):
        self.lg, self.keys, self.rows, self.vals, self.row_steps = lg, keys, rows, vals, row_steps
        self._axes: dict[str, np.ndarray | None] = {}
        self._metric_of: dict[str, str | None] = {}
        self._fallback: set[str] = set()  # keys whose step metric could not be used
        self.issues: list[ReadIssue] = []
        self.restarts: list[int] = []

    def _axis(self, metric: str) -> np.ndarray | None:
        """Value of ``metric`` at every row, carried forward from the last row that logged it
        (W&B's handler fills a missing step metric the same way)."""
        if metric not in self._axes:
            kid = self.lg.key_ids.get(metric.encode())
            axis = None
            if kid is not None:
                sel = self.keys == kid
                at = np.full(len(self.row_steps), np.nan)
                at[self.rows[sel]] = self.vals[sel]
                logged = np.isfinite(at)
                self.restarts += _backward_steps(at[logged].astype(np.int64))
                last = np.maximum.accumulate(np.where(logged, np.arange(len(at)), -1))
                axis = np.where(last >= 0, at[np.maximum(last, 0)], np.nan)
            self._axes[metric] = axis
        return self._axes[metric]

    def steps(self, key: str, rows: np.ndarray) -> np.ndarray:
        base = self.row_steps[rows]
        if key not in self._metric_of:
            self._metric_of[key] = _step_metric_of(self.lg, key) if self.lg.metric_defs else None
        metric = self._metric_of[key]
        if metric is None or key in self._fallback:
            return base
        axis = self._axis(metric)
        if axis is None:
            return base
        x = axis[rows]
        if not (np.isfinite(x).all() and (x == np.round(x)).all() and (np.abs(x) < 2.0**62).all()):
            # Mixing two step domains in one series would invent jumps: keep _step for the
            # whole key and say why.
            self._fallback.add(key)
            self.issues.append(
                ReadIssue(
                    self.lg.path,
                    f"{key!r}: step metric {metric!r} missing or not an integer on some rows; _step used instead",
                    level="warning",
                )
            )
            return base
        return x.astype(np.int64)

    def step(self, key: str, row: int) -> int:
        return int(self.steps(key, np.array([row]))[0])


def _backward_steps(steps: np.ndarray) -> list[int]:
    """Steps at which a step sequence goes back (a restart within one log)."""
    if len(steps) < 2:
        return []
    back = np.flatnonzero(np.diff(steps) < 0) + 1
    return [int(s) for s in steps[back]]
