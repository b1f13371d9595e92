"""SB3 logs of many ``learn()`` calls: ``time/total_timesteps`` restarts at every call made with
``reset_num_timesteps=True`` (SB3's default) while ``train/n_updates`` keeps counting, so the
reader takes the counter that keeps counting as the run's axis, and says so."""

from __future__ import annotations

import numpy as np

import ppo_doctor

HEADER = "time/total_timesteps,train/n_updates,rollout/ep_rew_mean,train/entropy_loss,time/iterations\n"


def _write(path, calls: int, rows_per_call: int = 2, resumed: bool = False) -> None:
    """``calls`` learn() calls of ``rows_per_call`` rows each; the reward climbs with the updates.
    ``resumed``: one training resumed from a checkpoint once (the timesteps go back once)."""
    lines, n_updates = [HEADER], 0
    for call in range(calls):
        for r in range(1, rows_per_call + 1):
            n_updates += 100
            t = r * 500 if not resumed else (call * rows_per_call + r) * 500 - (1000 if call >= calls // 2 else 0)
            lines.append(f"{t},{n_updates - 1},{-200 + n_updates / 10:.3f},{-1.0 + n_updates / 1e5:.5f},{r * 100}\n")
    path.write_text("".join(lines), encoding="utf-8")


def test_a_log_of_many_learn_calls_is_read_along_the_counter_that_keeps_counting(tmp_path):
    log = tmp_path / "run" / "progress.csv"
    log.parent.mkdir()
    _write(log, calls=50)
    (run,) = ppo_doctor.load_runs(log.parent)
    steps, values = run.frame.arrays("reward/score")
    assert len(steps) == 100 and np.all(np.diff(steps) > 0), "every row is a point of its own, in order"
    assert steps[0] == 99 and steps[-1] == 9999
    assert values[-1] > values[0]
    assert any("goes back 49 times" in w and "train/n_updates" in w for w in run.warnings)
    assert not run.restarts, "the run is one training, not 49 restarts"


def test_a_resumed_run_keeps_its_timesteps_and_its_restart(tmp_path):
    # one resume from a checkpoint is the run's own restart (PD904), not a per-call counter
    log = tmp_path / "run" / "progress.csv"
    log.parent.mkdir()
    _write(log, calls=4, rows_per_call=5, resumed=True)
    (run,) = ppo_doctor.load_runs(log.parent)
    assert len(run.restarts) == 1
    assert not any("goes back" in w for w in run.warnings)
