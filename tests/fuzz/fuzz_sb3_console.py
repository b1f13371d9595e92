"""Fuzz target: the Stable-Baselines3 console-table reader (``python tests/fuzz/fuzz_sb3_console.py -atheris_runs=10000``)."""

import harness
import hostile_inputs as h

if __name__ == "__main__":
    other = b"Using cpu device\n-------------------------\n| eval/             |     |\n|    mean_reward    | nan |\n|    total_timesteps | 2 |\n"
    harness.fuzz("sb3_console", "train.log", [h.sb3_console(6).data, other])
