"""The second, blind labelling of a sample of the real runs (issue 37): its labels are valid, name
labelled runs, and the agreement figures recorded beside them are what the two files give."""

from __future__ import annotations

import json

from benchmarks.label_agreement import SECOND, agreement, answers
from benchmarks.real_scorecard import Label, load_labels, validate


def test_second_labels_are_valid_and_name_labelled_runs():
    first, _, _ = load_labels()
    second, _, _ = load_labels(SECOND)
    assert validate(second) == []
    assert {lab.key for lab in second} <= {lab.key for lab in first}


def test_recorded_agreement_is_what_the_labels_give():
    first, _, _ = load_labels()
    second, _, doc = load_labels(SECOND)
    assert agreement(first, second) == doc["agreement"]
    assert doc["agreement"]["runs"] == len(json.loads(SECOND.read_text(encoding="utf-8"))["runs"])


def test_answers_scores_a_labeller_as_the_doctor_is_scored():
    truth = Label("f", "r", "unhealthy", must=("stagnation",), never=("reward_collapse",), why="x")
    assert answers(truth, Label("f", "r", "unhealthy", must=("stagnation", "entropy_collapse"), why="y"))
    assert not answers(truth, Label("f", "r", "unhealthy", must=("entropy_collapse",), why="y"))  # misses a required one
    assert not answers(truth, Label("f", "r", "unhealthy", must=("stagnation", "reward_collapse"), why="y"))  # names a forbidden one
    assert not answers(truth, Label("f", "r", "healthy", why="y"))
