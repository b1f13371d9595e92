"""Fuzz target: the HF Trainer console-log reader (``python tests/fuzz/fuzz_hf_console.py -atheris_runs=10000``)."""

import harness
import hostile_inputs as h

if __name__ == "__main__":
    bar = b"\r 42%|####      | 5/12 [00:02<00:05,  1.23it/s]\x1b[A\r{'loss': '2.683', 'grad_norm': 'nan', 'epoch': '0.625'}\n"
    printed = b"{'loss': np.float64(0.5), 'kl': -inf, 'epoch': 1.0}\n{'eval_loss': 2.5, 'epoch': 1.0}\n{'train_runtime': 3.2, 'epoch': 1.0}\n"
    harness.fuzz("hf_console", "train.log", [h.hf_console(12).data, bar + printed])
