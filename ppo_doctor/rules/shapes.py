"""Declarative bases for the common shapes of a rule, so that such a rule is its docstring, its
metadata and the lines that are its own.

* :class:`SustainedRule`: a metric beyond a level for a sustained stretch (60 % of a window of
  5 % of the run: :func:`.incidents.sustain_window`), the level fixed or taken from the series'
  own early window ("fell below 40 % of its early level").  The rule names the parameter of
  its level (``level_param``) and of its error level (``error_param``), or says how it gets
  them (``level``, ``points``: default its first ``requires`` entry); by default it reports
  one finding with the stretches' median and worst value.  A rule with more to say overrides
  ``report`` and builds its finding with :meth:`SustainedRule.incident`, which fills in the
  metric, the onset, the worst point and the end of the stretches.
* :class:`OscillationRule`: a series that swings back and forth without converging
  (:func:`ppo_doctor.detect.oscillation`); the rule names its points and its message.

A rule of another shape that finds spans of its own (spikes, points over a limit) holds them
in a :class:`Stretch` and builds its finding with :func:`stretch_incident`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, Generic, Iterable, Iterator, Protocol, TypeVar

import numpy as np

from ..detect import Oscillation, Span, median, oscillation, sustained_spans
from ..results import Finding
from ..run import Run
from .base import Rule, RuleContext
from .incidents import incident, sustain_window
from .messages import fmt_num


class Points(Protocol):
    """A judged series: the metric it comes from, its steps and finite values (an
    :class:`.inputs.Input`, a :class:`ppo_doctor.view.KLView`, an :class:`ppo_doctor.view.EntropyView`)."""

    @property
    def metric(self) -> str: ...

    @property
    def steps(self) -> np.ndarray: ...

    @property
    def values(self) -> np.ndarray: ...


P = TypeVar("P", bound=Points)


@dataclass
class Stretch(Generic[P]):
    """The spans of ``points`` beyond ``level`` (a :class:`SustainedRule`'s sustained
    stretches, or any rule's spans: spikes, points over a limit), in step order;
    ``direction`` "up" (above the level) or "down" (below it)."""

    points: P
    spans: list[Span]
    direction: str
    # the level the spans are beyond; NaN for spans measured against a local level (spikes)
    level: float = math.nan

    @property
    def first(self) -> Span:
        return self.spans[0]

    @property
    def last(self) -> Span:
        return self.spans[-1]

    @cached_property
    def worst(self) -> Span:
        """The stretch with the most extreme value (highest for "up", lowest for "down")."""
        if self.direction == "up":
            return max(self.spans, key=lambda sp: sp.peak_value)
        return min(self.spans, key=lambda sp: sp.peak_value)

    @cached_property
    def covered(self) -> np.ndarray:
        """The values inside the stretches."""
        v = self.points.values
        return np.concatenate([v[sp.start_idx : sp.end_idx + 1] for sp in self.spans])

    @cached_property
    def median(self) -> float:
        """Median of the values inside the stretches."""
        return float(median(self.covered))

    @property
    def summary(self) -> dict[str, float]:
        """``median`` of the stretches and their worst value (``peak`` up, ``min`` down)."""
        return {"median": self.median, "peak" if self.direction == "up" else "min": self.worst.peak_value}


def stretch_incident(rule: Rule, ctx: RuleContext, st: Stretch[Any], *, observed: dict[str, float] | None = None, **kw: Any) -> Finding:
    """The finding for the spans of ``st`` (:func:`.incidents.incident`): onset before the first
    span, threshold step at its start, peak at the worst span's worst point, end at the last
    span's end (each overridable), message filled from ``observed`` (default
    :attr:`Stretch.summary`) and ``fmt``."""
    kw.setdefault("peak_step", st.worst.peak_step)
    kw.setdefault("end_step", st.last.end_step)
    return incident(
        rule,
        ctx,
        metric=st.points.metric,
        steps=st.points.steps,
        values=st.points.values,
        span=st.first,
        direction=st.direction,
        observed=st.summary if observed is None else observed,
        **kw,
    )


class SustainedRule(Rule, Generic[P]):
    """Base of "a metric beyond a level for a sustained stretch".

    ``evaluate`` takes :meth:`points`, skips a series shorter than the ``min_points``
    parameter, asks :meth:`level` for the level (None: nothing to judge) and hands the
    sustained stretches beyond it, when there are any, to :meth:`report`.
    """

    direction: ClassVar[str] = "up"
    # the parameters holding the level and the level whose crossing by the stretches' median
    # makes the finding an error (None: the rule's own severity throughout)
    level_param: ClassVar[str] = ""
    error_param: ClassVar[str | None] = None

    def points(self, ctx: RuleContext) -> P | None:
        """The series to judge: the first ``requires`` entry, resolved (``ctx.req[0]``)."""
        return ctx.req[0]  # type: ignore[return-value]

    def report(self, ctx: RuleContext, st: Stretch[P]) -> Iterable[Finding]:
        """One finding with the stretches' :attr:`Stretch.summary` (override to say more)."""
        yield self.incident(ctx, st)

    def graded(self, ctx: RuleContext, st: Stretch[P]) -> str:
        """"error" when the stretches' median reaches the ``error_param`` level, else the
        rule's severity."""
        if self.error_param is None:
            return self.severity
        limit = ctx.params[self.error_param]
        return "error" if (st.median >= limit if self.direction == "up" else st.median <= limit) else self.severity

    def incident(self, ctx: RuleContext, st: Stretch[P], **kw: Any) -> Finding:
        """:func:`stretch_incident` with the severity :meth:`graded` unless given."""
        kw.setdefault("severity", self.graded(ctx, st))
        return stretch_incident(self, ctx, st, **kw)

    def level(self, ctx: RuleContext, x: P) -> float | None:
        """The level the points must stay beyond (None: nothing to judge): by default the
        ``level_param`` parameter."""
        return float(ctx.params[self.level_param])

    def beyond(self, ctx: RuleContext, x: P, level: float) -> np.ndarray:
        """The points beyond ``level`` (above it for "up", below it for "down")."""
        return x.values > level if self.direction == "up" else x.values < level

    def evaluate(self, ctx: RuleContext) -> Iterator[Finding]:
        x = self.points(ctx)
        if x is None or len(x.values) < ctx.params["min_points"]:
            return
        level = self.level(ctx, x)
        if level is None:
            return
        k, w = sustain_window(ctx.planned_points(len(x.values)))
        peak = "max" if self.direction == "up" else "min"
        spans = sustained_spans(x.steps, self.beyond(ctx, x, level), k, w, values=x.values, peak=peak)
        if spans:
            yield from self.report(ctx, Stretch(x, spans, self.direction, level))


class OscillationRule(Rule, Generic[P]):
    """Base of "a series swings back and forth without converging" (PD501 reward, PD502 KL).

    The detector measures swings; the series oscillates here when it has at least
    ``min_swings`` alternations (by default 8, i.e. 4 full cycles), the swings stand well above
    smoothed noise (``min_structure``), they are a visible share of the series' range
    (``min_rel_amplitude``), and the last third still swings at least ``min_decay`` times as
    much as the first third.  The message is filled from ``swings``, ``amplitude``,
    ``period`` and ``decay`` and the rule's ``fmt(ctx, points)``.
    """

    params: ClassVar[dict[str, Any]] = {"min_swings": 8, "min_structure": 3.0, "min_rel_amplitude": 0.2, "min_decay": 0.5, "min_points": 40}

    def points(self, ctx: RuleContext) -> P | None:
        """The series to judge: the first ``requires`` entry, resolved (``ctx.req[0]``)."""
        return ctx.req[0]  # type: ignore[return-value]

    def fmt(self, ctx: RuleContext, x: P) -> dict[str, Any]:
        """Message fields of the rule's own (none by default)."""
        return {}

    def judge(self, ctx: RuleContext, x: P) -> Oscillation | None:
        """The oscillation measurement when it passes every threshold in the params, else None."""
        p = ctx.params
        if len(x.values) < p["min_points"]:
            return None
        o = oscillation(x.steps, x.values)
        if o.swings < p["min_swings"] or not o.structure >= p["min_structure"]:
            return None
        if not o.rel_amplitude >= p["min_rel_amplitude"] or not o.decay >= p["min_decay"]:
            return None
        return o

    def evaluate(self, ctx: RuleContext) -> Iterator[Finding]:
        x = self.points(ctx)
        o = None if x is None else self.judge(ctx, x)
        if x is None or o is None:
            return
        yield self.finding(
            ctx,
            metric=x.metric,
            observed={"swings": o.swings, "amplitude": o.amplitude, "period": o.period_steps, "decay": o.decay},
            start_step=o.start_step,
            threshold_step=o.start_step,
            peak_step=_highest_between(x.steps, x.values, o),
            end_step=o.end_step,
            evidence=[f"swing amplitude first third {fmt_num(o.amplitude_first)}, last third {fmt_num(o.amplitude_last)}"],
            fmt=self.fmt(ctx, x),
        )


def _highest_between(steps: np.ndarray, values: np.ndarray, o: Oscillation) -> int | None:
    """Step of the highest point between the first and the last alternation."""
    if o.start_step is None:
        return None
    inside = (steps >= o.start_step) & (steps <= o.end_step)
    if not inside.any():
        return o.start_step
    return int(steps[inside][int(np.argmax(values[inside]))])


class TextSampleRule(Rule):
    """Base for rules that read ``run.texts``: not applicable when no text samples were logged;
    their findings observe the texts (``Finding.observes``), not a metric."""

    observes = "texts"

    @classmethod
    def missing(cls, run: Run) -> list[str]:
        return super().missing(run) + ([] if run.texts else ["text samples"])
