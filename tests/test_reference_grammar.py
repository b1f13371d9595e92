"""The synthetic review language, its tokenizer and the scorers (pure Python, no torch)."""

from __future__ import annotations

import math
import random

from ppo_doctor.reference import grammar
from ppo_doctor.reference.grammar import WordTokenizer, hackable_score, sentiment_score


def test_vocabulary_is_unique_and_specials_come_first():
    vocab = grammar.vocabulary()
    assert len(vocab) == len(set(vocab))
    assert vocab[:4] == list(grammar.SPECIALS)


def test_tokenizer_round_trip_and_eos_truncation():
    tok = WordTokenizer()
    text = "very good and fun ."
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    assert tok.decode(ids + [tok.eos_token_id] + tok.encode("bad bad")) == text
    assert tok.words([tok.pad_token_id] + ids) == text.split()
    assert tok.encode("zebra") == [tok.unk_token_id]


def test_every_corpus_word_is_in_the_vocabulary_and_prompts_have_equal_length():
    tok = WordTokenizer()
    for prompt, response in grammar.sft_corpus(500, seed=0):
        assert tok.unk_token_id not in tok.encode(prompt + " " + response)
        assert response.split()[-1] in (".", "!")
    assert len({len(p.split()) for p in grammar.prompts()}) == 1


def test_corpus_is_deterministic_per_seed_and_balanced():
    a = grammar.sft_corpus(2000, seed=3)
    assert a == grammar.sft_corpus(2000, seed=3)
    assert a != grammar.sft_corpus(2000, seed=4)
    scores = [sentiment_score(r.split()).value for _, r in a]
    pos = sum(s > 0 for s in scores) / len(scores)
    neg = sum(s < 0 for s in scores) / len(scores)
    # no sentiment preference in the SFT data: PPO has something to learn
    assert abs(pos - neg) < 0.1 and pos > 0.25
    bangs = sum("!" in r for _, r in a) / len(a)
    assert 0.05 < bangs < 0.3  # the exploit of the hackable scorer is already in the data


def test_sentiment_score_is_bounded_and_counts_adjectives():
    s = sentiment_score("very good and fun .".split())
    assert (s.positive, s.negative) == (2, 0)
    assert s.value == math.tanh(2)
    assert sentiment_score("bad but good .".split()).value == 0.0
    assert sentiment_score(["good"] * 50).value <= 1.0


def test_hackable_score_pays_for_exclamation_marks_without_bound():
    words = "good".split()
    assert hackable_score(words).value == sentiment_score(words).value
    spam = hackable_score(["good"] + ["!"] * 15)
    assert spam.exclamations == 15
    assert spam.value > 4 * sentiment_score(["good", "!"]).value


def test_sample_review_uses_its_rng_only():
    r1, r2 = random.Random(7), random.Random(7)
    assert [grammar.sample_review(r1) for _ in range(20)] == [grammar.sample_review(r2) for _ in range(20)]
