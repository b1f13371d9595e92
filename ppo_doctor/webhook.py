"""Webhook notifications: POST each new warning or error to a chat channel (docs/live.md).

::

    hook = Webhook("https://hooks.slack.com/services/...")
    hook.send("ppo-doctor [run-1] step 90: ERROR PD604 ...")   # returns at once
    hook.close(wait=10.0)                                      # at the end: give pending posts a moment

The body is JSON ``{"text": ..., "content": ...}``: Slack's incoming webhooks read ``text``
(https://api.slack.com/messaging/webhooks), Discord's read ``content``, at most 2,000 characters
(https://discord.com/developers/docs/resources/webhook#execute-webhook); each service ignores
the other's key, so one URL option serves both (and any JSON endpoint of the user's own).

A training must never wait for, or fail because of, a chat server: posts go through a bounded
queue to one daemon thread; each try has a timeout, a failed try (a connection error, a timeout,
HTTP 429 or 5xx) is retried a bounded number of times with exponential back-off, a refused
request (another 4xx) is not retried, and a message that cannot be queued (the queue is full
because the server hangs) is dropped with a warning.  Nothing here raises into the caller after
the URL was accepted.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

# Discord rejects a ``content`` longer than 2,000 characters (see the module docstring).
DISCORD_LIMIT = 2000
_STOP = object()


@dataclass(frozen=True)
class WebhookPolicy:
    """How hard a post is tried: ``timeout`` seconds per try, ``retries`` more tries after the
    first, waiting ``backoff`` x 2**k seconds before retry k; at most ``queue_size`` messages wait."""

    timeout: float = 5.0
    retries: int = 3
    backoff: float = 1.0
    queue_size: int = 100


def check_url(url: str) -> str:
    """``url`` when it is an http(s) URL with a host; ``ValueError`` otherwise (said before the
    training starts, not at the first alert)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"webhook: {url!r} is not an http:// or https:// URL")
    return url


def payload(text: str) -> bytes:
    """The JSON body for ``text``: Slack's ``text`` and Discord's ``content`` keys."""
    short = text if len(text) <= DISCORD_LIMIT else text[: DISCORD_LIMIT - 1] + "…"
    return json.dumps({"text": text, "content": short}).encode("utf-8")


class Webhook:
    """Posts messages to one URL from a background thread (see the module docstring)."""

    def __init__(self, url: str, policy: WebhookPolicy | None = None) -> None:
        self.url = check_url(url)
        self.policy = policy or WebhookPolicy()
        self.sent = 0
        self.failed = 0
        self.dropped = 0
        self._queue: queue.Queue[object] = queue.Queue(self.policy.queue_size)
        self._thread: threading.Thread | None = None
        self._closed = False

    def send(self, text: str) -> None:
        """Queue ``text`` for posting; returns at once."""
        if self._closed:
            return
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="ppo-doctor-webhook", daemon=True)
            self._thread.start()
        try:
            self._queue.put_nowait(text)
        except queue.Full:
            self.dropped += 1
            log.warning("ppo-doctor: webhook queue full (%d waiting), message dropped", self.policy.queue_size)

    def close(self, wait: float = 10.0) -> None:
        """Stop taking messages and give the queued ones up to ``wait`` seconds to go out (the
        thread is a daemon: what is still pending after that is lost when the process exits)."""
        if self._closed:
            return
        self._closed = True
        if self._thread is None:
            return
        try:
            self._queue.put(_STOP, timeout=wait)
        except queue.Full:
            return
        self._thread.join(wait)
        if self._thread.is_alive():
            log.warning("ppo-doctor: webhook still posting after %.0f s; %d message(s) may be lost", wait, self._queue.qsize())

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            if self._post(payload(str(item))):
                self.sent += 1
            else:
                self.failed += 1

    def _post(self, body: bytes) -> bool:
        """One message, tried up to ``1 + retries`` times; True when the server took it."""
        p = self.policy
        for attempt in range(p.retries + 1):
            if attempt:
                time.sleep(p.backoff * 2 ** (attempt - 1))
            request = urllib.request.Request(self.url, data=body, method="POST", headers={"Content-Type": "application/json", "User-Agent": "ppo-doctor"})
            try:
                with urllib.request.urlopen(request, timeout=p.timeout) as response:  # noqa: S310 - the user's own URL, checked http(s)
                    response.read()
                return True
            except urllib.error.HTTPError as exc:
                if exc.code != 429 and exc.code < 500:
                    log.warning("ppo-doctor: webhook refused the message (HTTP %d): not retried", exc.code)
                    return False
                why = f"HTTP {exc.code}"
            except (OSError, ValueError) as exc:  # URLError, timeouts, resets are OSErrors
                why = str(getattr(exc, "reason", None) or exc)
            log.debug("ppo-doctor: webhook try %d failed: %s", attempt + 1, why)
        log.warning("ppo-doctor: webhook post failed after %d tries (%s); message dropped", p.retries + 1, why)
        return False


__all__ = ["DISCORD_LIMIT", "Webhook", "WebhookPolicy", "check_url", "payload"]
