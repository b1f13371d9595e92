"""TensorBoard event files (``events.out.tfevents.*``): every scalar, losslessly and fast.

Format: /work/shared/reference/formats.md section 10. A file is a TFRecord stream (see
:mod:`.tfrecord`) of ``Event`` protobufs (tensorboard/compat/proto/event.proto), decoded by hand
with :mod:`.protowire` (no TensorFlow, no protobuf runtime):

* ``Event``: wall_time (1, double), step (2, int64), file_version (3), graph_def (4, skipped),
  summary (5), log_message (6), session_log (7), tagged_run_metadata (8), meta_graph_def (9,
  skipped; TF1 writers emit it, corpus ``tf1-a2c-minigrid-stagnant``), source_metadata (10).
* ``Summary.Value``: tag (1), simple_value (2, float32), image/histo/audio (skipped), tensor (8),
  metadata (9: plugin_data.plugin_name and content).

What a run gets: scalars from ``simple_value`` (torch ``add_scalar``, tensorboardX, TF1) and from
scalar ``tensor`` values whose tag uses the ``scalars`` plugin (TF2, torch ``new_style=True``,
float or double), all in file order, float32 widened exactly, NaN/Inf kept, nothing sampled
(unlike ``EventAccumulator``'s default ``size_guidance``). Text summaries become
``RawRun.texts``, except the HF Trainer ``args``/``model_config`` JSON and the CleanRL
``hyperparameters`` table, which become ``RawRun.config`` together with the hparams plugin's
``session_start_info``. Restarts (a tag's step going back, or a ``SessionLog.START`` after data)
are reported, never purged (``EventAccumulator(purge_orphaned_data=True)`` drops data there).

Speed: a million scalars must read >= 100x faster than tbparse (DESIGN.md budgets; a plain
Python loop over the records already takes seconds). Records are framed in bulk
(:func:`.tfrecord.frame_fast`); records of equal length are gathered into one (N, L) byte matrix,
their data CRCs verified together with one C CRC (:func:`.tfrecord.crcs_ok_in_bulk`, with a
per-record fallback that names the damaged ones), and decoded with numpy through a
*template*: the first row is decoded field by field, which says where the wall_time, step,
tag and value bytes sit; every row whose other bytes equal the template's has the same
structure, so its payload can be read as columns of the matrix. Rows that match no template,
and every non-scalar record, go through the per-record reference decoder :func:`decode_event`.
:func:`read_reference` reads a whole file that plain way; the tests check that both give
identical runs on random and damaged files.
"""

from __future__ import annotations

import json
import logging
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np

from ..errors import LogReadError
from ..frame import RawRun, RawSeries, ReadIssue, TextSample
from . import filebytes, tfrecord
from .base import HEAD_BYTES
from .storage import as_path, open_binary, size_of
from .protowire import (
    WIRE_I32,
    WIRE_I64,
    WIRE_LEN,
    WIRE_VARINT,
    ProtoDecodeError,
    Value,
    as_double,
    as_float,
    as_int64,
    as_str,
    as_varint,
    iter_fields,
    iter_fields_at,
    packed_doubles,
    packed_floats,
    packed_varints,
)

NAME = "tensorboard"
FILE_PREFIX = "events.out.tfevents."

log = logging.getLogger(__name__)

_WALL_TIME_KEY = 0x09  # Event.wall_time: field 1, wire type I64; every known writer emits it first
_SESSION_START = 1  # SessionLog.SessionStatus.START
_SCALAR_PLUGINS = ("", "scalars")  # a numeric scalar tensor under another plugin is not a metric
_MAX_ISSUES_PER_KIND = 20  # per-record problems listed one by one before being summarised
_MAX_NESTING = 32  # google.protobuf.Value nesting accepted in hparams (untrusted input)

# TensorProto dtypes (tensorboard/compat/proto/types.proto) -> numpy dtype of tensor_content
_NUMERIC_DTYPES = {
    1: "<f4",  # DT_FLOAT
    2: "<f8",  # DT_DOUBLE
    3: "<i4",  # DT_INT32
    4: "u1",  # DT_UINT8
    5: "<i2",  # DT_INT16
    6: "i1",  # DT_INT8
    9: "<i8",  # DT_INT64
    10: "?",  # DT_BOOL
    14: "<u2",  # DT_BFLOAT16 (bits; widened below)
    17: "<u2",  # DT_UINT16
    19: "<f2",  # DT_HALF
    22: "<u4",  # DT_UINT32
    23: "<u8",  # DT_UINT64
}
_DT_STRING = 7
_DT_BFLOAT16 = 14
_DT_HALF = 19


# -- the reference, per-record decoder ------------------------------------------------------------


@dataclass
class SummaryValue:
    """The parts of one ``Summary.Value`` the analyzer uses."""

    tag: str
    plugin: str | None = None  # plugin_data.plugin_name, None when the value has no metadata
    plugin_content: bytes = b""
    scalar: float | None = None  # simple_value, or the element of a one-element numeric tensor
    from_tensor: bool = False
    strings: list[str] | None = None  # elements of a DT_STRING tensor (text summaries)


@dataclass
class Event:
    wall_time: float = 0.0
    step: int = 0
    file_version: str | None = None
    values: list[SummaryValue] = field(default_factory=list)
    session_status: int | None = None


def decode_event(data: bytes | memoryview) -> Event:
    """Decode one ``Event`` record, field by field. Raises ProtoDecodeError on malformed bytes.

    Repeated non-repeated fields follow protobuf semantics: the last one wins.
    """
    ev = Event()
    for number, wire, value in iter_fields(data):
        if number == 1:
            _expect(wire, WIRE_I64, "Event.wall_time")
            ev.wall_time = as_double(value)
        elif number == 2:
            _expect(wire, WIRE_VARINT, "Event.step")
            ev.step = as_int64(value)
        elif number == 3:
            _expect(wire, WIRE_LEN, "Event.file_version")
            ev.file_version = as_str(value)
        elif number == 5:
            _expect(wire, WIRE_LEN, "Event.summary")
            for n2, w2, v2 in iter_fields(value):
                if n2 == 1:
                    _expect(w2, WIRE_LEN, "Summary.value")
                    ev.values.append(_decode_value(v2))
        elif number == 7:
            _expect(wire, WIRE_LEN, "Event.session_log")
            ev.session_status = 0
            for n2, w2, v2 in iter_fields(value):
                if n2 == 1 and w2 == WIRE_VARINT:
                    ev.session_status = as_varint(v2)
        # graph_def (4), log_message (6), tagged_run_metadata (8), meta_graph_def (9),
        # source_metadata (10) and unknown fields carry no metrics: skipped.
    return ev


def _expect(wire: int, want: int, what: str) -> None:
    if wire != want:
        raise ProtoDecodeError(f"{what} has wire type {wire}, expected {want}", 0)


def _decode_value(buf: Value) -> SummaryValue:
    tag = node_name = ""
    sv = SummaryValue(tag="")
    for number, wire, value in iter_fields(buf):
        if number == 1:
            _expect(wire, WIRE_LEN, "Summary.Value.tag")
            tag = as_str(value)
        elif number == 7 and wire == WIRE_LEN:
            node_name = as_str(value)  # TF1 legacy name, used when the tag is empty
        elif number == 2:
            _expect(wire, WIRE_I32, "Summary.Value.simple_value")
            sv.scalar, sv.from_tensor, sv.strings = as_float(value), False, None
        elif number == 8:
            _expect(wire, WIRE_LEN, "Summary.Value.tensor")
            sv.scalar, sv.strings = _decode_tensor(value)
            sv.from_tensor = True
        elif number in (3, 4, 5, 6):  # histogram, image, histo, audio: the value oneof moves on
            sv.scalar, sv.from_tensor, sv.strings = None, False, None
        elif number == 9:
            _expect(wire, WIRE_LEN, "Summary.Value.metadata")
            sv.plugin, sv.plugin_content = _decode_metadata(value)
    sv.tag = tag or node_name
    return sv


def _decode_metadata(buf: Value) -> tuple[str, bytes]:
    name, content = "", b""
    for number, wire, value in iter_fields(buf):
        if number == 1 and wire == WIRE_LEN:  # plugin_data
            for n2, w2, v2 in iter_fields(value):
                if n2 == 1 and w2 == WIRE_LEN:
                    name = as_str(v2)
                elif n2 == 2 and w2 == WIRE_LEN:
                    content = bytes(v2)
    return name, content


def _decode_tensor(buf: Value) -> tuple[float | None, list[str] | None]:
    """``(scalar, strings)`` of a TensorProto: the value of a one-element numeric tensor, or
    the elements of a string tensor."""
    dtype = 0
    elements = 1
    content = b""
    vals: dict[int, list] = {}
    for number, wire, value in iter_fields(buf):
        if number == 1 and wire == WIRE_VARINT:
            dtype = as_varint(value)
        elif number == 2 and wire == WIRE_LEN:
            elements = _shape_elements(value)
        elif number == 4 and wire == WIRE_LEN:
            content = bytes(value)
        elif number == 8 and wire == WIRE_LEN:
            vals.setdefault(8, []).append(as_str(value))
        elif number in (5, 6, 7, 10, 11, 13, 16, 17):
            vals.setdefault(number, []).extend(_repeated_numbers(number, wire, value))
    if dtype == _DT_STRING:
        return None, vals.get(8, [])
    if dtype not in _NUMERIC_DTYPES or elements != 1:
        return None, None
    if content:
        if len(content) != np.dtype(_NUMERIC_DTYPES[dtype]).itemsize:
            return None, None  # not exactly one element
        return _widen(dtype, np.frombuffer(content, dtype=_NUMERIC_DTYPES[dtype])[0].item()), None
    # typed fields: float_val (5), double_val (6), int_val (7: int8..int32, uint8/16),
    # int64_val (10), bool_val (11), half_val (13: half and bfloat16 bits), uint32 (16), uint64 (17)
    field_for = {1: 5, 2: 6, 9: 10, 10: 11, 14: 13, 19: 13, 22: 16, 23: 17}.get(dtype, 7)
    got = vals.get(field_for, [])
    if len(got) != 1:
        return None, None
    return _widen(dtype, got[0]), None


def _repeated_numbers(number: int, wire: int, value: int | memoryview) -> list:
    """Elements of a (packed or unpacked) repeated numeric TensorProto field."""
    if (number, wire) == (5, WIRE_I32):  # float_val
        return [as_float(value)]
    if (number, wire) == (6, WIRE_I64):  # double_val
        return [as_double(value)]
    if number not in (5, 6) and wire == WIRE_VARINT:
        return [value]
    if wire != WIRE_LEN:
        raise ProtoDecodeError(f"TensorProto field {number} has wire type {wire}", 0)
    return packed_floats(value) if number == 5 else packed_doubles(value) if number == 6 else packed_varints(value)


def _widen(dtype: int, raw: float | int | bool) -> float:
    """One tensor element as a Python float (exact for every dtype but int64/uint64 > 2**53)."""
    if dtype in (1, 2):
        return float(raw)
    if dtype == _DT_HALF:  # half_val holds the 16 bits in an int32 varint
        return float(np.array([int(raw) & 0xFFFF], dtype=np.uint16).view(np.float16)[0]) if isinstance(raw, int) else float(raw)
    if dtype == _DT_BFLOAT16:  # the top 16 bits of a float32
        return float(np.array([(int(raw) & 0xFFFF) << 16], dtype=np.uint32).view(np.float32)[0])
    if dtype in (3, 5, 6, 9) and isinstance(raw, int):
        return float(as_int64(raw))  # int_val/int64_val carry two's complement varints
    return float(raw)


def _shape_elements(buf: Value) -> int:
    """Number of elements of a TensorShapeProto (an empty shape is a scalar: 1)."""
    n = 1
    for number, wire, value in iter_fields(buf):
        if number == 2 and wire == WIRE_LEN:  # dim { size (1) }
            size = 0
            for n2, w2, v2 in iter_fields(value):
                if n2 == 1 and w2 == WIRE_VARINT:
                    size = as_int64(v2)
            n *= size
        elif number == 3 and wire == WIRE_VARINT and value:  # unknown_rank
            return -1
    return n


# -- templates: where the payload bytes of a simple scalar record are ------------------------------


@dataclass(frozen=True)
class _Slot:
    """One scalar of a template record: its tag bytes and its value bytes."""

    tag_start: int
    tag_end: int
    value_at: int
    value_dtype: str  # "<f4" or "<f8"
    tensor: bool
    plugin: str | None


@dataclass
class _Template:
    """The layout of a record holding only scalars; see :func:`_parse_template`."""

    wall_at: int | None
    step_at: int | None
    step_len: int
    slots: list[_Slot]
    free: np.ndarray  # bool per byte: payload or tag bytes, which may differ between rows

    def step_varint_ok(self, rows: np.ndarray) -> np.ndarray:
        """Rows whose step bytes form a varint of exactly the template's length."""
        ok = np.ones(len(rows), dtype=bool)
        if self.step_at is None:
            return ok
        cols = rows[:, self.step_at : self.step_at + self.step_len]
        ok &= (cols[:, -1] & 0x80) == 0
        for k in range(self.step_len - 1):
            ok &= (cols[:, k] & 0x80) != 0
        return ok


class _NotTemplatable(Exception):
    pass


def _parse_template(data: bytes) -> _Template | None:
    """Layout of a record if it is an Event with wall_time/step and a summary of scalar values
    only, each written in a way whose position cannot move (fixed-size value fields); else None.

    Anything unusual (repeated or unknown fields, a oneof set twice, non-scalar tensors) gives
    None, so such records always take the reference decoder.
    """
    try:
        return _parse_template_or_raise(data)
    except (_NotTemplatable, ProtoDecodeError):
        return None


def _parse_template_or_raise(data: bytes) -> _Template:
    wall_at = step_at = None
    step_len = 0
    slots: list[_Slot] = []
    free = np.zeros(len(data), dtype=bool)
    seen: set[int] = set()
    for f in iter_fields_at(data):
        if f.number in seen:
            raise _NotTemplatable
        seen.add(f.number)
        if f.number == 1 and f.wire_type == WIRE_I64:
            wall_at = f.value_start
        elif f.number == 2 and f.wire_type == WIRE_VARINT:
            step_at, step_len = f.value_start, f.value_end - f.value_start
        elif f.number == 5 and f.wire_type == WIRE_LEN:
            for v in iter_fields_at(data, f.value_start, f.value_end):
                if v.number != 1 or v.wire_type != WIRE_LEN:
                    raise _NotTemplatable
                slots.append(_parse_slot(data, v.value_start, v.value_end))
        else:
            raise _NotTemplatable
        free[f.value_start : f.value_end] = f.number in (1, 2)
    if not slots:
        raise _NotTemplatable
    for s in slots:
        free[s.tag_start : s.tag_end] = True
        free[s.value_at : s.value_at + (4 if s.value_dtype == "<f4" else 8)] = True
    return _Template(wall_at, step_at, step_len, slots, free)


def _parse_slot(data: bytes, start: int, end: int) -> _Slot:
    tag_span = value = None
    plugin: str | None = None
    seen: set[int] = set()
    for f in iter_fields_at(data, start, end):
        if f.number in seen:
            raise _NotTemplatable
        seen.add(f.number)
        if f.number == 1 and f.wire_type == WIRE_LEN:
            tag_span = (f.value_start, f.value_end)
        elif f.number == 2 and f.wire_type == WIRE_I32:
            value = (f.value_start, "<f4", False)
        elif f.number == 8 and f.wire_type == WIRE_LEN:
            at, dtype = _scalar_tensor_layout(data, f.value_start, f.value_end)
            value = (at, dtype, True)
        elif f.number == 9 and f.wire_type == WIRE_LEN:
            plugin = _decode_metadata(f.value)[0]
        else:
            raise _NotTemplatable
    if tag_span is None or value is None or (2 in seen and 8 in seen):
        raise _NotTemplatable
    return _Slot(tag_span[0], tag_span[1], value[0], value[1], value[2], plugin)


def _scalar_tensor_layout(data: bytes, start: int, end: int) -> tuple[int, str]:
    """Position and dtype of the single float/double of a scalar tensor."""
    dtype = None
    value_at = None
    seen: set[int] = set()
    for f in iter_fields_at(data, start, end):
        if f.number in seen:
            raise _NotTemplatable
        seen.add(f.number)
        if f.number == 1 and f.wire_type == WIRE_VARINT:
            dtype = {1: "<f4", 2: "<f8"}.get(as_varint(f.value))
        elif f.number == 2 and f.wire_type == WIRE_LEN:
            if _shape_elements(f.value) != 1:
                raise _NotTemplatable
        elif (f.number, f.wire_type, f.value_end - f.value_start) in (
            (5, WIRE_LEN, 4),  # packed float_val with one element
            (5, WIRE_I32, 4),
            (6, WIRE_LEN, 8),  # packed double_val
            (6, WIRE_I64, 8),
            (4, WIRE_LEN, 4),  # tensor_content
            (4, WIRE_LEN, 8),
        ):
            value_at = (f.value_start, f.number, f.value_end - f.value_start)
        else:
            raise _NotTemplatable
    if dtype is None or value_at is None:
        raise _NotTemplatable
    at, number, size = value_at
    want = {"<f4": (5, 4), "<f8": (6, 8)}[dtype]
    if (number, size) != want and (number, size) != (4, want[1]):
        raise _NotTemplatable
    return at, dtype


# -- collecting a run -----------------------------------------------------------------------------


_SLOT_BITS = 24  # a point's file position is (record index << _SLOT_BITS) | index of its value in the event


@dataclass
class _Piece:
    pos: np.ndarray  # file position of each point (see _SLOT_BITS), increasing within a piece
    step: np.ndarray
    value: np.ndarray
    wall: np.ndarray


class _Collector:
    """Gathers points, texts, config and issues of one file, then builds its RawRun."""

    def __init__(self, path: str, starts: np.ndarray):
        self.path = path
        self.starts = starts  # record index -> byte offset, for messages
        # per (tag, from a tensor?): tensor values count only if the tag is a scalars-plugin tag
        self.pieces: dict[tuple[str, bool], list[_Piece]] = {}
        self.foreign_plugin_tags: set[str] = set()  # tags declared under a non-scalar plugin
        self.pending: dict[tuple[str, bool], tuple[list[int], list[int], list[float], list[float]]] = {}
        self.texts: list[tuple[int, TextSample]] = []
        self.config: dict = {}
        self.issues: list[ReadIssue] = []
        self.session_starts: list[tuple[int, int]] = []  # (record index, step)
        self.file_version: str | None = None
        self.events = 0

    # fast path
    def add_points(self, tag: str, pos: np.ndarray, step: np.ndarray, value: np.ndarray, wall: np.ndarray, tensor: bool, plugin: str | None) -> None:
        self._note_plugin(tag, plugin)
        self.pieces.setdefault((tag, tensor), []).append(_Piece(pos, step, value, wall))

    def _note_plugin(self, tag: str, plugin: str | None) -> None:
        if plugin is not None and plugin not in _SCALAR_PLUGINS:
            self.foreign_plugin_tags.add(tag)

    # reference path
    def add_event(self, rec: int, ev: Event) -> None:
        self.events += 1
        if ev.file_version is not None and self.file_version is None:
            self.file_version = ev.file_version
        if ev.session_status == _SESSION_START:
            self.session_starts.append((rec, ev.step))
        for slot, v in enumerate(ev.values):
            self._note_plugin(v.tag, v.plugin)
            if v.strings is not None:
                if v.plugin in (None, "text"):
                    self._add_text(rec, ev.step, v.tag, "\n".join(v.strings))
            elif v.plugin == "hparams":
                self._add_hparams(rec, v)
            elif v.scalar is not None:
                positions, steps, values, walls = self.pending.setdefault((v.tag, v.from_tensor), ([], [], [], []))
                positions.append((rec << _SLOT_BITS) | min(slot, (1 << _SLOT_BITS) - 1))
                steps.append(ev.step)
                values.append(v.scalar)
                walls.append(ev.wall_time)

    def _add_text(self, rec: int, step: int, tag: str, text: str) -> None:
        base = tag[: -len("/text_summary")] if tag.endswith("/text_summary") else tag
        parsed = _config_from_text(base, text)
        if parsed is not None:
            for k, v in parsed.items():
                self.config.setdefault(k, v)
            return
        for sample in _text_samples(step, tag, text, self.path):
            self.texts.append((rec, sample))

    def _add_hparams(self, rec: int, v: SummaryValue) -> None:
        try:
            hparams = hparams_from_plugin_content(v.plugin_content)
        except ProtoDecodeError as exc:
            self.issue(rec, f"hparams summary {v.tag!r} could not be decoded ({exc}); skipped", "warning")
            return
        for k, val in hparams.items():
            self.config.setdefault(k, val)

    def issue(self, rec: int | None, message: str, level: str = "error", offset: int | None = None) -> None:
        if offset is None and rec is not None:
            offset = int(self.starts[rec])
        self.issues.append(ReadIssue(self.path, message, offset, level))

    # the run
    def build(self, framing_issues: list[ReadIssue]) -> RawRun:
        for key, (pos, step, value, wall) in self.pending.items():
            self.pieces.setdefault(key, []).append(
                _Piece(np.array(pos, np.int64), np.array(step, np.int64), np.array(value, np.float64), np.array(wall, np.float64))
            )
        by_tag: dict[str, list[_Piece]] = {}
        for (tag, tensor), pieces in self.pieces.items():
            if tensor and tag in self.foreign_plugin_tags:
                # e.g. a one-element tensor of the hparams or pr_curves plugin: not a metric
                log.debug("%s: tensor values of tag %r belong to another plugin; skipped", self.path, tag)
                continue
            by_tag.setdefault(tag, []).extend(pieces)
        merged: list[tuple[int, str, _Piece]] = []
        for tag, pieces in by_tag.items():
            piece = _merge_pieces(pieces)
            if len(piece.pos):
                merged.append((int(piece.pos[0]), tag, piece))
        merged.sort(key=lambda t: t[0])
        run = RawRun()
        run.series = [RawSeries(tag=tag, steps=p.step, values=p.value, wall_time=p.wall, source=self.path) for _, tag, p in merged]
        run.config = self.config
        run.texts = [s for _, s in sorted(self.texts, key=lambda t: t[0])]
        run.restarts = self._restarts([(tag, p) for _, tag, p in merged])
        run.issues = _cap_issues(framing_issues + self.issues)
        if self.file_version is None:
            run.issues.append(ReadIssue(self.path, "no file_version event: not written by a TensorBoard writer, or its start is missing", None, "warning"))
        if not run.series:
            run.issues.append(ReadIssue(self.path, f"no scalar found ({self.events} event(s) read)", None, "warning"))
        return run

    def _restarts(self, series: list[tuple[str, _Piece]]) -> list[int]:
        """Steps at which the log goes back (per tag), plus SessionLog.START after data."""
        found: dict[int, tuple[int, int | None]] = {}  # new step -> (record index, previous step)
        first_rec = None
        if series:
            # all tags in one pass (a numpy call per tag made 100,000 one-point tags cost seconds)
            step = np.concatenate([p.step for _, p in series])
            pos = np.concatenate([p.pos for _, p in series])
            firsts = np.cumsum([0] + [len(p.step) for _, p in series[:-1]])
            back = np.zeros(len(step), dtype=bool)
            back[1:] = step[1:] < step[:-1]
            back[firsts] = False  # a tag's first point does not go back from the previous tag's last
            for i in np.flatnonzero(back).tolist():
                new, rec = int(step[i]), int(pos[i]) >> _SLOT_BITS
                if new not in found or rec < found[new][0]:
                    found[new] = (rec, int(step[i - 1]))
            first_rec = int(pos[firsts].min()) >> _SLOT_BITS
        for rec, start_step in self.session_starts:
            if first_rec is not None and rec > first_rec and (start_step not in found or rec < found[start_step][0]):
                found[start_step] = (rec, None)
        ordered = sorted(found.items(), key=lambda kv: kv[1][0])
        for new, (rec, prev) in ordered[:_MAX_ISSUES_PER_KIND]:
            if prev is None:
                why = f"SessionLog.START at step {new} after logged data"
            else:
                why = f"steps go back from {prev} to {new}"
            self.issue(rec, f"{why}: the run was restarted or resumed into the same file; every point is kept (TensorBoard would purge the orphaned ones)", "info")
        if len(ordered) > _MAX_ISSUES_PER_KIND:
            self.issue(None, f"{len(ordered) - _MAX_ISSUES_PER_KIND} more restart(s) not listed", "info")
        return [new for new, _ in ordered]


def _merge_pieces(pieces: list[_Piece]) -> _Piece:
    """Join the pieces of one tag in file order (each piece is already in file order)."""
    if len(pieces) == 1:
        p = pieces[0]
        return _Piece(np.ascontiguousarray(p.pos), np.ascontiguousarray(p.step), np.ascontiguousarray(p.value), np.ascontiguousarray(p.wall))
    pieces = sorted(pieces, key=lambda p: int(p.pos[0]) if len(p.pos) else -1)
    cat = _Piece(*(np.concatenate([getattr(p, f) for p in pieces]) for f in ("pos", "step", "value", "wall")))
    if len(cat.pos) > 1 and np.any(cat.pos[1:] < cat.pos[:-1]):
        order = np.argsort(cat.pos, kind="stable")
        cat = _Piece(cat.pos[order], cat.step[order], cat.value[order], cat.wall[order])
    return cat


def _cap_issues(issues: list[ReadIssue]) -> list[ReadIssue]:
    """Sort by offset and keep the first few of each message kind, summarising the rest."""
    issues = sorted(issues, key=lambda i: (i.offset is None, i.offset or 0))
    kept: list[ReadIssue] = []
    dropped: dict[tuple[str, str], int] = {}
    counts: dict[tuple[str, str], int] = {}
    for i in issues:
        kind = (i.level, re.sub(r"\d+", "#", i.message))
        counts[kind] = counts.get(kind, 0) + 1
        if counts[kind] <= _MAX_ISSUES_PER_KIND:
            kept.append(i)
        else:
            dropped[kind] = dropped.get(kind, 0) + 1
    for (level, _), n in dropped.items():
        kept.append(ReadIssue(issues[0].path, f"{n} more problem(s) like the ones above not listed", None, level))
    return kept


# -- config from text and hparams -------------------------------------------------------------------

_TABLE_ROW = re.compile(r"^\s*\|(.*)\|\s*$")


def _config_from_text(base_tag: str, text: str) -> dict | None:
    """Config carried by a text summary, or None when the text is not a config.

    HF Trainer (formats.md 1e): ``args`` and ``model_config`` hold JSON; CleanRL (section 6):
    ``hyperparameters`` holds a ``|param|value|`` markdown table.
    """
    name = base_tag.rsplit("/", 1)[-1]
    if name in ("args", "model_config"):
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError):  # RecursionError: absurdly nested JSON
            return None
        if not isinstance(obj, dict):
            return None
        return obj if name == "args" else {"model_config": obj}
    rows = _markdown_table(text)
    if rows and [c.lower() for c in rows[0]] == ["param", "value"]:
        return {r[0]: _literal(r[1]) for r in rows[1:] if len(r) == 2 and r[0]}
    return None


def _markdown_table(text: str) -> list[list[str]] | None:
    """Cells of a markdown table (header first, separator row dropped), or None."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if len(lines) < 2 or not all(_TABLE_ROW.match(ln) for ln in lines):
        return None
    rows = [[c.strip() for c in _TABLE_ROW.match(ln).group(1).split("|")] for ln in lines]  # type: ignore[union-attr]
    if not all(set(c) <= set("-: ") for c in rows[1]):
        return None
    return [rows[0]] + rows[2:]


def _literal(s: str) -> object:
    """A config value written with ``str()``: numbers, booleans, None, JSON lists; else the text."""
    if s in ("True", "False"):
        return s == "True"
    if s == "None":
        return None
    for conv in (int, float):
        try:
            return conv(s)
        except ValueError:
            pass
    if s[:1] in "[{":
        try:
            return json.loads(s)
        except (ValueError, RecursionError):
            pass
    return s


def _text_samples(step: int, tag: str, text: str, path: str) -> list[TextSample]:
    """A text summary as samples: one per row of a ``| prompt | response | reward |`` table
    (what the reference loop logs), else the whole text."""
    rows = _markdown_table(text)
    if rows:
        header = [c.lower() for c in rows[0]]
        if "response" in header:
            idx = {name: header.index(name) for name in ("prompt", "response", "reward") if name in header}
            out = []
            for r in rows[1:]:
                if len(r) != len(header):
                    break  # a ragged table: keep the text whole (the else below is skipped)
                reward = _literal(r[idx["reward"]]) if "reward" in idx else None
                out.append(
                    TextSample(
                        step=step,
                        tag=tag,
                        text=r[idx["response"]],
                        prompt=r[idx["prompt"]] if "prompt" in idx else None,
                        reward=float(reward) if isinstance(reward, (int, float)) and not isinstance(reward, bool) else None,
                        source=path,
                    )
                )
            else:
                return out
    return [TextSample(step=step, tag=tag, text=text, source=path)]


def hparams_from_plugin_content(content: bytes) -> dict:
    """Hyper-parameters of an ``HParamsPluginData`` (tensorboard/plugins/hparams/plugin_data.proto):
    ``session_start_info`` (3) -> ``hparams`` (1), a ``map<string, google.protobuf.Value>``.
    Experiment (2) and session_end_info (4) messages hold no values and give ``{}``."""
    out: dict = {}
    for number, wire, value in iter_fields(content):
        if number == 3 and wire == WIRE_LEN:
            for n2, w2, v2 in iter_fields(value):
                if n2 == 1 and w2 == WIRE_LEN:
                    k, v = _map_entry(v2, 0)
                    out[k] = v
    return out


def _map_entry(buf: Value, depth: int) -> tuple[str, object]:
    key, val = "", None
    for number, wire, value in iter_fields(buf):
        if number == 1 and wire == WIRE_LEN:
            key = as_str(value)
        elif number == 2 and wire == WIRE_LEN:
            val = _struct_value(value, depth + 1)
    return key, val


def _struct_value(buf: Value, depth: int) -> object:
    """A ``google.protobuf.Value``: null, number, string, bool, struct or list."""
    if depth > _MAX_NESTING:
        raise ProtoDecodeError("google.protobuf.Value nested too deeply", 0)
    out: object = None
    for number, wire, value in iter_fields(buf):
        if number == 2 and wire == WIRE_I64:
            out = as_double(value)
        elif number == 3 and wire == WIRE_LEN:
            out = as_str(value)
        elif number == 4 and wire == WIRE_VARINT:
            out = bool(value)
        elif number == 5 and wire == WIRE_LEN:  # Struct { map<string, Value> fields = 1 }
            out = dict(_map_entry(v2, depth + 1) for n2, w2, v2 in iter_fields(value) if n2 == 1 and w2 == WIRE_LEN)
        elif number == 6 and wire == WIRE_LEN:  # ListValue { repeated Value values = 1 }
            out = [_struct_value(v2, depth + 1) for n2, w2, v2 in iter_fields(value) if n2 == 1 and w2 == WIRE_LEN]
        elif number == 1:
            out = None
    return out


# -- decoding records ---------------------------------------------------------------------------------

_SUPER_CHUNK_BYTES = 64 << 20  # file bytes whose records are grouped and decoded together (bounds memory)
_GATHER_BYTES = 1 << 20  # file bytes gathered at once: fits the CPU cache
_BLOCK_BYTES = 1 << 20  # bytes of equal-length records decoded at once: fits the CPU cache
_MIN_GROUP = 32  # smaller equal-length groups are not worth a template
_MAX_FAST_LENGTH = 4096  # longer records (graphs, histograms, images) take the reference path
_MAX_PEELED = 16  # distinct tag rows split off one pass each before the rest is sorted
_MAX_TEMPLATES = 16  # per group: distinct layouts tried before the rest goes the slow way


def _decode_reference(buf: memoryview, rec: int, start: int, length: int, col: _Collector) -> None:
    data_at = start + tfrecord.HEADER_BYTES
    try:
        ev = decode_event(buf[data_at : data_at + length])
    except ProtoDecodeError as exc:
        col.issue(rec, f"record is not a valid Event ({exc}); skipped")
        return
    col.add_event(rec, ev)


def _decode_fast(buf: memoryview, padded: np.ndarray, framing: tfrecord.Framing, col: _Collector, *, min_group: int = _MIN_GROUP) -> None:
    """Decode every framed record: in bulk where a template applies, else one by one.

    ``padded`` is the file's bytes followed by at least ``_MAX_FAST_LENGTH + 4`` spare bytes, so
    fixed-width row gathers may run past the end of the file.  ``min_group``: smaller groups of
    equal-length records are decoded one by one (``watch`` polls a few records of each length
    at a time, and lowers it).
    """
    slow: list[np.ndarray] = []
    for span in _spans(framing.starts, _SUPER_CHUNK_BYTES):
        for length, g_rec, block in _gather_by_length(padded, framing, span, slow):
            if len(g_rec) < min_group:
                slow.append(g_rec)
            else:
                slow.append(_decode_group(block, g_rec, length, col))
    rest = np.sort(np.concatenate(slow)) if slow else np.empty(0, np.int64)
    for r in rest.tolist():
        start, length = int(framing.starts[r]), int(framing.lengths[r])
        if not tfrecord.data_crc_ok(buf, start, length):
            col.issues.append(tfrecord.data_crc_issue(col.path, start))
            continue
        _decode_reference(buf, r, start, length, col)


def _spans(starts: np.ndarray, nbytes: int) -> list[tuple[int, int]]:
    """``(first, end)`` index ranges of ``starts`` (increasing offsets) covering about
    ``nbytes`` of the file each."""
    if not len(starts):
        return []
    cuts = np.searchsorted(starts, np.arange(int(starts[0]) + nbytes, int(starts[-1]) + 1, nbytes))
    edges = np.unique(np.concatenate([[0], cuts, [len(starts)]])).tolist()
    return list(zip(edges[:-1], edges[1:]))


def _gather_by_length(
    padded: np.ndarray, framing: tfrecord.Framing, span: tuple[int, int], slow: list[np.ndarray]
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Yield ``(length, record indices, rows)`` for the records of ``span`` grouped by data
    length; ``rows`` is a contiguous (N, length + 4) copy of their data and stored CRC.
    Records too long for the bulk path are appended to ``slow``.

    Records of one length are scattered through the file. Gathering each ~1 MiB stretch in file
    order first (a sequential, prefetch-friendly read) and regrouping it while it sits in the
    CPU cache is several times faster than gathering every group straight from the file.
    """
    first, end = span
    lengths = framing.lengths[first:end]
    starts = framing.starts[first:end]
    fast = lengths <= _MAX_FAST_LENGTH
    if not fast.all():
        slow.append(np.flatnonzero(~fast) + first)
    counts = np.bincount(lengths[fast])
    groups = {length: (np.empty(c, np.int64), np.empty((c, length + tfrecord.FOOTER_BYTES), np.uint8)) for length, c in enumerate(counts.tolist()) if c}
    filled = dict.fromkeys(groups, 0)
    for a, b in _spans(starts, _GATHER_BYTES):
        sel = np.flatnonzero(fast[a:b]) + a
        if not len(sel):
            continue
        l_sel = lengths[sel]
        stretch = tfrecord.sliding_rows(padded, int(l_sel.max()) + tfrecord.FOOTER_BYTES)[starts[sel] + tfrecord.HEADER_BYTES]
        order = np.argsort(l_sel.astype(np.uint16), kind="stable")  # a radix sort for 16-bit keys
        sorted_lengths = l_sel[order]
        edges = [0, *(np.flatnonzero(sorted_lengths[1:] != sorted_lengths[:-1]) + 1).tolist(), len(order)]
        for x, y in zip(edges[:-1], edges[1:]):
            idx = order[x:y]
            length = int(sorted_lengths[x])
            g_rec, g_rows = groups[length]
            at = filled[length]
            g_rec[at : at + len(idx)] = sel[idx] + first
            # np.take of whole contiguous rows is several times faster than fancy-indexing a
            # column range, even with the extra copy of the wanted columns
            g_rows[at : at + len(idx)] = np.take(stretch, idx, axis=0)[:, : length + tfrecord.FOOTER_BYTES]
            filled[length] = at + len(idx)
    for length, (g_rec, g_rows) in groups.items():
        yield length, g_rec, g_rows


def _decode_group(block: np.ndarray, g_rec: np.ndarray, length: int, col: _Collector) -> np.ndarray:
    """Verify and decode records of one length in bulk; return the record indices left over.

    ``block`` holds each record's data followed by its 4-byte stored (masked) CRC. The CRCs
    are checked all at once (:func:`.tfrecord.crcs_ok_in_bulk`); only when that fails is each
    row's CRC computed to find the damaged records. Decoding then runs on cache-sized blocks
    of rows: a column operation on a row-major matrix touches every row's cache line.
    """
    if not tfrecord.crcs_ok_in_bulk(block):
        stored = _column(block, length, "<u4")
        bad = tfrecord.masked_crc_rows(block[:, :length]) != stored
        for r in g_rec[bad].tolist():
            col.issues.append(tfrecord.data_crc_issue(col.path, int(col.starts[r])))
        block, g_rec = block[~bad], g_rec[~bad]
    left = [g_rec[:0]]
    rows_per_block = max(_MIN_GROUP, _BLOCK_BYTES // block.shape[1])
    for b0 in range(0, len(block), rows_per_block):
        rows = block[b0 : b0 + rows_per_block]
        rec = g_rec[b0 : b0 + rows_per_block]
        vary = tfrecord.varying_columns(rows)
        for part in _split_by_step_width(rows):
            whole = len(part) == len(rows)
            left.append(_decode_layouts(rows if whole else rows[part], rec[part], length, col, vary if whole else None))
    return np.concatenate(left)


def _split_by_step_width(rows: np.ndarray) -> list[np.ndarray]:
    """Row indices grouped by the byte width of the step varint.

    Writers serialise fields in number order, so an Event starts ``09 <wall_time> 10 <step>``.
    Among records of one length, those whose step takes k bytes have a tag k bytes shorter (or
    another layout); splitting on k first leaves, in practice, one layout per part. The split
    is only a speed-up: every part is still matched against a template.
    """
    n, width = rows.shape
    if width < 11:
        return [np.arange(n)]
    alive = (rows[:, 0] == _WALL_TIME_KEY) & (rows[:, 9] == 0x10)
    k = np.zeros(n, dtype=np.uint8)
    for j in range(10, min(20, width)):
        k += alive
        alive &= rows[:, j] >= 0x80
        if not alive.any():
            break
    if k.min() == k.max():
        return [np.arange(n)]
    return _split_on(k)


def _split_on(key: np.ndarray) -> list[np.ndarray]:
    """Indices of equal ``key`` values (uint8), each in ascending order."""
    order = np.argsort(key, kind="stable")  # radix sort for uint8 keys
    edges = [0, *(np.flatnonzero(np.diff(key[order])) + 1).tolist(), len(key)]
    return [order[a:b] for a, b in zip(edges[:-1], edges[1:])]


def _decode_layouts(rows: np.ndarray, rec: np.ndarray, length: int, col: _Collector, vary: np.ndarray | None) -> np.ndarray:
    """Decode rows (``length`` data bytes then the stored CRC) through templates taken from the
    first still-undecoded row, until all are decoded or ``_MAX_TEMPLATES`` were tried; return
    the record indices left over. ``vary``: :func:`.tfrecord.varying_columns` of ``rows`` when
    already known."""
    left: list[np.ndarray] = []
    todo = np.arange(len(rows))
    for _ in range(_MAX_TEMPLATES):
        if not len(todo):
            break
        whole = len(todo) == len(rows)
        sub = rows if whole else rows[todo]
        ref = sub[0]
        tpl = _parse_template(ref[:length].tobytes())
        if tpl is None:
            left.append(rec[todo[:1]])
            todo = todo[1:]
            continue
        if vary is None or not whole:
            vary = tfrecord.varying_columns(sub)
        # a row has the template's layout when it equals the reference row at every byte that
        # is not payload (wall_time, step, tag text, value) and its step varint has the same width
        structural = np.flatnonzero(vary[:length] & ~tpl.free)
        match = tpl.step_varint_ok(sub)
        if len(structural):
            match &= ~np.any(sub[:, structural] != ref[structural], axis=1)
        if match.all():
            _emit(tpl, sub, rec[todo], length, col, vary)
            todo = todo[:0]
        else:
            _emit(tpl, sub[match], rec[todo[match]], length, col, vary)
            todo = todo[~match]
    left.append(rec[todo])
    return np.concatenate(left)


def _emit(tpl: _Template, rows: np.ndarray, rec: np.ndarray, length: int, col: _Collector, vary: np.ndarray) -> None:
    """Decode the payload of rows (CRC-checked, ``length`` data bytes each) that share
    ``tpl``'s layout. ``vary`` marks columns that may differ between the rows (a superset is
    fine); rows whose tag bytes differ are split into one part per tag."""
    if not len(rows):
        return
    tags = np.zeros(length, dtype=bool)
    for s in tpl.slots:
        tags[s.tag_start : s.tag_end] = True
    tag_cols = np.flatnonzero(vary[:length] & tags)
    n = len(rows)
    wall = np.zeros(n) if tpl.wall_at is None else _column(rows, tpl.wall_at, "<f8").copy()
    step = np.zeros(n, dtype=np.int64) if tpl.step_at is None else _varints(rows, tpl.step_at, tpl.step_len)
    parts = _split_equal_rows(rows[:, tag_cols]) if len(tag_cols) else [slice(None)]
    for slot, s in enumerate(tpl.slots):
        pos = (rec << _SLOT_BITS) | slot
        with np.errstate(invalid="ignore"):  # signalling NaNs become quiet NaNs, as in struct.unpack
            values = _column(rows, s.value_at, s.value_dtype).astype(np.float64)
        for part in parts:
            first = (part.start or 0) if isinstance(part, slice) else int(part[0])
            tag = rows[first, s.tag_start : s.tag_end].tobytes().decode("utf-8", errors="replace")
            col.add_points(tag, pos[part], step[part], values[part], wall[part], s.tensor, s.plugin)


def _row_period(block: np.ndarray, max_period: int = 1024) -> int | None:
    """The smallest p with ``block[i] == block[i + p]`` for every i, if p <= ``max_period``
    and the first repeat of row 0 is at p; else None."""
    n = len(block)
    head = block[1 : min(n, max_period + 1)]
    again = np.flatnonzero((head == block[0]).all(axis=1))
    if not len(again):
        return None
    p = int(again[0]) + 1
    return p if np.array_equal(block[p:], block[:-p]) else None


def _column(rows: np.ndarray, at: int, dtype: str) -> np.ndarray:
    """The ``dtype`` value stored at byte ``at`` of every row, as a zero-copy strided view
    (rows' last axis must be contiguous; unaligned views are fine for numpy)."""
    size = np.dtype(dtype).itemsize
    return rows[:, at : at + size].view(dtype)[:, 0]


def _varints(rows: np.ndarray, at: int, width: int) -> np.ndarray:
    """The ``width``-byte varints at column ``at`` of every row, as int64 (two's complement
    for negatives, like :func:`.protowire.as_int64`); the widths were checked beforehand."""
    kind = np.uint32 if width <= 4 else np.uint64  # 4 groups of 7 bits fit in 32 bits
    acc = (rows[:, at] & np.uint8(0x7F)).astype(kind)
    for k in range(1, width):
        acc |= (rows[:, at + k] & np.uint8(0x7F)).astype(kind) << kind(7 * k)
    return acc.astype(np.int64) if width <= 4 else acc.view(np.int64)


def _split_equal_rows(block: np.ndarray) -> list[np.ndarray | slice]:
    """Index sets (ascending index arrays, or slices), whose rows of the uint8 (N, k) array
    are all equal.

    Writers log the same tags in the same order at every step, so the rows of a layout usually
    cycle through its tags with a fixed period: then the parts are the slices ``j::period``
    (one comparison pass proves it), and selecting them copies nothing. Otherwise the rows are packed into 64-bit words and each
    distinct row is peeled off with a word-wise comparison.
    """
    period = _row_period(block)
    if period:
        return [slice(j, None, period) for j in range(period)]
    n, width = block.shape
    packed = np.zeros((n, -(-width // 8) * 8), dtype=np.uint8)
    packed[:, :width] = block
    words = packed.view("<u8")
    parts: list[np.ndarray | slice] = []
    assigned = np.zeros(n, dtype=bool)
    first = 0
    while len(parts) < _MAX_PEELED:
        eq = words[:, 0] == words[first, 0]
        for k in range(1, words.shape[1]):
            eq &= words[:, k] == words[first, k]
        parts.append(np.flatnonzero(eq))
        assigned |= eq
        first = int(np.argmin(assigned))
        if assigned[first]:
            return parts
    # many distinct rows (thousands of tags of one layout): peeling costs a pass per tag,
    # quadratic in tags (issue 19); group the rest by sorting them as opaque byte strings
    rest = np.flatnonzero(~assigned)
    keys = np.ascontiguousarray(packed[rest]).view(np.dtype((np.void, packed.shape[1]))).ravel()
    _, inverse = np.unique(keys, return_inverse=True)
    order = np.argsort(inverse.ravel(), kind="stable")
    groups = np.split(rest[order], np.flatnonzero(np.diff(inverse.ravel()[order])) + 1)
    return parts + sorted(groups, key=lambda g: int(g[0]))


# -- the reader protocol -----------------------------------------------------------------------------


def sniff(path: Path, head: bytes) -> bool:
    """An ``events.out.tfevents.*`` file, or a TFRecord whose first record is an Event with a
    file_version (``brain.Event:N``)."""
    if as_path(path).name.startswith(FILE_PREFIX):
        return True
    if len(head) < tfrecord.OVERHEAD:
        return False
    length = struct.unpack_from("<Q", head)[0]
    if length > len(head) - tfrecord.OVERHEAD or tfrecord.masked_crc32c(head[:8]) != struct.unpack_from("<I", head, 8)[0]:
        return False
    try:
        ev = decode_event(head[tfrecord.HEADER_BYTES : tfrecord.HEADER_BYTES + length])
    except ProtoDecodeError:
        return False
    return bool(ev.file_version and ev.file_version.startswith("brain.Event:"))


def _load(path: Path) -> tuple[memoryview, np.ndarray]:
    """The whole file as a memoryview, and the same bytes in a numpy array with spare zero
    bytes after the end (see :func:`_decode_fast`). Numpy-owned memory gets transparent huge
    pages, which makes the fast path's scattered row gathers cheaper.

    The first record header is checked on the file's first bytes before anything else is
    read (a 20 GB file of zeros named like an event file is refused after 4 KiB), and the rest
    is read by :func:`.filebytes.load_padded`: runs of zero bytes (a pre-allocated or crashed
    writer's tail) commit no memory.
    """
    spath = str(path)
    try:
        with open_binary(path) as fh:
            size = size_of(fh)
            problem = tfrecord.first_header_problem(fh.read(HEAD_BYTES), size)
            if problem:
                raise LogReadError(spath, f"not a readable TensorBoard event file: {problem}", 0)
            fh.seek(0)
            padded, got = filebytes.load_padded(fh, _MAX_FAST_LENGTH + tfrecord.FOOTER_BYTES)
    except OSError as exc:
        raise LogReadError(spath, f"cannot read file: {exc.strerror or exc}") from None
    except MemoryError:
        raise LogReadError(spath, "file too large to load into memory") from None
    # a file still being written may have changed since fstat: use what was read
    buf = padded.data[:got]
    problem = tfrecord.first_header_problem(buf)
    if problem:  # it shrank under us
        raise LogReadError(spath, f"not a readable TensorBoard event file: {problem}", 0)
    return buf, padded


def read(path: Path) -> list[RawRun]:
    """Read one event file into one RawRun (every scalar, texts, config, restarts, issues)."""
    spath = str(path)
    buf, padded = _load(path)
    framing = tfrecord.frame_fast(buf, spath, lead_byte=_WALL_TIME_KEY)
    col = _Collector(spath, framing.starts)
    _decode_fast(buf, padded, framing, col)
    return [col.build(framing.issues)]


def read_reference(path: Path) -> list[RawRun]:
    """The same as :func:`read`, one record and one field at a time (no numpy tricks).

    Slow (a few seconds per million scalars); kept as the oracle the fast path is tested against.
    """
    spath = str(path)
    buf, _ = _load(path)
    framing = tfrecord.frame_reference(buf, spath)
    col = _Collector(spath, framing.starts)
    for rec, (start, length) in enumerate(zip(framing.starts.tolist(), framing.lengths.tolist())):
        _decode_reference(buf, rec, start, length, col)
    return [col.build(framing.issues)]
