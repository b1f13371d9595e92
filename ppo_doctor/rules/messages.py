"""Rule messages: a ``str.format`` template with a number format of its own, filled strictly.

A template names its numbers with the ``num`` spec (``"peak {peak:num} at step {peak_step}"``)
and gets :func:`fmt_num`'s three significant digits, so a rule passes the numbers it observed,
not pre-formatted strings.  A template that cannot be filled (a field the rule does not give, a
bad spec) raises :class:`TemplateError`: a broken message is a bug of the rule, shown by its
bad example in the test suite, never a raw template in a report.
"""

from __future__ import annotations

import math
import string
from typing import Any, Mapping


def fmt_num(x: Any) -> str:
    """A number for a message: 3 significant digits, plain for moderate magnitudes."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return str(x)
    return f"{x:.3g}"


class TemplateError(ValueError):
    """A rule's message template does not fit the fields the rule gave it."""


class MessageFormatter(string.Formatter):
    """``str.format`` plus the ``num`` spec (:func:`fmt_num`)."""

    def format_field(self, value: Any, format_spec: str) -> str:
        if format_spec == "num":
            return fmt_num(value)
        return super().format_field(value, format_spec)


_FORMATTER = MessageFormatter()


def render(template: str, fields: Mapping[str, Any]) -> str:
    """``template`` filled from ``fields``; :class:`TemplateError` when it cannot be."""
    try:
        return _FORMATTER.vformat(template, (), fields)
    except (KeyError, IndexError, ValueError, AttributeError, TypeError) as e:
        raise TemplateError(f"message template {template!r}: {type(e).__name__}: {e}") from e
