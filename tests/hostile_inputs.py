"""Generators of valid, broken and hostile log files for the hostile-input tests (issue 7).

Every writer here encodes its format by hand from the format's own specification, so the
tests do not depend on the readers' helpers nor on optional writers (torch, wandb):

* TensorBoard: TFRecord framing (``uint64 length | masked crc32c(length) | data | masked
  crc32c(data)``, tensorflow/core/lib/io/record_writer.cc) around ``Event`` protobufs
  (tensorboard/compat/proto/event.proto, summary.proto);
* W&B ``.wandb``: LevelDB log framing (7-byte header, 32 KiB blocks, FULL/FIRST/MIDDLE/LAST
  records, zlib CRC-32 seeded with the type byte) around ``wandb_internal.Record``
  protobufs (docs/sources.md#wandb-transaction-log);
* JSONL, CSV, ``trainer_state.json`` (``json.dumps(indent=2, sort_keys=True)`` as
  transformers writes it), MLflow file-store run folders and the console logs of veRL,
  DeepSpeed-Chat, the HF Trainer and SB3 as text.

Each writer returns a :class:`Written`: the bytes, where every record ends, and the points
each record carries, so a test can compute exactly which points must survive a cut at any
byte offset.  The mutation helpers at the end are shared by the property tests and the fuzz
targets.
"""

from __future__ import annotations

import json
import math
import random
import struct
import tracemalloc
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import crc32c

Point = tuple[str, int, float]

# Text that must stay inert in every report: HTML, a script, quotes, Markdown table and link
# syntax, and ANSI colour / OSC 8 hyperlink escape sequences.
SCRIPT = "<script>alert('pwn')</script>"
HOSTILE_TEXTS = (
    SCRIPT,
    '"><img src=x onerror=alert(1)>',
    "a|b`c`*d*_e_ [x](javascript:alert(1))",
    "\x1b[31mRED\x1b[0m",
    "\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\",
)


@dataclass
class Written:
    """A generated log file: its bytes, the end offset of each record and that record's points."""

    data: bytes
    ends: list[int] = field(default_factory=list)
    points: list[list[Point]] = field(default_factory=list)

    def all_points(self) -> Counter:
        return Counter(_key(p) for rec in self.points for p in rec)

    def complete_before(self, cut: int) -> Counter:
        """Points of the records that end at or before byte ``cut`` (what must survive the cut)."""
        return Counter(_key(p) for end, rec in zip(self.ends, self.points) for p in rec if end <= cut)

    def clean(self, cut: int) -> bool:
        """Whether a cut at ``cut`` leaves no partial record (a record end, or the newline after one)."""
        return cut in (0, len(self.data)) or cut in self.ends or (cut - 1 in self.ends and self.data[cut - 1 : cut] == b"\n")

    def last_end(self, cut: int) -> int:
        """End of the last record complete at ``cut`` (0 when none is)."""
        return max((e for e in self.ends if e <= cut), default=0)

    def write(self, path: Path, cut: int | None = None) -> Path:
        path.write_bytes(self.data if cut is None else self.data[:cut])
        return path


def _key(p: Point) -> tuple:
    """A point as a multiset key: NaN != NaN, so it is counted under the string "nan"."""
    tag, step, value = p
    return (tag, int(step), "nan" if value != value else float(value))


def points_of(runs: Iterable) -> Counter:
    """Every (tag, step, value) of RawRuns, as a multiset (NaN counted as "nan")."""
    out: Counter = Counter()
    for run in runs:
        for s in list(run.series) + list(run.eval_series):
            out.update(_key(p) for p in zip([s.tag] * len(s), s.steps.tolist(), s.values.tolist()))
    return out


def frame_points(run) -> Counter:
    """Every (raw tag, step, value) of a loaded :class:`~ppo_doctor.run.Run`'s frame."""
    df = run.frame.df
    return Counter(_key(p) for p in zip(df["raw_tag"].astype(str), df["step"].tolist(), df["value"].tolist()))


def value_at(i: int) -> float:
    """A finite value with a long decimal expansion (cuts inside it give a different number)."""
    return round(math.sin(i) * 1000.0 + i / 7.0, 6)


# -- protobuf wire format (https://protobuf.dev/programming-guides/encoding/) -----------------------


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # negative int64 as two's complement
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def pb_varint(field_no: int, n: int) -> bytes:
    return varint(field_no << 3) + varint(n)


def pb_bytes(field_no: int, data: bytes | str) -> bytes:
    if isinstance(data, str):
        data = data.encode("utf-8")
    return varint(field_no << 3 | 2) + varint(len(data)) + data


def pb_double(field_no: int, x: float) -> bytes:
    return varint(field_no << 3 | 1) + struct.pack("<d", x)


def pb_float(field_no: int, x: float) -> bytes:
    return varint(field_no << 3 | 5) + struct.pack("<f", f32(x))


# -- TensorBoard ------------------------------------------------------------------------------------


def masked_crc32c(data: bytes) -> int:
    crc = crc32c.crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecord(data: bytes) -> bytes:
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked_crc32c(length)) + data + struct.pack("<I", masked_crc32c(data))


def tb_event(step: int, values: dict[str, float], wall_time: float | None = None) -> bytes:
    """An Event with one ``Summary.Value(tag, simple_value)`` per item (torch ``add_scalar``)."""
    summary = b"".join(pb_bytes(1, pb_bytes(1, tag) + pb_float(2, v)) for tag, v in values.items())
    return pb_double(1, 1.7e9 + step if wall_time is None else wall_time) + pb_varint(2, step) + pb_bytes(5, summary)


def tb_file_version() -> bytes:
    return pb_double(1, 1.7e9) + pb_bytes(3, "brain.Event:2")


def f32(x: float) -> float:
    """What a float32 ``simple_value`` holds: 1e39 becomes inf (past float32's 3.4e38), as
    numpy's float32 cast in torch's and tensorboardX's writers makes it."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def tensorboard(n: int = 40, tags: tuple[str, ...] = ("loss", "objective/kl"), values: list[float] | None = None) -> Written:
    """A file_version record then ``n`` scalar events (tags in turn), as SummaryWriter writes them."""
    out = Written(b"")
    data = bytearray(tfrecord(tb_file_version()))
    out.ends.append(len(data))
    out.points.append([])
    for i in range(n):
        tag = tags[i % len(tags)]
        v = values[i] if values is not None else value_at(i)
        data += tfrecord(tb_event(i, {tag: v}))
        out.ends.append(len(data))
        out.points.append([(tag, i, f32(v))])
    out.data = bytes(data)
    return out


# -- W&B transaction log ----------------------------------------------------------------------------

WANDB_BLOCK = 32 * 1024
WANDB_HEADER = b":W&B" + struct.pack("<HB", 0xBEE1, 0)


def wandb_frame(payloads: list[bytes]) -> tuple[bytes, list[int]]:
    """LevelDB-log framing of ``payloads``; returns the bytes and each payload's end offset."""
    out = bytearray(WANDB_HEADER)
    ends = []
    for p in payloads:
        first = True
        while True:
            left = WANDB_BLOCK - len(out) % WANDB_BLOCK
            if left < 7:
                out += b"\0" * left
                continue
            frag, p = p[: left - 7], p[left - 7 :]
            t = (1 if first else 4) if not p else (2 if first else 3)
            out += struct.pack("<IHB", zlib.crc32(frag, zlib.crc32(bytes([t]))), len(frag), t) + frag
            first = False
            if not p:
                break
        ends.append(len(out))
    return bytes(out), ends


def wandb_history(items: dict[str, str], step: int | None = None) -> bytes:
    """``Record{history: HistoryRecord{item: [HistoryItem{nested_key, value_json}], step}}``."""
    body = b"".join(pb_bytes(1, pb_bytes(2, k) + pb_bytes(16, v)) for k, v in items.items())
    if step is not None:
        body += pb_bytes(2, pb_varint(1, step))
    return pb_bytes(2, body)


def wandb_config(config: dict) -> bytes:
    """``Record{config: ConfigRecord{update: [ConfigItem{key, value_json}]}}``."""
    body = b"".join(pb_bytes(1, pb_bytes(1, k) + pb_bytes(16, json.dumps(v))) for k, v in config.items())
    return pb_bytes(5, body)


def wandb_exit(code: int = 0) -> bytes:
    return pb_bytes(18, pb_varint(1, code))


def wandb(n: int = 40, tags: tuple[str, ...] = ("loss", "objective/kl"), values: list[float] | None = None, *, pad: int = 0) -> Written:
    """A config record, ``n`` history rows (``_step``, ``_timestamp``, one metric) and an exit record.

    ``pad`` adds a text item of that many bytes to every row, so that rows span block boundaries.
    """
    payloads = [wandb_config({"lr": 1e-5, "kl_coef": 0.05})]
    points: list[list[Point]] = [[]]
    for i in range(n):
        tag = tags[i % len(tags)]
        v = values[i] if values is not None else value_at(i)
        items = {"_step": str(i), "_timestamp": repr(1.7e9 + i), tag: json.dumps(v)}
        if pad:
            items["sample/text"] = json.dumps("x" * pad)
        payloads.append(wandb_history(items, step=i))
        points.append([(tag, i, v)])
    payloads.append(wandb_exit(0))
    points.append([])
    data, ends = wandb_frame(payloads)
    return Written(data, [len(WANDB_HEADER)] + ends, [[]] + points)


# -- text formats -----------------------------------------------------------------------------------


def _lines(lines: list[str], points: list[list[Point]], first: int = 0, *, self_closing: bool = False) -> Written:
    """Lines joined by ``\\n`` (each terminated); record i ends after its newline, or at its
    last character when the line proves its own end (a JSON object's closing brace)."""
    out = Written(b"")
    data = bytearray()
    for k, (line, pts) in enumerate(zip(lines, points)):
        data += line.encode("utf-8")
        end = len(data)
        data += b"\n"
        if k >= first:
            out.ends.append(end if self_closing else len(data))
            out.points.append(pts)
    out.data = bytes(data)
    return out


def jsonl(n: int = 40, values: list[float] | None = None) -> Written:
    lines, points = [], []
    for i in range(n):
        v = values[i] if values is not None else value_at(i)
        lines.append(json.dumps({"step": i, "loss": v, "kl": v / 10}))
        points.append([("loss", i, v), ("kl", i, v / 10)])
    return _lines(lines, points, self_closing=True)


def csv(n: int = 40, values: list[float] | None = None, delim: str = ",") -> Written:
    """A header line and ``n`` rows ``step,loss,kl`` (Python ``repr`` floats, like pandas/SB3)."""
    lines, points = [delim.join(["step", "loss", "kl"])], [[]]
    for i in range(n):
        v = values[i] if values is not None else value_at(i)
        lines.append(delim.join([str(i), repr(v), repr(v / 10)]))
        points.append([("loss", i, v), ("kl", i, v / 10)])
    return _lines(lines, points)


def trainer_state(n: int = 40, values: list[float] | None = None) -> Written:
    """``trainer_state.json`` as transformers writes it; a record = one ``log_history`` entry."""
    history = []
    points: list[list[Point]] = []
    for i in range(n):
        v = values[i] if values is not None else value_at(i)
        history.append({"epoch": i / n, "learning_rate": 1e-5, "loss": v, "step": i + 1})
        points.append([("loss", i + 1, v), ("learning_rate", i + 1, 1e-5), ("epoch", i + 1, i / n)])
    state = {"best_metric": None, "epoch": 1.0, "global_step": n, "log_history": history, "logging_steps": 1, "max_steps": n}
    text = json.dumps(state, indent=2, sort_keys=True)
    # each entry ends at its closing brace: find them in order after "log_history"
    ends, pos = [], text.index('"log_history"')
    for entry in history:
        rendered = json.dumps(entry, indent=2, sort_keys=True).replace("\n", "\n    ")
        pos = text.index(rendered, pos) + len(rendered)
        ends.append(len(text[:pos].encode()))
    return Written(text.encode(), ends, points)


def verl_console(n: int = 40, values: list[float] | None = None) -> Written:
    lines, points = ["Training config: see below", "{'actor': {'lr': 1e-06}, 'kl_coef': 0.001}"], [[], []]
    for i in range(n):
        v = values[i] if values is not None else value_at(i)
        lines.append(f"step:{i} - actor/pg_loss:{v!r} - actor/ppo_kl:{v / 10!r}")
        points.append([("actor/pg_loss", i, v), ("actor/ppo_kl", i, v / 10)])
    return _lines(lines, points, first=2)


def hf_console(n: int = 40, values: list[float] | None = None) -> Written:
    """The log dicts an HF Trainer prints (``str(dict)``, ProgressCallback / PrinterCallback), one a
    line and without a step: the reader numbers them 1, 2, ... in print order."""
    lines, points = [], []
    for i in range(n):
        v = values[i] if values is not None else value_at(i)
        lines.append(str({"loss": v, "grad_norm": v / 10, "epoch": (i + 1) / 8}))
        points.append([("loss", i + 1, v), ("grad_norm", i + 1, v / 10), ("epoch", i + 1, (i + 1) / 8)])
    return _lines(lines, points, self_closing=True)


def sb3_console(n: int = 40, values: list[float] | None = None) -> Written:
    """Stable-Baselines3's stdout tables (``logger.HumanOutputFormat``): a line of dashes, a group
    row and its keys indented by three spaces, the same line of dashes.  A table ends with its
    closing dashes (as wide as the opening ones, so a cut one is told apart)."""
    out = Written(b"")
    data = bytearray()
    for i in range(n):
        v = values[i] if values is not None else value_at(i)
        step = 512 * (i + 1)
        cells = [("rollout/", ""), ("   ep_rew_mean", repr(v)), ("time/", ""), ("   total_timesteps", str(step)), ("train/", ""), ("   approx_kl", repr(v / 1000))]
        kw, vw = max(len(k) for k, _ in cells), max(len(x) for _, x in cells)
        dashes = "-" * (kw + vw + 7)
        table = [dashes, *(f"| {k}{' ' * (kw - len(k))} | {x}{' ' * (vw - len(x))} |" for k, x in cells), dashes]
        data += "\n".join(table).encode()
        out.ends.append(len(data))
        data += b"\n"
        out.points.append([("rollout/ep_rew_mean", step, v), ("train/approx_kl", step, v / 1000)])
    out.data = bytes(data)
    return out


def deepspeed_chat_console(n: int = 40, values: list[float] | None = None) -> Written:
    """DeepSpeed-Chat step 3's console lines (newer ``main.py``): a step line and its reward line
    per step, over two epochs whose step starts again at 0; the reader lays the epochs end to
    end, so record ``i`` is at step ``i``.  Each line is a record (a reward line belongs to the
    step line before it, which is complete without it)."""
    lines, points = [], []
    per_epoch = max(1, (n + 1) // 2)
    for i in range(n):
        v = values[i] if values is not None else value_at(i)
        epoch, step = divmod(i, per_epoch)
        lines.append(f"Epoch: {epoch} | Step: {step} | PPO Epoch: 1 | Actor Loss: {v!r} | Critic Loss: {v / 10!r} | Unsupervised Loss: 0.0")
        points.append([("actor_loss", i, v), ("critic_loss", i, v / 10), ("unsup_loss", i, 0.0)])
        lines.append(f"Average reward score: {-v!r} | EMA reward score: {v / 2!r}")
        points.append([("reward", i, -v), ("ema_reward", i, v / 2)])
    return _lines(lines, points)


def mlflow_run(root: Path, n: int = 40, values: list[float] | None = None, name: str = "run") -> tuple[Path, Written]:
    """An MLflow file-store run folder ``root/mlruns/0/<id>/``; the Written is its loss metric file."""
    exp = root / "mlruns" / "0"
    run = exp / "0123456789abcdef"
    (run / "metrics").mkdir(parents=True)
    (run / "params").mkdir()
    (run / "tags").mkdir()
    (exp / "meta.yaml").write_text("artifact_location: file:///x\nexperiment_id: '0'\nlifecycle_stage: active\nname: Default\n")
    (run / "meta.yaml").write_text(
        "artifact_uri: file:///x\nend_time: null\nexperiment_id: '0'\nlifecycle_stage: active\n"
        f"run_id: 0123456789abcdef\nrun_name: {name}\nstart_time: 1700000000000\nstatus: 1\n"
    )
    (run / "params" / "learning_rate").write_text("1e-05")
    (run / "tags" / "mlflow.runName").write_text(name)
    lines, points = [], []
    for i in range(n):
        v = values[i] if values is not None else value_at(i)
        lines.append(f"{1700000000000 + i} {v!r} {i}")
        points.append([("loss", i, v)])
    written = _lines(lines, points)
    written.write(run / "metrics" / "loss")
    return run, written


# -- mutations (property tests and fuzz targets) ------------------------------------------------------

MUTATIONS = ("flip", "truncate", "insert", "delete", "duplicate")


def mutate(data: bytes, kind: str, a: int, b: int, byte: int = 0) -> bytes:
    """One mutation of ``data``: ``a``/``b`` are positions (taken modulo the length)."""
    n = len(data)
    if n == 0:
        return bytes([byte]) if kind == "insert" else data
    i, j = sorted((a % (n + 1), b % (n + 1)))
    if kind == "flip":
        k = a % n
        return data[:k] + bytes([data[k] ^ (1 << (b % 8))]) + data[k + 1 :]
    if kind == "truncate":
        return data[: a % (n + 1)]
    if kind == "insert":
        return data[:i] + bytes([byte]) * (1 + b % 16) + data[i:]
    if kind == "delete":
        return data[:i] + data[j:]
    if kind == "duplicate":
        return data[:j] + data[i:j] + data[j:]
    raise ValueError(kind)


def random_bytes(seed: int, n: int) -> bytes:
    return random.Random(seed).randbytes(n)


def peak_bytes(fn: Callable[[], object]) -> int:
    """The peak of the memory Python allocated while ``fn`` ran (tracemalloc)."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
