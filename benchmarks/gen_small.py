"""One small run in each of four formats, as a CI step or a pre-commit hook checks it (issue 26).

:func:`write_small_logs` writes, into a folder it is given, one run folder per format and returns
the path to hand to ``ppo-doctor check`` and ``rl-doctor diagnose``: a TRL ``GRPOTrainer``
``trainer_state.json`` (200 steps, its metric names), a JSON-lines log of TRL PPO names, a
TensorBoard event file of the same names (one ``simple_value`` Event per scalar, as torch's
``SummaryWriter`` writes) and a Stable-Baselines3 ``progress.csv`` (its columns, the first row
before any update with empty ``train/*`` cells).  Same arguments, same bytes (seeded).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchmarks.gen_inputs import BASE_WALL_TIME, EventFileWriter, event, simple_value

GRPO_KEYS = (
    "loss", "grad_norm", "learning_rate", "reward", "reward_std", "frac_reward_zero_std", "kl", "entropy",
    "completions/mean_length", "completions/clipped_ratio", "clip_ratio/region_mean", "rewards/accuracy_reward/mean",
)  # fmt: skip
PPO_KEYS = (
    "env/reward_mean", "env/reward_std", "objective/kl", "objective/kl_coef", "objective/entropy", "ppo/loss/policy",
    "ppo/loss/value", "ppo/policy/approxkl", "ppo/policy/clipfrac", "ppo/val/var_explained", "ppo/learning_rate",
    "tokens/responses_len_mean",
)  # fmt: skip
SB3_KEYS = (
    "rollout/ep_rew_mean", "rollout/ep_len_mean", "time/fps", "time/iterations", "time/total_timesteps",
    "train/approx_kl", "train/clip_fraction", "train/clip_range", "train/entropy_loss", "train/explained_variance",
    "train/learning_rate", "train/loss", "train/n_updates", "train/policy_gradient_loss", "train/value_loss",
)  # fmt: skip
FORMATS = ("trainer_state", "jsonl", "tensorboard", "sb3_csv")


def _walks(n_steps: int, n_keys: int, seed: int) -> np.ndarray:
    """Positive random walks, (n_steps, n_keys), without NaN."""
    rng = np.random.default_rng(seed)
    return np.abs(0.5 + np.cumsum(rng.normal(0.0, 0.02, size=(n_steps, n_keys)), axis=0))


def trainer_state(folder: Path, n_steps: int = 200, seed: int = 0) -> Path:
    values = _walks(n_steps, len(GRPO_KEYS), seed)
    history = [{"epoch": round(i / n_steps, 4), "step": i + 1, **{k: float(values[i, j]) for j, k in enumerate(GRPO_KEYS)}} for i in range(n_steps)]
    state = {"best_metric": None, "epoch": 1.0, "global_step": n_steps, "log_history": history, "logging_steps": 1, "max_steps": n_steps, "train_batch_size": 8}
    path = folder / "trainer_state.json"
    path.write_text(json.dumps(state, indent=2, sort_keys=True))  # as transformers.Trainer saves it
    return path


def jsonl(folder: Path, n_steps: int = 200, seed: int = 1) -> Path:
    values = _walks(n_steps, len(PPO_KEYS), seed)
    path = folder / "metrics.jsonl"
    path.write_text("".join(json.dumps({"step": i, **{k: float(values[i, j]) for j, k in enumerate(PPO_KEYS)}}) + "\n" for i in range(n_steps)))
    return path


def tensorboard(folder: Path, n_steps: int = 200, seed: int = 2) -> Path:
    values = _walks(n_steps, len(PPO_KEYS), seed)
    with EventFileWriter(folder / f"events.out.tfevents.{int(BASE_WALL_TIME)}.small") as writer:
        for i in range(n_steps):
            for j, tag in enumerate(PPO_KEYS):
                writer.write(event(wall_time=BASE_WALL_TIME + i, step=i, values=[simple_value(tag, float(values[i, j]))]))
    return folder  # TensorBoard runs are folders, for both tools


def sb3_csv(folder: Path, n_steps: int = 200, seed: int = 3) -> Path:
    values = _walks(n_steps, len(SB3_KEYS), seed)
    rows = [",".join(SB3_KEYS)]
    for i in range(n_steps):
        cells = {k: repr(float(values[i, j])) for j, k in enumerate(SB3_KEYS)}
        cells.update({"time/iterations": str(i + 1), "time/total_timesteps": str(2048 * (i + 1)), "train/n_updates": str(10 * i)})
        if i == 0:  # SB3 logs the first rollout before any update
            cells.update({k: "" for k in SB3_KEYS if k.startswith("train/")})
        rows.append(",".join(cells[k] for k in SB3_KEYS))
    path = folder / "progress.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def write_small_logs(out_dir: Path) -> dict[str, Path]:
    """Format name -> the path of its small run (a file, or the folder of the event file)."""
    writers = {"trainer_state": trainer_state, "jsonl": jsonl, "tensorboard": tensorboard, "sb3_csv": sb3_csv}
    out = {}
    for name in FORMATS:
        folder = Path(out_dir) / name
        folder.mkdir(parents=True, exist_ok=True)
        out[name] = writers[name](folder)
    return out
