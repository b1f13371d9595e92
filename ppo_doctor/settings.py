"""The frozen settings: what a run of ppo-doctor was asked to do, validated and typed.

A leaf: it imports nothing of the readers, the rules or the renderers, so every stage can take a
:class:`Config` without pulling in the others.  Finding, reading and validating the settings
(``[tool.ppo-doctor]`` in ``pyproject.toml`` or a ``ppo-doctor.toml``, then the command line) is
:mod:`ppo_doctor.config`, above the rules and the renderers whose names it checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Mapping

from .errors import ConfigError
from .results import SEVERITIES

FAIL_ON = (*SEVERITIES, "never")  # the lowest severity that fails check / watch, or never
EXECUTORS = ("local", "processes", "dask")  # how ppo_doctor.pipeline schedules runs
# Seconds a plugin rule may take on one run, and a plugin renderer on one report, before it is
# stopped and named (ppo_doctor.deadline): the slowest built-in rule takes milliseconds on a
# 1,000,000-point run (benchmarks/RESULTS.md, bench_check: the whole check in 0.47 s), so ten
# seconds is generous for honest code and bounds a plugin that never returns.
PLUGIN_TIMEOUT = 10.0


@dataclass(frozen=True)
class Schedule:
    """Where and how runs are processed; see the module docstring for each executor."""

    executor: str = "local"
    jobs: int = 1
    dask: str | None = None  # scheduler address of an existing cluster (tcp://host:8786)
    retries: int = 1  # extra tries of a run whose worker died
    # seconds to wait for the Dask cluster to answer and to have a worker: a cluster with none
    # (what a nanny that gives up leaves) would otherwise hold every task forever
    dask_timeout: float = 60.0
    # seconds a remote request may wait to connect or between two reads; None: the
    # environment's PPO_DOCTOR_REMOTE_TIMEOUT, else ppo_doctor.ingest.storage.REMOTE_TIMEOUT
    remote_timeout: float | None = None

    def __post_init__(self) -> None:
        if self.executor not in EXECUTORS:
            raise ConfigError(f"unknown executor {self.executor!r}; choose from {', '.join(EXECUTORS)}")
        if self.jobs < 1:
            raise ConfigError(f"jobs must be >= 1, got {self.jobs}")

    @classmethod
    def choose(cls, *, executor: str | None = None, jobs: int | None = None, dask: str | None = None, dask_timeout: float = 60.0, remote_timeout: float | None = None) -> "Schedule":
        """The schedule the command-line flags ask for: ``--dask ADDRESS`` means the Dask executor,
        ``--jobs N`` (N > 1) alone means local processes, nothing means this process."""
        n = jobs or 1
        if executor is None:
            executor = "dask" if dask else ("processes" if n > 1 else "local")
        if dask and executor != "dask":
            raise ConfigError(f"--dask {dask} needs the dask executor, not {executor!r}")
        return cls(executor=executor, jobs=n, dask=dask, dask_timeout=dask_timeout, remote_timeout=remote_timeout)


@dataclass(frozen=True)
class Config:
    """The resolved settings (see the module docstring for each key), validated and coerced once.

    Built by :func:`ppo_doctor.config.resolve` (defaults < file < command line) or, from a
    mapping of the same keys, by :func:`ppo_doctor.config.coerce`; every consumer reads
    attributes, never a dict.  ``select`` already
    holds ``extend_select`` (and ``ignore`` ``extend_ignore``) when :func:`resolve` built it;
    ``config_file`` names the file that was read; :attr:`schedule` is where and how runs are
    processed, the one way the executor settings reach :mod:`ppo_doctor.pipeline`.  The tables (``aliases``, ``rules``,
    ``per_run_ignores``) are plain dicts so that the object pickles to worker processes; treat
    them as read-only (:meth:`to_dict` returns copies).
    """

    fail_on: str = "error"
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    extend_ignore: tuple[str, ...] = ()
    per_run_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    format: str = "text"
    jobs: int = 1
    executor: str | None = None
    dask: str | None = None
    dask_timeout: float = 60.0
    remote_timeout: float | None = None
    aliases: dict[str, str] = field(default_factory=dict)
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)
    # glob patterns of files and folders discovery passes over (ruff's exclude / extend-exclude)
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    plugin_timeout: float = PLUGIN_TIMEOUT
    config_file: str | None = None

    @property
    def excluded(self) -> tuple[str, ...]:
        """The patterns discovery passes over: ``exclude`` then ``extend_exclude``."""
        return self.exclude + self.extend_exclude

    @property
    def schedule(self) -> Schedule:
        """The executor settings as one :class:`Schedule` (:meth:`Schedule.choose`)."""
        return Schedule.choose(executor=self.executor, jobs=self.jobs, dask=self.dask, dask_timeout=self.dask_timeout, remote_timeout=self.remote_timeout)

    @classmethod
    def from_checked(cls, checked: Mapping[str, Any], config_file: str | None = None) -> Config:
        """A Config from values :func:`ppo_doctor.config.validate` already checked."""
        values: dict[str, Any] = {}
        for key, value in checked.items():
            if key in ("select", "ignore", "extend_select", "extend_ignore", "exclude", "extend_exclude"):
                value = tuple(value)
            elif key == "per_run_ignores":
                value = {str(k): tuple(v) for k, v in value.items()}
            elif key in ("aliases", "rules"):
                value = {str(k): (dict(v) if isinstance(v, dict) else v) for k, v in value.items()}
            values[key] = value
        return cls(**values, config_file=config_file)

    def to_dict(self) -> dict[str, Any]:
        """Every setting as plain lists and dicts (``--show-settings``, JSON)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, tuple):
                value = list(value)
            elif isinstance(value, dict):
                value = {k: (list(v) if isinstance(v, tuple) else dict(v) if isinstance(v, dict) else v) for k, v in value.items()}
            out[f.name] = value
        return out


# every key a config file or the command line may set, with its default
DEFAULTS: dict[str, Any] = {k: v for k, v in Config().to_dict().items() if k != "config_file"}
