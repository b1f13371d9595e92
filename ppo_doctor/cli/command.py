"""What a subcommand is made of, on top of the standard library's :mod:`argparse`.

A command is a function taking the parsed :class:`argparse.Namespace` (its docstring is its
``--help`` text, the first paragraph its line in ``ppo-doctor --help``) and a function that
declares its arguments on a parser (:func:`command`).  :mod:`ppo_doctor.cli` builds the parser of
the one command that runs, after importing its module.  argparse rather than click: a ``check``
of one small run is a whole process in a CI step or a hook, and click's import and option
objects cost some 4 % of it (benchmarks/RESULTS.md, "One small check").

The argument types here keep the checks the command line had: a count at least 1, a positive
timeout, a file option that must not name a folder, a folder option that must not name a file.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Callable, NamedTuple


class UsageError(Exception):
    """A bad combination of arguments found after parsing: usage and the message on stderr, exit 2."""


class Command(NamedTuple):
    run: Callable[[argparse.Namespace], None]
    arguments: Callable[[argparse.ArgumentParser], None]

    @property
    def help(self) -> str:
        """The docstring of :attr:`run`, dedented."""
        import inspect  # not at import: ``ppo-doctor --help`` lists the commands without it

        return inspect.cleandoc(self.run.__doc__ or "")

    @property
    def summary(self) -> str:
        """The first paragraph of :attr:`help`, on one line."""
        return " ".join(self.help.split("\n\n")[0].split())


def command(arguments: Callable[[argparse.ArgumentParser], None]) -> Callable[[Callable[[argparse.Namespace], None]], Command]:
    """``@command(declare)`` over ``def name(args): "help"``: the two as one :class:`Command`."""
    return lambda run: Command(run, arguments)


def parser(prog: str, description: str) -> argparse.ArgumentParser:
    """A parser that takes no abbreviated options (a CI script's ``--form`` must not become
    ``--format`` by luck) and keeps the description's paragraphs."""
    return argparse.ArgumentParser(prog=prog, description=description, formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False)


def short_usage(parser: argparse.ArgumentParser) -> str:
    """``%(prog)s [options] PATHS [PATHS ...]``: the positionals in full, the options left to
    ``--help`` (argparse's own usage lists every option: half a screen before each error)."""
    words = ["%(prog)s [options]"]
    for action in parser._get_positional_actions():  # argparse's own accessor; it has no public one
        name = str(action.metavar or action.dest)
        words.append({"+": f"{name} [{name} ...]", "?": f"[{name}]", "*": f"[{name} ...]"}.get(str(action.nargs), name))
    return " ".join(words)


def echo(text: str = "", *, err: bool = False, nl: bool = True) -> None:
    """Write a line to stdout (or stderr) and flush it, so that the two streams interleave in
    the order written (a ``watch`` line reaches a pipe at once)."""
    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n" if nl else text)
    stream.flush()


def at_least(minimum: float, kind: Callable[[str], float] = int, *, strict: bool = False) -> Callable[[str], float]:
    """An argument type: a number of ``kind`` at least ``minimum`` (above it, when ``strict``)."""
    bound = f"x>{minimum}" if strict else f"x>={minimum}"

    def convert(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a valid {'integer' if kind is int else 'number'}") from None
        if not minimum <= value < math.inf or (strict and value == minimum):  # NaN fails every comparison
            raise argparse.ArgumentTypeError(f"{text} is not in the range {bound}")
        return value

    return convert


def file_path(text: str) -> str:
    """An argument type: a file to read or write, which must not be an existing folder."""
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"file {text!r} is a directory")
    return text


def dir_path(text: str) -> str:
    """An argument type: a folder to write into, which must not be an existing file."""
    if os.path.exists(text) and not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"directory {text!r} is a file")
    return text
