"""ppo_doctor: an offline doctor for PPO / RLHF training logs.

Public API::

    import ppo_doctor
    runs = ppo_doctor.load_runs("logs/")        # list[Run], each with a RunFrame
    report = ppo_doctor.analyze("logs/")        # Report; report.to_dict() is the JSON contract
    monitor = ppo_doctor.Monitor()              # live: monitor.log(step, metrics); monitor.check()
"""

from __future__ import annotations

__version__ = "0.1.0"

from .analyze import analyze, analyze_run  # noqa: E402
from .errors import ConfigError, LogReadError, PPODoctorError  # noqa: E402
from .findings import SYMPTOMS, Finding, RankedCause  # noqa: E402
from .frame import RunFrame  # noqa: E402
from .ingest import load, load_runs  # noqa: E402
from .monitor import Monitor  # noqa: E402
from .report.model import Report, RunReport  # noqa: E402
from .run import MetricInfo, Run  # noqa: E402

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
