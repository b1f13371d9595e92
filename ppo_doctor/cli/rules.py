"""``ppo-doctor rules`` (the rule table) and ``ppo-doctor explain CODE_OR_NAME`` (one rule in full).

Exit code 2 for an unknown rule, as for any usage error (:mod:`ppo_doctor.exits`).  A plugin's
rule (:mod:`ppo_doctor.plugins`) is listed with the distribution it comes from.
"""

from __future__ import annotations

import json
import sys

import click

from ..exits import EXIT_ERROR
from ..report.escape import prose
from ..rules.base import Rule
from ..rules.docs import body, describe_example, describe_rule, example_findings, requires_text
from ..rules.guides import references
from ..rules.registry import all_rules, get, origin


@click.command()
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", help="Output format (default: text).")
def rules(fmt: str) -> None:
    """List every rule: code, name, symptom, severity, evidence (event or trend) and summary."""
    items = all_rules()
    if fmt == "json":
        click.echo(json.dumps([{**describe_rule(r), **_plugin_key(r)} for r in items], indent=2))
        return
    header = ("code", "name", "symptom", "severity", "evidence", "summary")
    rows = [(r.code, r.name, r.symptom, r.severity, r.evidence, prose(r.summary()) + _from(r)) for r in items]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(5)]
    for row in [header, *rows]:
        click.echo("  ".join(col.ljust(widths[i]) for i, col in enumerate(row[:5])) + "  " + row[5])


def _from(rule: type[Rule]) -> str:
    """`` (from acme-ppo-rules 0.1)`` after a plugin rule's summary; nothing for a built-in."""
    where = origin(rule)
    return f" (from {where})" if where else ""


def _plugin_key(rule: type[Rule]) -> dict[str, str]:
    """``{"plugin": "acme-ppo-rules 0.1"}`` for a plugin rule's JSON; nothing for a built-in."""
    where = origin(rule)
    return {"plugin": where} if where else {}


@click.command()
@click.argument("code_or_name")
def explain(code_or_name: str) -> None:
    """Explain one rule: documentation, parameters, requirements, causes and examples.

    The documentation cites public sources (papers, framework files, docs/sources.md anchors);
    the guides the rules are built from follow by title and public URL.
    """
    try:
        rule = get(code_or_name)
    except KeyError as e:
        click.echo(f"ppo-doctor: error: {e.args[0]}", err=True)
        sys.exit(EXIT_ERROR)
    click.echo(f"{rule.code} {rule.name}: {prose(rule.summary())}{_from(rule)}")
    click.echo(f"symptom: {rule.symptom}    default severity: {rule.severity}    evidence: {rule.evidence}")
    click.echo(f"requires: {', '.join(requires_text(rule)) or 'nothing'}")
    click.echo("")
    click.echo(prose(body(rule)))
    click.echo("")
    if rule.params:
        click.echo("parameters (override under [tool.ppo-doctor.rules.%s]):" % rule.name)
        for k, v in rule.params.items():
            click.echo(f"  {k} = {v!r}")
    if rule.causes:
        click.echo("causes supported (weight):")
        for c, w in sorted(rule.causes.items(), key=lambda kv: -kv[1]):
            click.echo(f"  {c} ({w:g})")
    click.echo(f"message: {rule.message}")
    click.echo("")
    bad = rule.bad_example()
    click.echo(f"bad example: {describe_example(bad)}")
    for msg in example_findings(rule, bad):
        click.echo(f"  -> {msg}")
    click.echo(f"good example: {describe_example(rule.good_example())}")
    click.echo("")
    click.echo("references (the guides these rules are built from):")
    for line in references():
        click.echo(f"  {line}")
