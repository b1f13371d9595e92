"""CLI conventions users bring from ruff (issue 18): ``-o -``, ``-q``, ``-v`` after the
subcommand, ``--color`` with NO_COLOR / FORCE_COLOR, ``--extend-select`` / ``--extend-ignore``,
``--statistics``, ``--show-settings``, per-run ignores, baselines and the closing exit line.

These run the real analysis of ``sample_logs/`` (five small runs, about 0.3 s each).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from cli_invoke import run_cli
from ppo_doctor.cli.common import use_color
from ppo_doctor.results import SCHEMA_VERSION
from ppo_doctor.rules import registry
from ppo_doctor.rules.engine import _overrides_for

SAMPLES = Path(__file__).resolve().parents[1] / "sample_logs"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no config file found above, and files land here
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)


def run(*args: str, env: dict[str, str] | None = None):
    return run_cli(list(args), catch_exceptions=False, env=env)


def json_report(*args: str) -> dict:
    result = run("report", str(SAMPLES), "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def codes(doc: dict, run_id: str | None = None) -> set[str]:
    return {f["code"] for r in doc["runs"] if run_id in (None, r["run"]) for f in r["findings"]}


def test_dash_output_is_stdout(tmp_path):
    result = run("report", str(SAMPLES), "--isolated", "--format", "json", "-o", "-")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["schema_version"] == SCHEMA_VERSION
    assert not (tmp_path / "-").exists()


def test_quiet_drops_the_exit_line_and_qq_the_report():
    loud = run("check", str(SAMPLES), "--isolated")
    assert loud.exit_code == 1 and loud.stderr.startswith("ppo-doctor: exit 1:")
    quiet = run("check", str(SAMPLES), "--isolated", "-q")
    assert quiet.exit_code == 1 and quiet.stderr == "" and quiet.stdout == loud.stdout
    silent = run("check", str(SAMPLES), "--isolated", "-qq")
    assert silent.exit_code == 1 and silent.stdout == "" and silent.stderr == ""


def test_verbose_after_the_subcommand():
    before = run("-v", "report", str(SAMPLES), "--isolated")
    after = run("report", str(SAMPLES), "--isolated", "-v")
    assert before.exit_code == after.exit_code == 0
    assert after.stdout == before.stdout
    assert len(after.stdout) > len(run("report", str(SAMPLES), "--isolated").stdout)  # the full detail


def test_verbose_after_compare_and_plot(tmp_path):
    a, b = str(SAMPLES / "healthy-s1"), str(SAMPLES / "kl-coef-zero")
    result = run("compare", a, b, "--isolated", "-v", "-o", "-")
    assert result.exit_code == 0 and result.stdout.splitlines()[3] == "config changes:"
    drawn = run("plot", b, "--isolated", "--metrics", "kl/ref", "-o", str(tmp_path / "f"), "-v")
    assert drawn.exit_code == 0 and len(list((tmp_path / "f").iterdir())) == 1


@pytest.mark.parametrize(
    "choice, env, terminal, expected",
    [
        ("always", {"NO_COLOR": "1"}, False, True),
        ("never", {"FORCE_COLOR": "1"}, True, False),
        ("auto", {}, True, True),
        ("auto", {}, False, False),
        ("auto", {"FORCE_COLOR": "1"}, False, True),
        ("auto", {"FORCE_COLOR": "0"}, False, False),
        ("auto", {"NO_COLOR": "1"}, True, False),
        ("auto", {"NO_COLOR": "1", "FORCE_COLOR": "1"}, False, False),
    ],
)
def test_use_color(monkeypatch, choice, env, terminal, expected):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert use_color(choice, terminal) is expected


def test_color_flag_and_force_color_reach_a_pipe(tmp_path):
    base = ("report", str(SAMPLES), "--isolated")
    assert not ANSI.search(run(*base).stdout)  # run_cli's stdout is not a terminal
    assert ANSI.search(run(*base, "--color", "always").stdout)
    assert ANSI.search(run(*base, env={"FORCE_COLOR": "1"}).stdout)
    assert not ANSI.search(run(*base, env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout)
    assert not ANSI.search(run(*base, "--color", "never", env={"FORCE_COLOR": "1"}).stdout)
    run(*base, "--color", "always", "-o", "r.txt")
    assert ANSI.search((tmp_path / "r.txt").read_text(encoding="utf-8"))


def test_extend_select_and_extend_ignore(tmp_path):
    (tmp_path / "ppo-doctor.toml").write_text('select = ["PD1"]\n', encoding="utf-8")
    assert codes(json_report()) <= {r.code for r in registry.select(["PD1"])}
    extended = codes(json_report("--extend-select", "PD2"))
    assert "PD202" in extended and "PD101" in extended  # added to the file's select, not replacing it
    assert "PD101" not in codes(json_report("--extend-select", "PD2", "--extend-ignore", "PD101"))
    # an empty select (every rule) stays every rule: extend-select beats a wider ignore
    (tmp_path / "ppo-doctor.toml").write_text('ignore = ["PD9"]\nextend-select = ["PD951"]\n', encoding="utf-8")
    got = codes(json_report())
    assert "PD951" in got and "PD953" not in got and "PD101" in got


def test_statistics_counts_findings_per_code():
    doc = json_report("--isolated")
    expected = Counter(f["code"] for r in doc["runs"] for f in r["findings"])
    result = run("check", str(SAMPLES), "--isolated", "--statistics", "--fail-on", "never")
    rows = [line.split() for line in result.stdout.splitlines()]
    assert {code: int(n) for n, code, _name in rows} == dict(expected)
    assert [int(r[0]) for r in rows] == sorted((int(r[0]) for r in rows), reverse=True)


def test_show_settings_names_the_source_of_each_value(tmp_path):
    (tmp_path / "ppo-doctor.toml").write_text('fail_on = "warning"\njobs = 2\n', encoding="utf-8")
    result = run("check", str(SAMPLES), "--show-settings", "--select", "PD1", "--extend-ignore", "PD102")
    assert result.exit_code == 0
    lines = {line.split(" = ")[0].strip(): line for line in result.stdout.splitlines()}
    config = str(tmp_path / "ppo-doctor.toml")
    assert lines["fail-on"].endswith(f'"warning"  # {config}')
    assert lines["jobs"].endswith(f"2  # {config}")
    assert lines["select"].endswith('["PD1"]  # command line')
    assert lines["ignore"].endswith('["PD102"]  # default + extend-ignore')
    assert lines["format"].endswith('"text"  # default')


def test_per_run_ignores_in_config(tmp_path):
    (tmp_path / "ppo-doctor.toml").write_text('[per_run_ignores]\n"*kl-coef-*" = ["PD1", "reward-hacking"]\n', encoding="utf-8")
    doc = json_report()
    assert not {c for c in codes(doc, "kl-coef-zero") if c.startswith("PD1") or c == "PD202"}
    assert "PD101" in codes(doc, "hackable-reward") and "PD202" in codes(doc, "hackable-reward")
    # a code that matches no rule is a config error (exit 2), like select's
    (tmp_path / "ppo-doctor.toml").write_text('[per_run_ignores]\n"x" = ["ZZ9"]\n', encoding="utf-8")
    bad = run("check", str(SAMPLES))
    assert bad.exit_code == 2 and "per_run_ignores.x" in bad.stderr and "ZZ9" in bad.stderr


def _sample_findings() -> list[tuple[str, str, str, str]]:
    """(run, code, metric, severity) of every finding of the sample runs."""
    doc = json_report("--isolated")
    return [(r["run"], f["code"], f["metric"], f["severity"]) for r in doc["runs"] for f in r["findings"]]


def test_baseline_gates_only_new_findings(tmp_path):
    findings = _sample_findings()
    n = len({(run, code, metric) for run, code, metric, _ in findings})
    base = tmp_path / "baseline.json"
    wrote = run("check", str(SAMPLES), "--isolated", "--write-baseline", str(base), "-o", "r.txt")
    assert wrote.exit_code == 0 and f"wrote {n} finding(s)" in wrote.stderr
    doc = json.loads(base.read_text(encoding="utf-8"))
    assert len(doc["findings"]) == n
    clean = run("check", str(SAMPLES), "--isolated", "--baseline", str(base), "--format", "json")
    assert clean.exit_code == 0 and not codes(json.loads(clean.stdout))
    assert f"{len(findings)} known finding(s) from the baseline not counted" in clean.stderr
    # forget one error-level finding: it is new again, and alone fails the check
    run_id, code, metric, _ = next(f for f in findings if f[3] == "error")
    doc["findings"] = [f for f in doc["findings"] if (f["run"], f["code"], f["metric"]) != (run_id, code, metric)]
    base.write_text(json.dumps(doc), encoding="utf-8")
    again = run("check", str(SAMPLES), "--isolated", "--baseline", str(base), "--format", "json")
    assert again.exit_code == 1
    assert [(r["run"], f["code"]) for r in json.loads(again.stdout)["runs"] for f in r["findings"]] == [(run_id, code)]
    base.write_text("{not json", encoding="utf-8")
    assert run("check", str(SAMPLES), "--isolated", "--baseline", str(base)).exit_code == 2


def test_exit_line_also_when_the_report_goes_to_a_file(tmp_path):
    findings = _sample_findings()
    errors = [f for f in findings if f[3] == "error"]
    top_code, top_n = Counter(f[1] for f in errors).most_common(1)[0]
    result = run("check", str(SAMPLES), "--isolated", "--format", "sarif", "-o", "r.sarif")
    assert result.exit_code == 1 and result.stdout == ""
    line = result.stderr.splitlines()[-1]
    runs = len({f[0] for f in errors})
    assert line.startswith(f"ppo-doctor: exit 1: {len(errors)} finding(s) at or above error in {runs} of 5 run(s): {top_code} x{top_n}")
    ok = run("check", str(SAMPLES / "healthy-s1"), "--isolated", "-o", "r.txt")
    assert ok.exit_code == 0 and ok.stderr.startswith("ppo-doctor: exit 0: no finding at or above error in 1 run(s)")


def test_rule_name_entry_beats_its_code_entry_in_either_order():
    rule = registry.get("PD201")
    assert _overrides_for(rule, {"reward-spike": {"z": 5.0}, "PD201": {"z": 9.0}})["z"] == 5.0
    assert _overrides_for(rule, {"PD201": {"z": 9.0}, "reward-spike": {"z": 5.0}})["z"] == 5.0
    assert _overrides_for(rule, {"PD201": {"z": 9.0, "min_points": 30}, "reward-spike": {"z": 5.0}}) == {"z": 5.0, "min_points": 30}
