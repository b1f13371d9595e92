"""``ppo-doctor rules`` (the rule table) and ``ppo-doctor explain CODE_OR_NAME`` (one rule in full).

Exit code 2 for an unknown rule, as for any usage error (:mod:`ppo_doctor.exits`).  A plugin's
rule (:mod:`ppo_doctor.plugins`) is listed with the distribution it comes from.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..exits import EXIT_ERROR
from ..report.escape import prose
from ..rules.base import Rule
from ..rules.docs import body, describe_example, describe_rule, example_findings, requires_text
from ..rules.guides import references
from ..rules.registry import all_rules, get, origin
from .command import command, echo


def _rules_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", dest="fmt", choices=("text", "json"), default="text", help="Output format (default: text).")


@command(_rules_arguments)
def rules(args: argparse.Namespace) -> None:
    """List every rule: code, name, symptom, severity, evidence (event or trend) and summary."""
    items = all_rules()
    if args.fmt == "json":
        echo(json.dumps([{**describe_rule(r), **_plugin_key(r)} for r in items], indent=2))
        return
    header = ("code", "name", "symptom", "severity", "evidence", "summary")
    rows = [(r.code, r.name, r.symptom, r.severity, r.evidence, r.summary() + _from(r)) for r in items]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(5)]
    for row in [header, *rows]:
        echo("  ".join(col.ljust(widths[i]) for i, col in enumerate(row[:5])) + "  " + row[5])


def _from(rule: type[Rule]) -> str:
    """`` (from acme-ppo-rules 0.1)`` after a plugin rule's summary; nothing for a built-in."""
    where = origin(rule)
    return f" (from {where})" if where else ""


def _plugin_key(rule: type[Rule]) -> dict[str, str]:
    """``{"plugin": "acme-ppo-rules 0.1"}`` for a plugin rule's JSON; nothing for a built-in."""
    where = origin(rule)
    return {"plugin": where} if where else {}


def _explain_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("code_or_name", metavar="CODE_OR_NAME")


@command(_explain_arguments)
def explain(args: argparse.Namespace) -> None:
    """Explain one rule: documentation, parameters, requirements, causes and examples.

    The documentation cites public sources (papers, framework files, docs/sources.md anchors);
    the guides the rules are built from follow by title and public URL (:mod:`ppo_doctor.rules.guides`).
    """
    try:
        rule = get(args.code_or_name)
    except KeyError as e:
        echo(f"ppo-doctor: error: {e.args[0]}", err=True)
        sys.exit(EXIT_ERROR)
    echo(f"{rule.code} {rule.name}: {prose(rule.summary())}{_from(rule)}")
    echo(f"symptom: {rule.symptom}    default severity: {rule.severity}    evidence: {rule.evidence}")
    echo(f"requires: {', '.join(requires_text(rule)) or 'nothing'}")
    echo("")
    echo(prose(body(rule)))
    echo("")
    if rule.params:
        echo("parameters (override under [tool.ppo-doctor.rules.%s]):" % rule.name)
        for k, v in rule.params.items():
            echo(f"  {k} = {v!r}")
    if rule.causes:
        echo("causes supported (weight):")
        for c, w in sorted(rule.causes.items(), key=lambda kv: -kv[1]):
            echo(f"  {c} ({w:g})")
    echo(f"message: {rule.message}")
    echo("")
    bad = rule.bad_example()
    echo(f"bad example: {describe_example(bad)}")
    for msg in example_findings(rule, bad):
        echo(f"  -> {msg}")
    echo(f"good example: {describe_example(rule.good_example())}")
    echo("")
    echo("references (the guides these rules are built from):")
    for line in references():
        echo(f"  {line}")
