"""``ppo-doctor report | check | plot | compare`` (loaded lazily by :mod:`ppo_doctor.cli`).

Exit codes (DESIGN.md): 0 no finding at or above ``--fail-on``; 1 there is one (``check``
only); 2 usage, configuration or unreadable input (no run could be read).  Settings come
from defaults < config file < these flags (:mod:`ppo_doctor.config`).

The conventions follow ruff's (reference/style-anchors.md): ``-o -`` is stdout, ``-q`` drops
everything but the report (``-qq`` the report too: only the exit code), ``-v`` works before
or after the subcommand, ``--color auto|always|never`` with ``NO_COLOR`` and ``FORCE_COLOR``,
``--extend-select`` / ``--extend-ignore``, ``--statistics``, ``--show-settings``; ``check``
closes with one line on stderr saying why it exits as it does.
"""

from __future__ import annotations

import logging
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Callable, NoReturn

import click

from ..config import FAIL_ON, FORMATS, resolve_with_sources
from ..errors import PPODoctorError
from ..results import SEVERITY_RANK, Report, RunReport
from . import RenderOptions, render
from .escape import plain
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
    return _settings_and_sources(cli, config_file, isolated)[0]


def _settings_and_sources(cli: dict[str, Any], config_file: str | None, isolated: bool) -> tuple[dict[str, Any], dict[str, str]]:
    try:
        return resolve_with_sources(cli, config_file=config_file, isolated=isolated)
    except PPODoctorError as exc:
        _fail(str(exc))


def _analyze(paths: tuple[str, ...], settings: dict[str, Any], *, quiet: bool = False) -> Report:
    """Analyse every path, with a progress line on a TTY; bad input never raises here."""
    from ..analyze import analyze

    report = Report()
    for path in paths:
        with Progress(f"reading {path}", quiet=quiet):
            try:
                run_on = {k: settings[k] for k in ("executor", "dask") if settings.get(k)}
                part = analyze(path, settings, jobs=settings["jobs"], **run_on)
            except PPODoctorError as exc:
                _fail(str(exc))
        report.runs.extend(part.runs)
        report.errors.extend(part.errors)
        report.rules = part.rules  # one configuration: the same rules for every path
    return report


def _check_readable(report: Report, paths: tuple[str, ...], *, errors_shown: bool = False) -> None:
    """Exit 2 when nothing could be read; the reasons go to stderr unless already on screen."""
    if report.runs:
        return
    if not errors_shown:
        for e in report.errors:
            click.echo(f"ppo-doctor: {e.level}: {plain(str(e))}", err=True)
    _fail(f"no readable training run under {', '.join(paths)}")


STDOUT = "-"


def use_color(choice: str, to_terminal: bool) -> bool:
    """``--color``: ``always`` / ``never`` as said; ``auto`` follows the environment.

    In ``auto``, ``NO_COLOR`` (no-color.org: any non-empty value) turns colour off, then
    ``FORCE_COLOR`` (force-color.org: any non-empty value but ``0``/``false``) turns it on,
    else colour is used when the report goes to a terminal.
    """
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    force = os.environ.get("FORCE_COLOR", "")
    if force and force.lower() not in ("0", "false"):
        return True
    return to_terminal


def _to_stdout(output: str | None) -> bool:
    return output is None or output == STDOUT


def _emit(text: str, output: str | None, *, color: bool = False) -> None:
    """Write to stdout (no ``-o``, or ``-o -``) or to the file; ``color`` keeps ANSI codes on
    a pipe (click strips them from a non-terminal unless told)."""
    if output is None or output == STDOUT:
        click.echo(text, nl=False, color=color or None)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        _fail(f"cannot write {output}: {exc.strerror or exc}")


def _verbosity(ctx: click.Context, verbose: int) -> int:
    """``-v`` given before the subcommand (the group's) plus after it; sets the log level."""
    group = ctx.obj.get("verbose", 0) if isinstance(ctx.obj, dict) else 0
    level = int(group) + verbose
    if verbose:
        logging.getLogger().setLevel(logging.WARNING - 10 * min(level, 2))
    return level


def _quiet_logging(quiet: int) -> None:
    if quiet:
        logging.getLogger().setLevel(logging.ERROR if quiet == 1 else logging.CRITICAL + 1)


def _common(func: Callable[..., Any]) -> Callable[..., Any]:
    """Options shared by ``report`` and ``check``."""
    options = [
        click.argument("paths", nargs=-1, required=True, type=click.Path()),
        click.option("--format", "fmt", type=click.Choice(FORMATS), help="Output format (default: text, or the config's)."),
        click.option(
            "-o", "--output", type=click.Path(dir_okay=False, allow_dash=True),
            help="Write the report to FILE instead of stdout ('-': stdout).",
        ),
        click.option("--select", multiple=True, help="Only these rules: code prefixes or names, comma-separated; ALL."),
        click.option("--ignore", multiple=True, help="Skip these rules: code prefixes or names, comma-separated."),
        click.option("--extend-select", multiple=True, help="Add these rules to the selection (the config's or --select's)."),
        click.option("--extend-ignore", multiple=True, help="Add these rules to the ignored ones."),
        click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Use this config file (no search)."),
        click.option("--isolated", is_flag=True, help="Ignore every config file."),
        click.option("-j", "--jobs", type=click.IntRange(min=1), help="Read and analyse runs in N processes."),
        click.option("-v", "--verbose", count=True, help="Full detail in the text report; more logging (-vv: debug)."),
        click.option("-q", "--quiet", count=True, help="Only the report (-qq: nothing, only the exit code)."),
        click.option(
            "--color", type=click.Choice(("auto", "always", "never")), default="auto", show_default=True,
            help="Colour the text report (auto: on a terminal, unless NO_COLOR; FORCE_COLOR forces it).",
        ),
        click.option("--statistics", is_flag=True, help="Print the number of findings per rule code instead of the report."),
        click.option("--show-settings", is_flag=True, help="Print the resolved settings and where each came from, then exit."),
        *run_on_options(),
    ]
    for option in reversed(options):
        func = option(func)
    return click.pass_context(func)


def run_on_options() -> list[Callable]:
    """``--executor`` and ``--dask``: where runs are processed (:mod:`ppo_doctor.pipeline`)."""
    from ..config import EXECUTORS

    return [
        click.option("--executor", type=click.Choice(EXECUTORS), help="local (this process), processes (--jobs N), or dask."),
        click.option("--dask", "dask_address", metavar="ADDRESS", help="Run on the Dask cluster at ADDRESS (tcp://host:8786)."),
    ]


def _cli_settings(opts: dict[str, Any]) -> dict[str, Any]:
    return {
        "select": _split(opts["select"]),
        "ignore": _split(opts["ignore"]),
        "extend_select": _split(opts["extend_select"]),
        "extend_ignore": _split(opts["extend_ignore"]),
        "jobs": opts["jobs"],
        "format": opts["fmt"],
        "fail_on": opts.get("fail_on"),
        "executor": opts["executor"],
        "dask": opts["dask_address"],
    }


def show_settings(settings: dict[str, Any], sources: dict[str, str]) -> str:
    """``key = value  # source`` lines (TOML spelling, JSON values) for ``--show-settings``."""
    import json

    width = max(len(k) for k in settings)
    lines = []
    for key in sorted(settings):
        value = json.dumps(settings[key], ensure_ascii=False, sort_keys=True)
        lines.append(f"{key.replace('_', '-'):<{width}} = {plain(value)}  # {plain(sources.get(key, 'derived'))}")
    return "\n".join(lines) + "\n"


def statistics(report: Report) -> str:
    """``count  code  name`` per rule, most frequent first (ruff ``--statistics``)."""
    counts = Counter((f.code, f.name) for rr in report.runs for f in rr.findings)
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0]))
    return "".join(f"{n:>5}  {plain(code)}  {plain(name)}\n" for (code, name), n in rows)


def _run_and_render(ctx: click.Context, opts: dict[str, Any]) -> tuple[Report, dict[str, Any]] | None:
    """Resolve the settings, analyse, apply a baseline, and write the report (or the
    statistics); None when ``--show-settings`` printed the settings instead."""
    verbose = _verbosity(ctx, opts["verbose"])
    quiet = opts["quiet"]
    _quiet_logging(quiet)
    settings, sources = _settings_and_sources(_cli_settings(opts), opts["config_file"], opts["isolated"])
    output = opts["output"]
    if opts["show_settings"]:
        _emit(show_settings(settings, sources), output)
        return None
    paths = opts["paths"]
    report = _analyze(paths, settings, quiet=quiet > 0)
    if opts.get("baseline"):
        from ..suppress import drop_baselined, read_baseline

        try:
            known = read_baseline(opts["baseline"])
        except PPODoctorError as exc:
            _fail(str(exc))
        settings["baselined"] = drop_baselined(report, known)
    fmt = settings["format"]
    color = fmt == "text" and use_color(opts["color"], _to_stdout(output) and sys.stdout.isatty())
    if quiet < 2:
        if opts["statistics"]:
            text = statistics(report)
        else:
            options = RenderOptions(fail_on=settings["fail_on"], color=color, verbose=verbose)
            with Progress(f"writing the {fmt} report", quiet=quiet > 0):  # html draws every plot: slow on big inputs
                text = render(report, fmt, options)
        _emit(text, output, color=color)
    shown = _to_stdout(output) and fmt == "text" and quiet < 2 and not opts["statistics"]
    _check_readable(report, paths, errors_shown=shown)
    return report, settings


@click.command()
@_common
def report(ctx: click.Context, **opts: Any) -> None:
    """Diagnose the training runs under PATHS: verdicts, findings, causes and fixes.

    Exits 0, or 2 when no run could be read or the configuration is bad.
    """
    _run_and_render(ctx, opts)


def exit_line(report: Report, fail_on: str, baselined: int = 0) -> tuple[int, str]:
    """``check``'s exit code and the one line that says why."""
    known = f"; {baselined} known finding(s) from the baseline not counted" if baselined else ""
    total = sum(len(rr.findings) for rr in report.runs)
    if fail_on == "never":
        return EXIT_OK, f"ppo-doctor: exit 0: --fail-on never ({total} finding(s) reported){known}"
    floor = SEVERITY_RANK[fail_on]
    failing = [(i, f) for i, rr in enumerate(report.runs) for f in rr.findings if SEVERITY_RANK[f.severity] >= floor]
    if not failing:
        below = f" ({total} below it)" if total else ""
        return EXIT_OK, f"ppo-doctor: exit 0: no finding at or above {fail_on} in {len(report.runs)} run(s){below}{known}"
    runs = {i for i, _ in failing}
    codes = Counter(f.code for _, f in failing)
    top = ", ".join(f"{c} x{n}" if n > 1 else c for c, n in codes.most_common(5))
    return EXIT_FINDINGS, (
        f"ppo-doctor: exit 1: {len(failing)} finding(s) at or above {fail_on} in {len(runs)} of "
        f"{len(report.runs)} run(s): {top}{known}"
    )


@click.command()
@_common
@click.option("--fail-on", type=click.Choice(FAIL_ON), help="Lowest severity that fails the check (default: error).")
@click.option("--baseline", type=click.Path(dir_okay=False), help="Report and gate only the findings not in this baseline file.")
@click.option("--write-baseline", type=click.Path(dir_okay=False), help="Record today's findings in FILE, then exit 0.")
def check(ctx: click.Context, **opts: Any) -> None:
    """Gate CI on the runs under PATHS.

    Exits 0 when no finding is at or above --fail-on, 1 when one is, 2 on a usage or
    configuration error or when no run could be read.  The last line on stderr says why.
    """
    result = _run_and_render(ctx, opts)
    if result is None:
        return
    rep, settings = result
    if opts["write_baseline"]:
        from ..suppress import write_baseline

        try:
            n = write_baseline(rep, opts["write_baseline"])
        except OSError as exc:
            _fail(f"cannot write {opts['write_baseline']}: {exc.strerror or exc}")
        if not opts["quiet"]:
            click.echo(f"ppo-doctor: exit 0: wrote {n} finding(s) to the baseline {plain(opts['write_baseline'])}", err=True)
        sys.exit(EXIT_OK)
    code, line = exit_line(rep, settings["fail_on"], settings.get("baselined", 0))
    if not opts["quiet"]:
        click.echo(line, err=True)
    sys.exit(code)


def _single_run(path: str, settings: dict[str, Any], what: str) -> RunReport:
    rep = _analyze((path,), settings)
    _check_readable(rep, (path,))
    if len(rep.runs) != 1:
        ids = ", ".join(plain(r.run.id) for r in rep.runs[:10])
        _fail(f"{what} {path} holds {len(rep.runs)} runs ({ids}); point at one run's folder or file")
    return rep.runs[0]


DEFAULT_PLOT_DIR = "ppo-doctor-plots"


def _metric_filter(rep: Report, names: list[str] | None) -> None:
    """Exit 2 when a ``--metrics`` filter matches no metric of any run, listing the names the
    runs have (canonical and the raw tags mapped onto them); warn about each name that
    matches nothing while others do."""
    if not names:
        return
    from .plots import resolve_metrics

    unmatched = [n for n in names if not any(resolve_metrics(rr.run, [n]) for rr in rep.runs)]
    if len(unmatched) < len(names):
        for n in unmatched:
            click.echo(f"ppo-doctor: warning: --metrics {plain(n)}: no run has this metric", err=True)
        return
    available = sorted({m for rr in rep.runs for m in rr.run.frame.metrics} | {raw for rr in rep.runs for raw in rr.run.mapping})
    shown = ", ".join(plain(a) for a in available[:60]) + (f" ... ({len(available)} in all)" if len(available) > 60 else "")
    _fail(f"--metrics {', '.join(names)} matches no metric; available: {shown}")


@click.command()
@click.argument("path", type=click.Path())
@click.option(
    "-o", "--output", "out_dir", default=DEFAULT_PLOT_DIR, show_default=True, type=click.Path(file_okay=False),
    help="Folder for the figures.",
)
@click.option("--metrics", multiple=True, help="Only these metrics (canonical names or raw tags), comma-separated.")
@click.option("--format", "fmt", type=click.Choice(("png", "svg", "pdf")), default="png", show_default=True)
@click.option("--baseline", type=click.Path(), help="A healthy run to overlay in grey.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Use this config file (no search).")
@click.option("--isolated", is_flag=True, help="Ignore every config file.")
@click.option("-v", "--verbose", count=True, help="More logging on stderr (-vv: debug).")
@click.pass_context
def plot(
    ctx: click.Context, path: str, out_dir: str, metrics: tuple[str, ...], fmt: str, baseline: str | None,
    config_file: str | None, isolated: bool, verbose: int,
) -> None:
    """Draw annotated plots of the runs under PATH into a folder.

    One figure per metric group and run: incidents shaded and labelled with their rule
    codes (also on the other metrics their rule reads: reward hacking on the reward), onsets
    marked, raw points under the smoothed line, NaN/Inf marked in red.  Exits 2 when
    --metrics matches no metric, listing the names available.
    """
    from .plots import plot_report

    _verbosity(ctx, verbose)
    settings = _settings({}, config_file, isolated)
    base = _single_run(baseline, settings, "--baseline").run if baseline else None
    rep = _analyze((path,), settings)
    _check_readable(rep, (path,))
    wanted = _split(metrics)
    _metric_filter(rep, wanted)
    try:
        written = plot_report(rep, out_dir, fmt=fmt, metrics=wanted, baseline=base)
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
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), help="Write to FILE instead of stdout ('-': stdout).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Use this config file (no search).")
@click.option("--isolated", is_flag=True, help="Ignore every config file.")
@click.option("-v", "--verbose", count=True, help="More logging on stderr (-vv: debug).")
@click.pass_context
def compare(
    ctx: click.Context, run_a: str, run_b: str, fmt: str, output: str | None, config_file: str | None, isolated: bool, verbose: int
) -> None:
    """What changed between two runs: config values first, then verdicts, findings, top
    causes and core metrics."""
    from .compare import RENDERERS, compare as compare_runs

    _verbosity(ctx, verbose)
    settings = _settings({}, config_file, isolated)
    a = _single_run(run_a, settings, "RUN_A")
    b = _single_run(run_b, settings, "RUN_B")
    _emit(RENDERERS[fmt](compare_runs(a, b)), output)
