"""Gradient clipping turned off, and what an unclipped gradient explains.

With ``max_grad_norm`` unset (None) or <= 0 nothing bounds an update: one bad batch's gradient is
applied whole (the guides' "exploding gradients": "use gradient clipping, max_grad_norm 0.5-1.0";
SB3 and CleanRL default to 0.5, TRL to 1.0).  PD602 judges the explosion; PD601 and PD801-PD803
lend ``no-grad-clipping`` support when such a gradient explains their finding.
"""

from __future__ import annotations

import numpy as np

from ..detect import early_late
from ..view import RunView
from .base import RuleContext
from .messages import fmt_num

# PTT's "explode" factor for a gradient norm against its early baseline (PD602 uses it too).
EXPLODE_FACTOR = 10.0
# Support an over-large update (PD801-PD803) or a non-finite value (PD601) lends
# no-grad-clipping when nothing clipped an exploded gradient: the catalog's mechanism, "a
# single bad batch produces a huge update ... and can diverge to NaN".
UNCLIPPED_UPDATE_WEIGHT = 0.7


def clipping_off(view: RunView) -> bool:
    """The config turns gradient clipping off: ``max_grad_norm`` written as None, or <= 0."""
    if view.has_cfg("max_grad_norm") and view.cfg("max_grad_norm") is None:
        return True
    mgn = view.cfg_float("max_grad_norm")
    return mgn is not None and mgn <= 0


def unclipped_explosion(ctx: RuleContext, min_points: int = 10) -> str | None:
    """Evidence text when clipping is off and the (pre-clip) ``grad/norm`` exploded, else None.

    Exploded: its largest value is at least :data:`EXPLODE_FACTOR` times the median of the
    first 10 % of the run.  Then every over-large update of the run may be that gradient,
    applied whole.
    """
    if not clipping_off(ctx.view) or not ctx.has("grad/norm"):
        return None
    _, g = ctx.finite("grad/norm")
    if len(g) < min_points:
        return None
    base, _, _ = early_late(g)
    peak = float(np.max(g))
    if not base > 0 or peak < EXPLODE_FACTOR * base:
        return None
    return f"config: gradient clipping off, and grad/norm reached {fmt_num(peak / base)}x its early level: nothing bounded these updates"


def unclipped_causes(ctx: RuleContext, causes: dict[str, float]) -> tuple[dict[str, float], list[str]]:
    """``causes`` with no-grad-clipping added when nothing clipped an exploded gradient, and
    the evidence saying so (for findings that such a gradient explains)."""
    note = unclipped_explosion(ctx)
    if note is None:
        return dict(causes), []
    # the unbounded gradient explains the finding at least as well as any cause the rule names
    # by itself (a learning rate too high is then one of two explanations, not the better one)
    weight = max([causes.get("no-grad-clipping", 0.0), UNCLIPPED_UPDATE_WEIGHT, *causes.values()])
    return {**causes, "no-grad-clipping": weight}, [note]
