"""What a rule's documentation may cite to a user: the guides' titles and public URLs.

Rule docstrings name their sources for the project's own review, often as files of the
reference folder that is not shipped (``guides-digest.md``, ``thresholds-and-peers.md §4.1``,
``formats.md §12``, ``seeds/``).  A user of ``ppo-doctor explain`` has none of those files, so
:func:`public_text` turns a mention of the guides' digest into the guides' names and drops the
other file references (the claims they back are cited by name in the same sentences: TRL
docs, papers, framework files); :data:`GUIDES` is printed as the references.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Guide:
    title: str
    url: str | None
    note: str


# The two practitioner guides the rules are built from (DESIGN.md, reference/guides-digest.md).
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

_FILE = r"(?:``)?(?:reference/)?(?:thresholds-and-peers|formats|style-anchors|guides-digest|DESIGN)\.md(?:``)?"
_SECTIONS = r"(?:\s*§\s*[\w.]+(?:\s*(?:,|and)\s*§?\s*[\w.]+)*)?"
_SEEDS = r"(?:originals in\s+)?(?:``)?(?:reference/)?seeds/[^\s)`,;]*(?:``)?"
_DIGEST = re.compile(r"(?:``)?(?:reference/)?guides-digest\.md(?:``)?" + _SECTIONS)
# a file, its sections, a note on what it holds, and sections after that note
_INTERNAL = re.compile(f"(?:{_FILE}{_SECTIONS}(?:\\s*\\([^()]*\\))?(?:\\s*,\\s*§\\s*[\\w.]+)*|{_SEEDS})")
# what is left of a parenthesis or list once its file references are gone
_EMPTY_PARENS = re.compile(r"\s*\(\s*(?:[,;]\s*)*\)")
_DANGLING = re.compile(r"\(\s*[,;]\s*|\s*[,;]\s*\)")
_DOUBLE_SEP = re.compile(r"\s*([,;])\s*(?:[,;]\s*)+")


def public_text(text: str) -> str:
    """``text`` citing the guides by name and no unshipped file of this repository."""
    out = _DIGEST.sub("the guides", text)
    out = _INTERNAL.sub("", out)
    out = _DANGLING.sub(lambda m: "(" if "(" in m.group(0) else ")", out)
    out = _EMPTY_PARENS.sub("", out)
    out = _DOUBLE_SEP.sub(r"\1 ", out)
    out = re.sub(r"[ \t]+([,.;)])", r"\1", out)
    out = re.sub(r"[,;]\s*([.)])", r"\1", out)  # "#789; formats.md §12." -> "#789."
    out = re.sub(r"[ \t]{2,}", " ", out)
    return "\n\n".join(p for p in (_tidy(p) for p in out.split("\n\n")) if p)


def _tidy(paragraph: str) -> str:
    """A paragraph whose first or last citation was removed: no leading or trailing
    separator; a "Source." heading left with nothing after it goes."""
    head = re.match(r"\s*(\*\*[^*]+\*\*)?\s*", paragraph)
    label = head.group(1) or "" if head else ""
    rest = paragraph[head.end() if head else 0 :]
    rest = re.sub(r"^[,;.]\s*", "", rest)
    rest = re.sub(r"\s*[,;]\s*$", ".", rest)
    if not rest.strip(" .;,\n"):
        return "" if label else rest.strip()
    return f"{label} {rest}" if label else rest


def references() -> list[str]:
    """One line per guide: title, public URL when there is one, and what it covers."""
    return [f"{g.title}" + (f" <{g.url}>" if g.url else "") + f": {g.note}" for g in GUIDES]
