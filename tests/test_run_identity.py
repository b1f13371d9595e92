"""Run identity across several inputs (issue 28): ``report expA/ expB/``, each with a ``logs/``
folder, showed two runs called ``logs``, and a baseline written for one project hid the same
findings in the other.  A run's id is unique within a report; a baseline matches only its own
run; the ids of a report on one root are as they were."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_invoke import run_cli
from ppo_doctor.pipeline import root_labels

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"


@pytest.fixture
def projects(tmp_path, monkeypatch) -> Path:
    """Two projects, each with the same unhealthy run in ``logs/``; the working directory holds both."""
    for name in ("expA", "expB"):
        shutil.copytree(SAMPLES / "lr-x100", tmp_path / name / "logs")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def invoke(*args: str):
    return run_cli([*args, "--isolated"])


def runs_of(result) -> list[str]:
    return [r["run"] for r in json.loads(result.stdout)["runs"]]


def test_ids_are_unique_within_a_report(projects):
    both = invoke("report", "expA/", "expB/", "--format", "json", "-q")
    assert both.exit_code == 0, both.output
    assert runs_of(both) == ["expA/logs", "expB/logs"]  # were ["logs", "logs"]
    # inputs that are the runs themselves: told apart by their parents
    assert runs_of(invoke("report", "expA/logs", "expB/logs", "--format", "json", "-q")) == ["expA/logs", "expB/logs"]
    # one root: the ids as they were
    assert runs_of(invoke("report", "expA/", "--format", "json", "-q")) == ["logs"]
    assert runs_of(invoke("report", "expA/logs", "--format", "json", "-q")) == ["logs"]


def test_root_labels():
    assert root_labels(["a/x", "b/x"]) == ["a/x", "b/x"]
    assert root_labels(["/data/expA", "/data/expB/"]) == ["expA", "expB"]
    assert root_labels(["/one/run-a", "/two/deep/run-b"]) == ["run-a", "run-b"]  # no folder of this machine spelled out
    assert root_labels(["s3://bucket/sweep/logs", "/local/sweep/logs"]) == ["bucket/sweep/logs", "local/sweep/logs"]


def test_a_baseline_matches_only_its_own_run(projects):
    written = invoke("check", "expA/", "--write-baseline", "base.json")
    assert written.exit_code == 0, written.output
    doc = json.loads(Path("base.json").read_text())
    assert doc["ppo_doctor_baseline"] == 2 and {e["path"] for e in doc["findings"]} == {"expA/logs"}
    # its own run: every finding known, the gate passes
    own = invoke("check", "expA/", "--baseline", "base.json", "--format", "json")
    assert own.exit_code == 0, own.output
    # the same id ("logs") in another project: nothing hidden (it exited 0, all findings dropped)
    other = invoke("check", "expB/", "--baseline", "base.json", "--format", "json")
    assert other.exit_code == 1, other.output
    assert json.loads(other.stdout)["runs"][0]["findings"]
    # a run spelled another way is still its own run
    assert invoke("check", "./expA", "--baseline", "base.json").exit_code == 0


def test_a_version_1_baseline_still_matches_by_id(projects):
    """Files written before the paths were recorded keep working, with a warning to write them again."""
    invoke("check", "expA/", "--write-baseline", "base.json")
    doc = json.loads(Path("base.json").read_text())
    old = {"ppo_doctor_baseline": 1, "findings": [{k: v for k, v in e.items() if k != "path"} for e in doc["findings"]]}
    Path("old.json").write_text(json.dumps(old))
    result = invoke("check", "expA/", "--baseline", "old.json")
    assert result.exit_code == 0, result.output
    assert "is a version 1 baseline (no run paths)" in result.stderr
