"""Fuzz target: the MLflow file-store reader (``python tests/fuzz/fuzz_mlflow.py -atheris_runs=10000``).

The first two bytes of an input give the length of the run's ``meta.yaml``; the rest is its
``metrics/loss`` file.
"""

import shutil
import tempfile
from pathlib import Path

import harness
import hostile_inputs as h

TEMPLATE = Path(tempfile.mkdtemp(prefix="fuzz-mlflow-template-"))
RUN, WRITTEN = h.mlflow_run(TEMPLATE, n=8)


def write(folder: Path, data: bytes) -> Path:
    run = folder / "mlruns" / "0" / RUN.name
    if not run.exists():
        shutil.copytree(TEMPLATE / "mlruns", folder / "mlruns")
    n = int.from_bytes(data[:2], "little")
    (run / "meta.yaml").write_bytes(data[2 : 2 + n])
    (run / "metrics" / "loss").write_bytes(data[2 + n :])
    return run


if __name__ == "__main__":
    meta = (RUN / "meta.yaml").read_bytes()
    harness.fuzz("mlflow", "", [len(meta).to_bytes(2, "little") + meta + WRITTEN.data], write=write)
