"""Where a run stands (issue 24): the plan read from the log or the caller, trend rules that wait for
it, partial runs said as such, live warnings said once two checks hold them, and the doctor's own
files never read as logs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ppo_doctor
from ppo_doctor import Monitor
from ppo_doctor.canonical.metrics.plan import planned_length, warmup_length
from ppo_doctor.monitor import Announcer
from ppo_doctor.results import Finding
from ppo_doctor.rules import registry
from ppo_doctor.rules.base import Example
from ppo_doctor.config import coerce
from ppo_doctor.rules.engine import run_rules
from ppo_doctor.verdict import verdict_for
from ppo_doctor.rules.examples import example_run, flat, ramp
from ppo_doctor.standing import Standing


# -- the plan ---------------------------------------------------------------------------------
def test_standing_share_partial_fair_and_text() -> None:
    s = Standing(done=40, first=1, planned=200, planned_from="max_steps", live=True)
    assert s.partial and not s.finished and s.share == pytest.approx(39 / 199)
    assert not s.fair() and s.fair(0.15)
    # an offline log stopped short of its plan is the run as it ended: judged where it stands
    assert s._replace(live=False).partial and s._replace(live=False).fair()
    assert s.describe() == "40 of 200 planned steps (20%)"
    done = Standing(done=199, first=1, planned=200)
    assert done.finished and not done.partial and done.fair()
    # no plan: an offline log is taken as finished, a live one is not judged yet
    assert Standing(done=40).fair() and not Standing(done=40, live=True).fair()
    assert Standing(done=40, live=True).describe() == "step 40, planned length unknown"
    # a log counting from 0 finishes at planned - 1 (a 50-step loop's last step is 49), one
    # counting from 1 at planned
    assert Standing(done=49, first=0, planned=50).finished and not Standing(done=48, first=0, planned=50).finished
    assert not Standing(done=49, first=1, planned=50).finished
    # warm-up: the share of the plan counts from its end
    assert not Standing(done=60, first=1, planned=100, warmup=50, live=True).fair(0.5)
    assert Standing(done=75, first=1, planned=100, warmup=50, live=True).fair(0.5)


@pytest.mark.parametrize(
    ("flat_cfg", "want"),
    [
        ({"max_steps": 200}, (200, "max_steps")),
        ({"max_steps": -1, "num_train_epochs": 3}, (None, "")),  # HF sized in epochs
        ({"cursor.max_steps": 4}, (None, "")),  # an environment's episode limit is not the run's plan
        ({"total_timesteps": "1e6"}, (1_000_000, "total_timesteps")),
        ({"trainer.total_training_steps": None, "total_timesteps": 5000}, (5000, "total_timesteps")),
    ],
)
def test_planned_length_reads_exact_keys(flat_cfg: dict, want: tuple) -> None:
    assert planned_length(flat_cfg) == want


def test_warmup_from_steps_or_ratio() -> None:
    assert warmup_length({"warmup_steps": 10}, 200) == 10
    assert warmup_length({"warmup_ratio": 0.1}, 200) == 20
    assert warmup_length({"warmup_ratio": 0.1}, None) == 0


# -- trend rules wait for the plan ------------------------------------------------------------
def _flat_reward_run(n: int, planned: int | None, live: bool = False):
    run = example_run(Example(series={"reward/score": flat(n, 0.5, 0.3, seed=19), "kl/ref": flat(n, 0.01, 0.005, seed=20)}, config={"lr": 1e-10}))
    run.planned_steps, run.planned_from, run.live = planned, "max_steps" if planned else "", live
    return run


def test_an_absence_of_progress_on_a_partial_run_is_a_note_that_says_when_it_is_judged() -> None:
    run = _flat_reward_run(40, planned=200, live=True)
    findings, na = run_rules(run)
    pd301 = [f for f in findings if f.code == "PD301"]
    assert [f.severity for f in pd301] == ["info"]
    assert "watching: only 39 of 200 planned steps so far; judged from step 200" in pd301[0].message
    verdict, reason = verdict_for(run, findings, na)
    # beside the error that makes it unhealthy, the reason does not defer to the plan (issue 41)
    assert reason.endswith("partial run: 39 of 200 planned steps (20%)")
    healthy_reason = verdict_for(run, [f for f in findings if f.code != "PD303"], na)[1]
    assert healthy_reason.endswith("partial run: 39 of 200 planned steps (20%), an absence of progress is judged once it reaches its plan")
    # the event rule is not held back: an LR of 1e-10 is a fact at once
    assert [(f.code, f.severity) for f in findings if f.code == "PD303"] == [("PD303", "error")]
    assert verdict == "unhealthy"
    # the same points as a finished run: the rule judges them
    done, _ = run_rules(_flat_reward_run(40, planned=None), coerce({}))
    assert [f.severity for f in done if f.code == "PD301"] == ["error"]
    # and as an offline log that stopped at 39 of 200 planned steps: the run as it ended, judged
    # where it stands, and the reason says how far it got
    stopped = _flat_reward_run(40, planned=200)
    found, na = run_rules(stopped)
    assert [f.severity for f in found if f.code == "PD301"] == ["error"]
    reason = verdict_for(stopped, [f for f in found if f.code != "PD303"], na)[1]
    assert reason.endswith("partial run: 39 of 200 planned steps (20%), judged where it stopped (`ppo-doctor watch` follows a run still training)")


def test_fair_share_is_a_rule_parameter_the_config_sets() -> None:
    run = _flat_reward_run(200, planned=400, live=True)
    assert [f.severity for f in run_rules(run)[0] if f.code == "PD301"] == ["info"]
    early = run_rules(run, coerce({"rules": {"reward-not-improving": {"fair_share": 0.4}}}))[0]
    assert [f.severity for f in early if f.code == "PD301"] == ["error"]


def test_every_rule_says_its_kind_of_evidence() -> None:
    for rule in registry.all_rules():
        assert rule.evidence in ("event", "trend")
        # a trend rule waits for its fair share; an event rule that judges some of its findings
        # as a trend (PD204's falls short of decisive, PD306 short of nearly all groups) has the
        # parameter too, and says which are which
        assert "fair_share" in rule.params or rule.evidence == "event", rule.code
        if "fair_share" in rule.params:
            assert "**Evidence.**" in (rule.__doc__ or ""), rule.code


def test_a_live_run_without_a_plan_holds_trends_until_it_ends() -> None:
    mon = Monitor(run_id="t", hparams={"learning_rate": 1e-10})
    for step, (r, k) in enumerate(zip(flat(100, 0.5, 0.3, seed=19), flat(100, 0.01, 0.005, seed=20))):
        mon.log(step, {"objective/scores": r, "objective/kl": k})
    mon.check()
    assert {f.code: f.severity for f in mon.last_findings}.get("PD301") == "info"
    assert "judged when it ends" in next(f.message for f in mon.last_findings if f.code == "PD301")
    # the report is the run as it stands, ended: judged in full (== analyze of the same points)
    assert {f.code: f.severity for f in mon.report().runs[0].findings}["PD301"] == "error"


def test_monitor_planned_steps_reaches_the_json() -> None:
    mon = Monitor(run_id="t", planned_steps=200)
    for step in range(1, 41):
        mon.log(step, {"objective/scores": 0.5, "objective/kl": 0.01})
    doc = mon.report().runs[0].to_dict()
    assert doc["standing"] == {"steps_done": 40, "planned_steps": 200, "partial": True, "live": False, "planned_from": "Monitor(planned_steps)"}
    with pytest.raises(ValueError):
        Monitor(planned_steps=0)


def test_sustained_stretches_are_judged_on_the_planned_run() -> None:
    """Three points above the band at the start of a 200-step plan are not "sustained for 5 % of
    the run" (the corpus KL sweep's beta 0.2 runs rise above their band at step 20 of 200 and come
    back): on 30 points with a 200-step plan the window is the plan's."""
    kl = np.concatenate([ramp(20, 0.0, 9.0, seed=3), [14.0, 15.0, 14.0], ramp(7, 9.0, 8.0, seed=4)])
    ex = Example(series={"kl/ref": kl, "reward/score": flat(30, 1.0, 0.1)}, metric_info={"kl/ref": {"estimator": "k1", "reduction": "seq_sum"}})
    run = example_run(ex)
    assert any(f.code == "PD101" for f in run_rules(run)[0])  # as a finished 30-step run
    run.planned_steps = 200
    assert not [f for f in run_rules(run)[0] if f.code == "PD101" and f.severity != "info"]


def test_a_jump_at_the_last_points_is_not_yet_a_spike() -> None:
    base = flat(60, 0.3, 0.05, seed=7)
    edge = np.concatenate([base, [3.0]])
    back = np.concatenate([base, [3.0, 0.31, 0.29, 0.3]])
    assert not [f for f in run_rules(example_run(Example(series={"reward/score": edge})), coerce({}))[0] if f.code == "PD201"]
    assert [f.code for f in run_rules(example_run(Example(series={"reward/score": back})), coerce({}))[0] if f.code == "PD201"] == ["PD201"]


# -- announcements ----------------------------------------------------------------------------
def _f(code: str, severity: str, start: int, end: int) -> Finding:
    return Finding(code=code, name="x", symptom="reward_spike", severity=severity, metric="reward/score", message="m", start_step=start, end_step=end)


def test_a_warning_is_said_once_two_checks_hold_it_an_error_at_once() -> None:
    a = Announcer()
    assert a.update([_f("PD201", "warning", 10, 12)]) == []
    assert [f.start_step for f in a.update([_f("PD201", "warning", 10, 13)])] == [10]
    assert a.update([_f("PD201", "warning", 10, 14)]) == []  # said already
    # a warning seen once and gone at the next check is never said
    assert a.update([_f("PD201", "warning", 40, 41)]) == [] and a.update([]) == []
    assert [f.severity for f in a.update([_f("PD601", "error", 50, 60)])] == ["error"]
    # the run ended: a pending warning is said, nothing can confirm it later
    assert [f.start_step for f in a.update([_f("PD201", "warning", 80, 81)], final=True)] == [80]


# -- the doctor's own output ------------------------------------------------------------------
def test_the_doctor_never_reads_its_own_output(tmp_path: Path, sample_logs: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    state = json.loads((sample_logs / "healthy-s1" / "trainer_state.json").read_text())
    state["log_history"].insert(20, {"step": 20, "ppo_doctor": "WARNING PD301 reward-not-improving ..."})
    (out / "trainer_state.json").write_text(json.dumps(state, indent=2))
    report = ppo_doctor.analyze(out)
    from ppo_doctor.report import render

    (out / "ppo-doctor.json").write_text(render(report, "json"))
    (out / "ppo-doctor.html").write_text(render(report, "html"))
    (out / "saved-report.json").write_text(render(report, "json"))  # a JSON report under another name
    again = ppo_doctor.analyze(tmp_path)
    assert not again.errors and len(again.runs) == 1
    assert not [w for w in again.runs[0].run.warnings if "ppo_doctor" in w or "repeats an earlier step" in w]
    assert again.runs[0].run.files == [str(out / "trainer_state.json")]


def test_a_linear_decay_that_has_not_reached_0_gives_the_plan() -> None:
    from ppo_doctor.canonical.metrics.plan import planned_from_lr

    steps = np.arange(1, 81)
    # HF get_linear_schedule_with_warmup: 10 warm-up steps, then down to 0 at step 200 (killed at 80)
    hf = np.where(steps < 10, 5e-5 * steps / 10, 5e-5 * (200 - steps) / 190)
    assert planned_from_lr(steps, hf) == 200
    assert planned_from_lr(steps, np.full(80, 3e-4)) is None  # constant: no end to read
    # a constant rate over SB3's 2048-step rollouts fits a line of slope ~-1e-25 to float rounding,
    # whose "end" (1e22) is no step count: still no plan (real22's BipedalWalker run)
    sb3 = np.arange(4096, 501761, 2048)
    assert planned_from_lr(sb3, np.full(len(sb3), 3e-4)) is None
    cosine = 5e-5 * 0.5 * (1 + np.cos(np.pi * steps / 200))
    assert planned_from_lr(steps, cosine) is None  # not a line: not guessed
    done = 5e-5 * (81 - steps) / 80  # reached its end: nothing ahead
    assert planned_from_lr(steps, done) is None
    # a rate logged before its step reaches 0 one step after the last update: the run is complete
    updates = np.arange(1, 33)
    assert planned_from_lr(updates, 1e-6 * (33 - updates) / 32) is None
    assert planned_from_lr(updates, 1e-6 * (35 - updates) / 34) == 35  # three steps short: a plan ahead
    noisy = hf * (1 + np.random.default_rng(0).normal(0, 0.01, 80))
    assert planned_from_lr(steps, noisy) is None  # a schedule is computed, not noisy


# -- stop conditions that could never fire --------------------------------------------------
@pytest.mark.parametrize("good", ["error", "warning", "nan", "kl_blowup", "PD1", "PD601", "reward-not-improving", ["error", "PD6"]])
def test_a_stop_condition_that_can_fire_is_accepted(good) -> None:
    from ppo_doctor.monitor import check_stop_on

    check_stop_on(good)


@pytest.mark.parametrize(("bad", "hint"), [("Error", "did you mean 'error'?"), ("kl_blow_up", ""), ("PD999", ""), (["error", "NaN"], "did you mean 'nan'?")])
def test_a_stop_condition_that_can_never_fire_is_refused(bad, hint) -> None:
    from ppo_doctor.monitor import check_stop_on

    with pytest.raises(ValueError, match="matches no finding") as exc:
        check_stop_on(bad)
    assert hint in str(exc.value)


@pytest.mark.parametrize("step", [2**63, -(2**63) - 1, 1.5, float("nan"), float("inf"), "x", True])
def test_the_monitor_refuses_a_step_that_is_not_an_int64(step) -> None:
    mon = Monitor()
    with pytest.raises(ValueError, match="is not an integer within int64"):
        mon.log(step, {"loss": 1.0})
    mon.log(np.int64(3), {"loss": 1.0})
    mon.log(4.0, {"loss": 1.0})  # an integral float is a step
    assert mon.last_step == 4
