"""The typed-API promise (``py.typed``): ``mypy`` with the ``[tool.mypy]`` config of
pyproject.toml finds no error in ``ppo_doctor/`` (issue 18).  Skipped when mypy is not
installed (it is in the ``dev`` extra).  A cold run takes about a minute of CPU; mypy's
cache (``.mypy_cache``) makes the next ones a few seconds."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy not installed (pip install -e .[dev])")


@pytest.mark.slow
def test_mypy_is_clean_on_the_package():
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "--hide-error-context"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
    assert proc.returncode == 0 and not errors, "\n".join(errors[:50]) or proc.stderr[-2000:]
