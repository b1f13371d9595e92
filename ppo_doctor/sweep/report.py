"""SweepReport: one compact row per run of a sweep, the attribution, and the read errors.

A row is made in the worker that analysed the run (:func:`sweep_row`), so only a few hundred bytes
per run travel back, whatever the run's size: a 10,000-run sweep never holds 10,000 RunFrames.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._version import __version__
from ..analyze import analyze_run
from ..settings import Config
from ..frame import ReadIssue
from ..run import Run
from .attribution import Attribution

SWEEP_SCHEMA_VERSION = 1
# findings of these symptoms say how the log was written, not how training went (docs/architecture.md#contracts)
NOT_TRAINING = frozenset({"log_quality"})
# ``SweepRow.params_from`` of parameters read from the run folder's name (no config or table gave any)
FOLDER_NAME = "folder name"


@dataclass
class SweepRow:
    """One run of a sweep.  ``verdict`` is ``error`` when the run could not be read at all."""

    run: str
    path: str
    verdict: str
    verdict_reason: str = ""
    symptoms: list[str] = field(default_factory=list)
    onset: int | None = None  # first step of the earliest warning/error training finding
    first_step: int | None = None
    last_step: int | None = None
    steps_wasted: int | None = None  # unhealthy runs: steps trained after the onset
    cost: dict[str, Any] | None = None  # unhealthy runs: RunReport.cost (ppo_doctor.cost.failure_cost)
    top_cause: dict[str, Any] | None = None  # {"id", "title", "confidence"}
    params: dict[str, Any] = field(default_factory=dict)
    params_from: str = ""  # "" (config, sweep table) or FOLDER_NAME
    seed: Any = None  # the run's seed, when its folder name gives one (never a parameter)
    format: str = ""
    framework: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "path": self.path,
            "format": self.format,
            "framework": self.framework,
            "verdict": self.verdict,
            "verdict_reason": self.verdict_reason,
            "symptoms": list(self.symptoms),
            "onset": self.onset,
            "first_step": self.first_step,
            "last_step": self.last_step,
            "steps_wasted": self.steps_wasted,
            "cost": self.cost,
            "top_cause": self.top_cause,
            "params": {k: _plain(v) for k, v in sorted(self.params.items())},
            "params_from": self.params_from or None,
            "seed": _plain(self.seed),
        }


@dataclass
class SweepReport:
    rows: list[SweepRow] = field(default_factory=list)
    attribution: Attribution | None = None
    errors: list[ReadIssue] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)  # sweep tables joined to the runs

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SWEEP_SCHEMA_VERSION,
            "kind": "sweep",
            "tool": {"name": "ppo-doctor", "version": __version__},
            "runs": [r.to_dict() for r in self.rows],
            "attribution": (self.attribution or Attribution([], [], 0)).to_dict(),
            "cost": self.cost(),
            "tables": list(self.tables),
            "errors": [
                {"path": e.path, "message": e.message, **({"offset": e.offset} if e.offset is not None else {})}
                for e in self.errors
            ],
        }

    def cost(self) -> dict[str, Any] | None:
        """What the sweep's failures cost, over the judged runs' step spans: the steps trained
        after the runs had failed, their share, and the hours and device-hours of the failed runs
        that log them (with how many runs each sum covers); None when no run failed."""
        spans = [r.last_step - r.first_step for r in self.rows if r.verdict in ("healthy", "unhealthy") and r.first_step is not None and r.last_step is not None]
        failed = [r.cost for r in self.rows if r.cost is not None]
        if not failed or sum(spans) <= 0:
            return None
        hours = [c["hours_after"] for c in failed if c["hours_after"] is not None]
        device = [c["device_hours"] for c in failed if c["device_hours"] is not None]
        after = sum(c["steps_after"] for c in failed)
        return {
            "runs": len(failed),
            "steps": sum(spans),
            "steps_after": after,
            "share": round(after / sum(spans), 4),
            "hours_after": round(sum(hours), 4) if hours else None,
            "runs_with_hours": len(hours),
            "device_hours": round(sum(device), 4) if device else None,
            "runs_with_device_hours": len(device),
        }

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rows:
            out[r.verdict] = out.get(r.verdict, 0) + 1
        return out


def sweep_row(run: Run, config: Config | None = None) -> SweepRow:
    """Analyse one run and keep what a sweep report shows of it (runs in the worker)."""

    rep = analyze_run(run, config)
    rng = run.frame.step_range()
    training = [f for f in rep.findings if f.severity != "info" and f.symptom not in NOT_TRAINING and f.start_step is not None]
    onset = min((int(f.start_step) for f in training if f.start_step is not None), default=None)
    top = rep.causes[0] if rep.causes else None
    return SweepRow(
        run=run.id,
        path=run.path,
        verdict=rep.verdict,
        verdict_reason=rep.verdict_reason,
        symptoms=[s for s in rep.symptoms if s not in NOT_TRAINING],
        onset=onset,
        first_step=None if rng is None else int(rng[0]),
        last_step=None if rng is None else int(rng[1]),
        steps_wasted=None if rep.cost is None else rep.cost.steps_after,
        cost=None if rep.cost is None else rep.cost.to_dict(),
        top_cause=None if top is None else {"id": top.id, "title": top.title, "confidence": round(float(top.confidence), 4)},
        params={k: _plain(v) for k, v in run.config.items() if _is_param(v)},
        format=run.format,
        framework=run.framework,
    )


def error_row(run_id: str, path: str, message: str) -> SweepRow:
    return SweepRow(run=run_id, path=path, verdict="error", verdict_reason=message)


def _is_param(v: Any) -> bool:
    """A scalar setting (lists and tables of a config are not one parameter value)."""
    return isinstance(v, (str, int, float, bool))


def _plain(v: Any) -> Any:
    if isinstance(v, float) and v != v:
        return "nan"
    if isinstance(v, float) and v in (float("inf"), float("-inf")):
        return str(v)
    return v
