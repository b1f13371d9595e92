"""``ppo-doctor watch`` and its followers (ppo_doctor/ingest/follow.py).

The end-to-end tests run a real writer in a subprocess (tests/live_writer.py: torch's
SummaryWriter, or a JSONL file) and ``ppo-doctor watch`` in another, and check that the first
error finding is printed while the writer is still writing, and check's exit codes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks.gen_inputs import tensorboard_scalars
from ppo_doctor.ingest.readers import jsonl, trainer_state
from ppo_doctor.ingest.tensorboard import reader as tensorboard
from ppo_doctor.ingest.follow import JsonlTail, RereadTail, TensorBoardTail, tail_for
from ppo_doctor.watch import Watcher

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}


# -- followers ----------------------------------------------------------------------------------
@pytest.mark.parametrize("vector_from", [1 << 20, 0])
def test_tensorboard_tail_read_in_pieces_equals_one_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, vector_from: int) -> None:
    """The file copied in 40 pieces cut at random bytes (mid-record too), polled after each;
    with ``vector_from=0`` every piece is framed by the vectorised walker first."""
    from ppo_doctor.ingest import follow

    monkeypatch.setattr(follow, "_VECTOR_FRAMING_BYTES", vector_from)
    src = tensorboard_scalars(tmp_path / "src", n_tags=12, n_steps=400)
    data = src.read_bytes()
    dst = tmp_path / "grow" / src.name
    dst.parent.mkdir()
    tail = TensorBoardTail(dst)
    cuts = sorted(np.random.default_rng(0).integers(0, len(data), 40).tolist()) + [len(data)]
    prev = 0
    with open(dst, "wb") as fh:
        for c in cuts:
            fh.write(data[prev:c])
            fh.flush()
            prev = c
            tail.poll()
            # a record cut by the end of the file is waited for, never reported as damage
            runs = tail.raw_runs()
            assert runs is None or not [i for r in runs for i in r.issues if i.level == "error"]
    (want,) = tensorboard.read(src)
    (got,) = tail.raw_runs() or []
    assert [s.tag for s in got.series] == [s.tag for s in want.series]
    for a, b in zip(got.series, want.series):
        np.testing.assert_array_equal(a.steps, b.steps)
        np.testing.assert_array_equal(a.values, b.values)
        np.testing.assert_array_equal(a.wall_time, b.wall_time)
    assert got.issues == want.issues and got.restarts == want.restarts


def test_a_poll_reads_only_what_was_appended(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ppo_doctor.ingest import follow

    src = tensorboard_scalars(tmp_path / "src", n_tags=5, n_steps=200)
    data = src.read_bytes()
    dst = tmp_path / src.name
    dst.write_bytes(data[: len(data) // 2])
    tail = TensorBoardTail(dst)
    tail.poll()
    decoded: list[int] = []
    real = follow.decode_records
    monkeypatch.setattr(follow, "decode_records", lambda d, p, b: decoded.append(len(d)) or real(d, p, b))
    with open(dst, "ab") as fh:
        fh.write(data[len(data) // 2 :])
    tail.poll()
    assert tail.poll() is False  # nothing new
    assert len(decoded) == 1 and decoded[0] <= len(data) - len(data) // 2 + 200


def test_damage_in_the_middle_is_reported_by_the_reader(tmp_path: Path) -> None:
    src = tensorboard_scalars(tmp_path / "src", n_tags=3, n_steps=50)
    data = bytearray(src.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 8] = b"\xff" * 8  # breaks a header or a record's data
    dst = tmp_path / src.name
    dst.write_bytes(bytes(data))
    tail = TensorBoardTail(dst)
    tail.poll()
    (got,) = tail.raw_runs() or []
    (want,) = tensorboard.read(dst)
    assert [i.message for i in got.issues if i.level == "error"] == [i.message for i in want.issues if i.level == "error"] != []


def test_jsonl_tail_waits_for_the_newline_and_equals_one_read(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    lines = [json.dumps({"step": s, "objective/kl": 0.1 * s, "objective/scores": float("nan") if s == 7 else s / 10}) for s in range(1, 31)]
    text = "\n".join(lines) + "\n"
    tail = JsonlTail(path)
    with open(path, "w") as fh:
        for i in range(0, len(text), 37):
            fh.write(text[i : i + 37])
            fh.flush()
            tail.poll()
            runs = tail.raw_runs()
            assert runs is None or not [x for r in runs for x in r.issues if x.level == "error"]
    (got,) = tail.raw_runs() or []
    (want,) = jsonl.read(path)
    assert {s.tag: (s.steps.tolist(), s.values.tolist()) for s in got.series}.keys() == {s.tag for s in want.series}
    for a, b in zip(sorted(got.series, key=lambda s: s.tag), sorted(want.series, key=lambda s: s.tag)):
        np.testing.assert_array_equal(a.steps, b.steps)
        np.testing.assert_array_equal(a.values, b.values)


def test_a_rewritten_trainer_state_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "trainer_state.json"

    def save(n: int) -> None:
        state = {"global_step": n, "log_history": [{"step": s, "loss": 1.0 / s, "grad_norm": 0.5} for s in range(1, n + 1)]}
        path.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n")

    tail = tail_for(path, "trainer_state")
    assert isinstance(tail, RereadTail)
    save(10)
    assert tail.poll() is True
    path.write_text(path.read_text()[:-40])  # a save caught half-way: keep the last good read
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 1_000_000))
    tail.poll()
    (run,) = tail.raw_runs() or []
    assert max(len(s) for s in run.series) == 10 and not [i for i in run.issues if i.level == "error"]
    save(20)
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 2_000_000))
    assert tail.poll() is True
    (run,) = tail.raw_runs() or []
    (want,) = trainer_state.read(path)
    assert max(len(s) for s in run.series) == 20 == max(len(s) for s in want.series)


def test_watcher_announces_each_finding_once_and_exits_like_check(tmp_path: Path) -> None:
    """In process, a JSONL log grown in steps: PD101 is said once, the end says exit 1."""
    path = tmp_path / "run" / "metrics.jsonl"
    path.parent.mkdir()
    events: list[dict[str, Any]] = []
    now = [0.0]
    watcher = Watcher(tmp_path, {"select": [], "ignore": [], "rules": {}, "aliases": {}}, events.append, idle=5.0, clock=lambda: now[0])
    rng = np.random.default_rng(1)
    with open(path, "w") as fh:
        for step in range(1, 121):
            kl = 0.5 + 0.05 * rng.normal() + (2.0 * (step - 30) if step >= 30 else 0.0)
            fh.write(json.dumps({"step": step, "objective/kl": kl, "objective/scores": 0.2 + step / 200}) + "\n")
            if step % 10 == 0:
                fh.flush()
                now[0] += 1.0
                watcher.poll()
    now[0] += 1.0
    watcher.poll()
    assert not watcher.all_idle()
    now[0] += 10.0
    assert watcher.all_idle()
    code = watcher.finish("idle", "error")
    kinds = [e["event"] for e in events]
    assert kinds[0] == "run" and kinds[-1] == "end" and code == 1 == events[-1]["exit_code"]
    pd101 = [e for e in events if e["event"] == "finding" and e["finding"]["code"] == "PD101"]
    assert pd101 and pd101[0]["status"] == "new" and pd101[0]["step"] < 120
    states = [(e["finding"]["start_step"], e["finding"]["severity"]) for e in pd101]
    assert len(states) == len(set(states))  # never the same (onset, severity) twice


def test_exec_gets_the_finding_on_stdin(tmp_path: Path) -> None:
    from ppo_doctor.watch import run_exec

    out = tmp_path / "got.json"
    run_exec(f"{sys.executable} -c \"import sys; open(sys.argv[1], 'w').write(sys.stdin.read())\" {out}", {"event": "finding", "run": "r"})
    assert json.loads(out.read_text()) == {"event": "finding", "run": "r"}


# -- end to end: a real writer in one process, watch in another ----------------------------------
def _watch_live(tmp_path: Path, fmt: str, kind: str, steps: int, sleep: float) -> tuple[list[dict[str, Any]], list[bool], int]:
    """Events of ``watch --format jsonl`` and, per finding event, whether the writer was still running."""
    out = tmp_path / "run"
    writer = subprocess.Popen([sys.executable, str(HERE / "live_writer.py"), fmt, str(out), kind, str(steps), str(sleep)], env=_env(), stdout=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not (out.is_dir() and any(out.iterdir())) and time.time() < deadline:  # torch's import
        time.sleep(0.05)
    watch = subprocess.Popen(
        [sys.executable, "-m", "ppo_doctor.cli", "watch", str(tmp_path), "--format", "jsonl", "--interval", "0.2", "--idle", "4", "--isolated"],
        env=_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    events: list[dict[str, Any]] = []
    writing: list[bool] = []

    def read() -> None:
        assert watch.stdout is not None
        for line in watch.stdout:
            events.append(json.loads(line))
            writing.append(writer.poll() is None)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        writer.wait(timeout=240)
        code = watch.wait(timeout=240)
    finally:
        for p in (writer, watch):
            if p.poll() is None:
                p.kill()
        reader.join(timeout=10)
    assert writer.returncode == 0
    return events, writing, code


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["tensorboard", "jsonl"])
def test_watch_prints_the_first_error_while_the_writer_writes(tmp_path: Path, fmt: str) -> None:
    if fmt == "tensorboard":
        pytest.importorskip("torch.utils.tensorboard")
    events, writing, code = _watch_live(tmp_path, fmt, "kl-blowup", 120, 0.05)
    errors = [i for i, e in enumerate(events) if e["event"] == "finding" and e["finding"]["severity"] == "error"]
    assert errors, events
    assert writing[errors[0]], "the first error finding came only after the writer finished"
    assert events[errors[0]]["finding"]["symptom"] == "kl_blowup"
    assert events[-1]["event"] == "end" and events[-1]["exit_code"] == 1 == code


@pytest.mark.slow
def test_watch_on_a_healthy_writer_exits_0(tmp_path: Path) -> None:
    pytest.importorskip("torch.utils.tensorboard")
    events, _, code = _watch_live(tmp_path, "tensorboard", "healthy", 60, 0.02)
    assert code == 0 == events[-1]["exit_code"]
    assert events[-1]["runs"][0]["verdict"] == "healthy"
    assert not [e for e in events if e["event"] == "finding" and e["finding"]["severity"] == "error"]


def test_one_training_is_one_run_when_its_trainer_state_appears(tmp_path: Path, sample_logs: Path) -> None:
    """A Trainer writes TensorBoard under ``runs/<date>_<host>/`` while it trains and its
    trainer_state.json into ``output_dir`` at the end: discovery then groups both as one run
    named after ``output_dir``.  The watcher follows it as the same training: no second "run"
    event, no finding said twice."""
    import shutil

    out = tmp_path / "out"
    tb = out / "runs" / "Dec02_05-00-00_host"
    tb.mkdir(parents=True)
    src = sample_logs / "kl-coef-zero" / "events.out.tfevents.1700000000.ppo-doctor.0"
    shutil.copy(src, tb / src.name)
    events: list[dict[str, Any]] = []
    now = [0.0]
    watcher = Watcher(tmp_path, {"select": [], "ignore": [], "rules": {}, "aliases": {}}, events.append, idle=5.0, clock=lambda: now[0])
    for _ in range(2):  # a warning is said once two polls hold it
        now[0] += 1.0
        watcher.poll()
    said = [(e["finding"]["code"], e["finding"]["metric"]) for e in events if e["event"] == "finding"]
    assert ("PD101", "kl/ref") in said
    state = {"global_step": 120, "max_steps": 120, "log_history": [{"step": s, "loss": 0.1} for s in range(1, 121)]}
    (out / "trainer_state.json").write_text(json.dumps(state, indent=2))
    for _ in range(2):
        now[0] += 1.0
        watcher.poll()
    runs = [e["run"] for e in events if e["event"] == "run"]
    assert runs == ["out"]  # named after output_dir from its first line
    again = [(e["finding"]["code"], e["finding"]["metric"]) for e in events if e["event"] == "finding"]
    assert again.count(("PD101", "kl/ref")) == 1
    assert list(watcher.runs) == ["out"]


def test_a_trainer_output_folder_names_its_run_before_trainer_state_appears(tmp_path: Path) -> None:
    """Discovery (issue 41): ``out/runs/<date>_<host>/`` is the run ``out`` while it trains, with
    only checkpoints beside it too, and when the walk starts inside ``out``; two trainings into one
    ``output_dir`` stay apart; a walk started at ``out/runs`` cannot see ``out`` and keeps the folder's name."""
    from ppo_doctor.ingest.discover import discover

    def tb(folder: Path) -> None:
        tensorboard_scalars(folder, n_tags=2, n_steps=20)

    tb(tmp_path / "a" / "out" / "runs" / "Dec06_01-20-30_vm")
    tb(tmp_path / "b" / "out" / "runs" / "Dec06_01-20-30_vm")
    (tmp_path / "b" / "out" / "checkpoint-10").mkdir()
    (tmp_path / "b" / "out" / "checkpoint-10" / "trainer_state.json").write_text(json.dumps({"global_step": 10, "log_history": [{"step": 10, "loss": 0.5}]}))
    tb(tmp_path / "c" / "out" / "runs" / "Dec06_01-20-30_vm")
    tb(tmp_path / "c" / "out" / "runs" / "Dec06_02-00-00_vm")
    ids = lambda root: [s.id for s in discover(root)[0]]  # noqa: E731
    assert ids(tmp_path / "a") == ["out"]
    assert ids(tmp_path / "a" / "out") == ["out"]
    assert ids(tmp_path / "b") == ["out"]
    assert ids(tmp_path / "c") == ["out/runs/Dec06_01-20-30_vm", "out/runs/Dec06_02-00-00_vm"]
    assert ids(tmp_path / "a" / "out" / "runs") == ["Dec06_01-20-30_vm"]


# -- issue 28: what the idle clock counts, files followed from a new start, names escaped ----------
def _watcher(root: Path, events: list[dict[str, Any]], clock: list[float], idle: float = 5.0) -> Watcher:
    return Watcher(root, {"select": [], "ignore": [], "rules": {}, "aliases": {}}, events.append, idle=idle, clock=lambda: clock[0])


def test_a_record_written_slowly_is_activity(tmp_path: Path) -> None:
    path = tmp_path / "run" / "metrics.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps({"step": s, "objective/kl": 0.1}) + "\n" for s in range(1, 30)))
    now = [0.0]
    watcher = _watcher(tmp_path, [], now)
    watcher.poll()
    line = json.dumps({"step": 30, "objective/kl": 0.1}) + "\n"
    with open(path, "a") as fh:
        for ch in line[:-1]:  # one byte every 2 s: 20+ s for a record, idle is 5 s
            fh.write(ch)
            fh.flush()
            now[0] += 2.0
            watcher.poll()
            assert not watcher.all_idle()
    now[0] += 6.0
    assert watcher.all_idle()


def test_time_spent_inside_a_poll_is_not_idleness(tmp_path: Path) -> None:
    """A slow --exec notifier, or a first poll of many runs, takes longer than --idle."""
    path = tmp_path / "run" / "metrics.jsonl"
    path.parent.mkdir()
    rows = [{"step": s, "objective/kl": 0.5 + (3.0 * (s - 20) if s > 20 else 0.0), "objective/scores": 0.2} for s in range(1, 80)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    now = [0.0]
    events: list[dict[str, Any]] = []

    def slow(event: dict[str, Any]) -> None:
        events.append(event)
        now[0] += 60.0  # the notifier takes a minute

    watcher = Watcher(tmp_path, {"select": [], "ignore": [], "rules": {}, "aliases": {}}, slow, idle=5.0, clock=lambda: now[0])
    watcher.poll()
    assert [e for e in events if e["event"] == "finding"] and now[0] >= 60.0
    assert not watcher.all_idle()  # the minute was spent notifying, not waiting
    now[0] += 6.0
    assert watcher.all_idle()


def test_a_truncated_and_rewritten_log_is_followed_from_its_new_start(tmp_path: Path) -> None:
    path = tmp_path / "run" / "metrics.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps({"step": s, "objective/kl": 0.1, "objective/scores": 0.5}) + "\n" for s in range(1, 60)))
    tail = JsonlTail(path)
    assert tail.poll()
    path.write_text("".join(json.dumps({"step": s, "objective/kl": 9.0, "objective/scores": 0.1}) + "\n" for s in range(1, 11)))
    assert tail.poll()
    (run,) = tail.raw_runs() or []
    kl = next(s for s in run.series if s.tag == "objective/kl")
    assert kl.steps.tolist() == list(range(1, 11)) and set(kl.values.tolist()) == {9.0}
    # rotated: a new file under the same name, as large as the old one
    rotated = tmp_path / "new.jsonl"
    rotated.write_text("".join(json.dumps({"step": s, "objective/kl": 4.0, "objective/scores": 0.1}) + "\n" for s in range(100, 160)))
    os.replace(rotated, path)
    assert tail.poll()
    (run,) = tail.raw_runs() or []
    assert next(s for s in run.series if s.tag == "objective/kl").steps[0] == 100


def test_watch_escapes_names_as_report_does() -> None:
    from ppo_doctor.cli.watch import terminal_line

    evil = "run\x1b]0;pwned\x07\nFORGED: healthy"
    for event in (
        {"event": "run", "run": evil, "path": "/x/" + evil},
        {"event": "finding", "run": evil, "step": 3, "status": "new", "text": "ERROR on tag\x1b[2J" + evil},
        {"event": "end", "runs": [{"run": evil, "verdict": "healthy", "verdict_reason": evil}], "errors": [{"path": evil, "message": evil}], "reason": "idle", "exit_code": 0},
    ):
        line = terminal_line(event) or ""
        assert "\x1b" not in line and "\x07" not in line
        assert all(not ln.startswith("FORGED") for ln in line.split("\n"))
