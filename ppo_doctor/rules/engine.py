"""The rule engine: run the selected rules over a Run, and turn findings into a verdict.

Of the settings (:class:`ppo_doctor.config.Config`) only ``select``, ``ignore``,
``per_run_ignores`` and ``rules`` are read here; ``fail_on`` and ``aliases`` belong to the CLI and
the ingest step.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

import numpy as np

from ..settings import Config
from ..design import family_of
from ..results import SEVERITY_RANK, SYMPTOMS, Finding, NotApplicable
from ..run import Run
from ..suppress import ignored_codes
from ..view import RunView
from . import registry
from .base import Rule

log = logging.getLogger(__name__)

# Symptoms about the run's dynamics (everything but log quality).  One warning- or error-level
# finding with one of them makes a run unhealthy (DESIGN.md "Verdict contract"): a warning is a
# claim the rule defends to the run's author, and severity says how bad it is.
CORE_SYMPTOMS = tuple(s for s in SYMPTOMS if s != "log_quality")
# The fewest points the longest core metric needs before a run is judged at all: the trend and
# stability rules need this much history (PD905 short-run uses the same figure), so a 2-step or
# 4-row log is "unknown", not "healthy".
MIN_POINTS_FOR_VERDICT = 20
CORE_METRICS = ("reward/score", "reward/total", "kl/ref", "kl/old", "loss/policy", "loss/value", "loss/total")

# The metric families a verdict needs at least one of (DESIGN.md "Report": unknown when the
# run lacks the metrics to judge, e.g. SFT control runs or logs of timings only).  Only the RL
# losses count: a bare ``loss`` (HF Trainer) maps to ``loss/total`` and is an SFT run's loss too.
JUDGING_FAMILIES = {
    "reward": ("reward/score", "reward/total"),
    "KL": ("kl/ref", "kl/old"),
    "policy/value loss": ("loss/policy", "loss/value"),
}
LOSS_FAMILY = "policy/value loss"


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
        missing = rule_cls.missing(run)
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


def _missing_families(run: Run) -> list[str]:
    return [fam for fam, metrics in JUDGING_FAMILIES.items() if not any(run.frame.has(m) for m in metrics)]


def core_points(run: Run) -> int:
    """Points in the run's longest core metric (reward, KL, losses)."""
    return max((run.frame.count(m) for m in CORE_METRICS if run.frame.has(m)), default=0)


def decisive(findings: list[Finding]) -> list[Finding]:
    """The findings that decide a verdict (warning or error on a training symptom), worst first,
    then in step order."""
    out = [f for f in findings if f.severity != "info" and f.symptom in CORE_SYMPTOMS]
    return sorted(out, key=lambda f: (-SEVERITY_RANK[f.severity], f.start_step if f.start_step is not None else -1, f.code))


def _at(f: Finding) -> str:
    return f"{f.symptom}" + (f" from step {f.start_step}" if f.start_step is not None else "")


def unhealthy_reason(findings: list[Finding], *, with_message: bool = True) -> str:
    """The reason of an unhealthy verdict: the deciding finding (errors first, then the earliest
    onset) and the other symptoms in step order; "" when no finding decides.

    ``with_message=False`` leaves the deciding finding's message out, for the reports that list
    every finding under the verdict (a finding's message is shown once per run).
    """
    bad = decisive(findings)
    if not bad:
        return ""
    worst = bad[0]
    reason = f"{_at(worst)} ({worst.code} {worst.name}, {worst.severity})"
    if with_message:
        reason += f": {worst.message}"
    others: list[Finding] = []
    for f in sorted(bad[1:], key=lambda f: (f.start_step if f.start_step is not None else -1, f.code)):
        if f.symptom != worst.symptom and f.symptom not in {o.symptom for o in others}:
            others.append(f)
    if others:
        reason += "; also " + ", ".join(_at(f) for f in others)
    return reason


def verdict_for(run: Run, findings: list[Finding], not_applicable: list[NotApplicable]) -> tuple[str, str]:
    """``(verdict, reason)`` (:func:`_verdict`), the reason saying where a run stands when it
    stopped short of its plan or is still being written: "partial run: 40 of 200 planned steps
    (20 %)" (an absence of progress is judged only on a fair share of the plan)."""
    verdict, reason = _verdict(run, findings, not_applicable)
    stand = run.standing
    if stand.partial:
        reason += f"; partial run: {stand.describe()}, an absence of progress is judged once it reaches its plan"
    elif stand.live and stand.planned is None and stand.done is not None:
        reason += f"; live: {stand.describe()}"
    return verdict, reason


def _verdict(run: Run, findings: list[Finding], not_applicable: list[NotApplicable]) -> tuple[str, str]:
    """``(verdict, reason)``, the one contract of every output (DESIGN.md "Verdict contract").

    * unhealthy: at least one warning- or error-level finding on a training symptom; the
      reason is the worst one's message (errors first, then the earliest onset), and names the
      other symptoms in step order;
    * unknown: the log cannot support a judgement: no reward, no KL and no policy/value loss
      metric, or fewer than :data:`MIN_POINTS_FOR_VERDICT` points in its longest core metric
      (an error-level finding, e.g. NaN in the reward, still makes a short run unhealthy);
    * healthy otherwise; the reason names the metric families that were not logged (a run
      without any KL metric is healthy on what it logs, never "healthy on KL"), and says what
      the run lacks by design: a critic-free run (``Run.by_design``) has no value metrics to
      log and its total loss is its policy loss, so it is never "not judged: no policy/value
      loss metric" when it logs ``loss``.

    ``log_quality`` findings and info notes never decide a verdict.
    """
    bad = decisive(findings)
    missing = _missing_families(run)
    points = core_points(run)
    critic_free = run.by_design.get("critic", "")
    if not (bad and bad[0].severity == "error"):
        if len(missing) == len(JUDGING_FAMILIES):
            if critic_free:
                return "unknown", (
                    "cannot judge: the run logs no reward and no KL metric"
                    + (", only its total loss" if run.frame.has("loss/total") else " and no loss")
                    + f"; {critic_free}"
                )
            return "unknown", "cannot judge: the run logs no reward, no KL and no policy/value loss metric (an SFT or non-RL log?)"
        if points < MIN_POINTS_FOR_VERDICT:
            return "unknown", (
                f"cannot judge: only {points} point(s) in the longest reward/KL/loss metric; "
                f"a judgement needs at least {MIN_POINTS_FOR_VERDICT}"
            )
    if bad:
        return "unhealthy", unhealthy_reason(bad)
    reason = "no warning- or error-level finding on a training symptom"
    if critic_free:
        # a critic-free trainer (GRPO, RLOO, ...) has no value loss to log, and its total loss
        # (TRL's ``loss``) is the policy loss: neither is a gap in the log (issue 15 §5)
        reason += f"; {critic_free}: no value metrics by design"
        missing = [
            "policy loss" if fam == LOSS_FAMILY else fam
            for fam in missing
            if fam != LOSS_FAMILY or not run.frame.has("loss/total")
        ]
    off = [fam for fam in missing if fam == "KL" and run.kl_off]
    if off:
        reason += "; KL off by configuration"
    missing = [fam for fam in missing if fam not in off]
    if missing:
        reason += f"; not judged: no {' / '.join(missing)} metric logged"
    return "healthy", reason
