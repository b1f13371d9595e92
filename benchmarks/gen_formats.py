"""Deterministic benchmark inputs beyond the single TensorBoard file of ``gen_inputs``.

One function per input kind; each writes into a directory it is given and returns the path.
Same arguments, same bytes (seeded ``numpy.random.Generator``, fixed clock):

* :func:`tensorboard_run` - one run folder of several consecutive event files (the
  10,000,000-scalar run is 10 files x 1,000,000 scalars), and, with :data:`CHECK_TAGS`, the
  ``ppo-doctor check`` run whose tags are real TRL PPO metric names, so the rules actually run;
* :func:`jsonl_file`, :func:`csv_file`, :func:`trainer_state_file`, :func:`wandb_file` - the same
  points (``gen_inputs.scalar_series``: 50 tags x 20,000 steps by default) in the other formats.

The ``.wandb`` writer is the minimal inverse of ``ppo_doctor/ingest/wandb/binary.py``
(docs/sources.md#wandb-transaction-log): LevelDB-log framing (32 KiB blocks, FULL/FIRST/MIDDLE/LAST fragments,
zlib CRC-32 seeded with the CRC-32 of the type byte) around protobuf ``Record{history}`` rows
of ``HistoryItem{key, value_json}``, as W&B's legacy Python backend writes them.
"""

from __future__ import annotations

import json
import math
import struct
import zlib
from pathlib import Path
from typing import Sequence

import numpy as np

from benchmarks.gen_inputs import (
    _LEN,
    _VARINT,
    BASE_WALL_TIME,
    EventFileWriter,
    key,
    len_field,
    scalar_series,
    simple_value,
    varint,
)

# 25 TRL PPOTrainer keys (legacy and new names, docs/sources.md#trl-legacy-ppo-metrics) that the alias table maps to
# canonical metrics, plus 25 tags no rule reads (timings, token counts, SB3/CleanRL names).
CHECK_TAGS = (
    "objective/kl", "objective/kl_coef", "objective/entropy", "objective/rlhf_reward", "objective/scores",
    "objective/non_score_reward", "env/reward_mean", "env/reward_std", "ppo/mean_scores", "ppo/std_scores",
    "ppo/loss/policy", "ppo/loss/value", "ppo/loss/total", "ppo/policy/entropy", "ppo/policy/approxkl",
    "ppo/policy/clipfrac", "ppo/policy/advantages_mean", "ppo/returns/mean", "ppo/val/error", "ppo/val/clipfrac",
    "ppo/val/mean", "ppo/val/var_explained", "ppo/learning_rate", "loss/value_avg", "tokens/responses_len_mean",
    "time/ppo/forward_pass", "time/ppo/compute_rewards", "time/ppo/optimize_step", "time/ppo/calc_stats",
    "time/ppo/total", "tokens/queries_len_mean", "tokens/queries_len_std", "tokens/responses_len_std",
    "custom/throughput", "custom/gpu_mem", "custom/samples_seen", "custom/tokens_seen", "custom/batch_time",
    "custom/queue_depth", "custom/io_wait", "sys/cpu", "sys/mem", "sys/net_in", "sys/net_out", "sys/disk",
    "debug/a", "debug/b", "debug/c", "debug/d", "debug/e",
)  # fmt: skip


def run_values(n_tags: int, n_steps: int, seed: int) -> np.ndarray:
    """Healthy-looking PPO curves (n_steps, n_tags) float32: each tag a bounded noisy level.

    A pure random walk would wander into every threshold rule; these stay near a per-tag
    level (positive for KL, entropy, lengths ...) so the rules run their full path on data that
    is plausible, with a few NaN at the end of one tag so the non-finite rule fires too.
    """
    rng = np.random.default_rng(seed)
    level = rng.uniform(0.05, 1.0, size=n_tags)
    noise = rng.normal(0.0, 0.02, size=(n_steps, n_tags))
    values = (level[None, :] * (1.0 + noise)).astype(np.float32)
    values[-3:, n_tags // 2] = np.nan
    return values


def tensorboard_run(
    out_dir: Path,
    *,
    tags: Sequence[str] | None = None,
    n_tags: int = 50,
    n_steps: int = 20_000,
    n_files: int = 1,
    seed: int = 0,
) -> Path:
    """A run folder of ``n_files`` event files, each ``n_tags`` x ``n_steps`` float32 scalars.

    Files follow each other in steps (a resumed run writes a new file and goes on), one Event per
    scalar as torch's ``add_scalar`` writes.  ``tags`` = None uses ``gen_inputs``' PPO tag names
    and random walks; otherwise those names with :func:`run_values`.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    pack_d, pack_f = struct.Struct("<d").pack, struct.Struct("<f").pack
    for f in range(n_files):
        if tags is None:
            names, _, values, _ = scalar_series(n_tags, n_steps, seed + f)
        else:
            names, values = list(tags), run_values(len(tags), n_steps, seed + f)
        # The Summary bytes around the 4 value bytes never change per tag: build them once.
        heads, tails = [], []
        for t in names:
            probe = simple_value(t, 0.0)
            at = len(probe) - 4
            value_entry = len_field(1, probe)
            heads.append(key(5, _LEN) + varint(len(value_entry)) + value_entry[: len(value_entry) - 4])
            tails.append(probe[at + 4 :])
        first_step = f * n_steps
        start_wall = BASE_WALL_TIME + first_step * 0.25
        path = out_dir / f"events.out.tfevents.{int(start_wall)}.bench.{f}"
        with EventFileWriter(path, wall_time=start_wall) as w:
            for i in range(n_steps):
                step = (first_step + i) * 64
                head = b"\x09" + pack_d(start_wall + i * 0.25) + (key(2, _VARINT) + varint(step) if step else b"")
                row = values[i]
                for j in range(len(names)):
                    w.write(head + heads[j] + pack_f(row[j]) + tails[j])
    return out_dir


def _rows(n_tags: int, n_steps: int, seed: int) -> tuple[list[str], np.ndarray, list[list[float]]]:
    """Tags, steps and per-row Python floats of ``gen_inputs.scalar_series`` (float32 widened)."""
    tags, steps, values, _ = scalar_series(n_tags, n_steps, seed)
    return tags, steps, values.astype(np.float64).tolist()


def jsonl_file(out_dir: Path, *, n_tags: int = 50, n_steps: int = 20_000, seed: int = 0) -> Path:
    """``metrics.jsonl``: one object per step ``{"step": s, tag: value, ...}`` (NaN/Infinity tokens,
    as Python's ``json`` writes them)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "metrics.jsonl"
    tags, steps, rows = _rows(n_tags, n_steps, seed)
    with open(path, "w", encoding="utf-8") as fh:
        for s, row in zip(steps.tolist(), rows):
            fh.write(json.dumps({"step": s, **dict(zip(tags, row))}) + "\n")
    return path


def csv_file(out_dir: Path, *, n_tags: int = 50, n_steps: int = 20_000, seed: int = 0) -> Path:
    """``metrics.csv``: a ``step`` column and one column per tag (``nan``/``inf`` spelled as numpy does)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "metrics.csv"
    tags, steps, rows = _rows(n_tags, n_steps, seed)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(",".join(["step", *tags]) + "\n")
        for s, row in zip(steps.tolist(), rows):
            fh.write(f"{s}," + ",".join(map(repr, row)) + "\n")
    return path


def trainer_state_file(out_dir: Path, *, n_tags: int = 50, n_steps: int = 20_000, seed: int = 0) -> Path:
    """HF ``trainer_state.json`` whose ``log_history`` holds one dict per step (docs/sources.md#hf-trainer-logs)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "trainer_state.json"
    tags, steps, rows = _rows(n_tags, n_steps, seed)
    history = [{**dict(zip(tags, row)), "step": s} for s, row in zip(steps.tolist(), rows)]
    state = {"global_step": int(steps[-1]), "max_steps": int(steps[-1]), "logging_steps": 64, "log_history": history}
    path.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n", encoding="utf-8")  # as TrainerState.save_to_json
    return path


# -- W&B transaction log (docs/sources.md#wandb-transaction-log) --------------------------------------------------

_WANDB_HEADER = b":W&B" + struct.pack("<HB", 0xBEE1, 0)
_BLOCK, _REC_HEADER = 32 * 1024, 7
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4
_R_HISTORY, _R_EXIT = 2, 18


class WandbLogWriter:
    """LevelDB-log framing of ``Record`` payloads, as ``wandb/sdk/internal/datastore.py`` writes it."""

    def __init__(self, path: Path):
        self._fh = open(path, "wb")
        self._fh.write(_WANDB_HEADER)
        self._pos = len(_WANDB_HEADER)

    def _emit(self, rtype: int, data: bytes) -> None:
        crc = zlib.crc32(data, zlib.crc32(bytes([rtype])))
        self._fh.write(struct.pack("<IHB", crc, len(data), rtype) + data)
        self._pos += _REC_HEADER + len(data)

    def write(self, data: bytes) -> None:
        """One record, fragmented across blocks when it does not fit in the current one."""
        first = True
        while True:
            left = _BLOCK - self._pos % _BLOCK
            if left < _REC_HEADER:  # a record never starts in a block's last 6 bytes: zero padding
                self._fh.write(b"\x00" * left)
                self._pos += left
                continue
            room = left - _REC_HEADER
            if len(data) <= room:
                self._emit(_FULL if first else _LAST, data)
                return
            self._emit(_FIRST if first else _MIDDLE, data[:room])
            data, first = data[room:], False

    def close(self) -> None:
        self._fh.close()


def _json_number(x: float) -> str:
    """``value_json`` text of a float as W&B writes it (bare NaN / Infinity tokens)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return repr(x)


def wandb_history_record(items: Sequence[tuple[str, str]], step: int) -> bytes:
    """``Record{history: HistoryRecord{item: [HistoryItem{key, value_json}], step: {num}}}``."""
    body = b"".join(len_field(1, len_field(1, k.encode()) + len_field(16, v.encode())) for k, v in items)
    body += len_field(2, key(1, _VARINT) + varint(step) if step else b"")
    return len_field(_R_HISTORY, body)


def wandb_file(out_dir: Path, *, n_tags: int = 50, n_steps: int = 20_000, seed: int = 0) -> Path:
    """``run-bench.wandb``: one history row per step with ``_step``, ``_timestamp``, ``_runtime``
    and the tags, then an exit record (code 0)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "run-bench.wandb"
    tags, steps, rows = _rows(n_tags, n_steps, seed)
    w = WandbLogWriter(path)
    try:
        for i, (s, row) in enumerate(zip(steps.tolist(), rows)):
            items = [("_step", str(s)), ("_timestamp", repr(BASE_WALL_TIME + i * 0.25)), ("_runtime", repr(i * 0.25))]
            items += [(t, _json_number(v)) for t, v in zip(tags, row)]
            w.write(wandb_history_record(items, s))
        w.write(len_field(_R_EXIT, key(1, _VARINT) + varint(0)))
    finally:
        w.close()
    return path


__all__ = [
    "CHECK_TAGS",
    "WandbLogWriter",
    "csv_file",
    "jsonl_file",
    "run_values",
    "tensorboard_run",
    "trainer_state_file",
    "wandb_file",
    "wandb_history_record",
]
