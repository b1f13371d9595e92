"""Rule metadata for the machine-readable formats (SARIF rule descriptors, JUnit test cases).

The rule registry (``ppo_doctor.rules.registry``) is the single source of each rule's code,
name, summary, docstring and default severity, as ruff's rule doc comment feeds its SARIF
``fullDescription`` (reference/style-anchors.md section 7.4), and of which rules
``select``/``ignore`` keep.  A rule that fired but is unknown to the registry (a report built
elsewhere, or by an older version) is still described from its findings, so no result ever
points at a missing descriptor.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..results import Finding, Report


@dataclass(frozen=True)
class RuleMeta:
    """What a report needs to know about one rule."""

    code: str
    name: str
    summary: str = ""
    doc: str = ""
    severity: str = "warning"
    symptom: str = ""
    requires: tuple[str, ...] = field(default_factory=tuple)


def _requires(value: Any) -> tuple[str, ...]:
    out = []
    for req in value or ():
        out.append(req if isinstance(req, str) else "|".join(req))
    return tuple(out)


def from_rule_class(cls: Any) -> RuleMeta:
    """Read a :class:`ppo_doctor.rules.base.Rule` subclass's metadata; the documentation
    cites only what a SARIF or JUnit reader can open (:func:`~ppo_doctor.rules.citations.public_text`)."""
    from ..rules.citations import public_text

    doc = public_text(inspect.cleandoc(cls.__doc__ or ""))
    summary = cls.summary() if hasattr(cls, "summary") else (doc.splitlines()[0] if doc else "")
    return RuleMeta(
        code=str(cls.code),
        name=str(cls.name),
        summary=summary,
        doc=doc,
        severity=str(getattr(cls, "severity", "warning")),
        symptom=str(getattr(cls, "symptom", "")),
        requires=_requires(getattr(cls, "requires", ())),
    )


def registered_rules(select: Iterable[str] | None = None, ignore: Iterable[str] | None = None) -> list[RuleMeta]:
    """The registered rules that ``select``/``ignore`` keep (the engine's own selection)."""
    from ..rules.registry import select as select_rules

    chosen = select_rules(list(select) if select else None, list(ignore) if ignore else None)
    return sorted((from_rule_class(c) for c in chosen), key=lambda m: m.code)


def _from_finding(f: Finding) -> RuleMeta:
    return RuleMeta(code=f.code, name=f.name, summary=f.name, severity=f.severity, symptom=f.symptom)


def catalog(
    report: Report,
    rules: Iterable[RuleMeta] | None = None,
    *,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
) -> list[RuleMeta]:
    """The rules a report covers: ``rules`` (default: the registry's selection) plus any rule
    the report mentions that they lack."""
    metas = {m.code: m for m in (registered_rules(select, ignore) if rules is None else rules)}
    for rr in report.runs:
        for f in rr.findings:
            metas.setdefault(f.code, _from_finding(f))
        for na in rr.not_applicable:
            metas.setdefault(na.code, RuleMeta(code=na.code, name=na.name, requires=tuple(na.missing)))
    return [metas[c] for c in sorted(metas)]
