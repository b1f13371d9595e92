"""Docs that cannot drift: every ```console block of README.md and docs/quickstart.md that starts
with "$ ppo-doctor ..." holds that command's real output (as pylint tests its documentation's
examples), produced here on a 100-column terminal without colour, in the repository root.

After a change of the output, PPO_DOCTOR_UPDATE_DOCS=1 rewrites the blocks (then read the diff).
"""

from __future__ import annotations

import io
import os
import re
import shlex
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from ppo_doctor.cli import main

ROOT = Path(__file__).resolve().parents[1]
DOCS = ["README.md", "docs/quickstart.md"]
BLOCK = re.compile(r"```console\n\$ (ppo-doctor [^\n]*)\n(.*?)```", re.S)
COLUMNS = 100


class _Terminal(io.StringIO):
    """stdout as a terminal: the report is wrapped to COLUMNS (colour is off: NO_COLOR)."""

    def __init__(self, shown: io.StringIO):
        super().__init__()
        self._shown = shown

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._shown.write(text)
        return len(text)


class _Stderr(_Terminal):
    def isatty(self) -> bool:  # no progress line: it is erased on a terminal anyway
        return False


def run_as_shown(command: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """What a terminal shows for ``command``: stdout and stderr in the order written."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", str(COLUMNS))
    monkeypatch.setenv("NO_COLOR", "1")
    shown = io.StringIO()
    with redirect_stdout(_Terminal(shown)), redirect_stderr(_Stderr(shown)):
        try:
            main(shlex.split(command)[1:])
        except SystemExit:
            pass
    return shown.getvalue()


def _blocks() -> list[tuple[str, str, str]]:
    return [(doc, m.group(1), m.group(2)) for doc in DOCS for m in BLOCK.finditer((ROOT / doc).read_text(encoding="utf-8"))]


def test_each_document_has_a_sample_output():
    assert {doc for doc, _, _ in _blocks()} == set(DOCS)


@pytest.mark.parametrize(("doc", "command", "written"), _blocks(), ids=lambda v: str(v)[:40])
def test_sample_output_is_the_commands_real_output(doc, command, written, monkeypatch):
    real = run_as_shown(command, monkeypatch)
    assert real.strip(), command
    if os.environ.get("PPO_DOCTOR_UPDATE_DOCS"):
        path = ROOT / doc
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(f"$ {command}\n{written}```", f"$ {command}\n{real}```", 1), encoding="utf-8")
        written = real
    assert written == real, f"{doc}: the output of `{command}` changed; PPO_DOCTOR_UPDATE_DOCS=1 rewrites it"
