"""``ppo-doctor sweep ROOT_OR_URL...``.

Exit codes: 0 when at least one run was analysed; 2 on a usage or configuration error, or when
no run could be read at all.  Unhealthy runs do not fail the command: a sweep is expected to hold
some (use ``check`` to gate CI on runs).
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import click

from ..errors import PPODoctorError
from ..exits import EXIT_OK
from ..sweep import sweep as run_sweep
from ..sweep.progress import ProgressBar
from ..sweep.render import FORMATS, render
from .common import emit, fail, resolve_settings, run_on_options, split
from .outputs import refuse_overwriting_inputs


def _options(func: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(
        [
            click.argument("roots", nargs=-1, required=True, type=click.Path()),
            click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True),
            click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the report to FILE instead of stdout."),
            click.option("--select", multiple=True, help="Only these rules: code prefixes or names, comma-separated; ALL."),
            click.option("--ignore", multiple=True, help="Skip these rules: code prefixes or names, comma-separated."),
            click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Use this config file (no search)."),
            click.option("--isolated", is_flag=True, help="Ignore every config file."),
            click.option("-j", "--jobs", type=click.IntRange(min=1), help="Analyse runs in N processes (or N Dask workers)."),
            *run_on_options(),
        ]
    ):
        func = option(func)
    return func


@click.command()
@_options
def sweep(roots, fmt, output, select, ignore, config_file, isolated, jobs, executor, dask_address, dask_timeout, remote_timeout) -> None:  # type: ignore[no-untyped-def]
    """One row per run under ROOTS (verdict, symptoms, onset, top cause, steps wasted after the
    onset) and the config values that separate the unhealthy runs from the healthy ones."""
    cli = {"select": split(select), "ignore": split(ignore), "jobs": jobs, "executor": executor, "dask": dask_address, "dask_timeout": dask_timeout, "remote_timeout": remote_timeout}
    settings = resolve_settings(cli, config_file, isolated)
    refuse_overwriting_inputs([output], roots, [settings.config_file])
    try:
        schedule = settings.schedule
        with ProgressBar() as bar:
            report = run_sweep(list(roots), settings, schedule, progress=bar)
    except PPODoctorError as exc:
        fail(str(exc))
    emit(render(report, fmt), output)
    if not any(r.verdict != "error" for r in report.rows):
        fail(f"no readable training run under {', '.join(roots)}")
    sys.exit(EXIT_OK)
