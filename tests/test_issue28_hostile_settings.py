"""Issue 28, "the new surfaces": hostile config and baseline files (deep nesting, huge integers,
wrong types) are a one-line usage error naming the file with exit 2, never a traceback with
exit 1 (the "findings" code CI reads)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ppo_doctor.exits import EXIT_ERROR

SAMPLE = Path(__file__).resolve().parents[1] / "sample_logs" / "healthy-s1"
DEEP = 10_000
HUGE = "9" * 10_000

CONFIGS = {
    "nested-array": f"select = {'[' * DEEP}{']' * DEEP}\n",
    "nested-tables": "x = " + "{a = " * DEEP + "1" + "}" * DEEP + "\n",
    "huge-integer": f"jobs = {HUGE}\n",
    "huge-rule-parameter": f"[rules.kl-coef-runaway]\ngrowth = {'9' * 4000}\n",
    "wrong-types": 'jobs = "many"\nselect = 5\nrules = 3\n',
}

BASELINES = {
    "nested": "[" * DEEP + "]" * DEEP,
    "huge-integer": '{"ppo_doctor_baseline": ' + HUGE + ', "findings": []}',
    "wrong-types": json.dumps({"ppo_doctor_baseline": 2, "findings": 5}),
    "not-an-object": "[1, 2]",
}


def _check(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    run = cwd / "run"
    if not run.exists():
        shutil.copytree(SAMPLE, run)
    cmd = [sys.executable, "-m", "ppo_doctor.cli", "check", "run", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)


def _one_line_error(result: subprocess.CompletedProcess[str], name: str) -> None:
    assert result.returncode == EXIT_ERROR, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ppo-doctor: error: ") and name in lines[0], lines
    assert len(lines[0]) < 1000


@pytest.mark.parametrize("case", sorted(CONFIGS))
@pytest.mark.parametrize("file", ["ppo-doctor.toml", "pyproject.toml"])
def test_hostile_config_file_exits_2(tmp_path, case, file):
    text = CONFIGS[case]
    if file == "pyproject.toml":
        text = "[tool.ppo-doctor]\n" + text.replace("[rules.", "[tool.ppo-doctor.rules.")
    (tmp_path / file).write_text(text, encoding="utf-8")
    _one_line_error(_check(tmp_path), file)  # found by the search from the working folder
    _one_line_error(_check(tmp_path, "--config", file), file)


@pytest.mark.parametrize("case", sorted(BASELINES))
def test_hostile_baseline_exits_2(tmp_path, case):
    (tmp_path / "base.json").write_text(BASELINES[case], encoding="utf-8")
    _one_line_error(_check(tmp_path, "--isolated", "-q", "--baseline", "base.json"), "base.json")
