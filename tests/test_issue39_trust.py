"""Issue 39, "Nothing trusted that can lie": each class of hostile input, built at test time, gives
no traceback, no hang, no memory blow-up, no silent loss and no silent pass.

Plugins are real distributions found by importlib.metadata: a ``*.dist-info`` folder (METADATA and
entry_points.txt) beside the plugin's module in a folder put on the path, which is all
importlib.metadata reads (https://packaging.python.org/en/latest/specifications/recording-installed-packages/).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
import time
from fractions import Fraction
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from hostile_inputs import peak_bytes

from ppo_doctor import analyze, ingest, plugins, report
from ppo_doctor.errors import ConfigError, PluginError
from ppo_doctor.exits import EXIT_ERROR
from ppo_doctor.rules import registry

ROOT = Path(__file__).resolve().parents[1]


# -- helpers --------------------------------------------------------------------------------------
def make_site(tmp: Path, modules: dict[str, str], entry_points: dict[str, dict[str, str]], *, raw_entry_points: bytes | None = None) -> Path:
    """A folder holding ``modules`` and one distribution ``acme-evil 0.1`` declaring ``entry_points``."""
    site = tmp / "site"
    info = site / "acme_evil-0.1.dist-info"
    info.mkdir(parents=True)
    for name, text in modules.items():
        (site / f"{name}.py").write_text(textwrap.dedent(text))
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-evil\nVersion: 0.1\n")
    text = "".join(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) for group, eps in entry_points.items())
    (info / "entry_points.txt").write_bytes(raw_entry_points if raw_entry_points is not None else text.encode())
    return site


def cli(*args: str, site: Path | None = None, cwd: Path = ROOT, timeout: float = 120) -> subprocess.CompletedProcess:
    path = [str(site)] if site else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*path, str(ROOT)])}
    return subprocess.run([sys.executable, "-m", "ppo_doctor.cli", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)


def good_run(folder: Path, steps: int = 100) -> Path:
    """A JSONL run whose loss turns NaN at step 90: the built-in PD601 fires on it."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = ({"step": i, "reward": 0.1 * i, "kl": 0.01, "loss": math.nan if i >= 90 else 1.0} for i in range(steps))
    (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


@pytest.fixture
def fresh_plugins(monkeypatch: pytest.MonkeyPatch):
    """Forget every loaded plugin for the test (monkeypatch puts the caches back after it)."""
    monkeypatch.setattr(registry, "_RULES", None)
    monkeypatch.setattr(registry, "_ORIGIN", {})
    monkeypatch.setattr(ingest, "_PLUGIN_READERS", None)
    monkeypatch.setattr(report, "_PLUGIN_FORMATS", None)

    def use(site: Path) -> None:
        monkeypatch.syspath_prepend(str(site))

    return use


EVIL_RULES = '''
import time

from ppo_doctor.results import Finding
from ppo_doctor.rules import Rule


class NanOnset(Rule):
    """Yields a finding whose onset is NaN."""

    code = "PD981"
    name = "acme-nan-onset"
    symptom = "stagnation"
    requires = ("reward/score",)

    def evaluate(self, ctx):
        yield self.finding(ctx, metric="reward/score", observed={}, start_step=float("nan"))


class NotAFinding(Rule):
    """Yields a string."""

    code = "PD982"
    name = "acme-not-a-finding"
    symptom = "stagnation"
    requires = ("reward/score",)

    def evaluate(self, ctx):
        yield "a finding, trust me"


class Forever(Rule):
    """Never returns."""

    code = "PD983"
    name = "acme-forever"
    symptom = "stagnation"
    requires = ("reward/score",)

    def evaluate(self, ctx):
        # sleeps rather than spins: in the worker-thread test the abandoned thread lives on with the
        # test process, and a spinning one would hold the GIL against every later test
        while True:
            time.sleep(0.01)
        yield


class Exits(Rule):
    """Ends the process."""

    code = "PD984"
    name = "acme-exits"
    symptom = "stagnation"
    requires = ("reward/score",)

    def evaluate(self, ctx):
        raise SystemExit(0)


Alias = Exits  # the same class under a second name: one rule, not a clash with itself
'''

EVIL_READER = '''
NAME = "acmelog"


def sniff(path, head):
    return path.suffix == ".acmelog"


def read(path):
    return "not a list of runs"
'''

NAN_STEPS_READER = '''
from ppo_doctor.frame import RawRun, RawSeries

NAME = "nanlog"


def sniff(path, head):
    return path.suffix == ".nanlog"


def read(path):
    return [RawRun(series=[RawSeries(tag="reward", steps=[0.0, float("nan"), 1e30], values=[1.0, 2.0, 3.0], source=str(path))])]
'''

EVIL_FORMATS = '''
import time


def raises(report, options):
    raise RuntimeError("renderer bug")


def sleeps(report, options):
    time.sleep(60)
    return ""
'''


# -- 1, 2, 3: plugins -----------------------------------------------------------------------------
def test_a_plugin_rule_or_reader_that_lies_is_named_and_the_rest_of_the_report_stands(tmp_path, fresh_plugins):
    fresh_plugins(make_site(tmp_path, {"evil_rules": EVIL_RULES, "evil_reader": EVIL_READER},
                            {plugins.RULES: {"evil": "evil_rules"}, plugins.READERS: {"acmelog": "evil_reader"}}))
    runs = good_run(tmp_path / "runs" / "a")
    (runs / "train.acmelog").write_text("1 reward 0.5\n")
    rep = analyze(tmp_path / "runs", {"plugin_timeout": 0.5, "ignore": []})
    (rr,) = rep.runs
    assert "PD601" in [f.code for f in rr.findings]  # the built-in finding survives
    why = {na.code: " ".join(na.missing) for na in rr.not_applicable}
    assert "start_step is float nan, not a step" in why["PD981"] and "acme-evil 0.1" in why["PD981"]
    assert "yielded str 'a finding, trust me', not a Finding" in why["PD982"]
    assert "stopped: did not return within 0.5 s (plugin_timeout)" in why["PD983"]
    assert "called sys.exit(0)" in why["PD984"]
    # the plugin reader's file is one error naming the reader; the JSONL beside it is read
    assert any("train.acmelog" in e.path and "the acmelog reader returned str, not a list of RawRun (a plugin reader: module evil_reader)" in e.message
               for e in rep.errors), rep.errors
    assert rr.run.frame.has("loss/total")


def test_a_plugin_readers_step_past_int64_costs_its_file_with_a_message(tmp_path, fresh_plugins):
    fresh_plugins(make_site(tmp_path, {"nan_reader": NAN_STEPS_READER}, {plugins.READERS: {"nanlog": "nan_reader"}}))
    run = good_run(tmp_path / "run")
    (run / "train.nanlog").write_text("x")
    rep = analyze(run, {})
    assert any("train.nanlog" in e.path and "step nan is not an integer within int64" in e.message for e in rep.errors), rep.errors
    assert rep.runs[0].run.frame.has("loss/total")


def test_a_plugin_rule_that_never_returns_is_stopped_in_a_worker_thread_too(tmp_path, fresh_plugins):
    import threading

    fresh_plugins(make_site(tmp_path, {"evil_rules": EVIL_RULES}, {plugins.RULES: {"evil": "evil_rules"}}))
    good_run(tmp_path / "run")
    out: dict = {}
    worker = threading.Thread(target=lambda: out.setdefault("rep", analyze(tmp_path / "run", {"plugin_timeout": 0.3, "select": ["PD983", "PD601"]})))
    started = time.monotonic()
    worker.start()
    worker.join(30)
    assert not worker.is_alive() and time.monotonic() - started < 10
    (rr,) = out["rep"].runs
    assert [f.code for f in rr.findings] == ["PD601"]
    assert "did not return within 0.3 s" in rr.not_applicable[0].missing[0]


def test_a_plugin_that_exits_on_import_fails_the_gate(tmp_path):
    site = make_site(tmp_path, {"exits_on_import": "import sys\nsys.exit(0)\n"}, {plugins.RULES: {"quiet": "exits_on_import"}})
    done = cli("check", str(good_run(tmp_path / "run")), "--isolated", site=site, cwd=tmp_path)
    assert done.returncode == EXIT_ERROR, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert "plugin 'quiet' (exits_on_import) of entry-point group ppo_doctor.rules from acme-evil 0.1: called sys.exit(0) while being imported" in done.stderr


def test_a_plugin_rule_that_raises_keyboardinterrupt_fails_the_gate(tmp_path):
    rule = EVIL_RULES.split("class NotAFinding")[0].replace('yield self.finding(ctx, metric="reward/score", observed={}, start_step=float("nan"))', "raise KeyboardInterrupt")
    site = make_site(tmp_path, {"interrupts": rule}, {plugins.RULES: {"ctrl_c": "interrupts"}})
    done = cli("check", str(good_run(tmp_path / "run")), "--isolated", site=site, cwd=tmp_path)
    assert done.returncode != 0 and "Aborted!" in done.stderr and "Traceback" not in done.stderr


def test_a_renderer_that_raises_or_hangs_is_named(tmp_path, fresh_plugins):
    fresh_plugins(make_site(tmp_path, {"evil_formats": EVIL_FORMATS},
                            {plugins.FORMATS: {"raises": "evil_formats:raises", "sleeps": "evil_formats:sleeps"}}))
    with pytest.raises(PluginError, match=r"plugin 'raises' .*acme-evil 0.1: render failed \(RuntimeError: renderer bug\)"):
        report.render(report.Report(), "raises")
    started = time.monotonic()
    with pytest.raises(PluginError, match=r"plugin 'sleeps' .*render did not return within 0.2 s"):
        report.render(report.Report(), "sleeps", report.RenderOptions(plugin_timeout=0.2))
    assert time.monotonic() - started < 5


def test_entry_points_that_are_not_utf8_name_their_distribution(tmp_path, fresh_plugins):
    fresh_plugins(make_site(tmp_path, {}, {}, raw_entry_points=b"[ppo_doctor.rules]\nacme = acme\xff\xfe.rules\n"))
    with pytest.raises(PluginError, match=r"entry-point group ppo_doctor.rules: the entry points of .*acme_evil-0.1.dist-info cannot be read \(UnicodeDecodeError"):
        registry.all_rules()


def test_the_plugin_timeout_setting_is_a_finite_number_of_seconds():
    from ppo_doctor.config import coerce

    assert coerce({"plugin_timeout": 3}).plugin_timeout == 3.0
    for bad in (0, -1, math.nan, math.inf, "ten", True):
        with pytest.raises(ConfigError, match="plugin_timeout: expected a number of seconds > 0"):
            coerce({"plugin_timeout": bad})


# -- 4: plans and shares ----------------------------------------------------------------------------
def flat_run(folder: Path, config: dict | None = None, steps: int = 150) -> Path:
    """A finished run whose reward never moves (PD301's error on a whole run)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = ({"step": i, "reward": 0.5, "kl": 0.01, "loss": 1.0} for i in range(steps))
    (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    if config is not None:
        (folder / "config.json").write_text(json.dumps(config))
    return folder


@pytest.mark.parametrize("plan", [1e308, 10**40, "1e308"])
def test_a_plan_past_int64_is_no_plan_and_says_so(tmp_path, plan):
    baseline = analyze(flat_run(tmp_path / "plain"), {}).runs[0]
    (rr,) = analyze(flat_run(tmp_path / "r", {"max_steps": plan}), {}).runs
    assert rr.run.planned_steps is None
    assert any("max_steps" in i.message and "not a number of steps within int64" in i.message for i in rr.run.issues)
    # judged as the same run without a plan: the absence of progress is not hidden as a note
    assert rr.verdict == baseline.verdict
    assert [(f.code, f.severity) for f in rr.findings] == [(f.code, f.severity) for f in baseline.findings]


def test_a_plan_within_int64_is_still_read(tmp_path):
    (rr,) = analyze(flat_run(tmp_path / "r", {"max_steps": 600, "warmup_steps": 10**30}), {}).runs
    assert rr.run.planned_steps == 600 and rr.run.warmup_steps == 0
    assert any("warmup_steps" in i.message for i in rr.run.issues)


@pytest.mark.parametrize("kw", [{"planned_steps": math.nan}, {"planned_steps": math.inf}, {"planned_steps": True}, {"planned_steps": 2**63},
                                {"planned_steps": 0}, {"planned_steps": 1.5}, {"warmup_steps": "abc"}, {"warmup_steps": -1}, {"warmup_steps": math.nan}])
def test_the_monitor_refuses_a_plan_that_is_no_step_count(kw):
    from ppo_doctor import Monitor

    with pytest.raises(ValueError, match="must be a whole number of steps"):
        Monitor(**kw)


def test_the_monitor_takes_a_plan_given_as_an_integral_float_or_numpy_integer():
    from ppo_doctor import Monitor

    m = Monitor(planned_steps=np.int64(200), warmup_steps=10.0)
    assert (m.planned_steps, m.warmup_steps) == (200, 10) and type(m.planned_steps) is int


@pytest.mark.parametrize("share", [math.nan, math.inf, -1, 0, 7, "nan"])
def test_fair_share_is_a_share_of_the_plan(share):
    from ppo_doctor.config import coerce

    with pytest.raises(ConfigError, match=r"rules.PD301.fair_share"):
        coerce({"rules": {"PD301": {"fair_share": share}}})
    assert coerce({"rules": {"PD301": {"fair_share": 0.5}}}).rules["PD301"]["fair_share"] == 0.5


def test_a_float_rule_parameter_is_finite():
    from ppo_doctor.config import coerce

    param = next(k for k, v in registry.get("PD101").params.items() if isinstance(v, float))
    with pytest.raises(ConfigError, match="expected a finite number"):
        coerce({"rules": {"PD101": {param: math.nan}}})


# -- 5: failure cost ----------------------------------------------------------------------------------
def _nan_run_on_monitor(wall: Callable[[int], float], hparams: dict | None = None):
    from ppo_doctor import Monitor

    m = Monitor(hparams=hparams or {})
    for i in range(100):
        m.log(i, {"loss": math.nan if i >= 50 else 1.0, "reward": 0.5 + 0.01 * i}, wall_time=wall(i))
    return m.run_report()


@pytest.mark.parametrize("glitch", [1.7e18, 0.0, -5.0, math.inf])
def test_one_glitched_timestamp_is_not_the_cost(glitch):
    rr = _nan_run_on_monitor(lambda i: glitch if i == 70 else 1.7e9 + 10 * i)
    assert rr.cost is not None and rr.cost.hours_from == "wall-clock times"
    expected = (99 - rr.cost.onset_step) * 10 / 3600
    assert rr.cost.hours_after == pytest.approx(expected, rel=0.01)


def test_a_pause_still_counts_in_the_cost():
    # the job was down a day between steps 60 and 61: the log cannot tell a pause from a slow step
    rr = _nan_run_on_monitor(lambda i: 1.7e9 + 10 * i + (86_400 if i > 60 else 0))
    assert rr.cost.hours_after == pytest.approx(((99 - rr.cost.onset_step) * 10 + 86_400) / 3600, rel=0.01)


@pytest.mark.parametrize("world", [1e308, 10**40, 1e12])
def test_a_device_count_past_any_cluster_is_not_read(world):
    from ppo_doctor.cost import device_count

    rr = _nan_run_on_monitor(lambda i: 1.7e9 + 10 * i, {"world_size": world})
    assert device_count(rr.run) == (None, "")
    assert _nan_run_on_monitor(lambda i: 1.7e9 + 10 * i, {"world_size": 64}).cost.devices == 64


# -- 6: text samples ----------------------------------------------------------------------------------
def test_one_huge_completion_is_cut_and_said(tmp_path):
    from ppo_doctor.textbounds import MAX_SAMPLE_CHARS

    run = flat_run(tmp_path / "r", steps=20)
    (run / "samples.jsonl").write_text(json.dumps({"step": 1, "completion": "ab\u0301\U0001F600 " * 50_000}, ensure_ascii=False) + "\n")
    started = time.monotonic()
    (rr,) = analyze(run, {}).runs
    assert time.monotonic() - started < 10
    (sample,) = rr.run.texts
    assert len(sample.text) == MAX_SAMPLE_CHARS
    assert any("1 text sample(s) cut to their first 20,000 characters" in i.message for i in rr.run.issues)


def test_many_samples_are_thinned_evenly_and_said(tmp_path):
    from ppo_doctor.textbounds import MAX_SAMPLES

    run = flat_run(tmp_path / "r", steps=20)
    n = 3 * MAX_SAMPLES
    (run / "samples.jsonl").write_text("".join(json.dumps({"step": i // 100, "completion": f"answer {i}"}) + "\n" for i in range(n)))
    (rr,) = analyze(run, {}).runs
    texts = rr.run.texts
    assert len(texts) <= MAX_SAMPLES
    assert texts[0].text == "answer 0" and texts[-1].step >= (n - 2 * n // MAX_SAMPLES) // 100  # early and late both kept
    assert any(f"of {n:,} records' text samples kept while reading" in i.message for i in rr.run.issues)


def test_many_short_samples_cost_the_file_and_their_numbers_not_a_dict_a_line(tmp_path):
    # 10^6 such lines took 1.2 GiB when every line was held as a dict before the columns were
    # made; read a block at a time, the reader holds the file's bytes, the numbers of each line
    # (step, reward, line number) and the samples kept: measured 85 bytes a line beyond the file
    # here, where the dicts took 900
    from ppo_doctor.ingest.readers import jsonl

    n = 50_000
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps({"step": i, "reward": i % 7 / 7, "completion": f"answer {i} is short"}) + "\n" for i in range(n)))
    jsonl.read(path)  # the parsers' imports are not the reader's cost
    runs = []
    peak = peak_bytes(lambda: runs.extend(jsonl.read(path)))
    assert peak - path.stat().st_size < 250 * n, f"{(peak - path.stat().st_size) / n:.0f} bytes a line"
    (run,) = runs
    assert len(run.series[0].steps) == n and run.texts[0].line == 1 and run.texts[-1].line > 0.99 * n


def test_one_long_completion_among_short_ones_costs_its_length_once(tmp_path):
    # a text column was tried as a numpy array first: fixed-width, as wide as its longest text
    # times its lines (this file took 800 MB)
    from ppo_doctor.ingest.readers import jsonl

    path = tmp_path / "samples.jsonl"
    rows = ({"step": i, "loss": 0.1, "completion": "x" * 100_000 if i == 1 else "short"} for i in range(2000))
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    jsonl.read(path)
    peak = peak_bytes(lambda: jsonl.read(path))
    assert peak < 5 << 20, f"{peak} bytes"


def test_the_monitor_holds_a_bounded_number_of_samples():
    from ppo_doctor import Monitor
    from ppo_doctor.textbounds import MAX_SAMPLES

    m = Monitor()
    for step in range(5 * MAX_SAMPLES // 100):
        m.log(step, {"loss": 1.0}, texts=[f"answer {step}.{k}" for k in range(100)])
    assert len(m._texts) <= 2 * MAX_SAMPLES
    run = m.run()
    assert len(run.texts) <= MAX_SAMPLES and run.texts[0].step == 0 and run.texts[-1].step > 4 * MAX_SAMPLES // 100
    assert any("text samples kept, evenly spread as they were logged" in i.message for i in run.issues)


def test_spread_keeps_an_even_part_of_a_stream():
    from ppo_doctor.textbounds import Spread

    kept = Spread(cap=10)
    for i in range(1000):
        kept.offer(i)
    assert len(kept) < 20 and kept[0] == 0 and set(np.diff(kept)) == {kept.stride}


def test_spread_offered_a_block_at_a_time_keeps_what_it_keeps_one_at_a_time():
    from ppo_doctor.textbounds import Spread

    rng = np.random.default_rng(5)
    for cap in (1, 3, 10):
        one, blocks = Spread(cap=cap), Spread(cap=cap)
        offered = 0
        for size in rng.integers(0, 60, size=40).tolist():
            items = list(range(offered, offered + size))
            offered += size
            for i in items:
                one.offer(-i)
            blocks.offer_all(items, lambda i: -i)
            assert (list(blocks), blocks.stride, blocks.offered) == (list(one), one.stride, one.offered)


# -- 7: numbers in folder names -------------------------------------------------------------------------
def test_folder_names_give_parameters_only_where_they_write_one():
    from ppo_doctor.sweep.table import name_tokens

    assert name_tokens("lr=3e-4") == {"lr": 3e-4}
    assert name_tokens("beta0.1_seed42") == {"beta": 0.1, "seed": 42.0}
    assert name_tokens("kl_coef_0.1") == {"kl_coef": 0.1}
    for counter in ("PPO_3", "PPO_1", "A2C_12", "SAC-2", "CartPole__ppo__1__1700000000"):
        assert "ppo" not in name_tokens(counter) and "sac" not in name_tokens(counter) and "a2c" not in name_tokens(counter), counter
    assert name_tokens("lr=1e999") == {} and name_tokens("seed1e999_beta0.1") == {"beta": 0.1}


def test_a_sweep_of_sb3_run_counters_or_overflowing_names_attributes_nothing_to_them(tmp_path):
    from ppo_doctor.sweep import sweep

    for n in (1, 2, 3):
        flat_run(tmp_path / "sb3" / f"PPO_{n}", steps=40)
    for name in ("lr=1e999_a", "lr=1e999_b", "lr=1e-3_c"):
        flat_run(tmp_path / "big" / name, steps=40)
    for root in ("sb3", "big"):
        rep = sweep(tmp_path / root, {})
        params = [row.params for row in rep.rows]
        assert all("ppo" not in p for p in params), params
        assert all(all(math.isfinite(v) for v in p.values()) for p in params), params
        assert all(row.seed is None or math.isfinite(row.seed) for row in rep.rows)


# -- 8: figures and links -------------------------------------------------------------------------------
def test_plot_never_writes_through_a_link_in_its_folder(tmp_path):
    from ppo_doctor.report.plots import _slug, plot_report, plot_specs

    run = flat_run(tmp_path / "r", steps=60)
    log = run / "metrics.jsonl"
    before = log.read_bytes()
    outside = tmp_path / "victim.txt"
    outside.write_text("keep me")
    rep = analyze(run, {})
    out = tmp_path / "figs"
    wanted = ["reward/score", "kl/ref"]
    names = [f"{_slug('r')}__{spec.group}.png" for spec in plot_specs(rep.runs[0], wanted)]
    assert len(names) >= 2
    out.mkdir()
    for i, name in enumerate(names):  # a link named like each figure, to the log or outside the folder
        (out / name).symlink_to(log if i % 2 else outside)
    written = plot_report(rep, out, metrics=wanted)
    assert [p.name for p in written] == names
    assert all(p.is_file() and not p.is_symlink() and p.read_bytes()[:4] == b"\x89PNG" for p in written)
    assert log.read_bytes() == before and outside.read_text() == "keep me"
    assert sorted(p.name for p in out.iterdir()) == sorted(names)  # no temporary file left


def test_plot_never_replaces_a_run_file(tmp_path):
    from ppo_doctor.report.plots import _slug, plot_report

    run = flat_run(tmp_path / "r", steps=60)
    rep = analyze(run, {})
    # a log named like the figure, in the folder the figures go to
    victim = run / f"{_slug(rep.runs[0].run.id)}__reward.png"
    victim.write_bytes(b"a log")
    rep.runs[0].run.files.append(str(victim))
    with pytest.raises(FileExistsError, match="is one of the files the report was read from"):
        plot_report(rep, run)
    assert victim.read_bytes() == b"a log"


# -- 9: unchecked numbers ---------------------------------------------------------------------------------
@pytest.mark.parametrize("interval", ["nan", "inf", "-inf"])
def test_watch_refuses_an_interval_that_is_no_number_of_seconds(tmp_path, interval):
    done = cli("watch", str(flat_run(tmp_path / "r", steps=5)), "--interval", interval, "--isolated", cwd=tmp_path, timeout=60)
    assert done.returncode == EXIT_ERROR and "Traceback" not in done.stderr
    assert "--interval" in done.stderr


def test_a_huge_select_list_is_one_short_error(tmp_path):
    from ppo_doctor.config import resolve

    (tmp_path / "ppo-doctor.toml").write_text("select = [" + ",".join(f'"X{i}"' for i in range(300_000)) + "]\n")
    started = time.monotonic()
    with pytest.raises(ConfigError) as err:
        resolve(config_file=tmp_path / "ppo-doctor.toml")
    assert time.monotonic() - started < 5 and len(str(err.value)) < 300
    assert "select: 300,000 entries, more than the 10,000 a list setting may hold" in str(err.value)
    many = [f"X{i}" for i in range(50)]
    with pytest.raises(ConfigError, match=r"select: 50 entries match no rule: 'X0', 'X1', 'X2', 'X3', 'X4' and 45 more"):
        resolve({"select": many}, isolated=True)


# -- 10: Monitor.log never raises into the training loop ----------------------------------------------------
def test_monitor_log_takes_numbers_past_a_float_and_unreadable_texts():
    from ppo_doctor import Monitor

    class NoStr:
        def __str__(self):
            raise RuntimeError("no str")

    class Weird(str):
        def __str__(self):
            raise RuntimeError("no str either")

    m = Monitor()
    m.log(1, {"loss": 10**400, "kl": -(10**400)})
    m.log(2, {"loss": Fraction(10**400, 3), NoStr(): 1.0})
    m.log(3, {"loss": 1.0}, texts=[{"completion": "x", "tag": NoStr()}, Weird("y"), {"completion": Weird("z"), "prompt": Weird("p")}],
          wall_time="not a time")
    steps, values = m.run().frame.arrays("loss/total")
    assert steps.tolist() == [1, 2, 3] and values.tolist() == [math.inf, math.inf, 1.0]
    assert [t.text for t in m.run().texts] == ["x", "y", "z"] and all(type(t.text) is str for t in m.run().texts)
    assert any(f.code == "PD601" for f in m.report().runs[0].findings)


# -- 11: rotated logs ------------------------------------------------------------------------------------------
def test_a_compressed_rotated_log_is_named_not_dropped(tmp_path):
    import gzip

    run = flat_run(tmp_path / "r", steps=100)
    lines = (run / "metrics.jsonl").read_text().splitlines(True)
    (run / "metrics.jsonl").write_text("".join(lines[50:]))
    (run / "metrics.jsonl.1.gz").write_bytes(gzip.compress("".join(lines[:50]).encode()))
    rep = analyze(run, {})
    assert any("metrics.jsonl.1.gz" in e.path and "gzip-compressed: decompress first" in e.message for e in rep.errors)
    assert any("metrics.jsonl.1.gz" in u for u in rep.runs[0].run.unread)
    done = cli("check", str(run), "--isolated", cwd=tmp_path)
    assert done.returncode == EXIT_ERROR and "metrics.jsonl.1.gz" in done.stderr


# -- also open: int64 steps, Dask wait, exclude ---------------------------------------------------------------------
@pytest.mark.parametrize("steps", [[0, 1, 2**70], np.array([0.0, 1.0, 1e30]), np.array([0, 1, 2**64 - 1], dtype=np.uint64), [0, 1, -(2**70)]])
def test_analyze_of_a_dict_refuses_steps_past_int64_with_a_warning(steps):
    (rr,) = analyze({"step": steps, "reward": [1.0, 2.0, 3.0]}).runs
    assert rr.run.frame.column("step").tolist() == [0, 1]
    assert any("1 row(s) whose step is past int64 left out" in i.message for i in rr.run.issues)


def test_analyze_of_a_dataframe_refuses_steps_past_int64_with_a_warning():
    pd = pytest.importorskip("pandas")
    wide = pd.DataFrame({"step": [0.0, 1.0, 1e30], "reward": [1.0, 2.0, 3.0]})
    long = pd.DataFrame({"step": [0.0, 1.0, 1e30], "tag": ["reward"] * 3, "value": [1.0, 2.0, 3.0]})
    for frame in (wide, long):
        (rr,) = analyze(frame).runs
        assert rr.run.frame.column("step").tolist() == [0, 1]
        assert any("step is past int64 left out" in i.message for i in rr.run.issues)


def test_sweep_on_a_scheduler_without_workers_says_it_waits(tmp_path):
    distributed = pytest.importorskip("distributed")
    run = flat_run(tmp_path / "r", steps=10)
    with distributed.LocalCluster(n_workers=0, host="127.0.0.1", dashboard_address=None, protocol="tcp") as cluster:
        done = cli("sweep", str(run), "--isolated", "--dask", cluster.scheduler_address, "--dask-timeout", "1", cwd=tmp_path)
    assert done.returncode == EXIT_ERROR
    lines = done.stderr.splitlines()
    waits = next(i for i, ln in enumerate(lines) if "has no worker yet: waiting up to 1 s for one (dask-timeout)" in ln)
    assert any("has no worker after 1 s" in ln for ln in lines[waits + 1:])


def test_exclude_passes_a_stray_file_over(tmp_path):
    import gzip

    run = flat_run(tmp_path / "runs" / "r", steps=100)
    (run / "old.jsonl.gz").write_bytes(gzip.compress(b"{}"))
    (tmp_path / "runs" / "scratch").mkdir()
    (tmp_path / "runs" / "scratch" / "metrics.jsonl").write_text("{broken\n")
    assert analyze(tmp_path / "runs", {}).errors  # read: an error that turns check into exit 2
    for settings in ({"extend_exclude": ["*.gz", "scratch/"]}, {"exclude": ["r/old.jsonl.gz", "scratch"]}):
        rep = analyze(tmp_path / "runs", settings)
        assert not rep.errors and [rr.run.id for rr in rep.runs] == ["r"] and not rep.runs[0].run.unread
    (tmp_path / "ppo-doctor.toml").write_text('extend-exclude = ["*.gz", "scratch"]\n')
    done = cli("check", str(tmp_path / "runs"), cwd=tmp_path)
    assert done.returncode in (0, 1) and "old.jsonl.gz" not in done.stderr, done.stderr
    with pytest.raises(ConfigError, match="exclude: expected a list of file or folder patterns"):
        analyze(tmp_path / "runs", {"exclude": [3]})
