"""Shared driver of the reader fuzz targets (``tests/fuzz/fuzz_<reader>.py``).

Each target hands :func:`fuzz` a reader's format name (its ``NAME``), the file name discovery would give it,
and seed files from ``tests/hostile_inputs.py``.  Every input the fuzzer makes is written to
that file name and read; a reader may return runs or raise a ``PPODoctorError`` subclass,
anything else escaping is a crash that libFuzzer reports (with the input saved as
``crash-<sha1>`` under ``-artifact_prefix``).

Run a target by hand (atheris is the optional ``[fuzz]`` extra)::

    python tests/fuzz/fuzz_jsonl.py -atheris_runs=10000
    python tests/fuzz/fuzz_tensorboard.py -max_total_time=600 corpus_dir/

When no corpus folder is given, the seeds are written to a temporary one first, so the
fuzzer mutates valid logs instead of starting from empty input.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Callable

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: hostile_inputs

with atheris.instrument_imports(include=["ppo_doctor"]):
    from ppo_doctor.errors import PPODoctorError
    import ppo_doctor.ingest  # instrumented before the reader modules load


def fuzz(reader: str, file_name: str, seeds: list[bytes], write: Callable[[Path, bytes], Path] | None = None) -> None:
    """Fuzz the ``read`` of the reader whose NAME is ``reader`` on files named ``file_name``.

    ``write(folder, data)`` builds the reader's input from the fuzzer's bytes and returns the
    path to read (default: ``data`` written to ``folder/file_name``).
    """
    with atheris.instrument_imports(include=["ppo_doctor"]):
        module = ppo_doctor.ingest.reader_for(reader)
    work = Path(tempfile.mkdtemp(prefix=f"fuzz-{reader}-"))

    def default_write(folder: Path, data: bytes) -> Path:
        path = folder / file_name
        path.write_bytes(data)
        return path

    build = write or default_write

    def one_input(data: bytes) -> None:
        path = build(work, data)
        try:
            module.read(path)
        except PPODoctorError:
            pass

    argv = list(sys.argv)
    if not any(not a.startswith("-") for a in argv[1:]):
        corpus = Path(tempfile.mkdtemp(prefix=f"fuzz-{reader}-seeds-"))
        for k, seed in enumerate(seeds):
            (corpus / f"seed{k}").write_bytes(seed)
        argv.append(str(corpus))
    atheris.Setup(argv, one_input)
    atheris.Fuzz()
