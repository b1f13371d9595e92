"""ppo_doctor.Monitor: lossless columnar storage, offline-equal reports, stable announcements."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

import ppo_doctor
from ppo_doctor import Monitor
from ppo_doctor.findings import Finding
from ppo_doctor.monitor import as_number, matches
from ppo_doctor.run import Run

# The parts of a run's JSON that depend on the points and the config, not on the files read.
COMPARED = ("framework", "steps", "step_range", "points", "metrics", "unmapped", "config", "verdict", "verdict_reason", "symptoms", "findings", "causes", "not_applicable")


def replay_calls(run: Run) -> Iterator[tuple[int, dict[str, float], float]]:
    """The run's points as a training loop would have logged them: one call per step with the
    raw tag names, in step order; a tag logged twice at one step goes into a second call."""
    df = run.frame.df
    order = np.argsort(df["step"].to_numpy(), kind="stable")  # keeps each tag's file order
    steps = df["step"].to_numpy()[order]
    tags = df["raw_tag"].to_numpy()[order]
    values = df["value"].to_numpy()[order]
    wall = df["wall_time"].to_numpy()[order]
    call: dict[str, float] = {}
    step, t0 = None, float("nan")
    for s, tag, v, w in zip(steps.tolist(), tags.tolist(), values.tolist(), wall.tolist()):
        if call and (s != step or tag in call):
            yield step, call, t0
            call = {}
        if not call:
            step, t0 = s, w
        call[tag] = v
    if call:
        yield step, call, t0


def replay(run: Run, check_every: int = 0) -> tuple[Monitor, list[tuple[int, Finding]]]:
    mon = Monitor(hparams=run.raw_config, run_id=run.id)
    texts: dict[int, list[dict[str, Any]]] = {}
    for t in run.texts:
        texts.setdefault(t.step, []).append({"tag": t.tag, "completion": t.text, "prompt": t.prompt, "reward": t.reward})
    alerts = []
    for k, (step, metrics, wall) in enumerate(replay_calls(run)):
        mon.log(step, metrics, texts.pop(step, None), wall_time=wall)
        if check_every and k % check_every == 0:
            alerts.extend((step, f) for f in mon.check())
    for step, ts in texts.items():  # samples logged at steps without metrics
        mon.log(step, {}, ts)
    return mon, alerts


@pytest.mark.parametrize("name", ["healthy-s1", "kl-coef-zero", "min-length", "lr-x100", "hackable-reward"])
def test_replaying_a_finished_run_gives_the_offline_report(sample_logs: Path, name: str) -> None:
    offline = ppo_doctor.analyze(sample_logs / name)
    assert len(offline.runs) == 1
    off = offline.runs[0]
    mon, _ = replay(off.run, check_every=10)
    live = mon.report()
    assert len(live.runs) == 1
    got, want = live.runs[0].to_dict(), off.to_dict()
    assert {k: got[k] for k in COMPARED} == {k: want[k] for k in COMPARED}
    assert mon.points == len(off.run.frame)
