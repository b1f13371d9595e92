"""The rule engine: run the selected rules over a Run (the verdict is :mod:`ppo_doctor.verdict`).

Of the settings (:class:`ppo_doctor.config.Config`) only ``select``, ``ignore``,
``per_run_ignores`` and ``rules`` are read here; ``fail_on`` and ``aliases`` belong to the CLI and
the ingest step.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

import numpy as np

from ..canonical.design import family_of
from ..results import Finding, NotApplicable
from ..run import Run
from ..settings import Config
from ..suppress import ignored_codes
from ..view import RunView
from . import registry
from .base import Rule

log = logging.getLogger(__name__)

def _overrides_for(rule: type[Rule], rules_cfg: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Parameter overrides for ``rule``: its code's entries, then its name's (name wins).

    The name's entry beats the code's whatever their order in the file (docs/configuration.md),
    as a rule name beats a code prefix in ``select``/``ignore``.  Values are already of the
    parameter's type (:class:`~ppo_doctor.config.Config` coerces them once).
    """
    out: dict[str, Any] = {}
    entries = [(str(key).strip(), opts) for key, opts in rules_cfg.items()]
    for k, opts in entries:
        if k.upper() == rule.code:
            out.update(opts)
    for k, opts in entries:
        if k.lower() == rule.name:
            out.update(opts)
    return out


def run_rules(run: Run, config: Config | None = None) -> tuple[list[Finding], list[NotApplicable]]:
    """Evaluate every selected rule; rules missing a required metric are reported, not run.

    ``config``: the resolved :class:`~ppo_doctor.settings.Config` (a mapping of its keys is
    validated above the rules, by :func:`ppo_doctor.config.coerce`; None: the defaults).  A rule that fails on malformed data is logged and skipped so that one
    rule cannot take the whole report down (inputs are untrusted); it is listed as not
    applicable with the reason.
    """
    cfg = config or Config()
    rules_cfg = cfg.rules
    findings: list[Finding] = []
    not_applicable: list[NotApplicable] = []
    per_run = ignored_codes(run, cfg.per_run_ignores)
    # per-run ignores win over any select entry (ruff's per-file-ignores): matched apart
    skipped = {r.code for r in registry.select(per_run)} if per_run else set()
    view = RunView(run)

    def resolver(name: str) -> dict[str, Any] | None:
        """Another rule's parameters as configured (PD301 judges a collapse with reward-collapse's)."""
        try:
            other = registry.get(name)
        except KeyError:
            return None
        return {**other.params, **_overrides_for(other, rules_cfg)}

    for rule_cls in registry.select(cfg.select, cfg.ignore):
        if rule_cls.code in skipped:
            continue
        missing = rule_cls.missing(run) or rule_cls.unmeasured(run, view.placeholders)
        if missing:
            not_applicable.append(NotApplicable(rule_cls.code, rule_cls.name, missing, _by_design(run, missing)))
            continue
        rule = rule_cls()
        try:
            # extreme logged values (1e300, Inf) overflow in intermediate sums; the detectors
            # treat the resulting Inf/NaN explicitly, so numpy's warnings would only be noise
            with np.errstate(all="ignore"):
                findings.extend(rule.run(run, _overrides_for(rule_cls, rules_cfg), view=view, resolver=resolver))
        except Exception as e:  # noqa: BLE001 - see docstring: one rule must not break the report
            log.error("rule %s %s failed on run %s: %s", rule_cls.code, rule_cls.name, run.id, e, exc_info=log.isEnabledFor(logging.DEBUG))
            not_applicable.append(NotApplicable(rule_cls.code, rule_cls.name, [f"internal error: {type(e).__name__}"]))
    findings.sort(key=lambda f: (f.code, f.start_step if f.start_step is not None else -1, f.metric))
    return findings, not_applicable


def _by_design(run: Run, missing: list[str]) -> str:
    """Why the run lacks one of ``missing`` by design (``Run.by_design``), or ""."""
    for group in missing:
        family = family_of(group)
        if family is not None and family in run.by_design:
            return run.by_design[family]
    return ""
