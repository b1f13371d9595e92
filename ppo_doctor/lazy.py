"""Heavy third-party modules, imported on first use (benchmarks/RESULTS.md, "Import cost").

A one-file ``check`` of a small log must cost what reading it costs, not the half second that
importing pandas (0.35 s), pyarrow (0.15 s), yaml or crc32c takes; yet the readers of W&B exports,
Parquet, odd CSVs, ISO timestamps and YAML configs need them, and they are imported at the top
of those modules.  Those modules write ``from ..lazy import pd`` instead of ``import pandas as
pd``: the name is a stand-in whose first attribute read imports the real module, so the code
that uses it is unchanged and only a path that really touches pandas pays for it.  Type
checkers see the real modules (the ``TYPE_CHECKING`` branch).  tests/test_import_cost.py
keeps the heavy modules out of ``import ppo_doctor``, ``--help`` and ``check`` of small logs.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any


class LazyModule:
    """A module imported when one of its attributes is first read."""

    __slots__ = ("_name", "_module")

    def __init__(self, name: str):
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        state = "imported" if self._module is not None else "not imported yet"
        return f"<lazy module {self._name!r}, {state}>"


if TYPE_CHECKING:
    import crc32c
    import pandas as pd
    import yaml
else:
    # crc32c's package reads its own version from the installed metadata and loads its CLI on
    # import (20 ms): a TFRecord checksum, not a sniff of a JSON file, pays for it
    crc32c = LazyModule("crc32c")
    pd = LazyModule("pandas")
    yaml = LazyModule("yaml")

__all__ = ["LazyModule", "crc32c", "pd", "yaml"]
