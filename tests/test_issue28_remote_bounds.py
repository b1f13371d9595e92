"""Remote trees are walked with bounds (issue 28): a link loop served over HTTP is read once and
the walk ends, a stalled server fails within the request timeout with exit 2, and an index link
spelled as a percent-encoded dot segment never leaves the root.  Servers run on 127.0.0.1 only,
started here."""

from __future__ import annotations

import functools
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")

ROOT = Path(__file__).resolve().parent.parent


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


def _serve(handler):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _jsonl_run(folder: Path, n: int = 60) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [json.dumps({"step": i, "objective/kl": 0.1 + 0.01 * i, "env/reward_mean": 0.01 * i}) for i in range(n)]
    (folder / "metrics.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")


def _cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ppo_doctor.cli", *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )


def test_a_link_loop_served_over_http_is_read_once_and_the_walk_ends(tmp_path):
    _jsonl_run(tmp_path / "run")
    os.symlink("..", tmp_path / "run" / "up")  # run/up/run/up/... : http.server follows links
    server = _serve(functools.partial(_Quiet, directory=str(tmp_path)))
    try:
        t0 = time.monotonic()
        done = _cli("report", f"http://127.0.0.1:{server.server_port}/", "--format", "json")
        took = time.monotonic() - t0
    finally:
        server.shutdown()
    assert done.returncode in (0, 1), done.stderr
    doc = json.loads(done.stdout)
    assert [r["run"] for r in doc["runs"]] == ["run"]  # once, not once per lap of the loop
    assert any("link loop" in e["message"] for e in doc["errors"]), doc["errors"]
    assert took < 60


def test_a_stalled_server_fails_check_within_the_timeout(tmp_path):
    """A server that accepts the connection and never answers: ``check`` exits 2 naming the URL
    after PPO_DOCTOR_REMOTE_TIMEOUT seconds, instead of hanging."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(sock.accept()[0])  # and never a byte back
            except OSError:
                continue

    threading.Thread(target=accept, daemon=True).start()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/run/"
    try:
        t0 = time.monotonic()
        done = _cli("check", url, env={"PPO_DOCTOR_REMOTE_TIMEOUT": "2"}, timeout=90)
        took = time.monotonic() - t0
    finally:
        stop.set()
        for c in held:
            c.close()
        sock.close()
    assert done.returncode == 2, (done.returncode, done.stdout[-500:], done.stderr[-500:])
    assert "127.0.0.1" in done.stderr
    assert took < 45


class _DotSegments(_Quiet):
    """An index page whose links are dot segments in several spellings."""

    LINKS = ("%2e%2e/", "%2E%2E/", ".%2e/", "%252e%252e/", "..%5c", "run/")

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        if self.path.rstrip("/") in ("", "/root"):
            body = "".join(f'<a href="{h}">{h}</a>\n' for h in self.LINKS).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


def test_percent_encoded_dot_segments_never_leave_the_root(tmp_path):
    _jsonl_run(tmp_path / "root" / "run")
    _jsonl_run(tmp_path / "secret")  # beside the root: must never be read
    server = _serve(functools.partial(_DotSegments, directory=str(tmp_path)))
    try:
        done = _cli("report", f"http://127.0.0.1:{server.server_port}/root/", "--format", "json")
    finally:
        server.shutdown()
    assert done.returncode in (0, 1), done.stderr
    runs = [r["run"] for r in json.loads(done.stdout)["runs"]]
    assert runs == ["run"] and "secret" not in done.stdout


def _stalled_server():
    """A socket that accepts connections and never answers; (url, close)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(sock.accept()[0])
            except OSError:
                continue

    threading.Thread(target=accept, daemon=True).start()

    def close() -> None:
        stop.set()
        for c in held:
            c.close()
        sock.close()

    return f"http://127.0.0.1:{sock.getsockname()[1]}/run/", close


@pytest.mark.parametrize("how", ["flag", "config"])
def test_the_request_timeout_is_a_flag_and_a_config_key(tmp_path, how):
    url, close = _stalled_server()
    args = ["check", url]
    if how == "flag":
        args += ["--remote-timeout", "2"]
    else:
        (tmp_path / "ppo-doctor.toml").write_text("remote_timeout = 2\n", encoding="utf-8")
        args += ["--config", str(tmp_path / "ppo-doctor.toml")]
    try:
        t0 = time.monotonic()
        done = _cli(*args, env={"PPO_DOCTOR_REMOTE_TIMEOUT": "600"}, timeout=120)  # the setting wins
        took = time.monotonic() - t0
    finally:
        close()
    assert done.returncode == 2, (done.returncode, done.stderr[-500:])
    assert took < 45


def test_a_bad_remote_timeout_is_a_config_error(tmp_path):
    (tmp_path / "ppo-doctor.toml").write_text('remote_timeout = "soon"\n', encoding="utf-8")
    done = _cli("check", str(tmp_path), "--config", str(tmp_path / "ppo-doctor.toml"))
    assert done.returncode == 2 and "remote_timeout: expected a number of seconds > 0" in done.stderr, done.stderr


def test_the_timeout_setting_is_scoped_to_the_walk(monkeypatch):
    from ppo_doctor.ingest import storage

    monkeypatch.delenv(storage.TIMEOUT_ENV, raising=False)
    with storage.request_timeout(3):
        assert storage.remote_timeout() == 3.0
    assert storage.remote_timeout() == storage.REMOTE_TIMEOUT
    with storage.request_timeout(None):
        assert storage.remote_timeout() == storage.REMOTE_TIMEOUT


def test_a_server_that_makes_up_folders_is_walked_to_a_bound(tmp_path, monkeypatch):
    """A tree of distinct folders, each listing different names (so no loop to see), is listed
    at most MAX_REMOTE_FOLDERS times and the cut is reported."""
    import fsspec

    from ppo_doctor.ingest import discover as discover_mod

    fs = fsspec.filesystem("memory")
    for i in range(30):
        fs.pipe(f"/madeup/d{i}/x{i}/note.txt", b"not a log")
    monkeypatch.setattr(discover_mod, "MAX_REMOTE_FOLDERS", 10)
    sources, issues = discover_mod.discover("memory://madeup")
    cut = [i for i in issues if "folders listed on a remote filesystem" in i.message]
    assert len(cut) == 1 and cut[0].level == "warning"
    fs.rm("/madeup", recursive=True)
