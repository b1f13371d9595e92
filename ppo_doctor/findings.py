"""Finding and ranked-cause records shared by rules, diagnosis and reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}


@dataclass
class Finding:
    """One incident a rule found in one run.

    ``start_step`` is the onset (where the trouble began, estimated by change-point
    detection), ``threshold_step`` where a threshold was first crossed, ``end_step`` the
    last step of the incident and ``peak_step`` its worst point.  ``observes`` says what the
    finding was made on (:data:`OBSERVES`); ``band`` is the healthy level the rule judged the
    metric against when it has one (PD101's KL band), which plots draw as a reference line.
    Neither is part of the JSON report.
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

    def __post_init__(self) -> None:
        if self.symptom not in SYMPTOMS:
            raise ValueError(f"unknown symptom {self.symptom!r}")
        if self.severity not in SEVERITIES:
            raise ValueError(f"unknown severity {self.severity!r}")
        if self.observes not in OBSERVES:
            raise ValueError(f"unknown kind of observation {self.observes!r}")

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
