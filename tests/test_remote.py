"""Remote storage through fsspec against real servers on 127.0.0.1, started and stopped here: a
local ``http.server`` and moto's S3 server mode (``moto.server.ThreadedMotoServer``, the S3
emulator s3fs tests with).  The sweep (and ``check``) of a tree served remotely gives the report
of the same tree read from disk; discovery lists through the filesystem and readers fetch ranges."""

from __future__ import annotations

import functools
import http.server
import json
import os
import threading
from pathlib import Path

import pytest
from cli_invoke import run_cli

from benchmarks.gen_sweep import write_sweep
from moto_s3 import moto_s3
from ppo_doctor.ingest.storage import RemotePath, as_path, is_url
from ppo_doctor.sweep import sweep

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")


def _same(doc: dict) -> tuple:
    """A sweep report without the paths (they name where the tree was read from)."""
    rows = [{k: v for k, v in r.items() if k != "path"} for r in doc["runs"]]
    return rows, doc["attribution"], [Path(t).name for t in doc["tables"]], [e["message"] for e in doc["errors"]]


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("remote")
    write_sweep(root, n_steps=80, n_metrics=6)  # JSONL, trainer_state and TensorBoard runs
    # a sweep table (a run name column) joined to the runs by their folder names
    lines = ["run,kl"] + [f"kl{c:g}_seed{s},{c:g}" for s in (1, 2, 3) for c in (0.02, 0.05, 0.2, 0.5)]
    (root / "sweep.csv").write_text("\n".join(lines) + "\n")
    return root


@pytest.fixture(scope="module")
def local_report(tree) -> dict:
    return sweep(tree).to_dict()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


@pytest.fixture(scope="module")
def http_url(tree):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(tree)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture(scope="module")
def s3_url(tree):
    with moto_s3() as fs:
        fs.mkdir("logs")
        fs.put(str(tree), "logs/sweep", recursive=True)
        fs.clear_instance_cache()
        yield "s3://logs/sweep"


def test_urls_become_remote_paths():
    assert is_url("s3://bucket/x") and is_url("hf://datasets/a/b") and not is_url("C://x") and not is_url("logs/run")
    p = as_path("s3://bucket/sweep/run1/metrics.jsonl")
    assert isinstance(p, RemotePath) and str(p.parent) == "s3://bucket/sweep/run1" and p.name == "metrics.jsonl"
    assert p.relative_to(as_path("s3://bucket/sweep")).as_posix() == "run1/metrics.jsonl"
    assert as_path("file:///tmp/x") == Path("/tmp/x")
    with pytest.raises(TypeError, match="remote path"):
        open(p, "rb")  # noqa: SIM115 - a built-in open never reads a local file of that name


def test_sweep_over_http_gives_the_local_report(http_url, local_report):
    remote = sweep(http_url).to_dict()
    assert _same(remote) == _same(local_report)
    assert remote["attribution"]["splits"][0]["label"] == "kl_coef <= 0.05: 6/6 runs unhealthy; >= 0.2: 0/6"
    assert remote["attribution"]["splits"][0]["same_values"] == ["kl"]  # the table's column
    assert remote["runs"][0]["path"].startswith(http_url.rstrip("/"))
    assert remote["tables"] == [http_url + "sweep.csv"]


def test_sweep_over_s3_gives_the_local_report(s3_url, local_report):
    remote = sweep(s3_url).to_dict()
    assert _same(remote) == _same(local_report)
    assert remote["runs"][0]["path"] == s3_url + "/kl0.02_seed1"


def test_check_command_reads_a_url(http_url, tree):
    remote = run_cli(["check", http_url + "kl0.02_seed1", "--isolated", "--format", "json"])
    local = run_cli(["check", str(tree / "kl0.02_seed1"), "--isolated", "--format", "json"])
    assert remote.exit_code == local.exit_code == 1, remote.output
    strip = lambda doc: [(r["verdict"], r["symptoms"], [f["code"] for f in r["findings"]], r["config"]) for r in doc["runs"]]  # noqa: E731
    assert strip(json.loads(remote.stdout)) == strip(json.loads(local.stdout))


def test_memory_filesystem_and_missing_urls(tree, local_report):
    import fsspec

    fs = fsspec.filesystem("memory")
    for folder, _, files in os.walk(tree):
        for name in files:
            path = Path(folder) / name
            fs.pipe("/ppo-doctor-test/" + path.relative_to(tree).as_posix(), path.read_bytes())
    try:
        assert _same(sweep("memory://ppo-doctor-test").to_dict()) == _same(local_report)
        missing = sweep("memory://ppo-doctor-test-absent")
        assert missing.rows == [] and missing.errors[0].message == "no such file or directory"
    finally:
        fs.rm("/ppo-doctor-test", recursive=True)


CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"


@pytest.mark.slow  # every corpus folder twice (~20-40 s)
@pytest.mark.corpus
@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus absent")
def test_every_corpus_folder_reads_the_same_through_fsspec():
    """All formats the corpus holds (TensorBoard, .wandb, CSV, JSON/JSONL, trainer_state ...) read
    through the fsspec layer (memory://) give the report they give from disk."""
    import fsspec

    import ppo_doctor

    fs = fsspec.filesystem("memory")

    def key(doc: dict) -> list:
        return [(r["run"], r["verdict"], r["symptoms"], r["points"], [f["code"] for f in r["findings"]]) for r in doc["runs"]]

    for root in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        base = f"/ppo-doctor-corpus/{root.name}/"
        for folder, _, files in os.walk(root):
            for name in files:
                path = Path(folder) / name
                if path.is_file() and not path.is_symlink():
                    fs.pipe(base + path.relative_to(root).as_posix(), path.read_bytes())
        try:
            local = ppo_doctor.analyze(str(root)).to_dict()
            assert key(ppo_doctor.analyze("memory:/" + base.rstrip("/")).to_dict()) == key(local), root.name
        finally:
            fs.rm(base, recursive=True)
