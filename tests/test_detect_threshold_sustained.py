"""detect.threshold and detect.sustained: masks, NaN/Inf handling, k-of-n windows."""

from __future__ import annotations

import numpy as np

from ppo_doctor.detect import above, below, mask_to_spans, outside, sustained_mask, sustained_spans


def test_nan_never_crosses_but_inf_does():
    v = np.array([1.0, np.nan, np.inf, -np.inf, 5.0])
    assert above(v, 2.0).tolist() == [False, False, True, False, True]
    assert below(v, 2.0).tolist() == [True, False, False, True, False]
    assert above(v, 5.0, inclusive=True).tolist() == [False, False, True, False, True]
    assert outside(v, low=0.0, high=4.0).tolist() == [False, False, True, True, True]
    assert outside(v).tolist() == [False] * 5


def test_spans_outside_a_band_peak_at_the_most_extreme_point():
    steps = np.array([0, 5, 10, 15, 20])
    v = np.array([0.0, 3.0, 4.0, 0.0, -6.0])
    spans = mask_to_spans(steps, outside(v, low=-5.0, high=2.0), v, peak="abs")
    assert [(sp.start_step, sp.end_step, sp.peak_step) for sp in spans] == [(5, 10, 10), (20, 20, 20)]


def test_sustained_k_of_n_known_answer():
    m = np.array([1, 0, 0, 0, 1, 1, 0, 1, 0, 0, 0, 1], dtype=bool)
    # windows of 4 with >= 3 flagged: only 4..7 qualifies -> points 4, 5 and 7
    assert np.flatnonzero(sustained_mask(m, 3, 4)).tolist() == [4, 5, 7]
    spans = sustained_spans(np.arange(12), m, 3, 4)
    assert [(sp.start_idx, sp.end_idx) for sp in spans] == [(4, 7)]


def test_sustained_on_short_series_needs_k_points():
    assert sustained_mask(np.array([True, True]), 3, 8).tolist() == [False, False]
    assert sustained_mask(np.array([True, False, True, True]), 3, 8).tolist() == [True, False, True, True]
    assert sustained_mask(np.array([], dtype=bool), 3, 5).tolist() == []


def test_sustained_matches_brute_force():
    rng = np.random.default_rng(1)
    for _ in range(20):
        m = rng.random(60) < 0.5
        k, n = 3, 5
        want = np.zeros(60, dtype=bool)
        for j in range(60 - n + 1):
            if m[j : j + n].sum() >= k:
                want[j : j + n] |= m[j : j + n]
        assert np.array_equal(sustained_mask(m, k, n), want)
