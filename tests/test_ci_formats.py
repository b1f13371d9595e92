"""CI formats validated against the schemas CI systems use (issue 18).

JUnit XML against Jenkins xUnit's ``junit-10.xsd`` (tests/data, copied with its MIT notice);
SARIF against the official SARIF 2.1.0 JSON schema (tests/data); GitHub annotations carry
``line=`` where a log has lines.  SARIF locations are relative URIs under
``originalUriBaseIds``, with the line of the onset step in JSONL, CSV and trainer_state.json
logs, as the readers recorded it (no report opens a log).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from ppo_doctor import analyze
from ppo_doctor.report import RenderOptions, render
from ppo_doctor.report.sarif import FINGERPRINT_KEY, LOGROOT, SRCROOT, to_sarif
from report_builders import sample_report

xmlschema = pytest.importorskip("xmlschema")

DATA = Path(__file__).parent / "data"
SAMPLES = Path(__file__).resolve().parents[1] / "sample_logs"
N, ONSET = 200, 120


@pytest.fixture(scope="module")
def junit_schema():
    return xmlschema.XMLSchema(str(DATA / "junit-10.xsd"))


@pytest.fixture(scope="module")
def sarif_validator():
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    return jsonschema.Draft7Validator(schema)


def _series():
    rng = np.random.default_rng(3)
    steps = np.arange(1, N + 1)
    kl = np.where(steps < ONSET, 2.0, 2.0 + (steps - ONSET) * 0.8) + rng.normal(0, 0.2, N)
    reward = np.linspace(0.2, 0.3, N) + np.where(steps < ONSET, 0.0, (steps - ONSET) * 0.05) + rng.normal(0, 0.02, N)
    return steps, kl, reward


def write_jsonl(path: Path) -> Path:
    """TRL-named train lines, and an eval line at every 10th step (same step, other keys)."""
    steps, kl, reward = _series()
    with open(path, "w", encoding="utf-8") as fh:
        for s, k, r in zip(steps, kl, reward):
            if s % 10 == 0:
                fh.write(json.dumps({"step": int(s), "eval/loss": 1.0}) + "\n")
            fh.write(json.dumps({"step": int(s), "objective/kl": float(k), "objective/scores": float(r)}) + "\n")
    return path


def write_csv(path: Path) -> Path:
    steps, kl, reward = _series()
    lines = ["step,objective/kl,objective/scores"] + [f"{s},{k},{r}" for s, k, r in zip(steps, kl, reward)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_csv_rewritten(path: Path) -> Path:
    """SB3's progress.csv after a header rewrite (read row by row) with a blank line: rows are no
    longer line - 1."""
    steps, kl, reward = _series()
    rows = [f"{s},{k},{r}" for s, k, r in zip(steps, kl, reward)]
    lines = ["step,objective/kl", *(r.rsplit(",", 1)[0] for r in rows[:5]), "", "step,objective/kl,objective/scores", *rows[5:]]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_trainer_state(path: Path) -> Path:
    """As transformers' ``TrainerState.save_to_json`` writes it (indent=2, sorted keys), with
    an eval entry after every 10th train entry (same step, other keys)."""
    steps, kl, reward = _series()
    history = []
    for s, k, r in zip(steps, kl, reward):
        history.append({"epoch": float(s) / N, "objective/kl": float(k), "objective/scores": float(r), "step": int(s)})
        if s % 10 == 0:
            history.append({"epoch": float(s) / N, "eval_loss": 1.0, "step": int(s)})
    state = {"global_step": N, "log_history": history, "max_steps": N, "trial_name": None}
    path.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def test_junit_validates_against_the_common_xsd(junit_schema):
    for report in (analyze(str(SAMPLES)), sample_report()):
        doc = render(report, "junit")
        errors = [str(e).splitlines()[0] for e in junit_schema.iter_errors(doc)]
        assert errors == []
    root = ET.fromstring(render(sample_report(), "junit"))
    assert "skipped" not in root.attrib and root.get("time") is not None
    assert all(s.get("time") is not None for s in root.iter("testsuite"))
    assert all(c.get("time") is not None for c in root.iter("testcase"))


def test_junit_schema_rejects_what_it_should(junit_schema):
    """The validator is not a no-op: the old document (skipped on <testsuites>) fails."""
    assert not junit_schema.is_valid('<testsuites skipped="1"><testsuite name="x" tests="0" failures="0" errors="0"/></testsuites>')


def test_sarif_validates_and_its_uris_are_relative(sarif_validator, tmp_path, monkeypatch):
    monkeypatch.chdir(SAMPLES.parent)
    outside = tmp_path / "elsewhere" / "run-a"
    outside.mkdir(parents=True)
    write_jsonl(outside / "metrics.jsonl")
    report = analyze([str(SAMPLES.relative_to(SAMPLES.parent)), str(outside)])
    doc = to_sarif(report)
    assert list(sarif_validator.iter_errors(doc)) == []
    run = doc["runs"][0]
    bases = run["originalUriBaseIds"]
    assert bases[SRCROOT]["uri"] == SAMPLES.parent.resolve().as_uri() + "/"
    assert bases[LOGROOT]["uri"] == outside.resolve().as_uri() + "/"
    locations = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run["results"]]
    assert {loc["uriBaseId"] for loc in locations} == {SRCROOT, LOGROOT}
    assert all(not loc["uri"].startswith(("/", "file:")) for loc in locations)
    # no absolute path of this machine anywhere but in originalUriBaseIds
    without_bases = json.dumps({**run, "originalUriBaseIds": None})
    assert str(tmp_path) not in without_bases and str(SAMPLES.parent) not in without_bases
    assert all(set(r["partialFingerprints"]) == {FINGERPRINT_KEY} for r in run["results"])


@pytest.mark.parametrize(
    "writer, name",
    [
        (write_jsonl, "metrics.jsonl"),
        (write_csv, "metrics.csv"),
        (write_csv_rewritten, "progress.csv"),
        (write_trainer_state, "trainer_state.json"),
    ],
)
def test_sarif_region_is_the_line_of_the_onset_step(sarif_validator, tmp_path, monkeypatch, writer, name):
    monkeypatch.chdir(tmp_path)
    log = writer(tmp_path / name)
    report = analyze(str(tmp_path))
    doc = to_sarif(report)
    assert list(sarif_validator.iter_errors(doc)) == []
    lines = log.read_text(encoding="utf-8").splitlines()
    results = doc["runs"][0]["results"]
    assert {r["properties"]["metric"] for r in results} >= {"kl/ref"}
    for r in results:
        props = r["properties"]
        region = r["locations"][0]["physicalLocation"]["region"]
        assert props["lineKnown"] is True
        text = lines[region["startLine"] - 1]
        step = props["startStep"]
        if name.endswith(".csv"):
            assert text.split(",")[0] == str(step)
        elif name.endswith(".jsonl"):
            line = json.loads(text)
            assert line["step"] == step and ("objective/kl" in line or "objective/scores" in line)  # not the eval line
        else:  # the line that opens the log_history entry of the onset step
            assert text.strip() == "{"
            entry, _ = json.JSONDecoder().raw_decode("\n".join(lines[region["startLine"] - 1 :]).lstrip())
            assert entry["step"] == step and "objective/kl" in entry  # not the eval entry
    # the same line for the GitHub annotation
    gh = render(report, "github")
    first = results[0]["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert f"file={name},line={first}," in gh


def test_sarif_and_github_without_a_line_in_binary_logs(monkeypatch):
    monkeypatch.chdir(SAMPLES.parent)
    report = analyze("sample_logs/kl-coef-zero")  # TensorBoard only
    doc = to_sarif(report)
    for r in doc["runs"][0]["results"]:
        assert r["properties"]["lineKnown"] is False
        assert r["locations"][0]["physicalLocation"]["region"] == {"startLine": 1}  # GitHub's GH1003
    assert ",line=" not in render(report, "github", RenderOptions())


def test_the_run_tells_train_and_eval_lines_of_one_step_apart(tmp_path):
    log = write_jsonl(tmp_path / "m.jsonl")
    lines = log.read_text(encoding="utf-8").splitlines()
    (rr,) = analyze(str(tmp_path)).runs
    frame, src = rr.run.frame, str(log)
    assert json.loads(lines[frame.line_of("kl/ref", 10, src) - 1]).keys() == {"step", "objective/kl", "objective/scores"}
    eval_line = rr.run.eval_frame.line_of("loss/total", 10, src)  # eval/loss under its canonical name
    assert json.loads(lines[eval_line - 1]).keys() == {"step", "eval/loss"}
    assert json.loads(lines[frame.line_of("kl/ref", 7, src) - 1])["step"] == 7
    assert frame.line_of("kl/ref", 10_000, src) is None
    assert frame.line_of("kl/ref", 10, str(tmp_path / "other.jsonl")) is None
