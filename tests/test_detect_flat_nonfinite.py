"""detect.flatline and detect.nonfinite."""

from __future__ import annotations

import numpy as np

from ppo_doctor.detect import flat_mask, flat_spans, nonfinite


def test_flat_segment_with_float32_noise_is_found():
    rng = np.random.default_rng(0)
    v = np.r_[rng.normal(0, 1, 50), np.full(40, 2.5, dtype=np.float32) + rng.normal(0, 1e-7, 40), rng.normal(0, 1, 50)]
    spans = flat_spans(np.arange(140) * 10, v, min_len=5)
    assert len(spans) == 1
    assert (spans[0].start_idx, spans[0].end_idx) == (50, 89)
    assert spans[0].start_step == 500


def test_slow_ramp_is_not_flat_but_scale_tolerance_can_allow_it():
    ramp = np.linspace(0, 1, 1000)  # each step 1e-3
    assert flat_spans(np.arange(1000), ramp, rel_tol=1e-2, min_len=5) == []
    noisy = np.r_[np.random.default_rng(1).normal(0, 10, 100), np.full(30, 1.0) + np.random.default_rng(2).normal(0, 0.01, 30)]
    assert flat_spans(np.arange(130), noisy, min_len=10, scale_tol=0.01)[0].start_idx >= 99


def test_short_inputs():
    assert flat_mask(np.array([1.0])).tolist() == [False]
    assert flat_spans(np.arange(0), np.array([])) == []
    assert flat_mask(np.array([1.0, np.nan, np.nan])).tolist() == [False, False, False]


def test_nonfinite_masks_and_first_step():
    steps = np.array([0, 10, 20, 30, 40])
    nf = nonfinite(steps, np.array([1.0, np.inf, np.nan, -np.inf, 2.0]))
    assert nf.first_step == 10 and nf.first_kind == "+inf"
    assert nf.counts() == {"nan": 1, "+inf": 1, "-inf": 1}
    assert nf.count == 3 and nf.recovered and nf.last_finite_step == 40
    assert [(sp.start_step, sp.end_step) for sp in nf.spans(steps)] == [(10, 30)]


def test_nonfinite_all_finite_all_nan_and_empty():
    ok = nonfinite([0, 1], [1.0, 2.0])
    assert ok.first_step is None and ok.count == 0 and not ok.recovered
    dead = nonfinite([0, 1, 2], [1.0, np.nan, np.nan])
    assert dead.first_step == 1 and not dead.recovered and dead.last_finite_step == 0
    allnan = nonfinite([5], [np.nan])
    assert allnan.first_kind == "nan" and allnan.last_finite_step is None
    empty = nonfinite([], [])
    assert empty.first_step is None and empty.last_finite_step is None
