"""Plugins: rules, readers and output formats that a team ships in a package of its own, found
through entry points, so that adding one needs no fork of ppo-doctor.

Three entry-point groups (``[project.entry-points."<group>"]`` in the plugin's
``pyproject.toml``; docs/plugins.md has a copy-paste example of each):

``ppo_doctor.rules``
    a :class:`~ppo_doctor.rules.Rule` subclass (``acme.rules:FlatReward``), or a module that
    holds some (``acme.rules``: every Rule subclass with a ``code`` defined in it, as in a
    built-in ``rules/pdNNN_*.py`` module).  The entry point's name is only a label.
``ppo_doctor.readers``
    a module with the interface of a built-in reader (:mod:`ppo_doctor.ingest.base`): ``NAME``
    (the format id: lower-case letters, digits, ``_``), ``sniff(path, head) -> bool`` and
    ``read(path) -> list[RawRun]``.  Plugin readers are asked after every built-in one, so a
    plugin reads only the files no built-in reader recognises.
``ppo_doctor.formats``
    a function ``render(report, options) -> str``, called with a
    :class:`~ppo_doctor.results.Report` and a :class:`~ppo_doctor.report.RenderOptions` as
    the built-in renderers are; the entry point's name is the format's name (``--format NAME``).

This module only finds and imports entry points.  Each kind is validated by the module that owns
the built-ins of that kind, with the same checks (:mod:`ppo_doctor.rules.registry`,
:mod:`ppo_doctor.ingest`, :mod:`ppo_doctor.report`), and a plugin may not take a code, name or
format of a built-in or of another plugin.  Everything is loaded the first time the rules, the
readers or the formats are needed, never by ``import ppo_doctor``.  A plugin that cannot be
imported, points at the wrong kind of object or fails validation raises :class:`PluginError`,
naming the entry point, its group and its distribution: a broken installation is said at once,
not dropped, which would read as a run without findings.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Any

from .errors import PluginError

log = logging.getLogger(__name__)

RULES = "ppo_doctor.rules"
READERS = "ppo_doctor.readers"
FORMATS = "ppo_doctor.formats"


@dataclass(frozen=True)
class Plugin:
    """One loaded entry point: where it comes from, and the object it points to."""

    group: str
    name: str
    target: str  # the entry point's value, "module:attribute" or "module"
    dist: str  # "acme-ppo-rules 0.1", what the rules listing shows
    obj: Any = None

    def error(self, why: str) -> PluginError:
        """A :class:`PluginError` naming this plugin, on one line (the CLI prints it as is)."""
        text = f"plugin {self.name!r} ({self.target}) of entry-point group {self.group} from {self.dist}: {why}"
        return PluginError(" ".join(text.split()))


def _dist(ep: EntryPoint) -> str:
    dist = ep.dist
    return f"{dist.name} {dist.version}" if dist is not None else "an unknown distribution"


def load(group: str) -> list[Plugin]:
    """Every entry point of ``group``, imported, in name order (the order is the same on every
    machine, whatever order the distributions were installed in)."""
    found = []
    for ep in sorted(entry_points(group=group), key=lambda e: (e.name, e.value)):
        where = Plugin(group=group, name=ep.name, target=ep.value, dist=_dist(ep))
        try:
            obj = ep.load()
        except Exception as exc:  # noqa: BLE001 - whatever a plugin's import raises, name the plugin
            log.debug("importing %s failed", ep.value, exc_info=True)
            raise where.error(f"cannot be imported ({type(exc).__name__}: {exc})") from exc
        found.append(replace(where, obj=obj))
    return found


def kind(obj: Any) -> str:
    """What ``obj`` is, for an error message: ``the module acme.x``, ``the function acme.render``, ``an int``."""
    if isinstance(obj, ModuleType):
        return f"the module {obj.__name__}"
    if isinstance(obj, type) or (callable(obj) and hasattr(obj, "__qualname__")):
        what = "class" if isinstance(obj, type) else type(obj).__name__
        return f"the {what} {getattr(obj, '__module__', '?')}.{obj.__qualname__}"
    name = type(obj).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"
