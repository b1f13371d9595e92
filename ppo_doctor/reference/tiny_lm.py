"""A tiny causal LM and a Hugging Face tokenizer for real TRL / transformers trainers, built
locally (nothing is downloaded).

The reference PPO loop has its own :class:`~ppo_doctor.reference.grammar.WordTokenizer`; a TRL
trainer (``GRPOTrainer``, ``RLOOTrainer``) needs a ``PreTrainedTokenizerBase`` instead.
:func:`hf_tokenizer` wraps the grammar's vocabulary in a ``tokenizers`` word-level model with the
same token ids, so the reference loop's cached SFT GPT-2 (:func:`sft_lm`) is a valid starting
policy for a TRL trainer and its completions are reviews of the grammar that the grammar's
scorers can score.  Prompts are encoded as ``<bos> prompt``, as the SFT corpus was.

Used by the real-TRL GRPO validation suite (``trl_suite.py``) and by tests of live callbacks
inside TRL trainers.  torch, transformers and tokenizers are imported by this module, so import
it only where they are installed (the ``[trl]`` / ``[reference]`` extras).
"""

from __future__ import annotations

from pathlib import Path

from tokenizers import Tokenizer, models, pre_tokenizers, processors
from transformers import GPT2LMHeadModel, PreTrainedTokenizerFast

from .grammar import BOS, EOS, PAD, UNK, WordTokenizer, prompts
from .models import ModelSpec, SFTSpec, new_policy, sft_policy


def hf_tokenizer() -> PreTrainedTokenizerFast:
    """The grammar's word-level tokenizer as a ``PreTrainedTokenizerFast`` (ids as WordTokenizer).

    Left padding, as decoder-only generation needs (TRL pads prompts on the left).  Decoding
    joins words with spaces (``tokenizers``' default without a decoder), so a completion decodes
    to the same text :meth:`WordTokenizer.decode` gives.
    """
    words = WordTokenizer()
    core = Tokenizer(models.WordLevel(vocab=dict(words.stoi), unk_token=UNK))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    # The SFT corpus starts every sequence with BOS (models._encode_corpus), so prompts must too.
    core.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", pair=f"{BOS} $A $B", special_tokens=[(BOS, words.bos_token_id)]
    )
    tok = PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token=BOS,
        eos_token=EOS,
        pad_token=PAD,
        unk_token=UNK,
        padding_side="left",
        model_max_length=ModelSpec().n_positions,
    )
    return tok


def random_lm(seed: int = 0, spec: ModelSpec | None = None) -> GPT2LMHeadModel:
    """A randomly initialised tiny GPT-2 over the grammar's vocabulary (no training, instant)."""
    return _generation_ids(new_policy(WordTokenizer(), spec or ModelSpec(), seed))


def sft_lm(seed: int = 1, *, cache_dir: Path | None = None, spec: ModelSpec | None = None) -> GPT2LMHeadModel:
    """The reference loop's SFT GPT-2 for ``seed`` (trained once, about a minute on one core, then
    read from the safetensors cache): it writes grammatical reviews, so rewards have structure."""
    return _generation_ids(sft_policy(WordTokenizer(), spec or ModelSpec(), SFTSpec(), seed, cache_dir=cache_dir))


def _generation_ids(model: GPT2LMHeadModel) -> GPT2LMHeadModel:
    """Copy the special token ids into the generation config, which generate() and TRL read."""
    for name in ("bos_token_id", "eos_token_id", "pad_token_id"):
        setattr(model.generation_config, name, getattr(model.config, name))
    return model


def prompt_texts(n: int) -> list[str]:
    """``n`` prompts cycling through the grammar's 32 (``the movie was`` ...), in a fixed order."""
    ps = prompts()
    return [ps[i % len(ps)] for i in range(n)]


def save_model_dir(model: GPT2LMHeadModel, folder: Path) -> Path:
    """Write ``model`` and :func:`hf_tokenizer` into ``folder`` (safetensors weights, JSON
    configs) and return it.

    TRL trainers build their frozen reference model from the policy's *path*
    (``GRPOTrainer`` calls ``create_model_from_path(config._name_or_path)`` when beta > 0), so a
    model built in memory must be given to them as such a folder.  Everything in it is ours.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder, safe_serialization=True)
    hf_tokenizer().save_pretrained(folder)
    return folder
