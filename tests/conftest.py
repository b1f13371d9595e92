"""Shared fixtures: the real-log corpus beside the checkout (skipped when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
SAMPLE_LOGS = REPO / "sample_logs"


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
