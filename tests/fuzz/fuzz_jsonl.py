"""Fuzz target: the JSON-lines reader (``python tests/fuzz/fuzz_jsonl.py -atheris_runs=10000``)."""

import harness
import hostile_inputs as h

if __name__ == "__main__":
    verl = b'{"step": 1, "data": {"actor/kl": null, "actor/pg_loss": 0.5}}\n{"step": 2, "data": {"actor/kl": 0.1, "actor/pg_loss": NaN}}\n'
    doc = b'{"kl_curve": [0.1, 0.2, Infinity], "beta": 0.1}'
    harness.fuzz("jsonl", "metrics.jsonl", [h.jsonl(12).data, verl, doc, b'{"step": 0, "response": "<b>x</b>", "prompt": "q"}\n'])
