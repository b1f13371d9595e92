"""detect.spike: robust z against a local level; spikes on noise, trends, gaps, uneven steps."""

from __future__ import annotations

import numpy as np

from ppo_doctor.detect import robust_z, spike_scores, spikes


def test_single_spike_on_a_trend_with_noise_and_uneven_steps():
    rng = np.random.default_rng(0)
    n = 400
    steps = np.cumsum(rng.integers(1, 20, n))
    v = np.linspace(0, 10, n) + rng.normal(0, 0.3, n)
    v[250] += 8.0
    found = spikes(steps, v, z=8)
    assert [(sp.peak_idx, sp.peak_step) for sp in found] == [(250, int(steps[250]))]
    assert found[0].peak_value == v[250]


def test_no_spike_in_pure_noise():
    for seed in range(5):
        v = np.random.default_rng(seed).normal(0, 1, 3000)
        assert spikes(np.arange(3000), v, z=8) == []


def test_nan_gaps_are_skipped_and_get_nan_z():
    rng = np.random.default_rng(2)
    v = rng.normal(0, 1, 300)
    v[100:110] = np.nan
    v[200] = 25.0
    z = robust_z(v, 31)
    assert np.isnan(z[100:110]).all()
    found = spikes(np.arange(300), v)
    assert [sp.peak_idx for sp in found] == [200]


def test_directions_and_max_len():
    v = np.zeros(200) + np.random.default_rng(3).normal(0, 0.1, 200)
    v[50] = -5.0
    v[120] = 5.0
    assert [sp.peak_idx for sp in spikes(np.arange(200), v, direction="up")] == [120]
    assert [sp.peak_idx for sp in spikes(np.arange(200), v, direction="down")] == [50]
    assert [sp.peak_idx for sp in spikes(np.arange(200), v, direction="both")] == [50, 120]
    wide = v.copy()
    wide[150:155] = 5.0
    assert all(sp.length <= 1 for sp in spikes(np.arange(200), wide, max_len=1))


def test_float_noise_on_a_constant_is_not_a_spike_with_min_deviation():
    v = np.full(100, 3.0)
    v[40] = 3.0 + 1e-12
    assert spikes(np.arange(100), v, min_deviation=1e-6) == []


def test_global_z_and_precomputed_scores():
    v = np.r_[np.zeros(50), [10.0], np.zeros(49)] + np.random.default_rng(4).normal(0, 0.1, 100)
    assert np.nanargmax(robust_z(v)) == 50
    scores = spike_scores(v, 11)
    assert [sp.peak_idx for sp in spikes(np.arange(100), v, window=11, scores=scores)] == [50]


def test_short_series():
    for n in (0, 1, 2, 4):
        assert spikes(np.arange(n), np.ones(n) * np.arange(n)) == []
        assert robust_z(np.arange(n, dtype=float)).shape == (n,)
