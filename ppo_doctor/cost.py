"""What a failure cost: the steps an unhealthy run trained after its first warning or error, as a
share of the run, and, where the log says, the wall time and the devices they took.

:func:`failure_cost` is a pure function of a :class:`~ppo_doctor.results.RunReport` (its
findings, verdict and run), so every surface computes the same figure: the offline report (one
line per run), the JSON (``runs[].cost``), ``sweep``'s summary, and a live callback's stop
message.  No currency: device-hours are devices times hours.

Where the hours come from, first that the log has:

* the wall-clock times of the logged points (TensorBoard events, W&B, MLflow): from the first
  point at or after the onset to the last (a job that was down between two logged points counts
  its downtime: the log cannot tell a pause from a slow step; bursty writers, which log many
  steps at once, rule out judging a gap by the typical one);
* a clock logged as a metric, seconds since training began (SB3's ``time/time_elapsed``,
  docs/sources.md#sb3-logger-keys): its rise from the onset to the end;
* a per-step time series (TRL's ``step_time``: ``progress/step_time``; veRL's ``timing_s/step``,
  docs/sources.md#verl-metrics), summed over the steps it covers;
* the run's ``train_runtime`` (HF Trainer's final row, seconds for the whole training), times
  the share of the steps after the onset (step times taken as even).

Devices: the first of ``world_size`` (torch.distributed), ``num_processes`` (accelerate),
``n_gpus`` / ``num_gpus`` in the run's config, or veRL's ``trainer.n_gpus_per_node`` times
``trainer.nnodes`` (``verl/trainer/config/ppo_trainer.yaml``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .canonical.hparams import scalar_float
from .detect.order_stats import median
from .results import Cost, RunReport
from .verdict import decisive
from .run import Run

# Config keys (the last part of a flattened key) that give the number of devices a run used.
DEVICE_KEYS = ("world_size", "num_processes", "n_gpus", "num_gpus")
VERL_DEVICES = ("n_gpus_per_node", "nnodes")
# Seconds since training began, logged as a metric; seconds per step, logged as a metric.
ELAPSED_METRICS = ("time/time_elapsed",)
STEP_TIME_METRICS = ("progress/step_time", "timing_s/step")
# The wall-time plausibility check (:func:`plausible_wall`): the points a time is compared with
# (a median of 5 ignores up to 2 glitched neighbours), how many typical gaps away from them it may
# lie, and a floor in seconds so that a run logged every millisecond keeps an ordinary hiccup.
WALL_WINDOW = 5  # odd: its middle is one of its points
WALL_TOLERANCE = 1000.0
WALL_FLOOR_S = 3600.0
# The most devices a run's config may name: the largest published training runs used about 10^4
# GPUs (Llama 3 405B: 16,384 H100s, https://arxiv.org/abs/2407.21783, section 3.3); a count
# three orders of magnitude past that (``world_size: 1e308``) is a glitch, not a device count,
# and is not read.
MAX_DEVICES = 10_000_000


def failure_cost(report: RunReport) -> Cost | None:
    """The cost of training on after the onset of the run's first warning or error, or None when
    the run is not unhealthy (or no finding has a step)."""
    if report.verdict != "unhealthy":
        return None
    onsets = [int(f.start_step) for f in decisive(report.findings) if f.start_step is not None]
    rng = report.run.frame.step_range()
    if not onsets or rng is None:
        return None
    first, last = int(rng[0]), int(rng[1])
    cost = Cost(min(onsets), first, last)
    hours, hours_from = _hours_after(report.run, cost.onset_step, cost.share)
    devices, devices_from = device_count(report.run)
    return dataclasses.replace(cost, hours_after=hours, hours_from=hours_from, devices=devices, devices_from=devices_from)


def _hours_after(run: Run, onset: int, share: float) -> tuple[float | None, str]:
    """Hours trained from step ``onset`` on, and what they were read from."""
    wall = _wall_seconds(run, onset)
    if wall is not None:
        return wall / 3600.0, "wall-clock times"
    for metric in ELAPSED_METRICS:
        steps, values = _finite(run, metric)
        later = values[steps >= onset]
        if len(later) >= 2 and later[-1] > later[0]:
            return float(later[-1] - later[0]) / 3600.0, metric
    for metric in STEP_TIME_METRICS:
        steps, values = _finite(run, metric)
        if len(steps) >= 2:
            # each logged value is the mean step time over the steps since the previous log
            covered = np.diff(steps)
            later = steps[1:] > onset
            return float(np.sum(values[1:][later] * covered[later])) / 3600.0, run.frame.raw_tags(metric)[0]
    runtime = scalar_float(run.config.get("train_runtime", run.raw_config.get("train_runtime")))
    if runtime is not None and runtime > 0:
        return runtime * share / 3600.0, "train_runtime"
    return None, ""


def _finite(run: Run, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Steps and finite, non-negative values of a time metric (empty when not logged)."""
    if not run.frame.has(metric):
        return np.empty(0, np.int64), np.empty(0)
    steps, values = run.frame.arrays(metric)
    ok = np.isfinite(values) & (values >= 0)
    return steps[ok], values[ok]


def _wall_seconds(run: Run, onset: int) -> float | None:
    """Seconds from the first to the last wall-clock time of the points logged from ``onset`` on
    (in time order: Stable-Baselines 2 writes steps that go back); None without two such times.
    Only plausible times count (:func:`plausible_wall`): one glitched timestamp must not become
    the cost."""
    wall = np.asarray(run.frame.column("wall_time"), dtype=np.float64)
    steps = np.asarray(run.frame.column("step"))
    keep = plausible_wall(steps, wall) & (steps >= onset)
    if keep.sum() < 2:
        return None
    span = float(np.max(wall[keep]) - np.min(wall[keep]))
    return span if span > 0 else None


def plausible_wall(steps: np.ndarray, wall: np.ndarray) -> np.ndarray:
    """Which wall-clock times agree with the run's own: finite, not negative, and not an isolated
    jump away from the points logged around them (issue 39: one nanosecond timestamp among rows
    10 s apart made "4.72e+11 h of wall time").

    In step order, each time is compared with the median of the :data:`WALL_WINDOW` points around
    it.  A pause (a job down for a day) moves every later time, so the median moves with it and
    the pause counts, as the module docstring says it must; a lone glitch does not move the
    median and is left out when it lies further from it than :data:`WALL_TOLERANCE` times the
    run's typical gap between two logged times (at least :data:`WALL_FLOOR_S`)."""
    ok = np.isfinite(wall) & (wall >= 0)
    idx = np.flatnonzero(ok)
    if len(idx) < WALL_WINDOW:
        return ok
    order = idx[np.argsort(steps[idx], kind="stable")]
    w = wall[order]
    half = WALL_WINDOW // 2
    padded = np.concatenate([np.full(half, w[0]), w, np.full(half, w[-1])])
    # the middle of each window of an odd size (np.median would import numpy.ma: order_stats)
    local = np.partition(np.lib.stride_tricks.sliding_window_view(padded, WALL_WINDOW), half, axis=1)[:, half]
    gaps = np.abs(np.diff(w))
    gaps = gaps[gaps > 0]
    typical = float(median(gaps)) if len(gaps) else 0.0
    far = np.abs(w - local) > max(WALL_TOLERANCE * typical, WALL_FLOOR_S)
    ok[order[far]] = False
    return ok


def device_count(run: Run) -> tuple[int | None, str]:
    """The number of devices the run's config names, and the key it came from."""
    flat = {**run.raw_config, **run.config}
    last: dict[str, tuple[str, Any]] = {}
    for key, value in flat.items():
        last.setdefault(str(key).replace("/", ".").rsplit(".", 1)[-1].lower(), (key, value))
    for name in DEVICE_KEYS:
        if name in last:
            n = scalar_float(last[name][1])
            if n is not None and 1 <= n <= MAX_DEVICES:
                return int(n), str(last[name][0])
    per_node, nodes = (scalar_float(last[k][1]) if k in last else None for k in VERL_DEVICES)
    if per_node is not None and per_node >= 1:
        n = per_node * (nodes if nodes is not None and nodes >= 1 else 1)
        if n <= MAX_DEVICES:
            return int(n), " x ".join(str(last[k][0]) for k in VERL_DEVICES if k in last)
    return None, ""


__all__ = ["DEVICE_KEYS", "failure_cost", "device_count"]
