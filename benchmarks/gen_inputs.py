"""Deterministic inputs for the benchmarks (and for the tests that need big or odd files).

One function per input kind; each writes into a directory it is given and returns the path.
Same arguments, same bytes: values come from a seeded ``numpy.random.Generator`` and wall
times from a fixed clock.

TensorBoard files are written by the small, explicit TFRecord / ``Event`` encoder below rather
than by ``torch``'s ``SummaryWriter`` (which needs ~60 s for a million scalars). The encoder
produces the same bytes as the real writers for the messages it covers (see
``tests/test_ingest_tensorboard.py``, which compares it with tbparse and with torch's output).
Field numbers: tensorboard/compat/proto/{event,summary,tensor}.proto, docs/sources.md#tensorboard-event-files.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO, Iterable

import crc32c
import numpy as np

# -- protobuf / TFRecord encoding -----------------------------------------------------------------

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5
_DT_FLOAT, _DT_DOUBLE, _DT_STRING = 1, 2, 7
FILE_VERSION = "brain.Event:2"
BASE_WALL_TIME = 1_700_000_000.0


def varint(value: int) -> bytes:
    """Base-128 varint; negative int64 values take 10 bytes (two's complement), as protobuf does."""
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def key(field: int, wire: int) -> bytes:
    return varint((field << 3) | wire)


def len_field(field: int, payload: bytes) -> bytes:
    return key(field, _LEN) + varint(len(payload)) + payload


def _masked_crc(data: bytes) -> int:
    crc = crc32c.crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecord(data: bytes) -> bytes:
    """Frame one record: length, masked CRC of the length, data, masked CRC of the data."""
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", _masked_crc(length)) + data + struct.pack("<I", _masked_crc(data))


def plugin_metadata(plugin_name: str, content: bytes = b"") -> bytes:
    """``SummaryMetadata{plugin_data{plugin_name, content}}`` as a Summary.Value field 9."""
    plugin_data = len_field(1, plugin_name.encode()) + (len_field(2, content) if content else b"")
    return len_field(9, len_field(1, plugin_data))


def simple_value(tag: str, value: float) -> bytes:
    """A ``Summary.Value`` with a float32 ``simple_value`` (torch ``add_scalar``, tensorboardX)."""
    return len_field(1, tag.encode()) + key(2, _I32) + struct.pack("<f", value)


def tensor_scalar(tag: str, value: float, *, double: bool = False, shape: bool = False, metadata: bool = True) -> bytes:
    """A scalar ``tensor`` value with the ``scalars`` plugin.

    torch ``add_scalar(new_style=True)`` writes no ``tensor_shape``; TF2's ``make_tensor_proto``
    sets an empty one (``shape=True``: field 2 with length 0).
    """
    if double:
        values = len_field(6, struct.pack("<d", value))
        dtype = _DT_DOUBLE
    else:
        values = len_field(5, struct.pack("<f", value))
        dtype = _DT_FLOAT
    tensor = key(1, _VARINT) + varint(dtype) + (len_field(2, b"") if shape else b"") + values
    meta = plugin_metadata("scalars") if metadata else b""
    return len_field(1, tag.encode()) + len_field(8, tensor) + meta


def text_value(tag: str, text: str) -> bytes:
    """A text summary (plugin ``text``, a DT_STRING tensor of shape [1]), as torch ``add_text``."""
    shape = len_field(2, len_field(2, key(1, _VARINT) + varint(1)))
    tensor = key(1, _VARINT) + varint(_DT_STRING) + shape + len_field(8, text.encode())
    return len_field(1, tag.encode()) + len_field(8, tensor) + plugin_metadata("text")


def _struct_value(v: object) -> bytes:
    """``google.protobuf.Value`` for an hparam (torch stores bools as numbers, so do we)."""
    if isinstance(v, str):
        return len_field(3, v.encode())
    return key(2, _I64) + struct.pack("<d", float(v))  # type: ignore[arg-type]


def hparams_session_start(hparams: dict[str, object]) -> bytes:
    """``_hparams_/session_start_info`` Summary.Value (HParamsPluginData.session_start_info)."""
    entries = b"".join(len_field(1, len_field(1, k.encode()) + len_field(2, _struct_value(v))) for k, v in hparams.items())
    content = len_field(3, entries)
    return len_field(1, b"_hparams_/session_start_info") + plugin_metadata("hparams", content)


def event(
    *,
    wall_time: float | None = None,
    step: int = 0,
    values: Iterable[bytes] = (),
    file_version: str | None = None,
    session_status: int | None = None,
) -> bytes:
    """Serialise an ``Event``; fields at their proto3 default (0) are omitted, like real writers."""
    out = bytearray()
    if wall_time:
        out += key(1, _I64) + struct.pack("<d", wall_time)
    if step:
        out += key(2, _VARINT) + varint(step)
    if file_version is not None:
        out += len_field(3, file_version.encode())
    vals = b"".join(len_field(1, v) for v in values)
    if vals:
        out += len_field(5, vals)
    if session_status is not None:
        out += len_field(7, key(1, _VARINT) + varint(session_status))
    return bytes(out)


class EventFileWriter:
    """Writes ``Event`` records to one file, starting with the file_version event."""

    def __init__(self, path: Path, *, wall_time: float = BASE_WALL_TIME):
        self.path = Path(path)
        self._fh: BinaryIO = open(self.path, "wb")
        self.write(event(wall_time=wall_time, file_version=FILE_VERSION))

    def write(self, data: bytes) -> None:
        self._fh.write(tfrecord(data))

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> "EventFileWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- input kinds -----------------------------------------------------------------------------------

# Real PPO/RLHF tag names (TRL legacy, SB3, CleanRL; docs/sources.md#trl-legacy-ppo-metrics,
# docs/sources.md#cleanrl-metrics, docs/sources.md#sb3-logger-keys), so that tag
# lengths, and therefore record layouts, vary the way they do in real files.
PPO_TAGS = (
    "env/reward_mean", "env/reward_std", "ppo/mean_scores", "ppo/std_scores", "ppo/mean_non_score_reward",
    "objective/kl", "objective/kl_coef", "objective/entropy", "ppo/loss/policy", "ppo/loss/value",
    "ppo/loss/total", "ppo/policy/entropy", "ppo/policy/approxkl", "ppo/policy/policykl", "ppo/policy/clipfrac",
    "ppo/policy/advantages_mean", "ppo/returns/mean", "ppo/returns/var", "ppo/val/vpred", "ppo/val/error",
    "ppo/val/clipfrac", "ppo/val/mean", "ppo/val/var", "ppo/val/var_explained", "ppo/learning_rate",
    "time/ppo/forward_pass", "time/ppo/compute_rewards", "time/ppo/optimize_step", "tokens/queries_len_mean",
    "tokens/responses_len_mean", "rollout/ep_rew_mean", "rollout/ep_len_mean", "train/approx_kl",
    "train/clip_fraction", "train/clip_range", "train/entropy_loss", "train/explained_variance",
    "train/learning_rate", "train/loss", "train/policy_gradient_loss", "train/value_loss", "train/std",
    "charts/episodic_return", "charts/episodic_length", "charts/learning_rate", "losses/value_loss",
    "losses/policy_loss", "losses/entropy", "losses/approx_kl", "losses/clipfrac",
)  # fmt: skip


def scalar_series(n_tags: int, n_steps: int, seed: int) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Tags, steps (n_steps,), values (n_steps, n_tags) float32 and wall times (n_steps, n_tags).

    Values are random walks with a few NaN/Inf, as real failing runs log them.
    """
    rng = np.random.default_rng(seed)
    tags = [PPO_TAGS[i % len(PPO_TAGS)] + (f"_{i // len(PPO_TAGS)}" if i >= len(PPO_TAGS) else "") for i in range(n_tags)]
    steps = np.arange(n_steps, dtype=np.int64) * 64  # env steps per update: up to 3-byte varints
    values = np.cumsum(rng.normal(0.0, 0.1, size=(n_steps, n_tags)), axis=0).astype(np.float32)
    bad = rng.random(size=values.shape) < 1e-4
    values[bad] = rng.choice(np.array([np.nan, np.inf, -np.inf], dtype=np.float32), size=int(bad.sum()))
    wall = BASE_WALL_TIME + np.arange(n_steps)[:, None] * 0.25 + np.arange(n_tags)[None, :] * 1e-4
    return tags, steps, values, wall


def tensorboard_scalars_name(n_tags: int, n_steps: int, style: str) -> str:
    return f"events.out.tfevents.{int(BASE_WALL_TIME)}.bench-{style}-{n_tags}x{n_steps}"


def tensorboard_scalars(out_dir: Path, *, n_tags: int = 50, n_steps: int = 20_000, style: str = "simple", seed: int = 0) -> Path:
    """One event file with ``n_tags`` x ``n_steps`` scalars, one Event per scalar (as torch writes).

    ``style``: ``"simple"`` (float32 ``simple_value``, torch ``add_scalar`` default) or ``"tensor"``
    (float32 scalar tensors with the ``scalars`` plugin: torch ``new_style=True``, TF2).
    """
    if style not in ("simple", "tensor"):
        raise ValueError(f"unknown style {style!r}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / tensorboard_scalars_name(n_tags, n_steps, style)
    tags, steps, values, wall = scalar_series(n_tags, n_steps, seed)
    pack_d, pack_f = struct.Struct("<d").pack, struct.Struct("<f").pack
    # Per tag, the Summary bytes around the 4 value bytes never change: build them once.
    heads, tails = [], []
    for t in tags:
        probe = simple_value(t, 0.0) if style == "simple" else tensor_scalar(t, 0.0, shape=True)
        at = probe.index(pack_f(0.0), len(t))  # the value sits after the tag in both layouts
        value_entry = len_field(1, probe)
        summary_head = key(5, _LEN) + varint(len(value_entry)) + value_entry[: len(value_entry) - len(probe)]
        heads.append(summary_head + probe[:at])
        tails.append(probe[at + 4 :])
    with EventFileWriter(path, wall_time=BASE_WALL_TIME) as w:
        for i in range(n_steps):
            step_field = key(2, _VARINT) + varint(int(steps[i])) if steps[i] else b""
            row = values[i]
            for j in range(n_tags):
                data = b"\x09" + pack_d(wall[i, j]) + step_field + heads[j] + pack_f(row[j]) + tails[j]
                w.write(data)
    return path
