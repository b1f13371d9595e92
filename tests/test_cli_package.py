"""The CLI package: every command resolves to its module, ``python -m ppo_doctor.cli`` runs, and a
command module that fails to import is an error naming it (it used to read "No such command")."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from ppo_doctor import __version__
from ppo_doctor.cli import COMMANDS, CommandImportError, cli

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_is_a_click_command_of_its_module(name):
    module, attr = COMMANDS[name][0].split(":")
    command = getattr(importlib.import_module(f"ppo_doctor.cli.{module}"), attr)
    assert isinstance(command, click.Command)
    assert cli.get_command(click.Context(cli), name) is command


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_help_listing_summary_shortens_as_the_commands_own_help(name):
    """``--help`` lists the commands from COMMANDS' summaries (importing none of them): at every
    width, each line must be what click makes of the command's own help."""
    module, attr = COMMANDS[name][0].split(":")
    command = getattr(importlib.import_module(f"ppo_doctor.cli.{module}"), attr)
    summary = click.Command(name, help=COMMANDS[name][1])
    for limit in range(10, 240):
        assert summary.get_short_help_str(limit) == command.get_short_help_str(limit), limit


def test_a_command_module_that_fails_to_import_names_the_module(monkeypatch):
    monkeypatch.delitem(sys.modules, "ppo_doctor.cli.sweep", raising=False)
    monkeypatch.setitem(sys.modules, "ppo_doctor.cli.sweep", None)  # makes its import fail
    result = CliRunner().invoke(cli, ["sweep", "--help"])
    assert isinstance(result.exception, CommandImportError), result.output
    assert "'sweep' command cannot load: importing ppo_doctor.cli.sweep failed" in str(result.exception)
    assert "No such command" not in result.output


def test_the_import_error_reaches_the_terminal_as_a_traceback():
    code = "import sys; sys.modules['ppo_doctor.cli.rules'] = None\nfrom ppo_doctor.cli import main\nsys.argv = ['ppo-doctor', 'rules']\nmain()\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 1
    assert "Traceback" in done.stderr and "importing ppo_doctor.cli.rules failed" in done.stderr
    assert "No such command" not in done.stderr


def test_python_dash_m_runs_the_cli():
    done = subprocess.run([sys.executable, "-m", "ppo_doctor.cli", "--version"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"ppo-doctor, version {__version__}"
