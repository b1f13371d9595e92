"""Tiny GPT-2 policy and value models built from a config (nothing is downloaded), and the
cached supervised fine-tuning (SFT) that turns the policy into the reference model.

The SFT weights are our own tensors, saved with safetensors (a tensor-only format, no pickle)
under a cache folder and read back the same way; no file from anywhere else is
ever loaded.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from safetensors.torch import load_model, save_model
from torch import nn
from transformers import GPT2Config, GPT2LMHeadModel, GPT2Model

from .grammar import WordTokenizer, sft_corpus

log = logging.getLogger(__name__)

# Bump when the grammar or the SFT recipe changes, so stale cached weights are not reused.
SFT_VERSION = 1


@dataclass(frozen=True)
class ModelSpec:
    """Shape of the tiny GPT-2 used for the policy, the reference and the value backbone."""

    n_layer: int = 2
    n_embd: int = 64
    n_head: int = 2
    n_positions: int = 32


@dataclass(frozen=True)
class SFTSpec:
    """The supervised fine-tuning recipe (its fields key the cache)."""

    corpus_size: int = 4000
    steps: int = 600
    batch_size: int = 64
    learning_rate: float = 3e-3


def default_cache_dir() -> Path:
    """``$PPO_DOCTOR_CACHE`` or ``~/.cache/ppo_doctor``."""
    env = os.environ.get("PPO_DOCTOR_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "ppo_doctor"


def gpt2_config(tok: WordTokenizer, spec: ModelSpec) -> GPT2Config:
    # Dropout off: PPO needs the rollout log-probs and the training log-probs of the same
    # weights to agree, which TRL also ensures by disabling dropout (ppo_trainer.py).
    return GPT2Config(
        vocab_size=len(tok),
        n_positions=spec.n_positions,
        n_embd=spec.n_embd,
        n_layer=spec.n_layer,
        n_head=spec.n_head,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )


def new_policy(tok: WordTokenizer, spec: ModelSpec, seed: int) -> GPT2LMHeadModel:
    """A freshly initialised (random) policy; ``seed`` makes its weights reproducible."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return GPT2LMHeadModel(gpt2_config(tok, spec))


class ValueModel(nn.Module):
    """A GPT-2 backbone with a scalar head: V(s_t) for every position.

    Like TRL's separate value model (``ppo_trainer.py`` builds it with
    ``AutoModelForSequenceClassification(num_labels=1)`` and reads the score at every token).
    The backbone starts from the SFT policy's transformer, as the guide recommends ("initialise
    it from the SFT model minus its last layer"), and the head starts at zero so that the first
    values are 0 (N implementation details of RLHF, Huang et al. 2023).
    """

    def __init__(self, config: GPT2Config):
        super().__init__()
        self.backbone = GPT2Model(config)
        self.head = nn.Linear(config.n_embd, 1)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        hidden = self.backbone(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return self.head(hidden).squeeze(-1)


class ValueHead(nn.Module):
    """A scalar head on the *policy's* last hidden state: TRL legacy's shared-backbone critic
    (``AutoModelForCausalLMWithValueHead``, ``trl/models/modeling_value_head.py``).  The value
    loss then also trains the policy's transformer."""

    def __init__(self, config: GPT2Config):
        super().__init__()
        self.head = nn.Linear(config.n_embd, 1)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.head(hidden).squeeze(-1)


def value_model_from(policy: GPT2LMHeadModel) -> ValueModel:
    value = ValueModel(policy.config)
    value.backbone.load_state_dict(policy.transformer.state_dict())
    return value


def _cache_key(spec: ModelSpec, sft: SFTSpec, seed: int, steps: int, vocab: int) -> str:
    blob = json.dumps(
        {"v": SFT_VERSION, "model": asdict(spec), "sft": asdict(sft), "seed": seed, "steps": steps, "vocab": vocab},
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _encode_corpus(tok: WordTokenizer, pairs: list[tuple[str, str]], max_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids (BOS prompt response EOS, right-padded) and a loss mask over response tokens."""
    length = min(max_len, max(2 + len(p.split()) + len(r.split()) for p, r in pairs))
    ids = torch.full((len(pairs), length), tok.pad_token_id, dtype=torch.long)
    mask = torch.zeros((len(pairs), length), dtype=torch.bool)
    for row, (prompt, response) in enumerate(pairs):
        p = [tok.bos_token_id] + tok.encode(prompt)
        r = tok.encode(response) + [tok.eos_token_id]
        seq = (p + r)[:length]
        ids[row, : len(seq)] = torch.tensor(seq)
        mask[row, len(p) : len(seq)] = True
    return ids, mask


def train_sft(tok: WordTokenizer, spec: ModelSpec, sft: SFTSpec, seed: int, steps: int) -> GPT2LMHeadModel:
    """Supervised fine-tuning on the grammar: next-token cross-entropy on response tokens."""
    policy = new_policy(tok, spec, seed)
    ids, mask = _encode_corpus(tok, sft_corpus(sft.corpus_size, seed), spec.n_positions)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(policy.parameters(), lr=sft.learning_rate, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0 - s / max(1, steps))
    policy.train()
    for step in range(steps):
        rows = torch.randint(0, len(ids), (sft.batch_size,), generator=gen)
        batch, bmask = ids[rows], mask[rows]
        logits = policy(input_ids=batch, attention_mask=batch != tok.pad_token_id).logits[:, :-1]
        target, tmask = batch[:, 1:], bmask[:, 1:]
        loss = nn.functional.cross_entropy(logits[tmask], target[tmask])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if step % 100 == 0 or step == steps - 1:
            log.debug("sft step %d loss %.3f", step, loss.item())
    policy.train(False)
    return policy


def sft_policy(
    tok: WordTokenizer,
    spec: ModelSpec,
    sft: SFTSpec,
    seed: int,
    *,
    steps: int | None = None,
    cache_dir: Path | None = None,
) -> GPT2LMHeadModel:
    """The SFT model for ``seed``, trained once and then read from the cache.

    ``steps`` overrides ``sft.steps`` (an *undertrained* policy uses a fraction of them).
    """
    steps = sft.steps if steps is None else steps
    cache = cache_dir if cache_dir is not None else default_cache_dir()
    path = cache / f"sft-{_cache_key(spec, sft, seed, steps, len(tok))}.safetensors"
    model = new_policy(tok, spec, seed)
    if path.is_file():
        try:
            # Only our own cache file, and only tensors: weights_only refuses anything else.
            load_model(model, str(path), device="cpu")
            model.train(False)
            return model
        # whatever makes our own cache unreadable (a cut file, a changed model), it is simply rebuilt
        except Exception as exc:  # noqa: BLE001
            log.warning("ignoring unreadable SFT cache %s (%s)", path, exc)
    model = train_sft(tok, spec, sft, seed, steps)
    cache.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    save_model(model, str(tmp))  # save_model handles GPT-2's tied embedding/head weights
    os.replace(tmp, path)  # atomic, so concurrent runs never read a half-written file
    return model
