"""Nothing from a log is ever executed or unpickled (docs/architecture.md#inputs-are-untrusted).

Two independent checks:

* a static scan of every module under ``ppo_doctor/`` for calls and imports that deserialise
  code or run programs (pickle, marshal, unsafe YAML, eval/exec/compile, subprocess ...).
  ``ppo_doctor/reference/`` (the bundled training loop) is exempt, except that each of its
  ``torch.load`` calls must pass ``weights_only=True`` (it reloads only its own cached weights);
* a runtime check: with ``pickle``, ``marshal``, unsafe ``yaml.load``, ``eval``, ``exec``,
  ``os.system`` and ``subprocess`` patched to fail, every kind of log is read, analysed and
  rendered in every format.
"""

from __future__ import annotations

import ast
import builtins
import json
import marshal
import os
import pickle
import subprocess
from pathlib import Path

import pytest
import yaml

import hostile_inputs as h

PACKAGE = Path(__file__).resolve().parents[1] / "ppo_doctor"
EXEMPT = PACKAGE / "reference"
# `ppo-doctor watch --exec CMD` runs the user's own command line (typed by them, never read from a
# log) with a finding as JSON on stdin; this is the one place the library starts a process.
# `ppo-doctor simulate/validate` check that torch, transformers (and trl, datasets) import before
# training, by those fixed names (the reference loop's commands, in the CLI package since issue 13).
ALLOWED = {
    ("ppo_doctor/watch.py", "import subprocess"),
    ("ppo_doctor/watch.py", "call subprocess.run"),
    ("ppo_doctor/cli/reference.py", "call __import__"),
}

FORBIDDEN_MODULES = {"pickle", "_pickle", "cPickle", "cloudpickle", "dill", "marshal", "shelve", "joblib", "subprocess"}
FORBIDDEN_CALLS = {
    "eval", "exec", "compile", "__import__", "builtins.eval", "builtins.exec", "builtins.compile",
    "torch.load", "yaml.load", "yaml.load_all", "yaml.unsafe_load", "yaml.unsafe_load_all", "yaml.full_load",
    "yaml.full_load_all", "os.system", "os.popen", "os.execv", "os.execve", "os.execvp", "os.spawnv", "os.startfile",
    "pandas.read_pickle", "numpy.lib.format.read_array",
}
FORBIDDEN_ATTRS = {"read_pickle", "eval", "exec", "unsafe_load", "full_load", "loads_pickle"}


class Scanner(ast.NodeVisitor):
    """Calls and imports of one module, with ``import x as y`` aliases resolved."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        self.problems: list[tuple[int, str]] = []
        self.torch_loads: list[ast.Call] = []

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            if a.name.split(".")[0] in FORBIDDEN_MODULES:
                self.problems.append((node.lineno, f"import {a.name}"))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        mod = node.module or ""
        for a in node.names:
            self.aliases[a.asname or a.name] = f"{mod}.{a.name}" if node.level == 0 else a.name
        if node.level == 0 and mod.split(".")[0] in FORBIDDEN_MODULES:
            self.problems.append((node.lineno, f"from {mod} import ..."))

    def dotted(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def visit_Call(self, node: ast.Call) -> None:
        name = self.dotted(node.func) or ""
        canon = name.replace("np.", "numpy.", 1) if name.startswith("np.") else name
        canon = canon.replace("pd.", "pandas.", 1) if canon.startswith("pd.") else canon
        if canon == "torch.load":
            self.torch_loads.append(node)
        if canon in FORBIDDEN_CALLS or canon.split(".")[0] in FORBIDDEN_MODULES:
            self.problems.append((node.lineno, f"call {name}"))
        elif isinstance(node.func, ast.Attribute) and node.func.attr in FORBIDDEN_ATTRS:
            self.problems.append((node.lineno, f"call .{node.func.attr}()"))
        elif canon in ("numpy.load", "numpy.lib.npyio.load") and any(
            k.arg == "allow_pickle" and not (isinstance(k.value, ast.Constant) and k.value.value is False) for k in node.keywords
        ):
            self.problems.append((node.lineno, f"call {name}(allow_pickle=...)"))
        self.generic_visit(node)


def scan(path: Path) -> Scanner:
    scanner = Scanner()
    scanner.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    return scanner


def test_scanner_catches_what_it_must(tmp_path):
    """The scanner itself, on code that does each forbidden thing (and on safe look-alikes)."""
    bad = """
import pickle as pk
from yaml import unsafe_load
import numpy as np, pandas as pd, torch, yaml, os
pk.loads(b"")
eval("1"); exec("x=1"); compile("1", "f", "eval"); __import__("os")
yaml.load(s); yaml.full_load(s); unsafe_load(s)
torch.load(p); os.system("ls"); np.load(f, allow_pickle=True); pd.read_pickle(f); df.eval("a+b")
"""
    good = "import re, ast, yaml\nre.compile('x'); ast.literal_eval('1'); yaml.safe_load(s)\n"
    path = tmp_path / "probe.py"
    path.write_text(bad)
    found = scan(path).problems
    path.write_text(good)
    clean = scan(path).problems
    assert [what for _, what in found] == [
        "import pickle", "call pickle.loads", "call eval", "call exec", "call compile", "call __import__", "call yaml.load",
        "call yaml.full_load", "call yaml.unsafe_load", "call torch.load", "call os.system", "call numpy.load(allow_pickle=...)",
        "call pandas.read_pickle", "call .eval()",
    ]
    assert clean == []


def test_library_never_deserialises_or_executes_input():
    problems = []
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 50
    for path in modules:
        if EXEMPT in path.parents:
            continue
        rel = path.relative_to(PACKAGE.parent).as_posix()
        problems += [f"{rel}:{line}: {what}" for line, what in scan(path).problems if (rel, what) not in ALLOWED]
    assert not problems, "\n".join(problems)


def test_reference_loop_loads_only_weights():
    calls = [(p, c) for p in sorted(EXEMPT.rglob("*.py")) for c in scan(p).torch_loads]
    for path, call in calls:
        kw = {k.arg: k.value for k in call.keywords}
        ok = isinstance(kw.get("weights_only"), ast.Constant) and kw["weights_only"].value is True
        assert ok, f"{path.name}:{call.lineno}: torch.load without weights_only=True"


# -- at run time ------------------------------------------------------------------------------------------


def every_kind_of_log(root: Path) -> Path:
    """One run per format the readers know, with the side files they also read."""
    (root / "tb").mkdir(parents=True)
    h.tensorboard(30).write(root / "tb" / "events.out.tfevents.1.host")
    wb = root / "wandb" / "wandb" / "run-20240101_000000-abc"
    (wb / "files").mkdir(parents=True)
    h.wandb(30).write(wb / "run-abc.wandb")
    (wb / "files" / "config.yaml").write_text("wandb_version: 1\nlr:\n  desc: null\n  value: 0.001\nobj: !!python/object/apply:os.system ['false']\n")
    (wb / "files" / "wandb-summary.json").write_text('{"_step": 29, "loss": 0.5}')
    (root / "jsonl").mkdir()
    h.jsonl(30).write(root / "jsonl" / "metrics.jsonl")
    (root / "jsonl" / "config.json").write_text(json.dumps({"lr": 1e-5, "__reduce__": "os.system"}))
    (root / "csv").mkdir()
    h.csv(30).write(root / "csv" / "progress.csv")
    (root / "hf").mkdir()
    h.trainer_state(30).write(root / "hf" / "trainer_state.json")
    (root / "verl").mkdir()
    h.verl_console(30).write(root / "verl" / "train.log")
    h.mlflow_run(root / "ml", n=30)
    (root / "export").mkdir()
    (root / "export" / "history.csv").write_text("_step,loss\n" + "".join(f"{i},{i / 10}\n" for i in range(30)))
    (root / "pickles").mkdir()  # a pickle under a log name: never unpickled
    (root / "pickles" / "metrics.jsonl").write_bytes(pickle.dumps({"step": 1, "loss": 2.0}))
    return root


def test_reading_every_format_never_unpickles_evals_or_runs_anything(tmp_path, monkeypatch):
    from ppo_doctor.analyze import analyze
    from ppo_doctor.report import FORMATS, RenderOptions, render

    root = every_kind_of_log(tmp_path)
    # Warm up first: imports (and the classes they define) may legitimately use exec; the
    # guard is about what happens while logs are read.
    warm = analyze(root)
    for fmt in FORMATS:
        render(warm, fmt, RenderOptions(plots=False))
    assert len(warm.runs) >= 8

    calls: list[str] = []

    def trap(name):
        def refuse(*args, **kwargs):
            calls.append(name)
            raise AssertionError(f"{name} called while reading logs")

        return refuse

    real_yaml_load = yaml.load

    def yaml_load(stream, Loader=None, **kw):  # safe_load is load(stream, SafeLoader)
        if not (isinstance(Loader, type) and issubclass(Loader, yaml.SafeLoader)):
            calls.append(f"yaml.load(Loader={Loader})")
            raise AssertionError("unsafe yaml.load")
        return real_yaml_load(stream, Loader=Loader, **kw)

    for mod, name in ((pickle, "loads"), (pickle, "load"), (pickle, "Unpickler"), (marshal, "loads"), (marshal, "load"),
                      (builtins, "eval"), (builtins, "exec"), (os, "system"), (os, "popen"), (subprocess, "Popen"),
                      (yaml, "unsafe_load"), (yaml, "full_load")):
        monkeypatch.setattr(mod, name, trap(f"{mod.__name__}.{name}"))
    monkeypatch.setattr(yaml, "load", yaml_load)
    with pytest.raises(AssertionError):
        eval("1")  # the traps are in place
    assert calls == ["builtins.eval"]
    calls.clear()

    report = analyze(root)
    for fmt in FORMATS:
        render(report, fmt, RenderOptions(plots=False))
    assert not calls, calls
    assert [r.run.id for r in report.runs] == [r.run.id for r in warm.runs]
    config_issue = [w for r in report.runs for w in r.run.warnings if "config.yaml" in w]
    assert config_issue, "the python/object tag must be refused by safe_load and reported"
    assert any(e.path.endswith("pickles/metrics.jsonl") for e in report.errors)
