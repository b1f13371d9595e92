"""The project's documented error types.

Only :class:`PPODoctorError` subclasses may escape from the readers and the analysis
pipeline; anything else escaping is a bug (the property tests in ``tests/`` enforce it).
"""

from __future__ import annotations


class PPODoctorError(Exception):
    """Base class of every error ppo_doctor raises on purpose."""


class LogReadError(PPODoctorError):
    """A log file (or part of it) could not be read.

    ``path`` names the file and ``offset`` the byte where the damage starts, when known.
    """

    def __init__(self, path: str, message: str, offset: int | None = None):
        self.path = str(path)
        self.offset = offset
        self.message = message
        where = f"{self.path}" + (f" at byte {offset}" if offset is not None else "")
        super().__init__(f"{where}: {message}")


class ConfigError(PPODoctorError):
    """Bad configuration: an unknown key, a bad value, or a malformed config file."""


class PluginError(PPODoctorError):
    """A plugin (:mod:`ppo_doctor.plugins`) that cannot be imported, points at the wrong kind of
    object or fails the checks its built-in kind passes; the message names its entry point,
    group and distribution.  Like a bad configuration, it is the user's installation to fix."""


def too_big(exc: RecursionError | ValueError) -> str:
    """What a parser's ``RecursionError`` or digit-limit ``ValueError`` means, in one line (a
    config or baseline file that is valid TOML or JSON but that the parser cannot hold)."""
    if isinstance(exc, RecursionError):
        return "values nested too deeply"
    return f"a number too large: {str(exc).split(':', 1)[0]}"
