"""Documentation text as a reader sees it: the reStructuredText of docstrings made plain.

The rules' docstrings are their documentation (docs/rules.md, ppo-doctor explain), and the
cause catalog's texts reach every report; both are written for Python readers, with RST
literals (``x``), roles (:mod:`x`, :func:`~a.b`) and **bold**.  A terminal shows that markup
raw, so each becomes Markdown's `x` (the spelling the fix texts use, and code in docs/*.md),
a role its target (the last part only after a "~", as Sphinx shows it), bold its words.
"""

from __future__ import annotations

import re

_ROLE = re.compile(r":(?:py:)?[a-z]+:`(~?)([^`]+)`")
_LITERAL = re.compile(r"``(.+?)``", re.S)
_BOLD = re.compile(r"\*\*(.+?)\*\*", re.S)


def _role(match: re.Match[str]) -> str:
    target = match.group(2)
    return f"`{target.rsplit('.', 1)[-1] if match.group(1) else target.lstrip('.')}`"


def plain_doc(text: str) -> str:
    """``text`` with RST literals, roles and bold turned into plain text and Markdown code."""
    return _BOLD.sub(r"\1", _LITERAL.sub(r"`\1`", _ROLE.sub(_role, text)))
