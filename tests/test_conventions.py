"""What users of a tool in the ruff / pytest family reach for first (issue 40): the pre-commit hook
(with the real pre-commit), the GitHub Action's check step (run here as the runner would), the
GitLab Code Quality format, text wrapped to the terminal and whole when piped, --help and explain
in plain text, and a clean dir(ppo_doctor)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from cli_invoke import run_cli
from report_builders import sample_report

import ppo_doctor
from ppo_doctor.cli import COMMANDS
from ppo_doctor.report import RenderOptions, render
from ppo_doctor.report.terminal import visible_width, wrap
from ppo_doctor.rules.registry import all_rules

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_logs"
UNHEALTHY = SAMPLES / "lr-x100" / "trainer_state.json"  # PD101 and others at error
HEALTHY = SAMPLES / "healthy-s1" / "metrics.jsonl"
RST = re.compile(r"``|:[a-z]+:`")


def _env() -> dict[str, str]:
    """This checkout's ppo-doctor first on PATH and PYTHONPATH, as an installed one would be."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, "PATH": path, "PYTHONPATH": str(ROOT)}


def test_dir_of_the_package_lists_its_public_names_only():
    names = dir(ppo_doctor)
    assert names == sorted(ppo_doctor.__all__)
    assert not {"Any", "ModuleType", "TYPE_CHECKING", "importlib", "sys"} & set(names)


def test_the_pre_commit_manifest_is_valid_and_its_hook_runs_the_check(tmp_path, monkeypatch):
    from pre_commit.clientlib import load_manifest

    (hook,) = load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))
    assert hook["id"] == "ppo-doctor" and hook["language"] == "python" and not hook["pass_filenames"]
    # the hook's files pattern picks the logs of every format
    for name in ("metrics.jsonl", "progress.csv", "trainer_state.json", "events.out.tfevents.1700000000.host.0", "run-abc.wandb"):
        assert re.search(hook["files"], f"logs/run/{name}"), name
    assert not re.search(hook["files"], "src/train.py")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "logs").mkdir()
    shutil.copy(HEALTHY, tmp_path / "logs" / "metrics.jsonl")
    command = hook["entry"].split()[1:] + hook["args"] + ["--isolated"]
    assert run_cli(command).exit_code == 0


@pytest.mark.slow
def test_the_pre_commit_hook_fails_a_commit_with_an_unhealthy_run(tmp_path):
    """The real pre-commit, offline: try-repo builds the hook's environment from this checkout
    (its dependencies are found in this interpreter's site-packages, pip never asks an index)."""
    repo = tmp_path / "repo"
    (repo / "logs" / "run").mkdir(parents=True)
    shutil.copy(UNHEALTHY, repo / "logs" / "run" / "trainer_state.json")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "logs"]):
        subprocess.run([*git, *args], cwd=repo, check=True, capture_output=True)
    site = next(p for p in sys.path if p.endswith("site-packages"))
    env = {
        **os.environ, "PYTHONPATH": site, "PRE_COMMIT_HOME": str(tmp_path / "cache"),
        "PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0",  # "0": build with the setuptools here
    }
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "ppo-doctor", "--all-files", "--verbose"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert "ppo-doctor check" in done.stdout and "Failed" in done.stdout
    assert "ppo-doctor: exit 1:" in done.stdout and "PD101" in done.stdout


def _action_step(name: str) -> dict:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    return next(step for step in action["runs"]["steps"] if step.get("name") == name)


def test_the_actions_check_step_writes_sarif_and_fails_on_findings(tmp_path):
    """The action's check command, run by bash as the runner runs it, with the inputs in the
    environment as the action passes them."""
    step = _action_step("Check the training logs")
    assert step["shell"] == "bash" and "${{" not in step["run"]  # inputs arrive as variables only
    (tmp_path / "logs" / "bad").mkdir(parents=True)
    (tmp_path / "logs" / "good").mkdir(parents=True)
    shutil.copy(UNHEALTHY, tmp_path / "logs" / "bad" / "trainer_state.json")
    shutil.copy(HEALTHY, tmp_path / "logs" / "good" / "metrics.jsonl")
    for paths, code in (("logs/good", 0), ("logs/bad logs/good", 1)):
        env = {**_env(), "PATHS": paths, "ARGS": "--isolated", "SARIF_FILE": "out.sarif"}
        done = subprocess.run(["bash", "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == code, done.stderr
        sarif = json.loads((tmp_path / "out.sarif").read_text(encoding="utf-8"))
        assert sarif["version"] == "2.1.0" and bool(sarif["runs"][0]["results"]) == bool(code)
    upload = _action_step("Upload the findings to code scanning")
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@") and upload["if"].startswith("always()")


def test_gitlab_code_quality_report_has_the_fields_gitlab_reads():
    report = sample_report()
    issues = json.loads(render(report, "gitlab"))
    assert len(issues) == sum(len(rr.findings) for rr in report.runs) + len(report.errors)
    for issue in issues:
        assert set(issue) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] in ("info", "minor", "major", "critical", "blocker")
        assert isinstance(issue["location"]["path"], str) and issue["location"]["lines"]["begin"] >= 1
    assert len({i["fingerprint"] for i in issues}) == len(issues)  # GitLab wants them unique
    first = report.runs[0].findings[0]
    assert issues[0]["check_name"] == first.code and first.message in issues[0]["description"]
    # the same report gives the same fingerprints: GitLab tracks a problem across pipelines by them
    assert [i["fingerprint"] for i in json.loads(render(sample_report(), "gitlab"))] == [i["fingerprint"] for i in issues]


def test_gitlab_is_a_format_of_check(tmp_path):
    shutil.copy(UNHEALTHY, tmp_path / "trainer_state.json")
    result = run_cli(["check", str(tmp_path / "trainer_state.json"), "--format", "gitlab", "--isolated"])
    assert result.exit_code == 1
    issues = json.loads(result.stdout)
    assert any(i["check_name"] == "PD101" and i["severity"] == "critical" for i in issues)


def test_text_is_wrapped_to_the_width_asked_and_whole_otherwise():
    report = sample_report()
    whole = render(report, "text", RenderOptions(verbose=1)).splitlines()
    assert max(map(len, whole)) > 60
    wrapped = render(report, "text", RenderOptions(verbose=1, width=60)).splitlines()
    long_words = [line for line in wrapped if len(line) > 60]
    assert all(" " not in line.strip() for line in long_words), long_words  # only a word too long to break
    assert " ".join(" ".join(wrapped).split()) == " ".join(" ".join(whole).split())  # nothing lost


def test_wrapping_counts_colour_codes_as_no_width_and_indents_continuations():
    red = "\x1b[31m" + "word " * 20 + "\x1b[0m"
    lines = wrap("  " + red, 30)
    assert len(lines) > 1 and all(visible_width(line) <= 30 for line in lines)
    assert all(line.startswith("      ") for line in lines[1:])


def test_a_piped_report_is_not_wrapped(tmp_path):
    shutil.copy(UNHEALTHY, tmp_path / "trainer_state.json")
    result = run_cli(["report", str(tmp_path / "trainer_state.json"), "--isolated", "-v"], env={"COLUMNS": "40"})
    assert max(len(line) for line in result.stdout.splitlines()) > 40  # run_cli's stdout is no terminal


@pytest.mark.parametrize("name", ["", *sorted(COMMANDS)])
def test_help_is_plain_text(name):
    shown = run_cli([name, "--help"] if name else ["--help"])
    assert shown.exit_code == 0 and not RST.search(shown.stdout), shown.stdout


def test_explain_is_plain_text_and_names_no_internal_sample_run():
    samples = [p.name for p in SAMPLES.iterdir() if p.is_dir()]
    for rule in all_rules():
        shown = run_cli(["explain", rule.code]).stdout
        assert not RST.search(shown), (rule.code, RST.search(shown))
        assert not [s for s in samples if re.search(rf"\b{re.escape(s)}\b", shown)], rule.code
