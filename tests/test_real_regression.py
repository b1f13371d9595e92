"""The hand-labelled real runs as a regression set (issue 25).

``tests/data/real_labels.json`` labels runs of ``../shared`` (logs other people wrote, read in
place) from their curves; ``benchmarks/real_scorecard.py`` scores the report against them.  The
set must not score below the figure recorded in the labels file (``min_right``, measured, not a
wish: raise it when a fix lands), and a run labelled healthy may only get the false alarms the
file's ``known_misses`` document with their mechanism.  The scoring arithmetic and the labels
themselves are checked without ../shared.
"""

from __future__ import annotations

import pytest

from benchmarks.real_scorecard import (
    SHARED,
    Card,
    KnownMiss,
    Label,
    Outcome,
    floor,
    load_labels,
    present,
    render,
    score,
    score_held_out,
    validate,
)


def test_labels_are_well_formed():
    labels, known, doc = load_labels()
    assert validate(labels, known) == []
    sets = {lab.set for lab in labels}
    for figures in (doc["min_right"], doc["min_right_held_out"]):
        assert set(figures) == sets
        assert all(0 < figures[s] <= sum(lab.set == s for lab in labels) for s in sets)
    assert set(doc["calibration_sets"]) <= sets
    # the make-up issues 25 and 37 ask for: every usable run of ../shared (about 120 from 60
    # repositories), labelled before looking at verdicts; a third of them unhealthy or close
    assert len(labels) >= 119
    assert len({lab.repository for lab in labels}) >= 56
    assert 10 * sum(lab.verdict == "unhealthy" for lab in labels) >= 3 * len(labels)


def test_scoring_counts_verdict_must_and_never():
    healthy = Label("f", "a", "healthy", never=("oscillation",))
    sick = Label("f", "b", "unhealthy", must=("stagnation",), never=("oscillation",))
    other = Label("f", "c", "unhealthy", must=("kl_blowup",))
    card = Card(
        [
            Outcome(healthy, "unhealthy", ("entropy_collapse",)),  # false alarm, not a forbidden one
            Outcome(sick, "unhealthy", ("oscillation",)),  # misses stagnation, raises a forbidden symptom
            Outcome(other, "unhealthy", ("kl_blowup", "reward_hacking")),  # right: the extra counts neither way
            Outcome(Label("f", "d", "healthy"), None),  # not found: wrong
        ],
        [KnownMiss("f", "a", ("entropy_collapse",), "why")],
    )
    assert card.right == 1 and card.total == 4
    assert [o.label.run for o in card.wrong] == ["a", "b", "d"]
    assert card.outcomes[1].what_was_wrong() == "missed stagnation; false oscillation"
    assert [o.label.run for o in card.false_alarm_runs] == ["a"]
    assert card.unexplained_false_alarms() == []
    assert card.per_symptom() == {
        "entropy_collapse": (0, 1, 0),
        "kl_blowup": (1, 0, 0),
        "oscillation": (0, 1, 0),
        "stagnation": (0, 0, 1),
    }
    assert "**1/4**" in render(card)


def test_a_set_absent_from_shared_is_not_scored_and_its_figure_not_required(tmp_path):
    # the blind sets one session fetched live beside its checkout, not in every copy of ../shared
    (tmp_path / "corpus" / "a").mkdir(parents=True)
    (tmp_path / "realruns" / "real2" / "b").mkdir(parents=True)
    labels = [
        Label("corpus/a", "r", "healthy"),
        Label("realruns/real2/b", "r", "healthy"),
        Label("realruns/real5/c", "r", "unhealthy", must=("stagnation",)),
        Label("realruns/real2/missing", "r", "healthy"),  # a set that is here: a missing run is a miss
    ]
    here, absent = present(labels, tmp_path)
    assert [lab.folder for lab in here] == ["corpus/a", "realruns/real2/b", "realruns/real2/missing"]
    assert absent == ["realruns/real5"]
    figures = {"corpus": 3, "realruns/real2": 5, "realruns/real5": 7}
    assert floor(figures, [lab.set for lab in here]) == 8


@pytest.fixture(scope="module")
def card() -> Card:
    if not (SHARED / "corpus").is_dir() or not (SHARED / "realruns").is_dir():
        pytest.skip("../shared is absent")
    return score()


@pytest.mark.corpus
def test_every_labelled_run_is_found(card):
    # a run id that changes (discovery, naming) would silently turn a label into a miss
    assert [o.label.key for o in card.outcomes if not o.found] == []


@pytest.mark.corpus
def test_right_does_not_drop_below_the_recorded_figure(card):
    _, _, doc = load_labels()
    assert card.right >= floor(doc["min_right"], card.sets), render(card)


@pytest.mark.corpus
def test_held_out_right_does_not_drop_below_the_recorded_figure():
    """Leave-one-repository-out (issue 37): each repository judged with population limits
    measured without it."""
    if not (SHARED / "corpus").is_dir() or not (SHARED / "realruns").is_dir():
        pytest.skip("../shared is absent")
    _, _, doc = load_labels()
    held_out = score_held_out()
    assert held_out.right >= floor(doc["min_right_held_out"], held_out.sets), render(held_out)
    assert held_out.unexplained_false_alarms() == [], render(held_out)


@pytest.mark.corpus
def test_healthy_runs_get_only_the_documented_false_alarms(card):
    unexplained = [(o.label.folder, o.label.run, extra) for o, extra in card.unexplained_false_alarms()]
    assert unexplained == [], render(card)


@pytest.mark.corpus
def test_every_known_miss_is_still_raised(card):
    # a known miss the code no longer raises is a fix to record, not a false alarm to keep excusing
    _, known, _ = load_labels()
    raised = {o.label.key for o in card.false_alarm_runs}
    scored = {o.label.key for o in card.outcomes}
    assert [(k.folder, k.run) for k in known if (k.folder, k.run) in scored and (k.folder, k.run) not in raised] == []
