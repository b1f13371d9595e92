"""Meaning of a home-made metric name, from its words: ``Loss/entropy``, ``policy_gradient_loss``,
``total_loss``, ``value loss`` ... (a tag in none of the alias tables of :mod:`ppo_doctor.canonical.metrics`).

A name is split into lower-case words (on ``/ _ - . space`` and camelCase) and matched against a
short list of word sets, first match wins.  A name with a statistic word (``std``, ``min``,
``max``...) or a word of another model (``discriminator``: GAIL's loss is not the policy's) is
left alone: it describes something else than the canonical mean.  The result is marked
*inferred* in ``ppo-doctor metrics`` and in the run's meanings, so a user sees that the name,
not a table, decided it.

Sign conventions: an *entropy loss* is, by the word, the term minimised for the entropy bonus,
``-entropy`` (SB3 logs ``train/entropy_loss = -mean(entropy)``), but SB2's
``loss/entropy_loss`` and OpenRLHF's ``entropy_loss`` hold the positive entropy.  The name
cannot tell them apart, so :func:`entropy_sign` decides from the values, and the meaning says
which convention the values showed.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

_SPLIT = re.compile(r"[^A-Za-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

# Words that make the name a statistic or a quantity of another model than the policy.
_REJECT = frozenset(
    {"std", "stddev", "min", "max", "median", "discriminator", "disc", "eval", "test", "val", "validation", "target", "coef", "coeff", "weight", "range"}
)
_POLICY = frozenset({"policy", "pi", "pg", "actor", "surrogate", "surr", "gradient"})
_VALUE = frozenset({"value", "vf", "v", "critic"})
REWARD_WORDS = frozenset({"reward", "rewards", "return", "returns", "score"})
# The reward abbreviated (a home-made DQN's ``episode.rwd``): the reward only in a name of nothing
# else but the words that may qualify a mean reward, since legged_gym and rl_games name each reward
# *term* ``Episode/rew_<term>``.
SHORT_REWARD_WORDS = frozenset({"rew", "rwd"})
AVERAGE_WORDS = frozenset({"mean", "avg", "average", "episode", "episodes", "ep", "episodic"})
# Words that say a series is the training one (its held-out twin is rejected by ``eval``/``test``/``val``).
TRAINING_WORDS = frozenset({"train", "training"})
# Words of a TensorBoard section that hold no meaning of their own (``scalars/train_return``,
# ``charts/return``): a name made of them and reward words is still the reward.
SECTION_WORDS = frozenset({"scalars", "scalar", "charts", "metrics"})


class Guess(NamedTuple):
    """A canonical name inferred from a tag's words, and why."""

    canonical: str
    note: str = ""
    sign: int = 1


def words(tag: str) -> list[str]:
    """``"Loss/policyGradient_loss"`` -> ``["loss", "policy", "gradient", "loss"]``."""
    return [w.lower() for part in _SPLIT.split(tag) if part for w in _CAMEL.split(part) if w]


def infer_canonical(tag: str) -> Guess | None:
    """The canonical metric a home-made tag most likely is, or None when its words do not say."""
    ws = words(tag)
    w = set(ws)
    if not w or w & _REJECT:
        return None
    if "entropy" in w and "loss" in w:
        return Guess("loss/entropy", "an entropy loss is -entropy by the word (SB3 convention)")
    if "entropy" in w:
        return Guess("policy/entropy", "")
    if "loss" in w:
        if w & _POLICY:
            return Guess("loss/policy", "")
        if w & _VALUE:
            return Guess("loss/value", "")
        if "total" in w or ws == ["loss"]:
            return Guess("loss/total", "")
        return None
    if "kl" in w or "kullback" in w:
        if w & {"approx", "approximate", "old"}:
            return Guess("kl/old", "an approximate KL is the PPO update's, to the rollout policy")
        return None
    if "clip" in w and w & {"frac", "fraction", "factor", "ratio"}:
        return Guess("policy/clipfrac", "")
    if "explained" in w and w & {"variance", "var"}:
        return Guess("value/explained_var", "")
    # "final": the reward an episode or game ends with (a Wordle loop's ``final_reward`` per game)
    plain = REWARD_WORDS | TRAINING_WORDS | SECTION_WORDS | {"total", "final"}
    full = w & REWARD_WORDS and (w & AVERAGE_WORDS or w <= plain)
    short = w & SHORT_REWARD_WORDS and w <= plain | SHORT_REWARD_WORDS | AVERAGE_WORDS
    if (full or short) and not w & {"discounted", "signal"}:
        # "reward per episode", or a column that is the reward and nothing else ("Return" beside
        # "Episode" in a home-made loop's CSV, "train_reward" beside "val_reward", an episode's
        # "total_reward", the sum of its step rewards: what classic RL calls the return)
        return Guess("reward/score", "")
    if w & {"response", "completion", "generation"} and w & {"len", "length"} and w <= {"response", "completion", "generation", "len", "length"} | AVERAGE_WORDS:
        # a home-made LLM loop's "avg_response_len": the mean length of the sampled answers
        return Guess("len/response_mean", "")
    if ("learning" in w and "rate" in w) or ws == ["lr"]:
        return Guess("opt/lr", "")
    if w & {"grad", "gradient"} and "norm" in w:
        return Guess("grad/norm_critic" if w & _VALUE else "grad/norm", "")
    return None


def entropy_sign(values: np.ndarray) -> tuple[int, str]:
    """Sign and note for an entropy *loss*: all values <= 0 is -entropy, all >= 0 the entropy itself."""
    finite = values[np.isfinite(values)]
    if len(finite) and (finite <= 0).all():
        return -1, "values are <= 0: read as -entropy (SB3 convention)"
    if len(finite) and (finite >= 0).all():
        return 1, "values are >= 0: the entropy itself despite the name (SB2 / OpenRLHF convention)"
    return 1, "values change sign: not an entropy, sign convention unknown"
