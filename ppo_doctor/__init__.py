"""ppo_doctor: an offline doctor for PPO / RLHF training logs.

Public API::

    import ppo_doctor
    runs = ppo_doctor.load_runs("logs/")        # list[Run], each with a RunFrame
    report = ppo_doctor.analyze("logs/")        # Report; report.to_dict() is the JSON contract
    monitor = ppo_doctor.Monitor()              # live: monitor.log(step, metrics); monitor.check()
"""

from __future__ import annotations

from ._version import __version__
from .analyze import analyze, analyze_run
from .errors import ConfigError, LogReadError, PPODoctorError
from .frame import RunFrame
from .pipeline import load, load_runs
from .monitor import Monitor
from .results import SYMPTOMS, Finding, RankedCause, Report, RunReport
from .run import MetricInfo, Run

__all__ = [
    "__version__",
    "analyze",
    "analyze_run",
    "load",
    "load_runs",
    "Monitor",
    "Run",
    "RunFrame",
    "MetricInfo",
    "Report",
    "RunReport",
    "Finding",
    "RankedCause",
    "SYMPTOMS",
    "PPODoctorError",
    "LogReadError",
    "ConfigError",
]
