"""The rule registry: every ``pdNNN_*.py`` module of this package, imported on first use.

Selection follows flake8 (style-anchors.md §1c): ``select`` / ``ignore`` entries are code
prefixes (``PD1`` = every KL rule, ``PD101`` = one rule) or exact rule names
(``kl-above-band``), like pylint's codes and symbols (§1b).  When a rule matches both lists
the more specific entry wins (a name beats any prefix, a longer prefix beats a shorter one);
on a tie ``ignore`` wins.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from typing import Iterable

from ..diagnose.catalog import CAUSE_IDS as CATALOG_IDS
from ..results import SEVERITIES, SYMPTOMS, RuleMeta
from .base import Rule, requirement_text
from .citations import public_text

CODE_RE = re.compile(r"^PD\d{3}$")
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MODULE_RE = re.compile(r"^pd\d{3}_\w+$")

# The cause vocabulary is the diagnosis catalog's (DESIGN.md "Causes"); a rule may only support
# causes that diagnosis can explain and fix.
CAUSE_IDS = tuple(CATALOG_IDS)

_RULES: list[type[Rule]] | None = None


def _check(rule: type[Rule]) -> None:
    """Reject a malformed rule at import time, naming it (a registry bug, not user input)."""
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


def _load() -> list[type[Rule]]:
    # this module's own folder is the package's: no import of the package (which imports us)
    found: list[type[Rule]] = []
    for mod_info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda m: m.name):
        if not MODULE_RE.match(mod_info.name):
            continue
        module = importlib.import_module(f"{__package__}.{mod_info.name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Rule) and obj.__module__ == module.__name__ and obj.code:
                _check(obj)
                found.append(obj)
    codes = [r.code for r in found]
    names = [r.name for r in found]
    dup = {c for c in codes if codes.count(c) > 1} | {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"duplicate rule codes or names: {sorted(dup)}")
    return sorted(found, key=lambda r: r.code)


def all_rules() -> list[type[Rule]]:
    """Every registered rule class, sorted by code."""
    global _RULES
    if _RULES is None:
        _RULES = _load()
    return list(_RULES)


def get(code_or_name: str) -> type[Rule]:
    """The rule with this code (any case) or name; KeyError with suggestions otherwise."""
    key = code_or_name.strip()
    for rule in all_rules():
        if rule.code == key.upper() or rule.name == key.lower():
            return rule
    choices = [r.code for r in all_rules()] + [r.name for r in all_rules()]
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
    """What a report carries about ``rule``; the documentation cites only what a SARIF or
    JUnit reader can open (:func:`~ppo_doctor.rules.citations.public_text`), as ruff's rule doc
    comment feeds its SARIF ``fullDescription`` (reference/style-anchors.md section 7.4)."""
    doc = public_text(inspect.cleandoc(rule.__doc__ or ""))
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
