"""Issue 28, "the new surfaces": a Dask cluster with no worker (what a nanny that gives up leaves)
fails within ``dask-timeout`` seconds with a clear error and exit 2, instead of holding a sweep
forever."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from cli_invoke import run_cli
from ppo_doctor.config import resolve
from ppo_doctor.errors import ConfigError
from ppo_doctor.exits import EXIT_ERROR

distributed = pytest.importorskip("distributed")

SAMPLE = Path(__file__).resolve().parents[1] / "sample_logs"


@pytest.fixture(scope="module")
def empty_cluster():
    with distributed.LocalCluster(n_workers=0, host="127.0.0.1", dashboard_address=None, protocol="tcp") as cluster:
        yield cluster.scheduler_address


@pytest.mark.parametrize("command", ["sweep", "check"])
def test_cluster_without_workers_fails_within_the_timeout(empty_cluster, tmp_path, command):
    shutil.copytree(SAMPLE / "healthy-s1", tmp_path / "run")
    t0 = time.monotonic()
    result = run_cli([command, str(tmp_path / "run"), "--isolated", "--dask", empty_cluster, "--dask-timeout", "1.5"])
    took = time.monotonic() - t0
    assert result.exit_code == EXIT_ERROR, result.output
    assert "has no worker after 1.5 s (dask-timeout)" in result.output
    assert took < 30


def test_dask_timeout_config_key(tmp_path):
    (tmp_path / "ppo-doctor.toml").write_text("dask-timeout = 2.5\n", encoding="utf-8")
    assert resolve(config_file=tmp_path / "ppo-doctor.toml").dask_timeout == 2.5
    assert resolve(isolated=True).dask_timeout == 60.0
    (tmp_path / "ppo-doctor.toml").write_text("dask-timeout = -1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="dask_timeout"):
        resolve(config_file=tmp_path / "ppo-doctor.toml")


def test_check_does_not_pass_on_a_run_whose_worker_died():
    from ppo_doctor.cli.report import exit_line
    from ppo_doctor.frame import ReadIssue
    from ppo_doctor.results import Report
    from report_builders import healthy_report

    lost = ReadIssue(path="runs/b", message="worker lost while reading this run (KilledWorker: ...)")
    code, line = exit_line(Report(runs=[healthy_report()], errors=[lost]), "error")
    assert code == EXIT_ERROR and "not read: runs/b" in line
