"""Plugins (ppo_doctor.plugins, docs/plugins.md): a package installed at test time adds a rule,
a reader and an output format through entry points, and ``ppo-doctor`` uses all three; a broken
plugin is one clear error line and exit 2; the built-in rules, their listing and docs/rules.md
are unchanged by an installed plugin.

The plugin distributions are real installs: ``pip install --no-deps --no-build-isolation
--no-index --target`` of a generated ``pyproject.toml`` (offline, with the setuptools the
environment has), so importlib.metadata finds them as it finds any installed package.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile
from importlib import metadata
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Callable

import pytest

from ppo_doctor import ingest, plugins, report
from ppo_doctor.errors import PluginError
from ppo_doctor.exits import EXIT_ERROR
from ppo_doctor.rules import registry

ROOT = Path(__file__).resolve().parents[1]

RULES_PY = '''
"""The team's own rule."""
from ppo_doctor.rules import Rule


class AcmeRewardFlat(Rule):
    """The reward does not move at all.

    Our trainer logs a constant reward when its reward server is down.
    """

    code = "PD990"
    name = "acme-reward-flat"
    symptom = "stagnation"
    severity = "error"
    requires = ("reward/score",)
    params = {"min_points": 3}
    message = "{metric} is flat at {value:num} over {points} points"

    def evaluate(self, ctx):
        steps, values = ctx.finite("reward/score")
        if len(values) >= ctx.params["min_points"] and values.max() == values.min():
            yield self.finding(ctx, metric="reward/score", observed={"points": len(values), "value": float(values[0])},
                               start_step=int(steps[0]), end_step=int(steps[-1]))
'''

READER_PY = '''
"""``*.acmelog``: one ``step metric value`` line per point."""
from collections import defaultdict

from ppo_doctor.errors import LogReadError
from ppo_doctor.frame import RawRun, RawSeries

NAME = "acmelog"


def sniff(path, head):
    return path.suffix == ".acmelog"


def read(path):
    points = defaultdict(list)
    for line in path.read_text(encoding="utf-8").splitlines():
        step, metric, value = line.split()
        points[metric].append((int(step), float(value)))
    if not points:
        raise LogReadError(str(path), "no points")
    return [RawRun(series=[RawSeries(tag=m, steps=[s for s, _ in p], values=[v for _, v in p], source=str(path))
                           for m, p in points.items()])]
'''

FORMATS_PY = '''
"""``--format acme``: one line per finding."""


def render(report, options):
    return "".join(f"ACME {rr.run.format} {f.code} {f.name}: {f.message}\\n" for rr in report.runs for f in rr.findings)
'''

# not named by an entry point: the in-process tests point fake entry points at these
INVALID_PY = '''
from ppo_doctor.rules import Rule


class BadSymptom(Rule):
    """A rule of an unknown symptom."""

    code = "PD991"
    name = "acme-bad-symptom"
    symptom = "sadness"


class TakesNothing:
    pass


def render_nothing():
    return ""


def render_bytes(report, options):
    return b"not text"


NAME = "acmelog"  # a reader without sniff/read
'''

ACME_ENTRY_POINTS = {
    "ppo_doctor.rules": {"acme": "acme_ppo_plugin.rules"},
    "ppo_doctor.readers": {"acmelog": "acme_ppo_plugin.reader"},
    "ppo_doctor.formats": {"acme": "acme_ppo_plugin.formats:render"},
}


def install(tmp: Path, dist: str, package: str, files: dict[str, str], entry_points: dict[str, dict[str, str]]) -> Path:
    """Build and install a distribution into a folder of its own; the folder (for PYTHONPATH)."""
    src = tmp / f"{dist}-src"
    (src / package).mkdir(parents=True)
    (src / package / "__init__.py").write_text("")
    for name, text in files.items():
        (src / package / name).write_text(textwrap.dedent(text))
    tables = "".join(
        f'\n[project.entry-points."{group}"]\n' + "".join(f'{k} = "{v}"\n' for k, v in eps.items()) for group, eps in entry_points.items()
    )
    (src / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n'
        f'[project]\nname = "{dist}"\nversion = "0.1"\n' + tables
    )
    site = tmp / f"{dist}-site"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index", "--no-cache-dir",
         "--disable-pip-version-check", "--target", str(site), str(src)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return site


@pytest.fixture(scope="module")
def acme(tmp_path_factory) -> Path:
    files = {"rules.py": RULES_PY, "reader.py": READER_PY, "formats.py": FORMATS_PY, "invalid.py": INVALID_PY}
    return install(tmp_path_factory.mktemp("acme"), "acme-ppo-plugin", "acme_ppo_plugin", files, ACME_ENTRY_POINTS)


def cli(*args: str, site: Path | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """``python -m ppo_doctor.cli ARGS`` with ``site`` (a plugin install) on the path."""
    path = [str(site)] if site else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*path, str(ROOT)])}
    return subprocess.run([sys.executable, "-m", "ppo_doctor.cli", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


def flat_run(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.acmelog").write_text("".join(f"{step} reward 0.25\n" for step in range(30)))
    return folder


# -- the three kinds, end to end ------------------------------------------------------------------
def test_rules_lists_the_plugin_rule_with_its_package(acme):
    done = cli("rules", site=acme)
    assert done.returncode == 0, done.stderr
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("PD990"))
    assert "acme-reward-flat" in line and line.endswith("The reward does not move at all. (from acme-ppo-plugin 0.1)")
    listed = json.loads(cli("rules", "--format", "json", site=acme).stdout)
    assert [d.get("plugin") for d in listed if d["code"] == "PD990"] == ["acme-ppo-plugin 0.1"]
    assert all("plugin" not in d for d in listed if d["code"] != "PD990")


def test_report_reads_with_the_plugin_reader_fires_the_plugin_rule_and_renders_the_plugin_format(acme, tmp_path):
    runs = flat_run(tmp_path / "runs")
    done = cli("report", str(runs), "--format", "acme", "--isolated", site=acme, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # a plugin rule is a sign unless it says otherwise: its warning carries the outcome that confirmed it
    flat = "ACME acmelog PD990 acme-reward-flat: reward/score is flat at 0.25 over 30 points (the outcome: the reward is stuck"
    assert [line for line in done.stdout.splitlines() if line.startswith(flat)]
    gate = cli("check", str(runs), "--select", "acme-reward-flat", "--format", "json", "--isolated", site=acme, cwd=tmp_path)
    assert gate.returncode == 1, gate.stderr  # a plugin rule gates as a built-in one does
    assert [f["code"] for f in json.loads(gate.stdout)["runs"][0]["findings"]] == ["PD990"]


def test_the_config_file_accepts_a_plugin_format(acme, tmp_path):
    (tmp_path / "ppo-doctor.toml").write_text('format = "acme"\n')
    done = cli("report", str(flat_run(tmp_path / "runs")), site=acme, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # a plugin rule is a sign unless it says otherwise: its warning carries the outcome that confirmed it
    flat = "ACME acmelog PD990 acme-reward-flat: reward/score is flat at 0.25 over 30 points (the outcome: the reward is stuck"
    assert [line for line in done.stdout.splitlines() if line.startswith(flat)]


def test_the_format_help_lists_a_plugin_format_and_the_option_accepts_it_only_then(acme, tmp_path):
    """``--format``'s choices are read when the help is shown or the option given (docs/plugins.md)."""
    shown = cli("report", "--help", site=acme)
    assert shown.returncode == 0 and "github|gitlab|acme" in shown.stdout, shown.stdout
    unknown = cli("report", str(flat_run(tmp_path / "runs")), "--format", "acme2", "--isolated", site=acme, cwd=tmp_path)
    assert unknown.returncode == 2 and "'acme2' is not one of" in unknown.stderr and "'acme'" in unknown.stderr


def test_explain_names_the_plugin_package(acme):
    done = cli("explain", "PD990", site=acme)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "PD990 acme-reward-flat: The reward does not move at all. (from acme-ppo-plugin 0.1)"


# -- built-ins unchanged --------------------------------------------------------------------------
def test_builtin_rules_listing_is_unchanged_by_a_plugin_and_without_one(acme):
    bare = cli("rules")
    assert bare.returncode == 0, bare.stderr
    assert "(from " not in bare.stdout
    assert [ln.split()[0] for ln in bare.stdout.splitlines()[1:]] == [r.code for r in registry.builtin_rules()]
    with_plugin = cli("rules", site=acme).stdout.splitlines()
    assert [ln for ln in with_plugin if not ln.startswith("PD990")] == bare.stdout.splitlines()


def test_docs_rules_md_documents_only_the_builtin_rules_with_a_plugin_installed(acme):
    code = "from ppo_doctor.rules import docs, registry; import sys\nassert 'PD990' in [r.code for r in registry.all_rules()]\nsys.exit(docs.main(['--check']))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(acme), str(ROOT)])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr


# -- finding entry points without importlib.metadata (issue 26) -----------------------------------
GROUPS = (plugins.RULES, plugins.READERS, plugins.FORMATS)


def _importlib_metadata(group: str) -> list[tuple[str, str, str | None]]:
    return sorted((ep.name, ep.value, ep.dist.name if ep.dist else None) for ep in metadata.entry_points(group=group))


def test_the_entry_points_found_are_importlib_metadatas_without_a_plugin_and_with_one(acme, monkeypatch):
    # another distribution finder on sys.meta_path (the importlib_metadata backport, which dask
    # imports, installs one and unhooks the standard library's) makes the cheap scan say "maybe"
    # for every group: importlib.metadata is then always asked
    from importlib.machinery import PathFinder

    others = any(f is not PathFinder and hasattr(f, "find_distributions") for f in sys.meta_path)
    for site in (None, acme):
        if site is not None:
            monkeypatch.syspath_prepend(str(site))
        for group in GROUPS:
            found = sorted((ep.name, ep.value, ep.dist.name if ep.dist else None) for ep in plugins.entry_points(group))
            assert found == _importlib_metadata(group), (site, group)
            # the cheap scan says "maybe" exactly where importlib.metadata has something
            assert plugins._may_declare(group) == (bool(found) or others), (site, group)
    assert all(_importlib_metadata(g) for g in GROUPS)  # the acme plugin declares one of each


def test_a_zip_on_the_path_is_left_to_importlib_metadata(tmp_path, monkeypatch):
    archive = tmp_path / "site.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("acme-0.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: acme\nVersion: 0.1\n")
        z.writestr("acme-0.1.dist-info/entry_points.txt", "[ppo_doctor.rules]\nacme = acme.rules\n")
    monkeypatch.syspath_prepend(str(archive))
    assert plugins._may_declare(plugins.RULES)
    assert [(ep.name, ep.value) for ep in plugins.entry_points(plugins.RULES)] == [("acme", "acme.rules")]


# -- broken plugins, end to end -------------------------------------------------------------------
def _one_error_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == EXIT_ERROR, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_a_plugin_that_cannot_be_imported_is_one_clear_error(tmp_path):
    site = install(tmp_path, "acme-broken", "acme_broken", {"rules.py": "import acme_not_installed_anywhere\n"},
                   {"ppo_doctor.rules": {"broken": "acme_broken.rules"}})
    for args in (["rules"], ["report", str(flat_run(tmp_path / "runs")), "--isolated"], ["explain", "PD101"]):
        line = _one_error_line(cli(*args, site=site, cwd=tmp_path))
        assert line.startswith("ppo-doctor: error: plugin 'broken' (acme_broken.rules) of entry-point group ppo_doctor.rules from acme-broken 0.1: ")
        assert "cannot be imported (ModuleNotFoundError: No module named 'acme_not_installed_anywhere')" in line


def test_a_plugin_rule_may_not_reuse_a_builtin_code(tmp_path):
    text = RULES_PY.replace('"PD990"', '"PD101"')
    site = install(tmp_path, "acme-dup", "acme_dup", {"rules.py": text}, {"ppo_doctor.rules": {"dup": "acme_dup.rules"}})
    line = _one_error_line(cli("rules", site=site))
    assert "plugin 'dup' (acme_dup.rules) of entry-point group ppo_doctor.rules from acme-dup 0.1" in line
    assert "rule PD101 acme-reward-flat: PD101 is already taken by the built-in rule PD101 kl-above-band" in line


# -- each check, in process (fake entry points onto the installed plugin's modules) ---------------
@pytest.fixture
def entry_points(acme: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str, str, str], None]:
    """Replace the installed entry points: ``entry_points(group, name, value)`` adds one."""
    monkeypatch.syspath_prepend(str(acme))
    monkeypatch.setattr(registry, "_RULES", None)
    monkeypatch.setattr(registry, "_ORIGIN", {})
    monkeypatch.setattr(ingest, "_PLUGIN_READERS", None)
    monkeypatch.setattr(report, "_PLUGIN_FORMATS", None)
    table: dict[str, list[EntryPoint]] = {}
    monkeypatch.setattr(plugins, "entry_points", lambda group: table.get(group, []))

    def add(group: str, name: str, value: str) -> None:
        table.setdefault(group, []).append(EntryPoint(name=name, value=value, group=group))

    return add  # monkeypatch puts the real caches back: nothing loaded from the fakes outlives the test


@pytest.mark.parametrize(
    "group, value, why",
    [
        ("ppo_doctor.rules", "acme_ppo_plugin.invalid:BadSymptom", "acme_ppo_plugin.invalid.BadSymptom: unknown symptom 'sadness'"),
        ("ppo_doctor.rules", "acme_ppo_plugin.invalid:TakesNothing", "expected a ppo_doctor.rules.Rule subclass with a code, or a module of them; got the class acme_ppo_plugin.invalid.TakesNothing"),
        ("ppo_doctor.rules", "acme_ppo_plugin.formats", "the module acme_ppo_plugin.formats defines no Rule subclass with a code"),
        ("ppo_doctor.readers", "ppo_doctor.ingest.readers.jsonl", "the format name 'jsonl' is already taken by a built-in reader"),
        ("ppo_doctor.readers", "acme_ppo_plugin.invalid", "the reader lacks the function(s) sniff, read (sniff(path, head) -> bool, read(path) -> list[RawRun])"),
        ("ppo_doctor.readers", "acme_ppo_plugin.formats:render", "expected a reader module (NAME, sniff, read), got the function acme_ppo_plugin.formats.render"),
        ("ppo_doctor.formats", "acme_ppo_plugin.invalid:render_nothing",
         "the function acme_ppo_plugin.invalid.render_nothing cannot be called as render(report, options)"),
        ("ppo_doctor.formats", "acme_ppo_plugin.reader", "expected a function render(report, options) -> str, got the module acme_ppo_plugin.reader"),
    ],
)
def test_an_invalid_plugin_is_an_error_naming_it(entry_points, group, value, why):
    entry_points(group, "bad", value)
    load = {"ppo_doctor.rules": registry.all_rules, "ppo_doctor.readers": ingest.reader_modules, "ppo_doctor.formats": report.formats}[group]
    with pytest.raises(PluginError) as err:
        load()
    assert str(err.value) == f"plugin 'bad' ({value}) of entry-point group {group} from an unknown distribution: {why}"


def test_a_format_may_not_shadow_a_builtin_one(entry_points):
    entry_points("ppo_doctor.formats", "json", "acme_ppo_plugin.formats:render")
    with pytest.raises(PluginError, match="the format name 'json' is a built-in format's"):
        report.formats()


def test_two_plugins_may_not_share_a_reader_name(entry_points):
    entry_points("ppo_doctor.readers", "a", "acme_ppo_plugin.reader")
    entry_points("ppo_doctor.readers", "b", "acme_ppo_plugin.reader")
    with pytest.raises(PluginError, match=r"plugin 'b' .*'acmelog' is already taken by the reader acme_ppo_plugin.reader of an unknown distribution"):
        ingest.reader_modules()


def test_a_renderer_that_returns_no_text_is_named(entry_points):
    entry_points("ppo_doctor.formats", "bytes", "acme_ppo_plugin.invalid:render_bytes")
    assert report.formats()[-1] == "bytes"
    with pytest.raises(PluginError, match="render returned a bytes, not a str"):
        report.render(report.Report(), "bytes")


def test_import_ppo_doctor_loads_no_plugin():
    code = "import sys, ppo_doctor, ppo_doctor.cli\nassert 'ppo_doctor.plugins' not in sys.modules"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
