"""detect.peak_drop: a rise to a level, a fall far below it, and whether it came back."""

from __future__ import annotations

import numpy as np

from ppo_doctor.detect import peak_drop


def test_rise_then_fall_for_good():
    rng = np.random.default_rng(0)
    v = np.r_[np.linspace(0, 10, 100), np.full(100, 2.0)] + rng.normal(0, 0.3, 200)
    pd = peak_drop(np.arange(200), v)
    assert pd is not None and 80 <= pd.peak_idx <= 105 and pd.peak > 8.5  # block medians round the corner
    assert pd.fall_idx is not None and 95 <= pd.fall_idx <= 115 and not pd.recovered
    assert 0.7 < pd.lost_share < 0.9  # 10 -> 2 loses 80 % of the gain


def test_one_high_point_is_not_a_peak_and_a_dip_that_comes_back_recovers():
    v = np.full(200, 1.0)
    v[50] = 100.0
    pd = peak_drop(np.arange(200), v)
    assert pd is not None and pd.gain == 0 and pd.lost_share == 0.0
    # falls below halfway, then comes back to 8 (above halfway, below the first peak)
    w = np.r_[np.linspace(0, 10, 80), np.full(30, 1.0), np.full(90, 8.0)]
    back = peak_drop(np.arange(200), w)
    assert back is not None and back.fall_idx is not None and back.recovered
    # a level that ends higher than any before has no fall after its peak
    higher = peak_drop(np.arange(200), np.r_[np.linspace(0, 10, 80), np.full(30, 1.0), np.full(90, 12.0)])
    assert higher is not None and higher.fall_idx is None


def test_uneven_steps_and_nans_are_handled():
    s = np.cumsum(np.r_[1, np.full(149, 3)])
    v = np.r_[np.linspace(0, 5, 75), np.full(75, 0.5)]
    v[[10, 90]] = np.nan
    pd = peak_drop(s, v)
    assert pd is not None and pd.fall_idx is not None and not pd.recovered


def test_a_last_fall_deeper_than_a_dip_it_came_back_from_is_the_fall():
    # rises to 10, dips to 4 (below halfway), comes back to 8, then falls to 1 for good
    v = np.r_[np.linspace(0, 10, 60), np.full(30, 4.0), np.full(50, 8.0), np.full(60, 1.0)]
    pd = peak_drop(np.arange(len(v)), v)
    assert pd is not None and not pd.recovered
    assert 135 <= pd.fall_idx <= 145  # the last fall, not the dip at 60
    assert pd.lost_share > 0.8


def test_a_last_fall_no_deeper_than_an_earlier_dip_is_wander():
    # dips to 1 and comes back, then ends at 3: the series has come back from that depth before
    v = np.r_[np.linspace(0, 10, 60), np.full(30, 1.0), np.full(50, 8.0), np.full(60, 3.0)]
    pd = peak_drop(np.arange(len(v)), v)
    assert pd is not None and pd.recovered and 50 <= pd.fall_idx <= 70  # the first dip


def test_a_win_loss_return_switches_and_a_trending_reward_does_not():
    from ppo_doctor.detect import switches

    rng = np.random.default_rng(3)
    wins = rng.random(300) < 0.7
    win_loss = np.where(wins, 105.0, -102.0) + rng.normal(0, 3, 300)  # jitter 3 within a mode
    assert switches(win_loss)
    trend = np.linspace(0, 10, 300) + rng.normal(0, 1, 300)
    trend[[50, 150, 250]] += 40  # rare spikes are outliers, not a mixture
    assert not switches(trend)
