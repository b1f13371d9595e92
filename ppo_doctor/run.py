"""Run: one training run with its RunFrame and metadata (docs/architecture.md#contracts)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .frame import ReadIssue, RunFrame, TextSample
from .standing import Standing

# The training's own quantities: once the loss or the gradient norm is NaN or infinite to the end
# of a log, the update wrote non-finite weights (an optimizer step with a NaN gradient does) and
# the run cannot go on.  Metrics of the data (rewards, explained variance) may be NaN for benign
# reasons and say nothing of the weights.
DIVERGENCE_METRICS = ("loss/total", "loss/policy", "grad/norm")

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class MetricInfo:
    """What a logged number means, so rules judge it in the units it was logged in.

    ``estimator``: k1 (can be < 0), k2, k3 (>= 0), "sqrt_k3" (trlx), "full" or None.
    ``reduction``: "seq_sum" (grows with response length), "token_mean", or None.
    ``sign``: +1, or -1 when the framework logs the negation (SB3 ``train/entropy_loss``).
    ``between``: "ref" (policy vs reference) or "old" (rollout vs updated policy).
    """

    canonical: str
    raw_tag: str
    framework: str | None = None
    estimator: str | None = None
    reduction: str | None = None
    sign: int = 1
    between: str | None = None
    note: str = ""
    inferred: bool = False  # matched by the words of a home-made name, not by a table

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in (None, "") and not (k == "inferred" and not v)}


@dataclass
class Run:
    """One training run: its metric points under canonical names (``frame``), config and metadata."""

    id: str
    path: str
    format: str
    frame: RunFrame
    files: list[str] = field(default_factory=list)
    framework: str = "unknown"
    # what proves the framework (its config, a file layout only that trainer writes); "" when only
    # its metric names point at it: a guess, said as "looks like" (canonical.frameworks.framework_proof)
    framework_proof: str = ""
    config: dict[str, Any] = field(default_factory=dict)  # canonical hyper-parameters
    raw_config: dict[str, Any] = field(default_factory=dict)  # everything found, flattened
    mapping: dict[str, str] = field(default_factory=dict)  # raw tag -> canonical metric
    unmapped: list[str] = field(default_factory=list)
    metric_info: dict[str, MetricInfo] = field(default_factory=dict)  # canonical -> meaning
    texts: list[TextSample] = field(default_factory=list)
    issues: list[ReadIssue] = field(default_factory=list)
    restarts: list[int] = field(default_factory=list)
    eval_frame: RunFrame | None = None
    # what the run lacks by design, family -> why (ppo_doctor.canonical.design): "critic" for a
    # critic-free run (GRPO, RLOO, REINFORCE++), "kl" when the KL term is off by configuration
    by_design: dict[str, str] = field(default_factory=dict)
    # where the run stands (ppo_doctor.standing): its planned last step and where that was read
    # (None: unknown), its learning-rate warm-up, and whether it is still being written (live)
    planned_steps: int | None = None
    planned_from: str = ""
    warmup_steps: int = 0
    live: bool = False
    # "path: why" of each of the run's log files that could not be read: the run is judged on
    # the others, and never reported as if it had been read in full
    unread: list[str] = field(default_factory=list)

    @property
    def standing(self) -> Standing:
        """How far the run got against its plan (its last and first logged steps)."""
        rng = self.frame.step_range()
        return Standing(
            done=None if rng is None else rng[1],
            first=None if rng is None else rng[0],
            planned=self.planned_steps,
            planned_from=self.planned_from,
            warmup=self.warmup_steps,
            live=self.live,
            diverged=None if self.live or rng is None else self._diverged_from(rng[1]),
        )

    def _diverged_from(self, last_step: int) -> int | None:
        """The first step of the stretch, running to ``last_step``, where one of the training's
        own quantities (:data:`DIVERGENCE_METRICS`) is not finite; None when none ends so.  Other
        metrics may be NaN for benign reasons (explained variance of constant returns)."""
        for metric in DIVERGENCE_METRICS:
            if not self.frame.has(metric):
                continue
            steps, values = self.frame.arrays(metric)
            if len(values) == 0 or int(steps[-1]) != last_step or np.isfinite(values[-1]):
                continue
            finite = np.flatnonzero(np.isfinite(values))
            return int(steps[finite[-1] + 1]) if len(finite) else int(steps[0])
        return None

    @property
    def generates_text(self) -> bool:
        """Text samples logged at two or more steps: what a policy generates as it trains.  Text
        written at one step only is a note about the run (TensorBoard's ``algo/text_summary``,
        ``env_name/text_summary`` ...), no mark of LLM RL."""
        return len({t.step for t in self.texts}) >= 2

    @property
    def critic_free(self) -> bool:
        return "critic" in self.by_design

    @property
    def kl_off(self) -> bool:
        return "kl" in self.by_design

    @property
    def warnings(self) -> list[str]:
        return [str(i) for i in self.issues]

    def series(self, metric: str) -> pd.Series:
        return self.frame.series(metric)

    def has(self, metric: str) -> bool:
        return self.frame.has(metric)
