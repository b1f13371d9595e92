"""The committed sample_logs/ (outputs of the reference loop) get the diagnosis their scenario
declares: the README demo runs on them, so they must keep telling the story they are there for."""

from __future__ import annotations

import pytest

from ppo_doctor import analyze
from ppo_doctor.reference.scenarios import SCENARIOS

COUNTED = ("warning", "error")


@pytest.fixture(scope="module")
def reports(sample_logs):
    return {r.run.id: r for r in analyze(sample_logs).runs}


def test_every_sample_run_is_a_known_scenario(reports):
    assert reports and set(reports) <= set(SCENARIOS)


@pytest.mark.parametrize("name", ["healthy-s1", "kl-coef-zero", "min-length", "lr-x100", "hackable-reward"])
def test_sample_run_shows_its_scenario(reports, name):
    scenario = SCENARIOS[name]
    r = reports[name]
    detected = {f.symptom for f in r.findings if f.severity in COUNTED}
    if scenario.healthy:
        assert r.verdict == "healthy" and not [f for f in r.findings if f.severity == "error"], [f.code for f in r.findings]
        return
    assert r.verdict == "unhealthy"
    assert scenario.expected <= detected, f"missed {sorted(scenario.expected - detected)}"
    assert not detected - scenario.expected - scenario.allowed, f"false alarms {sorted(detected - scenario.expected - scenario.allowed)}"
    assert r.causes and r.causes[0].id == scenario.top_cause, [c.id for c in r.causes[:3]]
