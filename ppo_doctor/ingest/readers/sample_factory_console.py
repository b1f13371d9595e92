"""Sample Factory's console log (``sf_log.txt`` in the experiment folder, and what it prints).

Sample Factory 2.x's runner reports every few seconds (``sample_factory/algo/runners/runner.py``,
``print_stats``; docs/sources.md#sample-factory-console)::

    [2025-07-03 17:19:34,605][07522] Fps is (10 sec: 0.0, 60 sec: 0.0, 300 sec: 0.0). Total num frames: 0. Throughput: 0: 18.3. Samples: 48. Policy #0 lag: (...)
    [2025-07-03 17:19:34,605][07522] Avg episode reward: [(0, '-110.556')]

``Total num frames`` is the environment steps so far (the x-axis of its TensorBoard summaries);
``Avg episode reward`` the mean return of each policy's last ``stats_avg`` finished episodes,
``(policy id, value)`` pairs, the value TensorBoard writes as ``reward/reward``.  Each reward line
is read at the frames of the report before it: policy 0 as ``reward/reward``, another policy ``p``
as ``policy_p/reward/reward`` (Sample Factory writes each policy's summaries to a folder of its
own).  A report without a reward line (no episode finished yet) adds no point.  Lines are read
after a progress bar's last carriage return and without ANSI escapes, bounded as in every console
reader (:mod:`ppo_doctor.ingest.console`).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ...errors import LogReadError
from ...frame import RawRun, RawSeries, ReadIssue
from .. import console

NAME = "sample_factory_console"

_FRAMES = re.compile(r"Fps is \(.*?\)\. Total num frames: (\d+)\.")
_REWARD = re.compile(r"Avg episode reward: \[(.*)\]")
_PAIR = re.compile(r"\((\d+), '([^']*)'\)")
_FRAMES_BYTES = re.compile(rb"Total num frames: \d+\.")
_REWARD_BYTES = re.compile(rb"Avg episode reward: \[\(\d+, '")


def sniff(path: Path, head: bytes) -> bool:
    """A report's frame count and a reward line in the head, or in the first 16 MiB of a file named
    like a console log (model and environment set-up can fill the head)."""
    return console.scan(path, head, lambda data: _FRAMES_BYTES.search(data) is not None and _REWARD_BYTES.search(data) is not None)


def read(path: Path) -> list[RawRun]:
    src = str(path)
    lines, _, issues = console.read_lines(path)
    frames: int | None = None
    points: dict[str, tuple[list[int], list[float], list[int]]] = {}
    for line in lines:
        text = console.pieces(line.data)[-1]
        found = _FRAMES.search(text)
        if found is not None:
            # a count past int64 is damage, not frames: the report's reward is not placed
            frames = int(found.group(1)) if len(found.group(1)) < 19 else None
            continue
        rewards = _REWARD.search(text)
        if rewards is None or frames is None:
            continue
        for policy, value in _PAIR.findall(rewards.group(1)):
            number = console.printed_number(value)
            if number is None:
                issues.append(ReadIssue(src, f"line {line.number}: reward {value!r} is not a number, not read", offset=line.offset, level="warning"))
                continue
            tag = "reward/reward" if policy == "0" else f"policy_{policy}/reward/reward"
            steps, values, numbers = points.setdefault(tag, ([], [], []))
            steps.append(frames)
            values.append(number)
            numbers.append(line.number)
    if not points:
        raise LogReadError(src, "no Sample Factory report with an average episode reward found")
    run = RawRun(
        series=[
            RawSeries(tag=t, steps=np.asarray(s, np.int64), values=np.asarray(v, float), source=src, lines=np.asarray(n, np.int32))
            for t, (s, v, n) in points.items()
        ]
    )
    run.issues = issues
    return [run]
