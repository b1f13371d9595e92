"""The synthetic review language the reference loop is trained on, its tokenizer and its scorers.

Everything here is plain Python and deterministic given a seed, so the SFT corpus, the prompts
and the rewards are the same on every machine and nothing is downloaded.

The language imitates the IMDB-sentiment task of TRL's PPO examples at toy scale: a prompt such
as ``the movie was`` is continued by a short review (``very good and fun .``).  The sentiment
scorer plays the reward model (TRL's examples use a sentiment classifier's logit), and the
``hackable`` scorer adds the flaw the TRL FAQ warns about: it pays for every exclamation mark,
so a policy can score high with text that is no longer good language.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
SPECIALS = (PAD, BOS, EOS, UNK)

SUBJECTS = ("the movie", "this film", "the show", "the book", "the story", "the song", "the game", "the plot")
VERBS = ("was", "is", "felt", "seemed")
ADVERBS = ("very", "really", "quite", "so")
POSITIVE = ("good", "great", "fun", "lovely", "brilliant", "charming", "wonderful")
NEGATIVE = ("bad", "dull", "boring", "awful", "weak", "messy", "bland")
NEUTRAL = ("long", "short", "new", "old", "simple", "strange")
OBJECTS = ("acting", "music", "jokes", "ending", "cast", "dialogue", "pacing")
FUNCTION_WORDS = ("and", "but", "with", "the", "overall", "it", "was", ",", ".", "!")


def vocabulary() -> list[str]:
    """All tokens, specials first; the order fixes the token ids."""
    words: list[str] = []
    for group in (FUNCTION_WORDS, VERBS, ADVERBS, POSITIVE, NEGATIVE, NEUTRAL, OBJECTS):
        words.extend(group)
    for subject in SUBJECTS:
        words.extend(subject.split())
    seen: dict[str, None] = dict.fromkeys(SPECIALS)
    for w in words:
        seen.setdefault(w, None)
    return list(seen)


class WordTokenizer:
    """Word-level tokenizer over :func:`vocabulary` (whitespace split; no sub-words needed)."""

    def __init__(self) -> None:
        self.itos = vocabulary()
        self.stoi = {w: i for i, w in enumerate(self.itos)}
        self.pad_token_id = self.stoi[PAD]
        self.bos_token_id = self.stoi[BOS]
        self.eos_token_id = self.stoi[EOS]
        self.unk_token_id = self.stoi[UNK]

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, text: str) -> list[int]:
        return [self.stoi.get(w, self.unk_token_id) for w in text.split()]

    def words(self, ids: list[int]) -> list[str]:
        """Tokens up to (not including) the first EOS, pads dropped."""
        out: list[str] = []
        for i in ids:
            if i == self.eos_token_id:
                break
            if i != self.pad_token_id:
                out.append(self.itos[i])
        return out

    def decode(self, ids: list[int]) -> str:
        return " ".join(self.words(ids))


def prompts() -> list[str]:
    """Every prompt: subject + verb, all exactly three words so a batch needs no padding."""
    return [f"{s} {v}" for s in SUBJECTS for v in VERBS]


def _adjective(rng: random.Random, sentiment: str) -> str:
    pool = {"pos": POSITIVE, "neg": NEGATIVE, "neu": NEUTRAL}[sentiment]
    return rng.choice(pool)


def _opposite(sentiment: str) -> str:
    return {"pos": "neg", "neg": "pos", "neu": "pos"}[sentiment]


def _maybe_adverb(rng: random.Random) -> list[str]:
    return [rng.choice(ADVERBS)] if rng.random() < 0.4 else []


def sample_review(rng: random.Random) -> str:
    """One response of the grammar (without the prompt), ending in ``.`` or a run of ``!``.

    Sentences are positive or negative with equal probability (neutral 20 %), so the SFT model
    has no sentiment preference and PPO has something to learn.
    """
    r = rng.random()
    sentiment = "pos" if r < 0.4 else "neg" if r < 0.8 else "neu"
    words = _maybe_adverb(rng) + [_adjective(rng, sentiment)]
    tail = rng.random()
    if tail < 0.25:
        words += ["and"] + _maybe_adverb(rng) + [_adjective(rng, sentiment)]
    elif tail < 0.4:
        words += ["but"] + _maybe_adverb(rng) + [_adjective(rng, _opposite(sentiment))]
    elif tail < 0.55:
        words += [",", "the", rng.choice(OBJECTS), "was"] + _maybe_adverb(rng) + [_adjective(rng, sentiment)]
    elif tail < 0.65:
        words += ["with", _adjective(rng, sentiment), rng.choice(OBJECTS)]
    if rng.random() < 0.15:
        words += [".", "overall", "it", "was", _adjective(rng, sentiment)]
    # Review sites are full of "!!!": a short run of exclamation marks ends 15 % of reviews,
    # which gives the hackable scorer something the policy can already produce and extend.
    end = rng.random()
    words += ["!"] * (1 + (end < 0.05) + (end < 0.02)) if end < 0.15 else ["."]
    return " ".join(words)


def sft_corpus(n: int, seed: int) -> list[tuple[str, str]]:
    """``n`` (prompt, response) pairs drawn deterministically from the grammar."""
    rng = random.Random(seed)
    ps = prompts()
    return [(rng.choice(ps), sample_review(rng)) for _ in range(n)]


@dataclass(frozen=True)
class Score:
    """What a scorer returns for one response: the score and the counts behind it."""

    value: float
    positive: int
    negative: int
    exclamations: int


def sentiment_score(words: list[str]) -> Score:
    """The "reward model": tanh(#positive - #negative adjectives), in (-1, 1).

    Bounded, so once every review is positive the only way up is a second positive adjective
    (0.76 -> 0.96): the healthy run's reward rises and then plateaus.
    """
    p = sum(w in POSITIVE for w in words)
    n = sum(w in NEGATIVE for w in words)
    return Score(math.tanh(p - n), p, n, words.count("!"))


def hackable_score(words: list[str], bonus: float = 0.3) -> Score:
    """The sentiment score plus ``bonus`` per ``!``: a flawed reward model with an exploit.

    This is the TRL FAQ's example of why a KL penalty is needed ("excessive exclamation marks"):
    the score grows without bound as the policy fills its response with ``!``.
    """
    base = sentiment_score(words)
    return Score(base.value + bonus * base.exclamations, base.positive, base.negative, base.exclamations)


SCORERS = {"sentiment": sentiment_score, "hackable": hackable_score}
