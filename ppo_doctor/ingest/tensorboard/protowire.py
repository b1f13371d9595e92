"""A tiny, dependency-free decoder for the protobuf wire format.

Readers of binary logs (TensorBoard ``Event`` records, W&B ``.wandb`` records) only need a few
fields of a few messages, so instead of depending on ``protobuf`` and generated classes they walk
the wire format directly.  The API is generic: :func:`iter_fields` yields every field of one
message as ``(field_number, wire_type, value)``; the caller decides what each number means.

Wire format (https://protobuf.dev/programming-guides/encoding/):

* a field starts with a varint key ``(field_number << 3) | wire_type``;
* wire type 0 (VARINT): a base-128 varint, least significant group first, at most 10 bytes;
* wire type 1 (I64): 8 bytes little-endian (double, fixed64, sfixed64);
* wire type 2 (LEN): a varint length then that many bytes (string, bytes, sub-message, packed
  repeated scalars);
* wire type 5 (I32): 4 bytes little-endian (float, fixed32, sfixed32);
* wire types 3/4 (deprecated groups) are not used by any log format read here and are rejected.

Values are returned undecoded where the wire type alone cannot say what they are: VARINT as an
unsigned ``int`` (see :func:`as_int64` / :func:`as_sint64`), I64/I32/LEN as ``memoryview`` slices of
the input (zero-copy; see :func:`as_double`, :func:`as_float`, :func:`as_str`).
"""

from __future__ import annotations

import struct
from typing import Iterator, NamedTuple

WIRE_VARINT = 0
WIRE_I64 = 1
WIRE_LEN = 2
WIRE_I32 = 5

_MAX_VARINT_BYTES = 10
_DOUBLE = struct.Struct("<d")
_FLOAT = struct.Struct("<f")


# A field's value: a VARINT's integer, or the bytes of a LEN/I64/I32 field.  Which one depends
# on the wire type read from the (untrusted) input, so the accessors below check it at run time.
Value = int | memoryview
Bytes = bytes | memoryview


class ProtoDecodeError(ValueError):
    """The bytes are not a well-formed protobuf message; ``offset`` is where decoding stopped."""

    def __init__(self, message: str, offset: int):
        super().__init__(f"{message} (at message byte {offset})")
        self.offset = offset


class Field(NamedTuple):
    """One field with the position of its value bytes inside the buffer that was walked."""

    number: int
    wire_type: int
    value: Value
    value_start: int  # first byte of the value (after the key, and after the length for LEN)
    value_end: int  # one past its last byte


def read_varint(buf: bytes | memoryview, pos: int, end: int | None = None) -> tuple[int, int]:
    """Decode the varint at ``pos``; return ``(value, position after it)``."""
    if end is None:
        end = len(buf)
    result = 0
    shift = 0
    start = pos
    while True:
        if pos >= end:
            raise ProtoDecodeError("varint runs past the end of the message", start)
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if pos - start >= _MAX_VARINT_BYTES:
            raise ProtoDecodeError("varint longer than 10 bytes", start)


def as_bytes(value: Value | bytes) -> Bytes:
    """The bytes of a LEN, I64 or I32 field; a VARINT where bytes were expected is malformed."""
    if isinstance(value, int):
        raise ProtoDecodeError("a varint where a length-delimited or fixed-size value was expected", 0)
    return value


def as_varint(value: Value | bytes) -> int:
    """The integer of a VARINT field; bytes where a varint was expected are malformed."""
    if not isinstance(value, int):
        raise ProtoDecodeError("a length-delimited or fixed-size value where a varint was expected", 0)
    return value


def iter_fields_at(buf: Value | bytes, start: int = 0, end: int | None = None) -> Iterator[Field]:
    """Yield every field of the message in ``buf[start:end]`` with its value's byte span."""
    raw = as_bytes(buf)
    view = raw if isinstance(raw, memoryview) else memoryview(raw)
    if end is None:
        end = len(view)
    pos = start
    while pos < end:
        key_at = pos
        key, pos = read_varint(view, pos, end)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ProtoDecodeError("field number 0", key_at)
        if wire == WIRE_VARINT:
            value, after = read_varint(view, pos, end)
            yield Field(number, wire, value, pos, after)
            pos = after
            continue
        if wire == WIRE_LEN:
            size, pos = read_varint(view, pos, end)
            after = pos + size
        elif wire == WIRE_I64:
            after = pos + 8
        elif wire == WIRE_I32:
            after = pos + 4
        else:
            raise ProtoDecodeError(f"unsupported wire type {wire} for field {number}", key_at)
        if after > end:
            raise ProtoDecodeError(f"field {number} runs past the end of the message", key_at)
        yield Field(number, wire, view[pos:after], pos, after)
        pos = after


def iter_fields(buf: Value | bytes, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int, Value]]:
    """Yield ``(field_number, wire_type, value)`` for every field of one message."""
    for f in iter_fields_at(buf, start, end):
        yield f.number, f.wire_type, f.value


# -- interpreting values ---------------------------------------------------------------------


def as_int64(value: Value | bytes) -> int:
    """A VARINT of an ``int64``/``int32`` field: negative numbers are 10-byte two's complement."""
    v = as_varint(value) & ((1 << 64) - 1)
    return v - (1 << 64) if v >= 1 << 63 else v


def as_sint64(value: Value | bytes) -> int:
    """A VARINT of a ``sint32``/``sint64`` field (ZigZag encoded)."""
    v = as_varint(value)
    return (v >> 1) ^ -(v & 1)


def as_double(value: Value | bytes) -> float:
    d: float = _DOUBLE.unpack(as_bytes(value))[0]
    return d


def as_float(value: Value | bytes) -> float:
    """A ``float`` (32-bit) field, widened exactly to a Python float."""
    f: float = _FLOAT.unpack(as_bytes(value))[0]
    return f


def as_str(value: Value | bytes) -> str:
    """A ``string`` field; invalid UTF-8 is replaced rather than failing the whole record."""
    return bytes(as_bytes(value)).decode("utf-8", errors="replace")


def packed_floats(value: Value | bytes) -> list[float]:
    """A packed ``repeated float`` field."""
    raw = as_bytes(value)
    if len(raw) % 4:
        raise ProtoDecodeError("packed float field length is not a multiple of 4", 0)
    return [v for (v,) in _FLOAT.iter_unpack(raw)]


def packed_doubles(value: Value | bytes) -> list[float]:
    """A packed ``repeated double`` field."""
    raw = as_bytes(value)
    if len(raw) % 8:
        raise ProtoDecodeError("packed double field length is not a multiple of 8", 0)
    return [v for (v,) in _DOUBLE.iter_unpack(raw)]


def packed_varints(value: Value | bytes) -> list[int]:
    """A packed ``repeated`` varint field (int32, int64, bool, enum), as unsigned ints."""
    raw = as_bytes(value)
    out = []
    pos = 0
    while pos < len(raw):
        v, pos = read_varint(raw, pos)
        out.append(v)
    return out
