"""Bounds on the generated text samples a run keeps (docs/configuration.md, "Text samples").

The text rules (PD95x, ``rules/textstats.py``) tokenise every sample they are given, so their time
and memory follow the characters they read: one 12 MB completion once took 1.3 GiB and 16 s,
10^6 short samples 1.2 GiB (issue 39).  Samples are cut where a run receives them
(:func:`ppo_doctor.canonical.metrics.build_run` for every reader, :class:`ppo_doctor.monitor.Monitor`
as they are logged), so every later stage works on at most:

* :data:`MAX_SAMPLE_CHARS` characters of a completion (and of its prompt): the text rules look for
  a phrase repeated inside a sample, a run of emoji, the same answer to every prompt, which the
  start of a completion shows (MOSS-RLHF#17's failed models "repeat one sentence up to max
  length": the loop begins early).  20,000 characters are about 5,000 tokens at OpenAI's rule of
  thumb of 4 characters a token (https://help.openai.com/en/articles/4936856), more than most
  RLHF runs' ``max_new_tokens``;
* :data:`MAX_SAMPLES` samples and :data:`MAX_RUN_CHARS` characters a run, kept evenly spread over
  the samples in log order, so the early and the late samples that the drift rule (PD953)
  compares both stay.

When a bound cuts, the run says so in a warning (:func:`bound_texts`); nothing is cut silently.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Sequence, TypeVar

from .frame import TextSample

MAX_SAMPLE_CHARS = 20_000
MAX_SAMPLES = 10_000
MAX_RUN_CHARS = 2_000_000
T = TypeVar("T")


class Spread(list):
    """A list that keeps an evenly spread part of the items offered to it, in their order, in
    memory bounded by ``cap``: every ``stride``-th item is kept, and when ``2 * cap`` are held,
    every other one is dropped and the stride doubles (the kept items stay those whose place is a
    multiple of the stride).  A reader holds a run's text samples in one while it reads, so 10^6
    samples never sit in memory at once (:func:`bound_texts` then keeps at most ``cap``)."""

    def __init__(self, cap: int = MAX_SAMPLES) -> None:
        super().__init__()
        self.cap = cap
        self.stride = 1
        self.offered = 0

    def offer(self, item: object) -> None:
        if self.offered % self.stride == 0:
            self.append(item)
            if len(self) >= 2 * self.cap:
                del self[1::2]
                self.stride *= 2
        self.offered += 1

    def offer_all(self, items: Sequence[T], keep: Callable[[T], object]) -> None:
        """:meth:`offer` ``keep(item)`` for each of ``items``, calling ``keep`` only for the items
        kept (a reader offers a block's samples at once and cuts only those it keeps).  Thinning
        after the block keeps what thinning after each item would: the multiples of the stride."""
        first = -self.offered % self.stride
        self.extend(map(keep, items[first :: self.stride]))
        self.offered += len(items)
        while len(self) >= 2 * self.cap:
            del self[1::2]
            self.stride *= 2


def cut_text(value: str) -> str:
    """``value`` cut to :data:`MAX_SAMPLE_CHARS` characters."""
    return value if len(value) <= MAX_SAMPLE_CHARS else value[:MAX_SAMPLE_CHARS]


def bound_sample(sample: TextSample) -> tuple[TextSample, bool]:
    """``sample`` with its text and prompt cut to :data:`MAX_SAMPLE_CHARS`, and whether it was cut."""
    text, prompt = sample.text, sample.prompt
    if len(text) <= MAX_SAMPLE_CHARS and (prompt is None or len(prompt) <= MAX_SAMPLE_CHARS):
        return sample, False
    cut = dataclasses.replace(sample, text=text[:MAX_SAMPLE_CHARS], prompt=None if prompt is None else prompt[:MAX_SAMPLE_CHARS])
    return cut, True


def chars(sample: TextSample) -> int:
    return len(sample.text) + (len(sample.prompt) if sample.prompt else 0)


def spread(samples: Sequence[TextSample], keep: int) -> list[TextSample]:
    """``keep`` of ``samples``, evenly spaced in their order (the first and the last among them)."""
    n = len(samples)
    if keep >= n:
        return list(samples)
    if keep <= 1:
        return list(samples[-1:]) if keep == 1 else []
    return [samples[round(i * (n - 1) / (keep - 1))] for i in range(keep)]


def bound_texts(samples: Sequence[TextSample]) -> tuple[list[TextSample], str]:
    """The samples a run keeps within the bounds, and a note saying what was cut ("" if nothing)."""
    kept: list[TextSample] = []
    truncated = 0
    for s in samples:
        s, cut = bound_sample(s)
        truncated += cut
        kept.append(s)
    total = sum(chars(s) for s in kept)
    keep = len(kept)
    if keep > MAX_SAMPLES or total > MAX_RUN_CHARS:
        # evenly thinned: the share of the characters kept is about the share of the samples kept
        keep = min(MAX_SAMPLES, max(1, int(len(kept) * min(1.0, MAX_RUN_CHARS / max(total, 1)))))
        kept = spread(kept, keep)
    notes = []
    if truncated:
        notes.append(f"{truncated:,} text sample(s) cut to their first {MAX_SAMPLE_CHARS:,} characters")
    if len(kept) < len(samples):
        notes.append(f"{len(kept):,} of {len(samples):,} text samples kept, evenly spread (at most {MAX_SAMPLES:,} samples and {MAX_RUN_CHARS:,} characters a run)")
    return kept, "; ".join(notes)


__all__ = ["MAX_RUN_CHARS", "MAX_SAMPLES", "MAX_SAMPLE_CHARS", "Spread", "bound_sample", "bound_texts", "chars", "cut_text", "spread"]
