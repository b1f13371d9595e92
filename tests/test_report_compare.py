"""``compare``: findings only in one run, verdicts, top causes and core metrics side by side."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_invoke import run_cli
from ppo_doctor.cli import report as cli_report
from ppo_doctor.report.compare import compare, metric_stats, render_json, render_markdown, render_text
from ppo_doctor.results import Report, RunReport
from report_builders import healthy_report, kl_finding, make_run, unhealthy_report


def test_findings_only_in_one_run_and_shared_ones():
    a, b = unhealthy_report(), healthy_report()
    b.findings = [kl_finding(start=150)]
    c = compare(a, b)
    assert [f.code for f in c.only_a] == ["PD601", "PD602"]
    assert c.only_b == []
    assert [(fa.start_step, fb.start_step) for fa, fb in c.both] == [(120, 150)]


def test_core_metric_statistics_ignore_nonfinite_values():
    s = metric_stats(unhealthy_report(), ("loss/value",))
    assert s.metric == "loss/value" and s.nonfinite == 10
    values = unhealthy_report().run.frame.series("loss/value").to_numpy()[:190]
    assert s.first == pytest.approx(values[0]) and s.last == pytest.approx(values[-1])
    assert s.min == pytest.approx(values.min()) and s.max == pytest.approx(values.max())


def test_first_present_alternative_is_used():
    rr = RunReport(run=make_run("t", {"reward/total": np.arange(5.0)}), verdict="healthy")
    assert metric_stats(rr, ("reward/score", "reward/total")).metric == "reward/total"
    assert metric_stats(rr, ("kl/ref",)).metric is None


def test_text_shows_verdicts_differences_causes_and_metrics():
    out = render_text(compare(unhealthy_report(), healthy_report()))
    assert out.startswith("A: kl_blowup  UNHEALTHY: kl_blowup from step 120")
    assert "B: healthy  HEALTHY\n" in out
    assert "only in A:\n  error PD101 kl-above-band on kl/ref, steps 120-199" in out
    assert "only in B: none" in out
    assert "A: KL coefficient too low (0.82), Learning rate too high (0.41)" in out
    assert "B: none" in out
    value_a = next(ln for ln in out.splitlines() if ln.startswith("value loss"))
    assert value_a.split()[2] == "A" and value_a.split()[-1] == "10"  # NaN/Inf count of A's value loss


def test_markdown_and_json():
    c = compare(unhealthy_report(), healthy_report())
    md = render_markdown(c)
    assert "| KL | A |" in md and "## Only in A" in md
    doc = json.loads(render_json(c))
    assert doc["a"]["verdict"] == "unhealthy" and doc["b"]["verdict"] == "healthy"
    assert [m["name"] for m in doc["metrics"]] == ["reward", "KL", "value loss", "entropy", "grad norm"]
    assert doc["metrics"][2]["a"]["nonfinite"] == 10


def test_compare_command(monkeypatch, tmp_path):
    def fake_analyze(path, config=None, *, jobs=1):
        name = Path(path).name
        if name == "many":
            return Report(runs=[healthy_report(), healthy_report()])
        return Report(runs=[unhealthy_report() if name == "a" else healthy_report()])

    monkeypatch.setattr(cli_report, "analyze", fake_analyze)
    monkeypatch.chdir(tmp_path)
    result = run_cli(["compare", "a", "b", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["only_a"][0]["code"] == "PD101"
    bad = run_cli(["compare", "a", "many"])
    assert bad.exit_code == 2 and "RUN_B many holds 2 runs" in bad.stderr


def test_config_differences_come_first():
    """The changed kl_coef is what a user looks for: listed before the findings."""
    from ppo_doctor.report.compare import compare, render_json, render_markdown, render_text

    a, b = healthy_report(), unhealthy_report()
    a.run.config = {"kl_coef": 0.05, "lr": 1.41e-5, "run_name": "a", "ppo_epochs": 4, "seed": 1}
    b.run.config = {"kl_coef": 0.0, "lr": 1.41e-5, "run_name": "b", "ppo_epochs": 4.0, "top_k": 50}
    c = compare(a, b)
    assert [k for k, _, _ in c.config] == ["kl_coef", "top_k", "run_name", "seed"]  # canonical keys first
    assert c.config[1] == ("top_k", "(not set)", 50)
    text = render_text(c)
    assert text.index("config changes:") < text.index("only in A")
    assert "kl_coef   0.05 -> 0.0" in text
    assert render_markdown(c).index("## Config changes") < render_markdown(c).index("## Only in A")
    assert json.loads(render_json(c))["config_changes"][0] == {"key": "kl_coef", "a": 0.05, "b": 0.0}
