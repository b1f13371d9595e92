"""RunFrame contract: lossless long table, last value wins per step, NaN/Inf kept."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from ppo_doctor.frame import RawSeries, RunFrame


def _frame() -> RunFrame:
    a = RawSeries("objective/kl", [0, 1, 2, 1], [0.1, 0.2, np.nan, 0.25], wall_time=[10, 11, 12, 13], source="f1")
    b = RawSeries("objective/scores", [0, 1], [1.0, np.inf], source="f2")
    return RunFrame.from_series([("kl/ref", a), ("reward/score", b)])


def test_every_point_kept_with_columns():
    fr = _frame()
    assert len(fr) == 6
    assert list(fr.df.columns) == ["step", "metric", "value", "wall_time", "raw_tag", "source"]
    assert fr.df["step"].dtype == np.int64 and fr.df["value"].dtype == np.float64
    assert fr.metrics == ["kl/ref", "reward/score"]
    assert fr.count("kl/ref") == 4


def test_series_sorted_last_wins_and_nonfinite_kept():
    s = _frame().series("kl/ref")
    assert s.index.tolist() == [0, 1, 2]
    assert s.loc[1] == pytest.approx(0.25)  # the re-logged value (file order) wins
    assert np.isnan(s.loc[2])
    assert np.isposinf(_frame().series("reward/score").loc[1])


def test_missing_metric_and_empty_frame():
    fr = _frame()
    assert not fr.has("grad/norm") and fr.series("grad/norm").empty
    empty = RunFrame.empty()
    assert len(empty) == 0 and empty.metrics == [] and empty.step_range() is None


def test_raw_tags_and_step_range():
    fr = _frame()
    assert fr.raw_tags("kl/ref") == ["objective/kl"]
    assert fr.step_range() == (0, 2)


def test_mismatched_lengths_rejected():
    with pytest.raises(ValueError):
        RawSeries("x", [0, 1], [1.0])


def test_a_pickled_frame_carries_its_table_not_its_caches():
    """``--jobs`` workers pickle reports back: the Series cache the rules fill must not travel."""
    frame = RunFrame.from_series([("kl/ref", RawSeries(tag="kl", steps=np.arange(1000), values=np.linspace(0, 1, 1000)))])
    cold = len(pickle.dumps(frame))
    frame.series("kl/ref")
    again = pickle.loads(pickle.dumps(frame))
    assert len(pickle.dumps(frame)) == cold
    assert again.series("kl/ref").equals(frame.series("kl/ref")) and len(again) == 1000


def test_the_line_of_a_point_is_the_first_line_that_logged_its_step():
    """Readers of text logs record each point's line (the SARIF region): a restart that logs step 1 again
    (line 40) leaves the step's first line (12); another source or metric, an unknown step or a
    series without lines (a binary log) gives None."""
    a = RawSeries("objective/kl", [0, 1, 2, 1], [0.1, 0.2, 0.3, 0.25], source="f1", lines=[11, 12, 13, 40])
    b = RawSeries("objective/scores", [0, 1], [1.0, 2.0], source="f2")  # no lines: TensorBoard, say
    c = RawSeries("objective/kl", [5], [0.5], source="f3", lines=[7])
    fr = RunFrame.from_series([("kl/ref", a), ("reward/score", b), ("kl/ref", c)])
    assert fr.line_of("kl/ref", 1, "f1") == 12 and fr.line_of("kl/ref", 2, "f1") == 13
    assert fr.line_of("kl/ref", 5, "f3") == 7 and fr.line_of("kl/ref", 5, "f1") is None
    assert fr.line_of("kl/ref", 9, "f1") is None and fr.line_of("grad/norm", 1, "f1") is None
    assert fr.line_of("reward/score", 1, "f2") is None and fr.line_of("kl/ref", 1, "nowhere") is None
    again = pickle.loads(pickle.dumps(fr))  # --jobs workers send frames back
    assert again.line_of("kl/ref", 1, "f1") == 12


def test_lines_cost_one_int32_a_point_and_nothing_without_them():
    with_lines = RunFrame.from_series([("kl/ref", RawSeries("kl", np.arange(5), np.zeros(5), lines=np.arange(1, 6)))])
    assert with_lines._cols.line.dtype == np.int32 and len(with_lines._cols.line) == 5
    assert RunFrame.from_series([("kl/ref", RawSeries("kl", np.arange(5), np.zeros(5)))])._cols.line is None
    assert list(with_lines.df.columns) == ["step", "metric", "value", "wall_time", "raw_tag", "source"]  # the contract's columns
    with pytest.raises(ValueError):
        RawSeries("x", [0, 1], [1.0, 2.0], lines=[3])
