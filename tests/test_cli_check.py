"""``ppo-doctor check`` / ``report`` through run_cli (tests/cli_invoke.py): exit codes, config precedence,
output files and formats.

The analysis is replaced by a stub returning hand-built reports, so these tests pin the CLI's
own contract (docs/architecture.md#contracts) independently of the rules' thresholds.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from cli_invoke import run_cli
from ppo_doctor.cli import report as cli_report
from ppo_doctor.frame import ReadIssue
from ppo_doctor.report.json_out import json_schema
from ppo_doctor.results import Report
from report_builders import healthy_report, unhealthy_report, warning_finding

ANALYZE = cli_report  # the commands call the analyze they imported


def _warn_only():
    rr = healthy_report()
    rr.findings = [warning_finding()]
    return rr


REPORTS = {
    "ok": lambda: Report(runs=[healthy_report()]),
    "warn": lambda: Report(runs=[_warn_only()]),
    "err": lambda: Report(runs=[unhealthy_report()]),
    "broken": lambda: Report(errors=[ReadIssue(path="broken/events", message="not a TFRecord file", offset=0)]),
    "empty": lambda: Report(),
}


@pytest.fixture
def calls(monkeypatch, tmp_path):
    """Stub ``analyze``: the last path component picks a report; the config is recorded."""
    seen: list[dict] = []

    def fake_analyze(path, config=None):
        combined = Report()
        for p in path if isinstance(path, list) else [path]:  # several paths come in one call
            # the settings are the one way the executor keys arrive (Config.schedule)
            seen.append({"path": str(p), "config": config.to_dict(), "jobs": config.schedule.jobs})
            part = REPORTS[Path(p).name]()
            combined.runs.extend(part.runs)
            combined.errors.extend(part.errors)
        return combined

    monkeypatch.setattr(ANALYZE, "analyze", fake_analyze)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    return seen


def run(*args: str):
    return run_cli(list(args), catch_exceptions=False)


@pytest.mark.parametrize(
    "path, fail_on, code",
    [
        ("ok", None, 0),
        ("warn", None, 0),  # default fail-on is error
        ("err", None, 1),
        ("warn", "warning", 1),
        ("warn", "info", 1),
        ("err", "never", 0),
        ("broken", None, 2),  # nothing readable
        ("broken", "never", 2),
        ("empty", None, 2),  # no run found at all
    ],
)
def test_check_exit_codes(calls, path, fail_on, code):
    args = ["check", path] + (["--fail-on", fail_on] if fail_on else [])
    result = run(*args)
    assert result.exit_code == code, result.output


def test_check_fails_if_any_of_several_paths_fails(calls):
    assert run("check", "ok", "warn").exit_code == 0
    assert run("check", "ok", "err").exit_code == 1
    # one unreadable path does not hide the readable ones, and the gate does not pass on it
    # (issue 28: exit 2, unreadable input, where it was 0)
    both = run_cli(["check", "broken", "ok"])
    assert both.exit_code == 2 and [c["path"] for c in calls[-2:]] == ["broken", "ok"]
    assert both.stderr.splitlines()[-1] == (
        "ppo-doctor: exit 2: not read: broken/events at byte 0: not a TFRecord file; "
        "in what was read: no finding at or above error in 1 run(s)"
    )
    # a note or a warning of a reader is not an unreadable log
    calls.clear()
    REPORTS["noted"] = lambda: Report(runs=[healthy_report()], errors=[ReadIssue("t.csv", "sweep table: skipped", level="info"), ReadIssue("e", "x", level="warning")])
    try:
        assert run("check", "noted").exit_code == 0
    finally:
        del REPORTS["noted"]


def test_nothing_readable_explains_why(calls):
    result = run_cli(["check", "broken"])
    assert result.exit_code == 2
    assert "broken/events at byte 0: not a TFRecord file" in result.stdout  # in the text report
    assert "no readable training run under broken" in result.stderr
    # when the report goes elsewhere (a file, a machine format), the reasons go to stderr
    as_json = run_cli(["check", "broken", "--format", "json"])
    assert as_json.exit_code == 2 and "broken/events at byte 0: not a TFRecord file" in as_json.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["check"],  # missing PATH
        ["check", "ok", "--fail-on", "sometimes"],
        ["check", "ok", "--format", "yaml"],
        ["check", "ok", "--jobs", "0"],
        ["check", "ok", "--no-such-flag"],
    ],
)
def test_usage_errors_exit_2(calls, args):
    assert run(*args).exit_code == 2
    assert calls == []  # nothing was analysed


def test_config_error_exits_2_naming_the_file_and_key(calls, tmp_path):
    (tmp_path / "ppo-doctor.toml").write_text('fail_on = "error"\ncolour = true\n', encoding="utf-8")
    result = run_cli(["check", "ok"])
    assert result.exit_code == 2
    assert "ppo-doctor.toml" in result.stderr and "unknown key 'colour'" in result.stderr
    assert calls == []


def test_bad_selector_on_the_command_line_exits_2(calls):
    result = run_cli(["check", "ok", "--select", "ZZ9"])
    assert result.exit_code == 2 and "'ZZ9' matches no rule" in result.stderr


def test_precedence_file_then_cli(calls, tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.ppo-doctor]\nfail-on = "warning"\nselect = ["PD1"]\njobs = 2\naliases = {"my/kl" = "kl/ref"}\n',
        encoding="utf-8",
    )
    # the file's fail-on = warning makes a warning fail ...
    assert run("check", "warn").exit_code == 1
    cfg = calls[-1]["config"]
    assert cfg["select"] == ["PD1"] and cfg["aliases"] == {"my/kl": "kl/ref"} and calls[-1]["jobs"] == 2
    assert cfg["config_file"] == str(tmp_path / "pyproject.toml")
    # ... and the command line overrides the file
    assert run("check", "warn", "--fail-on", "error", "--select", "PD2,PD101", "-j", "3").exit_code == 0
    cfg = calls[-1]["config"]
    assert cfg["fail_on"] == "error" and cfg["select"] == ["PD2", "PD101"] and calls[-1]["jobs"] == 3
    assert cfg["aliases"] == {"my/kl": "kl/ref"}  # keys not given on the command line keep the file's
    # --isolated: defaults only
    assert run("check", "warn", "--isolated").exit_code == 0
    assert calls[-1]["config"]["select"] == [] and calls[-1]["config"]["config_file"] is None


def test_explicit_config_file(calls, tmp_path):
    (tmp_path / "ppo-doctor.toml").write_text('fail_on = "never"\n', encoding="utf-8")
    strict = tmp_path / "strict.toml"
    strict.write_text('fail_on = "warning"\n', encoding="utf-8")
    assert run("check", "warn").exit_code == 0
    assert run("check", "warn", "--config", str(strict)).exit_code == 1
    assert run("check", "warn", "--config", "missing.toml").exit_code == 2


def test_format_from_config_and_output_file(calls, tmp_path):
    (tmp_path / "ppo-doctor.toml").write_text('format = "junit"\n', encoding="utf-8")
    result = run("check", "err", "-o", "out.xml")
    # nothing on stdout; stderr's one closing line says why the check fails
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.strip().splitlines() == ["ppo-doctor: exit 1: 2 finding(s) at or above error in 1 of 1 run(s): PD101, PD601"]
    root = ET.parse(tmp_path / "out.xml").getroot()
    assert root.tag == "testsuites" and int(root.get("failures")) == 2
    # --format beats the file
    result = run("check", "err", "--format", "json")
    assert json.loads(result.stdout)["runs"][0]["verdict"] == "unhealthy"


def test_sarif_written_even_when_the_check_fails(calls, tmp_path):
    result = run("check", "err", "--format", "sarif", "-o", "ppo-doctor.sarif")
    assert result.exit_code == 1
    doc = json.loads((tmp_path / "ppo-doctor.sarif").read_text(encoding="utf-8"))
    assert len(doc["runs"][0]["results"]) == 3


def test_unwritable_output_exits_2(calls, tmp_path):
    result = run_cli(["check", "ok", "-o", str(tmp_path / "no" / "such" / "dir" / "x.txt")])
    assert result.exit_code == 2 and "cannot write" in result.stderr


def test_text_is_plain_when_not_a_tty(calls):
    result = run("check", "err")
    assert "UNHEALTHY" in result.output and "\x1b[" not in result.output


def test_report_exits_0_with_findings_and_2_when_unreadable(calls):
    assert run("report", "err").exit_code == 0
    assert run("report", "err", "--format", "markdown").stdout.startswith("# ppo-doctor report")
    assert run("report", "broken").exit_code == 2


# -- end to end, on logs written here and read by the real readers and rules --------------
DATA = Path(__file__).parent / "data"


def _write_blowup_run(folder: Path, n: int = 300) -> None:
    """A TRL-style JSONL run whose KL to the reference explodes to ~1000 nats."""
    rng = np.random.default_rng(0)
    folder.mkdir(parents=True)
    with open(folder / "metrics.jsonl", "w", encoding="utf-8") as fh:
        for step in range(n):
            kl = 0.05 + 0.01 * rng.standard_normal() + (0.0 if step < 150 else 0.05 * np.exp((step - 150) / 15))
            row = {
                "step": step,
                "objective/kl": kl,
                "objective/scores": 0.5 + 0.01 * step,
                "loss/value_avg": 0.3 + 0.05 * rng.standard_normal(),
                "policy/entropy_avg": 2.0 - 0.001 * step,
            }
            fh.write(json.dumps(row) + "\n")


@pytest.fixture
def real_logs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _write_blowup_run(tmp_path / "logs" / "kl_blowup")
    return tmp_path


def test_end_to_end_exit_codes(real_logs):
    assert run("check", "logs", "--isolated").exit_code == 1
    assert run("check", "logs", "--isolated", "--fail-on", "never").exit_code == 0
    (real_logs / "junk").mkdir()
    (real_logs / "junk" / "events.out.tfevents.1.host").write_bytes(b"\x00garbage" * 40)
    broken = run_cli(["check", "junk", "--isolated", "--format", "json"])
    assert broken.exit_code == 2
    assert "events.out.tfevents.1.host at byte 0" in broken.stderr
    assert json.loads(broken.stdout)["errors"][0]["path"].endswith("events.out.tfevents.1.host")


def test_end_to_end_outputs_validate(real_logs):
    import jsonschema

    assert run("check", "logs", "--isolated", "--format", "sarif", "-o", "out.sarif").exit_code == 1
    sarif = json.loads((real_logs / "out.sarif").read_text(encoding="utf-8"))
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft7Validator(schema).validate(sarif)
    results = sarif["runs"][0]["results"]
    assert results and all(r["level"] in ("error", "warning", "note") for r in results)
    uri = results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "logs/kl_blowup/metrics.jsonl"  # relative to the working directory

    doc = json.loads(run("report", "logs", "--isolated", "--format", "json").stdout)
    report_schema = json_schema()
    jsonschema.Draft202012Validator(report_schema).validate(doc)
    assert doc["runs"][0]["verdict"] == "unhealthy" and "kl_blowup" in doc["runs"][0]["symptoms"]

    root = ET.fromstring(run("report", "logs", "--isolated", "--format", "junit").stdout)
    assert int(root.get("failures")) >= 1 and int(root.get("tests")) > 10
