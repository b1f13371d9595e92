"""Configuration: ``[tool.ppo-doctor]`` in ``pyproject.toml`` or a ``ppo-doctor.toml``.

Precedence is defaults < file < command line.  The file is found by walking up from the
current directory (as ruff and sqlfluff do, docs/sources.md#peer-linters): in each
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
    format  = "text"         # text | markdown | html | json | sarif | junit | github | a plugin's
    jobs    = 4              # read runs in N processes (or N Dask workers)
    executor = "processes"   # local | processes | dask (ppo_doctor.pipeline)
    dask    = "tcp://scheduler:8786"   # an existing Dask cluster (implies executor = "dask")
    dask_timeout = 60        # seconds to wait for the cluster and its first worker
    remote_timeout = 30      # seconds an http(s):// or s3:// request may wait (connect, each read)
    aliases = {"custom/kl_to_ref" = "kl/ref"}
    exclude = ["*.bak", "old/"]   # files and folders discovery passes over (globs, as ruff's)
    extend_exclude = ["scratch*"] # added to exclude
    plugin_timeout = 10      # seconds a plugin rule (per run) or renderer may take
    [rules.kl-runaway]       # "<code or name>" = {param = value}
    min_steps = 5

Unknown keys and bad values raise :class:`~ppo_doctor.errors.ConfigError` naming every
problem at once, with the file it came from.  Values are coerced once, here: a choice in any
case (``"Warning"``), ``jobs`` and numeric rule parameters written as strings (``"4"``), a float
parameter given an integer, a boolean one given ``"true"``/``"false"``.  :func:`resolve` returns
a :class:`Config`, the frozen, typed settings that :func:`ppo_doctor.analyze`, the rule engine
and :class:`~ppo_doctor.monitor.Monitor` take (they also accept a mapping of the same keys,
which they validate and coerce through :func:`coerce`); the frozen settings themselves are
:mod:`ppo_doctor.settings`, a leaf that imports nothing of the rules or the renderers.
"""

from __future__ import annotations

import math
import reprlib
import sys
from pathlib import Path
from typing import Any, Callable, Mapping

from .errors import ConfigError, too_big
from .canonical.metrics import CANONICAL
from .report import formats
from .rules import registry
from .settings import DEFAULTS, EXECUTORS, FAIL_ON, Config

CONFIG_FILE = "ppo-doctor.toml"
PYPROJECT = "pyproject.toml"
TOOL_TABLE = "ppo-doctor"



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
    # imported here: a check with no config file, or --isolated, parses no TOML (benchmarks/RESULTS.md, "Import cost")
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file ({exc.strerror or exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except (RecursionError, ValueError) as exc:
        # valid TOML that the parser cannot hold: arrays or tables nested past Python's stack,
        # an integer past int()'s digit limit
        raise ConfigError(f"{path}: cannot read config file ({too_big(exc)})") from None
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
# The most entries a list setting (select, ignore, exclude ...) may hold, and the most bad ones an
# error names: there are fewer than 100 rules, so a longer list is a mistake (a generated file, a
# pasted log), and 300,000 entries once gave one 9 MiB error line after 12 s (issue 39).
MAX_LIST_ENTRIES = 10_000
MAX_NAMED = 5


def _str_list(key: str, value: Any, errors: list[str], what: str = "rule codes or names") -> list[str]:
    if isinstance(value, str):
        value = [value]
    if isinstance(value, (list, tuple)) and len(value) > MAX_LIST_ENTRIES:
        errors.append(f"{key}: {len(value):,} entries, more than the {MAX_LIST_ENTRIES:,} a list setting may hold")
        return []
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v.strip() for v in value):
        errors.append(f"{key}: expected a list of {what}, got {reprlib.repr(value)}")
        return []
    return [v.strip() for v in value]


def named(items: list[str]) -> str:
    """At most :data:`MAX_NAMED` of ``items``, each shortened, and how many more there are."""
    shown = ", ".join(reprlib.repr(i) for i in items[:MAX_NAMED])
    return shown + (f" and {len(items) - MAX_NAMED:,} more" if len(items) > MAX_NAMED else "")


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


_TRUE = ("true", "yes", "on")
_FALSE = ("false", "no", "off")


def coerce_param(default: Any, value: Any) -> Any:
    """``value`` as a rule parameter whose default is ``default``; TypeError when it cannot be.

    A float parameter takes an integer or a numeric string, an integer one an integer or its
    string, a boolean one a boolean or ``true``/``false`` (``yes``/``no``, ``on``/``off``); a
    boolean is never taken for a number.
    """
    text = value.strip().lower() if isinstance(value, str) else None
    if default is None:
        return value
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
    elif isinstance(default, int):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if text is not None:
            try:
                return int(text)
            except ValueError:
                pass
    elif isinstance(default, float):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                return float(value)
            except OverflowError:
                pass  # an integer past a float's range: not a value this parameter can take
        if text is not None:
            try:
                number = float(text)
            except ValueError:
                pass
            else:
                if math.isfinite(number):
                    return number
    elif isinstance(default, (list, tuple)):
        if isinstance(value, (list, tuple)):
            return value
    elif isinstance(value, type(default)):
        return value
    # reprlib: a 10,000-digit integer is named in a line, not spelled out
    raise TypeError(f"expected {type(default).__name__}, got {type(value).__name__} {reprlib.repr(value)}")


def _bounded(param: str, value: Any) -> Any:
    """A rule parameter within what any rule can take: a float finite (a NaN threshold compares
    false with everything: the rule then fails or passes on every run, unseen), a ``fair_share``
    a share of the plan in (0, 1] (:mod:`ppo_doctor.standing`); TypeError otherwise."""
    if isinstance(value, float) and not math.isfinite(value):
        raise TypeError(f"expected a finite number, got {value!r}")
    if param == "fair_share" and not 0 < value <= 1:
        raise TypeError(f"expected a share of the plan in (0, 1], got {value!r}")
    return value


def _rule_options(rules_cfg: Any, errors: list[str]) -> dict[str, dict[str, Any]]:
    """A ``rules`` table with every parameter coerced to its default's type; each unknown rule,
    unknown parameter or value of the wrong type appended to ``errors``."""
    if rules_cfg in (None, {}):
        return {}
    if not isinstance(rules_cfg, dict):
        errors.append(f"rules: expected a table of rule options, got {type(rules_cfg).__name__}")
        return {}
    out: dict[str, dict[str, Any]] = {}
    for key, opts in rules_cfg.items():
        try:
            rule = registry.get(str(key))
        except KeyError as e:
            errors.append(f"rules.{key}: {e.args[0]}")
            continue
        if not isinstance(opts, dict):
            errors.append(f"rules.{key}: expected a table of parameters, got {type(opts).__name__}")
            continue
        checked: dict[str, Any] = {}
        for param, value in opts.items():
            if param not in rule.params:
                known = ", ".join(sorted(rule.params)) or "none"
                errors.append(f"rules.{key}.{param}: unknown parameter of {rule.code} {rule.name} (known: {known})")
                continue
            try:
                checked[param] = _bounded(param, coerce_param(rule.params[param], value))
            except TypeError as exc:
                errors.append(f"rules.{key}.{param}: {exc}")
        out[str(key)] = checked
    return out


def validate_rule_options(rules_cfg: Any) -> list[str]:
    """Error messages for a ``rules`` table: unknown rule, unknown parameter, wrong type."""
    errors: list[str] = []
    _rule_options(rules_cfg, errors)
    return errors


def validate_selection(select: Any = None, ignore: Any = None) -> list[str]:
    """Error messages for select/ignore entries that match no rule."""
    errors = []
    for label, pats in (("select", select), ("ignore", ignore)):
        if pats is None:
            continue
        if isinstance(pats, str) or not isinstance(pats, (list, tuple)):
            errors.append(f"{label}: expected a list of rule codes, prefixes or names")
            continue
        if len(pats) > MAX_LIST_ENTRIES:
            errors.append(f"{label}: {len(pats):,} entries, more than the {MAX_LIST_ENTRIES:,} a list setting may hold")
            continue
        unknown = registry.unknown_selectors(pats)
        if len(unknown) == 1:
            errors.append(f"{label}: {unknown[0]!r} matches no rule")
        elif unknown:
            errors.append(f"{label}: {len(unknown):,} entries match no rule: {named(unknown)}")
    return errors


def _rules(value: Any, errors: list[str]) -> dict[str, dict[str, Any]]:
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        errors.append(f"rules: expected tables of parameters per rule, e.g. [rules.kl-runaway], got {value!r}")
        return {}
    return _rule_options({str(k): dict(v) for k, v in value.items()}, errors)


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
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        errors.append(f"jobs: expected an integer >= 1, got {value!r}")
        return 1
    return value


def _choice(key: str, value: Any, choices: tuple[str, ...], errors: list[str]) -> str | None:
    text = value.strip().lower() if isinstance(value, str) else value
    if text not in choices:
        errors.append(f"{key}: expected one of {', '.join(choices)}, got {value!r}")
        return None
    return str(text)


def _address(value: Any, errors: list[str]) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    errors.append(f"dask: expected a scheduler address, got {value!r}")
    return None


def _seconds(key: str) -> Callable[[Any, list[str]], float | None]:
    def check(value: Any, errors: list[str]) -> float | None:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < math.inf:
            return float(value)
        errors.append(f"{key}: expected a number of seconds > 0, got {reprlib.repr(value)}")
        return None

    return check


VALIDATORS: dict[str, Callable[[Any, list[str]], Any]] = {
    "fail_on": lambda v, e: _choice("fail_on", v, FAIL_ON, e),
    "format": lambda v, e: _choice("format", v, formats(), e),
    "select": lambda v, e: _str_list("select", v, e),
    "ignore": lambda v, e: _str_list("ignore", v, e),
    "extend_select": lambda v, e: _str_list("extend_select", v, e),
    "extend_ignore": lambda v, e: _str_list("extend_ignore", v, e),
    "per_run_ignores": _per_run_ignores,
    "jobs": _int_jobs,
    "executor": lambda v, e: _choice("executor", v, EXECUTORS, e),
    "dask": _address,
    "dask_timeout": _seconds("dask_timeout"),
    "remote_timeout": _seconds("remote_timeout"),
    "aliases": _aliases,
    "rules": _rules,
    "exclude": lambda v, e: _str_list("exclude", v, e, "file or folder patterns"),
    "extend_exclude": lambda v, e: _str_list("extend_exclude", v, e, "file or folder patterns"),
    "plugin_timeout": _seconds("plugin_timeout"),
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


def coerce(value: Config | Mapping[str, Any] | None, source: str = "configuration") -> Config:
    """``value`` itself when it is a Config; else its keys validated and coerced (None: the
    defaults).  Raises :class:`~ppo_doctor.errors.ConfigError` naming ``source`` and every
    bad key or value."""
    if isinstance(value, Config):
        return value
    raw = dict(value or {})
    config_file = raw.pop("config_file", None)
    return Config.from_checked(validate(raw, source), config_file=None if config_file is None else str(config_file))


def resolve(
    cli: dict[str, Any] | None = None,
    *,
    config_file: str | Path | None = None,
    isolated: bool = False,
    start: Path | None = None,
) -> Config:
    """Defaults < config file < ``cli`` (options the user actually gave; None means unset).

    Args:
        cli: command-line settings; keys as in :data:`DEFAULTS`, None values are ignored.
        config_file: use this file instead of searching (``--config``).
        isolated: ignore every config file (``--isolated``).
        start: where the search starts (default: the current directory).

    Returns:
        The settings, with ``config_file`` naming the file used (or None).
    """
    return resolve_with_sources(cli, config_file=config_file, isolated=isolated, start=start)[0]


def resolve_with_sources(
    cli: dict[str, Any] | None = None,
    *,
    config_file: str | Path | None = None,
    isolated: bool = False,
    start: Path | None = None,
) -> tuple[Config, dict[str, str]]:
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
    sources["config_file"] = DEFAULT_SOURCE if path is None else ("--config" if config_file is not None else "found from the current directory")
    return Config.from_checked(settings, config_file=None if path is None else str(path)), sources
