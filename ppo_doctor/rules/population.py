"""What healthy runs reach: the reference population a sign is judged against when the run's
config says nothing.

A *sign* (a KL to the reference over its band, an approx KL per update, a clip fraction) is a
runaway when its sustained level goes beyond what every healthy run of the population reaches
(docs/architecture.md#contracts).  The population is the set of public runs labelled healthy
from their curves (``tests/data/real_labels.json``, logs under ``../shared``); for each run and
sign, :func:`measure` takes the 90th percentile of the series (a level the run holds, not one
noisy point), and :func:`table` the largest of them per sign as the sign's runaway limit, never
below the documented healthy level the rule falls back to where the population is too thin (a
multiple of its band, :data:`FALLBACKS`).  The rules take these limits as the defaults of their
``*_runaway`` parameters (a config overrides them).  ``benchmarks/population.py`` measures the population and
writes ``population.json`` beside this module (the table is in docs/population.md);
``benchmarks/real_scorecard.py --loro`` rebuilds it without each held-out repository.

The action noise of a Gaussian policy is measured as the growth of its logged std (SB3's
``train/std``): its median over the last tenth of the run divided by that over the first.  A
policy learning its task narrows its noise (Schulman et al. 2017 train the log std as a free
parameter and it shrinks; rsl_rl#67: "the parameter should generally decrease"); one whose std
grows without bound acts at random (rlpyt#124, garage#255).

The approx KL is measured in units of its clip range: with the ratio held in [1-eps, 1+eps], the
per-token KL of an update is of order eps^2/2, so a run with ``clip_range`` 0.4 moves four times as
far per update as one with 0.2 by design (SB3 PPO docs; Schulman et al. 2017, eq. 7).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np

from ..detect import early_late, percentile
from ..view import SEQ_KL_BAND, TOKEN_KL_BAND, RunView
from ..view.actions import action_std_series

DATA = Path(__file__).with_name("population.json")
# The clip range approx KLs are expressed in (SB3's, CleanRL's and TRL's default).
REFERENCE_CLIP = 0.2
# The documented levels each sign starts from (docs/sources.md).
FLOORS = {
    "kl_ref_token": TOKEN_KL_BAND,
    "kl_ref_seq": SEQ_KL_BAND,
    "kl_old": 0.05,
    "clipfrac": 0.3,
    # twice the std a Gaussian policy starts from (SB3 log_std_init 0 and CleanRL's zero log std
    # give 1, which already spans an action space normalised to [-1, 1], as SB3's docs ask): at 2,
    # 62 % of the sampled actions fall outside [-1, 1] and are clipped to its bounds
    "action_std_growth": 2.0,
}
# Fewer healthy runs than this, or from fewer repositories, and a sign's population is too thin
# to set a limit: the rule's documented fallback applies.
MIN_RUNS, MIN_REPOSITORIES = 3, 2
LEVEL_PERCENTILE = 90
MIN_POINTS = 10


def clip_scale(view: RunView) -> float:
    """(clip range / :data:`REFERENCE_CLIP`)^2 when the config sets a clip range, else 1."""
    eps = view.cfg_float("cliprange")
    return (eps / REFERENCE_CLIP) ** 2 if eps is not None and 0 < eps < 10 else 1.0


def measure(view: RunView) -> dict[str, float]:
    """The sustained level (90th percentile) of each sign the run logs, and the growth of its
    action std (late over early median, :func:`action_std_growth`)."""
    out: dict[str, float] = {}
    kl = view.kl
    if kl is not None and len(kl.values) >= MIN_POINTS:
        key = "kl_ref_token" if kl.reduction == "token_mean" else "kl_ref_seq"
        out[key] = float(percentile(kl.values, LEVEL_PERCENTILE))
    for metric, key, scale in (("kl/old", "kl_old", clip_scale(view)), ("policy/clipfrac", "clipfrac", 1.0)):
        if view.has(metric):
            _, v = view.finite(metric)
            if len(v) >= MIN_POINTS:
                out[key] = float(percentile(np.abs(v), LEVEL_PERCENTILE)) / scale
    growth = action_std_growth(view)
    if growth is not None:
        out["action_std_growth"] = growth
    return out


def action_std_growth(view: RunView) -> float | None:
    """The logged action std's median over its last tenth divided by that over its first, when the
    run logs one with :data:`MIN_POINTS` points or more."""
    found = action_std_series(view)
    if found is None or len(found[2]) < MIN_POINTS:
        return None
    first, late, _ = early_late(found[2])
    return float(late / first) if first > 0 else None


@dataclass(frozen=True)
class Sample:
    """One healthy run's measured levels, with the repository it comes from and what it is."""

    repository: str
    levels: Mapping[str, float]
    domain: str = "unknown"
    framework: str = "unknown"


# Where the healthy population is too thin to say what every healthy run reaches, a KL to the
# reference this many times its band is a runaway.  TRL's 0-10 nats per sequence is the whole
# healthy range its FAQ gives, so 3x is far outside it; 0.3 nats per token is a tight heuristic
# (PTT) that GRPO runs learning well exceed 2-4x (TRL GRPOTrainer levelling off at 0.5-1.1,
# issue 37), so a token-mean KL gets 5x.  A population limit is never below these either: they
# are healthy levels measured elsewhere, and a few healthy runs that stayed low say nothing about
# those that go higher (the first three TRL GRPO runs of the labelled set stayed under 0.12 nats per
# token).
FALLBACK_FACTORS = {"kl_ref_seq": 3.0, "kl_ref_token": 5.0, "kl_old": 1.0, "clipfrac": 1.0, "action_std_growth": 1.0}
FALLBACKS = {sign: FALLBACK_FACTORS[sign] * FLOORS[sign] for sign in FLOORS}


def table(samples: Iterable[Sample]) -> dict[str, dict[str, float]]:
    """Per sign: runs, repositories, p50 / p90 / max of the runs' levels, and the limit
    (the max, never below the sign's documented healthy level :data:`FALLBACKS`; absent when the
    population is too thin)."""
    by_key: dict[str, list[tuple[str, float]]] = {}
    for s in samples:
        for key, level in s.levels.items():
            by_key.setdefault(key, []).append((s.repository, level))
    out: dict[str, dict[str, float]] = {}
    for key, rows in sorted(by_key.items()):
        levels = np.array([lv for _, lv in rows])
        repos = len({r for r, _ in rows})
        entry = {
            "runs": len(rows),
            "repositories": repos,
            "p50": float(percentile(levels, 50)),
            "p90": float(percentile(levels, 90)),
            "max": float(levels.max()),
        }
        if len(rows) >= MIN_RUNS and repos >= MIN_REPOSITORIES:
            entry["limit"] = max(entry["max"], FALLBACKS[key])
        out[key] = entry
    return out


@lru_cache(maxsize=1)
def _shipped() -> dict[str, dict[str, float]]:
    return dict(json.loads(DATA.read_text(encoding="utf-8"))["signs"]) if DATA.is_file() else {}


def limit(sign: str, fallback: float) -> float:
    """The shipped population limit of ``sign`` (``fallback`` when the population is thin)."""
    entry = _shipped().get(sign, {})
    return float(entry.get("limit", fallback))




def runaway_limit(sign: str) -> float:
    """The default runaway limit of ``sign``: the population's, else its documented fallback."""
    return limit(sign, FALLBACKS[sign])
