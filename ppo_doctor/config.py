"""Configuration: ``[tool.ppo-doctor]`` in ``pyproject.toml`` or a ``ppo-doctor.toml``.

Precedence is defaults < file < command line.  The file is found by walking up from the
current directory (as ruff and sqlfluff do, reference/style-anchors.md section 1a): in each
directory a ``ppo-doctor.toml`` wins over a ``pyproject.toml``, and a ``pyproject.toml``
without a ``[tool.ppo-doctor]`` table is passed over.  ``ppo-doctor.toml`` holds the keys
at top level.

Keys (``fail-on`` and ``fail_on`` spellings are both accepted)::

    fail_on = "error"        # info | warning | error | never
    select  = ["PD1", "kl-runaway"]   # code prefixes or rule names; "ALL"
    ignore  = ["PD9"]
    extend_select = ["PD953"]  # added to select (the file's or --select's), as ruff's
    extend_ignore = ["PD703"]  # added to ignore
    [per_run_ignores]        # glob of run paths or ids -> codes skipped for those runs only
    "runs/legacy-*" = ["PD9", "PD202"]
    format  = "text"         # text | markdown | html | json | sarif | junit | github
    jobs    = 4              # read runs in N processes (or N Dask workers)
    executor = "processes"   # local | processes | dask (ppo_doctor.pipeline)
    dask    = "tcp://scheduler:8786"   # an existing Dask cluster (implies executor = "dask")
    aliases = {"custom/kl_to_ref" = "kl/ref"}
    [rules.kl-runaway]       # "<code or name>" = {param = value}
    min_steps = 5

Unknown keys and bad values raise :class:`~ppo_doctor.errors.ConfigError` naming every
problem at once, with the file it came from.  :func:`resolve` returns the plain dict that
:func:`ppo_doctor.analyze` takes.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

from .errors import ConfigError
from .metrics import CANONICAL
from .rules.engine import validate_rule_options, validate_selection

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

CONFIG_FILE = "ppo-doctor.toml"
PYPROJECT = "pyproject.toml"
TOOL_TABLE = "ppo-doctor"

FAIL_ON = ("info", "warning", "error", "never")
FORMATS = ("text", "markdown", "html", "json", "sarif", "junit", "github")
EXECUTORS = ("local", "processes", "dask")  # ppo_doctor.pipeline.EXECUTORS (kept import-free here)

DEFAULTS: dict[str, Any] = {
    "fail_on": "error",
    "select": [],
    "ignore": [],
    "format": "text",
    "jobs": 1,
    "executor": None,
    "dask": None,
    "aliases": {},
    "rules": {},
    "extend_select": [],
    "extend_ignore": [],
    "per_run_ignores": {},
}

# where a value came from, for ``--show-settings``
DEFAULT_SOURCE = "default"
CLI_SOURCE = "command line"


# -- finding and reading the file ------------------------------------------------------
def _has_tool_table(pyproject: Path) -> bool:
    try:
        data = _read_toml(pyproject)
    except ConfigError:
        # a broken pyproject.toml that may not even be ours: only an error if it is chosen
        return f"[tool.{TOOL_TABLE}" in pyproject.read_text(encoding="utf-8", errors="replace")
    return TOOL_TABLE in data.get("tool", {})


def find_config_file(start: Path | None = None) -> Path | None:
    """The nearest config file from ``start`` (default: cwd) up to the filesystem root."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        own = folder / CONFIG_FILE
        if own.is_file():
            return own
        pyproject = folder / PYPROJECT
        if pyproject.is_file() and _has_tool_table(pyproject):
            return pyproject
    return None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file ({exc.strerror or exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def load_file(path: Path) -> dict[str, Any]:
    """The raw settings table of a config file (``[tool.ppo-doctor]`` for a pyproject)."""
    data = _read_toml(path)
    if path.name == PYPROJECT:
        table = data.get("tool", {}).get(TOOL_TABLE, {})
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.{TOOL_TABLE}] must be a table")
        return table
    return data


# -- validation -------------------------------------------------------------------------
def _str_list(key: str, value: Any, errors: list[str]) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        errors.append(f"{key}: expected a list of rule codes or names, got {value!r}")
        return []
    return [v.strip() for v in value]


def _aliases(value: Any, errors: list[str]) -> dict[str, str]:
    if not isinstance(value, dict):
        errors.append(f"aliases: expected a table of raw_tag = canonical_name, got {value!r}")
        return {}
    out = {}
    for raw, canonical in value.items():
        if not isinstance(canonical, str):
            errors.append(f"aliases.{raw}: expected a canonical metric name, got {canonical!r}")
        elif canonical not in CANONICAL:
            errors.append(f"aliases.{raw}: {canonical!r} is not a canonical metric (see docs/metrics.md)")
        else:
            out[str(raw)] = canonical
    return out


def _rules(value: Any, errors: list[str]) -> dict[str, dict[str, Any]]:
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        errors.append(f"rules: expected tables of parameters per rule, e.g. [rules.kl-runaway], got {value!r}")
        return {}

    rules = {str(k): dict(v) for k, v in value.items()}
    errors.extend(validate_rule_options(rules))
    return rules


def _per_run_ignores(value: Any, errors: list[str]) -> dict[str, list[str]]:
    if not isinstance(value, dict):
        errors.append(f"per_run_ignores: expected a table of \"glob\" = [codes], got {value!r}")
        return {}
    out: dict[str, list[str]] = {}
    for pattern, codes in value.items():
        checked = _str_list(f"per_run_ignores.{pattern}", codes, errors)
        if checked:
            errors.extend(f"per_run_ignores.{pattern}: {e.split(': ', 1)[1]}" for e in validate_selection(None, checked))
            out[str(pattern)] = checked
    return out


def _int_jobs(value: Any, errors: list[str]) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        errors.append(f"jobs: expected an integer >= 1, got {value!r}")
        return 1
    return value


def _choice(key: str, value: Any, choices: tuple[str, ...], errors: list[str]) -> str | None:
    if value not in choices:
        errors.append(f"{key}: expected one of {', '.join(choices)}, got {value!r}")
        return None
    return value


VALIDATORS: dict[str, Callable[[Any, list[str]], Any]] = {
    "fail_on": lambda v, e: _choice("fail_on", v, FAIL_ON, e),
    "format": lambda v, e: _choice("format", v, FORMATS, e),
    "select": lambda v, e: _str_list("select", v, e),
    "ignore": lambda v, e: _str_list("ignore", v, e),
    "extend_select": lambda v, e: _str_list("extend_select", v, e),
    "extend_ignore": lambda v, e: _str_list("extend_ignore", v, e),
    "per_run_ignores": _per_run_ignores,
    "jobs": _int_jobs,
    "executor": lambda v, e: _choice("executor", v, EXECUTORS, e),
    "dask": lambda v, e: v if isinstance(v, str) and v.strip() else e.append(f"dask: expected a scheduler address, got {v!r}"),
    "aliases": _aliases,
    "rules": _rules,
}


def validate(raw: dict[str, Any], source: str = "configuration") -> dict[str, Any]:
    """Normalised settings from ``raw`` (only the keys present); every problem reported at once.

    Raises:
        ConfigError: naming ``source`` and each unknown key or bad value.
    """
    errors: list[str] = []
    out: dict[str, Any] = {}
    seen: set[str] = set()
    for key, value in raw.items():
        norm = str(key).replace("-", "_")
        if norm not in VALIDATORS:
            errors.append(f"unknown key {key!r} (known: {', '.join(k.replace('_', '-') for k in VALIDATORS)})")
            continue
        if norm in seen:
            errors.append(f"{key!r} given twice (dash and underscore spellings)")
            continue
        seen.add(norm)
        checked = VALIDATORS[norm](value, errors)
        if checked is not None:
            out[norm] = checked
    if any(out.get(k) for k in ("select", "ignore", "extend_select", "extend_ignore")):
        errors.extend(validate_selection(out.get("select"), out.get("ignore")))
        errors.extend(
            f"{k}: {e.split(': ', 1)[1]}" for k in ("extend_select", "extend_ignore") if out.get(k) for e in validate_selection(out[k])
        )
    if errors:
        raise ConfigError(f"{source}: " + "; ".join(errors))
    return out


def resolve(
    cli: dict[str, Any] | None = None,
    *,
    config_file: str | Path | None = None,
    isolated: bool = False,
    start: Path | None = None,
) -> dict[str, Any]:
    """Defaults < config file < ``cli`` (options the user actually gave; None means unset).

    Args:
        cli: command-line settings; keys as in :data:`DEFAULTS`, None values are ignored.
        config_file: use this file instead of searching (``--config``).
        isolated: ignore every config file (``--isolated``).
        start: where the search starts (default: the current directory).

    Returns:
        The full settings dict, with ``config_file`` naming the file used (or None).
    """
    return resolve_with_sources(cli, config_file=config_file, isolated=isolated, start=start)[0]


def resolve_with_sources(
    cli: dict[str, Any] | None = None,
    *,
    config_file: str | Path | None = None,
    isolated: bool = False,
    start: Path | None = None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """:func:`resolve` and, per key, where its value came from: ``default``, the config
    file's path, or ``command line`` (``ppo-doctor check --show-settings``).

    ``extend_select`` / ``extend_ignore`` (file then command line) are appended to the
    resolved ``select`` / ``ignore``; extending an empty ``select`` (every rule) keeps every
    rule and adds the entries as explicit selections, so ``extend_select = ["PD901"]`` beats
    ``ignore = ["PD9"]`` by specificity, as in ruff.
    """
    settings = {k: (list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v) for k, v in DEFAULTS.items()}
    sources = dict.fromkeys(DEFAULTS, DEFAULT_SOURCE)
    path: Path | None = None
    if config_file is not None:
        path = Path(config_file)
        if not path.is_file():
            raise ConfigError(f"{path}: config file not found")
    elif not isolated:
        path = find_config_file(start)
    extend: dict[str, list[str]] = {"select": [], "ignore": []}
    layers: list[tuple[dict[str, Any], str]] = []
    if path is not None:
        layers.append((validate(load_file(path), str(path)), str(path)))
    given = {k: v for k, v in (cli or {}).items() if v is not None and v != () and v != []}
    layers.append((validate(given, CLI_SOURCE), CLI_SOURCE))
    for values, source in layers:
        for key, value in values.items():
            if key in ("extend_select", "extend_ignore"):
                extend[key.split("_", 1)[1]].extend(value)
                sources[key] = source if sources[key] == DEFAULT_SOURCE else f"{sources[key]} + {source}"
            settings[key] = value
            if key not in ("extend_select", "extend_ignore"):
                sources[key] = source
    settings["extend_select"], settings["extend_ignore"] = extend["select"], extend["ignore"]
    if extend["select"]:
        settings["select"] = [*(settings["select"] or ["ALL"]), *extend["select"]]
        sources["select"] += " + extend-select"
    if extend["ignore"]:
        settings["ignore"] = [*settings["ignore"], *extend["ignore"]]
        sources["ignore"] += " + extend-ignore"
    settings["config_file"] = None if path is None else str(path)
    sources["config_file"] = DEFAULT_SOURCE if path is None else ("--config" if config_file is not None else "found from the current directory")
    return settings, sources
