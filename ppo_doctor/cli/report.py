"""``ppo-doctor report | check | plot | metrics | schema``: the commands that read runs and write
what was found (``compare`` is :mod:`.compare`'s, so that a ``check`` never imports it).

Exit codes (:mod:`ppo_doctor.exits`): 0 no finding at or above ``--fail-on``; 1 there is one
(``check`` only); 2 usage, configuration or unreadable input (no run could be read; for
``check``, also a log under the paths that could not be read).
``check`` closes with one line on stderr saying why it exits as it does; ``--extend-select`` /
``--extend-ignore``, ``--statistics`` and ``--show-settings`` follow ruff's.
"""

from __future__ import annotations

import shutil
import sys
from collections import Counter
from typing import Any

import click

from ..analyze import analyze
from ..config import EXECUTORS, FAIL_ON, Config
from ..errors import PPODoctorError
from ..exits import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK
from ..pipeline import load
from ..report import RenderOptions, render
from ..report.escape import plain
from ..report.json_out import json_schema_text
from ..report.metrics_listing import render_metrics
from ..report.progress import Progress
from ..results import SEVERITY_RANK, Report, RunReport
from ..suppress import drop_baselined, read_baseline, write_baseline
from .common import (
    DIRECTORY,
    FILE,
    FILE_OR_DASH,
    FormatChoice,
    emit,
    fail,
    options,
    quiet_logging,
    resolve_settings,
    resolve_settings_and_sources,
    run_on_options,
    show_settings,
    split,
    to_stdout,
    use_color,
    verbosity,
)
from .outputs import refuse_overwriting_inputs


def _analyze(paths: tuple[str, ...], settings: Config, *, quiet: bool = False) -> Report:
    """Analyse every path, with a progress line on a TTY; bad input never raises here.

    The paths are analysed together, so that run ids are unique within the report (several
    inputs qualify them, :func:`ppo_doctor.pipeline.root_labels`)."""
    with Progress(f"reading {', '.join(paths)}", quiet=quiet):
        try:
            return analyze(list(paths) if len(paths) > 1 else paths[0], settings)
        except PPODoctorError as exc:
            fail(str(exc))


def _check_readable(report: Report, paths: tuple[str, ...], *, errors_shown: bool = False) -> None:
    """Exit 2 when nothing could be read; the reasons go to stderr unless already on screen."""
    if report.runs:
        return
    if not errors_shown:
        for e in report.errors:
            click.echo(f"ppo-doctor: {e.level}: {plain(str(e))}", err=True)
    fail(f"no readable training run under {', '.join(paths)}")


# the options report and check share
_report_options = options(
    click.argument("paths", nargs=-1, required=True),
    click.option("--format", "fmt", type=FormatChoice(), help="Output format (plugins' formats included; default: text, or the config's)."),
    click.option("-o", "--output", type=FILE_OR_DASH, metavar="FILE", help="Write the report to FILE instead of stdout ('-': stdout)."),
    click.option("--select", multiple=True, help="Only these rules: code prefixes or names, comma-separated; ALL."),
    click.option("--ignore", multiple=True, help="Skip these rules: code prefixes or names, comma-separated."),
    click.option("--extend-select", multiple=True, help="Add these rules to the selection (the config's or --select's)."),
    click.option("--extend-ignore", multiple=True, help="Add these rules to the ignored ones."),
    click.option("--config", "config_file", type=FILE, metavar="FILE", help="Use this config file (no search)."),
    click.option("--isolated", is_flag=True, help="Ignore every config file."),
    click.option("-j", "--jobs", type=click.IntRange(min=1), metavar="N", help="Read and analyse runs in N processes."),
    click.option("-v", "--verbose", count=True, help="Full detail in the text report; more logging (-vv: debug)."),
    click.option("-q", "--quiet", count=True, help="Only the report (-qq: nothing, only the exit code)."),
    click.option(
        "--color", type=click.Choice(("auto", "always", "never")), default="auto",
        help="Colour the text report (auto, the default: on a terminal, unless NO_COLOR; FORCE_COLOR forces it).",
    ),
    click.option("--statistics", is_flag=True, help="Print the number of findings per rule code instead of the report."),
    click.option("--show-settings", is_flag=True, help="Print the resolved settings and where each came from, then exit."),
    run_on_options,
)


def _cli_settings(opts: dict[str, Any]) -> dict[str, Any]:
    return {
        "select": split(opts["select"]),
        "ignore": split(opts["ignore"]),
        "extend_select": split(opts["extend_select"]),
        "extend_ignore": split(opts["extend_ignore"]),
        "jobs": opts["jobs"],
        "format": opts["fmt"],
        "fail_on": opts.get("fail_on"),
        "executor": opts["executor"],
        "dask": opts["dask_address"],
        "dask_timeout": opts["dask_timeout"],
        "remote_timeout": opts["remote_timeout"],
    }


def statistics(report: Report) -> str:
    """``count  code  name`` per rule, most frequent first (ruff ``--statistics``)."""
    counts = Counter((f.code, f.name) for rr in report.runs for f in rr.findings)
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0]))
    return "".join(f"{n:>5}  {plain(code)}  {plain(name)}\n" for (code, name), n in rows)


def _run_and_render(opts: dict[str, Any]) -> tuple[Report, Config, int] | None:
    """Resolve the settings, analyse, apply a baseline, and write the report (or the
    statistics); the report, the settings and how many findings the baseline dropped, or None
    when ``--show-settings`` printed the settings instead."""
    verbose = verbosity(opts["verbose"])
    quiet = opts["quiet"]
    quiet_logging(quiet)
    settings, sources = resolve_settings_and_sources(_cli_settings(opts), opts["config_file"], opts["isolated"])
    output = opts["output"]
    baseline = opts.get("baseline")  # check's
    refuse_overwriting_inputs([output, opts.get("write_baseline")], opts["paths"], [settings.config_file, baseline])
    if opts["show_settings"]:
        emit(show_settings(settings, sources), output)
        return None
    paths = opts["paths"]
    report = _analyze(paths, settings, quiet=quiet > 0)
    baselined = 0
    if baseline:
        try:
            known = read_baseline(baseline)
        except PPODoctorError as exc:
            fail(str(exc))
        if quiet < 2 and any(path is None for path, *_ in known):
            click.echo(
                f"ppo-doctor: warning: {plain(baseline)} is a version 1 baseline (no run paths): its findings "
                "hide those of any run with the same id; write it again with --write-baseline", err=True,
            )
        baselined = drop_baselined(report, known)
    fmt = settings.format
    to_terminal = to_stdout(output) and sys.stdout.isatty()
    color = fmt == "text" and use_color(opts["color"], to_terminal)
    # wrapped to the terminal's width; whole lines to a pipe or a file (grep, diffs)
    width = shutil.get_terminal_size().columns if to_terminal else None
    if quiet < 2:
        if opts["statistics"]:
            text = statistics(report)
        else:
            options = RenderOptions(fail_on=settings.fail_on, color=color, verbose=verbose, width=width, plugin_timeout=settings.plugin_timeout)
            with Progress(f"writing the {fmt} report", quiet=quiet > 0):  # html draws every plot: slow on big inputs
                text = render(report, fmt, options)
        emit(text, output)
    shown = to_stdout(output) and fmt == "text" and quiet < 2 and not opts["statistics"]
    _check_readable(report, paths, errors_shown=shown)
    return report, settings, baselined


@click.command()
@_report_options
def report(**opts: Any) -> None:
    """Diagnose the training runs under PATHS: verdicts, findings, causes and fixes.

    Exits 0, or 2 when no run could be read or the configuration is bad.
    """
    _run_and_render(opts)


def exit_line(report: Report, fail_on: str, baselined: int = 0) -> tuple[int, str]:
    """``check``'s exit code and the one line that says why."""
    code, why = _findings_verdict(report, fail_on, baselined)
    unread = [e for e in report.errors if e.level == "error"]
    if unread:
        # a gate must not pass on logs it never read, whatever was found in the others
        more = f" and {len(unread) - 1} more log(s)" if len(unread) > 1 else ""
        code, why = EXIT_ERROR, f"not read: {plain(str(unread[0]))}{more}; in what was read: {why}"
    return code, f"ppo-doctor: exit {code}: {why}"


def _findings_verdict(report: Report, fail_on: str, baselined: int) -> tuple[int, str]:
    """The exit code the findings alone give, and why."""
    known = f"; {baselined} known finding(s) from the baseline not counted" if baselined else ""
    total = sum(len(rr.findings) for rr in report.runs)
    if fail_on == "never":
        return EXIT_OK, f"--fail-on never ({total} finding(s) reported){known}"
    floor = SEVERITY_RANK[fail_on]
    failing = [(i, f) for i, rr in enumerate(report.runs) for f in rr.findings if SEVERITY_RANK[f.severity] >= floor]
    if not failing:
        below = f" ({total} below it)" if total else ""
        return EXIT_OK, f"no finding at or above {fail_on} in {len(report.runs)} run(s){below}{known}"
    runs = {i for i, _ in failing}
    codes = Counter(f.code for _, f in failing)
    top = ", ".join(f"{c} x{n}" if n > 1 else c for c, n in codes.most_common(5))
    return EXIT_FINDINGS, f"{len(failing)} finding(s) at or above {fail_on} in {len(runs)} of {len(report.runs)} run(s): {top}{known}"


@click.command()
@_report_options
@click.option("--fail-on", type=click.Choice(FAIL_ON), help="Lowest severity that fails the check (default: error).")
@click.option("--baseline", type=FILE, metavar="FILE", help="Report and gate only the findings not in this baseline file.")
@click.option("--write-baseline", type=FILE, metavar="FILE", help="Record today's findings in FILE, then exit 0.")
def check(**opts: Any) -> None:
    """Gate CI on the runs under PATHS.

    Exits 0 when no finding is at or above --fail-on, 1 when one is, 2 on a usage or
    configuration error, when no run could be read, or when a log under PATHS could not be
    read.  The last line on stderr says why.
    """
    result = _run_and_render(opts)
    if result is None:
        return
    rep, settings, baselined = result
    if opts["write_baseline"]:
        try:
            n = write_baseline(rep, opts["write_baseline"])
        except OSError as exc:
            fail(f"cannot write {opts['write_baseline']}: {exc.strerror or exc}")
        if not opts["quiet"]:
            click.echo(f"ppo-doctor: exit 0: wrote {n} finding(s) to the baseline {plain(opts['write_baseline'])}", err=True)
        sys.exit(EXIT_OK)
    code, line = exit_line(rep, settings.fail_on, baselined)
    if not opts["quiet"]:
        click.echo(line, err=True)
    sys.exit(code)


def single_run(path: str, settings: Config, what: str) -> RunReport:
    """The one run under ``path`` (``what`` names the argument); exit 2 when there is none or more."""
    rep = _analyze((path,), settings)
    _check_readable(rep, (path,))
    if len(rep.runs) != 1:
        ids = ", ".join(plain(r.run.id) for r in rep.runs[:10])
        fail(f"{what} {path} holds {len(rep.runs)} runs ({ids}); point at one run's folder or file")
    return rep.runs[0]


DEFAULT_PLOT_DIR = "ppo-doctor-plots"


def _metric_filter(rep: Report, names: list[str] | None) -> None:
    """Exit 2 when a ``--metrics`` filter matches no metric of any run, listing the names the
    runs have (canonical and the raw tags mapped onto them); warn about each name that
    matches nothing while others do."""
    if not names:
        return
    from ..report.plots import resolve_metrics

    unmatched = [n for n in names if not any(resolve_metrics(rr.run, [n]) for rr in rep.runs)]
    if len(unmatched) < len(names):
        for n in unmatched:
            click.echo(f"ppo-doctor: warning: --metrics {plain(n)}: no run has this metric", err=True)
        return
    available = sorted({m for rr in rep.runs for m in rr.run.frame.metrics} | {raw for rr in rep.runs for raw in rr.run.mapping})
    shown = ", ".join(plain(a) for a in available[:60]) + (f" ... ({len(available)} in all)" if len(available) > 60 else "")
    fail(f"--metrics {', '.join(names)} matches no metric; available: {shown}")


@click.command()
@click.argument("path")
@click.option("-o", "--output", "out_dir", default=DEFAULT_PLOT_DIR, type=DIRECTORY, metavar="DIR", help=f"Folder for the figures (default: {DEFAULT_PLOT_DIR}).")
@click.option("--metrics", multiple=True, help="Only these metrics (canonical names or raw tags), comma-separated.")
@click.option("--format", "fmt", type=click.Choice(("png", "svg", "pdf")), default="png", help="Figure format (default: png).")
@click.option("--baseline", metavar="PATH", help="A healthy run to overlay in grey.")
@click.option("--config", "config_file", type=FILE, metavar="FILE", help="Use this config file (no search).")
@click.option("--isolated", is_flag=True, help="Ignore every config file.")
@click.option("-v", "--verbose", count=True, help="More logging on stderr (-vv: debug).")
def plot(
    path: str, out_dir: str, metrics: tuple[str, ...], fmt: str, baseline: str | None, config_file: str | None, isolated: bool, verbose: int,
) -> None:
    """Draw annotated plots of the runs under PATH into a folder.

    One figure per metric group and run: incidents shaded and labelled with their rule
    codes (also on the other metrics their rule reads: reward hacking on the reward), onsets
    marked, raw points under the smoothed line, NaN/Inf marked in red.  Exits 2 when
    --metrics matches no metric, listing the names available.
    """
    from ..report.plots import plot_report

    verbosity(verbose)
    settings = resolve_settings({}, config_file, isolated)
    refuse_overwriting_inputs([out_dir], [path, *([baseline] if baseline else [])], [settings.config_file])
    base = single_run(baseline, settings, "--baseline").run if baseline else None
    rep = _analyze((path,), settings)
    _check_readable(rep, (path,))
    wanted = split(metrics)
    _metric_filter(rep, wanted)
    try:
        written = plot_report(rep, out_dir, fmt=fmt, metrics=wanted, baseline=base)
    except OSError as exc:
        fail(f"cannot write plots to {out_dir}: {exc.strerror or exc}")
    for p in written:
        click.echo(plain(str(p)))
    if not written:
        click.echo("ppo-doctor: no plottable metric found", err=True)


@click.command()
@click.argument("path")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", help="Output format (default: text).")
@click.option("--jobs", "-j", type=int, default=1, metavar="N", help="Read runs in N processes (default: 1).")
@click.option("--executor", type=click.Choice(EXECUTORS), help="local (this process), processes (--jobs N), or dask.")
@click.option("--dask", "dask_address", metavar="ADDRESS", help="Read on the Dask cluster at ADDRESS (tcp://host:8786).")
def metrics(path: str, fmt: str, jobs: int, executor: str | None, dask_address: str | None) -> None:
    """Show what was read: runs, formats, frameworks, step ranges, tag mapping, warnings."""
    try:
        result = load(path, jobs=jobs, executor=executor, dask=dask_address)
    except PPODoctorError as exc:
        click.echo(f"ppo-doctor: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    click.echo(render_metrics(result, fmt))
    if not result.runs and result.errors:
        sys.exit(EXIT_ERROR)


@click.command()
def schema() -> None:
    """Print the JSON Schema of the --format json report (draft 2020-12)."""
    click.echo(json_schema_text(), nl=False)
