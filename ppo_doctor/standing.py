"""Where a run stands: how far it got against how far it was planned to go
(docs/architecture.md#contracts).

A rule that judges an *absence of progress* (the reward did not improve, the gradients vanished,
the critic learns nothing) reads "the whole run".  On a run that is still training the whole run so
far is a prefix: GRPO rewards on small models often stay flat for the first fifth of a run and rise
after it.  On a live run (a Monitor, ``watch``) such a rule may only reach a warning or an error once
the run has had a *fair chance*: its plan behind it (or the share of it a rule's ``fair_share`` asks
for, past its learning-rate warm-up), judged here.  An offline log is the run as it ended, killed
or stopped short of its plan included: no more steps will come to overturn what it shows, so it is
judged where it stands, and its verdict says how far it got.

The plan comes from the log or the caller: ``max_steps`` of a ``trainer_state.json`` and of the
Trainer's state (HF ``TrainerState.max_steps``), ``total_timesteps`` of an SB3 / CleanRL config,
``trainer.total_training_steps`` of veRL, ``Monitor(planned_steps=...)``.  When none says so, a
live run is taken as unfinished.

This module is a leaf: it knows steps and numbers, nothing of rules or reports.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any, NamedTuple

# A run within this share of its plan has finished it: CleanRL's last global_step is
# total_timesteps rounded down to a whole batch, SB3 logs its last iteration at the first multiple
# of n_steps x n_envs past it.  Kept tight: a live run at 95 % of its plan can still turn around.
FINISHED_SHARE = 0.99
# The share of its plan (after warm-up) a live run must have behind it before an absence of
# progress may be called a symptom: all of it.  Measured by replaying this project's real runs through the
# callback's schedule (benchmarks/live_replay.py, docs/live.md): trend findings said on a prefix
# and overturned by the finished run were said at 51 % to 92 % of their runs (value losses that
# settle late, an SB3 sparse reward flat at -100 for 56 % of its steps before it rises to -47),
# so no earlier share keeps "never stop a healthy run".  A team that wants earlier calls sets
# ``[rules.<name>] fair_share`` (0.5: half the plan) and takes that risk knowingly.
FAIR_SHARE = 1.0


# The largest step a run frame holds (steps are int64, docs/architecture.md#contracts): a plan
# past it (``max_steps: 1e308``) is not a step count, and read as one it made a finished run 0 %
# of its plan, turning its errors into notes (issue 39).
MAX_STEP = 2**63 - 1


def step_count(value: Any, *, minimum: int = 1) -> int | None:
    """``value`` as a whole number of steps in [``minimum``, :data:`MAX_STEP`], or None.  Integers
    and integral floats (JSON writes ``150.0``) count; booleans, NaN, infinities, fractions of a
    step and anything else do not."""
    if isinstance(value, bool) or not isinstance(value, Real):
        return None
    if isinstance(value, Integral):
        n = int(value)
    elif isinstance(value, float) and value.is_integer():
        n = int(value)
    else:
        return None
    return n if minimum <= n <= MAX_STEP else None


def plan_share(value: Any) -> float | None:
    """``value`` as a share of a plan, in (0, 1], or None."""
    if isinstance(value, bool) or not isinstance(value, Real):
        return None
    share = float(value)
    return share if 0 < share <= 1 else None


class Standing(NamedTuple):
    """How far a run got (``done``: its last logged step) against its plan.

    ``planned``: the planned last step (None: unknown); ``planned_from``: where that figure was
    read (``"max_steps"``, ``"total_timesteps"``, ``"Monitor(planned_steps)"`` ...); ``warmup``:
    steps of learning-rate warm-up (0 when none is known); ``live``: the run is still being
    written (a Monitor, ``watch``), so an unknown plan is not taken as finished; ``diverged``:
    the step from which the training's loss or gradient norm stayed non-finite to the end of an
    offline log (a run that died of NaN stops short of its plan for good).
    """

    done: int | None
    planned: int | None = None
    planned_from: str = ""
    warmup: int = 0
    live: bool = False
    first: int | None = None
    # the step from which the run's loss or gradient norm was non-finite to its last logged step
    # (offline logs only): the weights are NaN or infinite, the run cannot go on, so it is over
    diverged: int | None = None

    @property
    def share(self) -> float | None:
        """Share of the plan behind the run (from its first step), or None when the plan is unknown."""
        if self.planned is None or self.done is None:
            return None
        start = self.first if self.first is not None and self.first < self.planned else 0
        span = self.planned - start
        return 1.0 if span <= 0 else max(0.0, min(1.0, (self.done - start) / span))

    @property
    def finished(self) -> bool | None:
        """True when the run reached its plan, False when it stopped short of it, None when the
        plan is unknown (an offline log is then taken as finished by :meth:`fair`).  A log that
        counts its steps from 0 (a loop's ``for step in range(max_steps)``) has finished at step
        ``planned - 1``: on a short plan that last step is more than the 1 % :data:`FINISHED_SHARE`
        allows (a 50-step GRPO loop of the blind set real17 read as "49 of 50")."""
        share = self.share
        if share is None:
            return None
        # a share implies both a plan and a last step
        counted_from_zero = self.first == 0 and self.done + 1 >= self.planned  # type: ignore[operator]
        return share >= FINISHED_SHARE or counted_from_zero

    @property
    def partial(self) -> bool:
        """The run stopped (or stands) short of its known plan."""
        return self.finished is False

    def fair(self, share: float = FAIR_SHARE) -> bool:
        """Whether an absence of progress may be judged.  An offline log always: it is the run as
        it ended, and a run stopped short of its plan trained no further (measured on the labelled
        real runs, docs/scorecard.md: of the logs stopped short of a known plan, judging them where
        they stand turned 7 misses right and no healthy run wrong; waiting for a plan that never
        came had left their stagnation "watched").  A live run once it reached its plan
        (:attr:`finished`), or once at least ``share`` of the plan after warm-up is behind it; with
        no known plan, not until it ends."""
        if not self.live:
            return True
        if self.planned is None or self.done is None:
            return False
        return bool(self.finished) or self.done >= self.judged_from(share)

    def judged_from(self, share: float = FAIR_SHARE) -> int:
        """The step from which an absence of progress is judged: ``share`` of the plan after the
        later of the warm-up and the first logged step (the plan's end when none is known)."""
        planned = self.planned if self.planned is not None else (self.done or 0)
        start = max(self.warmup, self.first or 0)
        return planned if planned <= start else start + int(math.ceil(share * (planned - start)))

    def describe(self) -> str:
        """"40 of 200 planned steps (20 %)", "step 40, plan unknown" or "" when nothing is known."""
        if self.done is None:
            return ""
        if self.planned is None:
            return f"step {self.done:,}, planned length unknown" if self.live else ""
        share = self.share or 0.0
        return f"{self.done:,} of {self.planned:,} planned steps ({share:.0%})"

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"steps_done": self.done, "planned_steps": self.planned, "partial": self.partial, "live": self.live}
        if self.planned_from:
            out["planned_from"] = self.planned_from
        return out


__all__ = ["FAIR_SHARE", "FINISHED_SHARE", "MAX_STEP", "Standing", "plan_share", "step_count"]
