"""Discovery: which files make which run, and the orchestrator's merge of a run's files.

Event files are written by tensorboardX (a real writer); trainer states follow transformers'
``save_to_json`` layout (sorted keys, indent 2); W&B run folders get a file with the ``.wandb``
header (discovery only sniffs it); MLflow folders follow the file-store layout.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import pytest

from ppo_doctor.frame import RawRun, RawSeries
from ppo_doctor.ingest import storage as storage_mod
from ppo_doctor.ingest.discover import discover
from ppo_doctor.pipeline import load

WANDB_HEADER = b":W&B" + struct.pack("<H", 0xBEE1) + b"\x00"


@pytest.fixture(scope="module")
def writer():
    """tensorboardX.SummaryWriter (imported once: it is slow to import)."""
    return pytest.importorskip("tensorboardX").SummaryWriter


def tb(writer, folder: Path, scalars: dict[str, list[float]], name_time: int | None = None) -> Path:
    """Write scalars to a new event file in ``folder``; optionally give it a creation time."""
    w = writer(str(folder))
    for tag, values in scalars.items():
        for step, v in enumerate(values):
            w.add_scalar(tag, v, step)
    w.close()
    files = sorted(folder.glob("events.out.tfevents.*"), key=os.path.getmtime)
    f = files[-1]
    if name_time is not None:
        new = folder / f"events.out.tfevents.{name_time}.testhost.{name_time % 97}.0"
        f.rename(new)
        f = new
    return f


def trainer_state(folder: Path, global_step: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    hist = [{"epoch": s / 10, "loss": 1.0 / s, "step": s} for s in range(1, global_step + 1)]
    f = folder / "trainer_state.json"
    f.write_text(json.dumps({"global_step": global_step, "log_history": hist, "logging_steps": 1}, indent=2, sort_keys=True))
    return f


def jsonl(path: Path, n: int = 3, key: str = "reward") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"step": i, key: float(i)}) + "\n" for i in range(n)))
    return path


def ids(sources) -> list[str]:
    return [s.id for s in sources]


def names(source) -> list[str]:
    return [p.name for _, p in source.files]


# ---------------------------------------------------------------------------------------------
def test_event_files_of_one_folder_are_one_run_in_time_order(tmp_path, writer):
    run = tmp_path / "exp"
    late = tb(writer, run, {"loss": [3, 2]}, name_time=1700000100)
    early = tb(writer, run, {"loss": [5, 4]}, name_time=1700000000)
    (run / "progress.csv").write_text("time/total_timesteps,loss\n1,5\n2,4\n")
    sources, issues = discover(tmp_path)
    assert ids(sources) == ["exp"] and not issues
    assert [f for f, _ in sources[0].files] == ["tensorboard", "tensorboard", "csv_logs"]
    assert names(sources[0])[:2] == [early.name, late.name]


def test_hf_output_folder_is_one_run(tmp_path, writer):
    out = tmp_path / "out"
    trainer_state(out, 4)
    trainer_state(out / "checkpoint-2", 2)
    trainer_state(out / "checkpoint-4", 4)
    (out / "checkpoint-4" / "config.json").write_text('{"n_layer": 2, "eos_token_id": [1, 2]}')
    hf = out / "runs" / "Jun29_06-31-19_host"
    tb(writer, hf, {"train/loss": [1.0, 0.5]})
    tb(writer, hf / "1719642696.8209522", {"_hparams_/dummy": [0.0]})
    sources, issues = discover(tmp_path)
    assert ids(sources) == ["out"] and not issues
    files = [p.relative_to(out).as_posix() for _, p in sources[0].files]
    assert files[-1] == "trainer_state.json"  # the output folder's copy: global_step 4 >= 4
    assert sum(f.startswith("runs/") for f in files) == 2 and not any("checkpoint" in f for f in files)


def test_newest_checkpoint_wins_over_an_older_output_copy(tmp_path):
    out = tmp_path / "out"
    trainer_state(out, 2)
    for n in (2, 10, 6):
        trainer_state(out / f"checkpoint-{n}", n)
    (src,) = discover(tmp_path)[0]
    assert [p.relative_to(out).as_posix() for _, p in src.files] == ["checkpoint-10/trainer_state.json"]
    (run,) = load(tmp_path).runs
    assert len(run.frame.series("loss/total")) == 10  # one copy of the history, not 2 + 10 + 6


def test_checkpoint_folder_given_directly_is_read(tmp_path):
    ckpt = tmp_path / "out" / "checkpoint-3"
    trainer_state(ckpt, 3)
    (ckpt / "tokenizer.json").write_text('{"model": {"merges": ["a b"], "vocab": {"a": 0}}}')
    (src,), issues = discover(ckpt)
    assert src.id == "checkpoint-3" and names(src) == ["trainer_state.json"] and not issues


def test_add_scalars_subruns_merge_as_tags(tmp_path, writer):
    """tensorboardX: <logdir>/<main>/<k>/; torch: <logdir>/<main with '/' -> '_'>_<k>/; tag <main>."""
    run = tmp_path / "run"
    tb(writer, run, {"loss": [1.0, 0.9, 0.8]})
    tb(writer, run / "reward" / "parts" / "a", {"reward/parts": [1, 2, 3]})
    tb(writer, run / "reward_parts_b", {"reward/parts": [4, 5, 6]})
    (src,) = discover(tmp_path)[0]
    assert sorted(src.subruns.values()) == ["reward/parts/a", "reward_parts_b"]
    result = load(tmp_path)
    (r,) = result.runs
    assert {"reward/parts/a", "reward/parts/b"} <= set(r.mapping) | set(r.unmapped)
    assert len(r.frame) == 9 and not result.errors


def test_nested_run_folders_that_are_not_add_scalars_stay_apart(tmp_path, writer):
    """SB3: logs/ holds a run's files and PPO_1/, PPO_2/ runs; an empty event file is an error."""
    logs = tmp_path / "logs"
    tb(writer, logs, {"rollout/ep_rew_mean": [1, 2]})
    tb(writer, logs / "PPO_1", {"rollout/ep_rew_mean": [3, 4, 5]})
    tb(writer, logs / "PPO_2", {"train/loss": [1.0]})
    (logs / "PPO_3").mkdir()
    first_record = next((logs / "PPO_1").glob("events*")).read_bytes()[:40]  # only the file_version event
    (logs / "PPO_3" / "events.out.tfevents.1675736630.host.1.1").write_bytes(first_record)
    result = load(tmp_path)
    assert [r.id for r in result.runs] == ["logs", "logs/PPO_1", "logs/PPO_2"]
    assert [len(r.frame) for r in result.runs] == [2, 3, 1]
    assert any("PPO_3" in e.path and "no metric values" in e.message for e in result.errors)


def test_role_folders_of_one_run_merge(tmp_path, writer):
    run = tmp_path / "runs" / "run_1"
    jsonl(run / "logs" / "train.jsonl", key="policy_loss")
    tb(writer, run / "tb", {"policy_loss": [0.0, 1.0, 2.0]})
    other = tmp_path / "runs" / "run_2"
    jsonl(other / "logs" / "train.jsonl")
    jsonl(other / "analysis" / "extra.jsonl")  # not a role folder: these stay two runs
    sources, _ = discover(tmp_path)
    assert ids(sources) == ["runs/run_1", "runs/run_2/analysis", "runs/run_2/logs"]
    assert [f for f, _ in sources[0].files] == ["tensorboard", "jsonl"]
    (r1, *_) = load(tmp_path).runs
    assert len(r1.frame) == 3  # the JSONL copy of policy_loss is not counted twice
    assert any("not counted twice" in i.message for i in r1.issues)


def test_wandb_run_folders_and_latest_run_link(tmp_path):
    wb = tmp_path / "wandb"
    for name in ("run-20230723_121755-abc123", "offline-run-20230413_033614-x199n1yz"):
        folder = wb / name
        (folder / "files").mkdir(parents=True)
        (folder / f"run-{name.rsplit('-', 1)[1]}.wandb").write_bytes(WANDB_HEADER)
        (folder / "files" / "wandb-summary.json").write_text('{"_step": 3, "loss": 0.5}')
    (wb / "latest-run").symlink_to("run-20230723_121755-abc123")
    (wb / "run-20240101_000000-nofile" / "files").mkdir(parents=True)
    sources, issues = discover(tmp_path)
    assert ids(sources) == ["wandb/offline-run-20230413_033614-x199n1yz", "wandb/run-20230723_121755-abc123"]
    assert all([f for f, _ in s.files] == ["wandb_binary"] for s in sources)
    assert [i.path.endswith("nofile") for i in issues] == [True]


def test_mlflow_runs_found_and_trash_ignored(tmp_path):
    def mlrun(folder: Path) -> None:
        (folder / "metrics" / "actor").mkdir(parents=True)
        (folder / "meta.yaml").write_text("run_id: x\nstatus: 3\n")
        (folder / "metrics" / "actor" / "pg_loss").write_text("1700000000000 0.5 1\n")

    root = tmp_path / "mlruns"
    (root / "0").mkdir(parents=True)
    (root / "0" / "meta.yaml").write_text("name: Default\n")
    mlrun(root / "0" / "aaa")
    mlrun(root / "0" / "bbb")
    mlrun(root / ".trash" / "ccc")
    sources, issues = discover(tmp_path)
    assert ids(sources) == ["mlruns/0/aaa", "mlruns/0/bbb"] and not issues
    assert sources[0].files == [("mlflow", root / "0" / "aaa")]
    assert [r.id for r in load(tmp_path).runs] == ["mlruns/0/aaa", "mlruns/0/bbb"]


def test_symlinks_loops_and_outside_targets(tmp_path):
    tree = tmp_path / "tree"
    jsonl(tree / "a" / "m.jsonl")
    (tree / "a" / "loop").symlink_to(tree)  # a loop back to the root
    (tree / "a" / "same.jsonl").symlink_to(tree / "a" / "m.jsonl")  # the same file twice
    outside = jsonl(tmp_path / "elsewhere" / "x.jsonl").parent
    (tree / "ext").symlink_to(outside)
    (tree / "dead.jsonl").symlink_to(tmp_path / "missing.jsonl")
    sources, issues = discover(tree)
    assert ids(sources) == ["a", "ext"]
    assert names(sources[0]) == ["m.jsonl"]
    assert [i.message for i in issues] == ["broken symbolic link"]


def test_single_file_and_unrecognised_file(tmp_path):
    f = jsonl(tmp_path / "metrics.jsonl")
    (src,), issues = discover(f)
    assert src.id == "metrics.jsonl" and src.files == [("jsonl", f)] and not issues
    junk = tmp_path / "notes.txt"
    junk.write_text("hello\n")
    sources, issues = discover(junk)
    assert not sources and "not a recognised log format" in issues[0].message
    assert discover(tmp_path / "nope")[1][0].message == "no such file or directory"


def test_bad_inputs_are_issues_not_crashes(tmp_path, monkeypatch):
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "events.out.tfevents.1.host").write_bytes(b"")
    (tmp_path / "trainer_state.json").mkdir()  # a folder named like a file
    jsonl(tmp_path / "trainer_state.json" / "inner.jsonl")
    bad = os.fsencode(str(tmp_path / "sub")) + b"/r\xffn.jsonl"
    os.makedirs(os.fsencode(str(tmp_path / "sub")))
    with open(bad, "wb") as fh:
        fh.write(b'{"step": 0, "loss": 1}\n')
    locked = jsonl(tmp_path / "locked" / "m.jsonl")
    real_open = open

    def guarded_open(file, *a, **kw):
        if str(file) == str(locked):
            raise PermissionError(13, "Permission denied")
        return real_open(file, *a, **kw)

    # discovery opens files through ingest/storage.py (on local paths: the built-in open)
    monkeypatch.setattr(storage_mod, "open", guarded_open, raising=False)
    sources, issues = discover(tmp_path)
    assert ids(sources) == ["sub", "trainer_state.json"]
    text = " | ".join(f"{i.path}: {i.message}" for i in issues)
    assert text.count("empty file") == 2 and "Permission denied" in text
    assert "r\\xffn.jsonl: file name is not valid UTF-8" in text
    for i in issues:
        i.path.encode("utf-8")  # printable: no lone surrogates left


def test_orchestrator_merge_keeps_priority_and_hf_prefixes(tmp_path, monkeypatch):
    """trainer_state ``loss`` and TensorBoard ``train/loss`` are one metric: the TB copy is kept."""
    from ppo_doctor.ingest import _merge

    into = RawRun()
    formats: list[str] = []
    tb_raw = RawRun(series=[RawSeries("train/loss", [1, 2], [1.0, 0.5], source="tb")], eval_series=[RawSeries("eval/loss", [2], [0.9], source="tb")])
    st_raw = RawRun(
        series=[RawSeries("loss", [1, 2], [1.0, 0.5], source="ts"), RawSeries("grad_norm", [1, 2], [1.0, 1.0], source="ts")],
        eval_series=[RawSeries("eval_loss", [2], [0.9], source="ts")],
        config={"global_step": 2},
    )
    for fmt, raw in (("tensorboard", tb_raw), ("trainer_state", st_raw)):
        _merge(into, raw, fmt, formats)
        formats.append(fmt)
    assert [s.tag for s in into.series] == ["train/loss", "grad_norm"]
    assert [s.tag for s in into.eval_series] == ["eval/loss"]
    assert into.config == {"global_step": 2} and len(into.issues) == 2


def test_a_csv_with_a_bare_carriage_return_in_a_cell_is_no_sweep_table(tmp_path):
    """csv.Error ("new-line character seen in unquoted field") found by
    test_hostile_properties: the file is simply not a sweep table, never a traceback."""
    from ppo_doctor.ingest.sweep_table import read_sweep_table

    path = tmp_path / "t.csv"
    path.write_bytes(b"a,b\n1,2\rx\n3,4\n")
    assert read_sweep_table(path) is None
