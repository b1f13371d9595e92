"""A training-log writer for the ``watch`` tests, run as a subprocess: ``python live_writer.py
FORMAT OUT_DIR {healthy,kl-blowup} STEPS SLEEP``.

Writes TRL-named PPO metrics step by step with the real writers (``torch.utils.tensorboard``'s
``SummaryWriter``, flushed every step; or a JSONL file flushed every line), sleeping ``SLEEP``
seconds between steps as a training would.  ``kl-blowup`` lets the KL to the reference run away
from step ``STEPS // 4`` on (tens of nats, as with kl_coef 0); ``healthy`` keeps it near 1 nat.
Prints ``done`` on stdout when the last step is written.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np


def metrics(step: int, steps: int, fault: bool, rng: np.random.Generator) -> dict[str, float]:
    t = step / steps
    kl = 0.5 + 0.5 * t + 0.05 * rng.normal()
    if fault and step >= steps // 4:
        kl += 2.0 * (step - steps // 4)  # runs away: +2 nats a step
    return {
        "objective/kl": kl,
        "objective/scores": 0.2 + 0.6 * t + 0.03 * rng.normal(),
        "objective/kl_coef": 0.05,
        "policy/entropy_avg": 1.6 + 0.02 * rng.normal(),
        "policy/approxkl_avg": 0.005 + 0.001 * abs(rng.normal()),
        "policy/clipfrac_avg": 0.05 + 0.01 * abs(rng.normal()),
        "loss/policy_avg": -0.01 + 0.005 * rng.normal(),
        "loss/value_avg": 0.1 * (1 - 0.5 * t) + 0.01 * abs(rng.normal()),
        "grad_norm": 1.0 + 0.1 * abs(rng.normal()),
        "lr": 1e-5,
    }


def main() -> None:
    fmt, out, kind, steps, sleep = sys.argv[1], Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    fault = kind == "kl-blowup"
    if fmt == "tensorboard":
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(log_dir=str(out))
        for step in range(1, steps + 1):
            for k, v in metrics(step, steps, fault, rng).items():
                writer.add_scalar(k, v, step)
            writer.flush()
            time.sleep(sleep)
        writer.close()
    else:
        with open(out / "metrics.jsonl", "w", encoding="utf-8") as fh:
            for step in range(1, steps + 1):
                fh.write(json.dumps({"step": step, **metrics(step, steps, fault, rng)}) + "\n")
                fh.flush()
                time.sleep(sleep)
    print("done", flush=True)


if __name__ == "__main__":
    main()
