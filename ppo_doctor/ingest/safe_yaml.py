"""YAML from untrusted files: ``yaml.safe_load`` and a bound on what its aliases expand to.

``safe_load`` never builds arbitrary Python objects, but YAML anchors and aliases still let a
few hundred bytes describe billions of values (the "billion laughs" document: each level
refers nine times to the one before) or a container that holds itself.  The loader shares the
aliased nodes, so loading is cheap; it is whoever walks the result afterwards (config
flattening, report rendering) that would expand it.  So the expanded size is measured here,
with a walk that stops as soon as it passes the limit.
"""

from __future__ import annotations

from typing import Any

from ..lazy import yaml

# Far above any real hyper-parameter file (a W&B config.yaml of a large run holds a few
# thousand values), far below what would make flattening or rendering slow.
MAX_VALUES = 100_000


class YAMLTooLarge(ValueError):
    """The document's aliases expand past :data:`MAX_VALUES` values, or refer to themselves."""


def safe_load(stream: Any) -> Any:
    """``yaml.safe_load(stream)``; raises ``yaml.YAMLError`` or ``ValueError`` on bad input."""
    try:
        value = yaml.safe_load(stream)
    except RecursionError:
        raise YAMLTooLarge("nested too deeply") from None
    if _expands_past(value, MAX_VALUES):
        raise YAMLTooLarge(f"its aliases expand to more than {MAX_VALUES:,} values or refer to themselves")
    return value


def _expands_past(root: Any, limit: int) -> bool:
    """Whether ``root``, with every shared container counted each time it is referred to, holds
    more than ``limit`` values.  Iterative (no recursion limit) and O(limit) at worst."""
    stack = [root]
    count = 0
    while stack:
        node = stack.pop()
        count += 1
        if count > limit:
            return True
        if isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, (list, tuple, set)):
            stack.extend(node)
    return False
