"""Which parameter values separate the items that have an outcome from those that do not.

Generic statistics over a table of items (runs) x parameters, with boolean outcomes; nothing here
knows what a parameter or an outcome means.

For every parameter that varies and every outcome that some (not all) items have, each candidate
split of the items is scored:

* a **numeric** parameter (every known value a real number) is split at each gap between two
  consecutive distinct values: ``lr <= 1e-05`` against ``>= 3e-05``;
* any other parameter (text, booleans, mixed) is split one value against the rest:
  ``optimizer = sgd`` against ``other`` (or against ``= adam`` when there are two values, the
  value where the outcome is more frequent named first).

A split is a 2x2 table (side x outcome) and its score is the two-sided p-value of Fisher's exact
test on it (Fisher 1922; :mod:`ppo_doctor.sweep.fisher`, scipy's ``fisher_exact`` without scipy): the chance of a table at least this uneven
if the outcome had nothing to do with the side.  It falls both as the split gets cleaner and as
more items support it, which is the ranking asked for; ties are broken by the difference of the two
sides' outcome rates, then by the number of items.  Items without the parameter are left out of
its splits.  The best split of each parameter is kept, per outcome.

Cautions, in plain words, when the table cannot support the claim:

* too few items, or too few on either side of the outcome, to tell anything (``MIN_ITEMS``,
  ``MIN_PER_CLASS``);
* the best split is no better than the best of that many candidate splits would be by chance: its
  p-value times the number of splits tried (Bonferroni) is above ``ALPHA``;
* parameters that vary together: another parameter splits the same items into the same two groups,
  so the items cannot say which of them matters (confounded).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from .fisher import fisher_exact_two_sided

MIN_ITEMS = 6  # judged items below which no split is claimed
MIN_PER_CLASS = 2  # items with and without the outcome needed
ALPHA = 0.05


@dataclass
class Split:
    """The best split of one parameter for one outcome, with its counts."""

    parameter: str
    outcome: str
    kind: str  # "numeric" | "category"
    low: Any  # numeric: the largest value on the low side; category: the value
    high: Any  # numeric: the smallest value on the high side; category: the other value, or None (several)
    hits: tuple[int, int]  # items with the outcome on side A (low / the value), side B
    sizes: tuple[int, int]  # items on side A, side B
    p_value: float
    tests: int  # candidate splits tried for this outcome (all parameters)
    together: list[str] = field(default_factory=list)  # parameters giving the same two groups
    same: list[str] = field(default_factory=list)  # parameters with this one's value on every item
    side_a: frozenset[str] = field(default_factory=frozenset)
    side_b: frozenset[str] = field(default_factory=frozenset)
    order: int = 0  # the parameter's place in attribute()'s order (ties)
    outcome_order: int = 0  # the outcome's place in attribute()'s outcomes (ties)

    @property
    def separation(self) -> float:
        """Difference of the two sides' outcome rates, 0 (none) to 1 (clean)."""
        return abs(self.hits[0] / self.sizes[0] - self.hits[1] / self.sizes[1])

    @property
    def adjusted_p(self) -> float:
        return min(1.0, self.p_value * self.tests)

    @property
    def support(self) -> int:
        return self.sizes[0] + self.sizes[1]

    def sides(self) -> tuple[str, str]:
        """The two sides as text: ``kl_coef <= 0.1`` and ``>= 0.2`` (or ``= sgd`` and ``other``)."""
        if self.kind == "numeric":
            return f"{self.parameter} <= {_fmt(self.low)}", f">= {_fmt(self.high)}"
        return f"{self.parameter} = {_fmt(self.low)}", "other" if self.high is None else f"= {_fmt(self.high)}"

    def label(self, noun: str = "runs") -> str:
        """``kl_coef <= 0.1: 6/6 runs unhealthy; >= 0.2: 0/6``."""
        a, b = self.sides()
        return f"{a}: {self.hits[0]}/{self.sizes[0]} {noun} {self.outcome}; {b}: {self.hits[1]}/{self.sizes[1]}"

    def to_dict(self) -> dict[str, Any]:
        a, b = self.sides()
        return {
            "parameter": self.parameter,
            "outcome": self.outcome,
            "kind": self.kind,
            "split": {"a": a, "b": b},
            "low": _fmt_value(self.low),
            "high": _fmt_value(self.high),
            "hits": list(self.hits),
            "sizes": list(self.sizes),
            "separation": round(self.separation, 6),
            "p_value": self.p_value,
            "adjusted_p": self.adjusted_p,
            "tests": self.tests,
            "together": list(self.together),
            "same_values": list(self.same),
            "label": self.label(),
        }


@dataclass
class Attribution:
    """Ranked splits (best first) and the cautions that go with them."""

    splits: list[Split]
    cautions: list[str]
    items: int  # items with at least one judged outcome

    def to_dict(self) -> dict[str, Any]:
        return {"items": self.items, "splits": [s.to_dict() for s in self.splits], "cautions": list(self.cautions)}


def attribute(
    params: Mapping[str, Mapping[str, Any]],
    outcomes: Mapping[str, Mapping[str, bool]],
    *,
    noun: str = "runs",
    order: Sequence[str] = (),
) -> Attribution:
    """Rank the parameter splits that separate the items having each outcome from the others.

    Args:
        params: item -> {parameter: value} (missing parameters are simply absent).
        outcomes: outcome name -> {item: has it}; items absent from one are not judged for it.
        noun: what the items are called in the cautions.
        order: parameters named first win ties (and name a group that varies together); the
            others follow by name.

    Parameters that vary together are one entry: the first of them, naming the others in
    ``together``.
    """
    present = {k for p in params.values() for k, v in p.items() if _known(v)}
    names = [n for n in dict.fromkeys(order) if n in present] + sorted(present - set(order))
    names, same = _merge_identical(names, params)
    rank_of = {n: k for k, n in enumerate(names)}
    judged = sorted({i for o in outcomes.values() for i in o})
    cautions: list[str] = []
    splits: list[Split] = []
    if not names:
        cautions.append(f"no parameter found in the {noun}' configs: nothing to attribute the outcomes to")
    confounded: dict[tuple[str, ...], list[str]] = {}
    for outcome_order, (outcome, has) in enumerate(outcomes.items()):
        items = sorted(has)
        positive = sum(1 for i in items if has[i])
        if positive == 0 or positive == len(items):
            continue
        if len(items) < MIN_ITEMS or min(positive, len(items) - positive) < MIN_PER_CLASS:
            cautions.append(
                f"too few {noun} to tell what makes {outcome}: {positive} of {len(items)} judged {noun} "
                f"(at least {MIN_ITEMS}, with {MIN_PER_CLASS} on each side, are needed)"
            )
            continue
        candidates = {name: _candidates(name, params, items) for name in names}
        tests = sum(len(c) for c in candidates.values())
        best: list[Split] = []
        for name, cands in candidates.items():
            scored = [_score(name, outcome, kind, low, high, side_a, side_b, has) for kind, low, high, side_a, side_b in cands]
            if scored:
                top = _likelier_first(min(scored, key=_rank_key))
                top.order, top.outcome_order, top.same = rank_of[name], outcome_order, same.get(name, [])
                best.append(top)
        for s in best:
            s.tests = tests
            s.together = sorted(
                other for other, cands in candidates.items() if other != s.parameter and _same_groups(s, cands)
            )
        best.sort(key=_rank_key)
        kept: list[Split] = []
        for s in best:
            if not any(s.parameter in k.together for k in kept):
                kept.append(s)
        best = kept
        if best and best[0].adjusted_p > ALPHA:
            top = best[0]
            cautions.append(
                f"no split explains {outcome} better than chance: the best, {top.label(noun)}, has p = {top.p_value:.2g}, "
                f"and {tests} candidate splits were tried (p x {tests} = {top.adjusted_p:.2g} > {ALPHA})"
            )
        if best and best[0].together and best[0].adjusted_p <= ALPHA:
            confounded.setdefault(tuple([best[0].parameter] + best[0].together), []).append(outcome)
        splits.extend(best)
    for group, which in confounded.items():
        cautions.append(
            f"{' and '.join(group)} vary together in this sweep (the same {noun} on each side of the split): "
            f"the {noun} cannot tell which of them makes them {', '.join(which)}"
        )
    splits.sort(key=_rank_key)
    return Attribution(splits=splits, cautions=cautions, items=len(judged))


def _known(v: Any) -> bool:
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _candidates(name: str, params: Mapping[str, Mapping[str, Any]], items: Sequence[str]) -> list[tuple[str, Any, Any, frozenset[str], frozenset[str]]]:
    """Every split of ``items`` by ``name``: (kind, low, high, side A, side B)."""
    values: dict[str, Any] = {}
    for i in items:
        v = params.get(i, {}).get(name)
        if _known(v):
            values[i] = v
    if len(values) < 2:
        return []
    out = []
    if all(_is_number(v) for v in values.values()):
        distinct = sorted(set(float(v) for v in values.values()))
        for lo, hi in zip(distinct, distinct[1:]):
            a = frozenset(i for i, v in values.items() if float(v) <= lo)
            out.append(("numeric", _orig(values, lo), _orig(values, hi), a, frozenset(values) - a))
        return out
    by_value: dict[str, list[str]] = {}
    for i, v in values.items():
        by_value.setdefault(_fmt(v), []).append(i)
    if len(by_value) < 2:
        return []
    if len(by_value) == 2:
        # one value against the other is one split (attribute() puts the likelier side first)
        (_, first), (_, second) = sorted(by_value.items())
        return [("category", values[first[0]], values[second[0]], frozenset(first), frozenset(second))]
    for text, members in sorted(by_value.items()):
        a = frozenset(members)
        out.append(("category", values[members[0]], None, a, frozenset(values) - a))
    return out


def _orig(values: Mapping[str, Any], x: float) -> Any:
    """The value as the config spelled it (an int stays an int in the label)."""
    return next(v for v in values.values() if float(v) == x)


def _score(name: str, outcome: str, kind: str, low: Any, high: Any, a: frozenset[str], b: frozenset[str], has: Mapping[str, bool]) -> Split:
    ha = sum(1 for i in a if has[i])
    hb = sum(1 for i in b if has[i])
    p = fisher_exact_two_sided([[ha, len(a) - ha], [hb, len(b) - hb]])
    return Split(name, outcome, kind, low, high, (ha, hb), (len(a), len(b)), float(min(1.0, p)), 0, side_a=a, side_b=b)


def _rank_key(s: Split) -> tuple[float, float, int, int, int, str]:
    # p-values equal to within float noise tie; then cleaner, then better supported, then by order
    return (round(math.log10(max(s.p_value, 1e-300)), 9), -s.separation, -s.support, s.outcome_order, s.order, s.parameter)


def _merge_identical(names: list[str], params: Mapping[str, Mapping[str, Any]]) -> tuple[list[str], dict[str, list[str]]]:
    """Parameters holding the same value on every item (one setting under two names, e.g. a
    config key and a sweep table's column) are one parameter: the first in ``names`` keeps it."""
    def column(n: str) -> tuple[tuple[str, str], ...]:
        return tuple(sorted((i, _fmt(p[n])) for i, p in params.items() if n in p and _known(p[n])))

    kept: list[str] = []
    same: dict[str, list[str]] = {}
    seen: dict[tuple[tuple[str, str], ...], str] = {}
    for n in names:
        col = column(n)
        if col in seen:
            same.setdefault(seen[col], []).append(n)
        else:
            seen[col] = n
            kept.append(n)
    return kept, same


def _likelier_first(s: Split) -> Split:
    """A two-valued category split reads from the side where the outcome is more frequent."""
    if s.kind == "category" and s.high is not None and s.hits[0] * s.sizes[1] < s.hits[1] * s.sizes[0]:
        s.low, s.high = s.high, s.low
        s.hits, s.sizes = s.hits[::-1], s.sizes[::-1]
        s.side_a, s.side_b = s.side_b, s.side_a
    return s


def _same_groups(s: Split, cands: list[tuple[str, Any, Any, frozenset[str], frozenset[str]]]) -> bool:
    """Whether one of another parameter's splits puts the same items on the two sides as ``s``."""
    groups = {s.side_a, s.side_b}
    return any({a, b} == groups for _, _, _, a, b in cands)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _fmt_value(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    return str(v)
