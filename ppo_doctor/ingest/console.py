"""What the readers of captured console output share (``python train.py | tee train.log``).

A console log is whatever a training printed, in the order the terminal got it: the trainer's
own metric lines (:mod:`.readers.verl_console`, :mod:`.readers.deepspeed_chat_console`,
:mod:`.readers.hf_console`, :mod:`.readers.sb3_console`) between warnings, other prints and
progress bars.  A progress bar redraws itself with a carriage return and colours and moves with
ANSI escape sequences, so one line of the file holds many bar states, and a message printed under
a running bar follows the bar's last ``\\r`` (tqdm's ``write`` clears the bar first).  The helpers here:

* :func:`scan` decides whether a file is worth a reader's closer look: its head, and for a text
  file named like a console log (``.log``, ``.txt``, ``.out``, ``.err``, no suffix) its first
  :data:`SNIFF_BYTES`, since model loading and progress bars can fill far more than the head
  before the first metric line;
* :func:`read_lines` reads the file with lines over :data:`MAX_LINE_BYTES` left out as they
  stream by (a progress bar that never printed a newline is one long line), and gives each
  line with its number and byte offset, so that damage is reported where it is;
* :func:`pieces` splits a line into what the terminal showed in turn;
* :func:`printed_number` reads a number as Python prints it (``1e-06``, ``nan``, ``-inf``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, NamedTuple

from ..errors import LogReadError
from ..frame import ReadIssue
from . import filebytes
from .base import HEAD_BYTES
from .storage import open_binary

# Colour, cursor movement (tqdm moves up a line with ESC[A) and other CSI sequences.
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# Names that captured console output has: a file of any other name is only judged by its head.
CONSOLE_SUFFIXES = frozenset({"", ".log", ".txt", ".out", ".err"})
# A Markdown file is a console capture when its name says so: a terminal's output pasted into a
# fenced block to render on GitHub (blind set real54: a TRL GRPO fork's ``run_terminal.md``, its
# metric dicts 170 KB in, after model loading and progress bars).  A README is not one.
CONSOLE_MARKDOWN = re.compile(r"log|terminal|console|stdout|output", re.IGNORECASE)
# How far into a console-named file a sniffer looks for its first metric line.
SNIFF_BYTES = 16 << 20
# Longest line read (16 MiB; a metric line is at most some KB, a line of progress-bar states can
# be long): a longer one, such as the zero-filled tail a killed job leaves, is skipped as the
# file streams in (docs/architecture.md#inputs-are-untrusted).
MAX_LINE_BYTES = 16 << 20
# A call that wraps a number when Python prints it: a NumPy scalar (numpy >= 2's repr,
# ``np.float64(0.1)``) or a torch tensor (``tensor(0.5, grad_fn=<MeanBackward0>)``).
NUMBER_WRAPPER = r"(?:(?:np|numpy)\.(?:float|int|uint)(?:8|16|32|64)|(?:torch\.)?tensor)"
# A number as Python's repr/str, ``%g`` or ``f"{v:.4g}"`` prints it.
_NUMBER = re.compile(r"[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf|infinity)", re.IGNORECASE)


class Line(NamedTuple):
    """One line of a console log: 1-based number, byte offset of its start, its bytes (no newline)."""

    number: int
    offset: int
    data: bytes


def scan(path: Path, head: bytes, found: Callable[[bytes], bool], *, console_named: bool | None = None) -> bool:
    """Whether ``found`` holds for the head of ``path`` or, for a console-named text file whose
    head is not all of it, for its first :data:`SNIFF_BYTES`.  ``found`` must be specific enough
    to hold beside NUL bytes (a crashed writer pads a file with zeros); a file with NUL bytes
    before that is binary.  ``console_named``: whether the file may be a console log, when a
    reader knows more than its suffix (:data:`CONSOLE_SUFFIXES`) tells."""
    if found(head):
        return True
    named = console_name(path) if console_named is None else console_named
    if len(head) < HEAD_BYTES or b"\0" in head or not named:
        return False
    try:
        with open_binary(path) as fh:
            chunk = fh.read(SNIFF_BYTES)
    except OSError:
        return False
    return b"\0" not in chunk.rstrip(b"\0")[:65536] and found(chunk)


def console_name(path: Path) -> bool:
    """Whether ``path`` is named like captured console output (:data:`CONSOLE_SUFFIXES`, or a
    Markdown file whose stem says it holds a log: :data:`CONSOLE_MARKDOWN`)."""
    suffix = path.suffix.lower()
    return suffix in CONSOLE_SUFFIXES or (suffix == ".md" and CONSOLE_MARKDOWN.search(path.stem) is not None)


def read_lines(path: Path) -> tuple[list[Line], bytes, list[ReadIssue]]:
    """The lines of a console log, the bytes read, and a warning for each line left out for its
    length.  Raises :class:`LogReadError` when the file cannot be read."""
    src = str(path)
    try:
        data, long = filebytes.read_capped_lines(path, MAX_LINE_BYTES)
    except OSError as exc:
        raise LogReadError(src, f"cannot read file ({exc.strerror or exc})") from exc
    skipped = [
        ReadIssue(src, f"line {ln.number} skipped: {ln.length} bytes, over the {MAX_LINE_BYTES}-byte line limit (MAX_LINE_BYTES)", offset=ln.offset, level="warning")
        for ln in long
    ]
    return lines_of(data, long), data, skipped


def lines_of(data: bytes, long: list[filebytes.LongLine] | None = None) -> list[Line]:
    """The lines of ``data`` with their numbers and byte offsets in the file; ``long``: the lines
    :func:`~ppo_doctor.ingest.filebytes.read_capped_lines` left empty, whose bytes the offsets
    of the lines after them count."""
    left_out = {ln.number: ln.length for ln in long or ()}
    out = []
    offset = 0
    for number, line in enumerate(data.split(b"\n"), 1):
        out.append(Line(number, offset, line))
        offset += left_out.get(number, len(line)) + 1
    return out


def pieces(line: bytes) -> list[str]:
    """What the terminal showed in turn on one line: the text between carriage returns, without
    ANSI escape sequences and trailing blanks (a Windows line end is no carriage return of its own)."""
    text = ANSI.sub("", line.decode("utf-8", "replace")).rstrip()
    return [p.rstrip() for p in text.split("\r")]


def printed_number(text: str) -> float | None:
    """``text`` as a number when it is one as Python prints numbers, else None."""
    t = text.strip()
    return float(t) if _NUMBER.fullmatch(t) else None
