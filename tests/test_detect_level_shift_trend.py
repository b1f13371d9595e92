"""detect.level_shift and detect.trend: known shifts and slopes, robustness, uneven steps."""

from __future__ import annotations

import numpy as np

from ppo_doctor.detect import first_last, level_shifts, ols_slope, relative_change, rolling_slope, summarize, theil_sen
from ppo_doctor.detect.level_shift import shift_scores


def test_level_shift_found_near_the_true_index():
    rng = np.random.default_rng(0)
    v = np.r_[np.zeros(500), np.full(500, 10.0)] + rng.normal(0, 1, 1000)
    v[300] = np.nan
    found = level_shifts(np.arange(1000) * 2, v, window=50)
    assert len(found) == 1
    sh = found[0]
    assert abs(sh.idx - 500) <= 13 and sh.step == 2 * sh.idx
    assert 9 < sh.delta < 11 and sh.score > 6
    assert level_shifts(np.arange(1000), v, window=50, direction="down") == []


def test_no_level_shift_in_noise_or_trend():
    rng = np.random.default_rng(1)
    assert level_shifts(np.arange(2000), rng.normal(0, 1, 2000), window=100) == []
    slow = np.linspace(0, 3, 2000) + rng.normal(0, 1, 2000)
    assert level_shifts(np.arange(2000), slow, window=100) == []


def test_min_delta_and_short_series():
    v = np.r_[np.zeros(40), np.full(40, 1e-6)]
    assert level_shifts(np.arange(80), v, window=10, min_delta=1e-3) == []
    for n in (0, 1, 2, 5):
        assert level_shifts(np.arange(n), np.arange(n, dtype=float), window=4) == []
    assert len(shift_scores(np.arange(3.0), 2)[0]) == 0


def test_slopes_are_per_step_with_uneven_gaps():
    steps = np.array([0, 1, 5, 6, 20, 21, 40])
    v = 3.0 + 0.5 * steps
    assert np.isclose(ols_slope(steps, v), 0.5)
    slope, icept = theil_sen(steps, v)
    assert np.isclose(slope, 0.5) and np.isclose(icept, 3.0)


def test_theil_sen_ignores_outliers_and_nans():
    steps = np.arange(200)
    v = 2.0 * steps + np.random.default_rng(2).normal(0, 1, 200)
    v[::17] = 1e6
    v[5] = np.nan
    assert abs(theil_sen(steps, v)[0] - 2.0) < 0.05
    assert abs(ols_slope(steps, v) - 2.0) > 1  # least squares is pulled away: that is why Theil-Sen


def test_relative_change_first_last_and_summary():
    v = np.r_[np.ones(10), np.linspace(1, 3, 80), np.full(10, 3.0)]
    assert first_last(v, 10) == (1.0, 3.0)
    assert np.isclose(relative_change(v, 10), 2.0)
    t = summarize(np.arange(100), v)
    assert t.n == 100 and np.isclose(t.change, 2.0) and t.change_in_noise > 10
    assert np.isnan(relative_change(np.array([np.nan]), 3))


def test_rolling_slope_matches_local_lines():
    steps = np.arange(100) * 3
    v = np.where(steps < 150, 0.0, (steps - 150) * 0.2)
    rs = rolling_slope(steps, v, 10)
    assert np.isnan(rs[:9]).all()
    assert np.allclose(rs[20:40], 0.0) and np.allclose(rs[70:], 0.2)


def test_short_and_empty_trend_inputs():
    assert np.isnan(ols_slope([], []))
    assert np.isnan(theil_sen([1], [2.0])[0])
    assert np.isnan(theil_sen([3, 3], [1.0, 2.0])[0])
    assert summarize([], []).n == 0
    assert np.isnan(rolling_slope([0, 1], [1.0, 2.0], 5)).all()
