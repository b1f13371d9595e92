"""Fuzz target: the HF ``trainer_state.json`` reader (``python tests/fuzz/fuzz_trainer_state.py -atheris_runs=10000``)."""

import json

import harness
import hostile_inputs as h

# train, eval and summary entries in one indented state: the pyarrow path's classification
MIXED = json.dumps(
    {
        "global_step": 2,
        "log_history": [
            {"loss": 0.5, "step": 1},
            {"eval_loss": float("nan"), "step": 1},
            {"grad_norm": float("inf"), "loss": 0.4, "step": 2},
            {"step": 2, "total_flos": 123, "train_runtime": 1.5},
        ],
    },
    indent=2,
).encode()

if __name__ == "__main__":
    seeds = [h.trainer_state(8).data, b'[{"loss": NaN, "step": 1}, {"eval_loss": 1.0, "step": 1}]', MIXED]
    harness.fuzz("trainer_state", "trainer_state.json", seeds)
