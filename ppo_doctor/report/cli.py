"""``ppo-doctor report | check | plot | compare`` (loaded lazily by :mod:`ppo_doctor.cli`).

Exit codes (DESIGN.md): 0 no finding at or above ``--fail-on``; 1 there is one (``check``
only); 2 usage, configuration or unreadable input (no run could be read).  Settings come
from defaults < config file < these flags (:mod:`ppo_doctor.config`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Callable, NoReturn

import click

from ..config import FAIL_ON, FORMATS, resolve
from ..errors import PPODoctorError
from . import RenderOptions, render
from .escape import plain
from .model import Report, RunReport
from .progress import Progress

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _fail(message: str) -> NoReturn:
    """Print ``ppo-doctor: error: ...`` on stderr and exit 2."""
    click.echo(f"ppo-doctor: error: {plain(message)}", err=True)
    sys.exit(EXIT_ERROR)


def _split(values: tuple[str, ...]) -> list[str] | None:
    """``--select A,B --select C`` -> ``[A, B, C]``; None when the flag was not given."""
    items = [v.strip() for value in values for v in value.split(",") if v.strip()]
    return items or None


def _settings(cli: dict[str, Any], config_file: str | None, isolated: bool) -> dict[str, Any]:
    try:
        return resolve(cli, config_file=config_file, isolated=isolated)
    except PPODoctorError as exc:
        _fail(str(exc))


def _analyze(paths: tuple[str, ...], settings: dict[str, Any]) -> Report:
    """Analyse every path, with a progress line on a TTY; bad input never raises here."""
    from ..analyze import analyze

    report = Report()
    for path in paths:
        with Progress(f"reading {path}"):
            try:
                run_on = {k: settings[k] for k in ("executor", "dask") if settings.get(k)}
                part = analyze(path, settings, jobs=settings["jobs"], **run_on)
            except PPODoctorError as exc:
                _fail(str(exc))
        report.runs.extend(part.runs)
        report.errors.extend(part.errors)
    return report


def _check_readable(report: Report, paths: tuple[str, ...], *, errors_shown: bool = False) -> None:
    """Exit 2 when nothing could be read; the reasons go to stderr unless already on screen."""
    if report.runs:
        return
    if not errors_shown:
        for e in report.errors:
            click.echo(f"ppo-doctor: {e.level}: {plain(str(e))}", err=True)
    _fail(f"no readable training run under {', '.join(paths)}")


def _use_color(output: str | None) -> bool:
    # NO_COLOR (no-color.org): any non-empty value turns colour off
    return output is None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _emit(text: str, output: str | None) -> None:
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        _fail(f"cannot write {output}: {exc.strerror or exc}")


def _common(func: Callable) -> Callable:
    """Options shared by ``report`` and ``check``."""
    options = [
        click.argument("paths", nargs=-1, required=True, type=click.Path()),
        click.option("--format", "fmt", type=click.Choice(FORMATS), help="Output format (default: text, or the config's)."),
        click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the report to FILE instead of stdout."),
        click.option("--select", multiple=True, help="Only these rules: code prefixes or names, comma-separated; ALL."),
        click.option("--ignore", multiple=True, help="Skip these rules: code prefixes or names, comma-separated."),
        click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Use this config file (no search)."),
        click.option("--isolated", is_flag=True, help="Ignore every config file."),
        click.option("-j", "--jobs", type=click.IntRange(min=1), help="Read and analyse runs in N processes."),
        *run_on_options(),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def run_on_options() -> list[Callable]:
    """``--executor`` and ``--dask``: where runs are processed (:mod:`ppo_doctor.pipeline`)."""
    from ..config import EXECUTORS

    return [
        click.option("--executor", type=click.Choice(EXECUTORS), help="local (this process), processes (--jobs N), or dask."),
        click.option("--dask", "dask_address", metavar="ADDRESS", help="Run on the Dask cluster at ADDRESS (tcp://host:8786)."),
    ]


def _run_and_render(
    paths: tuple[str, ...], fmt: str | None, output: str | None, cli: dict[str, Any], config_file: str | None, isolated: bool
) -> tuple[Report, dict[str, Any]]:
    settings = _settings({**cli, "format": fmt}, config_file, isolated)
    report = _analyze(paths, settings)
    options = RenderOptions(
        fail_on=settings["fail_on"],
        color=settings["format"] == "text" and _use_color(output),
        config=settings,
    )
    with Progress(f"writing the {settings['format']} report"):  # html draws every plot: slow on big inputs
        text = render(report, settings["format"], options)
    _emit(text, output)
    _check_readable(report, paths, errors_shown=output is None and settings["format"] == "text")
    return report, settings


@click.command()
@_common
def report(paths, fmt, output, select, ignore, config_file, isolated, jobs, executor, dask_address) -> None:
    """Diagnose the training runs under PATHS: verdicts, findings, causes and fixes.

    Exits 0, or 2 when no run could be read or the configuration is bad.
    """
    cli = {"select": _split(select), "ignore": _split(ignore), "jobs": jobs, "executor": executor, "dask": dask_address}
    _run_and_render(paths, fmt, output, cli, config_file, isolated)


@click.command()
@_common
@click.option("--fail-on", type=click.Choice(FAIL_ON), help="Lowest severity that fails the check (default: error).")
def check(paths, fmt, output, select, ignore, config_file, isolated, jobs, executor, dask_address, fail_on) -> None:
    """Gate CI on the runs under PATHS.

    Exits 0 when no finding is at or above --fail-on, 1 when one is, 2 on a usage or
    configuration error or when no run could be read.
    """
    cli = {"select": _split(select), "ignore": _split(ignore), "jobs": jobs, "executor": executor, "dask": dask_address, "fail_on": fail_on}
    rep, settings = _run_and_render(paths, fmt, output, cli, config_file, isolated)
    floor = settings["fail_on"]
    failing = [] if floor == "never" else rep.findings_at_or_above(floor)
    sys.exit(EXIT_FINDINGS if failing else EXIT_OK)


def _single_run(path: str, settings: dict[str, Any], what: str) -> RunReport:
    rep = _analyze((path,), settings)
    _check_readable(rep, (path,))
    if len(rep.runs) != 1:
        ids = ", ".join(plain(r.run.id) for r in rep.runs[:10])
        _fail(f"{what} {path} holds {len(rep.runs)} runs ({ids}); point at one run's folder or file")
    return rep.runs[0]


@click.command()
@click.argument("path", type=click.Path())
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(file_okay=False), help="Folder for the figures.")
@click.option("--metrics", multiple=True, help="Only these metrics (canonical names or raw tags), comma-separated.")
@click.option("--format", "fmt", type=click.Choice(("png", "svg", "pdf")), default="png", show_default=True)
@click.option("--baseline", type=click.Path(), help="A healthy run to overlay in grey.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Use this config file (no search).")
@click.option("--isolated", is_flag=True, help="Ignore every config file.")
def plot(path, out_dir, metrics, fmt, baseline, config_file, isolated) -> None:
    """Draw annotated plots of the runs under PATH into a folder.

    One figure per metric group and run: incidents shaded and labelled with their rule
    codes, onsets marked, raw points under the smoothed line, NaN/Inf marked in red.
    """
    from .plots import plot_report

    settings = _settings({}, config_file, isolated)
    base = _single_run(baseline, settings, "--baseline").run if baseline else None
    rep = _analyze((path,), settings)
    _check_readable(rep, (path,))
    try:
        written = plot_report(rep, out_dir, fmt=fmt, metrics=_split(metrics), baseline=base)
    except OSError as exc:
        _fail(f"cannot write plots to {out_dir}: {exc.strerror or exc}")
    for p in written:
        click.echo(plain(str(p)))
    if not written:
        click.echo("ppo-doctor: no plottable metric found", err=True)


@click.command()
@click.argument("run_a", type=click.Path())
@click.argument("run_b", type=click.Path())
@click.option("--format", "fmt", type=click.Choice(("text", "markdown", "json")), default="text", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to FILE instead of stdout.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Use this config file (no search).")
@click.option("--isolated", is_flag=True, help="Ignore every config file.")
def compare(run_a, run_b, fmt, output, config_file, isolated) -> None:
    """What changed between two runs: verdicts, findings, top causes and core metrics."""
    from .compare import RENDERERS, compare as compare_runs

    settings = _settings({}, config_file, isolated)
    a = _single_run(run_a, settings, "RUN_A")
    b = _single_run(run_b, settings, "RUN_B")
    _emit(RENDERERS[fmt](compare_runs(a, b)), output)
