"""``ppo-doctor sweep ROOT_OR_URL...``.

Exit codes: 0 when at least one run was analysed; 2 on a usage or configuration error, or when
no run could be read at all.  Unhealthy runs do not fail the command: a sweep is expected to hold
some (use ``check`` to gate CI on runs).
"""

from __future__ import annotations

import argparse
import sys

from ..errors import PPODoctorError
from ..exits import EXIT_OK
from ..sweep import sweep as run_sweep
from ..sweep.progress import ProgressBar
from ..sweep.render import FORMATS, render
from .command import at_least, command, file_path
from .common import add_run_on_arguments, emit, fail, resolve_settings, split
from .outputs import refuse_overwriting_inputs


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("roots", nargs="+", metavar="ROOTS")
    parser.add_argument("--format", dest="fmt", choices=FORMATS, default="text", help="Output format (default: text).")
    parser.add_argument("-o", "--output", type=file_path, metavar="FILE", help="Write the report to FILE instead of stdout.")
    parser.add_argument("--select", action="append", help="Only these rules: code prefixes or names, comma-separated; ALL.")
    parser.add_argument("--ignore", action="append", help="Skip these rules: code prefixes or names, comma-separated.")
    parser.add_argument("--config", dest="config_file", type=file_path, metavar="FILE", help="Use this config file (no search).")
    parser.add_argument("--isolated", action="store_true", help="Ignore every config file.")
    parser.add_argument("-j", "--jobs", type=at_least(1), metavar="N", help="Analyse runs in N processes (or N Dask workers).")
    add_run_on_arguments(parser)


@command(_arguments)
def sweep(args: argparse.Namespace) -> None:
    """One row per run under ROOTS (verdict, symptoms, onset, top cause, steps wasted after the
    onset) and the config values that separate the unhealthy runs from the healthy ones."""
    cli = {
        "select": split(args.select), "ignore": split(args.ignore), "jobs": args.jobs, "executor": args.executor,
        "dask": args.dask_address, "dask_timeout": args.dask_timeout, "remote_timeout": args.remote_timeout,
    }
    settings = resolve_settings(cli, args.config_file, args.isolated)
    roots = args.roots
    refuse_overwriting_inputs([args.output], roots, [settings.config_file])
    try:
        schedule = settings.schedule
        with ProgressBar() as bar:
            report = run_sweep(list(roots), settings, schedule, progress=bar)
    except PPODoctorError as exc:
        fail(str(exc))
    emit(render(report, args.fmt), args.output)
    if not any(r.verdict != "error" for r in report.rows):
        fail(f"no readable training run under {', '.join(roots)}")
    sys.exit(EXIT_OK)
