"""The result types every stage downstream of the rules reads: Finding, RankedCause,
NotApplicable, RunReport and Report, with the vocabularies they check (symptoms, severities)
and the versioned JSON contract (``SCHEMA_VERSION``; ``report/report.schema.json`` describes it).

A leaf module: it imports the run model and nothing from ``rules/``, ``diagnose/``, ``report/``
or the CLI, so the rule engine, the diagnosis, the monitor and the renderers all read one
definition. Both report objects show themselves in a notebook: a one-line ``repr`` (run,
verdict, the finding codes) and ``_repr_html_``, the HTML report's summary and findings without
plots (:func:`ppo_doctor.report.html.fragment`; ``render(report, "html")`` draws them).
This module depends on no renderer: the HTML renderer registers itself here when it is
imported (register_notebook_html), and the first display imports it, whatever was imported
before (IPython or not).
"""

from __future__ import annotations

import importlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from ._version import __version__
from .frame import ReadIssue
from .run import Run

SYMPTOMS = (
    "kl_blowup",
    "negative_kl",
    "reward_hacking",
    "reward_spike",
    "reward_collapse",
    "stagnation",
    "value_instability",
    "oscillation",
    "gradient_explosion",
    "nan",
    "entropy_collapse",
    "unstable_updates",
    "log_quality",
)

# The kinds of observation a finding is made on (``Finding.observes``): the logged scalars, or
# the generated text samples (PD95x), which diagnosis weighs as independent evidence.
OBSERVES = ("metrics", "texts")

SEVERITIES = ("info", "warning", "error")

# What a finding rests on (docs/architecture.md#contracts, "outcome before sign"): an *outcome*
# (what the run's author cares about got worse or stopped improving, or numbers broke), a
# *runaway* (a quantity still accelerating, beyond every healthy run of the reference population,
# or non-finite), or a *sign* (a diagnostic past a line, alone).  Only the first two may warn: a
# sign is an info note.  ``log`` is what log-quality findings rest on (the log, not the training).
BASES = ("outcome", "runaway", "sign", "log")
SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}


# The notebook display of a report: set by ppo_doctor.report.html when it is imported.
_NOTEBOOK_HTML: list[Callable[["Report"], str]] = []


def register_notebook_html(render: Callable[["Report"], str]) -> None:
    """Make ``render`` the HTML that Report and RunReport show in a notebook (``_repr_html_``)."""
    _NOTEBOOK_HTML[:] = [render]


def notebook_html(report: "Report") -> str:
    """The notebook HTML of ``report``: the renderer's, imported on the first display (importing
    it registers it; a plugin may register another)."""
    if not _NOTEBOOK_HTML:
        importlib.import_module("ppo_doctor.report.html")
    return _NOTEBOOK_HTML[0](report)


@dataclass(frozen=True)
class Finding:
    """One incident a rule found in one run.

    ``start_step`` is the onset (the first step where the finding's condition holds; where a
    drift began before it is context in the message, docs/architecture.md), ``threshold_step``
    where a threshold was first crossed, ``end_step`` the
    last step of the incident and ``peak_step`` its worst point.  ``observes`` says what the
    finding was made on (:data:`OBSERVES`); ``band`` is the healthy level the rule judged the
    metric against when it has one (PD101's KL band), which plots draw as a reference line;
    ``reads`` the metrics its rule reads (``Rule.requires``, one tuple per "any of" group), so
    a plot shades the incident on them too without asking the rule registry.  None of the
    three is part of the JSON report.  ``basis`` says what the finding rests on (:data:`BASES`):
    only an outcome or a runaway may make it a warning or an error.
    """

    code: str
    name: str
    symptom: str
    severity: str
    metric: str
    message: str
    start_step: int | None = None
    end_step: int | None = None
    peak_step: int | None = None
    threshold_step: int | None = None
    observed: dict[str, float] = field(default_factory=dict)
    causes: dict[str, float] = field(default_factory=dict)  # cause id -> support weight
    evidence: list[str] = field(default_factory=list)
    observes: str = "metrics"
    band: float | None = None
    reads: tuple[tuple[str, ...], ...] = ()
    basis: str = "sign"

    def __post_init__(self) -> None:
        if self.symptom not in SYMPTOMS:
            raise ValueError(f"unknown symptom {self.symptom!r}")
        if self.severity not in SEVERITIES:
            raise ValueError(f"unknown severity {self.severity!r}")
        if self.observes not in OBSERVES:
            raise ValueError(f"unknown kind of observation {self.observes!r}")
        if self.basis not in BASES:
            raise ValueError(f"unknown basis {self.basis!r}")

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "code": self.code,
            "name": self.name,
            "symptom": self.symptom,
            "severity": self.severity,
            "metric": self.metric,
            "start_step": self.start_step,
            "end_step": self.end_step,
            "peak_step": self.peak_step,
            "threshold_step": self.threshold_step,
            "message": self.message,
            "observed": {k: _jsonable(v) for k, v in self.observed.items()},
            "evidence": list(self.evidence),
            "basis": self.basis,
        }
        return d


@dataclass
class RankedCause:
    """A cause with the evidence for it and against it, kept apart.

    ``evidence`` names the findings that support the cause (by code, rule, symptom, metric and
    steps: a finding's message is shown once, with the finding); ``config_evidence`` what the
    run's config and logged values say for it, ``config_against`` what they say against it.
    """

    id: str
    title: str
    confidence: float  # 0..1
    explanation: str = ""
    evidence: list[str] = field(default_factory=list)  # from findings
    config_evidence: list[str] = field(default_factory=list)  # from the run's own config, for
    fixes: list[str] = field(default_factory=list)
    config_against: list[str] = field(default_factory=list)  # from the run's own config, against
    # the codes of the findings that support the cause in this run's domain (a live alert names
    # the first fix of the best cause its finding supports); not serialised: ``evidence`` says it
    supported_by: list[str] = field(default_factory=list)

    @property
    def evidence_for(self) -> list[str]:
        """Everything that supports the cause: findings, then config (marked ``config: ``)."""
        return list(self.evidence) + [f"config: {e}" for e in self.config_evidence]

    @property
    def evidence_against(self) -> list[str]:
        return [f"config: {e}" for e in self.config_against]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "confidence": round(float(self.confidence), 3),
            "explanation": self.explanation,
            "evidence": self.evidence_for,
            "evidence_against": self.evidence_against,
            "fixes": list(self.fixes),
        }


def _jsonable(v: Any) -> Any:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return v
    if f != f or f in (float("inf"), float("-inf")):
        return str(f)  # JSON has no NaN/Inf; keep them visible as strings
    return f


# 2: symptoms unstable_updates and reward_collapse, cause evidence split into for / against,
# the verdict contract of docs/architecture.md#contracts (ppo_doctor/report/report.schema.json
# describes each version).
SCHEMA_VERSION = 2


@dataclass
class NotApplicable:
    """A rule that did not run: the metrics it lacks and, when the run lacks them by design
    (critic-free, KL off by configuration: ``Run.by_design``), why; reports say that once."""

    code: str
    name: str
    missing: list[str]
    by_design: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "name": self.name, "missing": list(self.missing)}
        if self.by_design:
            out["by_design"] = self.by_design
        return out


@dataclass(frozen=True)
class RuleMeta:
    """What a report says about one rule, so that renderers need no rule registry: SARIF
    describes every rule the tool ran with (``tool.driver.rules``), JUnit makes a test case of
    each ``selected`` one.  ``doc`` is the rule's docstring as a SARIF or JUnit reader may see
    it; ``requires`` the metrics it reads, one ``a|b`` entry per "any of" group."""

    code: str
    name: str
    summary: str = ""
    doc: str = ""
    severity: str = "warning"
    symptom: str = ""
    requires: tuple[str, ...] = field(default_factory=tuple)
    selected: bool = True


@dataclass(frozen=True)
class Cost:
    """What a failure cost (``ppo_doctor.cost.failure_cost``): the steps an unhealthy run trained
    after the onset of its first warning or error, their share of the run's steps and, where the
    log says, the wall time they took and on how many devices.  No currency: devices and hours."""

    onset_step: int
    first_step: int
    last_step: int
    hours_after: float | None = None
    hours_from: str = ""  # what the hours were read from ("wall-clock times", "step_time", "train_runtime")
    devices: int | None = None
    devices_from: str = ""  # the config key the device count was read from

    @property
    def steps_after(self) -> int:
        """Steps trained after the onset."""
        return max(0, self.last_step - self.onset_step)

    @property
    def steps(self) -> int:
        """The run's logged step span."""
        return self.last_step - self.first_step

    @property
    def share(self) -> float:
        """The steps after the onset as a share of the run's step span."""
        return min(1.0, self.steps_after / self.steps) if self.steps > 0 else 1.0

    @property
    def device_hours(self) -> float | None:
        return None if self.hours_after is None or self.devices is None else self.hours_after * self.devices

    def to_dict(self) -> dict[str, Any]:
        return {
            "onset_step": self.onset_step,
            "first_step": self.first_step,
            "last_step": self.last_step,
            "steps_after": self.steps_after,
            "share": round(self.share, 4),
            "hours_after": None if self.hours_after is None else round(self.hours_after, 4),
            "hours_from": self.hours_from or None,
            "devices": self.devices,
            "devices_from": self.devices_from or None,
            "device_hours": None if self.device_hours is None else round(self.device_hours, 4),
        }


@dataclass
class RunReport:
    """One run's diagnosis: its verdict, findings, ranked causes and the rules that could not judge it."""

    run: Run
    verdict: str  # healthy | unhealthy | unknown
    findings: list[Finding] = field(default_factory=list)
    causes: list[RankedCause] = field(default_factory=list)
    not_applicable: list[NotApplicable] = field(default_factory=list)
    verdict_reason: str = ""
    cost: Cost | None = None  # unhealthy runs: what training on after the onset cost
    known: int = 0  # findings a baseline knows (check --baseline): not listed, still the run's

    @property
    def symptoms(self) -> list[str]:
        """The symptoms the run shows, worst first: from warning and error findings only (an
        info finding is a note, e.g. clipping active on every step, not a symptom)."""
        return self.symptoms_at_or_above("warning")

    def symptoms_at_or_above(self, severity: str) -> list[str]:
        """The symptoms of the findings at ``severity`` or above, worst first, each once."""
        floor = SEVERITY_RANK[severity]
        seen: list[str] = []
        for f in sorted(self.findings, key=lambda f: -SEVERITY_RANK[f.severity]):
            if SEVERITY_RANK[f.severity] >= floor and f.symptom not in seen:
                seen.append(f.symptom)
        return seen

    def __repr__(self) -> str:
        codes = ", ".join(dict.fromkeys(f.code for f in self.findings))
        found = f"{len(self.findings)} finding(s)" + (f" ({codes})" if codes else "")
        return f"<RunReport {self.run.id!r}: {self.verdict}, {found}>"

    def _repr_html_(self) -> str:
        return notebook_html(Report(runs=[self]))

    def worst_severity(self) -> str | None:
        if not self.findings:
            return None
        return max((f.severity for f in self.findings), key=SEVERITY_RANK.__getitem__)

    def to_dict(self) -> dict[str, Any]:
        run = self.run
        rng = run.frame.step_range()
        return {
            "run": run.id,
            "path": run.path,
            "format": run.format,
            "framework": run.framework,
            "framework_proof": run.framework_proof,
            "steps": 0 if rng is None else int(rng[1]),
            "step_range": None if rng is None else [int(rng[0]), int(rng[1])],
            "points": len(run.frame),
            "metrics": dict(sorted(((c, r) for r, c in run.mapping.items()), key=lambda kv: kv[0])),
            "unmapped": list(run.unmapped),
            "by_design": dict(run.by_design),
            "standing": run.standing.to_dict(),
            "config": {k: _plain(v) for k, v in run.config.items()},
            "verdict": self.verdict,
            "verdict_reason": self.verdict_reason,
            "symptoms": self.symptoms,
            "findings": [f.to_dict() for f in self.findings],
            "causes": [c.to_dict() for c in self.causes],
            "not_applicable": [n.to_dict() for n in self.not_applicable],
            "cost": None if self.cost is None else self.cost.to_dict(),
            "warnings": run.warnings,
        }


@dataclass
class Report:
    """The runs' reports, the inputs that could not be read, and ``rules``: the metadata of
    every rule the analysis knew (empty for a report built by hand: renderers then describe
    only the rules its findings name).  ``rules`` is not part of the JSON contract."""

    runs: list[RunReport] = field(default_factory=list)
    errors: list[ReadIssue] = field(default_factory=list)
    rules: list[RuleMeta] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "tool": {"name": "ppo-doctor", "version": __version__},
            "runs": [r.to_dict() for r in self.runs],
            "errors": [
                {"path": e.path, "message": e.message, **({"offset": e.offset} if e.offset is not None else {})}
                for e in self.errors
            ],
        }

    def __repr__(self) -> str:
        verdicts = Counter(r.verdict for r in self.runs)
        tally = ", ".join(f"{verdicts[v]} {v}" for v in ("unhealthy", "unknown", "healthy") if verdicts[v])
        findings = sum(len(r.findings) for r in self.runs)
        return (
            f"<Report: {len(self.runs)} run(s)" + (f" ({tally})" if tally else "")
            + f", {findings} finding(s), {len(self.errors)} read error(s)>"
        )

    def _repr_html_(self) -> str:
        return notebook_html(self)

    def findings_at_or_above(self, severity: str) -> list[Finding]:
        floor = SEVERITY_RANK[severity]
        return [f for r in self.runs for f in r.findings if SEVERITY_RANK[f.severity] >= floor]


def _plain(v: Any) -> Any:
    if isinstance(v, (str, int, bool)) or v is None:
        return v
    if isinstance(v, float):
        return v if v == v and abs(v) != float("inf") else str(v)
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    return str(v)
