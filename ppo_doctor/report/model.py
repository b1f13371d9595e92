"""Report: the analysis result for one or more runs, with the versioned JSON contract."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..findings import SEVERITY_RANK, Finding, RankedCause
from ..frame import ReadIssue
from ..run import Run

# 2: symptoms unstable_updates and reward_collapse, cause evidence split into for / against,
# the verdict contract of DESIGN.md (docs/report.schema.json describes each version).
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


@dataclass
class RunReport:
    run: Run
    verdict: str  # healthy | unhealthy | unknown
    findings: list[Finding] = field(default_factory=list)
    causes: list[RankedCause] = field(default_factory=list)
    not_applicable: list[NotApplicable] = field(default_factory=list)
    verdict_reason: str = ""

    @property
    def symptoms(self) -> list[str]:
        """The symptoms the run shows, worst first: from warning and error findings only (an
        info finding is a note, e.g. clipping active on every step, not a symptom)."""
        seen: list[str] = []
        for f in sorted(self.findings, key=lambda f: -SEVERITY_RANK[f.severity]):
            if f.severity != "info" and f.symptom not in seen:
                seen.append(f.symptom)
        return seen

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
            "steps": 0 if rng is None else int(rng[1]),
            "step_range": None if rng is None else [int(rng[0]), int(rng[1])],
            "points": len(run.frame),
            "metrics": dict(sorted(((c, r) for r, c in run.mapping.items()), key=lambda kv: kv[0])),
            "unmapped": list(run.unmapped),
            "by_design": dict(run.by_design),
            "config": {k: _plain(v) for k, v in run.config.items()},
            "verdict": self.verdict,
            "verdict_reason": self.verdict_reason,
            "symptoms": self.symptoms,
            "findings": [f.to_dict() for f in self.findings],
            "causes": [c.to_dict() for c in self.causes],
            "not_applicable": [n.to_dict() for n in self.not_applicable],
            "warnings": run.warnings,
        }


@dataclass
class Report:
    runs: list[RunReport] = field(default_factory=list)
    errors: list[ReadIssue] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        from .. import __version__

        return {
            "schema_version": SCHEMA_VERSION,
            "tool": {"name": "ppo-doctor", "version": __version__},
            "runs": [r.to_dict() for r in self.runs],
            "errors": [
                {"path": e.path, "message": e.message, **({"offset": e.offset} if e.offset is not None else {})}
                for e in self.errors
            ],
        }

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
