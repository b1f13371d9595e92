"""Fuzz target: the HF ``trainer_state.json`` reader (``python tests/fuzz/fuzz_trainer_state.py -atheris_runs=10000``)."""

import harness
import hostile_inputs as h

if __name__ == "__main__":
    harness.fuzz("trainer_state", "trainer_state.json", [h.trainer_state(8).data, b'[{"loss": NaN, "step": 1}, {"eval_loss": 1.0, "step": 1}]'])
