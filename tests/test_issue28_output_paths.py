"""Issue 28, "the new surfaces": an output path that is one of the files a command reads or would
read is refused with a usage error (exit 2) before anything is written; ``report DIR -o
DIR/metrics.jsonl`` used to replace the training log it had just read."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from cli_invoke import run_cli
from ppo_doctor.exits import EXIT_ERROR, EXIT_OK

SAMPLE = Path(__file__).resolve().parents[1] / "sample_logs"


@pytest.fixture
def logs(tmp_path, monkeypatch):
    for name in ("healthy-s1", "lr-x100"):
        shutil.copytree(SAMPLE / name, tmp_path / name)
    (tmp_path / "ppo-doctor.toml").write_text("", encoding="utf-8")
    (tmp_path / "linked.jsonl").symlink_to(tmp_path / "healthy-s1" / "metrics.jsonl")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    "args",
    [
        ["report", "healthy-s1", "-o", "healthy-s1/metrics.jsonl"],
        ["report", "healthy-s1/metrics.jsonl", "-o", "healthy-s1/metrics.jsonl"],
        ["report", ".", "-o", "linked.jsonl"],  # a symlink to a log read
        ["report", "healthy-s1", "-o", "healthy-s1/config.json"],  # hyperparameters read beside the log
        ["report", "healthy-s1", "-o", "ppo-doctor.toml"],  # the config file
        ["check", "healthy-s1", "lr-x100", "-o", "lr-x100/trainer_state.json"],
        ["check", "healthy-s1", "--write-baseline", "healthy-s1/trainer_state.json"],
        ["sweep", ".", "-o", "healthy-s1/samples.jsonl"],
        ["compare", "healthy-s1", "lr-x100", "-o", "lr-x100/config.json"],
    ],
    ids=lambda a: " ".join(a),
)
def test_output_that_is_an_input_is_refused(logs, args):
    before = _snapshot(logs)
    result = run_cli(args)
    assert result.exit_code == EXIT_ERROR, result.output
    assert "is one of the files this command reads" in result.output
    assert _snapshot(logs) == before


def test_output_beside_the_logs_is_still_written(logs):
    result = run_cli(["report", "healthy-s1", "--format", "json", "-o", "healthy-s1/ppo-doctor.json"])
    assert result.exit_code == EXIT_OK, result.output
    assert os.path.getsize(logs / "healthy-s1" / "ppo-doctor.json") > 0
