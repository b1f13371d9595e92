"""Command line: ``ppo-doctor report | check | plot | metrics | rules | explain | compare | schema | sweep | watch | simulate | validate``.

Exit codes (DESIGN.md): 0 no finding at or above ``--fail-on``; 1 there is one; 2 usage,
config or unreadable-input error.  Heavy modules (matplotlib, torch) are imported only by
the commands that need them, so ``check`` stays fast.
"""

from __future__ import annotations

import logging
import sys

import importlib

import click

from ._version import __version__
from .config import EXECUTORS

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

# Commands that live beside the code they drive, loaded only when invoked (click's lazy-group
# pattern) so that one command's heavy imports never slow another down.
LAZY_COMMANDS = {
    "report": "ppo_doctor.report.cli:report",
    "check": "ppo_doctor.report.cli:check",
    "plot": "ppo_doctor.report.cli:plot",
    "compare": "ppo_doctor.report.cli:compare",
    "sweep": "ppo_doctor.sweep.cli:sweep",
    "rules": "ppo_doctor.rules.cli:rules",
    "explain": "ppo_doctor.rules.cli:explain",
    "simulate": "ppo_doctor.reference.cli:simulate",
    "validate": "ppo_doctor.reference.cli:validate",
    "watch": "ppo_doctor.watch:watch",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(LAZY_COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS:
            module, attr = LAZY_COMMANDS[cmd_name].split(":")
            try:
                return getattr(importlib.import_module(module), attr)
            except (ImportError, AttributeError):
                return None
        return super().get_command(ctx, cmd_name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ppo-doctor")
@click.option("-v", "--verbose", count=True, help="More logging on stderr (-vv for debug); also accepted after the subcommand.")
@click.pass_context
def cli(ctx: click.Context, verbose: int) -> None:
    """Offline doctor for PPO / RLHF training logs."""
    ctx.obj = {"verbose": verbose}  # report/check add their own -v to this
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)


@cli.command()
@click.argument("path", type=click.Path(exists=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--jobs", "-j", type=int, default=1, show_default=True, help="Read runs in N processes.")
@click.option("--executor", type=click.Choice(EXECUTORS), help="local (this process), processes (--jobs N), or dask.")
@click.option("--dask", "dask_address", metavar="ADDRESS", help="Read on the Dask cluster at ADDRESS (tcp://host:8786).")
def metrics(path: str, fmt: str, jobs: int, executor: str | None, dask_address: str | None) -> None:
    """Show what was read: runs, formats, frameworks, step ranges, tag mapping, warnings."""
    from .errors import PPODoctorError
    from .pipeline import load
    from .report.metrics_listing import render_metrics

    try:
        result = load(path, jobs=jobs, executor=executor, dask=dask_address)
    except PPODoctorError as exc:
        click.echo(f"ppo-doctor: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    click.echo(render_metrics(result, fmt))
    if not result.runs and result.errors:
        sys.exit(EXIT_ERROR)


@cli.command()
def schema() -> None:
    """Print the JSON Schema of the ``--format json`` report (draft 2020-12)."""
    from .report.json_out import json_schema_text

    click.echo(json_schema_text(), nl=False)


def main() -> None:
    cli(prog_name="ppo-doctor")


if __name__ == "__main__":  # pragma: no cover
    main()
