"""Run ``ppo-doctor`` in this process, as the tests of the command line do.

:func:`run_cli` calls :func:`ppo_doctor.cli.main` with stdout and stderr captured (apart, and
together in the order written, as a terminal shows them) and an optional environment, and turns
the exit into a code; an exception the command raises is kept on the result (or re-raised with
``catch_exceptions=False``).
"""

from __future__ import annotations

import io
import os
import sys
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from typing import Iterator, Mapping, Sequence

from ppo_doctor.cli import main


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str
    output: str  # stdout and stderr interleaved in the order written
    exception: BaseException | None = None


class _Stream(io.StringIO):
    """One captured stream that also appends what it is given to the shared ``output``."""

    def __init__(self, output: io.StringIO):
        super().__init__()
        self._output = output

    def write(self, text: str) -> int:
        self._output.write(text)
        return super().write(text)


@contextmanager
def _environment(env: Mapping[str, str | None] | None) -> Iterator[None]:
    saved = dict(os.environ)
    for key, value in (env or {}).items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _code(exit_code: object) -> int:
    """``SystemExit.code`` as a process would show it: None is 0, a message is 1."""
    if exit_code is None:
        return 0
    if isinstance(exit_code, int):
        return exit_code
    sys.stderr.write(f"{exit_code}\n")
    return 1


def run_cli(args: Sequence[str], *, env: Mapping[str, str | None] | None = None, catch_exceptions: bool = True) -> Result:
    output = io.StringIO()
    out, err = _Stream(output), _Stream(output)
    exception: BaseException | None = None
    with _environment(env), redirect_stdout(out), redirect_stderr(err):
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:
            code = _code(exc.code)
        except Exception as exc:  # noqa: BLE001 - kept on the result for the test to inspect
            if not catch_exceptions:
                raise
            exception, code = exc, 1
    return Result(code, out.getvalue(), err.getvalue(), output.getvalue(), exception)
