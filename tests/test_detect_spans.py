"""detect.spans: mask <-> spans with merging, minimum length and peaks."""

from __future__ import annotations

import numpy as np
import pytest

from ppo_doctor.detect import Span, longest, mask_to_spans, spans_to_mask


def test_runs_become_spans_with_steps_and_peaks():
    steps = np.array([0, 10, 20, 35, 50, 51, 52, 90])
    mask = np.array([0, 1, 1, 0, 1, 1, 1, 0], dtype=bool)
    values = np.array([0, 5, 7, 0, 3, 9, 1, 0], dtype=float)
    spans = mask_to_spans(steps, mask, values)
    assert [(sp.start_idx, sp.end_idx) for sp in spans] == [(1, 2), (4, 6)]
    assert [(sp.start_step, sp.end_step) for sp in spans] == [(10, 20), (50, 52)]
    assert [(sp.peak_idx, sp.peak_step, sp.peak_value) for sp in spans] == [(2, 20, 7.0), (5, 51, 9.0)]
    assert spans[1].length == 3


def test_max_gap_merges_and_min_len_drops():
    steps = np.arange(12)
    mask = np.array([1, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0], dtype=bool)
    assert [(sp.start_idx, sp.end_idx) for sp in mask_to_spans(steps, mask, max_gap=1)] == [(0, 3), (7, 7)]
    assert [(sp.start_idx, sp.end_idx) for sp in mask_to_spans(steps, mask, max_gap=1, min_len=2)] == [(0, 3)]
    assert [(sp.start_idx, sp.end_idx) for sp in mask_to_spans(steps, mask, max_gap=3)] == [(0, 7)]


@pytest.mark.parametrize(
    "values,peak,expected",
    [
        ([0.0, 5.0, -12.0, 10.0, 0.0], "max", 3),
        ([0.0, 5.0, -12.0, 10.0, 0.0], "min", 2),
        ([0.0, 5.0, -12.0, 10.0, 0.0], "abs", 2),
        ([0.0, 5.0, -2.0, 10.0, 0.0], "abs", 3),
    ],
)
def test_peak_modes(values, peak, expected):
    spans = mask_to_spans(np.arange(5), np.array([0, 1, 1, 1, 0], dtype=bool), np.array(values), peak=peak)
    assert spans[0].peak_idx == expected


def test_nan_values_never_win_the_peak_and_all_nan_spans_still_work():
    values = np.array([np.nan, 2.0, np.nan, np.nan])
    spans = mask_to_spans(np.arange(4), np.ones(4, dtype=bool), values, max_gap=0)
    assert spans[0].peak_idx == 1
    only_nan = mask_to_spans(np.arange(4), np.array([0, 0, 1, 1], dtype=bool), values)
    assert only_nan[0].peak_idx == 2 and np.isnan(only_nan[0].peak_value)


def test_empty_inputs_and_mismatch():
    assert mask_to_spans(np.array([], dtype=np.int64), np.array([], dtype=bool)) == []
    assert mask_to_spans(np.arange(3), np.zeros(3, dtype=bool)) == []
    with pytest.raises(ValueError):
        mask_to_spans(np.arange(3), np.zeros(4, dtype=bool))
    with pytest.raises(ValueError):
        mask_to_spans(np.arange(3), np.ones(3, dtype=bool), np.zeros(3), peak="median")


def test_spans_to_mask_round_trip_and_longest():
    rng = np.random.default_rng(0)
    mask = rng.random(500) < 0.3
    spans = mask_to_spans(np.arange(500), mask)
    assert np.array_equal(spans_to_mask(500, spans), mask)
    assert spans_to_mask(0, []).shape == (0,)
    best = longest(spans)
    assert best.length == max(sp.length for sp in spans)
    assert longest([]) is None


def test_span_is_a_plain_record():
    sp = Span(1, 3, 10, 30, 2, 20, 5.0)
    assert sp.length == 3
