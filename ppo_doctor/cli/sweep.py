"""``ppo-doctor sweep ROOT_OR_URL...``.

Exit codes: 0 when at least one run was analysed; 2 on a usage or configuration error, or when
no run could be read at all.  Unhealthy runs do not fail the command: a sweep is expected to hold
some (use ``check`` to gate CI on runs).
"""

from __future__ import annotations

import sys
from typing import Any

import click

from ..errors import PPODoctorError
from ..exits import EXIT_OK
from ..sweep import sweep as run_sweep
from ..sweep.progress import ProgressBar
from ..sweep.render import FORMATS, render
from .common import FILE, emit, fail, resolve_settings, run_on_options, split
from .outputs import refuse_overwriting_inputs


@click.command()
@click.argument("roots", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", help="Output format (default: text).")
@click.option("-o", "--output", type=FILE, metavar="FILE", help="Write the report to FILE instead of stdout.")
@click.option("--select", multiple=True, help="Only these rules: code prefixes or names, comma-separated; ALL.")
@click.option("--ignore", multiple=True, help="Skip these rules: code prefixes or names, comma-separated.")
@click.option("--config", "config_file", type=FILE, metavar="FILE", help="Use this config file (no search).")
@click.option("--isolated", is_flag=True, help="Ignore every config file.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), metavar="N", help="Analyse runs in N processes (or N Dask workers).")
@run_on_options
def sweep(**opts: Any) -> None:
    """One row per run under ROOTS (verdict, symptoms, onset, top cause, steps wasted after the
    onset) and the config values that separate the unhealthy runs from the healthy ones."""
    cli = {
        "select": split(opts["select"]), "ignore": split(opts["ignore"]), "jobs": opts["jobs"], "executor": opts["executor"],
        "dask": opts["dask_address"], "dask_timeout": opts["dask_timeout"], "remote_timeout": opts["remote_timeout"],
    }
    settings = resolve_settings(cli, opts["config_file"], opts["isolated"])
    roots = opts["roots"]
    refuse_overwriting_inputs([opts["output"]], roots, [settings.config_file])
    try:
        schedule = settings.schedule
        with ProgressBar() as bar:
            report = run_sweep(list(roots), settings, schedule, progress=bar)
    except PPODoctorError as exc:
        fail(str(exc))
    emit(render(report, opts["fmt"]), opts["output"])
    if not any(r.verdict != "error" for r in report.rows):
        fail(f"no readable training run under {', '.join(roots)}")
    sys.exit(EXIT_OK)
