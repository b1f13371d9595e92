"""The webhook notifier (ppo_doctor/webhook.py) against real local HTTP servers on 127.0.0.1:
one that takes the messages, one that fails first, one that hangs, a port that refuses; and
``ppo-doctor watch --webhook``."""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from cli_invoke import run_cli
from ppo_doctor.webhook import DISCORD_LIMIT, Webhook, WebhookPolicy, check_url

FAST = WebhookPolicy(timeout=0.5, retries=2, backoff=0.01)


class _Server:
    """A local HTTP server answering POSTs with ``statuses`` in turn (then 200), or never
    answering when ``hang``; it keeps every body it read."""

    def __init__(self, statuses: list[int] | None = None, hang: bool = False) -> None:
        self.bodies: list[dict] = []
        self.statuses = list(statuses or [])
        self.release = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.bodies.append(json.loads(body))
                if hang:
                    outer.release.wait(10)
                    return
                code = outer.statuses.pop(0) if outer.statuses else 200
                self.send_response(code)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[_Server]:
    s = _Server()
    yield s
    s.stop()


def test_messages_arrive_as_slack_and_discord_json(server: _Server) -> None:
    hook = Webhook(server.url, FAST)
    long = "ERROR PD604 " + "x" * 3000
    hook.send("WARNING PD101 kl above band")
    hook.send(long)
    hook.close(wait=5)
    assert hook.sent == 2 and hook.failed == 0
    first, second = server.bodies
    assert first == {"text": "WARNING PD101 kl above band", "content": "WARNING PD101 kl above band"}
    assert second["text"] == long and len(second["content"]) == DISCORD_LIMIT and long.startswith(second["content"][:-1])


def test_a_server_error_is_retried_a_client_error_is_not() -> None:
    flaky = _Server(statuses=[503, 500])
    refusing = _Server(statuses=[404])
    try:
        ok = Webhook(flaky.url, FAST)
        ok.send("a")
        ok.close(wait=5)
        bad = Webhook(refusing.url, FAST)
        bad.send("b")
        bad.close(wait=5)
    finally:
        flaky.stop()
        refusing.stop()
    assert ok.sent == 1 and len(flaky.bodies) == 3  # two failures, then taken
    assert bad.failed == 1 and len(refusing.bodies) == 1


def test_a_hanging_server_never_blocks_the_caller() -> None:
    hanging = _Server(hang=True)
    try:
        hook = Webhook(hanging.url, WebhookPolicy(timeout=0.3, retries=1, backoff=0.01, queue_size=2))
        t0 = time.perf_counter()
        for i in range(5):  # more than the queue holds: the rest is dropped, never waited for
            hook.send(f"m{i}")
        sent_in = time.perf_counter() - t0
        hook.close(wait=0.1)  # bounded: returns while the thread still tries
        closed_in = time.perf_counter() - t0
    finally:
        hanging.stop()
    assert sent_in < 0.1 and closed_in < 1.0
    assert hook.dropped >= 2 and hook.sent == 0


def test_a_refused_connection_is_retried_then_dropped() -> None:
    with socket.socket() as s:  # a port nobody listens on once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    hook = Webhook(f"http://127.0.0.1:{port}/", FAST)
    hook.send("lost")
    hook.close(wait=5)
    assert hook.failed == 1 and hook.sent == 0


@pytest.mark.parametrize("url", ["ftp://host/x", "hooks.slack.com/x", "file:///etc/passwd", "http://"])
def test_only_http_urls_are_accepted(url: str) -> None:
    with pytest.raises(ValueError):
        check_url(url)


def test_watch_posts_each_new_warning_and_error(tmp_path: Path, sample_logs: Path, server: _Server) -> None:
    shutil.copytree(sample_logs / "kl-coef-zero", tmp_path / "kl-coef-zero")
    res = run_cli(["watch", tmp_path, "--idle", "0", "--interval", "0.01", "--isolated", "--format", "jsonl", "--webhook", server.url])
    events = [json.loads(line) for line in res.stdout.splitlines()]
    said = [e for e in events if e["event"] == "finding" and e["finding"]["severity"] in ("warning", "error")]
    assert res.exit_code == 1 and said
    assert len(server.bodies) == len(said)
    assert all(b["text"].startswith("ppo-doctor [kl-coef-zero") for b in server.bodies)
    assert any("PD101" in b["text"] for b in server.bodies)


def test_watch_refuses_a_webhook_that_is_not_a_url(tmp_path: Path) -> None:
    res = run_cli(["watch", tmp_path, "--idle", "0", "--isolated", "--webhook", "not-a-url"])
    assert res.exit_code == 2
