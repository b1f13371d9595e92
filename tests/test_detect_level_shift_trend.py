"""detect.trend: known slopes, robustness, uneven steps."""

from __future__ import annotations

import numpy as np

from ppo_doctor.detect import first_last, summarize, theil_sen


def test_slopes_are_per_step_with_uneven_gaps():
    steps = np.array([0, 1, 5, 6, 20, 21, 40])
    v = 3.0 + 0.5 * steps
    slope, icept = theil_sen(steps, v)
    assert np.isclose(slope, 0.5) and np.isclose(icept, 3.0)


def test_theil_sen_ignores_outliers_and_nans():
    steps = np.arange(200)
    v = 2.0 * steps + np.random.default_rng(2).normal(0, 1, 200)
    v[::17] = 1e6
    v[5] = np.nan
    assert abs(theil_sen(steps, v)[0] - 2.0) < 0.05


def test_first_last_and_summary():
    v = np.r_[np.ones(10), np.linspace(1, 3, 80), np.full(10, 3.0)]
    assert first_last(v, 10) == (1.0, 3.0)
    t = summarize(np.arange(100), v)
    assert t.n == 100 and np.isclose(t.change, 2.0) and t.change_in_noise > 10


def test_short_and_empty_trend_inputs():
    assert np.isnan(theil_sen([1], [2.0])[0])
    assert np.isnan(theil_sen([3, 3], [1.0, 2.0])[0])
    assert summarize([], []).n == 0


def test_held_at_max_is_the_top_when_most_points_sit_there():
    from ppo_doctor.detect import held_at_max

    assert held_at_max(np.r_[0.14, 0.17, np.ones(30)]) == 1.0
    assert held_at_max(np.r_[0.0, 0.5, 0.99, np.ones(3), np.nan]) == 1.0  # median 0.995, NaN ignored
    assert held_at_max(np.r_[0.0, 0.5, 0.9, 1.0, 1.0]) is None  # median 0.9: not within 1 % of the range
    assert held_at_max(np.r_[np.zeros(30), 0.03, 0.03]) is None  # a sparse reward sits at its bottom
    assert held_at_max(np.ones(10)) is None  # flat: no top to reach
    assert held_at_max(np.array([np.nan])) is None
