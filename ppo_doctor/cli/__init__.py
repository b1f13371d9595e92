"""Command line: ppo-doctor report | check | plot | metrics | rules | explain | compare | schema | sweep | watch | simulate | validate.

A click group whose commands are loaded lazily, as click's documentation shows ("Lazily loading
subcommands", https://click.palletsprojects.com/en/stable/complex/#lazily-loading-subcommands):
one module of this package per command group (COMMANDS), imported only when one of its commands
runs, so that a command pays only for its own imports and ppo-doctor --help imports none of
them.  A command module that fails to import is an error naming the module, never a missing
command.  A broken plugin (PluginError, raised wherever a command first needs the rules, the
readers or the formats) is one error line and exit 2, as a bad configuration is.  Exit codes:
ppo_doctor.exits.  Shell completion is click's (docs/cli.md, "Shell completion").
"""

from __future__ import annotations

import importlib
import logging
import sys

import click

from .._version import __version__
from ..errors import PluginError
from ..exits import EXIT_ERROR

# command -> ("module of this package:attribute", the first paragraph of its help): --help lists
# the commands from these summaries, so that it imports none of the command modules (and so
# neither numpy nor the analyser: --help must stay under 0.15 s of CPU, benchmarks/README.md);
# tests/test_cli_package.py checks that each summary is the command's own.
COMMANDS = {
    "report": ("report:report", "Diagnose the training runs under PATHS: verdicts, findings, causes and fixes."),
    "check": ("report:check", "Gate CI on the runs under PATHS."),
    "plot": ("report:plot", "Draw annotated plots of the runs under PATH into a folder."),
    "compare": ("compare:compare", "What changed between two runs: config values first, then verdicts, findings, top causes and core metrics."),
    "metrics": ("report:metrics", "Show what was read: runs, formats, frameworks, step ranges, tag mapping, warnings."),
    "schema": ("report:schema", "Print the JSON Schema of the --format json report (draft 2020-12)."),
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


def load(name: str) -> click.Command:
    """The command called ``name`` (a key of COMMANDS), its module imported."""
    module_name, attr = COMMANDS[name][0].split(":")
    module_name = f"{__name__}.{module_name}"
    try:
        found = getattr(importlib.import_module(module_name), attr)
    except ImportError as exc:
        raise CommandImportError(f"the {name!r} command cannot load: importing {module_name} failed: {exc}") from exc
    if not isinstance(found, click.Command):
        raise TypeError(f"{module_name}:{attr} is not a click command")
    return found


class LazyGroup(click.Group):
    """click's lazy group: a command's module is imported when the command is looked up."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return load(cmd_name) if cmd_name in COMMANDS else None

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        """click's, with the commands listed after an unknown one (click names only the word)."""
        name = args[0] if args else ""
        if name not in COMMANDS and not name.startswith("-") and not ctx.resilient_parsing:
            ctx.fail(f"No such command {name!r}; the commands: {', '.join(sorted(COMMANDS))}.")
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's own command list, each line made from the command's COMMANDS summary instead
        of importing its module (shortened as click shortens a command's own help)."""
        limit = formatter.width - 6 - max(len(name) for name in COMMANDS)
        rows = [(name, click.Command(name, help=COMMANDS[name][1]).get_short_help_str(limit)) for name in sorted(COMMANDS)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ppo-doctor")
@click.option("-v", "--verbose", count=True, help="More logging on stderr (-vv for debug); also accepted after the subcommand.")
@click.pass_context
def cli(ctx: click.Context, verbose: int) -> None:
    """Offline doctor for PPO / RLHF training logs."""
    ctx.obj = {"verbose": verbose}  # the commands with their own -v add it to this
    logging.basicConfig(level=logging.WARNING - 10 * min(verbose, 2), format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """ppo-doctor with ``argv`` (default: the process's own arguments): the exit code.  click
    exits through SystemExit with the codes of ppo_doctor.exits (a usage error: 2, Ctrl-C: 1,
    a closed pipe: 1); a broken plugin is one error line and exit 2."""
    try:
        cli.main(args=argv, prog_name="ppo-doctor")
    except PluginError as exc:
        click.echo(f"ppo-doctor: error: {exc}", err=True)
        return EXIT_ERROR
    return 0
