"""The rule engine: run the selected rules over a Run (the verdict is :mod:`ppo_doctor.verdict`).

Of the settings (:class:`ppo_doctor.config.Config`) only ``select``, ``ignore``,
``per_run_ignores``, ``rules`` and ``plugin_timeout`` are read here; ``fail_on`` and ``aliases``
belong to the CLI and the ingest step.

What a rule yields is checked here, where it is received (issue 39): a Finding of the rule's own
code, its steps integers within int64.  A plugin rule runs under a deadline
(``plugin_timeout``, :mod:`ppo_doctor.deadline`), and one that fails, yields something else,
exceeds its deadline or calls ``sys.exit`` is listed as not applicable with the reason and its
distribution, while every other rule's findings stand.
"""

from __future__ import annotations

import dataclasses
import logging
import reprlib
from functools import partial
from typing import Any, Mapping

import numpy as np

from .. import deadline
from ..canonical.design import family_of
from ..results import Finding, NotApplicable
from ..run import Run
from ..settings import Config
from ..suppress import ignored_codes
from ..view import RunView
from . import registry
from .base import Rule

log = logging.getLogger(__name__)

_INT64 = np.iinfo(np.int64)
STEP_FIELDS = ("start_step", "end_step", "peak_step", "threshold_step")


class BadFinding(Exception):
    """A rule yielded something that is not a valid finding of its own."""

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
        plugin = registry.origin(rule_cls)
        try:
            task = partial(_evaluate, rule_cls, run, _overrides_for(rule_cls, rules_cfg), view, resolver)
            findings.extend(deadline.call(task, cfg.plugin_timeout if plugin else None))
        except (Exception, SystemExit) as e:  # noqa: BLE001 - see docstring: one rule must not break the report
            why = _failure(e, plugin)
            log.error("rule %s %s%s failed on run %s: %s", rule_cls.code, rule_cls.name, f" (plugin {plugin})" if plugin else "", run.id, why, exc_info=log.isEnabledFor(logging.DEBUG))
            not_applicable.append(NotApplicable(rule_cls.code, rule_cls.name, [why]))
    findings.sort(key=lambda f: (f.code, f.start_step if f.start_step is not None else -1, f.metric))
    return findings, not_applicable


def _evaluate(rule_cls: type[Rule], run: Run, params: dict[str, Any], view: RunView, resolver: Any) -> list[Finding]:
    """Every finding of one rule on ``run``, each checked (:func:`_checked`) as the rule's own
    ``evaluate`` yields it: ``Rule.run`` then judges them (a sign alone, a trend before its fair
    share), which reads their fields, so a malformed finding is caught before it is read."""
    rule = rule_cls()
    own = rule.evaluate
    rule.evaluate = lambda ctx: (_checked(f, rule_cls) for f in own(ctx))  # type: ignore[method-assign]
    # extreme logged values (1e300, Inf) overflow in intermediate sums; the detectors
    # treat the resulting Inf/NaN explicitly, so numpy's warnings would only be noise
    with np.errstate(all="ignore"):
        return list(rule.run(run, params, view=view, resolver=resolver))


def _checked(finding: Any, rule: type[Rule]) -> Finding:
    """``finding`` when it is a :class:`Finding` of ``rule`` whose steps are integers within
    int64 (numpy integers made plain ints); :class:`BadFinding` saying what is wrong otherwise.
    Everything downstream (the verdict, failure cost, every renderer) trusts these fields."""
    if not isinstance(finding, Finding):
        raise BadFinding(f"yielded {type(finding).__name__} {reprlib.repr(finding)}, not a Finding")
    if finding.code != rule.code:
        raise BadFinding(f"yielded a finding of code {reprlib.repr(finding.code)}, not its own {rule.code}")
    steps: dict[str, Any] = {}
    for name in STEP_FIELDS:
        value = getattr(finding, name)
        if value is None:
            continue
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not _INT64.min <= int(value) <= _INT64.max:
            raise BadFinding(f"yielded a finding whose {name} is {type(value).__name__} {reprlib.repr(value)}, not a step (an integer within int64)")
        steps[name] = int(value)
    if not isinstance(finding.message, str) or not isinstance(finding.metric, str):
        raise BadFinding("yielded a finding whose message or metric is not text")
    return finding if all(type(getattr(finding, k)) is int for k in steps) else dataclasses.replace(finding, **steps)



def _failure(exc: BaseException, plugin: str | None) -> str:
    """Why a rule is listed as not applicable: what went wrong, and the plugin when it is one."""
    if isinstance(exc, deadline.DeadlineExceeded):
        what = f"stopped: {exc} (plugin_timeout)"
    elif isinstance(exc, SystemExit):
        what = f"internal error: called sys.exit({exc.code!r})"
    elif isinstance(exc, BadFinding):
        what = f"internal error: {exc}"
    elif plugin:  # a plugin's author needs the message; a built-in's is in the log
        what = f"internal error: {type(exc).__name__}: {reprlib.repr(str(exc))}"
    else:
        what = f"internal error: {type(exc).__name__}"
    return f"{what} (plugin rule from {plugin})" if plugin else what


def _by_design(run: Run, missing: list[str]) -> str:
    """Why the run lacks one of ``missing`` by design (``Run.by_design``), or ""."""
    for group in missing:
        family = family_of(group)
        if family is not None and family in run.by_design:
            return run.by_design[family]
    return ""
