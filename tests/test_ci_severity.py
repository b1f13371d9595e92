"""CI formats say what the report says (issue 28): an info note stays a note in GitHub
annotations (``::notice``) and SARIF (``note``), skipped sweep tables and routine reader notes
are not warnings; SARIF places a log reached through a symlink inside the repository where the
GitHub annotation places it; a run whose findings a baseline all knows is not shown UNHEALTHY
with no finding."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from pathlib import Path

import pytest
from cli_invoke import run_cli

import hostile_inputs as h
from ppo_doctor.frame import ReadIssue
from ppo_doctor.report import RenderOptions
from ppo_doctor.report import github, sarif
from ppo_doctor.results import Report
from report_builders import healthy_report, warning_finding

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"


def invoke(*args: str):
    return run_cli([*args, "--isolated"])


def annotations(text: str) -> list[tuple[str, str]]:
    """(command, title) of each workflow command line."""
    return [(m[1], m[2]) for m in re.finditer(r"^::(\w+) [^\n]*?title=([^,:\n]*)", text, re.M)]


def test_info_finding_and_notes_keep_their_severity():
    rr = healthy_report()
    rr.findings = [dataclasses.replace(warning_finding(), severity="info", code="PD703", name="clip-active")]
    rr.run.issues = [ReadIssue("run/progress.csv", "steps go back 81 time(s): SB2 counts per update", level="info")]
    report = Report(
        runs=[rr],
        errors=[
            ReadIssue("t/summary.csv", "sweep table (one row per run), not a training log: skipped", level="info"),
            ReadIssue("t/x.jsonl", "line 3 skipped", level="warning"),
            ReadIssue("t/y.csv", "malformed CSV"),
        ],
    )
    text = github.render(report, RenderOptions())
    kinds = [line.split(" ", 1)[0] for line in text.splitlines()]
    assert kinds == ["::notice", "::notice", "::warning", "::error"]  # the finding, then the read problems
    assert "title=ppo-doctor: note" in text.splitlines()[1].replace("%3A", ":")
    doc = sarif.to_sarif(report)
    (result,) = doc["runs"][0]["results"]
    assert result["level"] == "note"
    levels = [n["level"] for n in doc["runs"][0]["invocations"][0]["toolExecutionNotifications"]]
    assert levels == ["note", "warning", "error", "note"]  # read problems, then the run's reader note


def test_a_skipped_sweep_table_is_a_note_in_every_ci_format(tmp_path, monkeypatch):
    (tmp_path / "run").mkdir()
    h.jsonl(30).write(tmp_path / "run" / "metrics.jsonl")
    rows = ["run,kl"] + [f"kl{c}_seed{s},{c}" for s in (1, 2, 3) for c in (0.02, 0.2)]
    (tmp_path / "sweep.csv").write_text("\n".join(rows) + "\n")
    monkeypatch.chdir(tmp_path)
    gh = invoke("check", ".", "--format", "github", "--fail-on", "never")
    (table,) = [line for line in gh.stdout.splitlines() if "sweep.csv" in line]
    assert table.startswith("::notice ") and "sweep table" in table
    assert gh.exit_code == 0  # a note is not an unreadable log
    doc = json.loads(invoke("check", ".", "--format", "sarif", "--fail-on", "never").stdout)
    notes = [n for n in doc["runs"][0]["invocations"][0]["toolExecutionNotifications"] if "sweep table" in n["message"]["text"]]
    assert [n["level"] for n in notes] == ["note"]


@pytest.fixture
def linked_repo(tmp_path, monkeypatch) -> Path:
    """A repository whose ``logs/run`` is a symlink to an unhealthy JSONL run kept outside it."""
    outside = tmp_path / "data" / "run"
    outside.mkdir(parents=True)
    h.jsonl(60).write(outside / "metrics.jsonl")
    repo = tmp_path / "repo"
    (repo / "logs").mkdir(parents=True)
    (repo / "logs" / "run").symlink_to(outside, target_is_directory=True)
    monkeypatch.chdir(repo)
    return repo


def test_sarif_places_a_symlinked_log_where_the_annotation_does(linked_repo):
    gh = invoke("check", "logs", "--format", "github")
    files = {m[1] for m in re.finditer(r"file=([^,]+)", gh.stdout)}
    assert files == {"logs/run/metrics.jsonl"}, gh.stdout
    doc = json.loads(invoke("check", "logs", "--format", "sarif").stdout)
    run = doc["runs"][0]
    locations = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run["results"]]
    assert locations and all(loc == {"uri": "logs/run/metrics.jsonl", "uriBaseId": sarif.SRCROOT} for loc in locations)
    assert sarif.LOGROOT not in run["originalUriBaseIds"]  # it pointed outside: LOGROOT data/run/...


def test_every_finding_baselined_is_not_unhealthy_with_no_finding(tmp_path, monkeypatch):
    shutil.copytree(SAMPLES / "lr-x100", tmp_path / "logs" / "bad")
    shutil.copytree(SAMPLES / "healthy-s1", tmp_path / "logs" / "good")
    monkeypatch.chdir(tmp_path)
    assert invoke("check", "logs", "--write-baseline", "base.json").exit_code == 0
    known = len(json.loads(Path("base.json").read_text())["findings"])
    result = invoke("check", "logs", "--baseline", "base.json")
    assert result.exit_code == 0, result.output
    (row,) = [line for line in result.stdout.splitlines() if line.strip().startswith("bad ")]
    assert "UNHEALTHY" in row and f"{known} known (baseline)" in row  # the findings column read "-"
    assert f"  {known} known finding(s) from the baseline not listed" in result.stdout.splitlines()
    for fmt in ("markdown", "html"):  # their tables say the same
        assert f"{known} known (baseline)" in invoke("check", "logs", "--baseline", "base.json", "--format", fmt).stdout
