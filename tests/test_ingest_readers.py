"""A built-in reader whose import fails is reported, never silently dropped (issue 23)."""

from __future__ import annotations

import importlib

import pytest

from ppo_doctor import ingest
from ppo_doctor.errors import PPODoctorError


def test_every_built_in_reader_loads_in_priority_order():
    assert [m.__name__.rsplit(".", 1)[1] for m in ingest.readers()] == list(ingest.FORMAT_MODULES)


def test_a_reader_that_cannot_be_imported_is_named(monkeypatch):
    real = importlib.import_module

    def broken(name, *a, **kw):
        if name == "ppo_doctor.ingest.csv_logs":
            raise ImportError("No module named 'somedep'")
        return real(name, *a, **kw)

    monkeypatch.setattr(importlib, "import_module", broken)
    with pytest.raises(PPODoctorError, match=r"csv_logs reader .* cannot be imported: No module named 'somedep'"):
        ingest.readers()
