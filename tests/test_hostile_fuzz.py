"""Short, bounded coverage-guided fuzzing of every reader with atheris (issue 7).

The targets are ``tests/fuzz/fuzz_<reader>.py`` (see ``tests/fuzz/harness.py``); each runs in
its own process because libFuzzer owns the process.  atheris is the optional ``[fuzz]`` extra:
without it these tests are skipped.  A crash makes libFuzzer exit non-zero and save the input
as ``crash-*`` under the artifact folder, which the failure message lists.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

FUZZ_DIR = Path(__file__).resolve().parent / "fuzz"
TARGETS = sorted(p.stem[len("fuzz_") :] for p in FUZZ_DIR.glob("fuzz_*.py"))

pytestmark = pytest.mark.skipif(importlib.util.find_spec("atheris") is None, reason="atheris not installed (pip install -e .[fuzz])")


def run_target(name: str, tmp_path: Path, *flags: str) -> subprocess.CompletedProcess:
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    proc = subprocess.run(
        [sys.executable, str(FUZZ_DIR / f"fuzz_{name}.py"), f"-artifact_prefix={artifacts}/", *flags],
        capture_output=True, text=True, timeout=180, cwd=tmp_path,
    )
    crashes = sorted(p.name for p in artifacts.iterdir())
    assert proc.returncode == 0 and not crashes, f"{name}: exit {proc.returncode}, inputs saved: {crashes}\n{proc.stderr[-3000:]}"
    assert "Done" in proc.stderr  # libFuzzer's summary: the loop really ran
    return proc


def test_every_reader_has_a_fuzz_target():
    assert set(TARGETS) >= {"tensorboard", "wandb_binary", "jsonl", "csv_logs", "trainer_state", "verl_console", "hf_console", "sb3_console", "mlflow", "wandb_csv",
                            "deepspeed_chat_console"}


def test_jsonl_target_runs_bounded(tmp_path):
    """The quick suite runs one target a few hundred inputs: the harness and seeds work."""
    run_target("jsonl", tmp_path, "-atheris_runs=300")


@pytest.mark.slow
@pytest.mark.parametrize("name", TARGETS)
def test_fuzz_target_for_a_few_seconds(tmp_path, name):
    run_target(name, tmp_path, "-max_total_time=4", "-atheris_runs=20000")
