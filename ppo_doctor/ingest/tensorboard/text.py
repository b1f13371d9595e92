"""Config and samples carried by TensorBoard text and hparams summaries.

Text summaries: the HF Trainer ``args`` / ``model_config`` JSON (docs/sources.md#hf-trainer-logs) and
the CleanRL ``hyperparameters`` markdown table (docs/sources.md#cleanrl-metrics) are config (:func:`config_from_text`); a
``| prompt | response | reward |`` table (what the reference loop logs) is one sample per row,
any other text one sample (:func:`text_samples`). The hparams plugin's ``session_start_info``
is config too (:func:`hparams_from_plugin_content`).
"""

from __future__ import annotations

import json
import re

from ...frame import TextSample
from .protowire import WIRE_I64, WIRE_LEN, WIRE_VARINT, ProtoDecodeError, Value, as_double, as_str, iter_fields

_MAX_NESTING = 32  # google.protobuf.Value nesting accepted in hparams (untrusted input)
_TABLE_ROW = re.compile(r"^\s*\|(.*)\|\s*$")


def config_from_text(base_tag: str, text: str) -> dict | None:
    """Config carried by a text summary, or None when the text is not a config.

    HF Trainer (docs/sources.md#hf-trainer-logs): ``args`` and ``model_config`` hold JSON; CleanRL
    (docs/sources.md#cleanrl-metrics):
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


def text_samples(step: int, tag: str, text: str, path: str) -> list[TextSample]:
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

