"""Scoring the doctor against the fault scenarios: symptom confusion matrix, cause accuracy,
false alarms on healthy runs, and the Markdown scorecard.

The scoring functions are pure (they take :class:`Outcome` records), so they are tested on
hand-made expected/detected sets independently of the rules.  :func:`run_suite` is the only
part that trains (it imports torch through ``ppo.py``, or TRL through ``trl_suite.py`` for the
scenarios of ``suite="trl"``) and analyses.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from ..analyze import analyze
from ..results import SYMPTOMS, RunReport
from .scenarios import Scenario

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Outcome:
    """What the doctor said about one scenario run, next to what it should have said."""

    scenario: str
    expected: frozenset[str]
    allowed: frozenset[str] = frozenset()
    top_cause: str | None = None
    detected: frozenset[str] = frozenset()
    causes: tuple[str, ...] = ()
    error_findings: int = 0
    verdict: str = ""
    seconds: float = 0.0
    failure: str | None = None  # the run or its analysis failed: nothing was detected

    @property
    def healthy(self) -> bool:
        return not self.expected

    @property
    def missed(self) -> frozenset[str]:
        return self.expected - self.detected

    @property
    def false_alarms(self) -> frozenset[str]:
        return self.detected - self.expected - self.allowed

    @property
    def cause_rank(self) -> int | None:
        """1-based rank of the expected cause in the diagnosis, None when absent or not expected."""
        if self.top_cause is None or self.top_cause not in self.causes:
            return None
        return self.causes.index(self.top_cause) + 1


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


def outcome_from_report(
    scenario: Scenario, run_report: RunReport, *, min_severity: str = "warning", seconds: float = 0.0
) -> Outcome:
    """Reduce a :class:`~ppo_doctor.results.RunReport` to an :class:`Outcome`.

    A symptom counts as detected when a finding at ``min_severity`` or above carries it;
    info-level findings are advice, not diagnoses.
    """
    findings = list(run_report.findings)
    detected = frozenset(run_report.symptoms_at_or_above(min_severity))
    return Outcome(
        scenario=scenario.name,
        expected=scenario.expected,
        allowed=scenario.allowed,
        top_cause=scenario.top_cause,
        detected=detected,
        causes=tuple(c.id for c in run_report.causes),
        error_findings=sum(f.severity == "error" for f in findings),
        verdict=run_report.verdict,
        seconds=seconds,
    )


def symptom_counts(outcomes: Iterable[Outcome]) -> dict[str, Counts]:
    """Per symptom: true/false positives and negatives over all scenarios.

    A detection of an ``allowed`` symptom is neither a true nor a false positive (it is a
    tolerated side effect), so it is counted as a true negative.
    """
    table = {s: Counts() for s in SYMPTOMS}
    for o in outcomes:
        for s, c in table.items():
            exp, det = s in o.expected, s in o.detected
            if exp and det:
                c.tp += 1
            elif exp:
                c.fn += 1
            elif det and s not in o.allowed:
                c.fp += 1
            else:
                c.tn += 1
    return table


def micro_scores(outcomes: Sequence[Outcome]) -> Counts:
    """All symptoms pooled (micro-averaged precision and recall)."""
    total = Counts()
    for c in symptom_counts(outcomes).values():
        total.tp += c.tp
        total.fp += c.fp
        total.fn += c.fn
        total.tn += c.tn
    return total


def cause_accuracy(outcomes: Iterable[Outcome], k: int) -> tuple[int, int]:
    """(hits, scenarios with an expected cause): the expected cause ranked within the top ``k``."""
    judged = [o for o in outcomes if o.top_cause is not None]
    hits = sum(1 for o in judged if o.cause_rank is not None and o.cause_rank <= k)
    return hits, len(judged)


# The detection budget (docs/architecture.md#budgets): symptom recall >= 95 % on the scenario suites,
# the injected cause ranked first in >= 80 %, no warning-level false symptom on a healthy seed.
RECALL_BUDGET = 0.95
CAUSE_FIRST_BUDGET = 0.8


def healthy_false_alarms(outcomes: Iterable[Outcome]) -> list[tuple[str, int]]:
    """(scenario, number of error-level findings) for every healthy scenario."""
    return [(o.scenario, o.error_findings) for o in outcomes if o.healthy]


@dataclass
class Summary:
    """The headline numbers of a validation run."""

    scenarios: int
    recall: float | None
    precision: float | None
    top1: tuple[int, int]
    top3: tuple[int, int]
    healthy_errors: int
    healthy_symptoms: int = 0  # symptoms (warning level and up) detected on healthy scenarios
    failures: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """The detection budget: no scenario failed to run, symptom recall >= ``RECALL_BUDGET``, no
        warning-level symptom on a healthy seed, the expected cause first in at least
        ``CAUSE_FIRST_BUDGET`` of the scenarios that name one."""
        hits, judged = self.top1
        return (
            not self.failures
            and (self.recall is None or self.recall >= RECALL_BUDGET)
            and self.healthy_errors == 0
            and self.healthy_symptoms == 0
            and (judged == 0 or hits >= CAUSE_FIRST_BUDGET * judged)
        )


def summarize(outcomes: Sequence[Outcome]) -> Summary:
    micro = micro_scores(outcomes)
    return Summary(
        scenarios=len(outcomes),
        recall=micro.recall,
        precision=micro.precision,
        top1=cause_accuracy(outcomes, 1),
        top3=cause_accuracy(outcomes, 3),
        healthy_errors=sum(n for _, n in healthy_false_alarms(outcomes)),
        healthy_symptoms=sum(len(o.detected) for o in outcomes if o.healthy),
        failures=[f"{o.scenario}: {o.failure}" for o in outcomes if o.failure],
    )


# -- rendering ---------------------------------------------------------------------------------
def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}%"


def _frac(pair: tuple[int, int]) -> str:
    hits, n = pair
    return f"{hits}/{n}" + (f" ({100 * hits / n:.0f}%)" if n else "")


def _set(xs: Iterable[str]) -> str:
    return ", ".join(sorted(xs)) or "-"


def scenario_rows(outcomes: Sequence[Outcome]) -> list[list[str]]:
    """One row per scenario: expected, detected, missed, false alarms, cause rank, verdict."""
    rows = []
    for o in outcomes:
        if o.top_cause is None:
            cause = "-"
        else:
            top = o.causes[0] if o.causes else "none"
            cause = f"{o.top_cause} (rank {o.cause_rank or '-'}; top: {top})"
        rows.append(
            [
                o.scenario,
                _set(o.expected) if o.expected else "(healthy)",
                _set(o.detected),
                _set(o.missed),
                _set(o.false_alarms),
                cause,
                o.failure and f"FAILED: {o.failure}" or o.verdict,
                f"{o.seconds:.0f}s",
            ]
        )
    return rows


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    esc = [[c.replace("|", "\\|") for c in r] for r in rows]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in esc]
    return "\n".join(lines)


def confusion_rows(outcomes: Sequence[Outcome]) -> list[list[str]]:
    """Per symptom that was expected or detected somewhere: TP FP FN, precision, recall."""
    rows = []
    for s, c in symptom_counts(outcomes).items():
        if c.tp + c.fp + c.fn == 0:
            continue
        rows.append([s, str(c.tp), str(c.fp), str(c.fn), _pct(c.precision), _pct(c.recall)])
    return rows


def render_markdown(outcomes: Sequence[Outcome], *, title: str = "Scenario scorecard", notes: Sequence[str] = ()) -> str:
    """The scorecard ``ppo-doctor validate -o FILE`` writes."""
    s = summarize(outcomes)
    parts = [
        f"# {title}",
        "",
        *[f"{n}" for n in notes],
        *([""] if notes else []),
        "## Summary",
        "",
        f"- scenarios: {s.scenarios}",
        f"- symptom recall (micro): {_pct(s.recall)}; precision (micro): {_pct(s.precision)}",
        f"- expected cause ranked first: {_frac(s.top1)}; in the top 3: {_frac(s.top3)}",
        f"- error-level findings on healthy runs: {s.healthy_errors}; warning-level symptoms on healthy runs: {s.healthy_symptoms}",
        f"- result: {'PASS' if s.passed else 'FAIL'} (budget: recall >= {RECALL_BUDGET:.0%}, cause first >= "
        f"{CAUSE_FIRST_BUDGET:.0%}, no symptom on a healthy run)",
        "",
        "## Per scenario",
        "",
        _md_table(
            ["scenario", "expected", "detected", "missed", "false alarms", "expected cause", "verdict", "time"],
            scenario_rows(outcomes),
        ),
        "",
        "## Per symptom",
        "",
        "Detections of a scenario's *allowed* side-effect symptoms count neither way.",
        "",
        _md_table(["symptom", "TP", "FP", "FN", "precision", "recall"], confusion_rows(outcomes)),
    ]
    if s.failures:
        parts += ["", "## Failures", "", *[f"- {f}" for f in s.failures]]
    return "\n".join(parts) + "\n"


def merge_section(document: str, section: str) -> str:
    """``document`` with ``section`` in place of the section of the same ``# `` title.

    A scorecard file holds one section per suite (the PPO reference loop, TRL's GRPOTrainer),
    each starting at its own top-level heading and running to the next; writing one suite's
    scorecard keeps the others.  A title not yet in the document is appended.
    """
    title = section.splitlines()[0] if section else ""
    lines = document.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip("\n") == title), None)
    if start is None:
        sep = "" if not document or document.endswith("\n\n") else ("\n" if document.endswith("\n") else "\n\n")
        return document + sep + section
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("# ")), len(lines))
    tail = "".join(lines[end:])
    return "".join(lines[:start]) + section + ("\n" + tail if tail else "")


def _text_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*header), fmt.format(*("-" * w for w in widths))] + [fmt.format(*r) for r in rows])


def render_text(outcomes: Sequence[Outcome]) -> str:
    """The console version: scenario rows, the symptom confusion table and the headline."""
    s = summarize(outcomes)
    head = ["scenario", "expected", "detected", "missed", "false alarms", "expected cause", "verdict", "time"]
    lines = [
        _text_table(head, scenario_rows(outcomes)),
        "",
        _text_table(["symptom", "TP", "FP", "FN", "precision", "recall"], confusion_rows(outcomes)),
        "",
        f"symptom recall {_pct(s.recall)}, precision {_pct(s.precision)}; "
        f"cause top-1 {_frac(s.top1)}, top-3 {_frac(s.top3)}; "
        f"error findings on healthy runs: {s.healthy_errors}, symptoms on healthy runs: {s.healthy_symptoms}; "
        f"{'PASS' if s.passed else 'FAIL'}",
    ]
    return "\n".join(lines)


# -- running -----------------------------------------------------------------------------------
def _runner(suite: str) -> Callable[[Any, Path], Any]:
    """The training function of a suite (imported here: both import torch)."""
    if suite == "trl":
        from .trl_suite import run as run_trl

        return run_trl
    from .ppo import run as run_ppo

    return run_ppo


def run_suite(
    scenarios: Sequence[Scenario],
    workdir: Path,
    *,
    steps: int | None = None,
    min_severity: str = "warning",
    overrides: dict[str, Any] | None = None,
) -> list[Outcome]:
    """Simulate each scenario into ``workdir/<name>`` and analyse it with ``ppo_doctor.analyze``."""

    outcomes = []
    for sc in scenarios:
        kw = dict(overrides or {})
        if steps is not None:
            kw["steps"] = steps
        out = Path(workdir) / sc.name
        t0 = time.time()
        try:
            _runner(sc.suite)(sc.args(**kw), out)
            report = analyze(out)
        except Exception as exc:  # noqa: BLE001 - one broken scenario must not hide the others
            log.exception("scenario %s failed", sc.name)
            outcomes.append(
                Outcome(sc.name, sc.expected, sc.allowed, sc.top_cause, seconds=time.time() - t0, failure=repr(exc))
            )
            continue
        seconds = time.time() - t0
        if not report.runs:
            why = "; ".join(str(e) for e in report.errors) or "no run found"
            outcomes.append(Outcome(sc.name, sc.expected, sc.allowed, sc.top_cause, seconds=seconds, failure=why))
            continue
        # one folder = one run; should discovery split it, judge the part with the most points
        main = max(report.runs, key=lambda r: len(r.run.frame))
        outcomes.append(outcome_from_report(sc, main, min_severity=min_severity, seconds=seconds))
    return outcomes
