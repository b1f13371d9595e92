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

import numpy as np
import pytest

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
        while True:
            pass
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
