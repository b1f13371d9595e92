"""What every command shares: the error exit, settings resolution, writing the output, colour,
verbosity, and the ``--executor``/``--dask`` options.

The conventions follow ruff's (docs/sources.md#peer-linters): ``-o -`` is stdout, ``-q`` drops
everything but the report (``-qq`` the report too: only the exit code), ``-v`` works before
or after the subcommand, ``--color auto|always|never`` with ``NO_COLOR`` and ``FORCE_COLOR``.
Settings come from defaults < config file < flags (:mod:`ppo_doctor.config`).
"""

from __future__ import annotations

import json
import logging
import math
import os
import sys
from pathlib import Path
from typing import Any, Callable, NoReturn, Sequence, TypeVar

import click

from ..config import EXECUTORS, Config, resolve_with_sources
from ..errors import PPODoctorError
from ..exits import EXIT_ERROR
from ..report import formats
from ..report.escape import plain

F = TypeVar("F", bound=Callable[..., Any])

# the argument types the command line checks: a file to read or write must not be a folder, a
# folder to write into must not be a file
class Seconds(click.FloatRange):
    """A finite number of seconds in a range: click's FloatRange lets ``nan`` and ``inf`` through
    (every comparison with NaN is False), and a poll interval of NaN ends in a traceback."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number of seconds", param, ctx)
        return number


FILE = click.Path(dir_okay=False)
FILE_OR_DASH = click.Path(dir_okay=False, allow_dash=True)
DIRECTORY = click.Path(file_okay=False)


def options(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    """Several click decorators as one, applied in the order listed (as if stacked)."""

    def apply(func: F) -> F:
        for decorator in reversed(decorators):
            func = decorator(func)
        return func

    return apply


def fail(message: str) -> NoReturn:
    """Print ``ppo-doctor: error: ...`` on stderr and exit 2."""
    click.echo(f"ppo-doctor: error: {plain(message)}", err=True)
    sys.exit(EXIT_ERROR)


def split(values: Sequence[str] | None) -> list[str] | None:
    """``--select A,B --select C`` -> ``[A, B, C]``; None when the flag was not given."""
    items = [v.strip() for value in values or () for v in value.split(",") if v.strip()]
    return items or None


def resolve_settings(cli: dict[str, Any], config_file: str | None, isolated: bool) -> Config:
    return resolve_settings_and_sources(cli, config_file, isolated)[0]


def resolve_settings_and_sources(cli: dict[str, Any], config_file: str | None, isolated: bool) -> tuple[Config, dict[str, str]]:
    try:
        return resolve_with_sources(cli, config_file=config_file, isolated=isolated)
    except PPODoctorError as exc:
        fail(str(exc))


STDOUT = "-"


class FormatChoice(click.Choice):
    """--format's choices: the built-in formats, then the plugins' (ppo_doctor.plugins), read
    when the option is given, completed or its help shown, not when the command is imported."""

    def __init__(self) -> None:  # click.Choice's would store the choices; here they are read on use
        self.case_sensitive = True

    @property
    def choices(self) -> Sequence[str]:  # type: ignore[override]  # read-only: the formats decide
        return formats()


def use_color(choice: str, to_terminal: bool) -> bool:
    """``--color``: ``always`` / ``never`` as said; ``auto`` follows the environment.

    In ``auto``, ``NO_COLOR`` (no-color.org: any non-empty value) turns colour off, then
    ``FORCE_COLOR`` (force-color.org: any non-empty value but ``0``/``false``) turns it on,
    else colour is used when the report goes to a terminal.
    """
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    force = os.environ.get("FORCE_COLOR", "")
    if force and force.lower() not in ("0", "false"):
        return True
    return to_terminal


def to_stdout(output: str | None) -> bool:
    return output is None or output == STDOUT


def emit(text: str, output: str | None) -> None:
    """Write to stdout (no ``-o``, or ``-o -``) or to the file."""
    if output is None or output == STDOUT:
        # color=True: click would strip the colour codes on a pipe; the report has them only
        # when asked (--color always, FORCE_COLOR)
        click.echo(text, nl=False, color=True)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror or exc}")


def verbosity(verbose: int) -> int:
    """-v given before the subcommand (the group's) plus after it; sets the log level."""
    ctx = click.get_current_context(silent=True)
    group = ctx.find_root().obj if ctx is not None else None
    level = (group or {}).get("verbose", 0) + verbose
    if verbose:
        logging.getLogger().setLevel(logging.WARNING - 10 * min(level, 2))
    return level


def quiet_logging(quiet: int) -> None:
    if quiet:
        logging.getLogger().setLevel(logging.ERROR if quiet == 1 else logging.CRITICAL + 1)


# --executor, --dask, --dask-timeout and --remote-timeout: where and how runs are read and
# processed (ppo_doctor.pipeline)
run_on_options = options(
    click.option("--executor", type=click.Choice(EXECUTORS), help="local (this process), processes (--jobs N), or dask."),
    click.option("--dask", "dask_address", metavar="ADDRESS", help="Run on the Dask cluster at ADDRESS (tcp://host:8786)."),
    click.option(
        "--dask-timeout", type=Seconds(min=0, min_open=True), metavar="SECONDS",
        help="Fail when the Dask cluster has no worker within SECONDS (default: 60, or the config's).",
    ),
    click.option(
        "--remote-timeout", type=Seconds(min=0, min_open=True), metavar="SECONDS",
        help="Fail a request to an http(s):// or s3:// log that waits SECONDS to connect or to read (default: 30, $PPO_DOCTOR_REMOTE_TIMEOUT, or the config's).",
    ),
)


def show_settings(config: Config, sources: dict[str, str]) -> str:
    """``key = value  # source`` lines (TOML spelling, JSON values) for ``--show-settings``."""
    settings = config.to_dict()
    width = max(len(k) for k in settings)
    lines = []
    for key in sorted(settings):
        value = json.dumps(settings[key], ensure_ascii=False, sort_keys=True)
        lines.append(f"{key.replace('_', '-'):<{width}} = {plain(value)}  # {plain(sources.get(key, 'derived'))}")
    return "\n".join(lines) + "\n"
