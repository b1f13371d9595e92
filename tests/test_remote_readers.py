"""Every reader through every storage the docs name, with and without range support (issue 28).

Servers on 127.0.0.1 only, started and stopped here: Python's ``http.server`` (which refuses
byte ranges: fsspec then raised "The HTTP server doesn't appear to support range requests" on
every CSV log), the same server answering ranges, moto's S3 server mode, and ``memory://``.
A tree read through any of them gives the report it gives from disk, run for run; a run one of
whose logs cannot be read is never reported as read in full, and ``check`` exits 2 for it.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pandas as pd
import pytest
from cli_invoke import run_cli

import hostile_inputs as h
from moto_s3 import moto_s3
import ppo_doctor

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"


class _PlainHandler(http.server.SimpleHTTPRequestHandler):
    """``python -m http.server``: whole files only, a Range header is ignored."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


class _RangeHandler(_PlainHandler):
    """The same server answering ``Range: bytes=a-b`` with 206 Partial Content."""

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        match = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        path = self.translate_path(self.path)
        if not match or not os.path.isfile(path):
            return super().do_GET()
        data = Path(path).read_bytes()
        start = int(match[1])
        end = min(int(match[2]) if match[2] else len(data) - 1, len(data) - 1)
        if start >= len(data):
            self.send_response(416)
            self.end_headers()
            return None
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        self.wfile.write(data[start : end + 1])
        return None


class _FailingHandler(_PlainHandler):
    """Lists and announces every file, but answers 500 when a ``progress.csv`` is fetched."""

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        if self.path.endswith("/progress.csv"):
            self.send_error(500, "storage backend failure")
            return None
        return super().do_GET()


@pytest.fixture(scope="module")
def serve() -> Iterator[Callable[[Path, type], str]]:
    """``serve(folder, handler)``: the URL of ``folder`` served on 127.0.0.1 until the module ends."""
    servers: list[tuple[http.server.ThreadingHTTPServer, threading.Thread]] = []

    def start(folder: Path, handler: type) -> str:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(folder)))
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        servers.append((server, thread))
        return f"http://127.0.0.1:{server.server_port}"

    yield start
    for server, thread in servers:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="module")
def s3() -> Iterator[Callable[[Path, str], str]]:
    """``s3(folder, bucket)``: ``folder`` uploaded to moto's S3 server, its ``s3://`` URL."""
    with moto_s3() as fs:

        def upload(folder: Path, bucket: str) -> str:
            fs.mkdir(bucket)
            fs.put(str(folder), f"{bucket}/tree", recursive=True)
            fs.invalidate_cache()
            return f"s3://{bucket}/tree"

        yield upload


def to_memory(folder: Path, name: str) -> str:
    import fsspec

    fs = fsspec.filesystem("memory")
    for parent, _, files in os.walk(folder):
        for f in files:
            path = Path(parent) / f
            if path.is_file() and not path.is_symlink():
                fs.pipe(f"/{name}/" + path.relative_to(folder).as_posix(), path.read_bytes())
    return f"memory://{name}"


def run_for_run(doc: dict[str, Any]) -> dict[str, tuple]:
    """What a report says of each run, without where it was read from."""
    return {
        r["run"]: (
            r["verdict"], r["verdict_reason"], r["symptoms"], r["points"], r["format"], r["step_range"],
            [(f["code"], f["metric"], f["severity"], f["start_step"], f["end_step"]) for f in r["findings"]],
        )
        for r in doc["runs"]
    }


def report_json(path: str) -> dict[str, Any]:
    result = run_cli(["report", path, "--isolated", "--format", "json", "-q"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def same_report(local: dict[str, Any], remote: dict[str, Any]) -> None:
    assert len(remote["runs"]) == len(local["runs"])
    assert run_for_run(remote) == run_for_run(local)
    assert sorted(e["message"] for e in remote["errors"]) == sorted(e["message"] for e in local["errors"])


# -- a generated tree: every CSV-like reader, and TensorBoard beside a CSV ----------------------------------


def _sb3_progress(n: int) -> str:
    steps = np.arange(1, n + 1) * 2048
    df = pd.DataFrame(
        {
            "rollout/ep_rew_mean": np.linspace(-200, 150, n),
            "train/approx_kl": np.full(n, 0.012),
            "train/clip_fraction": np.full(n, 0.11),
            "train/entropy_loss": -np.linspace(1.4, 0.9, n),
            "train/value_loss": np.linspace(30, 5, n),
            "train/learning_rate": np.full(n, 3e-4),
            "time/total_timesteps": steps,
            "time/iterations": np.arange(1, n + 1),
        }
    )
    return df.to_csv(index=False)


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("readers")
    (root / "sb3_ppo_1").mkdir()
    (root / "sb3_ppo_1" / "progress.csv").write_text(_sb3_progress(60))  # an SB3 run: progress.csv alone
    both = root / "tb_and_csv"  # TensorBoard beside a CSV: the run is both halves
    both.mkdir()
    h.tensorboard(40, tags=("loss", "objective/kl")).write(both / "events.out.tfevents.1.host")
    (both / "progress.csv").write_text(_sb3_progress(40))
    wandb = root / "wandb_export"
    wandb.mkdir()
    history = pd.DataFrame({"_step": np.arange(50), "train/reward": np.linspace(0, 1, 50), "train/kl": np.full(50, 0.05), "_runtime": np.arange(50) * 2.0})
    history.to_csv(wandb / "run-abc-history.csv", index=False)
    parquet = root / "wandb_parquet"
    parquet.mkdir()
    history.to_parquet(parquet / "run-def-history.parquet")
    for folder, written, name in (("jsonl_run", h.jsonl(30), "metrics.jsonl"), ("hf_run", h.trainer_state(30), "trainer_state.json")):
        (root / folder).mkdir()
        written.write(root / folder / name)
    (root / "name with spaces & 100%!").mkdir()  # names an index page percent-encodes
    (root / "name with spaces & 100%!" / "progress.csv").write_text(_sb3_progress(20))
    return root


@pytest.fixture(scope="module")
def local(tree) -> dict[str, Any]:
    doc = report_json(str(tree))
    assert not doc["errors"] and len(doc["runs"]) == 7
    return doc


def test_plain_http_server_without_ranges(tree, local, serve):
    same_report(local, report_json(serve(tree, _PlainHandler)))


def test_http_server_with_ranges(tree, local, serve):
    same_report(local, report_json(serve(tree, _RangeHandler)))


def test_s3_server(tree, local, s3):
    same_report(local, report_json(s3(tree, "readers")))


def test_memory_filesystem(tree, local):
    same_report(local, report_json(to_memory(tree, "ppo-doctor-readers")))


def test_a_run_with_an_unreadable_log_is_not_reported_as_read_in_full(tree, serve):
    """The TensorBoard half of ``tb_and_csv`` reads, its CSV half fails: the run is reported from
    what was read, never healthy, and ``check`` exits 2 naming the file (it exited 0)."""
    url = serve(tree, _FailingHandler)
    result = run_cli(["check", url, "--isolated", "--format", "json", "--fail-on", "never"])
    assert result.exit_code == 2, result.output
    doc = json.loads(result.stdout)
    runs = {r["run"]: r for r in doc["runs"]}
    part = runs["tb_and_csv"]
    assert part["format"] == "tensorboard" and part["verdict"] != "healthy"
    assert f"not read in full: {url}/tb_and_csv/progress.csv: " in part["verdict_reason"]
    assert "sb3_ppo_1" not in runs  # nothing of it could be read: no run, an error
    assert {e["path"] for e in doc["errors"]} >= {f"{url}/tb_and_csv/progress.csv", f"{url}/sb3_ppo_1/progress.csv"}
    assert result.stderr.splitlines()[-1].startswith(f"ppo-doctor: exit 2: not read: {url}/")
    assert "Traceback" not in result.output


def test_a_local_run_with_an_unreadable_log(tmp_path):
    """The same on disk: a JSONL log beside a trainer_state.json cut short."""
    h.jsonl(30).write(tmp_path / "metrics.jsonl")
    (tmp_path / "trainer_state.json").write_bytes(h.trainer_state(30).data[:40])
    rep = ppo_doctor.analyze(str(tmp_path))
    (rr,) = rep.runs
    assert f"; not read in full: {tmp_path / 'trainer_state.json'} at byte 40: not valid JSON" in rr.verdict_reason
    check = run_cli(["check", str(tmp_path), "--isolated"])
    assert check.exit_code == 2


def test_what_was_read_is_never_called_healthy():
    from types import SimpleNamespace

    from ppo_doctor.analyze import not_read_in_full

    partial = SimpleNamespace(unread=["logs/progress.csv: malformed CSV", "logs/b.csv: empty file"])
    assert not_read_in_full(partial, "healthy", "") == ("unknown", "not read in full: logs/progress.csv: malformed CSV (and 1 more)")
    assert not_read_in_full(partial, "unhealthy", "PD101") == ("unhealthy", "PD101; not read in full: logs/progress.csv: malformed CSV (and 1 more)")
    assert not_read_in_full(SimpleNamespace(unread=[]), "healthy", "") == ("healthy", "")


def test_a_stream_is_bounded_by_the_size_announced(tree, serve):
    """Without ranges a file is streamed once into a temporary copy that stops at the size the
    server announced, as a local read stops at the size the file had when it was opened."""
    from ppo_doctor.ingest.storage import as_path, open_binary, size_of

    url = serve(tree, _PlainHandler)
    with open_binary(as_path(f"{url}/sb3_ppo_1/progress.csv")) as fh:
        size = size_of(fh)
        fh.seek(size - 1)
        assert fh.read(1) == b"\n"  # a read past byte 0: refused by the server, read from the copy
        fh.seek(0)
        head = fh.readline(10)  # readline with a size, as io files take
        assert head == b"rollout/ep" and len(fh.read()) == size - 10


# -- the shared corpus and real runs, run for run -----------------------------------------------------------


@pytest.fixture(scope="module", params=["corpus", "realruns"])
def shared_tree(request) -> tuple[Path, dict[str, Any]]:
    root = SHARED / request.param
    if not root.is_dir():
        pytest.skip(f"{root} absent")
    return root, report_json(str(root))


@pytest.mark.slow  # each storage reads the whole tree (~3-5 s a storage and tree)
@pytest.mark.corpus
@pytest.mark.parametrize("storage", ["http", "s3", "memory"])
def test_shared_trees_read_remotely_give_the_disk_report(shared_tree, storage, serve, s3):
    root, local = shared_tree
    if storage == "http":
        url = serve(root, _PlainHandler)
    elif storage == "s3":
        url = s3(root, f"shared-{root.name}")
    else:
        url = to_memory(root, f"ppo-doctor-shared-{root.name}")
    same_report(local, report_json(url))
