"""Report renderers: one module per output format, all fed the same :class:`Report`.

``render(report, "sarif")`` returns the whole document as a string.  Format modules are
imported only when used, so ``ppo-doctor check --format github`` never imports matplotlib
(only ``html`` draws plots, through :mod:`ppo_doctor.report.plots`).  The ``ppo_doctor.formats``
plugins (:mod:`ppo_doctor.plugins`) add formats of their own, loaded when :func:`formats` is
first asked for them or :func:`render` for a format that is not built in.
"""

from __future__ import annotations

import importlib
import inspect
import re
from dataclasses import dataclass
from functools import partial

from .. import deadline, plugins
from ..results import Report
from ..settings import PLUGIN_TIMEOUT

# format name -> module in this package defining ``render(report, options) -> str``
RENDERERS: dict[str, str] = {
    "text": "terminal",
    "markdown": "markdown",
    "html": "html",
    "json": "json_out",
    "sarif": "sarif",
    "junit": "junit",
    "github": "github",
    "gitlab": "gitlab",
}
# the formats ``--format`` and the config's ``format`` accept, in the order help lists them
FORMATS = tuple(RENDERERS)
# another spelling :func:`render` accepts
ALIASES = {"terminal": "text"}
# a plugin format's name: what ``--format`` and the config's ``format`` (lower-cased) accept
FORMAT_NAME_RE = re.compile(r"^[a-z][a-z0-9_-]*$")

_PLUGIN_FORMATS: dict[str, plugins.Plugin] | None = None


@dataclass
class RenderOptions:
    """What a renderer may need besides the report.

    ``fail_on`` decides JUnit failures; ``color`` turns on ANSI styling in ``text``;
    ``plots`` lets ``html`` skip drawing (fast previews, tests); ``verbose`` (``-v``) asks
    ``text`` for the full detail instead of the short report; ``width`` wraps ``text``'s lines
    to that many columns (a terminal's; None: no wrapping, as for a pipe or a file); ``plugin_timeout``
    is the seconds a plugin's renderer may take (the setting of that name).  Which rules SARIF and JUnit
    list travels in the report itself (:attr:`Report.rules <ppo_doctor.results.Report.rules>`).
    """

    fail_on: str = "error"
    color: bool = False
    plots: bool = True
    verbose: int = 0
    width: int | None = None
    plugin_timeout: float = PLUGIN_TIMEOUT


def formats() -> tuple[str, ...]:
    """:data:`FORMATS`, then the plugins' formats in name order."""
    return FORMATS + tuple(_plugin_formats())


def _plugin_formats() -> dict[str, plugins.Plugin]:
    """The ``ppo_doctor.formats`` plugins by format name, loaded and checked on first use."""
    global _PLUGIN_FORMATS
    if _PLUGIN_FORMATS is None:
        found: dict[str, plugins.Plugin] = {}
        for plugin in plugins.load(plugins.FORMATS):
            _check_format(plugin, found)
            found[plugin.name] = plugin
        _PLUGIN_FORMATS = found
    return _PLUGIN_FORMATS


def _check_format(plugin: plugins.Plugin, found: dict[str, plugins.Plugin]) -> None:
    """A format plugin must have a free, plain name and be a ``render(report, options)``."""
    name = plugin.name
    if not FORMAT_NAME_RE.match(name):
        raise plugin.error(f"a format name must be lower-case letters, digits, - and _, got {name!r}")
    if name in RENDERERS or name in ALIASES:
        raise plugin.error(f"the format name {name!r} is a built-in format's")
    if name in found:
        raise plugin.error(f"the format name {name!r} is already taken by {found[name].target} of {found[name].dist}")
    if not callable(plugin.obj):
        raise plugin.error(f"expected a function render(report, options) -> str, got {plugins.kind(plugin.obj)}")
    try:
        inspect.signature(plugin.obj).bind(None, None)
    except TypeError:
        raise plugin.error(f"{plugins.kind(plugin.obj)} cannot be called as render(report, options)") from None
    except ValueError:
        pass  # no signature to read (a C function): it is checked when it renders


def render(report: Report, fmt: str, options: RenderOptions | None = None) -> str:
    """Render ``report`` in format ``fmt`` (one of :func:`formats` or :data:`ALIASES`)."""
    name = ALIASES.get(fmt, fmt)
    options = options or RenderOptions()
    if name in RENDERERS:
        return importlib.import_module(f"{__name__}.{RENDERERS[name]}").render(report, options)
    plugin = _plugin_formats().get(name)
    if plugin is None:
        raise ValueError(f"unknown report format {fmt!r}; choose from {', '.join(sorted([*formats(), *ALIASES]))}")
    try:
        text = deadline.call(partial(plugin.obj, report, options), options.plugin_timeout)
    except deadline.DeadlineExceeded as exc:
        raise plugin.error(f"render {exc} (plugin_timeout)") from None
    except SystemExit as exc:
        raise plugin.error(f"render called sys.exit({exc.code!r})") from None
    except Exception as exc:  # noqa: BLE001 - whatever a plugin raises, name the plugin
        raise plugin.error(f"render failed ({type(exc).__name__}: {exc})") from exc
    if not isinstance(text, str):
        raise plugin.error(f"render returned {plugins.kind(text)}, not a str")
    return text


__all__ = ["ALIASES", "FORMATS", "RENDERERS", "RenderOptions", "formats", "render", "Report"]
