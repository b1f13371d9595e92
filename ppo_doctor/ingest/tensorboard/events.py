"""TensorBoard ``Event`` records decoded field by field (tensorboard/compat/proto/event.proto,
summary.proto, tensor.proto), with :mod:`.protowire`: no TensorFlow, no protobuf runtime.

* ``Event``: wall_time (1, double), step (2, int64), file_version (3), graph_def (4, skipped),
  summary (5), log_message (6), session_log (7), tagged_run_metadata (8), meta_graph_def (9,
  skipped; TF1 writers emit it, corpus ``tf1-a2c-minigrid-stagnant``), source_metadata (10).
* ``Summary.Value``: tag (1), simple_value (2, float32), image/histo/audio (skipped), tensor (8),
  metadata (9: plugin_data.plugin_name and content).

:func:`decode_event` is the per-record reference decoder; the bulk path of
:mod:`.fastpath` uses it for every record its templates do not cover.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

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
    packed_doubles,
    packed_floats,
    packed_varints,
)

WALL_TIME_KEY = 0x09  # Event.wall_time: field 1, wire type I64; every known writer emits it first
SESSION_START = 1  # SessionLog.SessionStatus.START

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
            sv.plugin, sv.plugin_content = decode_metadata(value)
    sv.tag = tag or node_name
    return sv


def decode_metadata(buf: Value) -> tuple[str, bytes]:
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
            elements = shape_elements(value)
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


def shape_elements(buf: Value) -> int:
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

