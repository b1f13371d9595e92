"""Statistics of generated text samples (``run.texts``) used by the PD95x rules and as
supporting evidence for reward hacking.

The guides ask people to read samples: "high-reward samples that exploit the reward model
(repeated phrases, unnatural style)", "excessive exclamation marks or emoji", and mode
collapse where "every prompt gets the same response" (docs/sources.md#generated-text; huggingface/trl#204;
MOSS-RLHF#17: failed models "repeat one sentence up to max length").  These helpers turn that
reading into numbers; all are pure functions of strings.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Sequence

from ..frame import TextSample

TOKEN_RE = re.compile(r"\w+|[^\w\s]", re.UNICODE)
# Punctuation normal prose uses freely; '!' '?' and symbols/emoji count as unusual.
PLAIN_PUNCT = set(".,;:'\"-()/")
# Samples compared pairwise are capped so the quadratic near-duplicate scan stays cheap.
MAX_COMPARED = 60


def tokens(text: str) -> list[str]:
    """Lower-cased words and punctuation marks."""
    return TOKEN_RE.findall(text.lower())


def ngrams(toks: Sequence[str], n: int) -> list[tuple[str, ...]]:
    """Consecutive n-token tuples."""
    return list(zip(*(toks[i:] for i in range(n)))) if len(toks) >= n else []


def repetition(text: str, n: int = 3) -> float:
    """Share of the text's word n-grams that repeat an earlier one (0 = none, ->1 = a loop)."""
    grams = ngrams(tokens(text), n)
    if len(grams) < 2 * n:
        return 0.0
    return 1.0 - len(set(grams)) / len(grams)


def top_phrase(texts: Sequence[str], n: int = 4) -> tuple[str, int]:
    """The most repeated n-gram inside single texts, with its count in the text repeating it most."""
    best, count = "", 0
    for t in texts:
        c = Counter(ngrams(tokens(t), n))
        if c:
            g, k = c.most_common(1)[0]
            if k > count:
                best, count = " ".join(g), k
    return best, count


def unusual_char_share(text: str) -> float:
    """Share of non-space characters that are neither letters/digits nor plain punctuation."""
    chars = [c for c in text if not c.isspace()]
    if not chars:
        return 0.0
    odd = sum(1 for c in chars if not c.isalnum() and c not in PLAIN_PUNCT)
    return odd / len(chars)


def _shingles(text: str, n: int = 3) -> frozenset:
    toks = tokens(text)
    return frozenset(ngrams(toks, n)) if len(toks) >= n else frozenset([tuple(toks)])


def near_duplicate_share(texts: Sequence[str], threshold: float = 0.8) -> float:
    """Share of texts with a near-identical twin among the others (Jaccard of word 3-grams)."""
    texts = list(texts)[-MAX_COMPARED:]
    if len(texts) < 2:
        return 0.0
    sh = [_shingles(t) for t in texts]
    has_twin = [False] * len(sh)
    for i in range(len(sh)):
        for j in range(i + 1, len(sh)):
            a, b = sh[i], sh[j]
            union = len(a | b)
            if union and len(a & b) / union >= threshold:
                has_twin[i] = has_twin[j] = True
    return sum(has_twin) / len(sh)


def js_divergence(texts_a: Sequence[str], texts_b: Sequence[str]) -> float:
    """Jensen-Shannon divergence (base 2, 0..1) between the word distributions of two sets."""
    ca = Counter(t for x in texts_a for t in tokens(x))
    cb = Counter(t for x in texts_b for t in tokens(x))
    na, nb = sum(ca.values()), sum(cb.values())
    if not na or not nb:
        return 0.0
    terms = []
    for w in set(ca) | set(cb):
        p, q = ca[w] / na, cb[w] / nb
        m = (p + q) / 2
        if p:
            terms.append(0.5 * p * math.log2(p / m))
        if q:
            terms.append(0.5 * q * math.log2(q / m))
    # fsum: exact whatever the order, and a set of words iterates in a per-process hash order,
    # so a plain += made the report's last digit differ from run to run
    return max(0.0, min(1.0, math.fsum(terms)))


def split_early_late(samples: Sequence[TextSample], frac: float = 0.25) -> tuple[list[TextSample], list[TextSample]]:
    """Samples from the first and the last ``frac`` of the logged sample steps.

    With a single sample step both lists hold every sample (nothing to compare over time).
    """
    steps = sorted({s.step for s in samples})
    if not steps:
        return [], []
    k = max(1, int(round(len(steps) * frac)))
    early_steps, late_steps = set(steps[:k]), set(steps[-k:])
    return [s for s in samples if s.step in early_steps], [s for s in samples if s.step in late_steps]


def mean(xs: Sequence[float]) -> float:
    """Arithmetic mean, 0.0 for an empty sequence.

    With ``math.fsum``, so the result does not depend on the samples' order: offline they come
    file by file (TensorBoard text, then samples.jsonl), live in the order they were logged, and
    both reports must be the same (the Monitor replay test).
    """
    return math.fsum(xs) / len(xs) if xs else 0.0


def hacking_evidence(samples: Sequence[TextSample]) -> list[str]:
    """Evidence strings about degenerate late samples (empty when they look normal)."""
    if not samples:
        return []
    early, late = split_early_late(samples)
    texts = [s.text for s in late]
    out = []
    rep = mean([repetition(t) for t in texts])
    if rep >= 0.5:
        phrase, count = top_phrase(texts)
        out.append(f"late samples repeat themselves ({rep:.0%} repeated 3-grams; '{phrase[:40]}' x{count})")
    dup = near_duplicate_share(texts)
    if len(texts) >= 4 and dup >= 0.5:
        out.append(f"{dup:.0%} of late samples are near-identical")
    odd_late = mean([unusual_char_share(t) for t in texts])
    odd_early = mean([unusual_char_share(s.text) for s in early])
    if odd_late >= 0.1 and odd_late >= 2 * odd_early and early != late:
        out.append(f"late samples are {odd_late:.0%} symbols/emoji/'!' (early: {odd_early:.0%})")
    return out
