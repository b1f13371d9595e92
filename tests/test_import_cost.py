"""What a one-file ``check``, ``--help`` and ``import ppo_doctor`` import (issue 26).

The most common call, one ``check`` of one small run in a CI step or a hook, must cost what
reading it costs: each case runs in a fresh interpreter, lists the top-level packages in
``sys.modules`` afterwards, and fails on any heavy one.  pandas, pyarrow, yaml, matplotlib,
fsspec and dask are for a DataFrame, a large or Parquet file, a YAML config, a plot, a URL or
a cluster (``ppo_doctor.lazy``); torch, transformers, TRL and scipy never belong to a check.
The timings themselves are in benchmarks/bench_check.py ("One small check" in RESULTS.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.gen_small import write_small_logs

ROOT = Path(__file__).resolve().parents[1]
HEAVY = frozenset({"pandas", "pyarrow", "yaml", "matplotlib", "fsspec", "dask", "distributed", "torch", "transformers", "trl", "scipy"})

_RUN_CLI = """
import runpy, sys
sys.argv = ["ppo-doctor", *sys.argv[1:]]
try:
    runpy.run_module("ppo_doctor.cli", run_name="__main__")
except SystemExit:
    pass
"""
# the top-level packages imported, or (_FULL_) every module by its full name
_LIST_AFTER_CLI = _RUN_CLI + 'sys.stderr.write("\\nMODULES=" + ",".join(sorted({m.split(".")[0] for m in sys.modules})) + "\\n")\n'
_FULL_LIST_AFTER_CLI = _RUN_CLI + 'sys.stderr.write("\\nMODULES=" + ",".join(sorted(sys.modules)) + "\\n")\n'


def _imported(code: str, *args: str) -> set[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    assert "MODULES=" in proc.stderr, proc.stderr[-2000:]
    return set(proc.stderr.rsplit("MODULES=", 1)[1].strip().split(","))


@pytest.fixture(scope="module")
def small_logs(tmp_path_factory) -> dict[str, Path]:
    return write_small_logs(tmp_path_factory.mktemp("small"))


@pytest.mark.parametrize("fmt", ["trainer_state", "jsonl", "tensorboard", "sb3_csv"])
def test_check_of_one_small_run_imports_nothing_heavy(small_logs, fmt):
    modules = _imported(_LIST_AFTER_CLI, "check", str(small_logs[fmt]), "--isolated")
    assert "ppo_doctor" in modules and "numpy" in modules  # it did run the analysis
    assert not modules & HEAVY, sorted(modules & HEAVY)


@pytest.mark.parametrize("fmt", ["trainer_state", "jsonl", "tensorboard", "sb3_csv"])
def test_check_of_one_small_run_does_not_import_numpy_ma(small_logs, fmt):
    """numpy's median, percentile, nanmedian and plain unique import ``numpy.ma`` on their first
    call (about 9 ms of a small check); the analysis takes them from ``detect.order_stats``."""
    modules = _imported(_FULL_LIST_AFTER_CLI, "check", str(small_logs[fmt]), "--isolated")
    assert "ppo_doctor.rules.pd101_kl_above_band" in modules  # it did run the rules
    assert "numpy.ma" not in modules


def test_check_and_report_of_the_sample_logs_do_not_import_numpy_ma():
    runs = [str(p) for p in sorted((ROOT / "sample_logs").iterdir()) if p.is_dir()]
    for command in (["check", *runs], ["report", str(ROOT / "sample_logs")]):
        modules = _imported(_FULL_LIST_AFTER_CLI, *command, "--isolated")
        assert "ppo_doctor.rules.pd101_kl_above_band" in modules, command
        assert "numpy.ma" not in modules, command


def test_check_of_the_sample_trainer_state_imports_nothing_heavy():
    modules = _imported(_LIST_AFTER_CLI, "check", str(ROOT / "sample_logs" / "lr-x100" / "trainer_state.json"))
    assert not modules & HEAVY, sorted(modules & HEAVY)


def test_check_imports_no_metadata_reader_comparison_or_toml_parser_it_does_not_use(small_logs):
    """Without a plugin installed, plugins are looked for without importlib.metadata (its import
    and its parse of every installed distribution cost a small check about 40 ms:
    :func:`ppo_doctor.plugins.entry_points`); ``compare`` and the config file's TOML parser
    (``--isolated``) are not imported by a ``check`` either."""
    from importlib.metadata import entry_points

    groups = ("ppo_doctor.rules", "ppo_doctor.readers", "ppo_doctor.formats")
    if any(entry_points(group=g) for g in groups):
        pytest.skip("a ppo_doctor plugin is installed here: importlib.metadata is then needed")
    modules = _imported(_FULL_LIST_AFTER_CLI, "check", str(small_logs["jsonl"]), "--isolated")
    assert "ppo_doctor.rules.pd101_kl_above_band" in modules  # it did load the rules and their plugins
    unused = {"importlib.metadata", "ppo_doctor.report.compare", "ppo_doctor.cli.compare", "tomllib", "concurrent.futures", "tempfile"}
    assert not modules & unused, sorted(modules & unused)


def test_help_imports_neither_numpy_nor_the_analyser():
    modules = _imported(_LIST_AFTER_CLI, "--help")
    assert not modules & (HEAVY | {"numpy"}), sorted(modules & (HEAVY | {"numpy"}))


def test_import_ppo_doctor_imports_nothing_heavy_and_its_names_still_work():
    code = (
        "import sys, ppo_doctor\n"
        "before = {m.split('.')[0] for m in sys.modules}\n"
        "assert callable(ppo_doctor.analyze) and ppo_doctor.Report.__name__ == 'Report'\n"
        "from ppo_doctor import RunFrame, load_runs\n"
        "sys.stderr.write('\\nMODULES=' + ','.join(sorted(before)) + '\\n')\n"
    )
    modules = _imported(code)
    assert not modules & (HEAVY | {"numpy"}), sorted(modules & (HEAVY | {"numpy"}))


def test_the_public_analyze_is_the_function_after_its_module_is_imported():
    """Importing the submodule ``ppo_doctor.analyze`` binds it on the package: the public name
    must still be the function, as when the package imported it eagerly."""
    code = (
        "import sys, ppo_doctor, ppo_doctor.sweep, ppo_doctor.analyze\n"
        "assert callable(ppo_doctor.analyze) and ppo_doctor.analyze.__name__ == 'analyze', ppo_doctor.analyze\n"
        "sys.stderr.write('\\nMODULES=ok\\n')\n"
    )
    assert _imported(code) == {"ok"}


def test_a_dataframe_still_analyses_and_pandas_comes_with_it():
    """The public API keeps its pandas side: analyze(DataFrame), RunFrame.df and series."""
    import numpy as np
    import pandas as pd

    import ppo_doctor

    df = pd.DataFrame({"_step": np.arange(50), "objective/kl": np.linspace(0.1, 0.2, 50)})
    report = ppo_doctor.analyze(df)
    frame = report.runs[0].run.frame
    assert isinstance(frame.df, pd.DataFrame) and len(frame.df) == 50
    assert isinstance(frame.series(frame.metrics[0]), pd.Series)


@pytest.mark.parametrize(("fmt", "reader"), [("jsonl", "ppo_doctor.ingest.readers.jsonl"), ("sb3_csv", "ppo_doctor.ingest.readers.csv_logs")])
def test_sniffing_a_text_log_imports_no_other_formats_decoders(small_logs, fmt, reader):
    """Formats are asked in priority order and TensorBoard and W&B come first: their sniffers
    (``ingest.SNIFFERS``) recognise a file without the decoders, and the formats after the one
    that claims the file are never imported.  A text log is turned away by its first bytes, before
    even the record framing of TensorBoard or W&B is imported."""
    modules = _imported(_FULL_LIST_AFTER_CLI, "check", str(small_logs[fmt]), "--isolated")
    assert reader in modules
    decoders = {
        "ppo_doctor.ingest.tensorboard.reader",
        "ppo_doctor.ingest.tensorboard.fastpath",
        "ppo_doctor.ingest.tensorboard.collect",
        "ppo_doctor.ingest.wandb.binary",
        "ppo_doctor.ingest.wandb.history",
        "ppo_doctor.ingest.readers.verl_console",
        "ppo_doctor.ingest.readers.deepspeed_chat_console",
        "ppo_doctor.ingest.wandb.csv",
        "ppo_doctor.ingest.tensorboard.tfrecord",
        "ppo_doctor.ingest.tensorboard.events",
        "ppo_doctor.ingest.wandb.framing",
    }
    assert not modules & decoders, sorted(modules & decoders)

