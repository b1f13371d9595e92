"""Turn a rule's :class:`~ppo_doctor.rules.base.Example` into a :class:`~ppo_doctor.run.Run`,
plus small deterministic curve builders the examples are written with.

Examples are documentation (``ppo-doctor explain``) and tests (the bad one must fire, the
good one must not), so they are built exactly like a real run: RawSeries ->
``RunFrame.from_series`` -> ``Run`` with ``metric_info`` from the example.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..canonical.design import by_design
from ..frame import RawSeries, RunFrame, TextSample
from ..run import MetricInfo, Run
from .base import Example


def _series(spec: Any) -> tuple[np.ndarray, np.ndarray]:
    """``values`` (steps 0..n-1) or ``(steps, values)``."""
    if isinstance(spec, tuple) and len(spec) == 2:
        steps, values = spec
        return np.asarray(steps, dtype=np.int64), np.asarray(values, dtype=np.float64)
    values = np.asarray(spec, dtype=np.float64)
    return np.arange(len(values), dtype=np.int64), values


def _restarts(steps: np.ndarray) -> list[int]:
    """Steps at which a series given in log order goes back (what a reader reports)."""
    back = np.flatnonzero(np.diff(steps) < 0) + 1
    return [int(steps[i]) for i in back]


def example_run(example: Example, run_id: str = "example") -> Run:
    """A Run holding the example's series, evaluation series, config, metric meanings and text samples.

    Series are in log order: steps that go back mark a restart, as a reader would report it.
    """
    items = []
    restarts: set[int] = set()
    for metric, spec in example.series.items():
        steps, values = _series(spec)
        restarts.update(_restarts(steps))
        items.append((metric, RawSeries(tag=metric, steps=steps, values=values, source="example")))
    frame = RunFrame.from_series(items)
    # evaluation rows as a reader keeps them: apart, under the canonical name of their metric
    evals = [(m, RawSeries(tag=f"eval/{m}", steps=st, values=v, source="example")) for m, (st, v) in ((m, _series(sp)) for m, sp in example.eval_series.items())]
    info = {
        m: MetricInfo(canonical=m, raw_tag=m, framework=example.framework, **fields)
        for m, fields in example.metric_info.items()
    }
    texts = [TextSample(step=int(s), tag="samples", text=t, source="example") for s, t in example.texts]
    return Run(
        id=run_id,
        path="<example>",
        format="example",
        frame=frame,
        framework=example.framework,
        config=dict(example.config),
        mapping={m: m for m in example.series},
        metric_info=info,
        texts=texts,
        restarts=sorted(restarts),
        by_design=by_design(example.framework, dict(example.config), frame.has),
        eval_frame=RunFrame.from_series(evals) if evals else None,
    )


# -- curve builders (seeded, so every example is reproducible) ----------------------------
def noise(n: int, sd: float, seed: int = 0) -> np.ndarray:
    """Seeded Gaussian noise."""
    return np.random.default_rng(seed).normal(0.0, sd, n)


def flat(n: int, level: float, sd: float = 0.0, seed: int = 0) -> np.ndarray:
    """A constant level with Gaussian noise."""
    return level + noise(n, sd, seed)


def ramp(n: int, start: float, end: float, sd: float = 0.0, seed: int = 0, begin: int = 0) -> np.ndarray:
    """Flat at ``start`` until point ``begin``, then a straight line to ``end`` at the last point."""
    x = np.full(n, float(start))
    if n - begin > 1:
        x[begin:] = np.linspace(start, end, n - begin)
    return x + noise(n, sd, seed)


def saturating(n: int, start: float, end: float, rate: float = 5.0, sd: float = 0.0, seed: int = 0) -> np.ndarray:
    """A healthy learning curve: fast rise that levels off (1 - exp(-rate * t))."""
    t = np.linspace(0.0, 1.0, n)
    return start + (end - start) * (1.0 - np.exp(-rate * t)) / (1.0 - np.exp(-rate)) + noise(n, sd, seed)


def decay(n: int, start: float, end: float, rate: float = 5.0, sd: float = 0.0, seed: int = 0) -> np.ndarray:
    """Exponential approach from ``start`` to ``end`` (a falling loss)."""
    return saturating(n, start, end, rate, sd, seed)


def sine(n: int, level: float, amplitude: float, period: float, sd: float = 0.0, seed: int = 0) -> np.ndarray:
    """An oscillation of ``period`` points around ``level``."""
    return level + amplitude * np.sin(2 * np.pi * np.arange(n) / period) + noise(n, sd, seed)


def with_points(x: np.ndarray, points: dict[int, float]) -> np.ndarray:
    """A copy of ``x`` with some points replaced (spikes, NaNs, zeros)."""
    y = np.array(x, dtype=np.float64)
    for i, v in points.items():
        y[i] = v
    return y


# Ordinary text samples (an SFT-like policy reviewing films) for the text-rule examples.
PLAIN_SAMPLES = [
    "The film has a warm story and a cast that clearly enjoyed making it.",
    "I found the plot slow at first, but the ending made up for it.",
    "A quiet drama about a family, well acted and beautifully shot.",
    "The dialogue is sharp and the pacing keeps you interested throughout.",
]
