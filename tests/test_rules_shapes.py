"""The declarative rule bases (rules/shapes.py): a rule of the common shape is its docstring,
its metadata and its examples; the base resolves its input, finds the sustained stretches,
grades the severity and builds the finding (onset, worst point, end, message)."""

from __future__ import annotations

import numpy as np

from ppo_doctor.rules.base import Example
from ppo_doctor.rules.examples import example_run, flat, saturating
from ppo_doctor.rules.inputs import Input
from ppo_doctor.rules.shapes import SustainedRule


class ValueClipfracHigh(SustainedRule[Input]):
    """The critic's clip fraction stays high (a rule of the common shape, written for this test).

    **What it detects.** ``value/clipfrac`` above ``max_share`` for a sustained stretch; error
    when the stretches' median reaches ``error_share``.
    """

    code = "PD899"
    name = "value-clipfrac-high"
    symptom = "value_instability"
    basis = "outcome"  # the shape is under test here, not the sign gate (tests/test_outcome_before_sign.py)
    requires = ("value/clipfrac",)
    params = {"max_share": 0.3, "error_share": 0.6, "min_points": 5}
    message = "value clip fraction above {max_share:g} {since} (median {median:num}, peak {peak:num})"
    level_param = "max_share"
    error_param = "error_share"

    @classmethod
    def bad_example(cls):
        return Example(series={"value/clipfrac": saturating(100, 0.05, 0.5, sd=0.02, seed=1)})

    @classmethod
    def good_example(cls):
        return Example(series={"value/clipfrac": np.abs(flat(100, 0.1, 0.02, seed=2))})


class LowLevel(ValueClipfracHigh):
    """The same series judged from below (direction "down")."""

    direction = "down"
    params = {"max_share": 0.02, "error_share": 0.0, "min_points": 5}
    message = "below {max_share:g} {since} (median {median:num}, min {min:num})"


def test_a_rule_of_the_common_shape_needs_no_code_of_its_own():
    (f,) = ValueClipfracHigh().run(example_run(ValueClipfracHigh.bad_example()))
    assert f.metric == "value/clipfrac" and f.severity == "warning"  # median below 0.6
    assert set(f.observed) == {"median", "peak"} and 0.3 < f.observed["median"] < f.observed["peak"]
    assert f.start_step <= f.threshold_step <= f.peak_step <= f.end_step
    assert f.message.startswith("value clip fraction above 0.3 from step ")
    assert f"median {f.observed['median']:.3g}, peak {f.observed['peak']:.3g}" in f.message
    assert list(ValueClipfracHigh().run(example_run(ValueClipfracHigh.good_example()))) == []


def test_error_param_grades_the_severity_by_the_stretch_median():
    (f,) = ValueClipfracHigh().run(example_run(ValueClipfracHigh.bad_example()), {"error_share": 0.4})
    assert f.severity == "error"


def test_min_points_and_direction_down():
    short = Example(series={"value/clipfrac": flat(4, 0.9)})
    assert list(ValueClipfracHigh().run(example_run(short))) == []
    low = Example(series={"value/clipfrac": np.r_[flat(50, 0.2), flat(50, 0.01)]})
    (f,) = LowLevel().run(example_run(low))
    assert set(f.observed) == {"median", "min"} and f.observed["min"] == 0.01
    assert f.threshold_step == 50 and f.end_step == 99 and f.severity == "warning"
