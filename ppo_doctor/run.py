"""Run: one training run with its RunFrame and metadata (docs/architecture.md#contracts)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .frame import ReadIssue, RunFrame, TextSample
from .standing import Standing

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
    id: str
    path: str
    format: str
    frame: RunFrame
    files: list[str] = field(default_factory=list)
    framework: str = "unknown"
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
        )

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
