"""``ppo-doctor compare RUN_A RUN_B``: what changed between two runs.

A module of its own (:data:`ppo_doctor.cli.COMMANDS`), so that ``report`` and ``check`` never
import the comparison and its renderers (benchmarks/RESULTS.md, "Import cost").  Each run is read and analysed as
``report`` does it (:func:`.report.single_run`).
"""

from __future__ import annotations

import argparse

from ..report.compare import RENDERERS, compare as compare_runs
from .command import command, file_path
from .common import emit, resolve_settings, verbosity
from .outputs import refuse_overwriting_inputs
from .report import single_run


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_a", metavar="RUN_A")
    parser.add_argument("run_b", metavar="RUN_B")
    parser.add_argument("--format", dest="fmt", choices=("text", "markdown", "json"), default="text", help="Output format (default: text).")
    parser.add_argument("-o", "--output", type=file_path, metavar="FILE", help="Write to FILE instead of stdout ('-': stdout).")
    parser.add_argument("--config", dest="config_file", type=file_path, metavar="FILE", help="Use this config file (no search).")
    parser.add_argument("--isolated", action="store_true", help="Ignore every config file.")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="More logging on stderr (-vv: debug).")


@command(_arguments)
def compare(args: argparse.Namespace) -> None:
    """What changed between two runs: config values first, then verdicts, findings, top
    causes and core metrics."""
    verbosity(args)
    settings = resolve_settings({}, args.config_file, args.isolated)
    refuse_overwriting_inputs([args.output], [args.run_a, args.run_b], [settings.config_file])
    a = single_run(args.run_a, settings, "RUN_A")
    b = single_run(args.run_b, settings, "RUN_B")
    emit(RENDERERS[args.fmt](compare_runs(a, b)), args.output)
