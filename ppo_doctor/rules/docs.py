"""Rule documentation generated from the rules themselves (``docs/rules.md``).

The docstring of each rule is its documentation (sqlfluff/ruff style,
docs/sources.md#peer-linters); this module adds the metadata (symptom, severity, required
metrics, parameters, cause weights, message) and what the bad example produces, and makes the
docstring's ``docs/<page>.md#anchor`` citations links (the file sits beside those pages).
``python -m ppo_doctor.rules.docs`` rewrites ``docs/rules.md``; ``--check`` exits 1 when the file is
out of date.
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
from pathlib import Path
from typing import Any

from .base import EVAL_REQUIREMENT, Example, Rule, requirement_text
from .examples import example_run
from .registry import builtin_rules

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
# "docs/sources.md#kl-band" in a docstring; in docs/rules.md the page is a sibling
_DOC_CITATION = re.compile(r"\bdocs/([\w-]+\.md#[\w-]+)")


def requires_text(rule: type[Rule]) -> list[str]:
    """Required metrics, an any-of group joined by ' | ' (evaluation series named so)."""
    return [requirement_text(r, " | ") for r in rule.requires] + [
        EVAL_REQUIREMENT.format(requirement_text(r, " | ")) for r in rule.requires_eval
    ]


def body(rule: type[Rule]) -> str:
    """The docstring without its summary line."""
    doc = inspect.cleandoc(rule.__doc__ or "")
    return doc.split("\n", 1)[1].strip() if "\n" in doc else ""


def describe_rule(rule: type[Rule]) -> dict[str, Any]:
    """A JSON-ready description (used by ``ppo-doctor rules --format json``)."""
    return {
        "code": rule.code,
        "name": rule.name,
        "symptom": rule.symptom,
        "severity": rule.severity,
        "evidence": rule.evidence,
        "summary": rule.summary(),
        "requires": requires_text(rule),
        "params": {k: (list(v) if isinstance(v, tuple) else v) for k, v in rule.params.items()},
        "causes": dict(rule.causes),
        "message": rule.message,
    }


def describe_example(example: Example | None) -> str:
    """One line: the metrics (points, first -> last value), config and text samples."""
    if example is None:
        return "(none)"
    parts = []
    run = example_run(example)
    for metric in example.series:
        values = run.frame.arrays(metric)[1]
        if len(values):
            parts.append(f"{metric} ({len(values)} points, {values[0]:.3g} -> {values[-1]:.3g})")
    evals = run.eval_frame
    if evals is not None:
        for metric in example.eval_series:
            values = evals.arrays(metric)[1]
            if len(values):
                parts.append(f"evaluation {metric} ({len(values)} points, {values[0]:.3g} -> {values[-1]:.3g})")
    if example.config:
        parts.append("config " + ", ".join(f"{k}={v}" for k, v in example.config.items()))
    if example.texts:
        parts.append(f"{len(example.texts)} text samples")
    if example.framework:
        parts.append(f"framework {example.framework}")
    return "; ".join(parts)


def example_findings(rule: type[Rule], example: Example | None) -> list[str]:
    """Messages the rule produces on an example (empty for a good example)."""
    if example is None:
        return []
    run = example_run(example)
    if rule.missing(run):
        return []
    return [f"{f.severity}: {f.message}" for f in rule().run(run)]


def rule_markdown(rule: type[Rule]) -> str:
    """One rule's section of ``docs/rules.md``."""
    lines = [f"## {rule.code} {rule.name}", "", f"**{rule.summary()}**", ""]
    req = ", ".join(f"`{r}`" for r in requires_text(rule)) or "none"
    kind = "trend (judged once the run has had its fair share of its plan)" if rule.evidence == "trend" else "event (judged at once)"
    lines.append(f"Symptom `{rule.symptom}` · default severity **{rule.severity}** · evidence: {kind} · requires {req}")
    lines += ["", _DOC_CITATION.sub(r"[\g<0>](\1)", body(rule)), ""]
    if rule.params:
        lines += ["| parameter | default |", "|---|---|"]
        lines += [f"| `{k}` | `{v!r}` |" for k, v in rule.params.items()]
        lines.append("")
    if rule.causes:
        causes = ", ".join(f"`{c}` ({w:g})" for c, w in sorted(rule.causes.items(), key=lambda kv: -kv[1]))
        lines += [f"Causes it supports: {causes}", ""]
    lines += [f"Message: `{rule.message}`", ""]
    bad = rule.bad_example()
    lines += [f"Bad example: {describe_example(bad)}", ""]
    lines += [f"- {msg}" for msg in example_findings(rule, bad)]
    lines += ["", f"Good example (no finding): {describe_example(rule.good_example())}", ""]
    return "\n".join(lines)


def render() -> str:
    """The whole ``docs/rules.md``: the built-in rules only, whatever plugins are installed (the
    file documents ppo-doctor itself; ``ppo-doctor rules`` lists the plugins' rules too)."""
    rules = builtin_rules()
    out = [
        "# ppo_doctor rules",
        "",
        "Generated by `python -m ppo_doctor.rules.docs` from the rules' docstrings and metadata; do not edit.",
        "Select or ignore rules by code prefix or name (`select = [\"PD1\"]`, `ignore = [\"kl-oscillation\"]`) and",
        "override parameters under `[tool.ppo-doctor.rules.<code or name>]`.",
        "Which rule answers the questions GRPO practitioners ask most (rising entropy, a sampler that disagrees",
        "with the trainer, one reward function winning while the task loses): [grpo-questions.md](grpo-questions.md).",
        "",
        "| code | name | symptom | severity | summary |",
        "|---|---|---|---|---|",
    ]
    out += [f"| {r.code} | {r.name} | {r.symptom} | {r.severity} | {r.summary()} |" for r in rules]
    out.append("")
    out += [rule_markdown(r) for r in rules]
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check`` verify) the generated rules documentation."""
    parser = argparse.ArgumentParser(prog="python -m ppo_doctor.rules.docs", description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default=str(DEFAULT_PATH), help="output file (default: docs/rules.md)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is not up to date")
    args = parser.parse_args(argv)
    text = render()
    path = Path(args.path)
    if args.check:
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current != text:
            sys.stderr.write(f"{path} is out of date; run python -m ppo_doctor.rules.docs\n")
            return 1
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
