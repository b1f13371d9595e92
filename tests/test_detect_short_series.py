"""Every detector on 0, 1, 2 and 5 points, all-NaN and all-Inf series: no exception, neutral result."""

from __future__ import annotations

import numpy as np
import pytest

from ppo_doctor import detect

CASES = {
    "empty": [],
    "one": [1.0],
    "two": [1.0, 2.0],
    "five": [1.0, 5.0, 2.0, 4.0, 3.0],
    "all_nan": [np.nan] * 7,
    "inf": [np.inf, -np.inf, 1.0, np.nan, 2.0],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_detectors_on_tiny_and_broken_series(name):
    v = np.array(CASES[name], dtype=float)
    s = np.arange(len(v), dtype=np.int64) * 7
    assert detect.spikes(s, v) == []
    assert detect.oscillation(s, v).swings == 0
    assert detect.flat_spans(s, v) == []
    assert detect.peak_drop(s, v) is None  # fewer than three windows of finite points
    assert isinstance(detect.summarize(s, v).n, int)
    assert detect.sustained_mask(detect.above(v, 0.0), 3, 5).shape == v.shape
    assert int(detect.above(v, 10.0).any()) == int(np.isposinf(v).any())  # +Inf is above any bound
    nf = detect.nonfinite(s, v)
    assert nf.count == int((~np.isfinite(v)).sum())
    assert np.isfinite(detect.robust_sd(v))
    assert detect.quantiles(v, [5, 95]).shape == (2,)
    if len(v):
        o = detect.onset(s, v, len(v) - 1)
        assert 0 <= o.idx < len(v)
