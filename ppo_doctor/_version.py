"""The package version, in a module of its own so the report model and the renderers can read it
without importing the package ``__init__`` (which imports them: a cycle)."""

from __future__ import annotations

__version__ = "0.1.0"
