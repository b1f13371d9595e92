"""Command line: ``ppo-doctor report | check | plot | metrics | rules | explain | compare | schema | sweep | watch | simulate | validate``.

One module of this package per command group (:data:`COMMANDS`), each imported when one of its
commands runs or ``--help`` lists it, so that a command pays only for its own imports; heavy
modules (matplotlib, torch) are imported only inside the commands that need them.  A command
module that fails to import is an error naming the module, never a missing command.  A broken
plugin (:class:`~ppo_doctor.errors.PluginError`, raised wherever a command first needs the rules,
the readers or the formats) is one error line and exit 2, as a bad configuration is.  Exit
codes: :mod:`ppo_doctor.exits`.
"""

from __future__ import annotations

import gc
import importlib
import logging
import sys
from types import ModuleType

import click

from .._version import __version__
from ..errors import PluginError
from ..exits import EXIT_ERROR

# command -> ("module of this package:attribute", the first paragraph of its help): ``--help``
# lists the commands from these summaries, so that it imports none of the command modules (and
# so neither numpy nor the analyser: ``--help`` must stay under 0.15 s of CPU, benchmarks/README.md);
# tests/test_import_cost.py checks that each summary shortens to what the command's own help does.
COMMANDS = {
    "report": ("report:report", "Diagnose the training runs under PATHS: verdicts, findings, causes and fixes."),
    "check": ("report:check", "Gate CI on the runs under PATHS."),
    "plot": ("report:plot", "Draw annotated plots of the runs under PATH into a folder."),
    "compare": ("compare:compare", "What changed between two runs: config values first, then verdicts, findings, top causes and core metrics."),
    "metrics": ("report:metrics", "Show what was read: runs, formats, frameworks, step ranges, tag mapping, warnings."),
    "schema": ("report:schema", "Print the JSON Schema of the ``--format json`` report (draft 2020-12)."),
    "rules": ("rules:rules", "List every rule: code, name, symptom, severity, evidence (event or trend) and summary."),
    "explain": ("rules:explain", "Explain one rule: documentation, parameters, requirements, causes and examples."),
    "simulate": ("reference:simulate", "Train the bundled tiny PPO-RLHF loop with scenario NAME's fault and write its logs to OUT."),
    "validate": ("reference:validate", "Run the fault scenarios, diagnose each, and score the doctor (confusion matrix, cause accuracy)."),
    "sweep": (
        "sweep:sweep",
        "One row per run under ROOTS (verdict, symptoms, onset, top cause, steps wasted after the onset) and the config values that separate the unhealthy runs from the healthy ones.",
    ),
    "watch": ("watch:watch", "Follow PATH while a training writes it; print each new finding once."),
}


class CommandImportError(ImportError):
    """A command's module could not be imported (a broken install or a bug, not user input)."""


class LazyGroup(click.Group):
    """click's lazy-group pattern: commands are looked up in :data:`COMMANDS` on first use."""

    # True when this process is the ``ppo-doctor`` command (:func:`main`), not a caller's (a
    # test's CliRunner, a notebook): only then is the collector paused while a command imports
    own_process = False

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return super().get_command(ctx, cmd_name)
        module, attr = COMMANDS[cmd_name][0].split(":")
        name = f"{__name__}.{module}"
        try:
            command = getattr(self._import(name), attr)
        except ImportError as exc:
            raise CommandImportError(f"the {cmd_name!r} command cannot load: importing {name} failed: {exc}") from exc
        if not isinstance(command, click.Command):
            raise TypeError(f"{name}:{attr} is not a click command")
        return command

    def _import(self, name: str) -> ModuleType:
        """The command's module.  In a process of its own, the cyclic garbage collector is paused
        while it imports: numpy and the analyser, some 150 modules of the package and the classes and
        tables they build, kept for the life of the process, whose allocations set off dozens of
        collections that free almost nothing (benchmarks/RESULTS.md, "Import cost").  What was imported is then frozen
        out of later collections (:func:`gc.freeze`, as the ``gc`` documentation does for a
        process's long-lived objects)."""
        if not (self.own_process and gc.isenabled()):
            return importlib.import_module(name)
        gc.disable()
        try:
            return importlib.import_module(name)
        finally:
            gc.freeze()
            gc.enable()

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's own command list, with the lazy commands' lines made from their
        :data:`COMMANDS` summaries instead of importing each command's module."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            if name in COMMANDS:  # shortened as click shortens the command's own help
                rows.append((name, click.Command(name, help=COMMANDS[name][1]).get_short_help_str(limit)))
                continue
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


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
    cli.own_process = True
    try:
        cli(prog_name="ppo-doctor")
    except PluginError as exc:
        click.echo(f"ppo-doctor: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    finally:  # a caller that catches the exit and runs the group again (CliRunner) is not frozen
        cli.own_process = False
