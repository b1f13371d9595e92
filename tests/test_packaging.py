"""Packaging and set-up as pip and pytest users expect (issue 18).

A plain ``pytest`` collects; the wheel ships what its metadata names (py.typed, the JSON
schema, the LICENSE) under the SPDX ``license`` field without setuptools' deprecation boxes;
scipy is no dependency; ``check`` never imports matplotlib; every ``pip install`` line in the
docs names something pip can install today.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest
from cli_invoke import run_cli

from ppo_doctor.report.json_out import json_schema

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _env_without_pythonpath() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def test_plain_pytest_collects_the_benchmark_tests():
    """``pytest`` (the console script, no ``python -m``) imports ``benchmarks`` from the root."""
    script = Path(sys.executable).with_name("pytest")
    if not script.exists():
        pytest.skip("no pytest console script beside this interpreter")
    proc = subprocess.run(
        [str(script), "--collect-only", "-q", "-p", "no:cacheprovider", "tests/test_benchmarks_smoke.py"],
        cwd=ROOT, env=_env_without_pythonpath(), capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No module named" not in proc.stdout + proc.stderr
    assert re.search(r"test_benchmarks_smoke.py: [1-9]\d*", proc.stdout), proc.stdout


def test_every_package_data_glob_matches_a_file():
    for package, globs in PYPROJECT["tool"]["setuptools"]["package-data"].items():
        base = ROOT / package.replace(".", "/")
        for pattern in globs:
            assert list(base.glob(pattern)), f"package-data {package}: {pattern} matches nothing"


def test_license_file_and_spdx_field():
    project = PYPROJECT["project"]
    assert project["license"] == "Apache-2.0"  # SPDX string (PEP 639), not the deprecated table
    for name in project["license-files"]:
        text = (ROOT / name).read_text(encoding="utf-8")
        assert "Apache License" in text and "Version 2.0, January 2004" in text
        assert "END OF TERMS AND CONDITIONS" in text
    assert not any(c.startswith("License ::") for c in project.get("classifiers", []))


def test_the_all_extra_installs_every_user_facing_extra():
    extras = PYPROJECT["project"]["optional-dependencies"]
    (line,) = extras["all"]
    named = set(re.fullmatch(r"ppo-doctor\[([a-z0-9,]+)\]", line).group(1).split(","))
    assert named == set(extras) - {"all", "dev", "fuzz"}


def test_scipy_is_not_a_dependency():
    deps = PYPROJECT["project"]["dependencies"]
    assert not [d for d in deps if re.match(r"scipy\b", d)]
    imports = [p for p in (ROOT / "ppo_doctor").rglob("*.py") if re.search(r"^\s*(from|import) scipy", p.read_text(encoding="utf-8"), re.M)]
    assert not imports


def test_wheel_ships_its_package_data_without_deprecation_warnings(tmp_path):
    """Build the wheel from a copy of the sources (the worktree stays clean)."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "ppo_doctor", src / "ppo_doctor", ignore=shutil.ignore_patterns("__pycache__"))
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"), str(src)],
        capture_output=True, text=True, timeout=300,
    )
    if proc.returncode != 0 and "No module named pip" in proc.stderr:
        pytest.skip("pip is not installed in this interpreter")
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = proc.stdout + proc.stderr
    assert "Deprecat" not in log, log[-3000:]
    (wheel,) = (tmp_path / "dist").glob("ppo_doctor-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        metadata = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        packaged_schema = json.loads(zf.read("ppo_doctor/report/report.schema.json"))
    assert "ppo_doctor/py.typed" in names
    assert "ppo_doctor/rules/population.json" in names  # the population limits the rules default to
    # every module ships, those of the subpackages (ingest/readers/, ingest/tensorboard/ ...) too
    sources = {p.relative_to(ROOT).as_posix() for p in (ROOT / "ppo_doctor").rglob("*.py") if "__pycache__" not in p.parts}
    assert sources <= set(names), sorted(sources - set(names))
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "License-Expression: Apache-2.0" in metadata
    core = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert "Requires-Dist: click>=8.1" in core
    assert not [line for line in core if line.startswith("Requires-Dist: scipy")]  # only [dev]'s tests use it
    assert packaged_schema == json_schema()


def test_schema_command_prints_the_shipped_schema():
    result = run_cli(["schema"])
    assert result.exit_code == 0, result.output
    schema = json.loads(result.output)
    assert schema == json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)


def test_check_does_not_import_matplotlib(tmp_path):
    """A fresh interpreter runs ``check`` on the sample logs and lists what it imported."""
    code = (
        "import sys\n"
        "from ppo_doctor.cli import main\n"
        "try:\n"
        f"    main(['check', {str(ROOT / 'sample_logs')!r}, '--isolated', '-o', {str(tmp_path / 'r.txt')!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'matplotlib', 'scipy', 'torch', 'transformers', 'PIL'})\n"
        "print('HEAVY=' + ','.join(heavy))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert "HEAVY=" in proc.stdout, proc.stderr[-2000:]
    assert proc.stdout.split("HEAVY=")[1].strip() == ""
    assert (tmp_path / "r.txt").stat().st_size > 0


# what an index serves today, beside the pinned torch build (ppo-doctor itself is not on PyPI)
_INDEX_NAMES = {"torch", "transformers", "safetensors", "tensorboard", "pip"}


def _pip_install_lines() -> list[tuple[str, str]]:
    lines = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for line in doc.read_text(encoding="utf-8").splitlines():
            m = re.search(r"pip install ([^`#\n]*)", line)
            if m:
                lines.append((doc.name, m.group(1).strip()))
    return lines


def test_every_install_line_in_the_docs_installs_something_that_exists():
    lines = _pip_install_lines()
    assert lines
    for doc, args in lines:
        for arg in args.split():
            if arg.startswith("-"):
                continue
            arg = arg.strip("'\"")
            if "/" in arg or arg.startswith("."):  # a path: a checkout or a wheel file
                assert not arg.startswith(("http", "git+")), (doc, arg)
                continue
            name = re.split(r"[<>=\[ ]", arg, maxsplit=1)[0]
            assert name in _INDEX_NAMES, f"{doc}: 'pip install {args}' names {name!r}, which no index serves"
