"""detect.oscillation and detect.onset: known swings, convergence, change points before incidents."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ppo_doctor.detect import onset, oscillation


def sine(n, amp, period, sd=0.0, seed=0, trend=0.0):
    t = np.arange(n)
    return amp * np.sin(2 * np.pi * t / period) + trend * t + np.random.default_rng(seed).normal(0, sd, n)


def test_sustained_oscillation_on_a_trend():
    o = oscillation(np.arange(600) * 5, sine(600, 2.0, 60, sd=0.5, trend=0.01))
    assert o.swings >= 16 and o.structure > 3
    assert 0.7 < o.decay < 1.4
    assert abs(o.period_steps - 300) < 40  # 60 points x 5 steps
    assert o.start_step is not None and o.end_step > o.start_step
    assert o.rel_amplitude > 0.2


def test_damped_oscillation_decays():
    t = np.arange(600)
    v = 3.0 * np.exp(-t / 120) * np.sin(2 * np.pi * t / 50) + np.random.default_rng(1).normal(0, 0.05, 600)
    assert oscillation(t, v).decay < 0.3


def test_noise_and_a_learning_curve_have_no_structure():
    rng = np.random.default_rng(2)
    noise = oscillation(np.arange(1000), rng.normal(0, 1, 1000))
    assert noise.structure < 2
    curve = 3 * (1 - np.exp(-np.arange(1000) / 150)) + rng.normal(0, 0.3, 1000)
    o = oscillation(np.arange(1000), curve)
    assert o.structure < 3 or o.swings < 6


def test_long_series_are_block_averaged_consistently():
    n = 200_000
    o = oscillation(np.arange(n), sine(n, 1.0, 20_000, sd=1.0, seed=3))
    assert o.swings >= 16 and o.structure > 3 and abs(o.period_steps - 20_000) < 2_000


def test_oscillation_short_and_degenerate():
    for n in (0, 1, 2, 5, 11):
        assert oscillation(np.arange(n), np.ones(n)).swings == 0
    assert oscillation(np.full(30, 7), np.arange(30.0)).swings == 0  # one step: no slope
    assert oscillation(np.arange(40), np.full(40, np.nan)).n == 0


def test_onset_of_a_ramp_from_a_flat_baseline():
    rng = np.random.default_rng(4)
    steps = np.arange(1000) * 3
    v = np.where(np.arange(1000) < 400, 1.0, 1.0 + 0.05 * (np.arange(1000) - 400)) + rng.normal(0, 0.3, 1000)
    incident = int(np.argmax(v > 10))
    o = onset(steps, v, incident)
    assert o.model == "hinge" and abs(o.idx - 400) <= 15 and o.step == steps[o.idx]
    assert abs(o.baseline - 1.0) < 0.1


def test_onset_of_a_jump_is_its_first_point_and_down_direction():
    v = np.r_[np.zeros(50), np.full(20, 9.0)]
    assert onset(np.arange(70), v, 60).idx == 50
    down = np.r_[np.full(30, 5.0), np.linspace(5, 0, 30)] + np.random.default_rng(5).normal(0, 0.05, 60)
    o = onset(np.arange(60), down, 55, direction="down")
    assert abs(o.idx - 30) <= 3


def test_no_departure_means_the_incident_itself():
    v = np.random.default_rng(6).normal(0, 1, 300)
    o = onset(np.arange(300), v, 299)
    assert o.model == "incident" and o.idx == 299
    assert onset(np.arange(3), [1.0, 1.0, 1.0], 2).step == 2


def test_onset_ignores_nan_and_handles_tiny_prefixes():
    v = np.r_[np.zeros(30), np.linspace(0, 20, 30)]
    v[10:15] = np.nan
    assert 28 <= onset(np.arange(60), v, 59).idx <= 32
    assert onset([5], [1.0], 0).step == 5
    assert onset([0, 1], [0.0, 5.0], 1).idx == 1


def test_long_prefix_is_resolved_to_a_block():
    n = 400_000
    x = np.where(np.arange(n) < 300_000, 0.0, (np.arange(n) - 300_000) * 1e-3) + np.random.default_rng(7).normal(0, 0.5, n)
    assert abs(onset(np.arange(n), x, n - 1).idx - 300_000) < 3_000


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.one_of(st.floats(-1e6, 1e6), st.sampled_from([np.nan, np.inf, -np.inf])), min_size=1, max_size=80),
    st.integers(0, 200),
    st.sampled_from(["up", "down"]),
)
def test_onset_is_never_after_the_incident(values, incident, direction):
    steps = np.cumsum(np.arange(1, len(values) + 1))
    o = onset(steps, np.array(values), incident, direction)
    inc = min(incident, len(values) - 1)
    assert 0 <= o.idx <= inc and o.step == steps[o.idx]
