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

import functools
import logging
import os
import stat
import sys
from importlib.machinery import PathFinder
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

from .errors import PluginError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

log = logging.getLogger(__name__)

RULES = "ppo_doctor.rules"
READERS = "ppo_doctor.readers"
FORMATS = "ppo_doctor.formats"
GROUPS = (RULES, READERS, FORMATS)


class Plugin(NamedTuple):
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


def entry_points(group: str) -> list[EntryPoint]:
    """The installed entry points of ``group``, as ``importlib.metadata.entry_points(group=...)``
    gives them.  importlib.metadata is asked only when some distribution on the path may declare
    ``group`` (:func:`_may_declare`): importing it and parsing every distribution's metadata costs
    about 40 ms, as much as the rest of a small ``check`` (benchmarks/RESULTS.md, "Import cost"), to find, almost always, no
    plugin at all."""
    if not _may_declare(group):
        return []
    from importlib.metadata import entry_points as installed

    try:
        return list(installed(group=group))
    except (UnicodeDecodeError, ValueError) as exc:
        # an entry_points.txt that is not UTF-8 text (or not an INI file) names no distribution
        # in importlib.metadata's error: find the one that cannot be read, and name it
        raise PluginError(f"entry-point group {group}: {_unreadable_metadata(exc)}") from None


def _unreadable_metadata(exc: Exception) -> str:
    """Which installed distribution's entry points cannot be read, and why (``exc``)."""
    from importlib.metadata import distributions

    for dist in distributions():
        try:
            dist.entry_points
        except (UnicodeDecodeError, ValueError) as own:
            name = getattr(dist, "_path", None) or dist.metadata["Name"]
            return f"the entry points of {name} cannot be read ({type(own).__name__}: {own}); reinstall or remove that distribution"
    return f"the installed entry points cannot be read ({type(exc).__name__}: {exc})"


def _may_declare(group: str) -> bool:
    """False only when no distribution that importlib.metadata would find declares ``group``.

    importlib.metadata's own finder (``MetadataPathFinder``, through
    :class:`importlib.machinery.PathFinder`) looks in each directory on ``sys.path`` for
    ``*.dist-info`` and ``*.egg-info`` folders (and ``EGG-INFO`` in a ``*.egg`` one) and reads the
    ``[group]`` sections of their ``entry_points.txt``
    (https://github.com/python/cpython/blob/3.11/Lib/importlib/metadata/__init__.py, ``FastPath``
    and ``Lookup``); a file that never names ``group`` declares no entry point of it.  Anything
    this scan cannot see as cheaply answers True: a zip file on the path, another finder on
    ``sys.meta_path`` that finds distributions of its own, or a group other than these three."""
    if group not in GROUPS or any(f is not PathFinder and hasattr(f, "find_distributions") for f in sys.meta_path):
        return True
    for entry in sys.path:
        if not isinstance(entry, str):
            return True
        folder = os.path.abspath(entry or os.curdir)  # "" is the working directory, wherever it is now
        try:
            st = os.stat(folder)
        except OSError:  # not there: importlib.metadata finds nothing in it either
            continue
        if not stat.S_ISDIR(st.st_mode):
            return True  # a zip file: importlib.metadata reads the distributions inside it
        if group in _groups_named_in(folder, st.st_mtime_ns):
            return True
    return False


@functools.lru_cache(maxsize=None)
def _groups_named_in(folder: str, mtime_ns: int) -> frozenset[str]:
    """Which of this module's groups the ``entry_points.txt`` files of the distributions in
    ``folder`` name; read once per folder while its listing is unchanged (``mtime_ns``, the key
    importlib.metadata caches a folder's listing by), so the rules and the readers share one scan."""
    is_egg = os.path.basename(folder).lower().endswith(".egg")
    named: set[str] = set()
    try:
        children = os.scandir(folder)
    except OSError:
        return frozenset()
    with children:
        for child in children:
            low = child.name.lower()
            if not (low.endswith((".dist-info", ".egg-info")) or (is_egg and low == "egg-info")):
                continue
            try:
                with open(os.path.join(child.path, "entry_points.txt"), encoding="utf-8", errors="replace") as f:
                    text = f.read()
            except OSError:  # no entry points (or an egg-info file, not a folder)
                continue
            named.update(g for g in GROUPS if g in text)
    return frozenset(named)


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
        except SystemExit as exc:
            # a plugin that exits while being imported would end ppo-doctor with its own code
            # (0: a CI gate that passes having checked nothing)
            raise where.error(f"called sys.exit({exc.code!r}) while being imported") from None
        except Exception as exc:  # noqa: BLE001 - whatever a plugin's import raises, name the plugin
            log.debug("importing %s failed", ep.value, exc_info=True)
            raise where.error(f"cannot be imported ({type(exc).__name__}: {exc})") from exc
        found.append(where._replace(obj=obj))
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
