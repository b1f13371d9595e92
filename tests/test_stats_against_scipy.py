"""The statistics written by hand, checked against scipy's (scipy is in [dev], so these always run).

The package itself never imports scipy (tests/test_packaging.py): a check must not pay for it.
Here the same inputs go to both: Fisher's exact test (sweep attribution), Theil-Sen (trends),
the order statistics that replace numpy's median and percentile, and the MAD-based robust sd.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from ppo_doctor.detect._util import MAD_TO_SD, robust_sd
from ppo_doctor.detect.order_stats import median, percentile
from ppo_doctor.detect.trend import theil_sen
from ppo_doctor.sweep.fisher import fisher_exact_two_sided, fisher_many


def test_fisher_matches_scipy_on_every_small_table():
    for a, b, c, d in itertools.product(range(7), repeat=4):
        table = [[a, b], [c, d]]
        expected = stats.fisher_exact(table, alternative="two-sided").pvalue
        assert fisher_exact_two_sided(table) == pytest.approx(expected, rel=1e-9, abs=1e-12), table


def test_fisher_many_matches_scipy_on_random_larger_tables():
    rng = np.random.default_rng(0)
    sizes_a, sizes_b = rng.integers(1, 300, 200), rng.integers(1, 300, 200)
    hits_a, hits_b = rng.integers(0, sizes_a + 1), rng.integers(0, sizes_b + 1)
    got = fisher_many(hits_a, sizes_a, hits_b, sizes_b)
    for i in range(len(got)):
        table = [[hits_a[i], sizes_a[i] - hits_a[i]], [hits_b[i], sizes_b[i] - hits_b[i]]]
        assert got[i] == pytest.approx(stats.fisher_exact(table).pvalue, rel=1e-7, abs=1e-300), table


@pytest.mark.parametrize("seed", range(5))
def test_theil_sen_matches_scipys_theilslopes(seed):
    rng = np.random.default_rng(seed)
    steps = np.sort(rng.choice(5000, size=120, replace=False)).astype(float)
    values = 0.003 * steps + rng.standard_t(2, size=120)  # heavy tails: what Theil-Sen is for
    values[rng.integers(0, 120, 5)] = 50.0
    slope, intercept = theil_sen(steps, values)
    # "joint": the intercept is the median of y - slope * x, as here (scipy's default "separate"
    # takes median(y) - slope * median(x))
    expected = stats.theilslopes(values, steps, method="joint")
    assert slope == pytest.approx(expected.slope, rel=1e-12)
    assert intercept == pytest.approx(expected.intercept, rel=1e-12, abs=1e-12)


def test_theil_sen_with_repeated_steps_matches_scipy():
    steps = np.array([0, 0, 1, 2, 2, 3, 5, 8, 8, 9], dtype=float)
    values = np.array([1.0, 1.5, 2.0, 2.2, 3.0, 3.1, 5.0, 7.5, 9.0, 9.5])
    assert theil_sen(steps, values)[0] == pytest.approx(stats.theilslopes(values, steps).slope, rel=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_median_and_percentiles_match_scipy(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=int(rng.integers(1, 400))) * 10 ** float(rng.integers(-3, 4))
    if seed % 2:
        x = np.round(x, 1)  # ties
    assert median(x) == pytest.approx(stats.scoreatpercentile(x, 50), rel=1e-12, abs=1e-15)
    q = np.array([0.0, 1.0, 5.0, 25.0, 50.0, 75.0, 95.0, 99.0, 100.0])
    np.testing.assert_allclose(percentile(x, q), stats.scoreatpercentile(x, q), rtol=1e-12, atol=1e-15)


def test_robust_sd_is_scipys_normal_scaled_mad():
    rng = np.random.default_rng(3)
    x = rng.laplace(size=1001)
    # scipy's scale="normal" is 1 / Phi^-1(3/4) = 1.482602...; the package rounds it to 1.4826
    assert MAD_TO_SD == pytest.approx(1 / stats.norm.ppf(0.75), rel=1e-5)
    assert robust_sd(x) == pytest.approx(stats.median_abs_deviation(x, scale="normal"), rel=1e-5)
