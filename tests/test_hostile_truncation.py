"""Files cut at every byte offset, and files that grow while they are read (issue 7).

A killed writer, a copy taken while the run was live, or a full disk leaves a log cut at an
arbitrary byte.  For every offset of a small file of each format the reader must return
exactly the points of the records complete before the cut (nothing lost, nothing invented
from a half-written record) and name the file and the offset where the partial record starts;
when nothing complete is left it raises :class:`LogReadError` naming the file.

Line formats whose last cell or item cannot prove its own end (CSV, veRL console) keep the
cells followed by a delimiter: every value they return must be one that was written.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path

import pytest

import hostile_inputs as h
from ppo_doctor.errors import LogReadError
from ppo_doctor.ingest.readers import csv_logs, deepspeed_chat_console, hf_console, jsonl, mlflow, sb3_console, trainer_state, verl_console
from ppo_doctor.ingest.tensorboard import reader as tensorboard
from ppo_doctor.ingest.wandb import binary as wandb_binary

# name: (file name, generator, reader, every partial record is reported, values exact per record)
FORMATS = {
    "tensorboard": ("events.out.tfevents.1700000000.host", h.tensorboard, tensorboard, True),
    "wandb": ("run-abc123.wandb", h.wandb, wandb_binary, True),
    "jsonl": ("metrics.jsonl", h.jsonl, jsonl, True),
    "trainer_state": ("trainer_state.json", h.trainer_state, trainer_state, True),
    "csv": ("progress.csv", h.csv, csv_logs, True),
    # a last line "ste" (no item yet) loses nothing and is not reported
    "verl_console": ("train.log", h.verl_console, verl_console, False),
    "hf_console": ("train.log", h.hf_console, hf_console, True),
    "sb3_console": ("train.log", h.sb3_console, sb3_console, True),
    # a cut line is not read at all: its last value may be cut short
    "deepspeed_chat_console": ("training.log", h.deepspeed_chat_console, deepspeed_chat_console, True),
}
# Records per file: the required ~40-record TensorBoard file in the quick suite; smaller files
# for the other formats (their every-offset sweeps cost more per read), 40 in the slow suite.
QUICK = {"tensorboard": 40, "wandb": 12, "jsonl": 12, "trainer_state": 6, "csv": 8, "verl_console": 12, "hf_console": 8, "sb3_console": 4,
         "deepspeed_chat_console": 6}


def sweep(tmp_path: Path, fmt: str, n: int) -> Counter:
    """Cut one file at every offset; check each cut and count the outcomes."""
    name, make, reader, always_reported = FORMATS[fmt]
    written = make(n)
    path = tmp_path / name
    everything = written.all_points()
    stats: Counter = Counter()
    for cut in range(len(written.data) + 1):
        written.write(path, cut)
        expected = written.complete_before(cut)
        try:
            runs = reader.read(path)
        except LogReadError as exc:
            assert exc.path == str(path)
            assert not expected, f"{fmt} cut at {cut}: {exc} although {sum(expected.values())} points were complete"
            stats["error, nothing complete"] += 1
            continue
        got = h.points_of(runs)
        assert not expected - got, f"{fmt} cut at {cut}: lost {dict(expected - got)}"
        assert not got - everything, f"{fmt} cut at {cut}: invented {dict(got - everything)}"
        stats["exact prefix" if got == expected else "prefix + complete cells of the cut line"] += 1
        if written.clean(cut):
            continue
        damage = [i for r in runs for i in r.issues if i.offset is not None]
        tail = written.data[written.last_end(cut) : cut]
        if not damage and not always_reported and b" - " not in tail:
            stats["partial line without a value, not reported"] += 1
            continue
        assert damage, f"{fmt} cut at {cut}: partial record not reported"
        assert all(i.path == str(path) for i in damage)
        assert any(written.last_end(cut) <= i.offset <= cut for i in damage), [str(i) for i in damage]
    return stats


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_cut_at_every_offset_keeps_the_complete_records(tmp_path, fmt):
    stats = sweep(tmp_path, fmt, QUICK[fmt])
    reads = stats["exact prefix"] + stats["prefix + complete cells of the cut line"] + stats["error, nothing complete"]
    assert reads == len(FORMATS[fmt][1](QUICK[fmt]).data) + 1
    if fmt not in ("csv", "verl_console"):
        assert stats["prefix + complete cells of the cut line"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_cut_at_every_offset_of_a_40_record_file(tmp_path, fmt):
    stats = sweep(tmp_path, fmt, 40)
    if fmt not in ("csv", "verl_console"):
        assert stats["prefix + complete cells of the cut line"] == 0


def test_wandb_record_spanning_blocks_cut_at_dense_offsets(tmp_path):
    """Rows larger than a 32 KiB block (FIRST/MIDDLE/LAST fragments), cut every 401 bytes and
    at every byte around each block boundary."""
    written = h.wandb(6, pad=20_000)
    assert len(written.data) > 3 * h.WANDB_BLOCK
    path = tmp_path / "run-abc.wandb"
    cuts = set(range(0, len(written.data) + 1, 401))
    for b in range(h.WANDB_BLOCK, len(written.data), h.WANDB_BLOCK):
        cuts.update(range(b - 8, b + 8))
    for cut in sorted(c for c in cuts if c <= len(written.data)):
        written.write(path, cut)
        expected = written.complete_before(cut)
        try:
            got = h.points_of(wandb_binary.read(path))
        except LogReadError:
            assert cut < len(h.WANDB_HEADER)
            continue
        assert got == expected, cut


def test_mlflow_metric_file_cut_at_every_offset(tmp_path):
    """MLflow appends ``<ts> <value> <step>\\n`` per point: a line without its newline is
    partial (its step or value may be cut short) and is reported, never read."""
    run, written = h.mlflow_run(tmp_path, n=8)
    metric = run / "metrics" / "loss"
    for cut in range(len(written.data) + 1):
        written.write(metric, cut)
        try:
            runs = mlflow.read(run)
        except LogReadError:
            assert not written.complete_before(cut)
            continue
        assert h.points_of(runs) == written.complete_before(cut), cut
        if not written.clean(cut):
            (issue,) = [i for i in runs[0].issues if i.offset is not None]
            assert issue.path == str(metric) and issue.offset == written.last_end(cut)


def test_trainer_state_cut_before_the_first_entry_names_the_offset(tmp_path):
    written = h.trainer_state(5)
    cut = written.data.index(b'"log_history": [') + len('"log_history": [') + 3
    path = written.write(tmp_path / "trainer_state.json", cut)
    with pytest.raises(LogReadError) as exc:
        trainer_state.read(path)
    assert exc.value.offset is not None and "cut short" in exc.value.message


# -- live runs: the file grows while it is read ---------------------------------------------------


def _grow_while_reading(path: Path, written: h.Written, reader, head: int, reads: int = 25) -> list[Counter]:
    """Write ``head`` bytes, then append the rest in small chunks from a thread while the
    reader reads the file again and again; return what each read saw."""
    written.write(path, head)
    done = threading.Event()

    def append() -> None:
        with open(path, "ab") as fh:
            for k in range(head, len(written.data), 7):
                fh.write(written.data[k : k + 7])
                fh.flush()
                time.sleep(0.0002)
        done.set()

    writer = threading.Thread(target=append)
    writer.start()
    seen = []
    try:
        for _ in range(reads):
            try:
                seen.append(h.points_of(reader.read(path)))
            except LogReadError:
                seen.append(Counter())
    finally:
        writer.join()
    assert done.is_set()
    return seen


@pytest.mark.parametrize("fmt", ["tensorboard", "wandb", "jsonl", "csv", "verl_console", "hf_console", "sb3_console", "trainer_state",
                                 "deepspeed_chat_console"])
def test_a_file_growing_while_read_gives_a_consistent_prefix(tmp_path, fmt):
    name, make, reader, _ = FORMATS[fmt]
    written = make(300)
    head = written.ends[len(written.ends) // 4]
    before = written.complete_before(head)
    everything = written.all_points()
    seen = _grow_while_reading(tmp_path / name, written, reader, head)
    for got in seen:
        assert not got - everything, f"{fmt}: a value that was never written: {dict(got - everything)}"
        assert not before - got, f"{fmt}: lost points that were complete before the read"
    assert h.points_of(reader.read(tmp_path / name)) == everything


def test_partial_trailing_record_of_a_live_run_is_a_warning_for_binary_logs(tmp_path):
    """A half-written last record is what every live TensorBoard / W&B run shows: the data before
    it is complete, so the reader warns instead of calling the file damaged."""
    for name, written, reader in (
        ("events.out.tfevents.1.x", h.tensorboard(10), tensorboard),
        ("run-x.wandb", h.wandb(10), wandb_binary),
    ):
        path = written.write(Path(tmp_path) / name, len(written.data) - 5)
        (run,) = reader.read(path)
        (issue,) = [i for i in run.issues if i.offset is not None]
        assert issue.level == "warning" and issue.offset == written.last_end(len(written.data) - 5)
