"""Report renderers: one module per output format, all fed the same :class:`Report`.

``render(report, "sarif")`` returns the whole document as a string.  Format modules are
imported only when used, so ``ppo-doctor check --format github`` never imports matplotlib
(only ``html`` draws plots, through :mod:`ppo_doctor.report.plots`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from ..results import Report

# format name -> module in this package defining ``render(report, options) -> str``
RENDERERS: dict[str, str] = {
    "text": "terminal",
    "markdown": "markdown",
    "html": "html",
    "json": "json_out",
    "sarif": "sarif",
    "junit": "junit",
    "github": "github",
}
# the formats ``--format`` and the config's ``format`` accept, in the order help lists them
FORMATS = tuple(RENDERERS)
# another spelling :func:`render` accepts
ALIASES = {"terminal": "text"}


@dataclass
class RenderOptions:
    """What a renderer may need besides the report.

    ``fail_on`` decides JUnit failures; ``color`` turns on ANSI styling in ``text``;
    ``plots`` lets ``html`` skip drawing (fast previews, tests); ``verbose`` (``-v``) asks
    ``text`` for the full detail instead of the short report.  Which rules SARIF and JUnit
    list travels in the report itself (:attr:`Report.rules <ppo_doctor.results.Report.rules>`).
    """

    fail_on: str = "error"
    color: bool = False
    plots: bool = True
    verbose: int = 0


def render(report: Report, fmt: str, options: RenderOptions | None = None) -> str:
    """Render ``report`` in format ``fmt`` (one of :data:`FORMATS` or :data:`ALIASES`)."""
    try:
        module = RENDERERS[ALIASES.get(fmt, fmt)]
    except KeyError:
        raise ValueError(f"unknown report format {fmt!r}; choose from {', '.join(sorted([*FORMATS, *ALIASES]))}") from None
    mod = importlib.import_module(f"{__name__}.{module}")
    return mod.render(report, options or RenderOptions())


__all__ = ["ALIASES", "FORMATS", "RENDERERS", "RenderOptions", "render", "Report"]
