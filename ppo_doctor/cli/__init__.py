"""Command line: ``ppo-doctor report | check | plot | metrics | rules | explain | compare | schema | sweep | watch | simulate | validate``.

One module of this package per command group (:data:`COMMANDS`), imported only when one of its
commands runs, so that a command pays only for its own imports; heavy modules (matplotlib,
torch) are imported only inside the commands that need them.  ``ppo-doctor --help`` lists the
commands from their summaries here.  The options before the command are the group's
(``-v``, ``--version``, ``--help``); the command's own parser (:mod:`.command`, argparse) takes the
rest.  A command module that fails to import is an error naming the module, never a missing
command.  A broken plugin (:class:`~ppo_doctor.errors.PluginError`, raised wherever a command
first needs the rules, the readers or the formats) is one error line and exit 2, as a bad
configuration is.  Exit codes: :mod:`ppo_doctor.exits`.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import logging
import sys

from .._version import __version__
from ..errors import PluginError
from ..exits import EXIT_ERROR
from .command import Command, UsageError, echo, parser, short_usage

# command -> ("module of this package:attribute", the first paragraph of its help): ``--help``
# lists the commands from these summaries, so that it imports none of the command modules (and
# so neither numpy nor the analyser: ``--help`` must stay under 0.15 s of CPU, benchmarks/README.md);
# tests/test_cli_package.py checks that each summary is the command's own (:attr:`.Command.summary`).
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


DESCRIPTION = "Offline doctor for PPO / RLHF training logs."


class CommandImportError(ImportError):
    """A command's module could not be imported (a broken install or a bug, not user input)."""


def load(name: str, *, own_process: bool = False) -> Command:
    """The command called ``name`` (a key of :data:`COMMANDS`), its module imported.

    In a process of its own (``own_process``: the ``ppo-doctor`` command, not a caller's test or
    notebook), the cyclic garbage collector is paused while the module imports: numpy and the
    analyser, some 150 modules of the package and the classes and tables they build, kept for the
    life of the process, whose allocations set off dozens of collections that free almost
    nothing (benchmarks/RESULTS.md, "Import cost").  What was imported is then frozen out of later
    collections (:func:`gc.freeze`, as the ``gc`` documentation does for a process's long-lived
    objects).

    Every command module imports numpy (the analyser's arrays), and numpy is imported first, here,
    before the command's own chain of nested imports.  CPython 3.11 keeps Python frames in 16 KiB
    chunks and unmaps a chunk as soon as the frame that opened it returns (``_PyThreadState_PopFrame``
    in Python/pystate.c); numpy's import recurses deeply (the ``Literal`` tables of
    ``numpy._typing``), and begun some hundred frames down, under the package's own imports, it
    crossed a chunk boundary back and forth: 450 ``mmap``/``munmap`` pairs under click's
    dispatch, 1,700 under this one, up to 15 ms of system time in a 0.17 s ``check``; from here,
    none (benchmarks/RESULTS.md, "Import cost")."""
    module_name, attr = COMMANDS[name][0].split(":")
    module_name = f"{__name__}.{module_name}"
    paused = own_process and gc.isenabled()
    if paused:
        gc.disable()
    try:
        importlib.import_module("numpy")  # first, from this shallow frame: see the docstring
        found = getattr(importlib.import_module(module_name), attr)
    except ImportError as exc:
        raise CommandImportError(f"the {name!r} command cannot load: importing {module_name} failed: {exc}") from exc
    finally:
        if paused:
            gc.freeze()
            gc.enable()
    if not isinstance(found, Command):
        raise TypeError(f"{module_name}:{attr} is not a command")
    return found


class _GroupParser(argparse.ArgumentParser):
    """The options before the command; its help lists the commands from :data:`COMMANDS`."""

    def format_help(self) -> str:
        import shutil
        import textwrap

        width = max(len(name) for name in COMMANDS)
        columns = max(shutil.get_terminal_size().columns - 2, width + 40)  # as argparse's own formatter
        lines = [
            textwrap.fill(COMMANDS[name][1], columns, initial_indent=f"  {name:<{width}}  ", subsequent_indent=" " * (width + 4))
            for name in sorted(COMMANDS)
        ]
        self.epilog = "\n".join(["commands:", *lines, "", "'ppo-doctor COMMAND --help' shows a command's arguments."])
        return super().format_help()


def _group_parser() -> argparse.ArgumentParser:
    group = _GroupParser(
        prog="ppo-doctor", usage="ppo-doctor [-h] [--version] [-v] COMMAND [ARGS]...", description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False,
    )
    group.add_argument("--version", action="version", version=f"ppo-doctor, version {__version__}")
    group.add_argument("-v", "--verbose", action="count", default=0, help="More logging on stderr (-vv for debug); also accepted after the subcommand.")
    return group


def main(argv: list[str] | None = None) -> int:
    """``ppo-doctor`` with ``argv`` (default: the process's own arguments, and then this is the
    ``ppo-doctor`` process itself): the exit code.  Commands that end early exit through
    :class:`SystemExit`, with the codes of :mod:`ppo_doctor.exits`; a usage error exits 2."""
    own_process = argv is None
    args = sys.argv[1:] if argv is None else list(argv)
    # the group's options take no value: the first other word is the command
    at = next((i for i, arg in enumerate(args) if not arg.startswith("-") or arg == "-"), len(args))
    group = _group_parser()
    group_args = group.parse_args(args[:at])
    if at == len(args):
        group.print_help(sys.stderr)
        return EXIT_ERROR
    name = args[at]
    if name not in COMMANDS:
        group.error(f"no such command {name!r}; the commands: {', '.join(sorted(COMMANDS))}")
    logging.basicConfig(level=logging.WARNING - 10 * min(group_args.verbose, 2), format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        found = load(name, own_process=own_process)
        own = parser(f"ppo-doctor {name}", found.help)
        found.arguments(own)
        own.usage = short_usage(own)
        command_args = own.parse_intermixed_args(args[at + 1 :])
        command_args.group_verbose = group_args.verbose
        try:
            found.run(command_args)
        except UsageError as exc:
            own.error(str(exc))
    except PluginError as exc:
        echo(f"ppo-doctor: error: {exc}", err=True)
        return EXIT_ERROR
    except KeyboardInterrupt:
        echo("Aborted!", err=True)
        return 1
    except BrokenPipeError:
        # the reader of a pipe (``| head``) went away: nothing more can be written; stdout is
        # pointed at /dev/null so that flushing it at exit does not fail again (the Python
        # documentation's note on SIGPIPE)
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0
