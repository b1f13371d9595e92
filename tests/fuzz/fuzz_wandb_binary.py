"""Fuzz target: the W&B ``.wandb`` transaction-log reader (``python tests/fuzz/fuzz_wandb_binary.py -atheris_runs=10000``)."""

import harness
import hostile_inputs as h

if __name__ == "__main__":
    harness.fuzz("wandb_binary", "run-abc123.wandb", [h.wandb(12).data, h.wandb(2, pad=40_000).data, h.wandb(3, values=[float("nan"), 1e39, -1.0]).data])
