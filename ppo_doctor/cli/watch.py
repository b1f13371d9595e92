"""``ppo-doctor watch PATH``: follow a log folder while a training writes it
(:class:`ppo_doctor.watch.Watcher` does the following; this module prints its events).

Exit codes are ``check``'s (:mod:`ppo_doctor.exits`): 0 when no finding is at or above
``--fail-on``, 1 when one is, 2 on a usage or configuration error or when no run was ever read.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import click

from ..config import FAIL_ON, resolve
from ..errors import PPODoctorError
from ..exits import EXIT_ERROR
from ..report.escape import plain
from ..report.json_out import finite_json
from ..watch import Watcher, run_exec, webhook_text
from ..webhook import Webhook, check_url
from .common import FILE, Seconds


def _url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A usage error (exit 2) for a webhook that is no http(s) URL, said before the watch starts."""
    if value is None:
        return None
    try:
        return check_url(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def terminal_line(event: dict[str, Any]) -> str | None:
    """The terminal form of an event (None: nothing to print).  Every log-derived string (run
    folder names, paths, tag names inside messages) goes through :func:`report.escape.plain`, as in
    ``report``: no control byte, escape sequence or newline of a name reaches the terminal (a
    folder named with ``\x1b]0;`` would set the terminal's title, one with a newline forge a line)."""
    if event["event"] == "run":
        return f"watching run {plain(event['run'])} ({plain(event['path'])})"
    if event["event"] == "finding":
        step = f" at step {event['step']}" if event.get("step") is not None else ""
        return f"[{plain(event['run'])}{step}] {'changed: ' if event['status'] == 'changed' else ''}{plain(event['text'])}"
    lines = [f"run {plain(r['run'])}: {r['verdict']} ({plain(r['verdict_reason'])})" for r in event["runs"]]
    lines += [f"error: {plain(e['path'])}: {plain(e['message'])}" for e in event["errors"]]
    return "\n".join(lines + [f"watch ended ({event['reason']}), exit code {event['exit_code']}"])


@click.command()
@click.argument("path")
@click.option("--format", "fmt", type=click.Choice(("text", "jsonl")), default="text", help="Terminal lines, or one JSON object per event (default: text).")
@click.option("--interval", type=Seconds(min=0.01), default=2.0, metavar="SECONDS", help="Seconds between polls (default: 2).")
@click.option("--idle", type=Seconds(min=0.0), default=120.0, metavar="SECONDS", help="End when every run has been idle this many seconds (default: 120).")
@click.option("--exec", "exec_cmd", metavar="COMMAND", help="Run this shell command per new finding, the finding event as JSON on stdin.")
@click.option("--webhook", callback=_url, metavar="URL", help="POST each new warning or error as Slack/Discord JSON to URL (never blocks the watch).")
@click.option("--fail-on", type=click.Choice(FAIL_ON), help="Lowest severity that fails (default: error, or the config's).")
@click.option("--config", "config_file", type=FILE, metavar="FILE", help="Use this config file (no search).")
@click.option("--isolated", is_flag=True, help="Ignore every config file.")
def watch(
    path: str,
    fmt: str,
    interval: float,
    idle: float,
    exec_cmd: str | None,
    webhook: str | None,
    fail_on: str | None,
    config_file: str | None,
    isolated: bool,
) -> None:
    """Follow PATH while a training writes it; print each new finding once.

    Exits like check when every run has been idle --idle seconds or on Ctrl-C: 0 when no
    finding is at or above --fail-on, 1 when one is, 2 when no run was read or on a bad config.
    """

    try:
        settings = resolve({"fail_on": fail_on}, config_file=config_file, isolated=isolated)
    except PPODoctorError as exc:
        click.echo(f"ppo-doctor: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)

    hook = Webhook(webhook) if webhook else None

    def emit(event: dict[str, Any]) -> None:
        if fmt == "jsonl":
            click.echo(json.dumps(finite_json(event)))
        else:
            line = terminal_line(event)
            if line:
                click.echo(line)
        if exec_cmd and event["event"] == "finding":
            run_exec(exec_cmd, event)
        text = webhook_text(event)
        if hook is not None and text:
            hook.send(text)

    watcher = Watcher(path, settings, emit, idle=idle)
    reason = "idle"
    try:
        while True:
            watcher.poll()
            if watcher.all_idle():
                break
            time.sleep(interval)
    except KeyboardInterrupt:
        reason = "interrupted"
    code = watcher.finish(reason, settings.fail_on)
    if hook is not None:
        hook.close()
    sys.exit(code)
