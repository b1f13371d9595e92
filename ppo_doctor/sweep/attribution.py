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

import numpy as np

from .fisher import fisher_many

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
            low, high = _apart(self.low, self.high)
            return f"{self.parameter} <= {low}", f">= {high}"
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
    ``together``.  The cost is near-linear in the items: each parameter's candidate splits are
    built once per set of judged items (:class:`_Column`) and counted with prefix sums, and
    their p-values are computed together (:func:`.fisher.fisher_many`).
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
    columns_for: dict[tuple[str, ...], dict[str, _Column]] = {}
    for outcome_order, (outcome, has) in enumerate(outcomes.items()):
        items = tuple(sorted(has))
        flags = np.fromiter((bool(has[i]) for i in items), dtype=bool, count=len(items))
        positive = int(flags.sum())
        if positive == 0 or positive == len(items):
            continue
        if len(items) < MIN_ITEMS or min(positive, len(items) - positive) < MIN_PER_CLASS:
            cautions.append(
                f"too few {noun} to tell what makes {outcome}: {positive} of {len(items)} judged {noun} "
                f"(at least {MIN_ITEMS}, with {MIN_PER_CLASS} on each side, are needed)"
            )
            continue
        if items not in columns_for:  # the outcomes of one sweep share their judged items
            columns_for[items] = {name: _Column.build(name, params, items) for name in names}
        columns = columns_for[items]
        tests = sum(c.count for c in columns.values())
        best: list[Split] = []
        for name, column in columns.items():
            top = column.best(outcome, flags)
            if top is not None:
                top = _likelier_first(top)
                top.order, top.outcome_order, top.same = rank_of[name], outcome_order, same.get(name, [])
                best.append(top)
        for s in best:
            s.tests = tests
            key = _fingerprint(items, s.side_a, s.side_b)
            s.together = sorted(
                other for other, column in columns.items() if other != s.parameter and column.has_groups(key, s.side_a, s.side_b)
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
    """A real number to split at a threshold: any int (compared exactly, however large) or a
    finite float; infinities and booleans are categories."""
    if isinstance(v, bool):
        return False
    return isinstance(v, int) or (isinstance(v, float) and math.isfinite(v))


@dataclass
class _Column:
    """One parameter's candidate splits of one tuple of judged items.

    ``members`` lists the positions (in ``items``) of the items that have the parameter; a split
    is ``members[:cut]`` against ``members[cut:]`` for a numeric parameter (``members`` sorted by
    value) and one value's group against the rest for a category (``members`` grouped by value).
    Each candidate also has a fingerprint of its two sides (the XOR of random 64-bit labels of
    their items), so that finding another parameter's candidate with the same two groups is a
    set lookup, checked item by item on a match.
    """

    name: str
    kind: str
    items: tuple[str, ...]
    members: np.ndarray  # int positions into items
    starts: np.ndarray  # candidate c's side A is members[starts[c]:stops[c]]
    stops: np.ndarray
    low: list[Any]
    high: list[Any]
    fingerprints: dict[tuple[int, int], list[int]]

    @property
    def count(self) -> int:
        return len(self.low)

    @classmethod
    def build(cls, name: str, params: Mapping[str, Mapping[str, Any]], items: tuple[str, ...]) -> _Column:
        known: list[tuple[int, Any]] = [
            (pos, v) for pos, i in enumerate(items) if _known(v := params.get(i, {}).get(name))
        ]
        low: list[Any] = []
        high: list[Any] = []
        starts: list[int] = []
        stops: list[int] = []
        if len(known) >= 2 and all(_is_number(v) for _, v in known):
            kind = "numeric"
            known.sort(key=lambda pv: pv[1])  # stable: equal values keep the items' order
            members = [pos for pos, _ in known]
            # each run of equal values is spelled as its first item's config spelled it
            firsts = [k for k in range(len(known)) if k == 0 or known[k][1] != known[k - 1][1]]
            for a, b in zip(firsts, firsts[1:]):
                low.append(known[a][1])
                high.append(known[b][1])
                starts.append(0)
                stops.append(b)
        else:
            kind = "category"
            groups: dict[str, list[tuple[int, Any]]] = {}
            for pos, v in known:
                groups.setdefault(_fmt(v), []).append((pos, v))
            ordered = [groups[text] for text in sorted(groups)]
            members = [pos for group in ordered for pos, _ in group]
            bounds = np.cumsum([0] + [len(g) for g in ordered]).tolist()
            if len(ordered) == 2:
                # one value against the other is one split (attribute() puts the likelier side first)
                low, high, starts, stops = [ordered[0][0][1]], [ordered[1][0][1]], [0], [bounds[1]]
            elif len(ordered) > 2:
                for g, group in enumerate(ordered):
                    low.append(group[0][1])
                    high.append(None)
                    starts.append(bounds[g])
                    stops.append(bounds[g + 1])
        column = cls(name, kind, items, np.array(members, dtype=np.int64), np.array(starts, dtype=np.int64),
                     np.array(stops, dtype=np.int64), low, high, {})
        column.fingerprints = column._fingerprints()
        return column

    def _fingerprints(self) -> dict[tuple[int, int], list[int]]:
        labels = _labels(len(self.items))[self.members]
        prefix = np.concatenate([[np.uint64(0)], np.bitwise_xor.accumulate(labels)]) if len(labels) else np.zeros(1, np.uint64)
        whole = prefix[-1]
        side_a = prefix[self.stops] ^ prefix[self.starts]
        out: dict[tuple[int, int], list[int]] = {}
        for c, (a, b) in enumerate(zip(side_a.tolist(), (side_a ^ whole).tolist())):
            out.setdefault((min(a, b), max(a, b)), []).append(c)
        return out

    def sides(self, c: int) -> tuple[frozenset[str], frozenset[str]]:
        """Candidate ``c``'s two sides as sets of items."""
        a = self.members[self.starts[c]:self.stops[c]]
        rest = np.concatenate([self.members[: self.starts[c]], self.members[self.stops[c]:]])
        return frozenset(self.items[p] for p in a.tolist()), frozenset(self.items[p] for p in rest.tolist())

    def best(self, outcome: str, flags: np.ndarray) -> Split | None:
        """The best candidate for ``outcome`` (``flags``: has it, per item), by :func:`_rank_key`
        (the first candidate wins a tie)."""
        if not self.count:
            return None
        prefix = np.concatenate([[0], np.cumsum(flags[self.members])])
        hits_a = prefix[self.stops] - prefix[self.starts]
        sizes_a = self.stops - self.starts
        hits_b, sizes_b = prefix[-1] - hits_a, len(self.members) - sizes_a
        p = np.minimum(1.0, fisher_many(hits_a, sizes_a, hits_b, sizes_b))
        separation = np.abs(hits_a / sizes_a - hits_b / sizes_b)
        key = np.round(np.log10(np.maximum(p, 1e-300)), 9)
        # np.lexsort sorts by its last key first; a stable sort keeps the first candidate of a tie
        c = int(np.lexsort((np.arange(self.count), -(sizes_a + sizes_b), -separation, key))[0])
        side_a, side_b = self.sides(c)
        return Split(self.name, outcome, self.kind, self.low[c], self.high[c], (int(hits_a[c]), int(hits_b[c])),
                     (int(sizes_a[c]), int(sizes_b[c])), float(p[c]), 0, side_a=side_a, side_b=side_b)

    def has_groups(self, key: tuple[int, int], side_a: frozenset[str], side_b: frozenset[str]) -> bool:
        """Whether one of this parameter's candidates puts exactly these items on its two sides
        (``key``: their :func:`_fingerprint`)."""
        groups = {side_a, side_b}
        return any(set(self.sides(c)) == groups for c in self.fingerprints.get(key, []))


def _fingerprint(items: tuple[str, ...], side_a: frozenset[str], side_b: frozenset[str]) -> tuple[int, int]:
    """The two sides' label XORs, smaller first, as :meth:`_Column._fingerprints` keys them."""
    labels = _labels(len(items))
    pos = [k for k, i in enumerate(items) if i in side_a], [k for k, i in enumerate(items) if i in side_b]
    xa, xb = (int(np.bitwise_xor.reduce(labels[p])) if p else 0 for p in pos)
    return min(xa, xb), max(xa, xb)


_LABELS = np.zeros(0, dtype=np.uint64)


def _labels(n: int) -> np.ndarray:
    """Random 64-bit labels of item positions 0..n-1, the same on every call (a fixed seed)."""
    global _LABELS
    if len(_LABELS) < n:
        _LABELS = np.random.default_rng(0).integers(0, 2**63, size=max(n, 2 * len(_LABELS)), dtype=np.uint64, endpoint=False)
    return _LABELS[:n]


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


# ints beyond this are written as 1.23457e+400 (str() of an int has a digit limit, float() a range)
_BIG_INT = 10**15
SIGNIFICANT = 6  # digits a value is shown with, as %g shows it
MAX_SIGNIFICANT = 4000  # digits a split's two bounds may need to read apart (an int's: a float needs 17)


def _fmt(v: Any, digits: int = SIGNIFICANT) -> str:
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= _BIG_INT:
        return _big_int_text(v, digits)
    return str(v)


def _apart(low: Any, high: Any) -> tuple[str, str]:
    """The two bounds of a numeric split as text with as many digits as they need to differ
    (``<= 1e-05`` / ``>= 3e-05``, but ``<= 1.0000001`` / ``>= 1.0000002``)."""
    a, b = _fmt(low), _fmt(high)
    digits = SIGNIFICANT
    while a == b and digits < MAX_SIGNIFICANT:
        digits = min(MAX_SIGNIFICANT, digits * 2 if digits >= 17 else digits + 1)
        a, b = _fmt(low, digits), _fmt(high, digits)
    return a, b


def _exponent(v: int) -> int:
    """``floor(log10(v))`` of a positive int of any size, exactly."""
    e = int(math.log10(v))
    if 10**e > v:
        return e - 1
    return e + 1 if 10 ** (e + 1) <= v else e


def _big_int_text(v: int, digits: int = SIGNIFICANT) -> str:
    """``1.23457e+400`` for an int of any size (``digits`` significant digits, rounded half up, as
    %g shows floats: ``str()`` of such an int has a digit limit and ``float()`` a range)."""
    exponent = _exponent(abs(v))
    if exponent < digits:
        rounded = abs(v) * 10 ** (digits - 1 - exponent)
    else:
        rounded = (abs(v) // 10 ** (exponent - digits) + 5) // 10  # digits + 1 leading digits, rounded
    if rounded >= 10**digits:  # 9.999995e+20 rounds up to 1e+21
        rounded //= 10
        exponent += 1
    mantissa = str(rounded).rstrip("0") or "0"
    text = mantissa[0] + ("." + mantissa[1:] if len(mantissa) > 1 else "")
    return f"{'-' if v < 0 else ''}{text}e+{exponent:02d}"


def _fmt_value(v: Any) -> Any:
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v if abs(v) < 2**63 else _big_int_text(v)
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    return str(v)
