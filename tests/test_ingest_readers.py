"""A built-in reader whose import fails is reported, never silently dropped (issue 23)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from ppo_doctor import ingest
from ppo_doctor.errors import PPODoctorError


def test_every_built_in_reader_loads_in_priority_order():
    built_in = ingest.reader_modules()[: len(ingest.FORMAT_MODULES)]
    assert [m.__name__ for m in built_in] == list(ingest.FORMAT_MODULES.values())
    # reader_for, discovery's file order and the plugins' name check go by the key: the NAME
    assert [m.NAME for m in built_in] == list(ingest.FORMAT_MODULES)
    assert [ingest.reader_for(name) for name in ingest.FORMAT_MODULES] == built_in


def test_the_readers_subpackage_does_not_shadow_the_reader_list():
    """Importing ``ppo_doctor.ingest.readers`` binds that name on ``ppo_doctor.ingest``: the
    function listing the readers has another name, so sniffing still works afterwards."""
    importlib.import_module("ppo_doctor.ingest.readers.jsonl")
    assert callable(ingest.reader_modules)
    assert ingest.sniff(Path("metrics.jsonl"), b'{"step": 1, "loss": 0.5}\n') is ingest.reader_for("jsonl")


def test_a_reader_that_cannot_be_imported_is_named(monkeypatch):
    real = importlib.import_module

    def broken(name, *a, **kw):
        if name == "ppo_doctor.ingest.readers.csv_logs":
            raise ImportError("No module named 'somedep'")
        return real(name, *a, **kw)

    monkeypatch.setattr(importlib, "import_module", broken)
    with pytest.raises(PPODoctorError, match=r"csv_logs reader \(ppo_doctor\.ingest\.readers\.csv_logs\) cannot be imported: No module named 'somedep'"):
        ingest.reader_modules()
