"""Damaged, empty, foreign and odd files and trees (issue 7): nothing crashes, nothing readable
is lost, every problem names its file (and byte offset where one applies).

All inputs are generated here (``hostile_inputs``); no corpus file is copied.
"""

from __future__ import annotations

import builtins
import gzip
import io
import json
import math
import os
import struct
import time
from pathlib import Path

import numpy as np
import pytest

import hostile_inputs as h
from ppo_doctor.errors import LogReadError
from ppo_doctor.ingest import reader_for, reader_modules
from ppo_doctor.ingest.readers import csv_logs, jsonl, mlflow, trainer_state, verl_console
from ppo_doctor.ingest.tensorboard import reader as tensorboard
from ppo_doctor.ingest.wandb import binary as wandb_binary
from ppo_doctor.pipeline import load

LOG_NAMES = (
    "events.out.tfevents.1700000000.host",
    "run-abc123.wandb",
    "trainer_state.json",
    "progress.csv",
    "metrics.jsonl",
    "progress.json",
    "train.log",
)


def errors_for(result, path: Path) -> list:
    return [e for e in result.errors if e.path == str(path)]


def assert_only_internal_free(result) -> None:
    """A reader bug is caught by the orchestrator as 'internal ... error': none may happen here."""
    assert not [e for e in result.errors if "internal" in e.message], [str(e) for e in result.errors]


# -- flipped bits ------------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [12, 20, 27])
@pytest.mark.parametrize("where", ["length", "length_crc", "data", "data_crc"])
def test_tensorboard_flipped_bit_loses_only_that_record(tmp_path, k, where):
    written = h.tensorboard(40)
    start = written.ends[k - 1]  # record k starts where record k-1 ends
    pos = {"length": start + 1, "length_crc": start + 9, "data": start + 15, "data_crc": written.ends[k] - 2}[where]
    data = bytearray(written.data)
    data[pos] ^= 0x08
    path = tmp_path / "events.out.tfevents.1.host"
    path.write_bytes(bytes(data))
    (run,) = tensorboard.read(path)
    lost = written.all_points() - h.points_of([run])
    assert lost == h.Written(b"", [0], [written.points[k]]).all_points()
    assert h.points_of([run]) <= written.all_points()
    (issue,) = [i for i in run.issues if i.level == "error"]
    assert issue.path == str(path) and issue.offset == start


@pytest.mark.parametrize("k", [5, 11, 17])
def test_wandb_flipped_payload_bit_loses_only_that_record(tmp_path, k):
    written = h.wandb(20)
    start = written.ends[k - 1]
    for pos in (start + 1, start + 7 + 3, written.ends[k] - 1):  # crc, payload start, payload end
        data = bytearray(written.data)
        data[pos] ^= 0x20
        path = tmp_path / "run-x.wandb"
        path.write_bytes(bytes(data))
        (run,) = wandb_binary.read(path)
        got = h.points_of([run])
        assert written.all_points() - got == h.Written(b"", [0], [written.points[k]]).all_points()
        (issue,) = [i for i in run.issues if i.level == "error"]
        assert issue.offset == start and "checksum" in issue.message


def test_wandb_flipped_length_loses_the_rest_of_its_block_only(tmp_path):
    """A damaged length cannot be trusted: LevelDB's reader (log_reader.cc) and W&B's resume
    at the next 32 KiB block, so the records in later blocks must all be read."""
    written = h.wandb(60, pad=2_000)  # about 16 rows per block
    blocks = [e // h.WANDB_BLOCK for e in written.ends]
    k = next(i for i, b in enumerate(blocks) if b == 1) + 3  # a row in the middle of block 1
    start = written.ends[k - 1]
    data = bytearray(written.data)
    data[start + 5] ^= 0x40  # high byte of the uint16 length: past the block end
    path = tmp_path / "run-x.wandb"
    path.write_bytes(bytes(data))
    (run,) = wandb_binary.read(path)
    got = h.points_of([run])
    next_block = (start // h.WANDB_BLOCK + 1) * h.WANDB_BLOCK
    later = [i for i in range(1, len(written.ends)) if written.ends[i - 1] >= next_block]
    assert later and all(blocks[i] >= 2 for i in later)
    for i in list(range(k)) + later:
        assert not h.Written(b"", [0], [written.points[i]]).all_points() - got, f"record {i} (block {blocks[i]}) lost"
    (issue,) = [i for i in run.issues if i.level == "error"]
    assert issue.offset == start and "damaged bytes skipped" in issue.message


# -- lengths that claim 2^60 bytes ------------------------------------------------------------------------


def test_tensorboard_length_of_2_pow_60_is_no_allocation_and_a_clear_error(tmp_path):
    written = h.tensorboard(40)
    start = written.ends[20]
    length = struct.pack("<Q", 1 << 60)
    data = bytearray(written.data)
    data[start : start + 12] = length + struct.pack("<I", h.masked_crc32c(length))  # a valid length checksum
    path = tmp_path / "events.out.tfevents.1.host"
    path.write_bytes(bytes(data))
    out = []
    peak = h.peak_bytes(lambda: out.extend(tensorboard.read(path)))
    assert peak < 8 << 20, f"{peak} bytes"
    (run,) = out
    assert written.complete_before(start) <= h.points_of([run])
    (issue,) = [i for i in run.issues if i.offset is not None]
    assert issue.offset == start and str(1 << 60) in issue.message and issue.path == str(path)


def test_tensorboard_reads_past_an_impossible_length_with_a_valid_checksum(tmp_path):
    """A length past the end of the file, yet valid records follow (a cut-short file with another
    appended): only the damaged record is lost and the skip is an error at its offset."""
    written = h.tensorboard(40)
    start = written.ends[20]
    length = struct.pack("<Q", 1 << 60)
    data = bytearray(written.data)
    data[start : start + 12] = length + struct.pack("<I", h.masked_crc32c(length))
    path = tmp_path / "events.out.tfevents.1.host"
    path.write_bytes(bytes(data))
    (run,) = tensorboard.read(path)
    assert written.all_points() - h.points_of([run]) == h.Written(b"", [0], [written.points[21]]).all_points()
    (issue,) = [i for i in run.issues if i.offset is not None]
    assert issue.offset == start and issue.level == "error" and "valid record follows" in issue.message


def test_many_checksum_valid_headers_with_bad_data_after_an_impossible_length_stay_fast(tmp_path):
    """Resync cost follows the distance to the next header: 20,000 fake headers (valid length
    checksum, data checksum wrong) after an impossible length must not make the scan quadratic."""
    written = h.tensorboard(5)
    length = struct.pack("<Q", 1 << 60)
    fake_len = struct.pack("<Q", 4)
    fake = fake_len + struct.pack("<I", h.masked_crc32c(fake_len)) + b"abcd" + b"\0\0\0\0"
    bad = length + struct.pack("<I", h.masked_crc32c(length)) + fake * 20_000
    path = tmp_path / "events.out.tfevents.1.host"
    path.write_bytes(written.data + bad)
    t0 = time.perf_counter()
    (run,) = tensorboard.read(path)
    assert time.perf_counter() - t0 < 20
    assert written.all_points() <= h.points_of([run])


def test_huge_lengths_inside_records_are_malformed_records_not_allocations(tmp_path):
    """Protobuf length varints of 2^60 inside CRC-valid records (an Event's summary; a W&B
    history item): the record is reported as malformed, the others are read."""
    huge = h.varint(5 << 3 | 2) + h.varint(1 << 60) + b"\x0a\x01x"
    events = h.tensorboard(10)
    tb_path = tmp_path / "events.out.tfevents.1.host"
    bad_event = h.pb_double(1, 1.7e9) + h.pb_varint(2, 99) + huge
    tb_path.write_bytes(events.data + h.tfrecord(bad_event) + h.tfrecord(h.tb_event(100, {"loss": 1.5})))
    wb_rows = h.wandb(10)
    bad_row = h.pb_bytes(2, h.varint(1 << 3 | 2) + h.varint(1 << 60) + b"xx")
    more, _ = h.wandb_frame([bad_row, h.wandb_history({"_step": "100", "loss": "1.5"})])
    wb_path = tmp_path / "run-x.wandb"
    wb_path.write_bytes(wb_rows.data + more[len(h.WANDB_HEADER) :])
    for path, reader, before in ((tb_path, tensorboard, events), (wb_path, wandb_binary, wb_rows)):
        out = []
        assert h.peak_bytes(lambda: out.extend(reader.read(path))) < 8 << 20
        got = h.points_of(out)
        assert before.all_points() <= got and ("loss", 100, 1.5) in got
        assert any(i.offset is not None and i.level == "error" for i in out[0].issues), [str(i) for i in out[0].issues]


# -- empty, random, compressed and foreign files -------------------------------------------------------------


@pytest.mark.parametrize("name", LOG_NAMES)
@pytest.mark.parametrize("content", ["empty", "random", "gzip"])
def test_bad_content_under_every_log_name_is_one_clear_error(tmp_path, name, content):
    good = {"events": h.tensorboard(5), "run-": h.wandb(5), "trainer": h.trainer_state(5), "progress.csv": h.csv(5)}
    payload = next((w.data for k, w in good.items() if name.startswith(k)), h.jsonl(5).data)
    data = {"empty": b"", "random": h.random_bytes(len(name), 5000), "gzip": gzip.compress(payload)}[content]
    folder = tmp_path / "runs"
    folder.mkdir()
    path = folder / name
    path.write_bytes(data)
    ok = h.jsonl(5).write(tmp_path / "good.jsonl")
    for target in (path, folder):
        result = load(target)
        assert_only_internal_free(result)
        assert not result.runs
        errs = errors_for(result, path)
        if target == path or name != "train.log":  # a *.log that is not a veRL log is just another file
            assert len(errs) == 1, [str(e) for e in result.errors]
            if content == "gzip":
                assert "gzip-compressed: decompress first" in errs[0].message
    result = load(tmp_path)  # beside a good run, the good run is still read
    assert [len(r.frame) for r in result.runs] == [10] and [r.files for r in result.runs] == [[str(ok)]]


@pytest.mark.parametrize("content", ["empty", "random", "gzip"])
def test_bad_mlflow_metric_file_is_named_and_the_other_metrics_kept(tmp_path, content):
    run, written = h.mlflow_run(tmp_path, n=5)
    (run / "metrics" / "kl").write_bytes(written.data)
    bad = run / "metrics" / "loss"
    bad.write_bytes({"empty": b"", "random": h.random_bytes(3, 2000), "gzip": gzip.compress(written.data)}[content])
    result = load(tmp_path)
    assert_only_internal_free(result)
    (loaded,) = result.runs
    assert {t for t, _, _ in h.frame_points(loaded)} == {"kl"} and len(loaded.frame) == 5
    named = [i for i in loaded.issues if i.path == str(bad)]
    assert len(named) == 1 and (named[0].offset == 0 or content == "empty")


def test_every_reader_raises_only_log_read_error_naming_the_file(tmp_path):
    """Each reader on files it would never be given by discovery: empty, random, another format."""
    files = {
        "empty": b"",
        "random": h.random_bytes(1, 4000),
        "nul": b"\0" * 3000,
        "tb": h.tensorboard(5).data,
        "wandb": h.wandb(5).data,
        "json_list": b"[1, 2, 3]",
        "json_scalar": b"42",
        "utf16": "step,loss\n1,2\n".encode("utf-16"),
    }
    for mod in reader_modules():
        for label, data in files.items():
            path = tmp_path / f"{mod.NAME}-{label}"
            if mod.NAME == "mlflow":
                path.mkdir()
            else:
                path.write_bytes(data)
            try:
                runs = mod.read(path)
            except LogReadError as exc:
                assert exc.path.startswith(str(path)), (mod.NAME, label, str(exc))
                continue
            for run in runs:
                assert all(i.path.startswith(str(path)) for i in run.issues)


def test_every_compression_is_named_with_its_tool(tmp_path):
    import bz2
    import lzma
    import zipfile

    data = h.jsonl(5).data
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w") as zf:
        zf.writestr("metrics.jsonl", data)
    for kind, tool, packed in (("gzip", "gunzip", gzip.compress(data)), ("bzip2", "bunzip2", bz2.compress(data)),
                               ("xz", "unxz", lzma.compress(data)), ("zip", "unzip", zipped.getvalue())):
        path = tmp_path / f"metrics-{kind}.jsonl"
        path.write_bytes(packed)
        (err,) = load(path).errors
        assert err.message == f"{kind}-compressed: decompress first ({tool})" and err.path == str(path)
    header_like = tmp_path / "progress.csv"  # text that merely starts like a magic number
    header_like.write_text("BZh_rate,step\n0.5,1\n0.6,2\n")
    assert len(load(header_like).runs) == 1


def test_compressed_logs_inside_a_tree_are_named_and_other_archives_ignored(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "metrics.jsonl.gz").write_bytes(gzip.compress(h.jsonl(5).data))
    (tmp_path / "a" / "events.out.tfevents.1.host.gz").write_bytes(gzip.compress(h.tensorboard(5).data))
    (tmp_path / "a" / "dataset.tar.gz").write_bytes(gzip.compress(b"not a log"))
    result = load(tmp_path)
    assert sorted(Path(e.path).name for e in result.errors) == ["events.out.tfevents.1.host.gz", "metrics.jsonl.gz"]
    assert all("gzip-compressed" in e.message for e in result.errors)


def test_folders_named_like_log_files_are_walked_not_read(tmp_path):
    for name in ("events.out.tfevents.1.dir", "metrics.jsonl", "trainer_state.json", "run-x.wandb", "progress.csv"):
        (tmp_path / name).mkdir()
    h.jsonl(5).write(tmp_path / "events.out.tfevents.1.dir" / "log.jsonl")
    result = load(tmp_path)
    assert_only_internal_free(result)
    assert [r.id for r in result.runs] == ["events.out.tfevents.1.dir"] and not result.errors
    assert len(load(tmp_path / "metrics.jsonl").errors) == 1  # an empty folder given directly: said so


# -- permissions, links, names ----------------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_and_folder_with_chmod_000(tmp_path):
    h.jsonl(5).write(tmp_path / "good.jsonl")
    locked = h.jsonl(5).write(tmp_path / "locked.jsonl")
    folder = tmp_path / "private"
    folder.mkdir()
    h.jsonl(5).write(folder / "m.jsonl")
    locked.chmod(0)
    folder.chmod(0)
    try:
        result = load(tmp_path)
    finally:
        locked.chmod(0o644)
        folder.chmod(0o755)
    assert len(result.runs) == 1
    assert {Path(e.path).name for e in result.errors} == {"locked.jsonl", "private"}


def test_permission_errors_name_the_file_and_spare_the_others(tmp_path, monkeypatch):
    """The same through a patched ``open``/``os.scandir`` (tests run as root in CI)."""
    (tmp_path / "good").mkdir()
    good = h.jsonl(5).write(tmp_path / "good" / "m.jsonl")
    denied = {str(tmp_path / "locked" / "events.out.tfevents.1.host"), str(tmp_path / "locked" / "metrics.jsonl")}
    (tmp_path / "locked").mkdir()
    h.tensorboard(5).write(tmp_path / "locked" / "events.out.tfevents.1.host")
    h.jsonl(5).write(tmp_path / "locked" / "metrics.jsonl")
    (tmp_path / "private").mkdir()
    real_open, real_scandir = builtins.open, os.scandir

    def guarded_open(file, *args, **kw):
        if str(file) in denied:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kw)

    def guarded_scandir(path="."):
        if str(path) == str(tmp_path / "private"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(builtins, "open", guarded_open)
    monkeypatch.setattr(io, "open", guarded_open)
    monkeypatch.setattr(os, "scandir", guarded_scandir)
    result = load(tmp_path)
    assert [r.files for r in result.runs] == [[str(good)]]
    by_path = {e.path: e.message for e in result.errors}
    assert set(by_path) == denied | {str(tmp_path / "private")}
    assert all("Permission denied" in m for m in by_path.values())
    for mod in (tensorboard, jsonl):  # and the readers themselves, given the file directly
        with pytest.raises(LogReadError, match="Permission denied"):
            mod.read(Path(sorted(denied)[0 if mod is tensorboard else 1]))


def test_symlink_loops_end_and_broken_links_are_reported(tmp_path):
    tree = tmp_path / "tree"
    (tree / "a" / "b").mkdir(parents=True)
    h.jsonl(5).write(tree / "a" / "m.jsonl")
    os.symlink("..", tree / "a" / "b" / "up")
    os.symlink(tree, tree / "self")
    os.symlink("loop2", tree / "loop1")
    os.symlink("loop1", tree / "loop2")
    os.symlink("nowhere", tree / "a" / "metrics.jsonl")
    t = time.perf_counter()
    result = load(tree)
    assert time.perf_counter() - t < 5
    assert [r.id for r in result.runs] == ["a"] and len(result.runs[0].frame) == 10
    assert {Path(e.path).name for e in result.errors} == {"loop1", "loop2", "metrics.jsonl"}
    assert load(tree / "loop1").errors  # a loop given directly


def test_undecodable_file_names_are_read_and_shown_with_escapes(tmp_path):
    folder = os.fsencode(str(tmp_path)) + b"/run-\xff\xfe"
    os.mkdir(folder)
    with open(folder + b"/events.out.tfevents.\xc3\x28", "wb") as fh:
        fh.write(h.tensorboard(5).data)
    with open(folder + b"/metrics-\xe9.jsonl", "wb") as fh:
        fh.write(h.jsonl(5).data)
    from ppo_doctor.analyze import analyze
    from ppo_doctor.report import RenderOptions, render

    report = analyze(tmp_path)
    (rr,) = report.runs
    assert rr.run.id == "run-\\xff\\xfe" and len(rr.run.frame) > 0
    assert all("\\x" in e.path and "not valid UTF-8" in e.message for e in report.errors) and report.errors
    for fmt in ("text", "markdown", "html", "json", "sarif", "junit", "github"):
        render(report, fmt, RenderOptions(plots=False)).encode("utf-8")  # strict: no lone surrogate left


# -- text formats: garbage, nesting, huge numbers ---------------------------------------------------------------


def test_jsonl_garbage_partial_deep_and_huge_values(tmp_path):
    lines = [json.dumps({"step": i, "loss": i / 10}) for i in range(12)]
    lines[2] = "garbage \x00\x01 {{{"
    lines[3] = '{"step": 3, "deep": ' + "[" * 10_000 + "]" * 10_000 + ', "loss": 0.3}'
    lines[4] = '{"step": 4, "deep": ' + '{"a": ' * 10_000 + "1" + "}" * 10_000 + ', "loss": 0.4}'
    lines[5] = '{"step": 5, "loss": 0.5, "big": 1e400, "small": -1e400, "int": ' + "9" * 5000 + "}"
    lines[6] = '{"step": 6, "loss": 0.6, "key\\ud800": 1, "text": "\\udcff"}'
    lines[7] = '{"step": ' + "9" * 30 + ', "loss": 0.7}'  # a step past int64: that line's step is unknown
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(lines) + '\n{"step": 12, "lo')
    (run,) = jsonl.read(path)
    loss = {s.tag: s for s in run.series}["loss"]
    assert loss.steps.tolist() == [0, 1, 5, 6, 6, 8, 9, 10, 11]  # line 8's step is that of line 7
    tags = {s.tag: s.values.tolist() for s in run.series}
    assert tags["big"] == [math.inf] and tags["small"] == [-math.inf] and tags["int"] == [math.inf]
    msgs = [(i.message, i.offset) for i in run.issues]
    text = " ".join(m for m, _ in msgs)
    assert "nesting too deep" in text and "partial last line" in text and "line 3 skipped" in text
    assert all(o is not None for m, o in msgs if m.startswith("line"))
    result = load(tmp_path)
    assert_only_internal_free(result)
    (loaded,) = result.runs
    assert "key\ufffd" in loaded.frame.df["raw_tag"].astype(str).tolist()


def test_csv_ragged_repeated_headers_delimiters_and_huge_cells(tmp_path):
    rows = ["step;loss;kl", "0;1.0;0.1", "1;0.9;0.2;999", "step;loss;kl", "2;0.8", "3;0.7;0.3", "4;" + "9" * 5000 + ";0.5"]
    rows.append("5;" + "9" * 200_000 + ";0.5")  # past the csv module's field limit: that row is reported
    path = tmp_path / "metrics.csv"
    path.write_text("\n".join(rows) + "\n6;0.6;0.")
    (run,) = csv_logs.read(path)
    got = {s.tag: dict(zip(s.steps.tolist(), s.values.tolist())) for s in run.series}
    assert got["loss"] == {0: 1.0, 2: 0.8, 3: 0.7, 4: math.inf, 6: 0.6}
    assert got["kl"] == {0: 0.1, 3: 0.3, 4: 0.5}  # "0." of the unterminated last line is not trusted
    by_text = {i.message.split(" (")[0]: i.offset for i in run.issues}
    assert by_text["1 line(s) not readable as CSV skipped"] == len("\n".join(rows[:7])) + 1
    text = " ".join(i.message for i in run.issues)
    assert "repeated header" in text and "more cells" in text and "partial last line 9" in text
    tab = tmp_path / "tab.csv"
    tab.write_text("step\tloss\n0\t1.5\n1\tnan\n2\tinf\n")
    (run,) = csv_logs.read(tab)
    assert [str(v) for v in run.series[0].values.tolist()] == ["1.5", "nan", "inf"]


def test_trainer_state_with_invalid_utf8_and_a_cut_keeps_complete_entries(tmp_path):
    written = h.trainer_state(8)
    data = written.data.replace(b'"learning_rate"', b'"learning_\xff\xferate"')
    cut = written.ends[5] + 10
    path = tmp_path / "trainer_state.json"
    path.write_bytes(data[: cut + (len(data) - len(written.data)) * 6 // 8])
    result = load(tmp_path)
    assert_only_internal_free(result)
    (run,) = result.runs
    assert sorted(step for tag, step, _ in h.frame_points(run) if tag == "loss") == [1, 2, 3, 4, 5, 6]
    assert any("cut short" in w for w in run.warnings)
    assert any("\ufffd" in t for t in run.frame.df["raw_tag"].astype(str))


# -- NaN, +-Inf and values past float32 in every format -------------------------------------------------------------

NONFINITE = [0.5, math.nan, math.inf, -math.inf, 1e39, -1e39, 0.25, 1e-45]


@pytest.mark.parametrize("fmt", ["tensorboard", "wandb", "jsonl", "csv", "trainer_state", "verl_console", "hf_console", "sb3_console", "mlflow",
                                 "deepspeed_chat_console"])
def test_nan_inf_and_float32_overflow_are_kept_as_points(tmp_path, fmt):
    """Every value is a point: NaN and +-Inf as logged; 1e39 stays 1e39 in text formats and
    W&B's JSON, and is +inf in TensorBoard, whose simple_value is a float32 (the writer's cast)."""
    values = NONFINITE * 3
    folder = tmp_path / fmt
    folder.mkdir()
    if fmt == "mlflow":
        _, written = h.mlflow_run(folder, n=len(values), values=values)
    else:
        name = {"tensorboard": "events.out.tfevents.1.host", "wandb": "run-x.wandb", "jsonl": "m.jsonl", "csv": "progress.csv",
                "trainer_state": "trainer_state.json", "verl_console": "train.log", "hf_console": "train.log", "sb3_console": "train.log",
                "deepspeed_chat_console": "training.log"}[fmt]
        written = getattr(h, fmt)(len(values), values=values)
        written.write(folder / name)
    result = load(folder)
    assert_only_internal_free(result)
    (run,) = result.runs
    assert h.frame_points(run) == written.all_points()
    logged = run.frame.df["value"].to_numpy()
    assert np.isnan(logged).sum() >= 3 and np.isposinf(logged).sum() >= 3 and np.isneginf(logged).sum() >= 3
    if fmt == "tensorboard":
        assert not (np.abs(logged[np.isfinite(logged)]) > 3.5e38).any()
    else:
        assert (logged == 1e39).sum() >= 3


def test_non_finite_values_never_break_rules_or_reports(tmp_path):
    """All formats' NaN/Inf runs through the rules and every renderer: JSON must parse with a
    strict parser (no NaN/Infinity tokens) and HTML must parse."""
    from html.parser import HTMLParser

    from ppo_doctor.analyze import analyze
    from ppo_doctor.report import FORMATS, RenderOptions, render
    from ppo_doctor.results import Report

    values = NONFINITE * 4
    for fmt, name in (("tensorboard", "events.out.tfevents.1.host"), ("wandb", "run-x.wandb"), ("jsonl", "m.jsonl"),
                      ("csv", "progress.csv"), ("trainer_state", "trainer_state.json"), ("verl_console", "train.log"),
                      ("hf_console", "train.log"), ("sb3_console", "train.log"), ("deepspeed_chat_console", "training.log")):
        (tmp_path / fmt).mkdir()
        getattr(h, fmt)(len(values), values=values).write(tmp_path / fmt / name)
    h.mlflow_run(tmp_path / "mlflow", n=len(values), values=values)
    (tmp_path / "all_nan").mkdir()
    h.jsonl(40, values=[math.nan] * 40).write(tmp_path / "all_nan" / "m.jsonl")
    report = analyze(tmp_path)
    assert len(report.runs) == 11 and not report.errors
    assert any(f.code == "PD601" for r in report.runs for f in r.findings)

    def refuse(token):
        raise ValueError(token)

    for fmt in FORMATS:
        text = render(report, fmt, RenderOptions(plots=False))
        if fmt in ("json", "sarif"):
            json.loads(text, parse_constant=refuse)
        if fmt == "html":
            HTMLParser().feed(text)
    # the plots mark NaN/Inf in red: draw those of the run that has every kind (about 1 s a run)
    jsonl_run = next(r for r in report.runs if r.run.id == "jsonl")
    HTMLParser().feed(render(Report(runs=[jsonl_run]), "html", RenderOptions()))
