"""Shared fixtures: the real-log corpus beside the checkout (skipped when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
SAMPLE_LOGS = REPO / "sample_logs"


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ARG001 - pytest's hook signature
    """Say it when the real logs beside the checkout are absent: the tests that read them skip,
    and a green run then checked less than it seems (issue 40)."""
    if not (REPO.parent / "shared").is_dir():
        terminalreporter.write_line(
            f"note: {REPO.parent / 'shared'} is absent: the tests on the public real runs (corpus, realruns) were skipped",
            yellow=True,
        )


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is absent")
    return CORPUS


@pytest.fixture(scope="session")
def sample_logs() -> Path:
    if not any(SAMPLE_LOGS.iterdir()):
        pytest.skip("sample_logs/ is empty")
    return SAMPLE_LOGS
