"""Rule base class: a rule is a small declarative class whose docstring is its documentation.

A rule module defines one subclass of :class:`Rule` with:

* ``code`` (``PD`` + 3 digits, the hundreds digit groups the symptom family) and ``name``
  (kebab-case); both work wherever a code is accepted (``--select``, ``explain``);
* ``symptom`` (from :data:`ppo_doctor.results.SYMPTOMS`) and default ``severity``;
* ``requires``: canonical metrics, each entry a metric name or a tuple meaning "any of";
* ``requires_eval``: the same for the run's evaluation series (``Run.eval_frame``: held-out
  rows kept apart by every reader), for rules that compare training with evaluation;
* ``params``: defaults, overridable from ``[tool.ppo-doctor.rules.<name>]``;
* ``causes``: cause id -> support weight given to diagnosis when the rule fires;
* ``evidence``: what kind of evidence the rule judges (docs/architecture.md#contracts):
  ``"event"`` (a NaN, an impossible negative KL, a KL far past its band, a spike, an explosion),
  judged at once, or ``"trend"`` (an absence of progress or a slow drift: no improvement,
  vanishing gradients, a critic that learns nothing, a frozen entropy), which on a live run is at
  most an info note until the run has had a fair chance (:meth:`ppo_doctor.standing.Standing.fair`:
  the ``fair_share`` parameter of its plan behind it, past warm-up; a trend rule gets that
  parameter, so ``[rules.<name>] fair_share`` overrides it; by default the whole plan); an offline
  log is the run as it ended and is judged where it stands;
* ``basis``: what a warning of the rule rests on (the verdict contract, "outcome before sign",
  docs/architecture.md#contracts): ``"outcome"`` when its condition is itself something the
  run's author cares about getting worse (the reward stalls, falls or collapses, text
  degenerates, the critic fails to track returns, numbers break); ``"runaway"`` when it is a
  quantity growing without bound; ``"sign"`` when it is a diagnostic past a line (a KL over a
  band, a clip fraction, a pre-clip gradient spike, a falling entropy): the engine then keeps a
  warning or an error only when the rule marked the finding a runaway (``basis="runaway"``) or
  the reward got worse or stopped improving after its onset (:func:`.outcome.judge_sign`), and
  makes it an info note saying what to ``watch`` otherwise; ``"log"`` for log-quality rules.
  A rule (a plugin's too) that does not say is a sign;
* ``message``: a ``str.format`` template filled from params, the finding's metric,
  ``Finding.observed``, the finding's steps and ``fmt``; ``{x:num}`` formats a number (:mod:`.messages`), and a template
  that cannot be filled raises (a broken message is a bug of the rule);
* ``good_example()`` / ``bad_example()``: small synthetic runs (``Example``); the test suite
  checks that ``bad`` fires and ``good`` does not;
* ``evaluate(ctx)``: yields findings.  ``ctx.req`` holds each ``requires`` entry resolved
  (:mod:`.inputs`: the metric present, its finite, sign-corrected points); rules call the
  generic detectors in ``ppo_doctor.detect``; they never read files.  Rules of a common shape
  subclass a base of :mod:`.shapes` instead and write only what is their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterable, Iterator, Mapping

import numpy as np
from ..results import BASES, Finding
from ..run import Run
from ..standing import FAIR_SHARE, Standing
from ..view import RunView
from .inputs import Input, resolve
from .messages import render
from .outcome import judge_sign, watched

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class Example:
    """A synthetic run for documentation and tests: metric -> values over steps 0..n-1."""

    series: dict[str, Any]
    config: dict[str, Any] = field(default_factory=dict)
    eval_series: dict[str, Any] = field(default_factory=dict)  # canonical -> values, as ``series``
    framework: str = "trl"
    metric_info: dict[str, dict[str, Any]] = field(default_factory=dict)  # canonical -> MetricInfo fields
    texts: list[tuple[int, str]] = field(default_factory=list)


@dataclass
class RuleContext:
    """What a rule evaluates: the run seen through its :class:`~ppo_doctor.view.RunView`, the
    rule's resolved parameters and its resolved ``requires``.

    ``params_of(name)`` gives the resolved parameters of another rule, for a rule that applies
    another's test (PD301 does not call a reward that collapsed "not improving", judged with
    reward-collapse's settings): the engine passes the configured ones; without an engine the
    caller's ``default`` is used.  Rules never import other rules.
    """

    run: Run
    params: dict[str, Any]
    requires: tuple[str | tuple[str, ...], ...] = ()
    view: RunView = field(default=None)  # type: ignore[assignment]  # set in __post_init__
    resolver: Callable[[str], Mapping[str, Any] | None] | None = None

    def __post_init__(self) -> None:
        if self.view is None:
            self.view = RunView(self.run)

    @cached_property
    def req(self) -> tuple[Input, ...]:
        """Each ``requires`` entry resolved once, in order (:func:`.inputs.resolve`)."""
        return resolve(self.run, self.requires, self.view.placeholders)

    def params_of(self, rule_name: str, default: Mapping[str, Any]) -> dict[str, Any]:
        """The resolved parameters of the rule called ``rule_name`` (``default`` when no engine
        resolves them, or the rule is unknown)."""
        found = self.resolver(rule_name) if self.resolver is not None else None
        return dict(default if found is None else found)

    def series(self, metric: str) -> pd.Series:
        return self.run.frame.series(metric)

    def planned_points(self, n: int) -> int:
        return self.view.planned_points(n)

    def arrays(self, metric: str) -> tuple[np.ndarray, np.ndarray]:
        return self.view.arrays(metric)

    def has(self, metric: str) -> bool:
        return self.view.has(metric)

    def finite(self, metric: str, signed: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Steps and finite values of ``metric``, sign convention undone when ``signed``."""
        return self.view.finite(metric, signed)

    def first_present(self, *metrics: str) -> str | None:
        return self.view.first_present(*metrics)


EVIDENCE = ("event", "trend")


def requirement_text(need: str | tuple[str, ...] | list[str], sep: str = "|") -> str:
    """One ``Rule.requires`` entry as every report, listing and doc spells it: the metric, or
    an "any of" group joined by ``sep`` (``a|b`` in reports, ``a | b`` in prose)."""
    return need if isinstance(need, str) else sep.join(need)


# How a ``Rule.requires_eval`` entry is named wherever a missing metric is: the evaluation
# series of that metric, not the training one the run may well have.
EVAL_REQUIREMENT = "evaluation {}"


class Rule:
    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    symptom: ClassVar[str] = ""
    severity: ClassVar[str] = "warning"
    requires: ClassVar[tuple[str | tuple[str, ...], ...]] = ()
    requires_eval: ClassVar[tuple[str | tuple[str, ...], ...]] = ()
    params: ClassVar[dict[str, Any]] = {}
    causes: ClassVar[dict[str, float]] = {}
    message: ClassVar[str] = ""
    # what the rule's findings observe: the logged scalars, or the generated text samples
    observes: ClassVar[str] = "metrics"
    # "event" or "trend" (module docstring); a trend rule's share of the plan before it may warn
    evidence: ClassVar[str] = "event"
    fair_share: ClassVar[float] = FAIR_SHARE
    # what a warning rests on (module docstring) and, for a sign, what its info note says to watch
    basis: ClassVar[str] = "sign"
    watch: ClassVar[str] = "the reward: this matters if it stalls or falls"
    # a sign made of spikes does no damage to a level the run never reached: a reward stuck from
    # the start does not confirm it, a fall does (``outcome.judge_sign``)
    spikes: ClassVar[bool] = False

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if cls.evidence not in EVIDENCE:
            raise TypeError(f"{cls.__name__}.evidence must be one of {EVIDENCE}, got {cls.evidence!r}")
        if cls.basis not in BASES:
            raise TypeError(f"{cls.__name__}.basis must be one of {BASES}, got {cls.basis!r}")
        if cls.evidence == "trend" and "fair_share" not in cls.params:
            cls.params = {**cls.params, "fair_share": cls.fair_share}

    # -- metadata -----------------------------------------------------------------------
    @classmethod
    def summary(cls) -> str:
        doc = (cls.__doc__ or "").strip()
        return doc.splitlines()[0] if doc else ""

    @classmethod
    def unmeasured(cls, run: Run, placeholders: Iterable[str]) -> list[str]:
        """The ``requires`` groups the run logs only as placeholders (:mod:`ppo_doctor.view.placeholder`),
        as "<metric> (a constant placeholder, not measured)": the rule has nothing to read."""
        skip = set(placeholders)
        out = []
        for req in cls.requires:
            present = [m for m in ((req,) if isinstance(req, str) else tuple(req)) if run.frame.has(m)]
            if present and all(m in skip for m in present):
                out.append(f"{requirement_text(tuple(present))} (a constant placeholder, not measured)")
        return out

    @classmethod
    def missing(cls, run: Run) -> list[str]:
        """The required metrics the run lacks (an any-of group is shown joined by '|'); a
        missing evaluation series is named "evaluation <metric>"."""
        out = []
        for req in cls.requires:
            group = (req,) if isinstance(req, str) else tuple(req)
            if not any(run.frame.has(m) for m in group):
                out.append(requirement_text(group))
        for req in cls.requires_eval:
            group = (req,) if isinstance(req, str) else tuple(req)
            if run.eval_frame is None or not any(run.eval_frame.has(m) for m in group):
                out.append(EVAL_REQUIREMENT.format(requirement_text(group)))
        return out

    # -- evaluation ---------------------------------------------------------------------
    def evaluate(self, ctx: RuleContext) -> Iterable[Finding]:  # pragma: no cover - abstract
        raise NotImplementedError

    def finding(self, ctx: RuleContext, *, metric: str, observed: dict[str, float], **kw: Any) -> Finding:
        """Build a Finding with this rule's metadata and its message filled in (a template that
        does not fit raises :class:`.messages.TemplateError`)."""
        steps = {k: kw[k] for k in ("start_step", "threshold_step", "peak_step", "end_step") if kw.get(k) is not None}
        msg = render(self.message, {**ctx.params, "metric": metric, **observed, **steps, **kw.pop("fmt", {})})
        return Finding(
            code=self.code,
            name=self.name,
            symptom=kw.pop("symptom", self.symptom),
            severity=kw.pop("severity", self.severity),
            metric=metric,
            message=msg,
            observed=observed,
            causes=kw.pop("causes", dict(self.causes)),
            observes=self.observes,
            basis=kw.pop("basis", self.basis),
            reads=tuple((req,) if isinstance(req, str) else tuple(req) for req in self.requires),
            **kw,
        )

    @classmethod
    def good_example(cls) -> Example | None:
        return None

    @classmethod
    def bad_example(cls) -> Example | None:
        return None

    def run(
        self,
        run: Run,
        overrides: dict[str, Any] | None = None,
        *,
        view: RunView | None = None,
        resolver: Callable[[str], Mapping[str, Any] | None] | None = None,
    ) -> Iterator[Finding]:
        """The rule's findings on ``run`` with ``overrides`` over its ``params``; ``view`` is the
        run's shared view (one per analysis), ``resolver`` gives other rules' resolved params."""
        params = {**self.params, **(overrides or {})}
        ctx = RuleContext(run=run, params=params, requires=self.requires, view=view or RunView(run), resolver=resolver)
        findings: Iterable[Finding] = self.evaluate(ctx)
        if self.basis == "sign":
            findings = [judge_sign(ctx, f, self.watch, self.spikes) for f in findings]
        if self.evidence == "trend":
            standing = run.standing
            share = float(params["fair_share"])
            if not standing.fair(share):
                yield from (watched(f, standing, share) for f in findings)
                return
        yield from findings


def as_trend(ctx: RuleContext, finding: Finding) -> Finding:
    """``finding`` judged as a trend by an event rule (PD203, PD204, PD207, PD306 judge their
    decisive findings at once and the rest as trends): :func:`watched` until the run has had the
    rule's ``fair_share`` of its plan, as it is after."""
    standing, share = ctx.run.standing, float(ctx.params["fair_share"])
    return finding if standing.fair(share) else watched(finding, standing, share)

