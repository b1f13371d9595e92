"""Issue 38: the three GRPO questions, on logs written in each framework's own metric names and read
by the real readers (``ppo_doctor.analyze`` on files under tmp_path).

* rising entropy (PD704): TRL ``trainer_state.json`` (``entropy``, ``reward``) and veRL's file
  logger JSONL (``actor/entropy``, ``critic/score/mean``);
* sampler/trainer mismatch (PD805): TRL ``sampling/sampling_logp_difference/mean`` and
  ``sampling/importance_sampling_ratio/mean``, veRL ``rollout_corr/k3_kl`` and
  ``rollout_corr/rollout_is_mean``, OpenRLHF ``logprobs_diff``;
* reward-component gaming (PD207): TRL ``rewards/<name>/mean`` with and without ``reward_weights``.

Each has its healthy counterpart with the same metrics, which must get no warning.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import ppo_doctor
from ppo_doctor.rules.examples import flat, ramp, saturating

N = 120


def trl_state(path: Path, series: dict[str, np.ndarray], max_steps: int = N) -> Path:
    """TRL's ``trainer_state.json``: one ``log_history`` row per step under TRL's own keys."""
    rows = [{"step": i + 1, "epoch": (i + 1) / max_steps, **{k: float(v[i]) for k, v in series.items()}} for i in range(len(next(iter(series.values()))))]
    path.mkdir(parents=True, exist_ok=True)
    f = path / "trainer_state.json"
    f.write_text(json.dumps({"global_step": len(rows), "max_steps": max_steps, "log_history": rows}))
    return f


def jsonl(path: Path, series: dict[str, np.ndarray], *, verl: bool = False, config: dict | None = None, name: str = "metrics.jsonl") -> Path:
    """A JSONL log: veRL's file logger (``{"step": n, "data": {...}}``) or one flat row per step;
    ``config`` is written beside it as ``args.json``."""
    path.mkdir(parents=True, exist_ok=True)
    n = len(next(iter(series.values())))
    lines = []
    for i in range(n):
        row = {k: float(v[i]) for k, v in series.items()}
        lines.append(json.dumps({"step": i + 1, "data": row} if verl else {"step": i + 1, **row}))
    f = path / name
    f.write_text("\n".join(lines) + "\n")
    if config is not None:
        (path / "args.json").write_text(json.dumps(config))
    return f


def findings(path: Path, code: str, config: dict | None = None) -> list:
    (run,) = ppo_doctor.analyze(str(path), config).runs
    return [f for f in run.findings if f.code == code]


def grpo(reward: np.ndarray, **more: np.ndarray) -> dict[str, np.ndarray]:
    """The metrics every TRL GRPO log has, plus ``more``."""
    return {
        "loss": flat(N, 0.01, 0.002, seed=1),
        "reward": reward,
        "reward_std": flat(N, 0.3, 0.02, seed=2),
        "frac_reward_zero_std": flat(N, 0.1, 0.01, seed=3),
        "completions/mean_length": flat(N, 40.0, 1.0, seed=4),
        "learning_rate": np.full(N, 1e-6),
        **more,
    }


def verl(score: np.ndarray, **more: np.ndarray) -> dict[str, np.ndarray]:
    """The metrics a veRL GRPO run's file logger writes, plus ``more``."""
    return {
        "critic/score/mean": score,
        "critic/advantages/mean": flat(N, 0.0, 0.01, seed=5),
        "actor/pg_loss": flat(N, 0.0, 0.01, seed=6),
        "actor/grad_norm": flat(N, 0.3, 0.02, seed=7),
        "actor/lr": np.full(N, 1e-6),
        "response_length/mean": flat(N, 300.0, 5.0, seed=8),
        **more,
    }


STUCK = flat(N, 0.2, 0.03, seed=11)
LEARNING = saturating(N, 0.1, 0.7, sd=0.03, seed=12)
PEAK_THEN_FALL = np.r_[saturating(60, 0.1, 0.7, sd=0.02, seed=13), ramp(60, 0.7, 0.1, sd=0.02, seed=14)]


# -- PD704: entropy rising ------------------------------------------------------------------------
def test_trl_entropy_climbing_while_the_reward_is_stuck_warns(tmp_path):
    f = trl_state(tmp_path / "run", grpo(STUCK, entropy=ramp(N, 0.5, 1.6, sd=0.03, seed=15, begin=20)))
    (w,) = findings(f.parent, "PD704")
    assert w.severity == "warning" and w.symptom == "unstable_updates"
    assert "policy entropy rose" in w.message and "stuck" in w.message
    assert 20 <= w.start_step <= 70


def test_verl_entropy_climbing_while_the_reward_falls_from_its_best_is_an_error(tmp_path):
    f = jsonl(tmp_path / "run", verl(PEAK_THEN_FALL, **{"actor/entropy": np.r_[flat(60, 0.4, 0.02, seed=16), ramp(60, 0.4, 1.5, sd=0.03, seed=17)]}), verl=True)
    (e,) = findings(f.parent, "PD704")
    assert e.severity == "error" and "fell from its best" in e.message


def test_clip_higher_in_the_config_leads_the_causes(tmp_path):
    config = {"epsilon": 0.2, "epsilon_high": 0.6, "learning_rate": 1e-4}
    f = jsonl(tmp_path / "run", grpo(STUCK, entropy=ramp(N, 0.5, 1.6, sd=0.03, seed=15, begin=20)), config=config)
    (run,) = ppo_doctor.analyze(str(f.parent)).runs
    (w,) = [x for x in run.findings if x.code == "PD704"]
    assert any("epsilon_high = 0.6" in e for e in w.evidence)
    assert w.causes["clip-higher-too-wide"] == 0.9
    assert "clip-higher-too-wide" in [c.id for c in run.causes][:2]


def test_a_large_entropy_bonus_leads_the_causes(tmp_path):
    # TRL GRPOTrainer with entropy_coef 5 and 10 (the reference suite, 120 steps): entropy 1.6 -> 2.7, reward stuck
    f = jsonl(tmp_path / "run", grpo(STUCK, entropy=ramp(N, 1.6, 2.7, sd=0.03, seed=40, begin=50)), config={"entropy_coef": 5.0, "learning_rate": 5e-5})
    (run,) = ppo_doctor.analyze(str(f.parent)).runs
    (w,) = [x for x in run.findings if x.code == "PD704"]
    assert w.severity == "warning" and any("entropy_coef = 5" in e for e in w.evidence)
    assert run.causes[0].id == "entropy-bonus-too-high"


def test_entropy_rising_while_the_reward_rises_is_a_note(tmp_path):
    f = trl_state(tmp_path / "run", grpo(LEARNING, entropy=ramp(N, 0.5, 1.0, sd=0.03, seed=18, begin=20)))
    assert [x.severity for x in findings(f.parent, "PD704")] == ["info"]


def test_a_log_not_marked_as_llm_rl_gets_a_note(tmp_path):
    # a home-made log whose "entropy" may be a sum over agents that a curriculum grows
    series = {"entropy": ramp(N, 5.0, 9.0, sd=0.05, seed=38, begin=20), "mean_return": PEAK_THEN_FALL, "actor_loss": flat(N, 0.1, 0.01, seed=39)}
    f = jsonl(tmp_path / "run", series)
    (note,) = findings(f.parent, "PD704")
    assert note.severity == "info" and "nothing marks this run as LLM RL" in note.message


def test_healthy_trl_and_verl_entropy_get_no_finding(tmp_path):
    a = trl_state(tmp_path / "trl", grpo(LEARNING, entropy=saturating(N, 0.8, 0.5, sd=0.02, seed=19)))
    b = jsonl(tmp_path / "verl", verl(LEARNING, **{"actor/entropy": flat(N, 0.6, 0.03, seed=20)}), verl=True)
    assert findings(a.parent, "PD704") == [] and findings(b.parent, "PD704") == []


# -- PD805: sampler / trainer mismatch -------------------------------------------------------------
GROWING_GAP = np.r_[flat(60, 0.02, 0.002, seed=21), ramp(60, 0.02, 0.2, sd=0.004, seed=22)]


def test_trl_gap_growing_before_the_reward_collapses_is_an_error(tmp_path):
    more = {"sampling/sampling_logp_difference/mean": GROWING_GAP, "sampling/importance_sampling_ratio/mean": flat(N, 1.0, 0.01, seed=23)}
    f = trl_state(tmp_path / "run", grpo(PEAK_THEN_FALL, **more))
    (e,) = findings(f.parent, "PD805")
    assert e.severity == "error" and e.symptom == "unstable_updates"
    assert "sampling/sampling_logp_difference/mean" in e.message and "collapsed" in e.message
    assert 55 <= e.start_step <= 90


def test_trl_gap_growing_while_the_run_learns_is_a_note(tmp_path):
    # 0.01 -> 0.05 and levelling off: a sign without a consequence
    gap = saturating(N, 0.01, 0.05, rate=3, sd=0.001, seed=24)
    f = trl_state(tmp_path / "run", grpo(LEARNING, **{"sampling/sampling_logp_difference/mean": gap}))
    assert [x.severity for x in findings(f.parent, "PD805")] == ["info"]


def test_verl_k3_gap_still_accelerating_is_a_runaway(tmp_path):
    gap = 1e-3 * np.exp(np.linspace(0, 3.5, N)) + flat(N, 0.0, 1e-4, seed=25)
    f = jsonl(tmp_path / "run", verl(LEARNING, **{"rollout_corr/k3_kl": gap, "rollout_corr/kl": gap}), verl=True)
    (w,) = findings(f.parent, "PD805")
    assert w.severity == "warning" and "accelerating" in w.message and "rollout_corr/k3_kl" in w.message


def test_verl_importance_weights_leaving_their_band_with_saturated_clipping(tmp_path):
    weights = np.r_[flat(50, 1.0, 0.01, seed=26), ramp(70, 1.0, 0.6, sd=0.01, seed=27)]
    clip = np.r_[flat(50, 0.05, 0.005, seed=28), ramp(70, 0.05, 0.45, sd=0.01, seed=29)]
    more = {"rollout_corr/rollout_is_mean": weights, "actor/pg_clipfrac": clip}
    f = jsonl(tmp_path / "run", verl(LEARNING, **more), verl=True, config={"algorithm": {"rollout_correction": {"rollout_is": "token", "rollout_is_threshold": 2.0}}})
    (w,) = findings(f.parent, "PD805")
    assert w.severity == "warning" and "left its band" in w.message and "clipping saturates" in w.message
    assert any("correction is on" in e and "capped at 2" in e for e in w.evidence)


def test_openrlhf_logprobs_diff_growing_while_the_reward_is_stuck(tmp_path):
    series = {
        "reward": STUCK,
        "group_reward_std": flat(N, 0.3, 0.02, seed=36),
        "kl": flat(N, 0.01, 0.001, seed=30),
        "policy_loss": flat(N, 0.0, 0.01, seed=31),
        "actor_lr": np.full(N, 5e-7),
        "response_length": flat(N, 300.0, 5.0, seed=37),
        "logprobs_diff": GROWING_GAP,
    }
    f = jsonl(tmp_path / "run", series, config={"enable_vllm_is_correction": False})
    (w,) = findings(f.parent, "PD805")
    assert w.severity == "warning" and "stuck" in w.message
    assert any("correction is off" in e for e in w.evidence)


def test_healthy_mismatch_metrics_get_no_finding(tmp_path):
    trl = {"sampling/sampling_logp_difference/mean": flat(N, 0.02, 0.002, seed=32), "sampling/importance_sampling_ratio/mean": flat(N, 1.0, 0.01, seed=33)}
    a = trl_state(tmp_path / "trl", grpo(LEARNING, **trl))
    v = {"rollout_corr/k3_kl": flat(N, 1e-3, 1e-4, seed=34), "rollout_corr/rollout_is_mean": flat(N, 1.0, 0.01, seed=35)}
    b = jsonl(tmp_path / "verl", verl(LEARNING, **v), verl=True)
    assert findings(a.parent, "PD805") == [] and findings(b.parent, "PD805") == []


# -- PD207: one reward component gaming the total ----------------------------------------------------
FORMAT = saturating(N, 0.1, 1.0, rate=6, sd=0.02, seed=41)


def test_trl_format_saturating_while_accuracy_stalls(tmp_path):
    more = {"rewards/format_reward/mean": FORMAT, "rewards/accuracy_reward/mean": flat(N, 0.1, 0.02, seed=42)}
    f = trl_state(tmp_path / "run", grpo(FORMAT + 0.1, **more))
    (w,) = findings(f.parent, "PD207")
    assert w.severity == "warning" and w.symptom == "reward_hacking"
    assert "format_reward saturated" in w.message and "accuracy_reward stalled" in w.message
    assert "its name says it measures correctness" in w.message


def test_the_heaviest_component_is_the_task_when_none_is_named(tmp_path):
    # TRL logs the functions in the order of reward_funcs, the order of reward_weights
    more = {"rewards/xmlcount_reward_func/mean": FORMAT, "rewards/int_answer_reward_func/mean": ramp(N, 0.4, 0.1, sd=0.02, seed=43)}
    f = jsonl(tmp_path / "run", grpo(FORMAT, **more), config={"reward_weights": [0.5, 2.0]})
    (e,) = findings(f.parent, "PD207")
    assert e.severity == "error" and "int_answer_reward_func fell" in e.message
    assert "most weight in reward_weights (2)" in e.message


def test_the_only_component_not_named_for_form_is_the_task(tmp_path):
    # TRL 0.14's rewards/<name>: two form rewards (keywords, xml) saturate beside a numeric answer
    # reward stuck at its floor (real16's deepscope run)
    more = {"rewards/keywords": FORMAT, "rewards/xml": FORMAT, "rewards/numeric": flat(N, -3.0, 0.02, seed=42)}
    f = jsonl(tmp_path / "run", grpo(FORMAT - 3.0, **more))
    (w,) = findings(f.parent, "PD207")
    assert w.severity == "warning" and "task component numeric stalled" in w.message
    assert "the only component not named for the answer's form" in w.message


def test_the_configured_task_component_wins(tmp_path):
    more = {"rewards/style/mean": FORMAT, "rewards/judge/mean": flat(N, 0.3, 0.02, seed=44)}
    f = trl_state(tmp_path / "run", grpo(FORMAT, **more))
    (note,) = findings(f.parent, "PD207")  # no task component: a note that says how to name it
    assert note.severity == "info" and "no component is known as the task" in note.message and "judge did not saturate" in note.message
    (w,) = findings(f.parent, "PD207", {"rules": {"reward-component-gaming": {"task": "judge"}}})
    assert "task component judge stalled" in w.message and "task parameter" in w.message


def test_healthy_components_get_no_finding(tmp_path):
    more = {"rewards/format_reward/mean": FORMAT, "rewards/accuracy_reward/mean": ramp(N, 0.1, 0.5, sd=0.02, seed=45, begin=20)}
    f = trl_state(tmp_path / "run", grpo(LEARNING, **more))
    assert findings(f.parent, "PD207") == []


def test_live_a_stuck_reward_waits_for_the_plan(tmp_path):
    """Live, 120 of 1000 planned steps: a gap that grew and levels off beside a reward that has not
    risen yet is a note; the same points as a finished log warn."""
    levelling = saturating(N, 0.02, 0.12, rate=4, sd=0.002, seed=46)
    series = grpo(STUCK, **{"sampling/sampling_logp_difference/mean": levelling})
    monitor = ppo_doctor.Monitor(planned_steps=1000)
    for i in range(N):
        monitor.log(i + 1, {k: float(v[i]) for k, v in series.items()})
    monitor.check()
    live = [f for f in monitor.last_findings if f.code == "PD805"]
    assert [f.severity for f in live] == ["info"]
    f = trl_state(tmp_path / "run", series)
    assert [x.severity for x in findings(f.parent, "PD805")] == ["warning"]
