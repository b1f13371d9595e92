"""detect.order_stats returns numpy's medians, percentiles and distinct values bit for bit
(issue 26: numpy's own import ``numpy.ma`` on their first call, benchmarks/RESULTS.md "One
small check"), on random arrays of every length from 0 to 300 with NaN, +-inf, ties, signed
zeros, integers and constant runs, and on the corner cases one by one."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from ppo_doctor.detect import distinct, median, percentile

ROOT = Path(__file__).resolve().parents[1]
SEEDS = (0, 1, 2, 3, 4)
QS = (0, 1, 5, 25, 50, 75, 95, 99, 100, 2.5, 33.3, 66.7, 97.5)


def _same(ours, theirs) -> None:
    """Equal value by value (NaN where numpy has NaN), same shape, dtype and sign of zero."""
    a, b = np.asarray(ours), np.asarray(theirs)
    assert a.shape == b.shape and a.dtype == b.dtype, (a, b)
    assert np.array_equal(np.isnan(a), np.isnan(b)), (a, b)
    keep = ~np.isnan(a)
    assert np.array_equal(a[keep], b[keep]), (a, b)
    assert np.array_equal(np.signbit(a[keep]), np.signbit(b[keep])), (a, b)


def _arrays(seed: int):
    """Arrays of lengths 0..300 of several kinds: normal floats, few distinct values (ties),
    integers, constants, and floats mixed with NaN, +-inf, signed zeros and huge values."""
    rng = np.random.default_rng(seed)
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e308, -1e308, 5e-324])
    for n in range(0, 301):
        kind = (n + seed) % 6
        if kind == 0:
            x = rng.normal(size=n)
        elif kind == 1:
            x = rng.integers(-3, 4, size=n).astype(np.float64)  # many ties
        elif kind == 2:
            x = rng.integers(-1000, 1000, size=n)  # int64
        elif kind == 3:
            x = np.full(n, rng.normal())
        elif kind == 4:
            x = rng.normal(size=n)
            hit = rng.random(n) < 0.15
            x[hit] = rng.choice(specials, size=int(hit.sum()))
        else:
            x = rng.choice(np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf]), size=n)
        yield x


@pytest.mark.parametrize("seed", SEEDS)
def test_median_is_numpys(seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # inf - inf in numpy's mean and ours
        for x in _arrays(seed):
            if len(x) == 0:
                continue
            ours, theirs = median(x), np.median(x)
            assert type(ours) is type(theirs)
            _same(ours, theirs)


@pytest.mark.parametrize("seed", SEEDS)
def test_percentile_is_numpys_for_scalar_and_array_q(seed):
    rng = np.random.default_rng(100 + seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for x in _arrays(seed):
            if len(x) == 0:
                continue
            for q in (*QS, float(rng.uniform(0, 100)), int(rng.integers(0, 101))):
                ours, theirs = percentile(x, q), np.percentile(x, q)
                assert type(ours) is type(theirs)
                _same(ours, theirs)
            for qs in (np.asarray(QS, dtype=np.float64), rng.uniform(0, 100, size=3), np.asarray(50.0), [5.0, 95.0]):
                ours, theirs = percentile(x, qs), np.percentile(x, qs)
                assert type(ours) is type(theirs)
                _same(ours, theirs)


@pytest.mark.parametrize("seed", SEEDS)
def test_distinct_is_numpys_unique(seed):
    for x in _arrays(seed):
        _same(distinct(x), np.unique(x))


def test_corner_cases():
    assert median([3, 1, 2]) == 2.0 and isinstance(median([3, 1, 2]), np.float64)
    assert median([1, 2, 3, 4]) == 2.5
    assert np.isnan(median([1.0, np.nan, 3.0]))
    assert median([-np.inf, 1.0, np.inf]) == 1.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([0, 10], 25) == 2.5
    assert np.isnan(percentile([1.0, np.nan], [5.0, 95.0])).all()
    _same(distinct([2.0, np.nan, 1.0, np.nan, 2.0]), [1.0, 2.0, np.nan])  # the NaNs collapse, last
    with pytest.raises(ValueError):
        percentile([1.0, 2.0], 101)


def test_empty_input_is_nan_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(median(np.empty(0)))
        assert np.isnan(percentile(np.empty(0), 50))
        assert percentile(np.empty(0), np.array([5.0, 95.0])).shape == (2,)
        assert len(distinct(np.empty(0))) == 0


def test_the_inputs_are_left_as_they_were():
    x = np.array([3.0, 1.0, np.nan, 2.0])
    before = x.copy()
    median(x), percentile(x, 50), distinct(x)
    assert np.array_equal(x, before, equal_nan=True)


def test_they_do_not_import_numpy_ma():
    code = (
        "import sys, numpy as np\n"
        "from ppo_doctor.detect import distinct, median, percentile\n"
        "x = np.array([3.0, np.nan, 1.0, 2.0])\n"
        "median(x), median(x[:2]), percentile(x, 50), percentile(x[[0, 2, 3]], [5.0, 95.0]), distinct(x)\n"
        "assert 'numpy.ma' not in sys.modules, 'numpy.ma imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
