"""Declarative bases for the common shapes of a rule, so that such a rule is its docstring, its
metadata and the lines that are its own.

* :class:`SustainedRule`: a metric beyond a level for a sustained stretch (60 % of a window of
  5 % of the run: :func:`.common.sustain_window`), the level fixed or taken from the series'
  own early window ("fell below 40 % of its early level").  The rule says where its points
  come from (``points``, default its first ``requires`` entry), the level (``level``) and
  what it reports (``report``), and builds its finding with :meth:`SustainedRule.incident`,
  which fills in the metric, the onset, the worst point and the end of the stretches.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, Generic, Iterable, Iterator, Protocol, TypeVar

import numpy as np

from ..detect import Span, sustained_spans
from ..findings import Finding
from .base import Rule, RuleContext
from .common import incident, sustain_window


class Points(Protocol):
    """A judged series: the metric it comes from, its steps and finite values (an
    :class:`.inputs.Input`, a :class:`.common.KLView`, an :class:`.common.EntropyView`)."""

    metric: str
    steps: np.ndarray
    values: np.ndarray


P = TypeVar("P", bound=Points)


@dataclass
class Stretch(Generic[P]):
    """The sustained stretches of ``points`` beyond ``level``, in step order; ``direction`` "up"
    (above the level) or "down" (below it)."""

    points: P
    level: float
    spans: list[Span]
    direction: str

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
        return float(np.median(self.covered))


class SustainedRule(Rule, Generic[P]):
    """Base of "a metric beyond a level for a sustained stretch".

    ``evaluate`` takes :meth:`points`, skips a series shorter than the ``min_points``
    parameter, asks :meth:`level` for the level (None: nothing to judge) and hands the
    sustained stretches beyond it, when there are any, to :meth:`report`.
    """

    direction: ClassVar[str] = "up"
    # estimate the onset on log10 of the series (norms and losses grow multiplicatively)
    log_scale: ClassVar[bool] = False

    def points(self, ctx: RuleContext) -> P | None:
        """The series to judge: the first ``requires`` entry, resolved (``ctx.req[0]``)."""
        return ctx.req[0]  # type: ignore[return-value]

    def report(self, ctx: RuleContext, st: Stretch[P]) -> Iterable[Finding]:  # pragma: no cover - abstract
        raise NotImplementedError

    def incident(self, ctx: RuleContext, st: Stretch[P], *, observed: dict[str, float], **kw: Any) -> Finding:
        """The finding for ``st``: onset before the first stretch, threshold step at its start,
        peak at the worst stretch's worst point, end at the last stretch's end (each
        overridable), message filled from ``observed`` and ``fmt``."""
        kw.setdefault("peak_step", st.worst.peak_step)
        kw.setdefault("end_step", st.last.end_step)
        kw.setdefault("log_scale", self.log_scale)
        return incident(
            self,
            ctx,
            metric=st.points.metric,
            steps=st.points.steps,
            values=st.points.values,
            span=st.first,
            direction=self.direction,
            observed=observed,
            **kw,
        )

    def level(self, ctx: RuleContext, x: P) -> float | None:  # pragma: no cover - abstract
        raise NotImplementedError

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
        k, w = sustain_window(len(x.values))
        peak = "max" if self.direction == "up" else "min"
        spans = sustained_spans(x.steps, self.beyond(ctx, x, level), k, w, values=x.values, peak=peak)
        if spans:
            yield from self.report(ctx, Stretch(x, level, spans, self.direction))
