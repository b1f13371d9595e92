"""Annotated plots: grouping, incident shading, onsets, NaN marks, log scale, baseline, files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_invoke import run_cli
from matplotlib.collections import PathCollection
from matplotlib.patches import Rectangle
from ppo_doctor.cli import report as cli_report
from ppo_doctor.report import plots
from ppo_doctor.results import Report, RunReport
from report_builders import hostile_report, healthy_report, kl_finding, make_run, unhealthy_report

TESTS = Path(__file__).parent


def _axes_by_metric(fig):
    return {ax.get_ylabel().split("\n")[0]: ax for ax in fig.axes}


def test_groups_hold_the_present_metrics():
    specs = {s.group: s.metrics for s in plots.plot_specs(unhealthy_report())}
    assert specs == {
        "reward": ["reward/score"],
        "kl": ["kl/ref", "kl/coef"],
        "losses": ["loss/policy", "loss/value"],
        "gradients": ["grad/norm"],
        "entropy_length": ["policy/entropy", "len/response_mean"],
    }
    only = plots.plot_specs(unhealthy_report(), metrics=["kl/ref", "not/logged"])
    assert [(s.group, s.metrics) for s in only] == [("kl", ["kl/ref"])]


def test_finding_on_an_unmapped_tag_gets_its_own_figure():
    specs = plots.plot_specs(hostile_report().runs[0])
    assert specs[-1].group == plots.OTHER and specs[-1].metrics == ["reward/<script>alert(1)</script>"]


def test_incident_is_shaded_labelled_and_its_onset_marked():
    rr = unhealthy_report()
    spec = next(s for s in plots.plot_specs(rr) if s.group == "kl")
    ax = _axes_by_metric(plots.draw(spec))["kl/ref"]
    spans = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(spans) == 1
    assert spans[0].get_x() == 120 and spans[0].get_x() + spans[0].get_width() == 199  # start .. end step
    assert any(t.get_text().strip() == "PD101" for t in ax.texts)
    onsets = [ln for ln in ax.lines if ln.get_linestyle() == "--" and list(ln.get_xdata()) == [120, 120]]
    assert onsets, "a dashed vertical line at the onset step"
    assert ax.get_yscale() == "log"  # KL goes from 0.05 to ~40: more than 2.5 decades


def test_raw_points_stay_visible_under_the_ema():
    spec = next(s for s in plots.plot_specs(unhealthy_report()) if s.group == "reward")
    ax = plots.draw(spec).axes[0]
    labels = [ln.get_label() for ln in ax.lines]
    assert "run (raw)" in labels and "run (EMA)" in labels
    raw = next(ln for ln in ax.lines if ln.get_label() == "run (raw)")
    assert len(raw.get_xdata()) == 200 and raw.get_marker() == "o"


def test_nonfinite_points_are_marked_at_the_edge():
    spec = next(s for s in plots.plot_specs(unhealthy_report()) if s.group == "losses")
    ax = _axes_by_metric(plots.draw(spec))["loss/value"]
    marks = [c for c in ax.collections if isinstance(c, PathCollection) and c.get_label() == plots.NONFINITE_LABEL]
    assert len(marks) == 1
    assert ax.get_ylabel() == "loss/value\n(10 NaN/Inf)"
    offsets = marks[0].get_offsets()
    assert list(offsets[:, 0]) == list(range(190, 200)) and set(offsets[:, 1]) == {1.0}


def test_all_nan_series_still_draws():
    run = make_run("nan-run", {"loss/value": [np.nan] * 5 + [-np.inf]})
    fig = plots.draw(plots.plot_specs(RunReport(run=run, verdict="unhealthy"))[0])
    ax = fig.axes[0]
    marks = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert sorted(marks[0].get_offsets()[:, 1]) == [0.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    assert any(t.get_text() == "no finite value" for t in ax.texts)


def test_baseline_is_overlaid_in_grey():
    spec = next(s for s in plots.plot_specs(unhealthy_report()) if s.group == "reward")
    ax = plots.draw(spec, baseline=healthy_report().run).axes[0]
    grey = [ln for ln in ax.lines if ln.get_color() == plots.BASELINE_COLOR]
    assert len(grey) == 2  # raw + EMA
    assert any(ln.get_label() == "baseline healthy (EMA)" for ln in grey)


@pytest.mark.parametrize(
    "values, expected",
    [
        (np.array([1e-3, 1.0, 10.0]), True),
        (np.array([0.5, 2.0, 40.0]), False),  # under 2.5 decades
        (np.array([-1.0, 1e-3, 100.0]), False),  # a log axis cannot show negatives
        (np.array([np.nan, 1e-4, np.inf, 1.0]), True),  # non-finite values are ignored
        (np.r_[3e-7, np.linspace(0.5, 40.0, 199)], False),  # one near-zero first point
        (np.r_[np.full(100, 1.0), np.geomspace(1.0, 1e3, 100)], True),  # an explosion
    ],
)
def test_log_scale_rule(values, expected):
    assert plots.wants_log_scale(values) is expected


def test_ema_is_debiased_and_smooth():
    assert np.allclose(plots.ema(np.full(50, 3.0), 0.9), 3.0)
    noisy = np.random.default_rng(0).standard_normal(400)
    smooth = plots.ema(noisy, plots.smoothing_weight(400))
    assert smooth[0] == noisy[0] and smooth.std() < noisy.std() / 2


@pytest.mark.parametrize("fmt, magic", [("png", b"\x89PNG"), ("svg", b"<?xml"), ("pdf", b"%PDF")])
def test_plot_report_writes_each_format(tmp_path, fmt, magic):
    report = Report(runs=[unhealthy_report()])
    paths = plots.plot_report(report, tmp_path, fmt=fmt, metrics=["kl/ref"])
    assert [p.name for p in paths] == [f"{plots._slug('kl_blowup')}__kl.{fmt}"]
    assert paths[0].read_bytes().startswith(magic)


def test_hostile_names_make_safe_file_names_and_labels(tmp_path):
    report = hostile_report()
    report.runs[0].run.id = "../../$evil$ \x1b[31m/run"
    paths = plots.plot_report(report, tmp_path)
    assert paths and all(p.parent == tmp_path for p in paths)
    assert all("/" not in p.name and "$" not in p.name for p in paths)


def test_matplotlib_stays_off_the_check_path():
    code = (
        "import sys; sys.path.insert(0, %r)\n"
        "from cli_invoke import run_cli\n"
        "from ppo_doctor.report import render\n"
        "from report_builders import sample_report\n"
        "run_cli(['check', '--help'])\n"
        "for fmt in ('text', 'markdown', 'json', 'sarif', 'junit', 'github'): render(sample_report(), fmt)\n"
        "assert 'matplotlib' not in sys.modules, 'matplotlib imported'\n"
    ) % str(TESTS)
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_plot_command(monkeypatch, tmp_path):
    def fake_analyze(path, config=None, *, jobs=1):
        rr = healthy_report() if Path(path).name == "base" else unhealthy_report()
        return Report(runs=[rr] if Path(path).name != "two" else [rr, healthy_report()])

    monkeypatch.setattr(cli_report, "analyze", fake_analyze)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "figs"
    result = run_cli(["plot", "run", "-o", str(out), "--baseline", "base", "--metrics", "kl/ref,loss/value"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name.split("__")[1] for p in out.iterdir()) == ["kl.png", "losses.png"]
    assert result.stdout.split() == [str(p) for p in sorted(out.iterdir())]
    bad = run_cli(["plot", "run", "-o", str(out), "--baseline", "two"])
    assert bad.exit_code == 2 and "holds 2 runs" in bad.stderr


def test_a_frozen_series_is_drawn_flat_without_an_offset():
    """ln 7 with float-noise wiggles (corpus: a uniform A2C policy) must not look like dips."""
    noise = np.tile([0.0, 2e-7, -1.5e-7, 1e-7], 30)
    run = make_run("frozen", {"policy/entropy": np.log(7) + noise})
    fig = plots.draw(plots.plot_specs(RunReport(run=run, verdict="healthy"))[0])
    ax = fig.axes[0]
    fig.canvas.draw()
    lo, hi = ax.get_ylim()
    assert lo < np.log(7) * 0.96 and hi > np.log(7) * 1.04
    assert ax.yaxis.get_major_formatter().get_offset() == ""
    # a series that really moves keeps matplotlib's own limits
    run = make_run("moving", {"policy/entropy": np.linspace(1.9, 1.2, 120)})
    ax = plots.draw(plots.plot_specs(RunReport(run=run, verdict="healthy"))[0]).axes[0]
    assert ax.get_ylim()[0] > 1.1 and ax.get_ylim()[1] < 2.0


def test_the_rule_band_is_drawn_as_a_reference_line():
    from dataclasses import replace

    rr = unhealthy_report()
    rr.findings[0] = replace(kl_finding(), observed={"peak": 40.0, "late": 38.0}, band=10.0)
    spec = next(s for s in plots.plot_specs(rr) if s.group == "kl")
    ax = _axes_by_metric(plots.draw(spec))["kl/ref"]
    bands = [ln for ln in ax.lines if ln.get_linestyle() == ":" and list(ln.get_ydata()) == [10.0, 10.0]]
    assert len(bands) == 1 and any(t.get_text() == "band 10" for t in ax.texts)


def test_a_band_shared_by_two_findings_is_drawn_once():
    from dataclasses import replace

    rr = unhealthy_report()
    banded = replace(kl_finding(), observed={"peak": 40.0}, band=10.0)
    rr.findings[0] = banded
    rr.findings.append(replace(banded, code="PD202", name="reward-hacking"))
    spec = next(s for s in plots.plot_specs(rr) if s.group == "kl")
    ax = _axes_by_metric(plots.draw(spec))["kl/ref"]
    assert sum(t.get_text() == "band 10" for t in ax.texts) == 1


@pytest.mark.parametrize("n", [1, 2, 7, 500, 20_000])
@pytest.mark.parametrize("weight", [0.0, 0.3, 0.9, 0.999])
def test_ema_is_the_debiased_recursion(n, weight):
    """numpy's blocked closed form equals TensorBoard's loop ``s = w s + (1 - w) x`` / (1 - w**t)."""
    x = np.random.default_rng(n).normal(5.0, 10.0, n)
    expected, s = np.empty(n), 0.0
    for t, v in enumerate(x):
        s = weight * s + (1 - weight) * v
        expected[t] = s / (1 - weight ** (t + 1))
    np.testing.assert_allclose(plots.ema(x, weight), expected, rtol=1e-9, atol=1e-9)


def _spans(ax):
    return [p for p in ax.patches if isinstance(p, Rectangle)]


def _hacking_report() -> RunReport:
    from ppo_doctor.results import Finding

    rr = unhealthy_report()
    rr.findings.append(
        Finding(code="PD202", name="reward-hacking", symptom="reward_hacking", severity="error", metric="kl/ref",
                message="reward rose while KL rose", start_step=130, end_step=199, peak_step=190,
                reads=(("reward/score", "reward/total"), ("kl/ref",)))  # as PD202's requires fill it
    )
    return rr


def test_reward_figure_carries_the_reward_hacking_incident():
    """PD202 is judged on kl/ref but reads the reward: its span is on the reward panel too."""
    rr = _hacking_report()
    spec = next(s for s in plots.plot_specs(rr) if s.group == "reward")
    fig = plots.draw(spec)
    ax = _axes_by_metric(fig)["reward/score"]
    assert any(abs(p.get_x() - 130) < 1e-9 for p in _spans(ax))
    assert "PD202" in [t.get_text().strip() for t in ax.texts]
    assert "PD202" in fig.texts[0].get_text() or "PD202" in fig._suptitle.get_text()


def test_overview_figure_holds_reward_kl_and_every_incident_metric():
    rr = _hacking_report()
    spec = plots.overview_spec(rr)
    assert spec.metrics[:2] == ["reward/score", "kl/ref"]
    assert {f.metric for f in rr.findings if rr.run.frame.has(f.metric)} <= set(spec.metrics)
    healthy = plots.overview_spec(healthy_report())
    assert healthy.metrics[:2] == ["reward/score", "kl/ref"] and len(healthy.metrics) <= 3


def test_html_figure_is_a_small_palette_png():
    import base64
    import io

    from PIL import Image

    (spec, uri), = list(plots.png_data_uris(_hacking_report()))
    image = Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1])))
    assert image.mode == "P" and len(image.getcolors(256)) <= plots.HTML_STYLE.palette
    assert image.size[0] == int(plots.HTML_STYLE.width * plots.HTML_STYLE.dpi)


def test_plot_metrics_accepts_mapped_raw_tags_and_rejects_a_filter_matching_nothing(monkeypatch, tmp_path):
    run = make_run("raw", {"kl/ref": np.linspace(0, 1, 50), "reward/score": np.linspace(0, 2, 50)},
                   mapping={"objective/kl": "kl/ref", "objective/scores": "reward/score"})
    monkeypatch.setattr(cli_report, "analyze", lambda path, config=None, *, jobs=1: Report(runs=[RunReport(run=run, verdict="healthy")]))
    monkeypatch.chdir(tmp_path)
    assert [s.metrics for s in plots.plot_specs(RunReport(run=run, verdict="healthy"), ["objective/kl"])] == [["kl/ref"]]
    ok = run_cli(["plot", "run", "--metrics", "objective/kl"])
    assert ok.exit_code == 0, ok.output
    # the default output folder
    assert [p.name.split("__")[1] for p in (tmp_path / "ppo-doctor-plots").iterdir()] == ["kl.png"]
    bad = run_cli(["plot", "run", "--metrics", "objective/nope"])
    assert bad.exit_code == 2
    assert "matches no metric" in bad.stderr and "objective/kl" in bad.stderr and "kl/ref" in bad.stderr
    partly = run_cli(["plot", "run", "--metrics", "objective/nope,kl/ref"])
    assert partly.exit_code == 0 and "objective/nope: no run has this metric" in partly.stderr


def test_a_finding_carries_the_metrics_its_rule_reads_so_plots_need_no_registry():
    """``Finding.reads`` is filled from ``Rule.requires`` when a rule makes the finding; the
    plotter shades on those metrics (the any-of group as the alternative the run logged)."""
    import ast
    from pathlib import Path

    from ppo_doctor.report.plots import rule_metrics
    from ppo_doctor.results import Finding
    from ppo_doctor.rules.examples import example_run
    from ppo_doctor.rules.registry import get

    rule = get("PD501")
    run = example_run(rule.bad_example())
    (found,) = list(rule().run(run))
    assert found.reads == (("reward/score", "reward/total"),)
    assert rule_metrics(found) == {"reward/score", "reward/total"}
    assert rule_metrics(found, run) == {"reward/score"}
    plain = Finding(code="PD501", name="reward-oscillation", symptom="oscillation", severity="warning", metric="reward/score", message="m")
    assert rule_metrics(plain) == {"reward/score"}
    tree = ast.parse(Path(__file__).parents[1].joinpath("ppo_doctor/report/plots.py").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert not any(m.startswith("rules") for m in imported)
