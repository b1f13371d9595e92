"""The package's layering, read from its own source with an AST walk (issue 13).

The straight line of docs/architecture.md (discover -> ingest -> canonicalise -> detect -> rules ->
diagnose -> report) holds in the imports: the stages before the report never import the
renderers or the CLI, ``detect/`` is generic (it imports nothing else of ppo_doctor), no
import cycle exists between modules, and no module imports another of the package inside a
function, which is how cycles used to be dodged, unless the target is on the short allow-list
of heavy or optional modules below.  Every module also imports cleanly in a fresh interpreter.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ppo_doctor"

# Imported inside functions on purpose, each for a heavy or optional dependency that a plain
# ``import ppo_doctor`` or ``ppo-doctor --help`` must not pay for (test_packaging checks it).
LAZY_ALLOWED = {
    "ppo_doctor.reference.ppo": "torch, transformers (the reference PPO loop, [reference] extra)",
    "ppo_doctor.reference.trl_suite": "torch, TRL (the GRPO validation suite, [trl] extra)",
    "ppo_doctor.integrations.transformers": "transformers (the Trainer callback)",
    "ppo_doctor.report.plots": "matplotlib (only html and plot draw)",
}

EARLY_STAGES = ("ingest", "detect", "rules", "diagnose")
CONSUMERS = ("report", "cli", "sweep")


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    in_function: bool
    type_checking: bool


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@functools.cache
def _edges() -> list[Edge]:
    modules = _modules()
    out: list[Edge] = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))

        def visit(node: ast.AST, in_function: bool, type_checking: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    visit(child, True, type_checking)
                elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                    visit(child, in_function, True)
                elif isinstance(child, ast.Import):
                    for alias in child.names:
                        if alias.name.split(".")[0] == "ppo_doctor":
                            out.append(Edge(name, alias.name, child.lineno, in_function, type_checking))
                elif isinstance(child, ast.ImportFrom):
                    if child.level:
                        base = package.split(".")
                        base = base[: len(base) - (child.level - 1)]
                        target = ".".join(base + ([child.module] if child.module else []))
                    else:
                        target = child.module or ""
                    if target.split(".")[0] != "ppo_doctor":
                        continue
                    # ``from pkg import submodule`` imports the submodule too
                    subs = [f"{target}.{a.name}" for a in child.names if f"{target}.{a.name}" in modules]
                    for t in [target, *subs]:
                        out.append(Edge(name, t, child.lineno, in_function, type_checking))
                else:
                    visit(child, in_function, type_checking)

        visit(tree, False, False)
    return out


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_early_stages_never_import_the_report_or_the_cli():
    bad = [
        f"{e.source}:{e.line} imports {e.target}"
        for e in _edges()
        if _stage(e.source) in EARLY_STAGES and _stage(e.target) in CONSUMERS
    ]
    assert not bad, "\n".join(bad)


def test_detect_imports_nothing_else_of_the_package():
    bad = [f"{e.source}:{e.line} imports {e.target}" for e in _edges() if _stage(e.source) == "detect" and _stage(e.target) != "detect"]
    assert not bad, "\n".join(bad)


def test_no_internal_import_inside_a_function_but_the_heavy_ones():
    bad = [
        f"{e.source}:{e.line} imports {e.target} inside a function"
        for e in _edges()
        if e.in_function and e.target not in LAZY_ALLOWED and e.target != "ppo_doctor"
    ]
    assert not bad, "\n".join(bad)


def _ancestors(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _graph() -> dict[str, set[str]]:
    """Module-level imports between the package's modules.  Importing ``a.b.c`` runs the
    ``a.b`` package first, so it counts as an import of every package above it, save those the
    importer itself lives in (a package's submodules import each other while it initialises)."""
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for e in _edges():
        if e.in_function or e.type_checking or e.target not in modules:
            continue
        own = set(_ancestors(e.source)) | {e.source}
        for t in [*_ancestors(e.target), e.target]:
            if t not in own and t != e.source:
                graph[e.source].add(t)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(graph):
            if v not in index:
                strong(v)
    finally:  # a raised limit would leak into later tests (the JSONL reader's nesting check)
        sys.setrecursionlimit(limit)
    return found


def test_no_import_cycle():
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_one():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_module_imports_in_a_fresh_interpreter():
    names = sorted(m for m in _modules() if not m.endswith(".__main__"))  # __main__ runs the CLI
    code = "import importlib, sys\nfor n in sys.argv[1:]:\n    importlib.import_module(n)\n"
    done = subprocess.run([sys.executable, "-c", code, *names], capture_output=True, text=True, cwd=PACKAGE.parent, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


def test_no_rule_imports_another_rule():
    """A rule module (``rules/pdNNN_*.py``) imports only shared modules: what two rules share
    lives in a named module (issue 23; PD301 used to import PD204 and its class defaults)."""
    rule = lambda m: m.startswith("ppo_doctor.rules.pd")  # noqa: E731
    bad = [f"{e.source}:{e.line} imports {e.target}" for e in _edges() if rule(e.source) and rule(e.target)]
    assert not bad, "\n".join(bad)


def _private_imports() -> list[str]:
    """``from <another module of the package> import _name``: a private name crossing a module."""
    modules = _modules()
    out = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("ppo_doctor"):
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__") and target != name:
                    out.append(f"{name}:{node.lineno} imports {target}.{alias.name}")
    return out


def test_no_private_name_crosses_a_module():
    bad = _private_imports()
    assert not bad, "\n".join(bad)


def test_no_cycle_even_through_lazy_imports():
    """The graph with the imports made inside functions too (the heavy, optional ones of
    :data:`LAZY_ALLOWED`): a lazy import dodges a cycle at import time, not in the design."""
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for e in _edges():
        if e.type_checking or e.target not in modules:
            continue
        own = set(_ancestors(e.source)) | {e.source}
        for t in [*_ancestors(e.target), e.target]:
            if t not in own and t != e.source:
                graph[e.source].add(t)
    assert _cycles(graph) == []


def test_the_settings_and_the_verdict_are_leaves_of_the_renderers_and_rules():
    """``settings`` imports nothing of the rules or the renderers (validation sits above, in
    ``config``); renderers take the verdict from ``verdict``, never from the rule engine."""
    bad = [f"{e.source}:{e.line} imports {e.target}" for e in _edges()
           if e.source in ("ppo_doctor.settings", "ppo_doctor.verdict", "ppo_doctor.results", "ppo_doctor.view")
           and _stage(e.target) in ("rules", "report", "cli", "sweep", "diagnose")]
    bad += [f"{e.source}:{e.line} imports {e.target}" for e in _edges() if _stage(e.source) == "report" and _stage(e.target) == "rules"
            and e.target not in ("ppo_doctor.rules.registry",)]
    assert not bad, "\n".join(bad)


# Calls that read, write or list files: the builtin and ``io``/``os`` openers, fsspec's and the
# storage layer's (``ingest/storage.py``), pathlib's read/write/open/listing methods, and the
# writers of figures and folders (matplotlib's ``savefig``, PIL's ``save``, ``mkdir``).
FILE_CALLS = frozenset({"open", "fdopen", "open_binary", "scandir", "listdir", "walk"})
FILE_METHODS = frozenset({"open", "read_text", "read_bytes", "write_text", "write_bytes", "iterdir", "glob", "rglob", "scandir", "listdir", "walk"})
WRITERS = frozenset({"savefig", "save", "mkdir"})
# The packages that only join and render what ingest read: the SARIF and GitHub outputs take a
# finding's line from the run (the readers record each point's line), never from the log.
READ_NOTHING = ("sweep", "report")
# What a module of READ_NOTHING may do with files all the same: (module, call, what the call's
# receiver must start with) -> why.
FILE_ALLOWED = {
    ("ppo_doctor.report.json_out", "read_text", "resources.files("): "the report's JSON Schema, shipped in the package, read through importlib.resources: no log",
    ("ppo_doctor.report.plots", "savefig", ""): "plot_report (--plots DIR) saves the figures it draws",
    ("ppo_doctor.report.plots", "save", ""): "the palette PNG of a saved figure (PIL)",
    ("ppo_doctor.report.plots", "mkdir", ""): "the folder plot_report saves the figures into",
    ("ppo_doctor.report.plots", "fdopen", "os"): "the new file beside a figure's name, renamed onto it (links are never written through)",
}


@dataclass(frozen=True)
class FileCall:
    file: str
    line: int
    name: str  # the function or method called
    receiver: str  # the source of what a method is called on ("" for a function)

    def __str__(self) -> str:
        return f"{self.file}:{self.line} {self.receiver + '.' if self.receiver else ''}{self.name}()"


def _in_memory(scope: ast.AST) -> set[str]:
    """Names bound to an ``io.BytesIO()``/``io.StringIO()`` buffer in ``scope``."""
    out = set()
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            fn = node.value.func
            called = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
            if called in ("BytesIO", "StringIO"):
                out.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return out


def _file_calls(path: Path) -> list[FileCall]:
    """The file calls of a module; a figure drawn into an in-memory buffer (``fig.savefig(buf)``
    with ``buf = io.BytesIO()`` in the same function, or ``fig.savefig(io.BytesIO())``) is none."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    scopes = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]
    buffers: dict[int, set[str]] = {}
    for scope in scopes:  # outer scopes first: a call takes its innermost function's buffers
        names = _in_memory(scope)
        buffers.update((id(node), names) for node in ast.walk(scope))
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        fn = node.func
        if isinstance(fn, ast.Name) and fn.id in FILE_CALLS:
            out.append(FileCall(path.name, node.lineno, fn.id, ""))
        elif isinstance(fn, ast.Attribute) and (fn.attr in FILE_METHODS or fn.attr in FILE_CALLS):
            out.append(FileCall(path.name, node.lineno, fn.attr, ast.unparse(fn.value)))
        elif isinstance(fn, ast.Attribute) and fn.attr in WRITERS:
            target = node.args[0] if node.args else None
            if isinstance(target, ast.Name) and target.id in buffers[id(node)]:
                continue
            if isinstance(target, ast.Call) and ast.unparse(target.func) in ("io.BytesIO", "BytesIO", "io.StringIO", "StringIO"):
                continue
            out.append(FileCall(path.name, node.lineno, fn.attr, ast.unparse(fn.value)))
    return sorted(out, key=lambda c: c.line)


def _allowed(module: str, call: FileCall) -> bool:
    return any(m == module and name == call.name and call.receiver.startswith(prefix) for m, name, prefix in FILE_ALLOWED)


def test_the_sweep_and_the_report_read_no_file():
    """No module of :data:`READ_NOTHING` opens, reads, writes or lists a file by any of the calls
    above, but for :data:`FILE_ALLOWED`: discovery and ingest find and read the runs and the
    sweep tables (through the storage layer and its size limits) and record where each point
    came from, the CLI writes the outputs.  Drawing a figure into an in-memory buffer
    (``fig.savefig(io.BytesIO())``) is not a file call and stays allowed."""
    calls = [(name, c) for name, p in _modules().items() if _stage(name) in READ_NOTHING for c in _file_calls(p)]
    bad = [str(c) for name, c in calls if not _allowed(name, c)]
    assert not bad, bad
    # an allowance nothing uses any more goes
    unused = [key for key in FILE_ALLOWED if not any(_allowed(name, c) and (name, c.name) == key[:2] for name, c in calls)]
    assert not unused, unused


def test_the_file_call_finder_finds_them(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import io\nopen('a')\nio.open('b')\nPath('c').read_text()\nstorage.open_binary(p)\nfs.open(u)\n"
        "fig.savefig('d.png')\nout.mkdir()\nfig.savefig(io.BytesIO())\n"
        "def f(fig):\n    buf = io.BytesIO()\n    fig.savefig(buf)\n    img.save(path)\n"
    )
    found = [str(c) for c in _file_calls(probe)]
    assert found == [
        "probe.py:2 open()",
        "probe.py:3 io.open()",
        "probe.py:4 Path('c').read_text()",
        "probe.py:5 storage.open_binary()",
        "probe.py:6 fs.open()",
        "probe.py:7 fig.savefig()",
        "probe.py:8 out.mkdir()",
        "probe.py:13 img.save()",
    ]
    assert _allowed("ppo_doctor.report.json_out", FileCall("json_out.py", 1, "read_text", "resources.files(__package__).joinpath(X)"))
    assert not _allowed("ppo_doctor.report.json_out", FileCall("json_out.py", 1, "read_text", "Path(log)"))
    assert not _allowed("ppo_doctor.report.sarif", FileCall("sarif.py", 1, "savefig", "fig"))
