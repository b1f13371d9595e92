"""Rules: one small module per rule (``pdNNN_<name>.py``, named after its code and name), a
registry that imports them all, and the engine that runs them over a Run.  A rule subclasses
:class:`Rule` (``base``) or a base of a common shape (``shapes``: sustained stretches,
oscillation), reads its resolved ``requires`` from ``ctx.req`` (``inputs``) and names the
numbers of its message with ``{x:num}`` (``messages``).

Codes are grouped by family: PD1xx KL to the reference, PD2xx reward, PD3xx stagnation,
PD4xx value function, PD5xx oscillation, PD6xx gradients and non-finite values, PD7xx
entropy and response length, PD8xx update size (ratio, clip fraction, approx KL), PD9xx log
quality and generated text samples.  ``ppo-doctor rules`` lists them, ``ppo-doctor explain
CODE`` prints one, and ``docs/rules.md`` is generated from them (``python -m
ppo_doctor.rules.docs``).
"""

from __future__ import annotations

from .base import Example, Rule, RuleContext
from .registry import all_rules, get, select

__all__ = [
    "Example",
    "Rule",
    "RuleContext",
    "all_rules",
    "get",
    "select",
]
