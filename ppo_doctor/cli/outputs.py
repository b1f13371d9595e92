"""Refusing an output path that is one of a command's inputs (tests/test_issue28_output_paths.py).

``report DIR -o DIR/metrics.jsonl`` used to replace the training log it had just read.  Before a
command writes anything, each of its output paths (``-o``, a baseline being written) is compared,
symlinks resolved, with every file it reads or would read: the files discovery finds under the
inputs and the hyperparameter files beside them, an input that is a file, the config file and a baseline being read.
"""

from __future__ import annotations

import os
from typing import Iterable

import click

from ..ingest.readers.jsonl import CONFIG_NAMES
from ..ingest.storage import is_url
from ..pipeline import find_sources
from ..report.escape import plain
from .common import STDOUT


def refuse_overwriting_inputs(outputs: Iterable[str | None], inputs: Iterable[str], also_read: Iterable[str | None] = ()) -> None:
    """Raise a click.UsageError (exit 2) when one of ``outputs`` is a file read from ``inputs`` or
    one of ``also_read``."""
    targets = {os.path.realpath(o): o for o in outputs if o and o != STDOUT}
    if not targets:
        return  # no discovery walk when everything goes to stdout
    read = {os.path.realpath(p) for p in also_read if p}
    local = [p for p in inputs if not is_url(p)]  # an output is a local file: a URL is never one
    if local:
        read |= {os.path.realpath(p) for p in local}
        found = find_sources(local)
        files = [f for s in found.sources for _, f in s.files] + found.tables
        read |= {os.path.realpath(f) for f in files}
        # the hyperparameter files the readers look for beside a log
        read |= {os.path.realpath(f.parent / name) for f in files for name in CONFIG_NAMES}
    for real, given in targets.items():
        if real in read:
            raise click.UsageError(f"{plain(given)} is one of the files this command reads: writing it would replace that input; choose another output path")
