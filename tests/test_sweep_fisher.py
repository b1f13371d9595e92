"""Fisher's exact test without scipy (issue 18): the same two-sided p-value as scipy's."""

from __future__ import annotations

import itertools

import pytest

from ppo_doctor.sweep.fisher import fisher_exact_two_sided


def test_matches_scipy_on_every_small_table():
    stats = pytest.importorskip("scipy.stats")
    for a, b, c, d in itertools.product(range(7), repeat=4):
        table = [[a, b], [c, d]]
        expected = stats.fisher_exact(table, alternative="two-sided")[1]
        assert fisher_exact_two_sided(table) == pytest.approx(expected, rel=1e-9, abs=1e-12), table


def test_known_values_and_large_counts():
    # Fisher's tea-tasting table: p = 0.4857 (two-sided)
    assert fisher_exact_two_sided([[3, 1], [1, 3]]) == pytest.approx(34 / 70)
    assert fisher_exact_two_sided([[0, 5], [0, 7]]) == 1.0
    assert 0 < fisher_exact_two_sided([[400, 100], [100, 400]]) < 1e-80  # exact integers, no underflow to a wrong 0 sum
    with pytest.raises(ValueError):
        fisher_exact_two_sided([[-1, 2], [3, 4]])
