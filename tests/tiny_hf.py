"""A tiny causal LM and tokenizer built from configs, for tests that run real HF / TRL trainers.

Nothing is downloaded: the tokenizer is a word-level ``tokenizers`` model over a fixed
vocabulary, the model a 1-layer GPT-2 with 32-wide embeddings.
"""

from __future__ import annotations

from typing import Any

WORDS = "the movie was very good bad fun boring and not a film story great ! .".split()


def tiny_tokenizer() -> Any:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["<pad>", "<unk>", "<eos>", *WORDS])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", unk_token="<unk>", eos_token="<eos>")


def tiny_model(tokenizer: Any, seed: int = 0) -> Any:
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    cfg = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=64,
        n_embd=32,
        n_layer=1,
        n_head=2,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return GPT2LMHeadModel(cfg)


class LMDataset:
    """``n`` copies of short sentences as causal-LM examples (input_ids = labels)."""

    def __init__(self, tokenizer: Any, n: int = 256) -> None:
        import torch

        sentences = ["the movie was very good and fun .", "the film was not boring .", "a great story !", "the story was bad ."]
        enc = [tokenizer(s)["input_ids"] for s in sentences]
        width = max(len(e) for e in enc)
        self.rows = []
        for i in range(n):
            ids = enc[i % len(enc)]
            pad = width - len(ids)
            input_ids = torch.tensor(ids + [tokenizer.pad_token_id] * pad)
            labels = torch.tensor(ids + [-100] * pad)
            mask = torch.tensor([1] * len(ids) + [0] * pad)
            self.rows.append({"input_ids": input_ids, "labels": labels, "attention_mask": mask})

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return self.rows[i]
