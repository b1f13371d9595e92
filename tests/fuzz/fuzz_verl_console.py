"""Fuzz target: the veRL console-log reader (``python tests/fuzz/fuzz_verl_console.py -atheris_runs=10000``)."""

import harness
import hostile_inputs as h

if __name__ == "__main__":
    ray = b"\x1b[36m(TaskRunner pid=1)\x1b[0m step:3 - actor/pg_loss:np.float64(0.5) - val-core/x/reward/mean@1:0.8\n[prompt] q\n[response] a\n[score] 1.0\n"
    harness.fuzz("verl_console", "train.log", [h.verl_console(12).data, ray])
