"""A synthetic hyper-parameter sweep: run folders in mixed formats whose KL blows up when the
KL coefficient is small, for the sweep benchmark and the sweep tests.

Each run is ``<root>/kl<coef>_seed<seed>/`` and logs ``n_metrics`` TRL PPOTrainer keys
(``objective/kl``, ``objective/scores``, ...; the first :data:`TAGS`) for ``n_steps`` steps, in
one of three formats chosen by the run's index, each with its config where that format keeps it:

* ``jsonl``: ``metrics.jsonl`` (one object per step) + ``config.json``;
* ``trainer_state``: ``trainer_state.json`` (``log_history``; the config as top-level fields);
* ``tensorboard``: one event file (``simple_value`` scalars) with the config as hparams.

A run with ``kl_coef <= blowup_below`` has its KL climb from 2 to ~40 nats from a fifth of the way
in while the score rises with it (the reward-hacking pattern the guides describe); the others keep
KL near 2 and a slowly rising score.  Same arguments, same bytes (seeded per run).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import numpy as np

from benchmarks.gen_inputs import BASE_WALL_TIME, EventFileWriter, event, hparams_session_start, simple_value

TAGS = (
    "objective/kl", "objective/scores", "objective/entropy", "objective/rlhf_reward", "objective/non_score_reward",
    "policy/approxkl_avg", "policy/clipfrac_avg", "loss/policy_avg", "loss/value_avg", "val/clipfrac_avg",
    "policy/entropy_avg", "val/ratio", "val/num_eos_tokens", "lr", "episode",
    "time/step", "custom/throughput", "custom/gpu_mem", "custom/tokens_seen", "custom/queue_depth",
    "debug/a", "debug/b", "debug/c", "debug/d", "debug/e",
)  # fmt: skip
FORMATS = ("jsonl", "trainer_state", "tensorboard")


def curves(kl_coef: float, seed: int, n_steps: int, n_metrics: int, blowup_below: float) -> dict[str, np.ndarray]:
    """The run's series, tag -> float64 values for steps 0..n_steps-1."""
    rng = np.random.default_rng([seed, int(kl_coef * 1e6)])
    t = np.arange(n_steps, dtype=np.float64)
    frac = t / max(1, n_steps - 1)
    noise = lambda scale: rng.normal(0.0, scale, n_steps)  # noqa: E731
    if kl_coef <= blowup_below:
        ramp = np.clip((frac - 0.2) / 0.8, 0.0, None)
        kl = 2.0 + 38.0 * ramp + noise(0.3)
        score = 0.5 + 4.0 * ramp + noise(0.05)
    else:
        kl = 2.0 + noise(0.1)
        score = 0.5 + 0.5 * frac + noise(0.05)
    out = {
        "objective/kl": kl,
        "objective/scores": score,
        "objective/entropy": 30.0 + noise(0.3),
        "objective/rlhf_reward": score - kl_coef * kl,
        "objective/non_score_reward": -kl_coef * kl,
        "policy/approxkl_avg": 0.01 + np.abs(noise(0.002)),
        "policy/clipfrac_avg": 0.05 + np.abs(noise(0.01)),
        "loss/policy_avg": -0.01 + noise(0.005),
        "loss/value_avg": 0.2 + np.abs(noise(0.02)),
        "val/clipfrac_avg": 0.1 + np.abs(noise(0.01)),
        "policy/entropy_avg": 2.0 + noise(0.02),
        "val/ratio": 1.0 + noise(0.005),
        "val/num_eos_tokens": 8.0 + noise(0.5),
        "lr": np.full(n_steps, 1.41e-5),
        "episode": (t + 1) * 64,
    }
    for tag in TAGS[len(out) :]:
        out[tag] = 1.0 + noise(0.1)
    return {tag: out[tag] for tag in TAGS[:n_metrics]}


def write_run(folder: Path, fmt: str, config: dict[str, float | int], series: dict[str, np.ndarray]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    n = len(next(iter(series.values())))
    tags = list(series)
    if fmt == "jsonl":
        with open(folder / "metrics.jsonl", "w") as fh:
            for s in range(n):
                fh.write(json.dumps({"step": s, **{k: float(series[k][s]) for k in tags}}) + "\n")
        (folder / "config.json").write_text(json.dumps(config))
    elif fmt == "trainer_state":
        history = [{**{k: float(series[k][s]) for k in tags}, "step": s} for s in range(n)]
        doc = {**config, "global_step": n - 1, "log_history": history}
        (folder / "trainer_state.json").write_text(json.dumps(doc, sort_keys=True) + "\n")
    elif fmt == "tensorboard":
        with EventFileWriter(folder / f"events.out.tfevents.{int(BASE_WALL_TIME)}.sweep.0") as w:
            w.write(event(wall_time=BASE_WALL_TIME, values=[hparams_session_start(dict(config))]))
            for s in range(n):
                w.write(event(wall_time=BASE_WALL_TIME + s, step=s, values=[simple_value(k, float(series[k][s])) for k in tags]))
    else:
        raise ValueError(f"unknown format {fmt!r}")
    return folder


def write_sweep(
    root: Path,
    *,
    kl_coefs: Sequence[float] = (0.02, 0.05, 0.2, 0.5),
    seeds: Sequence[int] = (1, 2, 3),
    n_steps: int = 200,
    n_metrics: int = 20,
    blowup_below: float = 0.1,
    formats: Sequence[str] = FORMATS,
    limit: int | None = None,
) -> list[Path]:
    """Write one run per (kl_coef, seed) under ``root`` (at most ``limit``); the run folders."""
    root.mkdir(parents=True, exist_ok=True)
    out = []
    k = 0
    for seed in seeds:
        for coef in kl_coefs:
            if limit is not None and k >= limit:
                return out
            folder = root / f"kl{coef:g}_seed{seed}"
            if not folder.exists():
                config = {"kl_coef": coef, "seed": seed, "learning_rate": 1.41e-5}
                write_run(folder, formats[k % len(formats)], config, curves(coef, seed, n_steps, n_metrics, blowup_below))
            out.append(folder)
            k += 1
    return out


def random_search(n: int, seed: int = 0) -> tuple[dict[str, dict[str, object]], dict[str, dict[str, bool]]]:
    """A random search's attribution input (no files): ``n`` trials with a log-uniform learning
    rate and a uniform KL coefficient (a distinct value per trial, so every gap is a candidate
    split), a batch size and an optimiser; trials fail mostly at high learning rates (80 % above
    3e-4, 10 % elsewhere), KL blows up at low coefficients among the failed ones, and healthy
    trials at tiny learning rates stagnate.  Returns ``(params, outcomes)`` as
    :func:`ppo_doctor.sweep.attribution.attribute` takes them."""
    import random

    rng = random.Random(seed)
    params: dict[str, dict[str, object]] = {}
    outcomes: dict[str, dict[str, bool]] = {"unhealthy": {}, "kl_blowup": {}, "stagnation": {}}
    for i in range(n):
        run = f"trial{i:05d}"
        lr, kl = 10 ** rng.uniform(-6, -3), rng.uniform(0.0, 0.5)
        params[run] = {"learning_rate": lr, "kl_coef": kl, "batch_size": rng.choice([8, 16, 32, 64]), "optimizer": rng.choice(["adam", "sgd", "adamw"])}
        bad = (lr > 3e-4 and rng.random() < 0.8) or rng.random() < 0.1
        outcomes["unhealthy"][run] = bad
        outcomes["kl_blowup"][run] = bad and kl < 0.05
        outcomes["stagnation"][run] = not bad and lr < 3e-6
    return params, outcomes
