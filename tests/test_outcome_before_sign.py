"""Outcome before sign (issue 37): a warning rests on an outcome or a runaway, a sign alone is a note.

Each test builds its run at test time (synthetic series, or log files in ``tmp_path`` read by the
real readers) and checks one part of the contract: the engine's sign gate, runaways, placeholders,
the verdict, onsets, framework guesses, collapses at the edge, degenerate groups judged where
they stand, gradient baselines, task metrics as the outcome, and the population limits.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import ppo_doctor
from ppo_doctor.config import coerce
from ppo_doctor.results import Finding
from ppo_doctor.rules import population
from ppo_doctor.rules.base import Example, Rule
from ppo_doctor.rules.engine import run_rules
from ppo_doctor.rules.examples import example_run, flat, ramp, saturating, with_points
from ppo_doctor.verdict import verdict_for

N = 200
TOKEN_K3 = {"kl/ref": {"estimator": "k3", "reduction": "token_mean"}}


def findings(run, *codes):
    found, _ = run_rules(run, coerce({"select": list(codes)}))
    return found


def one(run, code) -> Finding:
    (f,) = [f for f in findings(run, code) if f.code == code]
    return f


def rising(n=N):
    return saturating(n, 0.1, 0.9, sd=0.02, seed=1)


def stuck(n=N):
    return flat(n, 0.2, 0.05, seed=2)


# -- the engine's gate ----------------------------------------------------------------------------
def test_a_sign_while_the_reward_rises_is_a_note_that_says_what_to_watch():
    clip = saturating(N, 0.05, 0.45, sd=0.02, seed=3)
    f = one(example_run(Example(series={"policy/clipfrac": clip, "reward/score": rising()}, framework="sb3")), "PD802")
    assert f.severity == "info" and f.basis == "sign"
    assert "a sign, not an outcome" in f.message and "watch" in f.message


def test_the_same_sign_while_the_reward_is_stuck_is_a_warning_resting_on_the_outcome():
    clip = saturating(N, 0.05, 0.45, sd=0.02, seed=3)
    f = one(example_run(Example(series={"policy/clipfrac": clip, "reward/score": stuck()}, framework="sb3")), "PD802")
    assert f.severity == "warning" and f.basis == "outcome"
    assert any(e.startswith("outcome: ") for e in f.evidence)


def test_a_sign_followed_by_a_fall_of_the_reward_is_kept():
    reward = np.r_[saturating(120, 0.1, 0.9, sd=0.02, seed=4), np.linspace(0.9, 0.3, 80)]
    approx = np.r_[flat(100, 0.01, 0.002, seed=5), flat(100, 0.2, 0.01, seed=6)]
    f = one(example_run(Example(series={"kl/old": approx, "reward/score": reward}, framework="sb3")), "PD803")
    assert f.severity != "info" and f.basis == "outcome"
    assert any("fell" in e for e in f.evidence)


def test_gradient_spikes_on_a_reward_stuck_from_the_start_are_a_note_not_an_explosion():
    # a GRPO run whose groups rarely differ: most norms are tiny, the odd batch with a signal is
    # 300x them, and the reward sits at the verifier's floor before and after (blind set real49)
    grad = with_points(np.abs(flat(N, 0.003, 0.001, seed=7)), {i: 0.8 for i in range(20, N, 9)})
    f = one(example_run(Example(series={"grad/norm": grad, "reward/score": flat(N, -0.1, 0.001, seed=8)})), "PD602")
    assert f.severity == "info" and "a sign, not gradient explosion" in f.message
    # the same spikes followed by a fall of a reward that had risen are kept
    fell = np.r_[saturating(120, 0.1, 0.9, sd=0.02, seed=4), np.linspace(0.9, 0.2, 80)]
    f = one(example_run(Example(series={"grad/norm": grad, "reward/score": fell})), "PD602")
    assert f.severity != "info" and f.basis == "outcome"


def test_a_sign_without_any_reward_is_a_note():
    clip = saturating(N, 0.05, 0.45, sd=0.02, seed=3)
    f = one(example_run(Example(series={"policy/clipfrac": clip}, framework="sb3")), "PD802")
    assert f.severity == "info" and "no reward logged" in f.message


def test_a_held_out_evaluation_that_rises_is_the_outcome_whatever_the_training_reward():
    steps = np.arange(0, N, 10)
    ev = (steps, np.linspace(0.3, 0.7, len(steps)) + np.random.default_rng(7).normal(0, 0.01, len(steps)))
    run = example_run(Example(series={"reward/score": stuck()}, eval_series={"reward/score": ev}, framework="trl_grpo"))
    f = one(run, "PD301")
    assert f.severity == "info" and "evaluation reward/score rose" in f.message


def test_every_builtin_rule_states_its_basis_and_a_rule_that_does_not_is_a_sign():
    from ppo_doctor.rules.registry import builtin_rules

    assert all("basis" in vars(r) for r in builtin_rules()), [r.code for r in builtin_rules() if "basis" not in vars(r)]

    class Quiet(Rule):
        code, name, symptom = "PD998", "quiet", "stagnation"

    assert Quiet.basis == "sign"
    with pytest.raises(TypeError, match="basis"):
        type("Bad", (Rule,), {"code": "PD997", "basis": "hunch"})


def test_an_approx_kl_negative_on_every_update_warns_only_where_the_reward_does_not_improve():
    # the estimate mirrors a small positive KL below 0 (new - old log-probabilities)
    kl = -saturating(N, 0.02, 0.05, sd=0.005, seed=4)
    stalled = one(example_run(Example(series={"kl/old": kl, "reward/score": stuck()})), "PD113")
    assert stalled.severity == "warning" and stalled.symptom == "negative_kl"
    assert f"negative on {N} of {N} updates" in stalled.message
    learning = one(example_run(Example(series={"kl/old": kl, "reward/score": rising()})), "PD113")
    assert learning.severity == "info" and "a sign, not an outcome" in learning.message
    # k1 noise of a KL near 0 is negative about half the time: no finding at all
    noise = np.random.default_rng(5).normal(0.0005, 0.003, N)
    assert not [f for f in findings(example_run(Example(series={"kl/old": noise, "reward/score": stuck()})), "PD113") if f.code == "PD113"]


# -- runaways -------------------------------------------------------------------------------------
def test_a_token_kl_that_levels_off_above_the_band_while_the_reward_rises_is_a_note():
    # TRL GRPOTrainer runs that learn level off at 0.5-1.1 nats per token (issue 37)
    kl = saturating(N, 0.0, 0.9, sd=0.03, seed=8)
    f = one(example_run(Example(series={"kl/ref": kl, "reward/score": rising()}, framework="trl_grpo", metric_info=TOKEN_K3)), "PD101")
    assert f.severity == "info" and f.basis == "sign"


def test_a_kl_beyond_every_healthy_run_is_a_runaway_even_while_the_reward_rises():
    kl = saturating(N, 0.0, 6.0, sd=0.1, seed=9)
    f = one(example_run(Example(series={"kl/ref": kl, "reward/score": rising()}, framework="trl_grpo", metric_info=TOKEN_K3)), "PD101")
    assert f.severity == "error" and f.basis == "runaway"
    assert f.observed["runaway_limit"] == population.runaway_limit("kl_ref_token")


def test_a_kl_still_climbing_at_the_end_is_a_runaway_warning():
    kl = np.r_[flat(100, 0.1, 0.01, seed=10), np.geomspace(0.35, 1.4, 100)]
    f = one(example_run(Example(series={"kl/ref": kl, "reward/score": rising()}, framework="trl_grpo", metric_info=TOKEN_K3, config={"beta": 0.04})), "PD101")
    assert f.severity == "warning" and f.basis == "runaway"


def test_population_limits_can_be_set_by_configuration():
    kl = saturating(N, 0.0, 6.0, sd=0.1, seed=9)
    run = example_run(Example(series={"kl/ref": kl, "reward/score": rising()}, framework="trl_grpo", metric_info=TOKEN_K3))
    found, _ = run_rules(run, coerce({"select": ["PD101"], "rules": {"kl-above-band": {"token_runaway": 50.0}}}))
    assert [f.severity for f in found] == ["info"]


# -- placeholders ---------------------------------------------------------------------------------
def test_a_constant_column_while_the_reward_moves_is_not_measured():
    run = example_run(Example(series={"kl/old": np.zeros(N), "policy/entropy": np.zeros(N), "reward/score": rising()}, framework="unknown"))
    found, na = run_rules(run)
    assert not [f for f in found if f.severity != "info" and f.symptom != "log_quality"]
    (note,) = [f for f in found if f.code == "PD906"]
    assert "not measured" in note.message and note.severity == "info"
    pd304 = next(x for x in na if x.code == "PD304")
    assert "constant placeholder" in pd304.missing[0]


def test_a_uniform_policy_entropy_is_a_measurement_not_a_placeholder():
    run = example_run(Example(series={"policy/entropy": np.full(N, np.log(7)), "reward/score": rising()}, framework="unknown"))
    assert not [f for f in findings(run, "PD906")]
    assert one(run, "PD305").basis == "outcome"


# -- verdict and onsets -------------------------------------------------------------------------------
def test_unknown_never_stands_above_a_warning():
    run = example_run(Example(series={"reward/score": np.r_[flat(10, 1.0, 0.01, seed=11), flat(8, 0.0, 0.01, seed=12)]}))
    warning = Finding(code="PD999", name="x", symptom="reward_collapse", severity="warning", metric="reward/score", message="m")
    assert verdict_for(run, [warning], [])[0] == "unhealthy"


def test_the_headline_step_is_where_the_condition_first_holds():
    kl = np.r_[flat(50, 2.0, 0.2, seed=13), np.linspace(2.0, 30.0, 50), flat(100, 35.0, 1.0, seed=14)]
    run = example_run(Example(series={"kl/ref": kl, "reward/score": stuck()}, metric_info={"kl/ref": {"estimator": "k1", "reduction": "seq_sum"}}))
    f = one(run, "PD101")
    assert f.start_step == f.threshold_step and f.start_step > 50
    assert "drifting from its baseline since step" in f.message


# -- edges ------------------------------------------------------------------------------------------
def test_a_decisive_fall_under_way_at_the_last_points_is_a_collapse():
    reward = np.r_[saturating(140, -300.0, 80.0, sd=4.0, seed=15), flat(45, 80.0, 4.0, seed=16), np.linspace(60.0, -140.0, 15)]
    f = one(example_run(Example(series={"reward/score": reward}, framework="sb3")), "PD204")
    assert f.severity != "info" and f.symptom == "reward_collapse"


def test_nearly_all_degenerate_groups_are_judged_where_the_run_stands():
    n = 60
    run = example_run(
        Example(
            series={"reward/zero_std_frac": np.clip(flat(n, 0.98, 0.01, seed=17), 0, 1), "reward/score": np.abs(flat(n, 0.01, 0.005, seed=18))},
            framework="trl_grpo",
        )
    )
    run.planned_steps = 400  # 60 of 400 planned steps: a trend would wait, this cannot improve
    f = one(run, "PD306")
    assert f.severity == "error" and "steps left in the plan cannot help" in " ".join(f.evidence)


def test_a_norm_measured_against_zero_advantage_steps_is_no_explosion():
    n = 100
    g = np.zeros(n)
    zs = np.ones(n)
    learned = np.arange(5, n, 9)
    g[learned] = np.abs(flat(len(learned), 0.12, 0.03, seed=19))
    zs[learned] = 0.75
    g[~np.isin(np.arange(n), learned)] = 1e-3  # the KL term's gradient alone
    run = example_run(Example(series={"grad/norm": g, "reward/zero_std_frac": zs, "reward/score": np.abs(flat(n, 0.02, 0.01, seed=20))}, framework="trl_grpo"))
    assert not [f for f in findings(run, "PD602") if f.severity != "info"]


def test_optimiser_steps_train_on_the_batch_of_the_last_rollout_logged_before_them():
    # TRL logs the reward once per generation and the norm on each of its 4 optimiser steps; the
    # steps of a degenerate rollout carry no policy gradient and set no level (blind set real49)
    rollouts = np.arange(1, 201, 4)
    signal = np.random.default_rng(21).random(len(rollouts)) < 0.3
    zs = np.where(signal, 0.0, 1.0)
    steps = np.arange(1, 201)
    per_step = np.repeat(signal, 4)
    g = np.where(per_step, np.abs(flat(200, 0.45, 0.15, seed=22)), np.abs(flat(200, 0.002, 0.0005, seed=23)))
    run = example_run(
        Example(
            series={"grad/norm": (steps, g), "reward/zero_std_frac": (rollouts, zs), "reward/score": (rollouts, saturating(50, 0.1, 0.6, sd=0.02, seed=24))},
            framework="trl_grpo",
        )
    )
    assert findings(run, "PD602") == []


def _growing_norm(n: int, growth: float, spikes: dict[int, float], seed: int) -> np.ndarray:
    """A gradient norm whose level grows geometrically ``growth``-fold over the run, with
    spikes (index -> value)."""
    level = 0.02 * np.geomspace(1.0, growth, n)
    return with_points(level * np.exp(flat(n, 0.0, 0.2, seed=seed)), spikes)


def _rising_reward(n: int) -> np.ndarray:
    return saturating(n, 0.05, 0.45, sd=0.03, seed=21)


def test_spikes_on_a_norm_whose_level_grew_tenfold_are_a_runaway():
    # the CS336 GRPO runs at lr 2e-5: the norm's level climbs 0.02 -> 1 while it spikes to 1e5
    n = 50
    grad = _growing_norm(n, 50.0, {30: 3.3e5, 49: 776.0}, seed=22)
    run = example_run(Example(series={"grad/norm": grad, "reward/score": _rising_reward(n)}))
    f = one(run, "PD602")
    assert f.severity != "info" and f.basis == "runaway"


def test_spikes_on_a_norm_that_keeps_its_level_are_a_sign():
    # the same spikes on a norm that ends where it started: bad batches clipping cuts down
    n = 50
    grad = _growing_norm(n, 1.0, {30: 3.3e5, 45: 776.0}, seed=23)
    run = example_run(Example(series={"grad/norm": grad, "reward/score": _rising_reward(n)}))
    assert one(run, "PD602").severity == "info"


def test_a_norm_that_grows_without_spikes_is_no_explosion():
    # a norm that grows 25x as the policy sharpens (an unclipped GRPO run that learns) and never
    # spikes orders of magnitude over its typical level
    n = 200
    grad = _growing_norm(n, 25.0, {}, seed=24)
    run = example_run(Example(series={"grad/norm": grad, "reward/score": _rising_reward(n)}))
    assert not [f for f in findings(run, "PD602") if f.severity != "info"]


# -- guesses ----------------------------------------------------------------------------------------
def _grpo_jsonl(path: Path, config: dict | None = None) -> Path:
    rng = np.random.default_rng(21)
    rows = [{"step": i + 1, "reward": float(0.2 + 0.003 * i + rng.normal(0, 0.02)), "reward_std": 0.3, "frac_reward_zero_std": 0.2,
             "completion_length": 40.0, "entropy": float(0.6 - 0.001 * i), "loss": 0.01, "learning_rate": 1e-6} for i in range(60)]
    path.mkdir(parents=True)
    (path / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    if config is not None:
        (path / "config.json").write_text(json.dumps(config))
    return path


def test_a_framework_guessed_from_metric_names_is_said_as_a_guess(tmp_path):
    (run,) = ppo_doctor.load_runs(_grpo_jsonl(tmp_path / "home-made"))
    assert run.framework == "trl_grpo" and run.framework_proof == ""
    assert "looks like" in run.by_design.get("critic", "")
    assert "TRL's default" not in " ".join(run.by_design.values())
    report = ppo_doctor.analyze(str(tmp_path / "home-made"))
    assert report.runs[0].to_dict()["framework_proof"] == ""


# -- the population ---------------------------------------------------------------------------------
def test_a_thin_population_sets_no_limit_and_the_fallback_applies():
    thin = population.table([population.Sample("a", {"kl_ref_token": 0.4}), population.Sample("a", {"kl_ref_token": 0.5})])
    assert "limit" not in thin["kl_ref_token"] and thin["kl_ref_token"]["runs"] == 2
    broad = population.table(population.Sample(r, {"clipfrac": x}) for r, x in (("a", 0.1), ("b", 0.2), ("c", 0.25)))
    assert broad["clipfrac"]["limit"] == pytest.approx(max(0.25, population.FLOORS["clipfrac"]))


def test_leave_one_repository_out_settings_come_from_the_table():
    from benchmarks.real_scorecard import population_config

    cfg = population_config({"clipfrac": {"limit": 0.7}})
    assert cfg["rules"]["clipfrac-high"]["runaway_clipfrac"] == 0.7
    assert cfg["rules"]["kl-above-band"]["token_runaway"] == population.FALLBACKS["kl_ref_token"]
    coerce(cfg)  # every parameter it sets exists


def test_the_shipped_population_matches_the_labelled_runs():
    from benchmarks.population import calibration, samples
    from benchmarks.real_scorecard import SHARED, load_labels, present

    labels, _, doc = load_labels()
    labels, absent = present(calibration(labels, doc), SHARED)
    if absent:
        pytest.skip(f"calibration sets absent from ../shared: {absent}")
    shipped_doc = json.loads(population.DATA.read_text())
    assert shipped_doc["sets"] == sorted(doc["calibration_sets"])
    table = population.table(s for _, s in samples(labels))
    shipped = shipped_doc["signs"]
    assert {k: v.get("limit") for k, v in table.items()} == pytest.approx({k: v.get("limit") for k, v in shipped.items()})


# -- live: what a prefix can and cannot confirm ----------------------------------------------------
def test_a_reward_that_has_not_risen_yet_confirms_no_sign_on_a_partial_run():
    """"Stuck" is an absence of progress, judged on the whole plan like PD301: on a prefix it
    does not make a sign a warning (two healthy TRL GRPO runs of the real-run set were stopped at
    their first check for a KL whose reward had not had time to rise)."""
    clip = saturating(N, 0.05, 0.45, sd=0.02, seed=3)
    partial = replace(example_run(Example(series={"policy/clipfrac": clip, "reward/score": stuck()}, framework="sb3")), planned_steps=4 * N, live=True)
    f = one(partial, "PD802")
    assert f.severity == "info" and "watching" in f.message and any(e.startswith("outcome: the reward is stuck") for e in f.evidence)
    # a decisive collapse after the sign is an outcome on a prefix too (PD204 judges it when it
    # holds); a fall short of one is watched, as PD204 watches it (it may still recover)
    approx = np.r_[flat(100, 0.01, 0.002, seed=5), flat(100, 0.2, 0.01, seed=6)]
    collapse = np.r_[saturating(120, 0.1, 0.9, sd=0.02, seed=4), flat(80, 0.1, 0.02, seed=7)]
    fell = replace(example_run(Example(series={"kl/old": approx, "reward/score": collapse}, framework="sb3")), planned_steps=4 * N, live=True)
    assert one(fell, "PD803").severity != "info"
    dip = np.r_[saturating(120, 0.1, 0.9, sd=0.02, seed=4), np.linspace(0.9, 0.5, 80)]
    dipped = replace(example_run(Example(series={"kl/old": approx, "reward/score": dip}, framework="sb3")), planned_steps=4 * N, live=True)
    f = one(dipped, "PD803")
    assert f.severity == "info" and "watching" in f.message and any(e.startswith("outcome: the reward fell") for e in f.evidence)
    # the same dip on a finished run is judged, and so it is on an offline log that stopped short
    # of its plan: that log is the run as it ended
    finished = replace(dipped, planned_steps=None, live=False)
    assert one(finished, "PD803").severity != "info"
    assert one(replace(dipped, live=False), "PD803").severity != "info"


def _live_collapse(reward_key: str) -> list[Finding]:
    """A Monitor told a 400-step plan, fed 200 steps of a reward that climbs to 100, falls to 20
    at step 120 and stays there, checked at the end of them."""
    monitor = ppo_doctor.Monitor(planned_steps=400)
    reward = np.r_[saturating(120, 0.0, 100.0, sd=0.5, seed=7), 20.0 + flat(80, 0.0, 0.5, seed=8)]
    for step, value in enumerate(reward, start=1):
        monitor.log(step, {reward_key: float(value), "time/total_timesteps": step} if reward_key.startswith("rollout/") else {reward_key: float(value)})
    return [f for f in monitor.check() if f.code == "PD204"]


def test_a_collapse_is_an_event_but_a_rolling_means_dip_waits_for_the_plan():
    """A decisive fall of a per-batch reward is judged when it holds; the same fall of SB3's
    rollout/ep_rew_mean, a mean of the last 100 episodes whose point-to-point noise understates
    how far it wanders, is watched (5 healthy SB3 runs of the real-run set were stopped live at
    dips they recovered from)."""
    (event,) = _live_collapse("reward")
    assert event.severity == "error"
    (watched,) = _live_collapse("rollout/ep_rew_mean")
    assert watched.severity == "info" and "watching" in watched.message


def test_a_fall_at_the_last_points_holds_from_the_last_stretch_below_the_mark():
    """One return per episode (a Monitor file) dips below the halfway mark now and then and
    comes back; five crashed episodes in a row at the last points are a fall under way since the
    first of them, not one held since the first dip, so it has not held for a window and stops
    no live run (blind set real28: a LunarLander DQN stopped live at such a burst, which then
    learned on to +96).  The last point back above the mark: no fall holds at the end."""
    from ppo_doctor.detect import peak_drop
    from ppo_doctor.rules.reward_progress import _falling_at_the_end

    rng = np.random.default_rng(3)
    v = np.r_[np.linspace(-150.0, -40.0, 60), np.full(200, -50.0)] + rng.normal(0.0, 15.0, 260)
    v[[120, 121, 180]] = -300.0  # dips below the mark it came back from
    burst = np.r_[v, [-440.0, -390.0, -385.0, -718.0, -711.0]]
    pd = peak_drop(np.arange(len(burst)), burst)
    edge = _falling_at_the_end(burst, pd)
    assert edge is not None and edge.fall_idx == len(burst) - 5 and edge.late < pd.mark
    back = np.r_[burst, [-45.0]]
    assert _falling_at_the_end(back, peak_drop(np.arange(len(back)), back)) is None


def test_a_fall_at_the_end_whose_peak_level_no_single_point_reached_is_judged_without_error():
    """The peak is the rolling level's, so no single point since it may sit above the halfway
    mark: the whole stretch since the peak is below it and no point lies before it (a CS285
    InvertedPendulum run replayed live raised a ValueError on an empty slice here)."""
    from ppo_doctor.detect import PeakDrop
    from ppo_doctor.rules.reward_progress import _falling_at_the_end

    v = np.r_[np.full(20, 1.0), np.full(20, 4.0), np.full(10, 0.5)]
    pd = PeakDrop(first=1.0, peak=5.0, peak_idx=25, late=0.5, window=5, noise_se=0.1, fall_idx=None, mark=4.5, recovered=False)
    edge = _falling_at_the_end(v, pd)
    assert edge is not None and edge.fall_idx == 25 and edge.late == 0.5


def test_a_sign_before_the_training_diverges_is_kept():
    # entropy to ~0 within 10 steps while the reward rises: a sign, until the run's loss and
    # gradient norm turn NaN and stay so (the weights are gone: numbers that break are an outcome)
    n = 60
    entropy = np.r_[np.linspace(1.7, 1e-6, 10), np.full(n - 10, 1e-20)]
    grad = np.r_[flat(49, 1.0, 0.1, seed=3), np.full(n - 49, np.nan)]
    base = {"reward/score": ramp(n, 0.3, 0.5, sd=0.05, seed=2), "policy/entropy": entropy}
    calm = one(example_run(Example(series={**base, "grad/norm": flat(n, 1.0, 0.1, seed=3)})), "PD701")
    assert (calm.severity, calm.basis) == ("info", "sign")
    broken = one(example_run(Example(series={**base, "grad/norm": grad})), "PD701")
    assert broken.severity != "info" and any("diverged" in e for e in broken.evidence)


def test_longer_answers_while_the_reward_collapses_are_not_hacking():
    # a reward that collapses while the answers grow to the length limit: the collapse is the
    # symptom (PD204); hacking is a reward bought, and this reward was lost
    n = 200
    reward = np.r_[saturating(60, 0.1, 0.6, sd=0.02, seed=5), np.full(n - 60, 0.0)]
    length = np.r_[flat(60, 350, 10, seed=6), flat(n - 60, 1010, 5, seed=7)]
    f = one(example_run(Example(series={"reward/score": reward, "len/response_mean": length})), "PD703")
    assert (f.severity, f.basis) == ("info", "sign") and "not reward hacking" in f.message


def test_a_running_best_is_no_evidence_that_the_task_improved():
    # a home-made GRPO loop logs best_answer_accuracy, the best validation accuracy so far: it
    # only rises, so it cannot veto a reward that collapsed
    n = 120
    reward = np.r_[saturating(50, 0.1, 0.4, sd=0.02, seed=8), np.full(n - 50, 0.0)]
    clip = np.r_[flat(55, 0.1, 0.01, seed=9), flat(n - 55, 0.9, 0.03, seed=10)]
    best = np.maximum.accumulate(np.r_[np.linspace(0.04, 0.48, 50), np.zeros(n - 50)])
    f = one(example_run(Example(series={"reward/score": reward, "policy/clipfrac": clip, "best_answer_accuracy": best})), "PD802")
    assert f.severity != "info" and not any("best_answer_accuracy" in e for e in [f.message, *f.evidence])


def test_a_self_play_rating_that_climbs_is_the_task_improving():
    # ML-Agents self-play: the reward against past selves settles near 0 by construction while
    # Self-play/ELO, the skill measure, climbs; a flat reward there is a note, not stagnation
    n = 120
    reward = flat(n, 0.2, 0.5, seed=30)
    elo = np.linspace(1190.0, 1280.0, n) + flat(n, 0.0, 3.0, seed=31)
    found = findings(example_run(Example(series={"reward/score": reward, "Self-play/ELO": elo})), "PD301")
    (f,) = [f for f in found if f.code == "PD301"]
    assert f.severity == "info" and "Self-play/ELO rose" in f.message
    # without the rating the same reward is stagnation
    (g,) = findings(example_run(Example(series={"reward/score": reward})), "PD301")
    assert g.severity == "warning"


def test_a_reward_that_rose_while_the_task_did_not_confirms_a_sign():
    # a question-only GRPO run: the format reward climbs while the accuracy it stands for holds;
    # the entropy falling is then no longer "confidence while the reward improves"
    n = 200
    reward = saturating(n, 0.2, 0.9, sd=0.05, seed=34)
    entropy = np.linspace(1.0, 0.05, n) + flat(n, 0.0, 0.01, seed=35)
    accuracy = flat(n, 0.66, 0.02, seed=36)
    f = one(example_run(Example(series={"reward/score": reward, "policy/entropy": entropy, "accuracy": accuracy})), "PD701")
    assert f.severity != "info" and "accuracy did not improve" in f.message
    # the same entropy beside an accuracy that climbs with the reward is a note
    rising = saturating(n, 0.3, 0.7, sd=0.02, seed=37)
    g = one(example_run(Example(series={"reward/score": reward, "policy/entropy": entropy, "accuracy": rising})), "PD701")
    assert g.severity == "info"


def test_a_reward_term_named_like_a_task_metric_is_no_evidence_that_the_task_improved():
    # legged_gym / Isaac Gym log each reward term as Episode/rew_<term>; rew_dof_acc is the joint
    # acceleration penalty shrinking, not an accuracy: a reward stuck where it began stays stagnation
    n = 120
    reward = flat(n, -2500.0, 300.0, seed=32)
    penalty = np.linspace(-1.3e-5, -7.7e-6, n) + flat(n, 0.0, 1e-7, seed=33)
    (f,) = findings(example_run(Example(series={"reward/score": reward, "Episode/rew_dof_acc": penalty})), "PD301")
    assert f.severity == "warning" and "rew_dof_acc" not in f.message
    # the same course under a task metric's name is the task improving
    (g,) = findings(example_run(Example(series={"reward/score": reward, "eval/accuracy": penalty})), "PD301")
    assert g.severity == "info" and "eval/accuracy rose" in g.message


def test_an_entropy_that_began_near_deterministic_has_no_collapse_to_report():
    # a run initialised from a trained policy: its entropy is 0.04 nats at the first points and
    # ends at 0.012; a 70 % fall of almost nothing, while the noisy reward does not rise
    n = 120
    reward = flat(n, 5.0, 30.0, seed=32)
    entropy = np.r_[np.full(20, 0.042), np.linspace(0.042, 0.012, n - 40), np.full(20, 0.012)] + flat(n, 0.0, 0.001, seed=33)
    (f,) = findings(example_run(Example(series={"reward/score": reward, "policy/entropy": entropy})), "PD701")
    assert f.severity == "info" and "near-deterministic from the log's start" in " ".join(f.evidence)
    # the same fall from a policy that began uncertain is still judged against the reward
    (g,) = findings(example_run(Example(series={"reward/score": reward, "policy/entropy": entropy * 20})), "PD701")
    assert g.severity != "info"


def test_an_entropy_that_collapsed_inside_the_first_window_began_high():
    # an A2C policy deterministic from its third update on (blind set real46): its first window
    # is already at 1e-5, but its first points were 0.73 and 0.69; with the reward sinking to
    # where it stays, that is a collapse, not a run that began near-deterministic
    n = 200
    entropy = np.r_[0.73, 0.69, np.full(n - 2, 1e-5)] + flat(n, 0.0, 1e-6, seed=38)
    reward = np.r_[np.linspace(-300.0, -620.0, 20), np.full(n - 20, -620.0)] + flat(n, 0.0, 3.0, seed=39)
    (f,) = findings(example_run(Example(series={"reward/score": reward, "policy/entropy": entropy})), "PD701")
    assert f.severity != "info" and "(0.69 ->" in f.message
    assert "near-deterministic from the log's start" not in " ".join(f.evidence)


def test_gradients_that_vanish_after_a_collapse_are_not_stagnation():
    # the reward rose, then fell to 0 for good; every group then has zero advantage and the
    # gradient norm goes to 0: the collapse's aftermath, not a run that never learned
    n = 120
    reward = np.r_[saturating(60, 0.1, 0.4, sd=0.02, seed=11), np.full(n - 60, 0.0)]
    grad = np.r_[flat(60, 0.2, 0.02, seed=12), np.zeros(n - 60)]
    found = findings(example_run(Example(series={"reward/score": reward, "grad/norm": grad})), "PD302", "PD204")
    assert {(f.code, f.severity) for f in found if f.severity != "info"} == {("PD204", "error")}
    (vanish,) = [f for f in found if f.code == "PD302"]
    assert "not stagnation" in vanish.message


def test_a_far_spike_the_improving_reward_comes_back_from_is_a_sign():
    # a heavy-tailed episode score (a DQN's Tetris score, a drone's return): single episodes far
    # beyond the range of the others while the policy improves; the reward came back, nothing
    # grew without bound, and nothing got worse after it
    reward = with_points(saturating(300, 0.0, 10.0, sd=0.5, seed=14), {150: 60.0, 230: 70.0})
    f = one(example_run(Example(series={"reward/score": reward})), "PD201")
    assert (f.severity, f.basis) == ("info", "sign") and "a sign, not an outcome" in f.message
    # the same spikes before a fall are kept, at the error their distance earns
    fallen = np.r_[reward[:260], np.full(40, 1.0) + flat(40, 0.0, 0.5, seed=15)]
    kept = one(example_run(Example(series={"reward/score": fallen})), "PD201")
    assert (kept.severity, kept.basis) == ("error", "outcome")


def test_a_spike_far_beyond_the_range_seen_so_far_is_watched_on_a_prefix():
    # one summary far above the range, then the reward falls: an error on the finished run, but on a prefix
    # (a live check) the range the spike is judged against has not been seen in full
    reward = with_points(np.r_[saturating(120, 0.0, 1.0, sd=0.05, seed=13), flat(80, 0.2, 0.05, seed=14)], {121: 4.0})
    run = example_run(Example(series={"reward/score": reward}))
    assert one(run, "PD201").severity == "error"
    partial = one(replace(run, planned_steps=800, live=True), "PD201")
    assert partial.severity == "info" and "watching" in partial.message


def test_spikes_on_a_reward_that_never_rose_are_no_damage():
    # rare successes of a sparse task on a reward that never rises: the run stagnates (PD301's
    # symptom); the spikes broke no level it had, so they are a note
    reward = with_points(flat(200, 0.0, 0.0005, seed=15), {50: 0.05, 120: 0.06, 170: 0.05})
    f = one(example_run(Example(series={"reward/score": reward})), "PD201")
    assert f.severity == "info" and "a sign, not reward spike" in f.message


def test_a_fall_at_the_end_longer_than_its_edge_points_is_a_collapse():
    """A collapse in the last 6 % of a run (a SAC Ant whose test return fell 5,800 -> about -1,000
    over its last 43 of 750 epochs, blind set real46): shorter than a window, so judged on the last
    points, and longer than those points, so its own early points are lower than their median.
    The lowest level since the peak is judged against the points before the last stretch."""
    from ppo_doctor.detect import peak_drop
    from ppo_doctor.rules.reward_progress import _falling_at_the_end

    rng = np.random.default_rng(5)
    v = np.r_[np.linspace(1500.0, 5800.0, 200), np.full(507, 5800.0) + rng.normal(0.0, 300.0, 507), -1100.0 + rng.normal(0.0, 500.0, 43)]
    pd = peak_drop(np.arange(len(v)), v)
    edge = _falling_at_the_end(v, pd)
    assert edge is not None and edge.fall_idx == 707 and edge.late < 0
