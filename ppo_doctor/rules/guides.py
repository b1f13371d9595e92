"""The two practitioner guides the rules and the cause catalog are built from.

``ppo-doctor explain`` prints them after a rule's documentation as its references: each by
title, with its public URL when there is one, and what it covers.  Where each threshold and
framework fact comes from is in ``docs/sources.md`` (the rules' docstrings cite its anchors).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Guide:
    title: str
    url: str | None
    note: str


# docs/sources.md#guides says what each guide covers and how it maps onto rules, causes and fixes.
GUIDES = (
    Guide(
        "Troubleshooting PPO Training Instability (RLHF practitioner guide)",
        None,
        "symptoms (reward surge, policy collapse, vanishing gradients, high value loss, fluctuation), causes and fixes",
    ),
    Guide(
        "TRL Training FAQ",
        "https://huggingface.co/docs/trl/how_to_train",
        "metrics to watch, the 0-10 KL band, negative KL and generation settings",
    ),
)


def references() -> list[str]:
    """One line per guide: title, public URL when there is one, and what it covers."""
    return [f"{g.title}" + (f" <{g.url}>" if g.url else "") + f": {g.note}" for g in GUIDES]
