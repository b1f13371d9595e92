"""``ppo-doctor report | check | plot | metrics | schema``: the commands that read runs and write
what was found (``compare`` is :mod:`.compare`'s, so that a ``check`` never imports it).

Exit codes (:mod:`ppo_doctor.exits`): 0 no finding at or above ``--fail-on``; 1 there is one
(``check`` only); 2 usage, configuration or unreadable input (no run could be read; for
``check``, also a log under the paths that could not be read).
``check`` closes with one line on stderr saying why it exits as it does; ``--extend-select`` /
``--extend-ignore``, ``--statistics`` and ``--show-settings`` follow ruff's.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import Any

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
from .command import at_least, command, dir_path, echo, file_path
from .common import (
    FormatChoices,
    add_run_on_arguments,
    emit,
    fail,
    quiet_logging,
    resolve_settings,
    resolve_settings_and_sources,
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
            echo(f"ppo-doctor: {e.level}: {plain(str(e))}", err=True)
    fail(f"no readable training run under {', '.join(paths)}")


def _report_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments ``report`` and ``check`` share."""
    parser.add_argument("paths", nargs="+", metavar="PATHS")
    parser.add_argument(
        "--format", dest="fmt", choices=FormatChoices(), metavar="FORMAT",
        help="Output format, one of %(choices)s (plugins' formats included; default: text, or the config's).",
    )
    parser.add_argument("-o", "--output", type=file_path, metavar="FILE", help="Write the report to FILE instead of stdout ('-': stdout).")
    parser.add_argument("--select", action="append", help="Only these rules: code prefixes or names, comma-separated; ALL.")
    parser.add_argument("--ignore", action="append", help="Skip these rules: code prefixes or names, comma-separated.")
    parser.add_argument("--extend-select", action="append", help="Add these rules to the selection (the config's or --select's).")
    parser.add_argument("--extend-ignore", action="append", help="Add these rules to the ignored ones.")
    parser.add_argument("--config", dest="config_file", type=file_path, metavar="FILE", help="Use this config file (no search).")
    parser.add_argument("--isolated", action="store_true", help="Ignore every config file.")
    parser.add_argument("-j", "--jobs", type=at_least(1), metavar="N", help="Read and analyse runs in N processes.")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="Full detail in the text report; more logging (-vv: debug).")
    parser.add_argument("-q", "--quiet", action="count", default=0, help="Only the report (-qq: nothing, only the exit code).")
    parser.add_argument(
        "--color", choices=("auto", "always", "never"), default="auto",
        help="Colour the text report (auto, the default: on a terminal, unless NO_COLOR; FORCE_COLOR forces it).",
    )
    parser.add_argument("--statistics", action="store_true", help="Print the number of findings per rule code instead of the report.")
    parser.add_argument("--show-settings", action="store_true", help="Print the resolved settings and where each came from, then exit.")
    add_run_on_arguments(parser)


def _cli_settings(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "select": split(args.select),
        "ignore": split(args.ignore),
        "extend_select": split(args.extend_select),
        "extend_ignore": split(args.extend_ignore),
        "jobs": args.jobs,
        "format": args.fmt,
        "fail_on": getattr(args, "fail_on", None),
        "executor": args.executor,
        "dask": args.dask_address,
        "dask_timeout": args.dask_timeout,
        "remote_timeout": args.remote_timeout,
    }


def statistics(report: Report) -> str:
    """``count  code  name`` per rule, most frequent first (ruff ``--statistics``)."""
    counts = Counter((f.code, f.name) for rr in report.runs for f in rr.findings)
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0]))
    return "".join(f"{n:>5}  {plain(code)}  {plain(name)}\n" for (code, name), n in rows)


def _run_and_render(args: argparse.Namespace) -> tuple[Report, Config, int] | None:
    """Resolve the settings, analyse, apply a baseline, and write the report (or the
    statistics); the report, the settings and how many findings the baseline dropped, or None
    when ``--show-settings`` printed the settings instead."""
    verbose = verbosity(args)
    quiet = args.quiet
    quiet_logging(quiet)
    settings, sources = resolve_settings_and_sources(_cli_settings(args), args.config_file, args.isolated)
    output = args.output
    baseline = getattr(args, "baseline", None)  # check's
    refuse_overwriting_inputs([output, getattr(args, "write_baseline", None)], args.paths, [settings.config_file, baseline])
    if args.show_settings:
        emit(show_settings(settings, sources), output)
        return None
    paths = args.paths
    report = _analyze(paths, settings, quiet=quiet > 0)
    baselined = 0
    if baseline:
        try:
            known = read_baseline(baseline)
        except PPODoctorError as exc:
            fail(str(exc))
        if quiet < 2 and any(path is None for path, *_ in known):
            echo(
                f"ppo-doctor: warning: {plain(baseline)} is a version 1 baseline (no run paths): its findings "
                "hide those of any run with the same id; write it again with --write-baseline", err=True,
            )
        baselined = drop_baselined(report, known)
    fmt = settings.format
    color = fmt == "text" and use_color(args.color, to_stdout(output) and sys.stdout.isatty())
    if quiet < 2:
        if args.statistics:
            text = statistics(report)
        else:
            options = RenderOptions(fail_on=settings.fail_on, color=color, verbose=verbose)
            with Progress(f"writing the {fmt} report", quiet=quiet > 0):  # html draws every plot: slow on big inputs
                text = render(report, fmt, options)
        emit(text, output)
    shown = to_stdout(output) and fmt == "text" and quiet < 2 and not args.statistics
    _check_readable(report, paths, errors_shown=shown)
    return report, settings, baselined


@command(_report_arguments)
def report(args: argparse.Namespace) -> None:
    """Diagnose the training runs under PATHS: verdicts, findings, causes and fixes.

    Exits 0, or 2 when no run could be read or the configuration is bad.
    """
    _run_and_render(args)


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


def _check_arguments(parser: argparse.ArgumentParser) -> None:
    _report_arguments(parser)
    parser.add_argument("--fail-on", choices=FAIL_ON, help="Lowest severity that fails the check (default: error).")
    parser.add_argument("--baseline", type=file_path, metavar="FILE", help="Report and gate only the findings not in this baseline file.")
    parser.add_argument("--write-baseline", type=file_path, metavar="FILE", help="Record today's findings in FILE, then exit 0.")


@command(_check_arguments)
def check(args: argparse.Namespace) -> None:
    """Gate CI on the runs under PATHS.

    Exits 0 when no finding is at or above --fail-on, 1 when one is, 2 on a usage or
    configuration error, when no run could be read, or when a log under PATHS could not be
    read.  The last line on stderr says why.
    """
    result = _run_and_render(args)
    if result is None:
        return
    rep, settings, baselined = result
    if args.write_baseline:
        try:
            n = write_baseline(rep, args.write_baseline)
        except OSError as exc:
            fail(f"cannot write {args.write_baseline}: {exc.strerror or exc}")
        if not args.quiet:
            echo(f"ppo-doctor: exit 0: wrote {n} finding(s) to the baseline {plain(args.write_baseline)}", err=True)
        sys.exit(EXIT_OK)
    code, line = exit_line(rep, settings.fail_on, baselined)
    if not args.quiet:
        echo(line, err=True)
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
            echo(f"ppo-doctor: warning: --metrics {plain(n)}: no run has this metric", err=True)
        return
    available = sorted({m for rr in rep.runs for m in rr.run.frame.metrics} | {raw for rr in rep.runs for raw in rr.run.mapping})
    shown = ", ".join(plain(a) for a in available[:60]) + (f" ... ({len(available)} in all)" if len(available) > 60 else "")
    fail(f"--metrics {', '.join(names)} matches no metric; available: {shown}")


def _plot_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH")
    parser.add_argument("-o", "--output", dest="out_dir", default=DEFAULT_PLOT_DIR, type=dir_path, metavar="DIR", help=f"Folder for the figures (default: {DEFAULT_PLOT_DIR}).")
    parser.add_argument("--metrics", action="append", help="Only these metrics (canonical names or raw tags), comma-separated.")
    parser.add_argument("--format", dest="fmt", choices=("png", "svg", "pdf"), default="png", help="Figure format (default: png).")
    parser.add_argument("--baseline", metavar="PATH", help="A healthy run to overlay in grey.")
    parser.add_argument("--config", dest="config_file", type=file_path, metavar="FILE", help="Use this config file (no search).")
    parser.add_argument("--isolated", action="store_true", help="Ignore every config file.")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="More logging on stderr (-vv: debug).")


@command(_plot_arguments)
def plot(args: argparse.Namespace) -> None:
    """Draw annotated plots of the runs under PATH into a folder.

    One figure per metric group and run: incidents shaded and labelled with their rule
    codes (also on the other metrics their rule reads: reward hacking on the reward), onsets
    marked, raw points under the smoothed line, NaN/Inf marked in red.  Exits 2 when
    --metrics matches no metric, listing the names available.
    """
    from ..report.plots import plot_report

    verbosity(args)
    path, out_dir, baseline = args.path, args.out_dir, args.baseline
    settings = resolve_settings({}, args.config_file, args.isolated)
    refuse_overwriting_inputs([out_dir], [path, *([baseline] if baseline else [])], [settings.config_file])
    base = single_run(baseline, settings, "--baseline").run if baseline else None
    rep = _analyze((path,), settings)
    _check_readable(rep, (path,))
    wanted = split(args.metrics)
    _metric_filter(rep, wanted)
    try:
        written = plot_report(rep, out_dir, fmt=args.fmt, metrics=wanted, baseline=base)
    except OSError as exc:
        fail(f"cannot write plots to {out_dir}: {exc.strerror or exc}")
    for p in written:
        echo(plain(str(p)))
    if not written:
        echo("ppo-doctor: no plottable metric found", err=True)


def _metrics_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH")
    parser.add_argument("--format", dest="fmt", choices=("text", "json"), default="text", help="Output format (default: text).")
    parser.add_argument("--jobs", "-j", type=int, default=1, metavar="N", help="Read runs in N processes (default: 1).")
    parser.add_argument("--executor", choices=EXECUTORS, help="local (this process), processes (--jobs N), or dask.")
    parser.add_argument("--dask", dest="dask_address", metavar="ADDRESS", help="Read on the Dask cluster at ADDRESS (tcp://host:8786).")


@command(_metrics_arguments)
def metrics(args: argparse.Namespace) -> None:
    """Show what was read: runs, formats, frameworks, step ranges, tag mapping, warnings."""
    try:
        result = load(args.path, jobs=args.jobs, executor=args.executor, dask=args.dask_address)
    except PPODoctorError as exc:
        echo(f"ppo-doctor: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    echo(render_metrics(result, args.fmt))
    if not result.runs and result.errors:
        sys.exit(EXIT_ERROR)


@command(lambda parser: None)
def schema(args: argparse.Namespace) -> None:
    """Print the JSON Schema of the ``--format json`` report (draft 2020-12)."""
    echo(json_schema_text(), nl=False)
