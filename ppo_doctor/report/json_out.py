"""``--format json``: the versioned :meth:`Report.to_dict` document (``report.schema.json``,
docs/architecture.md#contracts).

JSON has no NaN or Infinity (RFC 8259 section 6), and Python's ``json`` writes them as bare
``NaN`` tokens that strict parsers reject; every non-finite float left anywhere in the
document is written as the string ``"nan"``, ``"inf"`` or ``"-inf"`` instead, and
``allow_nan=False`` makes any miss fail loudly rather than emit invalid JSON.

The document's JSON Schema ships in the package (``report.schema.json``, printed by
``ppo-doctor schema``): :func:`json_schema` reads it.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..results import Report
from . import RenderOptions


SCHEMA_RESOURCE = "report.schema.json"


def json_schema_text() -> str:
    """The JSON Schema (draft 2020-12) of the ``--format json`` document, as shipped."""
    from importlib import resources  # imported here: only ``schema`` reads the file (benchmarks/RESULTS.md, "Import cost")

    return resources.files(__package__).joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")


def json_schema() -> dict[str, Any]:
    """:func:`json_schema_text` parsed."""
    schema: dict[str, Any] = json.loads(json_schema_text())
    return schema


def finite_json(value: Any) -> Any:
    """``value`` with every non-finite float replaced by its string spelling."""
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {str(k): finite_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(v) for v in value]
    if value is None or isinstance(value, (str, int, bool)):
        return value
    # numpy scalars (``item()`` keeps ints ints); anything else becomes its string
    item = getattr(value, "item", None)
    if callable(item):
        try:
            plain = item()
        except (TypeError, ValueError):
            return str(value)
        if plain is not value and isinstance(plain, (float, int, bool, str)):
            return finite_json(plain)
    return str(value)


def dumps(doc: Any, *, indent: int | None = 2) -> str:
    """Strict JSON text of ``doc`` (never ``NaN``/``Infinity`` tokens)."""
    return json.dumps(finite_json(doc), indent=indent, allow_nan=False, ensure_ascii=False)


def render(report: Report, options: RenderOptions) -> str:
    """The report as indented JSON text."""
    return dumps(report.to_dict()) + "\n"
