"""The Monitor wrapper's episode files (``monitor.csv``, ingest/readers/sb3_monitor.py): written by
the real SB3 ``Monitor`` and by hand in baselines' older header, read as per-episode returns on
the environment's step axis, with the header's ``env_id`` in the config; left out beside the
trainer's own log."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ppo_doctor
from ppo_doctor.ingest import sniff
from ppo_doctor.ingest.discover import discover
from ppo_doctor.ingest.readers import sb3_monitor


def _write(path, rows, header='#{"t_start": 1700000000.0, "env_id": "LunarLander-v3"}', columns="r,l,t"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + "\n" + columns + "\n" + "".join(",".join(str(c) for c in row) + "\n" for row in rows))
    return path


def test_the_real_sb3_monitor_file_is_read_episode_by_episode(tmp_path):
    gym = pytest.importorskip("gymnasium")
    monitor = pytest.importorskip("stable_baselines3.common.monitor")
    env = monitor.Monitor(gym.make("CartPole-v1"), str(tmp_path / "run"))
    env.reset(seed=0)
    lengths = []
    for _ in range(12):
        done, n = False, 0
        while not done:
            _, _, terminated, truncated, _ = env.step(env.action_space.sample())
            n += 1
            done = terminated or truncated
        lengths.append(n)
        env.reset()
    env.close()
    path = tmp_path / "run.monitor.csv"
    assert sniff(path, path.read_bytes()[:4096]) is sb3_monitor
    (raw,) = sb3_monitor.read(path)
    series = {s.tag: s for s in raw.series}
    assert sorted(series) == ["monitor/l", "monitor/r"]
    assert series["monitor/l"].values.tolist() == lengths
    assert series["monitor/r"].values.tolist() == [float(n) for n in lengths]  # CartPole pays 1 a step
    assert series["monitor/r"].steps.tolist() == np.cumsum(lengths).tolist()
    assert raw.config == {"env_id": "CartPole-v1"}
    assert series["monitor/r"].wall_time[0] > 1.6e9


def test_baselines_header_with_a_space_is_a_monitor_file_and_a_plain_comment_is_not(tmp_path):
    old = _write(tmp_path / "0.0.monitor.csv", [[6, 8, 2.07]], header='# {"t_start": 1558062174.3, "env_id": "DeepCars-v0"} ')
    assert sniff(old, old.read_bytes()) is sb3_monitor
    other = _write(tmp_path / "notes.csv", [[6, 8, 2.07]], header="# a comment")
    assert sniff(other, other.read_bytes()) is not sb3_monitor


def test_info_keywords_are_read_and_a_cut_row_is_skipped_with_a_warning(tmp_path):
    path = _write(tmp_path / "monitor.csv", [[1.5, 10, 0.1, 0], [2.5, 12, 0.2, 1]], columns="r,l,t,is_success")
    path.write_text(path.read_text() + "3.5,1")  # a crash mid-row
    (raw,) = sb3_monitor.read(path)
    series = {s.tag: s for s in raw.series}
    assert series["monitor/r"].values.tolist() == [1.5, 2.5] and series["monitor/is_success"].values.tolist() == [0, 1]
    assert any("skipped" in i.message for i in raw.issues)


def test_a_monitor_file_alone_is_a_run_judged_against_its_task(tmp_path):
    # a LunarLander return that climbs -250 -> -50 and hovers there: the header's env_id gives the
    # task, whose solved level (200) says the plateau is stagnation (PD307)
    rng = np.random.default_rng(1)
    rows, t = [], 0.0
    for i in range(600):
        t += 2.0
        rows.append([round(min(-250 + 2 * i, -50) + rng.normal(0, 20), 6), 1000, round(t, 6)])
    _write(tmp_path / "run1" / "monitor.csv", rows)
    (rr,) = ppo_doctor.analyze(tmp_path).runs
    assert rr.run.format == "sb3_monitor" and rr.run.frame.has("reward/score")
    assert "PD307" in [f.code for f in rr.findings if f.severity == "warning"]


def test_metrics_names_the_task_and_its_solved_level(tmp_path):
    # a user reading `ppo-doctor metrics` sees the level a plateau is judged against, and the
    # header's env_id is not called an unrecognised config
    from click.testing import CliRunner

    from ppo_doctor.cli import cli

    _write(tmp_path / "run1" / "monitor.csv", [[-100.0 + i, 200, 1.0 + i] for i in range(40)])
    out = CliRunner().invoke(cli, ["metrics", str(tmp_path)]).output
    assert "task: LunarLander, solved at a return of 200 (from config env_id = LunarLander-v3)" in out
    assert "none recognised" not in out


def test_the_environments_of_a_vec_env_are_one_run(tmp_path):
    for rank in range(2):
        # the two environments' episodes end at different steps of their own
        _write(tmp_path / "logs" / f"{rank}.monitor.csv", [[float(10 + i), 10 + i + rank, 0.1 * i] for i in range(40)])
    (rr,) = ppo_doctor.analyze(tmp_path).runs
    assert len(rr.run.frame.arrays("reward/score")[1]) == 80


def test_a_monitor_file_beside_the_trainers_log_is_left_out_with_a_note(tmp_path):
    run = tmp_path / "ppo"
    _write(run / "monitor.csv", [[float(i), 100, 0.1 * i] for i in range(50)])
    lines = ["time/total_timesteps,rollout/ep_rew_mean"] + [f"{2048 * (i + 1)},{i * 0.5}" for i in range(30)]
    (run / "progress.csv").write_text("\n".join(lines) + "\n")
    report = ppo_doctor.analyze(tmp_path)
    (rr,) = report.runs
    assert rr.run.format == "csv_logs" and not any(t.startswith("monitor/") for t in [*rr.run.mapping, *rr.run.unmapped])
    _, issues = discover(tmp_path)
    notes = [i for i in issues if "Monitor episode file" in i.message]
    assert len(notes) == 1 and notes[0].level == "info"
    assert json.loads(json.dumps(rr.run.frame.arrays("reward/score")[1].tolist()))[-1] == 14.5
