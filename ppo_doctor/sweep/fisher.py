"""Fisher's exact test on a 2x2 table, two-sided, in exact integer arithmetic.

The same p-value as ``scipy.stats.fisher_exact(table, alternative="two-sided")`` (checked in
tests/test_sweep_fisher.py): with the margins fixed, the probability of a table with ``x`` in
its top-left cell is hypergeometric, ``C(c1, x) C(n - c1, r1 - x) / C(n, r1)``; the p-value
sums it over every table no more probable than the observed one (within scipy's relative
tolerance of 1e-7, so that ties computed with rounding are counted).  Written here so that
sweeps do not need scipy (143 MB) for one test (issue 18).
"""

from __future__ import annotations

from math import comb

# scipy.stats._stats_py.fisher_exact: tables within this relative distance of the observed
# probability count as "as extreme"
RELATIVE_TOLERANCE = 1e-7


def fisher_exact_two_sided(table: list[list[int]]) -> float:
    """Two-sided p-value of the 2x2 contingency ``table`` ``[[a, b], [c, d]]``."""
    (a, b), (c, d) = table
    if min(a, b, c, d) < 0:
        raise ValueError(f"counts must be non-negative, got {table}")
    row1, col1, n = a + b, a + c, a + b + c + d
    if row1 in (0, n) or col1 in (0, n):
        return 1.0  # a margin is empty: every arrangement is the observed one
    low, high = max(0, col1 - (n - row1)), min(row1, col1)
    weights = _weights(n, row1, col1, low, high)
    observed = weights[a - low]
    # integer comparison of w <= observed * (1 + 1e-7): no float rounding on huge counts
    limit_num, limit_den = observed * (10**7 + 1), 10**7
    extreme = sum(w for w in weights if w * limit_den <= limit_num)
    return min(1.0, extreme / comb(n, row1))


def _weights(n: int, row1: int, col1: int, low: int, high: int) -> list[int]:
    """``C(col1, x) C(n - col1, row1 - x)`` for x = low..high, each from the one before by the
    hypergeometric ratio: the same integers as two ``comb`` calls per table, at one small
    multiplication and one exact division each (``comb`` per table made a 4,000-run sweep's
    attribution take 114 s, issue 26)."""
    w = comb(col1, low) * comb(n - col1, row1 - low)
    out = [w]
    for x in range(low, high):
        # w(x + 1) * (x + 1) * (n - col1 - row1 + x + 1) == w(x) * (col1 - x) * (row1 - x): exact
        w = w * (col1 - x) * (row1 - x) // ((x + 1) * (n - col1 - row1 + x + 1))
        out.append(w)
    return out

