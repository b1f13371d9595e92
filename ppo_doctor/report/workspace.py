"""Where a log is in the repository: the one answer GitHub annotations (``file=``) and SARIF
locations (``%SRCROOT%``) both give, so code scanning places a result where an annotation is.

A log reached through a symbolic link inside the repository (``logs/run -> /data/run``) is in
the repository where it is linked: its path is taken as written first, and only where that is
outside the repository, as resolved (a path written through a link to the checkout itself).
"""

from __future__ import annotations

import os
from pathlib import Path


def in_workspace(path: str, root: Path) -> str | None:
    """``path`` relative to ``root`` (a resolved folder) as a POSIX path, or None when outside it."""
    written = Path(os.path.abspath(path))  # relative to the working directory, links kept
    for candidate in (written, _resolved(written)):
        try:
            return candidate.relative_to(root).as_posix()
        except ValueError:
            continue
    return None


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a link loop: the path as written
        return path
