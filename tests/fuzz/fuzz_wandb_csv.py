"""Fuzz target: the W&B CSV export reader (history and panel exports) (``python tests/fuzz/fuzz_wandb_csv.py -atheris_runs=10000``)."""

import harness

if __name__ == "__main__":
    history = b"_step,_runtime,train/loss,train/kl\n0,1.5,0.9,0.01\n1,2.5,,0.02\n2,3.5,0.7,NaN\n"
    panel = b'Step,"run-a - train/loss","run-a - train/loss__MIN","run-a - train/loss__MAX"\n0,1.0,0.9,1.1\n10,0.8,0.7,0.9\n'
    harness.fuzz("wandb_csv", "wandb_export_2024-01-01T00_00_00.000+00_00.csv", [history, panel])
