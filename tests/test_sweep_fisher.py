"""Fisher's exact test without scipy (issue 18); tests/test_stats_against_scipy.py compares it with scipy's."""

from __future__ import annotations

import pytest

from ppo_doctor.sweep.fisher import fisher_exact_two_sided


def test_known_values_and_large_counts():
    # Fisher's tea-tasting table: p = 0.4857 (two-sided)
    assert fisher_exact_two_sided([[3, 1], [1, 3]]) == pytest.approx(34 / 70)
    assert fisher_exact_two_sided([[0, 5], [0, 7]]) == 1.0
    assert 0 < fisher_exact_two_sided([[400, 100], [100, 400]]) < 1e-80  # exact integers, no underflow to a wrong 0 sum
    with pytest.raises(ValueError):
        fisher_exact_two_sided([[-1, 2], [3, 4]])
