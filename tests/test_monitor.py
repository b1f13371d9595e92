"""ppo_doctor.Monitor: lossless columnar storage, offline-equal reports, stable announcements."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ppo_doctor
from ppo_doctor import Monitor
from ppo_doctor.results import Finding
from ppo_doctor.monitor import as_number, matches, replay
from ppo_doctor.run import Run

# The parts of a run's JSON that depend on the points and the config, not on the files read.
COMPARED = ("framework", "steps", "step_range", "points", "metrics", "unmapped", "config", "verdict", "verdict_reason", "symptoms", "findings", "causes", "not_applicable")


@pytest.mark.parametrize("name", ["healthy-s1", "kl-coef-zero", "min-length", "lr-x100", "hackable-reward"])
def test_replaying_a_finished_run_gives_the_offline_report(sample_logs: Path, name: str) -> None:
    offline = ppo_doctor.analyze(sample_logs / name)
    assert len(offline.runs) == 1
    off = offline.runs[0]
    mon, _ = replay(off.run, check_every=10)  # checks on the way must not change the end
    live = mon.report()
    assert len(live.runs) == 1
    got, want = live.runs[0].to_dict(), off.to_dict()
    assert {k: got[k] for k in COMPARED} == {k: want[k] for k in COMPARED}
    assert mon.points == len(off.run.frame)


def test_points_are_kept_losslessly_in_columns() -> None:
    """NaN/Inf kept, duplicates kept (last wins in series), a sparse metric, HF's split log calls."""
    mon = Monitor(run_id="t")
    mon.log(1, {"loss": 1.0, "grad_norm": 2.0, "learning_rate": 1e-5, "note": "text", "flag": True})
    mon.log(1, {"eval_loss": 0.5})  # same step, other keys: joins the row (HF logs eval separately)
    mon.log(2, {"loss": float("nan"), "grad_norm": float("inf")})
    mon.log(2, {"loss": 0.7})  # a re-log of step 2: a second point, not an overwrite
    for s in range(3, 200):
        mon.log(s, {"loss": 1.0 / s, "grad_norm": 1.0})
    assert mon.points == 3 + 1 + 2 + 1 + 2 * 197
    raw = mon.raw_run()
    by_tag = {s.tag: s for s in raw.series}
    assert set(by_tag) == {"loss", "grad_norm", "learning_rate"} and [s.tag for s in raw.eval_series] == ["eval_loss"]
    np.testing.assert_array_equal(by_tag["loss"].steps[:4], [1, 2, 2, 3])
    assert np.isnan(by_tag["loss"].values[1]) and np.isinf(by_tag["grad_norm"].values[1])
    assert by_tag["learning_rate"].steps.tolist() == [1]
    run = mon.run()
    assert run.mapping["loss"] == "loss/total" and run.series("loss/total").loc[2] == 0.7


def test_values_from_numpy_and_torch_like_objects() -> None:
    assert as_number(np.float32(1.5)) == 1.5 and as_number(np.array([2.0])) == 2.0
    assert as_number(np.array([1.0, 2.0])) is None and as_number("1.0") is None and as_number(True) is None
    assert as_number(None) is None


def test_memory_stays_within_twice_the_raw_values() -> None:
    """Column capacity against 8 bytes a logged value, at every step of a 30-metric run."""
    mon = Monitor()
    tags = [f"m{i}" for i in range(30)]
    worst = 0.0
    for step in range(3000):
        mon.log(step, dict.fromkeys(tags, 0.5))
        if step >= 100:
            worst = max(worst, mon.nbytes / (8 * mon.points))
    assert worst <= 2.0


def _kl_run_rows(n: int, blowup_at: int) -> list[dict[str, float]]:
    rng = np.random.default_rng(0)
    return [
        {
            "objective/kl": 0.5 + 0.05 * rng.normal() + (2.0 * (s - blowup_at) if s >= blowup_at else 0.0),
            "objective/scores": 0.2 + s / (2 * n) + 0.02 * rng.normal(),
            "policy/entropy_avg": 1.6 + 0.02 * rng.normal(),
        }
        for s in range(n)
    ]


def test_check_announces_new_and_changed_findings_once() -> None:
    mon = Monitor()
    said: list[tuple[int, Finding]] = []
    for step, row in enumerate(_kl_run_rows(150, 40)):
        mon.log(step, row)
        if step % 10 == 9:
            said.extend((step, f) for f in mon.check())
    keys = [(f.code, f.metric, f.start_step, f.severity) for _, f in said]
    assert len(keys) == len(set(keys))  # nothing said twice
    pd101 = [(s, f) for s, f in said if f.code == "PD101"]
    assert pd101 and 40 <= pd101[0][0] <= 60  # fired within two checks of crossing the band
    assert mon.check() == []  # no new data, nothing new to say
    first = pd101[0][1]
    assert first.start_step is not None and abs(first.start_step - 40) <= 5


def test_stop_on_matches_severities_symptoms_and_codes() -> None:
    f = Finding(code="PD101", name="kl-above-band", symptom="kl_blowup", severity="error", metric="kl/ref", message="")
    w = Finding(code="PD301", name="reward-not-improving", symptom="stagnation", severity="warning", metric="reward/score", message="")
    assert matches(f, "error") and not matches(w, "error") and matches(w, "warning")
    assert matches(f, ["kl_blowup"]) and matches(f, "PD1") and matches(f, "kl-above-band") and not matches(w, ["PD1", "nan"])
    assert not matches(f, None)


def test_report_equals_analyze_of_the_same_points(tmp_path: Path) -> None:
    """Written as JSONL and read back offline: the same report as the Monitor's."""
    import json

    mon = Monitor(hparams={"kl_coef": 0.05}, run_id="r")
    path = tmp_path / "r" / "metrics.jsonl"
    path.parent.mkdir()
    (tmp_path / "r" / "config.json").write_text(json.dumps({"kl_coef": 0.05}))
    with open(path, "w") as fh:
        for step, row in enumerate(_kl_run_rows(120, 50), start=1):
            mon.log(step, row)
            fh.write(json.dumps({"step": step, **row}) + "\n")
    got = mon.report().runs[0].to_dict()
    want = ppo_doctor.analyze(tmp_path / "r").runs[0].to_dict()
    assert {k: got[k] for k in COMPARED} == {k: want[k] for k in COMPARED}


def test_memory_follows_the_points_not_names_times_rows() -> None:
    """Per-prompt evaluation names logged once each (issue 28): a column is as long as its own
    rows, so 5,000 once-logged names beside two dense metrics stay a few bytes a point."""
    mon = Monitor()
    for step in range(5000):
        mon.log(step, {"loss": 0.5, "reward": 1.0, f"eval/prompt_{step}/score": 0.1})
    assert mon.points == 15000
    assert mon.nbytes <= 12 * 8 * mon.points  # was names x rows: ~110 MB here, ~0.5 MB now
    raw = mon.raw_run()
    assert sum(len(s) for s in raw.series + raw.eval_series) == 15000


def test_two_threads_logging_lose_no_point() -> None:
    import threading

    mon = Monitor()

    def feed(offset: int) -> None:
        for step in range(offset, offset + 4000):
            mon.log(step, {f"t{offset}": float(step)})

    threads = [threading.Thread(target=feed, args=(k * 100_000,)) for k in range(2)]
    for t in threads:
        t.start()
    for _ in range(3):
        mon.raw_run()  # reads while the columns grow
    for t in threads:
        t.join()
    assert mon.points == 8000
    by_tag = {s.tag: s for s in mon.raw_run().series}
    assert sorted(by_tag) == ["t0", "t100000"]
    assert all(len(s) == 4000 and np.array_equal(s.values, s.steps.astype(float)) for s in by_tag.values())


def test_a_live_alert_on_a_classic_run_names_the_classic_fix_first():
    # the ranking puts classic causes (ent-coef-too-low) in place of the LLM ones a rule names
    # (kl-coef-too-low); the alert's fix follows the ranking, not the rule's own cause list
    import numpy as np

    from ppo_doctor.analyze import analyze_run
    from ppo_doctor.monitor import describe, top_fix
    from ppo_doctor.rules.base import Example
    from ppo_doctor.rules.examples import example_run

    rewards = np.random.default_rng(0).normal(0, 1, 200)
    entropy = np.r_[np.linspace(1.2, 0.01, 60), np.full(140, 0.005)]
    rr = analyze_run(example_run(Example(series={"reward/score": rewards, "policy/entropy": entropy}, framework="sb3")))
    collapse = next(f for f in rr.findings if f.code == "PD701")
    assert "ent-coef-too-low" not in collapse.causes and rr.causes[0].id == "ent-coef-too-low"
    assert "PD701" in rr.causes[0].supported_by
    assert top_fix(collapse, rr.causes) == rr.causes[0].fixes[0]
    assert "ent_coef" in describe(collapse, rr.causes)
