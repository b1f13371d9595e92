"""ppo_doctor: an offline doctor for PPO / RLHF training logs.

Public API::

    import ppo_doctor
    runs = ppo_doctor.load_runs("logs/")        # list[Run], each with a RunFrame
    report = ppo_doctor.analyze("logs/")        # Report; report.to_dict() is the JSON contract
    monitor = ppo_doctor.Monitor()              # live: monitor.log(step, metrics); monitor.check()

The names below are imported on first use (PEP 562): ``import ppo_doctor`` and every
``ppo_doctor.<submodule>`` import, the CLI's ``--help`` among them, load only what they use
(benchmarks/RESULTS.md, "Import cost"; tests/test_import_cost.py).
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .analyze import analyze, analyze_run
    from .errors import ConfigError, LogReadError, PPODoctorError
    from .frame import RunFrame
    from .monitor import Monitor
    from .pipeline import load, load_runs
    from .results import SYMPTOMS, Finding, RankedCause, Report, RunReport
    from .run import MetricInfo, Run

# public name -> the module of this package that defines it
_EXPORTS = {
    "analyze": "analyze",
    "analyze_run": "analyze",
    "load": "pipeline",
    "load_runs": "pipeline",
    "Monitor": "monitor",
    "Run": "run",
    "RunFrame": "frame",
    "MetricInfo": "run",
    "Report": "results",
    "RunReport": "results",
    "Finding": "results",
    "RankedCause": "results",
    "SYMPTOMS": "results",
    "PPODoctorError": "errors",
    "LogReadError": "errors",
    "ConfigError": "errors",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        # a submodule, as ``ppo_doctor.rules`` was an attribute when this file imported it all
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # the next lookup is a plain global
    return value


def __dir__() -> list[str]:
    """The public names only (not this file's own imports), as tab completion shows them."""
    return sorted(__all__)


class _Package(ModuleType):
    """This package's module type: importing the submodule ``ppo_doctor.analyze`` binds it as an
    attribute of the package, where the public name is the function it defines (as when this
    file imported the function eagerly)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, ModuleType) and _EXPORTS.get(name) == name:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

