"""The protobuf wire format of W&B's ``wandb_internal.Record`` (``wandb/proto/wandb_internal.proto``),
decoded with a small hand-written decoder so the library never imports wandb: field iteration
(:func:`fields`) and the ``ConfigRecord`` and string-field messages the reader needs. History rows
are decoded in bulk by :mod:`.history`."""

from __future__ import annotations

import json
from typing import Any, Iterator

class Malformed(ValueError):
    """The bytes are not a valid protobuf message."""


# -- protobuf wire format ------------------------------------------------------------------


def varint(buf: bytes, pos: int) -> tuple[int, int]:
    """Decode a base-128 varint at ``pos``; return (value, next position)."""
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise Malformed("varint runs past the end")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            if result >> 64:
                raise Malformed("varint beyond 64 bits")
            return result, pos
        shift += 7
        if shift > 63:
            raise Malformed("varint longer than 10 bytes")


def spans(buf: bytes, pos: int, end: int) -> Iterator[tuple[int, int, int, int, int]]:
    """Yield ``(field number, wire type, start, stop, value)`` for the fields of ``buf[pos:end]``:
    ``[start, stop)`` is the data of a length-delimited field, ``value`` the number of the others."""
    while pos < end:
        tag, pos = varint(buf, pos)
        wire = tag & 7
        value = 0
        if wire == 0:
            value, stop = varint(buf, pos)
            if stop > end:
                raise Malformed("field runs past the end")
        elif wire == 2:
            length, pos = varint(buf, pos)
            stop = pos + length
            if stop > end:
                raise Malformed("field runs past the end")
        elif wire == 1 or wire == 5:
            stop = pos + (8 if wire == 1 else 4)
            if stop > end:
                raise Malformed("field runs past the end")
            value = int.from_bytes(buf[pos:stop], "little")
        else:  # groups (3/4) are not used by wandb_internal.proto
            raise Malformed(f"unsupported wire type {wire}")
        yield tag >> 3, wire, pos, stop, value
        pos = stop


def fields(buf: bytes) -> Iterator[tuple[int, int, Any]]:
    """Yield ``(field number, wire type, value)``: an int for varint/fixed, bytes otherwise."""
    for fno, wire, start, stop, value in spans(buf, 0, len(buf)):
        yield fno, wire, (buf[start:stop] if wire == 2 else value)


def signed(v: int) -> int:
    """int32/int64 varints are two's complement on 64 bits."""
    return v - (1 << 64) if v >= 1 << 63 else v


def config_items(buf: bytes) -> Iterator[tuple[str, list[str], Any]]:
    """``ConfigRecord`` -> ``(op, key path, value)`` with op ``update`` or ``remove``."""
    for fno, wire, sub in fields(buf):
        if wire != 2 or fno not in (1, 2):
            continue
        key: list[str] = []
        raw = None
        for ifno, iwire, v in fields(sub):
            if iwire != 2:
                continue
            if ifno == 1:
                key = [v.decode("utf-8", "replace")]
            elif ifno == 2:
                key.append(v.decode("utf-8", "replace"))
            elif ifno == 16:
                raw = v
        if not key:
            continue
        value: Any = None
        if raw is not None:
            try:
                value = json.loads(raw)
            except ValueError:
                value = raw.decode("utf-8", "replace")
        yield ("update" if fno == 1 else "remove"), key, value


def set_config(config: dict[str, Any], op: str, key: list[str], value: Any) -> None:
    if key[0] == "_wandb":  # internal telemetry, not a hyper-parameter (docs/sources.md#wandb-run-folders)
        return
    node = config
    for part in key[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            if op == "remove":
                return
            child = node[part] = {}
        node = child
    if op == "update":
        node[key[-1]] = value
    else:
        node.pop(key[-1], None)


def str_fields(buf: bytes, wanted: dict[int, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fno, wire, v in fields(buf):
        name = wanted.get(fno)
        if name is not None and wire == 2:
            text = v.decode("utf-8", "replace")
            if name == "tags":
                out.setdefault(name, []).append(text)
            elif text:
                out[name] = text
    return out

