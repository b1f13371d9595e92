"""Make log-derived text safe for each output medium.

Everything a report shows that came from a log (tag names, run names, config values, text
samples, file paths, reader messages) is untrusted: a run logged by someone else can carry
``<script>``, Markdown table breakers or terminal escape sequences.  Each renderer passes
such text through exactly one of these functions, chosen by the medium it writes to.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ..doctext import plain_doc

# ECMA-48 escape sequences: CSI (ESC [ ... final byte), OSC (ESC ] ... BEL or ST), and the
# two-byte forms (ESC + one byte).  Stripped first so no half-sequence survives as text.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]?")
# C0 and C1 control characters and DEL; tab/newline are handled per medium.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Characters XML 1.0 forbids outright (JUnit): C0 controls except tab/LF/CR, lone
# surrogates, U+FFFE and U+FFFF (XML 1.0 section 2.2 "Char").
_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# Markdown punctuation that can start inline markup or break a table (CommonMark section
# 2.4: any ASCII punctuation may be backslash-escaped).
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~>])")


def plain(value: Any, *, keep_newlines: bool = False) -> str:
    """Printable text for a terminal or a plain-text file: ANSI and control chars removed.

    Args:
        value: anything; it is turned into ``str`` first.
        keep_newlines: keep ``\\n`` (multi-line text samples); otherwise it becomes a space.
    """
    text = _ANSI.sub("", str(value))
    text = text.replace("\r\n", "\n").replace("\t", " ")
    if not keep_newlines:
        text = text.replace("\n", " ")
    return _CONTROL.sub("", text)


def md(value: Any) -> str:
    """Inline Markdown text (also safe inside a table cell).

    ``<`` and ``&`` become entities so no raw HTML reaches a Markdown renderer (GitHub
    renders inline HTML), punctuation that starts markup is backslash-escaped, and
    control characters and newlines are removed so a value cannot end a table row.
    """
    text = plain(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", text)


def md_fenced(value: Any, info: str = "text") -> str:
    """A fenced Markdown code block holding ``value`` verbatim (control chars removed).

    The fence is one backtick longer than the longest backtick run in the text, so the text
    cannot close it early (CommonMark section 4.5).
    """
    text = plain(value, keep_newlines=True)
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def html_text(value: Any, *, keep_newlines: bool = False) -> str:
    """HTML-escaped text (quotes too, so it is also safe inside attribute values)."""
    import html  # imported here: only the HTML renderer escapes for HTML (benchmarks/RESULTS.md, "Import cost")

    return html.escape(plain(value, keep_newlines=keep_newlines), quote=True)


def xml_text(value: Any) -> str:
    """Text XML 1.0 can hold (ElementTree escapes ``<&>"`` itself but not these)."""
    return _XML_FORBIDDEN.sub("", _ANSI.sub("", str(value)))


def fmt_num(value: Any, digits: int = 4) -> str:
    """A compact number for tables: ``nan``/``inf`` spelled out, ints without a dot."""
    if value is None:
        return "-"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(value)
        except (TypeError, ValueError):
            return plain(value)
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.{digits}g}"


def step_span(start: int | None, end: int | None) -> str:
    """``410-900``, ``410`` or ``-`` for a finding's step range."""
    if start is None:
        return "-"
    if end is None or end == start:
        return str(start)
    return f"{start}-{end}"


def prose(text: str) -> str:
    """Documentation text for a reader: no RST markup (ppo_doctor.doctext.plain_doc)."""
    return plain_doc(text)
