"""The rule registry: every ``pdNNN_*.py`` module of this package, then the rules of the
``ppo_doctor.rules`` plugins (:mod:`ppo_doctor.plugins`), imported on first use.  A plugin rule
passes the checks a built-in one does and may not take a code or name already taken.

Selection follows flake8 (docs/sources.md#peer-linters): ``select`` / ``ignore`` entries are code
prefixes (``PD1`` = every KL rule, ``PD101`` = one rule) or exact rule names
(``kl-above-band``), like pylint's codes and symbols.  When a rule matches both lists
the more specific entry wins (a name beats any prefix, a longer prefix beats a shorter one);
on a tie ``ignore`` wins.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from types import ModuleType
from typing import Iterable

from .. import plugins
from ..diagnose.catalog import CAUSE_IDS as CATALOG_IDS
from ..results import SEVERITIES, SYMPTOMS, RuleMeta
from .base import Rule, requirement_text

CODE_RE = re.compile(r"^PD\d{3}$")
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MODULE_RE = re.compile(r"^pd\d{3}_\w+$")

# The cause vocabulary is the diagnosis catalog's; a rule may only support
# causes that diagnosis can explain and fix.
CAUSE_IDS = tuple(CATALOG_IDS)

_BUILTIN: list[type[Rule]] | None = None
_RULES: list[type[Rule]] | None = None
# code of a plugin rule -> its distribution ("acme-ppo-rules 0.1"), what ``ppo-doctor rules`` shows
_ORIGIN: dict[str, str] = {}


def _check(rule: type[Rule]) -> None:
    """Reject a malformed rule when it is loaded, naming it: a registry bug for a built-in rule,
    a :class:`~ppo_doctor.errors.PluginError` naming the plugin for a plugin's (``_plugin_rules``)."""
    where = f"{rule.__module__}.{rule.__name__}"
    if not CODE_RE.match(rule.code):
        raise ValueError(f"{where}: code {rule.code!r} is not PD + 3 digits")
    if not NAME_RE.match(rule.name):
        raise ValueError(f"{where}: name {rule.name!r} is not kebab-case")
    if rule.symptom not in SYMPTOMS:
        raise ValueError(f"{where}: unknown symptom {rule.symptom!r}")
    if rule.severity not in SEVERITIES:
        raise ValueError(f"{where}: unknown severity {rule.severity!r}")
    unknown = [c for c in rule.causes if c not in CAUSE_IDS]
    if unknown:
        raise ValueError(f"{where}: unknown cause ids {unknown}")
    if not (rule.__doc__ or "").strip():
        raise ValueError(f"{where}: a rule's docstring is its documentation and may not be empty")


def _defined_in(module: ModuleType) -> list[type[Rule]]:
    """The rules a module defines (not those it imports), as a ``pdNNN_*.py`` module holds them."""
    # one class bound to two names (``Alias = FlatReward``) is one rule, not a clash with itself
    found = [obj for obj in vars(module).values() if isinstance(obj, type) and issubclass(obj, Rule) and obj.__module__ == module.__name__ and obj.code]
    return list(dict.fromkeys(found))


def _load_builtin() -> list[type[Rule]]:
    # this module's own folder is the package's: no import of the package (which imports us)
    found: list[type[Rule]] = []
    for mod_info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda m: m.name):
        if not MODULE_RE.match(mod_info.name):
            continue
        module = importlib.import_module(f"{__package__}.{mod_info.name}")
        for obj in _defined_in(module):
            _check(obj)
            found.append(obj)
    codes = [r.code for r in found]
    names = [r.name for r in found]
    dup = {c for c in codes if codes.count(c) > 1} | {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"duplicate rule codes or names: {sorted(dup)}")
    return sorted(found, key=lambda r: r.code)


def _plugin_rules(plugin: plugins.Plugin) -> list[type[Rule]]:
    """The rules one ``ppo_doctor.rules`` entry point gives, each checked as a built-in one."""
    obj = plugin.obj
    if isinstance(obj, ModuleType):
        rules = _defined_in(obj)
        if not rules:
            raise plugin.error(f"{plugins.kind(obj)} defines no Rule subclass with a code")
    elif isinstance(obj, type) and issubclass(obj, Rule) and obj.code:
        rules = [obj]
    else:
        raise plugin.error(f"expected a ppo_doctor.rules.Rule subclass with a code, or a module of them; got {plugins.kind(obj)}")
    for rule in rules:
        try:
            _check(rule)
        except ValueError as exc:
            raise plugin.error(str(exc)) from None
    return rules


def _load() -> tuple[list[type[Rule]], dict[str, str]]:
    """The built-in rules and the plugins' rules, sorted by code, and each plugin rule's origin."""
    found = builtin_rules()
    taken = {key: f"the built-in rule {r.code} {r.name}" for r in found for key in (r.code, r.name)}
    origin: dict[str, str] = {}
    for plugin in plugins.load(plugins.RULES):
        for rule in _plugin_rules(plugin):
            for key in (rule.code, rule.name):
                if key in taken:
                    raise plugin.error(f"rule {rule.code} {rule.name}: {key} is already taken by {taken[key]}")
            taken[rule.code] = taken[rule.name] = f"the rule {rule.code} {rule.name} of {plugin.dist}"
            origin[rule.code] = plugin.dist
            found.append(rule)
    return sorted(found, key=lambda r: r.code), origin


def builtin_rules() -> list[type[Rule]]:
    """The rules of this package only, sorted by code (what ``docs/rules.md`` documents)."""
    global _BUILTIN
    if _BUILTIN is None:
        _BUILTIN = _load_builtin()
    return list(_BUILTIN)


def all_rules() -> list[type[Rule]]:
    """Every registered rule class, built-in and from plugins, sorted by code."""
    global _RULES, _ORIGIN
    if _RULES is None:
        _RULES, _ORIGIN = _load()
    return list(_RULES)


def origin(rule: type[Rule]) -> str | None:
    """The distribution a plugin rule comes from (``"acme-ppo-rules 0.1"``); None for a built-in."""
    all_rules()
    return _ORIGIN.get(rule.code)


def get(code_or_name: str) -> type[Rule]:
    """The rule with this code (any case) or name; KeyError with suggestions otherwise."""
    key = code_or_name.strip()
    for rule in all_rules():
        if rule.code == key.upper() or rule.name == key.lower():
            return rule
    choices = [r.code for r in all_rules()] + [r.name for r in all_rules()]
    import difflib  # only for a code that matches no rule; not paid by every check (benchmarks/RESULTS.md)

    close = difflib.get_close_matches(key, choices, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise KeyError(f"no rule {code_or_name!r}{hint}")


def _match_len(rule: type[Rule], patterns: Iterable[str]) -> int:
    """How specifically ``patterns`` name ``rule``: 0 none, prefix length, or 1000 for a name."""
    best = 0
    for p in patterns:
        p = p.strip()
        if not p:
            continue
        if p.lower() == rule.name:
            return 1000
        if p.upper() == "ALL":
            best = max(best, 1)
        elif rule.code.startswith(p.upper()):
            best = max(best, len(p))
    return best


def is_selected(rule: type[Rule], select: Iterable[str] | None = None, ignore: Iterable[str] | None = None) -> bool:
    """Whether ``rule`` runs under these select/ignore lists (see the module docstring)."""
    sel = _match_len(rule, select) if select else 1  # no select list: everything is selected
    ign = _match_len(rule, ignore or ())
    return sel > 0 and (ign == 0 or sel > ign)


def select(select: Iterable[str] | None = None, ignore: Iterable[str] | None = None) -> list[type[Rule]]:
    """The rules enabled by ``select`` (default: all) minus ``ignore``."""
    sel = list(select) if select else None
    ign = list(ignore) if ignore else None
    return [r for r in all_rules() if is_selected(r, sel, ign)]


def unknown_selectors(patterns: Iterable[str]) -> list[str]:
    """Entries of a select/ignore list that match no rule (likely typos)."""
    out = []
    for p in patterns or ():
        if not any(_match_len(r, [p]) for r in all_rules()):
            out.append(p)
    return out


def rule_meta(rule: type[Rule], selected: bool = True) -> RuleMeta:
    """What a report carries about ``rule``; its documentation is the rule's docstring, as ruff's
    rule doc comment feeds its SARIF ``fullDescription`` (docs/sources.md#peer-linters).  The
    docstrings cite public sources only (papers, framework files, docs/sources.md anchors;
    ``tests/test_citations.py``), so they are shipped as written."""
    doc = inspect.cleandoc(rule.__doc__ or "")
    return RuleMeta(
        code=rule.code,
        name=rule.name,
        summary=rule.summary(),
        doc=doc,
        severity=rule.severity,
        symptom=rule.symptom,
        requires=tuple(requirement_text(need) for need in rule.requires),
        selected=selected,
    )


def metadata(select: Iterable[str] | None = None, ignore: Iterable[str] | None = None) -> list[RuleMeta]:
    """Every registered rule's :class:`RuleMeta`, marked ``selected`` as ``select``/``ignore``
    decide (the engine's own selection), sorted by code."""
    sel = list(select) if select else None
    ign = list(ignore) if ignore else None
    return [rule_meta(r, is_selected(r, sel, ign)) for r in all_rules()]
