"""``ppo-doctor compare RUN_A RUN_B``: what changed between two runs.

A module of its own (:data:`ppo_doctor.cli.COMMANDS`), so that ``report`` and ``check`` never
import the comparison and its renderers (benchmarks/RESULTS.md, "Import cost").  Each run is read and analysed as
``report`` does it (:func:`.report.single_run`).
"""

from __future__ import annotations

import click

from ..report.compare import RENDERERS, compare as compare_runs
from .common import FILE, FILE_OR_DASH, emit, resolve_settings, verbosity
from .outputs import refuse_overwriting_inputs
from .report import single_run


@click.command()
@click.argument("run_a")
@click.argument("run_b")
@click.option("--format", "fmt", type=click.Choice(("text", "markdown", "json")), default="text", help="Output format (default: text).")
@click.option("-o", "--output", type=FILE_OR_DASH, metavar="FILE", help="Write to FILE instead of stdout ('-': stdout).")
@click.option("--config", "config_file", type=FILE, metavar="FILE", help="Use this config file (no search).")
@click.option("--isolated", is_flag=True, help="Ignore every config file.")
@click.option("-v", "--verbose", count=True, help="More logging on stderr (-vv: debug).")
def compare(run_a: str, run_b: str, fmt: str, output: str | None, config_file: str | None, isolated: bool, verbose: int) -> None:
    """What changed between two runs: config values first, then verdicts, findings, top
    causes and core metrics."""
    verbosity(verbose)
    settings = resolve_settings({}, config_file, isolated)
    refuse_overwriting_inputs([output], [run_a, run_b], [settings.config_file])
    a = single_run(run_a, settings, "RUN_A")
    b = single_run(run_b, settings, "RUN_B")
    emit(RENDERERS[fmt](compare_runs(a, b)), output)
