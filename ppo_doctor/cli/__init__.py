"""Command line: ``ppo-doctor report | check | plot | metrics | rules | explain | compare | schema | sweep | watch | simulate | validate``.

One module of this package per command group (:data:`COMMANDS`), each imported when one of its
commands runs or ``--help`` lists it, so that a command pays only for its own imports; heavy
modules (matplotlib, torch) are imported only inside the commands that need them.  A command
module that fails to import is an error naming the module, never a missing command.  Exit
codes: :mod:`ppo_doctor.exits`.
"""

from __future__ import annotations

import importlib
import logging
import sys

import click

from .._version import __version__

# command -> "module of this package:attribute"
COMMANDS = {
    "report": "report:report",
    "check": "report:check",
    "plot": "report:plot",
    "compare": "report:compare",
    "metrics": "report:metrics",
    "schema": "report:schema",
    "rules": "rules:rules",
    "explain": "rules:explain",
    "simulate": "reference:simulate",
    "validate": "reference:validate",
    "sweep": "sweep:sweep",
    "watch": "watch:watch",
}


class CommandImportError(ImportError):
    """A command's module could not be imported (a broken install or a bug, not user input)."""


class LazyGroup(click.Group):
    """click's lazy-group pattern: commands are looked up in :data:`COMMANDS` on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return super().get_command(ctx, cmd_name)
        module, attr = COMMANDS[cmd_name].split(":")
        name = f"{__name__}.{module}"
        try:
            command = getattr(importlib.import_module(name), attr)
        except ImportError as exc:
            raise CommandImportError(f"the {cmd_name!r} command cannot load: importing {name} failed: {exc}") from exc
        if not isinstance(command, click.Command):
            raise TypeError(f"{name}:{attr} is not a click command")
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ppo-doctor")
@click.option("-v", "--verbose", count=True, help="More logging on stderr (-vv for debug); also accepted after the subcommand.")
@click.pass_context
def cli(ctx: click.Context, verbose: int) -> None:
    """Offline doctor for PPO / RLHF training logs."""
    ctx.obj = {"verbose": verbose}  # report/check add their own -v to this
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)


def main() -> None:
    cli(prog_name="ppo-doctor")
