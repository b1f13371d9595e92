"""What the blind sets real10-real12 found the readers getting wrong, each case built at test time
(docs/scorecard.md#blind-runs): a step-like column that is a setting, an episode return that
stops because no episode ended, and a home-made LLM loop's response length and KL term."""

from __future__ import annotations

import csv

import ppo_doctor


def _write(path, header, rows):
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)


def test_a_step_like_column_holding_a_setting_is_not_the_axis(tmp_path):
    # a home-made GRPO loop writes its planned total on every row beside the step; it restarted
    # once, so the setting takes two values (300, then 500)
    rows = [[i, 300, 0.1 * i] for i in range(1, 6)] + [[i, 500, min(0.9, 0.002 * i)] for i in range(1, 501)]
    _write(tmp_path / "metrics.csv", ["step", "total_steps", "reward_avg"], rows)
    (run,) = ppo_doctor.load_runs(tmp_path)
    assert run.frame.step_range() == (1, 500)
    assert run.frame.count("reward/score") >= 500


def test_an_episode_return_that_stops_is_no_value_that_could_not_be_computed(tmp_path):
    # SB3 writes rollout/ep_rew_mean only while its episode buffer holds an episode, ML-Agents its
    # cumulative reward only for completed episodes: no episode ended after step 1,000,000
    rows = []
    for i in range(1, 133):
        step = 10_000 * i
        rows.append([step, (5.0 + 0.01 * i) if i <= 101 else "", 0.5 / i, 1.5 * 0.97**i])
    _write(tmp_path / "progress.csv", ["time/total_timesteps", "rollout/ep_rew_mean", "train/value_loss", "train/entropy_loss"], rows)
    report = ppo_doctor.analyze(tmp_path)
    (rr,) = report.runs
    assert "PD604" not in {f.code for f in rr.findings}


def test_a_home_made_llm_loop_names_its_response_length_and_kl_term(tmp_path):
    # a home-made GRPO loop on MATH: avg_response_len marks it as sampling answers, so its
    # kl_loss is the KL to the reference model (which runs away here: 0.2 -> 27)
    rows = [[i, 0.5 if i < 60 else 0.0, 300 + 2 * i, 0.2 if i < 70 else 27.0] for i in range(1, 301)]
    _write(tmp_path / "metrics.csv", ["step", "reward_avg", "avg_response_len", "kl_loss"], rows)
    (run,) = ppo_doctor.load_runs(tmp_path)
    assert run.mapping["avg_response_len"] == "len/response_mean"
    assert run.mapping["kl_loss"] == "kl/ref" and run.metric_info["kl/ref"].inferred


def test_a_kl_loss_without_sampled_answers_is_left_alone(tmp_path):
    # a classic-RL PPO with a KL penalty: its KL is to the old policy, not a reference model
    rows = [[i, 10.0 + i, 0.01] for i in range(1, 101)]
    _write(tmp_path / "progress.csv", ["step", "episode_reward_mean", "kl_loss"], rows)
    (run,) = ppo_doctor.load_runs(tmp_path)
    assert "kl_loss" not in run.mapping


def test_a_statistic_never_finite_is_not_measured_not_a_nan(tmp_path):
    # an ML-Agents SAC run writes its discrete entropy coefficient as NaN at every summary (its
    # agent has no discrete actions): never measured, so no NaN finding
    rows = [[1000 * i, 4.0 + 0.01 * i, "nan", 0.5] for i in range(1, 61)]
    _write(tmp_path / "progress.csv", ["step", "episode_reward_mean", "Policy/Discrete Entropy Coeff", "value_loss"], rows)
    (rr,) = ppo_doctor.analyze(tmp_path).runs
    assert "PD601" not in {f.code for f in rr.findings}
    rows[-5:] = [[r[0], r[1], r[2], "nan"] for r in rows[-5:]]  # a loss that breaks is still one
    _write(tmp_path / "progress.csv", ["step", "episode_reward_mean", "Policy/Discrete Entropy Coeff", "value_loss"], rows)
    (rr,) = ppo_doctor.analyze(tmp_path).runs
    assert "PD601" in {f.code for f in rr.findings}


def test_a_success_rate_stands_for_a_reward_that_is_not_logged(tmp_path):
    # baselines HER logs train/success_rate and no return: the rate is what it is trained to raise
    rows = [[e, 0.06 + 0.01 * (e % 3 == 0)] for e in range(43)]
    _write(tmp_path / "progress.csv", ["train/episode", "train/success_rate"], rows)
    (run,) = ppo_doctor.load_runs(tmp_path)
    assert run.mapping["train/success_rate"] == "reward/score" and run.metric_info["reward/score"].inferred
    _write(tmp_path / "progress.csv", ["train/episode", "eprewmean", "train/success_rate"], [[e, 1.0 + e, 0.5] for e in range(43)])
    (run,) = ppo_doctor.load_runs(tmp_path)
    assert run.mapping["eprewmean"] == "reward/score" and "train/success_rate" not in run.mapping


def test_pandas_row_index_is_not_a_metric(tmp_path):
    # pd.DataFrame(history).to_csv(path) writes an unnamed row counter first (blind set real23);
    # an unnamed column holding anything else is kept
    rows = [[i, i + 1, 10.0 + 0.5 * i, 7 * i] for i in range(30)]
    _write(tmp_path / "log.csv", ["", "episode", "reward", "Unnamed: 3"], rows)
    (run,) = ppo_doctor.load_runs(tmp_path)
    assert "Unnamed: 0" not in run.frame.metrics and "Unnamed: 3" in run.frame.metrics
    assert run.frame.step_range() == (1, 30) and run.frame.count("reward/score") == 30
