"""TensorBoard reader: real writers, real corpus files, damage, and fast path == reference path.

Files are written at test time by torch's and tensorboardX's ``SummaryWriter`` and by the small
encoder in ``benchmarks/gen_inputs.py``; peers (``EventAccumulator`` with size guidance 0, tbparse)
read the same files for comparison.
"""

from __future__ import annotations

import math
import struct
import warnings
from pathlib import Path

import numpy as np
import pytest

from benchmarks import gen_inputs as gi
from ppo_doctor.errors import LogReadError
from ppo_doctor.frame import RawRun
from ppo_doctor.ingest.tensorboard import fastpath
from ppo_doctor.ingest.tensorboard import protowire as pw
from ppo_doctor.ingest.tensorboard import reader as tb
from ppo_doctor.ingest.tensorboard import tfrecord as tfr

warnings.filterwarnings("ignore", category=DeprecationWarning)


# -- helpers ------------------------------------------------------------------------------------------


def read_one(path: Path) -> RawRun:
    runs = tb.read(path)
    assert len(runs) == 1
    return runs[0]


def series(run: RawRun) -> dict:
    return {s.tag: s for s in run.series}


def assert_same_run(fast: RawRun, ref: RawRun) -> None:
    """Identical scalars (file order, NaN-aware), texts, config, restarts and issues."""
    assert [s.tag for s in fast.series] == [s.tag for s in ref.series]
    for a, b in zip(fast.series, ref.series):
        np.testing.assert_array_equal(a.steps, b.steps, err_msg=a.tag)
        np.testing.assert_array_equal(a.values, b.values, err_msg=a.tag)
        np.testing.assert_array_equal(a.wall_time, b.wall_time, err_msg=a.tag)
        assert a.source == b.source
    assert fast.texts == ref.texts
    assert fast.config == ref.config
    assert fast.restarts == ref.restarts
    key = lambda i: (i.offset if i.offset is not None else -1, i.level, i.message)  # noqa: E731
    assert sorted(map(key, fast.issues)) == sorted(map(key, ref.issues))


def ea_points(path: Path) -> dict[str, list[tuple[int, float]]]:
    """Every scalar (simple_value and scalar tensors) as EventAccumulator sees it, unsampled."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.util import tensor_util

    ea = EventAccumulator(str(path), size_guidance={"scalars": 0, "tensors": 0}, purge_orphaned_data=False)
    ea.Reload()
    out: dict[str, list[tuple[int, float]]] = {}
    for tag in ea.Tags()["scalars"]:
        out[tag] = [(e.step, e.value) for e in ea.Scalars(tag)]
    for tag in ea.Tags()["tensors"]:
        if ea.SummaryMetadata(tag).plugin_data.plugin_name != "scalars":
            continue
        out[tag] = [(e.step, float(tensor_util.make_ndarray(e.tensor_proto).item())) for e in ea.Tensors(tag)]
    return out


def assert_matches_ea(path: Path, run: RawRun) -> int:
    want = ea_points(path)
    got = {s.tag: list(zip(s.steps.tolist(), s.values.tolist())) for s in run.series}
    assert set(got) == set(want)
    for tag, pts in want.items():
        assert len(got[tag]) == len(pts), tag
        for (gs, gv), (ws, wv) in zip(got[tag], pts):
            assert gs == ws
            assert (math.isnan(gv) and math.isnan(wv)) or gv == wv
    return sum(len(p) for p in want.values())


def write_events(path: Path, events: list[bytes]) -> Path:
    with gi.EventFileWriter(path) as w:
        for e in events:
            w.write(e)
    return path


def record_offset(path: Path, index: int) -> int:
    """Byte offset of the header of record ``index`` (0 = the file_version event)."""
    data, pos = path.read_bytes(), 0
    for _ in range(index):
        pos += 16 + struct.unpack_from("<Q", data, pos)[0]
    return pos


# -- protowire ----------------------------------------------------------------------------------------


def test_protowire_fields_and_values():
    msg = (
        gi.key(1, pw.WIRE_I64) + struct.pack("<d", 2.5)
        + gi.key(2, pw.WIRE_VARINT) + gi.varint(-3)
        + gi.len_field(3, "é".encode())
        + gi.key(4, pw.WIRE_I32) + struct.pack("<f", 0.5)
        + gi.key(1000, pw.WIRE_VARINT) + gi.varint(300)
    )  # fmt: skip
    fields = list(pw.iter_fields(msg))
    assert [(n, w) for n, w, _ in fields] == [(1, 1), (2, 0), (3, 2), (4, 5), (1000, 0)]
    assert pw.as_double(fields[0][2]) == 2.5
    assert pw.as_int64(fields[1][2]) == -3 and len(gi.varint(-3)) == 10
    assert pw.as_str(fields[2][2]) == "é"
    assert pw.as_float(fields[3][2]) == 0.5
    assert fields[4][2] == 300
    assert pw.as_sint64(3) == -2 and pw.as_sint64(4) == 2
    at = list(pw.iter_fields_at(msg))[2]
    assert msg[at.value_start : at.value_end] == "é".encode()
    assert pw.packed_floats(struct.pack("<2f", 1.0, 2.0)) == [1.0, 2.0]
    assert pw.packed_doubles(struct.pack("<d", 3.0)) == [3.0]
    assert pw.packed_varints(gi.varint(1) + gi.varint(300)) == [1, 300]


@pytest.mark.parametrize(
    "bad",
    [b"\x08", b"\x08\x80", b"\x12\x05ab", b"\x0b", b"\x00\x01", b"\x08" + b"\xff" * 11, b"\x09\x00\x00"],
)
def test_protowire_rejects_malformed(bad):
    with pytest.raises(pw.ProtoDecodeError):
        list(pw.iter_fields(bad))


# -- tfrecord -----------------------------------------------------------------------------------------


def test_masked_crc_matches_tensorboard():
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

    for data in (b"", b"abc", bytes(range(256)) * 3):
        assert tfr.masked_crc32c(data) == masked_crc32c(data)


def test_vectorised_crc_equals_per_row_crc():
    rng = np.random.default_rng(1)
    for width in (1, 7, 8, 40, 300):
        rows = rng.integers(0, 256, size=(500, width), dtype=np.uint8)
        rows[:, : width // 2] = rows[0, : width // 2]  # mostly constant columns, as in records
        rows[::7] = rows[0]
        want = [tfr.masked_crc32c(r.tobytes()) for r in rows]
        assert tfr.masked_crc_rows(rows).tolist() == want
        assert tfr.masked_crc_rows(rows[1::3]).tolist() == want[1::3]  # strided views too
    assert tfr.varying_columns(np.zeros((0, 3), np.uint8)).tolist() == [False] * 3


def test_bulk_crc_check_accepts_intact_rows_and_sees_any_damage():
    """crcs_ok_in_bulk checks rows as they sit in the file (data, then the stored masked CRC):
    every size around the tree's odd/even rounds and the one-call-per-row cut-off, every
    width from empty data up, one flipped bit anywhere (data or stored CRC), and the same bit
    flipped in two records (which a plain XOR of the CRCs would miss)."""
    rng = np.random.default_rng(4)
    for n in (1, 2, 63, 64, 65, 127, 300):
        for length in (0, 1, 7, 57, 61, 200):
            data = rng.integers(0, 256, size=(n, length), dtype=np.uint8)
            crcs = np.array([tfr.masked_crc32c(r.tobytes()) for r in data], dtype="<u4")
            block = np.ascontiguousarray(np.concatenate([data, crcs[:, None].view(np.uint8)], axis=1))
            assert tfr.crcs_ok_in_bulk(block)
            for _ in range(3):
                bad = block.copy()
                bad[rng.integers(n), rng.integers(length + 4)] ^= np.uint8(1 << int(rng.integers(8)))
                assert not tfr.crcs_ok_in_bulk(bad)
            if n >= 2:
                twice = block.copy()
                col = int(rng.integers(length + 4))
                twice[[0, n - 1], col] ^= np.uint8(0x10)
                assert not tfr.crcs_ok_in_bulk(twice)
    assert tfr.crcs_ok_in_bulk(np.zeros((0, 8), np.uint8))


def test_fast_framing_equals_reference_on_damaged_streams():
    rng = np.random.default_rng(2)
    records = [gi.tfrecord(bytes([9]) + rng.bytes(int(rng.integers(0, 60)))) for _ in range(400)]
    records[5] = gi.tfrecord(b"\x10\x01")  # a record not starting with the lead byte
    clean = b"".join(records)
    cases = [clean, clean[:-3], clean + b"\x01\x02"]
    for _ in range(20):
        buf = bytearray(clean)
        for _ in range(int(rng.integers(1, 4))):
            buf[int(rng.integers(0, len(buf)))] ^= 0xFF
        cases.append(bytes(buf[: int(rng.integers(len(buf) // 2, len(buf) + 1))]))
    for buf in cases:
        ref = tfr.frame_reference(buf, "f")
        fast = tfr.frame_fast(buf, "f", lead_byte=9)
        ok = np.array([tfr.data_crc_ok(buf, int(s), int(n)) for s, n in zip(fast.starts, fast.lengths)], dtype=bool)
        assert fast.starts[ok].tolist() == ref.starts.tolist()
        crc_issues = [tfr.data_crc_issue("f", int(s)) for s in fast.starts[~ok]]
        key = lambda i: (i.offset, i.message)  # noqa: E731
        assert sorted(map(key, fast.issues + crc_issues)) == sorted(map(key, ref.issues))


# -- real writers ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def torch_logdir(tmp_path_factory) -> Path:
    from torch.utils.tensorboard import SummaryWriter

    d = tmp_path_factory.mktemp("torch")
    w = SummaryWriter(str(d))
    for i in range(300):  # crosses the 1- and 2-byte step varints, enough for the bulk path
        w.add_scalar("loss/policy", float(i) / 7, i)
        w.add_scalar("loss/value", (-1.0) ** i * i, i)
    w.add_scalar("loss/policy", float("nan"), 300)
    w.add_scalar("loss/policy", float("inf"), 301)
    for i in range(50):
        w.add_scalar("new/f32", i / 3, i, new_style=True)
        w.add_scalar("new/f64", i / 3, i, new_style=True, double_precision=True)
    w.add_scalars("reward", {"a": 1.0, "b": 2.0}, 5)
    w.add_text("hyperparameters", "|param|value|\n|-|-|\n|learning_rate|0.00025|\n|num_envs|4|\n|anneal_lr|True|\n|env_id|CartPole-v1|")
    w.add_text("samples", "| prompt | response | reward |\n|---|---|---|\n| hi | there | 0.5 |", 7)
    w.add_text("notes", "free text", 3)
    w.add_hparams({"lr": 0.1, "batch": 64, "optim": "adam", "clip": True}, {"hp/metric": 1.0}, run_name="hp")
    w.close()
    return d


def _main_file(d: Path) -> Path:
    (f,) = d.glob("events.out.tfevents.*")
    return f


def test_torch_scalars_lossless_and_equal_to_peers(torch_logdir):
    path = _main_file(torch_logdir)
    run = read_one(path)
    s = series(run)
    assert len(s["loss/policy"]) == 302 and len(s["loss/value"]) == 300
    assert np.isnan(s["loss/policy"].values[300]) and np.isinf(s["loss/policy"].values[301])
    # float32 simple_value widened exactly
    assert s["loss/policy"].values[1] == float(np.float32(1 / 7))
    assert s["new/f32"].values[1] == float(np.float32(1 / 3))
    assert s["new/f64"].values[1] == 1 / 3  # double_precision keeps every digit
    assert s["loss/value"].steps.tolist() == list(range(300))
    assert np.all(s["loss/value"].wall_time > 1e9)
    assert all(x.source == str(path) for x in run.series)
    assert assert_matches_ea(path, run) == 302 + 300 + 50 + 50
    from tbparse import SummaryReader

    df = SummaryReader(str(path)).scalars
    assert len(df) == 602
    assert_same_run(run, tb.read_reference(path)[0])


def test_torch_text_hparams_and_sub_runs(torch_logdir):
    run = read_one(_main_file(torch_logdir))
    assert run.config == {"learning_rate": 0.00025, "num_envs": 4, "anneal_lr": True, "env_id": "CartPole-v1"}
    samples = [t for t in run.texts if t.tag == "samples/text_summary"]
    assert [(t.step, t.prompt, t.text, t.reward) for t in samples] == [(7, "hi", "there", 0.5)]
    notes = [t for t in run.texts if t.tag == "notes/text_summary"]
    assert [(t.step, t.text) for t in notes] == [(3, "free text")]
    hp = read_one(next((torch_logdir / "hp").glob("events.out.tfevents.*")))
    assert hp.config == {"lr": 0.1, "batch": 64.0, "optim": "adam", "clip": 1.0}
    assert [s.tag for s in hp.series] == ["hp/metric"]
    for key, value in (("a", 1.0), ("b", 2.0)):
        sub = read_one(next((torch_logdir / f"reward_{key}").glob("events.out.tfevents.*")))
        assert [(s.tag, s.steps.tolist(), s.values.tolist()) for s in sub.series] == [("reward", [5], [value])]


def test_tensorboardx_writer(tmp_path):
    import tensorboardX

    w = tensorboardX.SummaryWriter(str(tmp_path))
    for i in range(100):
        w.add_scalar("charts/episodic_return", i * 0.5, i * 128)
    w.add_scalar("charts/episodic_return", float("nan"), 100 * 128)
    w.add_text("hyperparameters", "|param|value|\n|-|-|\n|gamma|0.99|", 0)
    w.add_hparams({"lr": 3e-4}, {"m": 0.0}, name="hp")
    w.close()
    path = _main_file(tmp_path)
    run = read_one(path)
    assert assert_matches_ea(path, run) == 101
    assert run.config == {"gamma": 0.99}
    assert_same_run(run, tb.read_reference(path)[0])


# -- the corpus --------------------------------------------------------------------------------------------


CORPUS_FILES = {
    "sb3-chess-ppo-reddyn12": 11,
    "sb3-jobshop-ppo": 1,
    "procgen-starpilot-ppo-conceptppo": 1,
    "rlhfkit-toy-ppo-gpt2": 1,
    "tf1-a2c-minigrid-stagnant": 1,
    "control-hf-trainer-tb-layout": 3,
}


@pytest.mark.corpus
@pytest.mark.parametrize("folder", sorted(CORPUS_FILES))
def test_corpus_files_match_event_accumulator(corpus_dir, folder):
    files = sorted((corpus_dir / folder).rglob("events.out.tfevents.*"))
    assert len(files) == CORPUS_FILES[folder]
    for path in files:
        assert tb.sniff(path, path.read_bytes()[:4096])
        run = read_one(path)
        assert_matches_ea(path, run)
        assert_same_run(run, tb.read_reference(path)[0])


@pytest.mark.corpus
def test_corpus_empty_sb3_runs_give_zero_points_and_a_warning(corpus_dir):
    for name in ("PPO_7", "PPO_8"):
        (path,) = (corpus_dir / "sb3-chess-ppo-reddyn12" / "logs" / name).glob("events.out.tfevents.*")
        assert path.stat().st_size == 40
        run = read_one(path)
        assert run.series == [] and [i.level for i in run.issues] == ["warning"]
        assert "no scalar" in run.issues[0].message


@pytest.mark.corpus
def test_corpus_known_counts(corpus_dir):
    (path,) = (corpus_dir / "sb3-chess-ppo-reddyn12" / "logs" / "PPO_5").glob("events.out.tfevents.*")
    s = series(read_one(path))
    assert len(s["rollout/ep_rew_mean"]) == 2000 and s["rollout/ep_rew_mean"].steps[[0, -1]].tolist() == [50, 100000]
    (tf1,) = (corpus_dir / "tf1-a2c-minigrid-stagnant").rglob("events.out.tfevents.*")
    run = read_one(tf1)  # graph_def and meta_graph_def events are skipped
    assert {t: len(x) for t, x in series(run).items()} == dict.fromkeys(["policy_loss", "entropy", "value_loss", "episode_reward"], 121)
    assert [i.level for i in run.issues] == ["warning"] and "truncated" in run.issues[0].message
    hf = corpus_dir / "control-hf-trainer-tb-layout" / "runs" / "Jun29_06-31-19_6a29ce405cda"
    main = read_one(next(hf.glob("events.out.tfevents.*.0")))
    assert len(series(main)["train/loss"]) == 6
    assert main.config["output_dir"] and isinstance(main.config["model_config"], dict)
    hp = read_one(next((hf / "1719642696.8209522").glob("events.out.tfevents.*")))
    assert hp.series == [] and "learning_rate" in hp.config


# -- damaged and odd files ---------------------------------------------------------------------------------


def _scalar_events(n: int, tag: str = "loss") -> list[bytes]:
    return [gi.event(wall_time=1e9 + i, step=i, values=[gi.simple_value(tag, i / 2)]) for i in range(n)]


def test_truncated_last_record_keeps_everything_before(tmp_path):
    path = write_events(tmp_path / "events.out.tfevents.1.x", _scalar_events(100))
    data = path.read_bytes()
    path.write_bytes(data[:-7])
    run = read_one(path)
    assert len(run.series[0]) == 99
    (issue,) = run.issues
    assert issue.level == "warning" and "truncated" in issue.message
    assert issue.offset == len(data) - len(gi.tfrecord(_scalar_events(100)[-1]))
    assert_same_run(run, tb.read_reference(path)[0])


def test_data_crc_mismatch_skips_only_that_record(tmp_path):
    path = write_events(tmp_path / "events.out.tfevents.1.x", _scalar_events(200))
    data = bytearray(path.read_bytes())
    start = record_offset(path, 151)  # the record of step 150
    data[start + 12 + 5] ^= 0x40  # inside its wall_time
    path.write_bytes(bytes(data))
    run = read_one(path)
    assert 150 not in run.series[0].steps and len(run.series[0]) == 199
    (issue,) = run.issues
    assert issue.offset == start and "checksum" in issue.message and issue.level == "error"
    assert_same_run(run, tb.read_reference(path)[0])


def test_identical_damage_in_two_records_is_caught(tmp_path):
    """The same bit flipped in two records of one length: each record's own CRC catches it
    (an aggregate check over the group, e.g. XOR of CRCs, would let the two errors cancel)."""
    path = write_events(tmp_path / "events.out.tfevents.1.x", _scalar_events(120))
    data = bytearray(path.read_bytes())
    hit = [record_offset(path, i) for i in (41, 61)]  # steps 40 and 60: same length, same tag
    for start in hit:
        data[start + 12 + 3] ^= 0x10  # the same wall_time bit in both
    path.write_bytes(bytes(data))
    run = read_one(path)
    assert len(run.series[0]) == 118 and not {40, 60} & set(run.series[0].steps.tolist())
    assert [i.offset for i in run.issues] == hit
    assert_same_run(run, tb.read_reference(path)[0])


def test_bad_length_crc_resyncs_at_next_record(tmp_path):
    path = write_events(tmp_path / "events.out.tfevents.1.x", _scalar_events(200))
    data = bytearray(path.read_bytes())
    start = record_offset(path, 101)
    rec_len = record_offset(path, 102) - start
    data[start] ^= 0x01  # the length field of step 100's record
    path.write_bytes(bytes(data))
    run = read_one(path)
    assert len(run.series[0]) == 199 and 100 not in run.series[0].steps
    (issue,) = run.issues
    assert issue.offset == start and f"next valid record at byte {start + rec_len}" in issue.message
    assert_same_run(run, tb.read_reference(path)[0])


def test_huge_length_field_is_reported_not_allocated(tmp_path):
    path = write_events(tmp_path / "events.out.tfevents.1.x", _scalar_events(10))
    length = struct.pack("<Q", 1 << 60)
    tail = length + struct.pack("<I", tfr.masked_crc32c(length)) + b"\x09" * 20
    path.write_bytes(path.read_bytes() + tail)
    run = read_one(path)
    assert len(run.series[0]) == 10
    assert "1152921504606846976" in run.issues[0].message
    # the same length with a bad checksum: framing is lost, nothing follows
    path.write_bytes(path.read_bytes()[: -len(tail)] + length + b"\0\0\0\0" + b"\x09" * 20)
    run = read_one(path)
    assert len(run.series[0]) == 10 and "no valid record follows" in run.issues[0].message


def test_unreadable_files_raise_log_read_error(tmp_path):
    empty = tmp_path / "events.out.tfevents.0.empty"
    empty.write_bytes(b"")
    junk = tmp_path / "events.out.tfevents.0.junk"
    junk.write_bytes(np.random.default_rng(3).bytes(100_000))
    short = tmp_path / "events.out.tfevents.0.short"
    short.write_bytes(b"\x01\x02")
    for p in (empty, junk, short):
        with pytest.raises(LogReadError) as exc:
            tb.read(p)
        assert exc.value.path == str(p)
    with pytest.raises(LogReadError, match="cannot read"):
        tb.read(tmp_path / "missing")


def test_only_file_version_gives_an_empty_run(tmp_path):
    path = write_events(tmp_path / "events.out.tfevents.1.x", [])
    run = read_one(path)
    assert run.series == [] and run.issues[0].level == "warning"


def test_non_event_records_are_reported(tmp_path):
    path = write_events(tmp_path / "events.out.tfevents.1.x", _scalar_events(3) + [b"\x0a\x05ab"])
    run = read_one(path)
    assert len(run.series[0]) == 3
    assert "not a valid Event" in run.issues[0].message


def test_restarts_and_session_start_are_kept_and_reported(tmp_path):
    events = _scalar_events(100) + [gi.event(wall_time=2e9, step=40, session_status=1)]
    events += [gi.event(wall_time=2e9 + i, step=i, values=[gi.simple_value("loss", -i)]) for i in range(50, 120)]
    path = write_events(tmp_path / "events.out.tfevents.1.x", events)
    run = read_one(path)
    assert len(run.series[0]) == 170  # nothing purged
    assert run.restarts == [40, 50]
    assert [i.level for i in run.issues] == ["info", "info"]
    assert "SessionLog.START at step 40" in run.issues[0].message
    assert "from 99 to 50" in run.issues[1].message
    assert_same_run(run, tb.read_reference(path)[0])


def test_mutated_files_never_crash(tmp_path):
    """Untrusted bytes: whatever is flipped, reading gives a run with issues or LogReadError."""
    events = _scalar_events(40) + [
        gi.event(wall_time=1e9, step=1, values=[gi.text_value("args", '{"lr": 0.1}'), gi.text_value("t", "| a | b |\n|-|-|\n| 1 | 2 |")]),
        gi.event(wall_time=1e9, step=2, values=[gi.hparams_session_start({"lr": 0.5, "name": "x"}), gi.tensor_scalar("v", 2.0, shape=True)]),
        gi.event(wall_time=1e9, step=3, values=[gi.tensor_scalar("d", 3.0, double=True)]),
    ]
    clean = write_events(tmp_path / "events.out.tfevents.1.clean", events).read_bytes()
    rng = np.random.default_rng(11)
    path = tmp_path / "events.out.tfevents.1.x"
    for _ in range(300):
        data = bytearray(clean)
        for _ in range(int(rng.integers(1, 6))):
            data[int(rng.integers(0, len(data)))] = int(rng.integers(0, 256))
        path.write_bytes(bytes(data))
        for reader in (tb.read, tb.read_reference):
            try:
                reader(path)
            except LogReadError:
                pass


def test_odd_tensors_decode_like_tensorflow():
    """Half, bfloat16, int and tensor_content scalars; multi-element tensors are not scalars."""
    def tensor(dtype: int, body: bytes) -> bytes:
        return gi.len_field(1, b"t") + gi.len_field(8, gi.key(1, 0) + gi.varint(dtype) + body)

    half = tensor(19, gi.len_field(13, gi.varint(0x3C00)))  # 1.0 as float16 bits
    bf16 = tensor(14, gi.len_field(13, gi.varint(0x4040)))  # 3.0 as bfloat16 bits
    i64 = tensor(9, gi.len_field(10, gi.varint(-5)))
    content = tensor(1, gi.len_field(4, struct.pack("<f", 2.5)))
    two = tensor(1, gi.len_field(2, gi.len_field(2, gi.key(1, 0) + gi.varint(2))) + gi.len_field(5, struct.pack("<2f", 1, 2)))
    got = [tb.decode_event(gi.event(step=1, values=[v])).values[0].scalar for v in (half, bf16, i64, content, two)]
    assert got == [1.0, 3.0, -5.0, 2.5, None]


def test_sniff():
    assert tb.sniff(Path("x/events.out.tfevents.123.host"), b"")
    head = gi.tfrecord(gi.event(wall_time=1.0, file_version="brain.Event:2"))
    assert tb.sniff(Path("renamed.bin"), head)
    assert not tb.sniff(Path("renamed.bin"), gi.tfrecord(gi.event(wall_time=1.0, step=3)))
    assert not tb.sniff(Path("a.csv"), b"step,value\n1,2\n")


def test_generator_output_is_read_the_same_by_tbparse(tmp_path):
    from tbparse import SummaryReader

    for style in ("simple", "tensor"):
        path = gi.tensorboard_scalars(tmp_path / style, n_tags=7, n_steps=300, style=style, seed=5)
        reader = SummaryReader(str(path))
        df = reader.scalars if style == "simple" else reader.tensors
        run = read_one(path)
        tags, steps, values, _ = gi.scalar_series(7, 300, 5)
        assert len(df) == 7 * 300 == sum(len(s) for s in run.series)
        for j, tag in enumerate(tags):
            want = df[df.tag == tag]
            np.testing.assert_array_equal(want.step.to_numpy(), steps)
            np.testing.assert_array_equal(want.value.to_numpy(dtype=np.float64), values[:, j].astype(np.float64))
            np.testing.assert_array_equal(series(run)[tag].values, values[:, j].astype(np.float64))


# -- fast path == reference path on randomised files -----------------------------------------------------


def _random_file(path: Path, seed: int, n_events: int = 3000) -> Path:
    """Random tags (shared lengths, unicode), steps (big, negative, going back), values
    (NaN/Inf), simple and tensor scalars, multi-value events, texts, hparams, session logs."""
    rng = np.random.default_rng(seed)
    pool = ["a", "loss", "lozz", "kl/ref", "kl/old", "r\u00e9ward", "x" * 40, "objective/kl", "objective/kx"]
    specials = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1e-45, 3.4e38]
    step = 0
    events: list[bytes] = []
    for _ in range(n_events):
        r = rng.random()
        if r < 0.02:
            step = int(rng.integers(0, max(step, 1)))  # go back
        elif r < 0.03:
            step = int(rng.choice([2**31, 2**40, 2**62, -1, -(2**40)]))
        else:
            step += int(rng.integers(0, 3)) * int(rng.choice([1, 100, 10_000]))
        value = float(rng.choice(specials)) if rng.random() < 0.05 else float(rng.normal())
        wall = float(rng.choice([0.0, 1.7e9 + rng.random()])) if rng.random() < 0.02 else 1.7e9 + len(events)
        tag = str(rng.choice(pool))
        kind = rng.random()
        if kind < 0.6:
            vals = [gi.simple_value(tag, value)]
        elif kind < 0.75:
            vals = [gi.tensor_scalar(tag + "/t", value, double=bool(rng.random() < 0.5), shape=bool(rng.random() < 0.5), metadata=bool(rng.random() < 0.8))]
        elif kind < 0.85:
            vals = [gi.simple_value(str(t), float(rng.normal())) for t in rng.choice(pool, size=int(rng.integers(2, 4)))]
        elif kind < 0.88:
            vals = [gi.text_value("samples", f"text {rng.integers(1000)}")]
        elif kind < 0.89:
            vals = [gi.hparams_session_start({"lr": float(rng.random()), "name": "run"})]
        elif kind < 0.9:
            events.append(gi.event(wall_time=wall, step=step, session_status=int(rng.integers(0, 4))))
            continue
        else:
            vals = [gi.simple_value(tag, value)]
        events.append(gi.event(wall_time=wall, step=step, values=vals))
    return write_events(path, events)


@pytest.mark.parametrize("seed", range(6))
def test_fast_path_equals_reference_on_random_files(tmp_path, seed):
    path = _random_file(tmp_path / "events.out.tfevents.1.rand", seed)
    fast, ref = read_one(path), tb.read_reference(path)[0]
    assert sum(len(s) for s in fast.series) > 2000
    assert_same_run(fast, ref)
    # and after random damage: flipped bytes anywhere, then a cut
    rng = np.random.default_rng(100 + seed)
    data = bytearray(path.read_bytes())
    for _ in range(5):
        data[int(rng.integers(100, len(data)))] ^= 1 << int(rng.integers(0, 8))
    path.write_bytes(bytes(data[: int(rng.integers(len(data) * 3 // 4, len(data)))]))
    assert_same_run(read_one(path), tb.read_reference(path)[0])


def test_equal_length_tags_in_irregular_order(tmp_path):
    """Tags of one length that do not cycle with a fixed period are still told apart."""
    rng = np.random.default_rng(7)
    names = ["kl/aa", "kl/bb", "kl/cc"]
    order = rng.choice(3, size=900)
    events = [gi.event(wall_time=1e9 + i, step=100 + i, values=[gi.simple_value(names[k], float(i))]) for i, k in enumerate(order)]
    path = write_events(tmp_path / "events.out.tfevents.1.x", events)
    run = read_one(path)
    for k, name in enumerate(names):
        want = np.flatnonzero(order == k)
        np.testing.assert_array_equal(series(run)[name].values, want.astype(float))
        np.testing.assert_array_equal(series(run)[name].steps, want + 100)
    assert_same_run(run, tb.read_reference(path)[0])


def test_row_splitting_helpers():
    block = np.array([[1, 2], [3, 4], [1, 2], [3, 4], [1, 2]], dtype=np.uint8)
    assert fastpath._split_equal_rows(block) == [slice(0, None, 2), slice(1, None, 2)]
    block[4] = [5, 6]  # breaks the period: split by value
    parts = fastpath._split_equal_rows(block)
    assert sorted(p.tolist() for p in parts) == [[0, 2], [1, 3], [4]]


def test_fast_path_engages_on_bulk_scalars(tmp_path, monkeypatch):
    """The equivalence tests above only mean something if the bulk decoder does the work."""
    path = _random_file(tmp_path / "events.out.tfevents.1.rand", 0)
    calls = []
    real = fastpath.decode_reference  # what the bulk decoder falls back to, record by record
    monkeypatch.setattr(fastpath, "decode_reference", lambda *a: calls.append(1) or real(*a))
    read_one(path)
    assert 0 < len(calls) < 1000  # of 3000 events (the file_version record and odd ones do fall back)


# -- a million scalars ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_million_scalars_lossless(tmp_path):
    path = gi.tensorboard_scalars(tmp_path, n_tags=50, n_steps=20_000, style="simple", seed=0)
    tags, steps, values, wall = gi.scalar_series(50, 20_000, 0)
    run = read_one(path)
    assert [s.tag for s in run.series] == tags and run.issues == []
    for j, s in enumerate(run.series):
        np.testing.assert_array_equal(s.steps, steps)
        np.testing.assert_array_equal(s.values, values[:, j].astype(np.float64))
        np.testing.assert_array_equal(s.wall_time, wall[:, j])
