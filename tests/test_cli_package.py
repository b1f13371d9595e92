"""The CLI package: every command resolves to its module, ``python -m ppo_doctor.cli`` runs, a
command module that fails to import is an error naming it (it used to read "No such command"),
and the group's own arguments and errors."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from cli_invoke import run_cli

from ppo_doctor import __version__
from ppo_doctor.cli import COMMANDS, CommandImportError, cli, load

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_is_a_command_of_its_module(name):
    module, attr = COMMANDS[name][0].split(":")
    command = getattr(importlib.import_module(f"ppo_doctor.cli.{module}"), attr)
    assert isinstance(command, click.Command)
    assert load(name) is command
    assert cli.get_command(click.Context(cli), name) is command


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_help_listing_shows_each_commands_own_summary(name):
    """--help lists the commands from COMMANDS' summaries (importing none of them): each must be
    the first paragraph of the command's own help, shortened in the listing as click shortens it."""
    own = load(name)
    assert COMMANDS[name][1] == " ".join((own.help or "").split("\n\n")[0].split())
    for limit in (20, 45, 80, 200):
        assert click.Command(name, help=COMMANDS[name][1]).get_short_help_str(limit) == own.get_short_help_str(limit)
    listing = " ".join(run_cli(["--help"]).stdout.split())
    assert f"{name} {COMMANDS[name][1][:25]}" in listing


def test_the_group_takes_verbosity_before_the_command_and_rejects_what_it_does_not_know(tmp_path):
    assert run_cli(["-vv", "schema"]).exit_code == 0
    unknown = run_cli(["chek", "x"])
    assert unknown.exit_code == 2 and "No such command 'chek'" in unknown.stderr and "check, compare" in unknown.stderr
    bare = run_cli([])
    assert bare.exit_code == 2 and "Commands:" in bare.stderr
    # options are matched whole: a CI script's abbreviation must not pick an option by luck
    short = run_cli(["check", str(tmp_path), "--form", "json"])
    assert short.exit_code == 2 and "No such option '--form'" in short.stderr


def test_argument_checks_are_usage_errors(tmp_path):
    for args, message in [
        (["check", str(tmp_path), "--jobs", "0"], "0 is not in the range x>=1"),
        (["check", str(tmp_path), "--config", str(tmp_path)], "is a directory"),
        (["check", str(tmp_path), "--dask-timeout", "0"], "0 is not in the range x>0"),
        (["check"], "Missing argument 'PATHS...'"),
        (["check", str(tmp_path), "--format", "yaml"], "'yaml' is not one of 'text'"),
    ]:
        result = run_cli(args)
        assert result.exit_code == 2 and message in result.stderr and result.stderr.startswith("Usage: ppo-doctor check"), (args, result.stderr)


def test_options_and_paths_may_come_in_any_order(tmp_path):
    """As before: ``check --isolated A B`` and ``check A --isolated B`` read both paths."""
    for args in (["--isolated", "a", "b"], ["a", "--isolated", "b"]):
        result = run_cli(["check", *[str(tmp_path / x) if x in "ab" else x for x in args]])
        assert result.exit_code == 2 and "no readable training run under" in result.stderr
        assert str(tmp_path / "a") in result.stderr and str(tmp_path / "b") in result.stderr


def test_a_command_module_that_fails_to_import_names_the_module(monkeypatch):
    monkeypatch.delitem(sys.modules, "ppo_doctor.cli.sweep", raising=False)
    monkeypatch.setitem(sys.modules, "ppo_doctor.cli.sweep", None)  # makes its import fail
    result = run_cli(["sweep", "--help"])
    assert isinstance(result.exception, CommandImportError), result.output
    assert "'sweep' command cannot load: importing ppo_doctor.cli.sweep failed" in str(result.exception)
    assert "No such command" not in result.output


def test_the_import_error_reaches_the_terminal_as_a_traceback():
    code = "import sys; sys.modules['ppo_doctor.cli.rules'] = None\nfrom ppo_doctor.cli import main\nsys.argv = ['ppo-doctor', 'rules']\nmain()\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 1
    assert "Traceback" in done.stderr and "importing ppo_doctor.cli.rules failed" in done.stderr
    assert "No such command" not in done.stderr


@pytest.mark.parametrize("module", ["ppo_doctor", "ppo_doctor.cli"])
def test_python_dash_m_runs_the_cli(module):
    done = subprocess.run([sys.executable, "-m", module, "--version"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"ppo-doctor, version {__version__}"


def test_shell_completion_completes_commands_and_options():
    """click's completion (docs/cli.md, "Shell completion"): the script for bash, then what it
    asks the command for as the user types."""
    env = {**os.environ, "_PPO_DOCTOR_COMPLETE": "bash_source"}
    script = subprocess.run([sys.executable, "-m", "ppo_doctor"], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert script.returncode == 0 and "_ppo_doctor_completion()" in script.stdout, script.stderr
    env = {**os.environ, "_PPO_DOCTOR_COMPLETE": "bash_complete", "COMP_WORDS": "ppo-doctor check --fo", "COMP_CWORD": "2"}
    asked = subprocess.run([sys.executable, "-m", "ppo_doctor"], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert "plain,--format" in asked.stdout.splitlines(), asked.stdout
    env["COMP_WORDS"], env["COMP_CWORD"] = "ppo-doctor ch", "1"
    asked = subprocess.run([sys.executable, "-m", "ppo_doctor"], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert asked.stdout.splitlines() == ["plain,check"], asked.stdout
