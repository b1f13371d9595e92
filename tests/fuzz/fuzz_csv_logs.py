"""Fuzz target: the CSV log reader (SB3, baselines, Lightning) (``python tests/fuzz/fuzz_csv_logs.py -atheris_runs=10000``)."""

import harness
import hostile_inputs as h

if __name__ == "__main__":
    sb3 = b"time/total_timesteps,train/loss\n,\n2048,0.5\n4096,nan\ntime/total_timesteps,train/loss,train/kl\n6144,0.4,0.01\n"
    harness.fuzz("csv_logs", "progress.csv", [h.csv(12).data, h.csv(5, delim=";").data, sb3])
