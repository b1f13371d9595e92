"""The reference PPO-RLHF loop: one readable file in the style of CleanRL's ``ppo.py``.

A tiny GPT-2 policy (built from a config, nothing downloaded) is SFT-trained on the synthetic
review grammar (``grammar.py``); the SFT model is the frozen reference and, normally, the
initial policy.  PPO then optimises a scorer (``grammar.SCORERS``) with a KL penalty to the
reference, following TRL's ``PPOTrainer`` (``trl/trainer/ppo_trainer.py`` 0.12-0.24, the
"PPOv2" algorithm of Huang et al., "The N+ Implementation Details of RLHF with PPO", 2024):

1. rollout: sample responses (temperature / top_k / top_p / min_new_tokens, as ``generate``
   would), score them, compute the policy's and the reference's log-probs of the sampled
   tokens from the *full* temperature-scaled distributions, and the values;
2. per-token reward = -kl_coef * k1 (k1 = logp - ref_logp) plus the score on the last token;
3. GAE(gamma, lam) advantages, whitened; returns = advantages + values;
4. ``num_ppo_epochs`` passes over ``num_mini_batches`` shuffled minibatches: clipped policy
   loss, clipped value loss (``vf_coef``), gradient clipping (``max_grad_norm``);
5. log the step under TRL's metric names (docs/sources.md#trl-ppo-metrics) plus the ground truth TRL lacks;
   the gradient norm is the one *before* clipping, at every optimizer step, as HF Trainer
   logs it, summarised per PPO update as ``grad_norm`` (mean over the update's optimizer
   steps) and ``grad_norm_max`` (the largest).

Runs are deterministic (:func:`make_deterministic`): the same :class:`Args` write the same
logs in any process (seeds everywhere, torch's deterministic algorithms, a fixed thread count).

Fault scenarios (``scenarios.py``) each change a few fields of :class:`Args`.
"""

from __future__ import annotations

import logging
import math
import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch
from transformers import GPT2LMHeadModel

from ..monitor import Monitor, StopOn, describe, matches
from ..results import Finding
from .grammar import SCORERS, WordTokenizer, prompts
from .logwriters import RunLogger
from .models import ModelSpec, SFTSpec, ValueHead, new_policy, sft_policy, value_model_from

log = logging.getLogger(__name__)

# TRL fills log-probs of padding positions with this value (ppo_trainer.py INVALID_LOGPROB),
# so that logp - ref_logp is 0 there.
INVALID_LOGPROB = 1.0


@dataclass
class Args:
    """Every knob of the loop.  Names follow TRL's ``PPOConfig`` where TRL has the knob."""

    exp_name: str = "healthy"
    """run name written into the logs"""
    seed: int = 1
    """seeds the SFT model, the sampling and the minibatch shuffles"""
    steps: int = 120
    """PPO updates (TRL: num_total_batches)"""
    batch_size: int = 32
    """prompts per update (TRL: local_batch_size)"""
    num_mini_batches: int = 2
    """minibatches per PPO epoch"""
    num_ppo_epochs: int = 4
    """passes over each batch (TRL default 4)"""
    learning_rate: float = 1e-4
    """policy Adam learning rate (the tiny model needs more than TRL's 3e-6..1e-5)"""
    critic_learning_rate: float | None = None
    """value-model learning rate; None = learning_rate (OpenRLHF's name)"""
    adam_epsilon: float = 1e-5
    """Adam eps; 1e-5 as in the N implementation details of RLHF"""
    max_grad_norm: float | None = 1.0
    """clip the global gradient norm; None = no clipping"""
    cliprange: float = 0.2
    cliprange_value: float = 0.2
    vf_coef: float = 0.1
    ent_coef: float = 0.0
    """entropy bonus (CleanRL/SB3 ent_coef, OpenRLHF entropy_loss_coef); TRL's PPO has none"""
    gamma: float = 1.0
    lam: float = 0.95
    kl_coef: float = 0.05
    """beta of the KL penalty (TRL default 0.05); the adaptive controller's initial value"""
    adap_kl_ctrl: bool = False
    """adaptive KL controller (Ziegler et al. 2019; TRL legacy: init 0.2, target 6, horizon 10000)"""
    target: float = 6.0
    horizon: int = 10000
    kl_estimator: str = "k1"
    """k1 (logp - ref_logp, can be < 0) or k3, for the penalty and objective/kl"""
    whiten_rewards: bool = False
    reward_scale: float = 1.0
    """multiplies the scorer's output (an uncalibrated reward model)"""
    use_score_norm: bool = False
    """normalise scores by running mean/std (TRL legacy use_score_scaling + use_score_norm)"""
    score_clip: float | None = None
    reward_outlier_steps: tuple[int, ...] = ()
    """updates whose scores are multiplied by ``reward_outlier_scale``: a reward model that meets
    out-of-distribution inputs for one batch"""
    reward_outlier_scale: float = 1000.0
    missing_eos_penalty: float | None = 1.0
    """subtracted from the score of a response that never ends (N+ details recipe)"""
    scorer: str = "sentiment"
    """a key of grammar.SCORERS"""
    response_length: int = 20
    temperature: float = 1.0
    top_k: int = 0
    """0 = no top-k filtering (TRL FAQ setting)"""
    top_p: float = 1.0
    min_new_tokens: int = 0
    """EOS is forbidden before this many response tokens (generate's min_new_tokens)"""
    value_model: str = "separate"
    """separate (TRL PPOTrainer: its own GPT-2 from the SFT weights) or shared (TRL legacy: a head
    on the policy's backbone, so the value loss also moves the policy)"""
    policy_init: str = "sft"
    """sft | undertrained (5 % of the SFT steps) | random; the reference is always the SFT model"""
    sample_every: int = 10
    """log generated samples every N steps"""
    num_samples: int = 4
    formats: tuple[str, ...] = ("tensorboard", "jsonl", "trainer_state")
    tb_prefix: str = ""
    """"train/" writes TensorBoard tags the way HF's callback does"""
    fake_clock: bool = False
    """deterministic wall times (for committed sample logs)"""
    device: str = "auto"
    threads: int = 1
    """torch intra-op threads; the tiny tensors gain nothing from more, and on a busy machine
    two spinning threads per process made runs 10x slower"""
    cache_dir: str | None = None
    """SFT cache folder; None = $PPO_DOCTOR_CACHE or ~/.cache/ppo_doctor"""
    model: ModelSpec = field(default_factory=ModelSpec)
    sft: SFTSpec = field(default_factory=SFTSpec)

    def __post_init__(self) -> None:
        if self.scorer not in SCORERS:
            raise ValueError(f"unknown scorer {self.scorer!r}; choose from {sorted(SCORERS)}")
        if self.policy_init not in ("sft", "undertrained", "random"):
            raise ValueError(f"unknown policy_init {self.policy_init!r}")
        if self.value_model not in ("separate", "shared"):
            raise ValueError(f"unknown value_model {self.value_model!r}")
        if self.kl_estimator not in ("k1", "k3"):
            raise ValueError(f"unknown kl_estimator {self.kl_estimator!r}")
        if self.batch_size % self.num_mini_batches:
            raise ValueError("batch_size must be divisible by num_mini_batches")
        if self.steps < 1:
            raise ValueError("steps must be >= 1")


def trl_config(args: Args, query_length: int) -> dict[str, Any]:
    """The config as it is logged: TRL ``PPOConfig`` names (new, plus legacy aliases) and the
    generation kwargs, so a diagnosis can read the run's own settings."""
    critic_lr = args.learning_rate if args.critic_learning_rate is None else args.critic_learning_rate
    return {
        "exp_name": args.exp_name,
        "seed": args.seed,
        "model_name_or_path": f"tiny-gpt2-{args.model.n_layer}x{args.model.n_embd}",
        "sft_model_path": f"sft-seed{args.seed}",
        "policy_init": args.policy_init,
        "init_from_sft": args.policy_init == "sft",
        "reward_model_path": f"scorer:{args.scorer}",
        "learning_rate": args.learning_rate,
        "critic_learning_rate": critic_lr,
        "lr_scheduler_type": "constant",
        "adam_epsilon": args.adam_epsilon,
        "max_grad_norm": args.max_grad_norm,
        "num_ppo_epochs": args.num_ppo_epochs,
        "ppo_epochs": args.num_ppo_epochs,
        "num_mini_batches": args.num_mini_batches,
        "batch_size": args.batch_size,
        "mini_batch_size": args.batch_size // args.num_mini_batches,
        "num_total_batches": args.steps,
        "total_episodes": args.steps * args.batch_size,
        "cliprange": args.cliprange,
        "cliprange_value": args.cliprange_value,
        "vf_coef": args.vf_coef,
        "value_model": args.value_model,
        "ent_coef": args.ent_coef,
        "gamma": args.gamma,
        "lam": args.lam,
        "kl_coef": args.kl_coef,
        "init_kl_coef": args.kl_coef,
        "adap_kl_ctrl": args.adap_kl_ctrl,
        "target": args.target,
        "horizon": args.horizon,
        "kl_estimator": args.kl_estimator,
        "whiten_rewards": args.whiten_rewards,
        "reward_scale": args.reward_scale,
        "use_score_scaling": args.use_score_norm,
        "use_score_norm": args.use_score_norm,
        "score_clip": args.score_clip,
        "missing_eos_penalty": args.missing_eos_penalty,
        "response_length": args.response_length,
        "temperature": args.temperature,
        "do_sample": True,
        "top_k": args.top_k,
        "top_p": args.top_p,
        # HF generate counts min_length over prompt + response for decoder-only models.
        "min_length": query_length + args.min_new_tokens if args.min_new_tokens > 0 else -1,
        "min_new_tokens": args.min_new_tokens,
    }


# ---------------------------------------------------------------------------------------------
# small tensor helpers (TRL trl/trainer/utils.py has the same ones)
def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (x * mask).sum() / mask.sum().clamp(min=1)


def masked_var(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    mean = masked_mean(x, mask)
    n = mask.sum()
    # unbiased, like TRL's masked_var
    return ((x - mean) ** 2 * mask).sum() / (n - 1).clamp(min=1)


def masked_whiten(x: torch.Tensor, mask: torch.Tensor, shift_mean: bool = True) -> torch.Tensor:
    mean, var = masked_mean(x, mask), masked_var(x, mask)
    whitened = (x - mean) * torch.rsqrt(var + 1e-8)
    return whitened if shift_mean else whitened + mean


def logprobs_of(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(logits, dim=-1).gather(-1, tokens.unsqueeze(-1)).squeeze(-1)


class RunningMoments:
    """Running mean/std of scores (TRL legacy ``RunningMoments``, Chan et al. parallel update)."""

    def __init__(self) -> None:
        self.mean, self.var, self.count = 0.0, 1.0, 1e-24

    def update(self, xs: torch.Tensor) -> None:
        n = xs.numel()
        delta = xs.mean().item() - self.mean
        total = self.count + n
        new_sum = xs.var(unbiased=False).item() * n + self.var * self.count + delta**2 * self.count * n / total
        self.mean += delta * n / total
        self.var, self.count = new_sum / total, total

    @property
    def std(self) -> float:
        return math.sqrt(max(self.var, 1e-12))


# ---------------------------------------------------------------------------------------------
# rollout
def filter_logits(logits: torch.Tensor, t: int, args: Args, eos_id: int) -> torch.Tensor:
    """What HF ``generate``'s logits processors do to the temperature-scaled logits.

    The sampled token comes from this *modified* distribution, but its log-prob is taken from
    the full one: exactly how top_k / top_p / min_length make the logged k1 KL go negative
    (TRL FAQ, "What is the concern with negative KL divergence?").
    """
    logits = logits.clone()
    if t < args.min_new_tokens:  # MinNewTokensLengthLogitsProcessor
        logits[:, eos_id] = -math.inf
    if args.top_k > 0:  # TopKLogitsWarper
        kth = torch.topk(logits, min(args.top_k, logits.size(-1)), dim=-1).values[:, -1:]
        logits = logits.masked_fill(logits < kth, -math.inf)
    if args.top_p < 1.0:  # TopPLogitsWarper: drop the tail beyond cumulative mass top_p
        sorted_logits, order = torch.sort(logits, descending=True)
        cum = torch.softmax(sorted_logits, dim=-1).cumsum(-1)
        drop_sorted = cum - torch.softmax(sorted_logits, dim=-1) > args.top_p
        drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
        logits = logits.masked_fill(drop, -math.inf)
    return logits


@torch.no_grad()
def generate(policy: torch.nn.Module, queries: torch.Tensor, args: Args, tok: WordTokenizer, gen: torch.Generator) -> torch.Tensor:
    """Sample up to ``response_length`` tokens per query; positions after EOS become padding."""
    finished = torch.zeros(len(queries), dtype=torch.bool, device=queries.device)
    out: list[torch.Tensor] = []
    past, inputs = None, queries
    attn = queries != tok.pad_token_id
    for t in range(args.response_length):
        # The KV cache is passed and read by position: transformers 4.x names it
        # past_key_values and 5.x cache (and warns about the old name).
        step = policy(inputs, past, attention_mask=attn, use_cache=True)
        past = step[1]
        logits = filter_logits(step.logits[:, -1, :] / (args.temperature + 1e-7), t, args, tok.eos_token_id)
        nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=gen).squeeze(-1)
        nxt = torch.where(finished, torch.full_like(nxt, tok.pad_token_id), nxt)
        out.append(nxt)
        finished |= nxt == tok.eos_token_id
        if bool(finished.all()):
            break
        inputs = nxt.unsqueeze(-1)
        attn = torch.cat([attn, (nxt != tok.pad_token_id).unsqueeze(-1)], dim=1)
    return torch.stack(out, dim=1)


def truncate_at_pad(responses: torch.Tensor, pad_id: int) -> torch.Tensor:
    """Everything from the first pad token on becomes padding.

    The pad token is an ordinary entry of the vocabulary, so sampling can draw it before EOS
    (rarely from the SFT model, often once a high learning rate has scrambled the policy).  TRL
    ends the response there: ``ppo_trainer.py`` takes ``sequence_length =
    first_true_indices(response == pad_token_id) - 1``, scores the text up to it and masks every
    later position.  Without this, a pad in mid-response is a free token (no KL, no loss) that
    a drifting policy learns to emit between words, the score lands where ``seq_last`` (which
    assumes contiguous tokens) points rather than on the last word, and minibatches holding such
    responses produced gradient norms of ~1000 (250x their early level) in high-lr runs.
    """
    after_pad = (responses == pad_id).long().cumsum(dim=1) > 0
    return responses.masked_fill(after_pad, pad_id)


def forward_logprobs(
    model: torch.nn.Module, query_responses: torch.Tensor, ctx: int, temperature: float, pad_id: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probs of the response tokens and the temperature-scaled logits that produced them."""
    attn = query_responses != pad_id
    logits = model(input_ids=query_responses, attention_mask=attn).logits[:, ctx - 1 : -1]
    logits = logits / (temperature + 1e-7)
    return logprobs_of(logits, query_responses[:, ctx:]), logits


def forward_actor_critic(
    policy: torch.nn.Module, value_model: torch.nn.Module, query_responses: torch.Tensor, ctx: int, args: Args, pad_id: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Policy log-probs, logits and values V(s_t) for the response positions, in one pass when
    the critic shares the policy's backbone."""
    attn = query_responses != pad_id
    shared = isinstance(value_model, ValueHead)
    out = policy(input_ids=query_responses, attention_mask=attn, output_hidden_states=shared)
    logits = out.logits[:, ctx - 1 : -1] / (args.temperature + 1e-7)
    logprobs = logprobs_of(logits, query_responses[:, ctx:])
    if shared:
        values = value_model(out.hidden_states[-1])[:, ctx - 1 : -1]
    else:
        values = value_model(query_responses, attention_mask=attn)[:, ctx - 1 : -1]
    return logprobs, logits, values


# ---------------------------------------------------------------------------------------------
def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


ModuleT = TypeVar("ModuleT", bound=torch.nn.Module)


def to_device(model: ModuleT, device: torch.device) -> ModuleT:
    """``model.to(device)``, typed as the model (``Module.to`` moves it in place); transformers
    wraps ``PreTrainedModel.to`` in a decorator whose annotation mypy cannot call."""
    torch.nn.Module.to(model, device)
    return model


def build_policy(args: Args, tok: WordTokenizer, sft_model: GPT2LMHeadModel) -> GPT2LMHeadModel:
    """The initial policy: a copy of the SFT model, or (policy-not-from-sft) something else."""
    if args.policy_init == "sft":
        policy = new_policy(tok, args.model, args.seed)
        policy.load_state_dict(sft_model.state_dict())
        return policy
    if args.policy_init == "undertrained":
        cache = Path(args.cache_dir) if args.cache_dir else None
        return sft_policy(tok, args.model, args.sft, args.seed, steps=max(1, args.sft.steps // 20), cache_dir=cache)
    return new_policy(tok, args.model, args.seed + 10_000)


@dataclass
class LiveCheck:
    """The doctor inside the loop (``simulate --stop-on``): every logged step goes to ``monitor``,
    every ``check_every`` steps it checks, and a new finding that ``stop_on`` names (see
    :func:`ppo_doctor.monitor.matches`) stops the run; ``stopped_by`` / ``stopped_at`` say why."""

    monitor: Monitor
    stop_on: StopOn = None
    check_every: int = 10
    alerts: list[tuple[int, Finding]] = field(default_factory=list)
    stopped_by: Finding | None = None
    stopped_at: int | None = None

    def step(self, update: int, metrics: dict[str, Any], samples: list[dict[str, Any]] | None) -> bool:
        """Feed one step; True when the run must stop."""
        self.monitor.log(update, metrics, samples)
        if update % self.check_every:
            return False
        for f in self.monitor.check():
            self.alerts.append((update, f))
            log.warning("ppo-doctor at step %d: %s", update, describe(f, self.monitor.last_causes))
            if self.stopped_by is None and matches(f, self.stop_on):
                self.stopped_by, self.stopped_at = f, update
        if self.stopped_by is not None:
            log.error("stopping at step %d (stop_on=%r): %s %s", update, self.stop_on, self.stopped_by.code, self.stopped_by.name)
        return self.stopped_by is not None


def make_deterministic(args: Args) -> None:
    """Seed every generator and pin what else varies between processes and machines.

    A scorecard measured on one machine did not reproduce on another (symptoms and suite time
    changed): the thread count, unseeded generators and non-deterministic kernels let two runs
    of one scenario differ.  Python's, numpy's and torch's generators get the run's seed,
    torch uses its deterministic algorithms (CUDA needs a fixed cuBLAS workspace for that), and
    the intra-op thread count is ``args.threads`` (float sums are reduced in a thread-count
    dependent order).
    """
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    random.seed(args.seed)
    np.random.seed(args.seed % 2**32)
    torch.manual_seed(args.seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(args.threads)


def run(args: Args, out_dir: str | Path, live: LiveCheck | None = None) -> dict[str, list[float]]:
    """Train and log one run into ``out_dir``; returns the logged metrics (name -> values).

    A run whose weights become non-finite stops there, as a real run would crash; its last
    logged row shows the NaNs.  With ``live``, the doctor checks the run as it trains and may
    stop it earlier (:class:`LiveCheck`).
    """
    make_deterministic(args)
    device = pick_device(args.device)
    tok = WordTokenizer()
    score_fn = SCORERS[args.scorer]
    cache = Path(args.cache_dir) if args.cache_dir else None

    # ---- models: reference = SFT (frozen); policy and value start from it --------------------
    ref_policy = sft_policy(tok, args.model, args.sft, args.seed, cache_dir=cache)
    policy = to_device(build_policy(args, tok, ref_policy), device)
    value_model: torch.nn.Module = to_device(ValueHead(policy.config) if args.value_model == "shared" else value_model_from(ref_policy), device)
    to_device(ref_policy, device).train(False).requires_grad_(False)
    critic_lr = args.learning_rate if args.critic_learning_rate is None else args.critic_learning_rate
    optimizer = torch.optim.AdamW(
        [
            {"params": list(policy.parameters()), "lr": args.learning_rate},
            {"params": list(value_model.parameters()), "lr": critic_lr},
        ],
        eps=args.adam_epsilon,
        weight_decay=0.0,
        foreach=True,
    )
    params = [p for g in optimizer.param_groups for p in g["params"]]

    all_prompts = prompts()
    query_table = torch.tensor(
        [[tok.bos_token_id] + tok.encode(p) for p in all_prompts], dtype=torch.long, device=device
    )
    ctx = query_table.shape[1]
    gen = torch.Generator(device=device).manual_seed(args.seed)
    cpu_gen = torch.Generator().manual_seed(args.seed + 1)
    mini_bs = args.batch_size // args.num_mini_batches
    kl_coef = args.kl_coef
    score_moments = RunningMoments()

    config = trl_config(args, query_length=ctx)
    logger = RunLogger(
        Path(out_dir),
        config,
        args.formats,
        tb_prefix=args.tb_prefix,
        fake_clock=args.fake_clock,
        epoch_len=len(all_prompts),
    )
    if live is not None and not live.monitor.hparams:
        live.monitor.hparams = dict(config)  # the config the logs carry, so live = offline
    history: dict[str, list[float]] = {}
    start = time.time()
    try:
        for update in range(1, args.steps + 1):
            # ---- 1. rollout ------------------------------------------------------------------
            with torch.no_grad():
                rows = torch.randint(0, len(query_table), (args.batch_size,), generator=cpu_gen)
                queries = query_table[rows.to(device)]
                responses = truncate_at_pad(generate(policy, queries, args, tok, gen), tok.pad_token_id)
                query_responses = torch.cat([queries, responses], dim=1)
                logprobs, _, values = forward_actor_critic(
                    policy, value_model, query_responses, ctx, args, tok.pad_token_id
                )
                ref_logprobs, _ = forward_logprobs(
                    ref_policy, query_responses, ctx, args.temperature, tok.pad_token_id
                )

                # ---- 2. scores and per-token rewards ----------------------------------------
                resp_list = responses.tolist()
                words = [tok.words(r) for r in resp_list]
                contain_eos = (responses == tok.eos_token_id).any(dim=1)
                scores = torch.tensor([score_fn(w).value for w in words], dtype=torch.float32, device=device)
                scores = scores * args.reward_scale
                if update in args.reward_outlier_steps:
                    scores = scores * args.reward_outlier_scale
                if args.missing_eos_penalty is not None:
                    scores = scores - args.missing_eos_penalty * (~contain_eos).float()
                train_scores = scores
                if args.use_score_norm:
                    score_moments.update(scores)
                    train_scores = (scores - score_moments.mean) / score_moments.std
                if args.score_clip is not None:
                    train_scores = train_scores.clamp(-args.score_clip, args.score_clip)

                # the response is valid up to and including its EOS (or to the end if it has none)
                is_pad = responses == tok.pad_token_id
                valid = ~is_pad
                seq_last = valid.long().sum(dim=1) - 1
                logprobs = logprobs.masked_fill(is_pad, INVALID_LOGPROB)
                ref_logprobs = ref_logprobs.masked_fill(is_pad, INVALID_LOGPROB)
                values = values.masked_fill(is_pad, 0.0)

                logr = ref_logprobs - logprobs
                kl = -logr if args.kl_estimator == "k1" else (logr.exp() - 1) - logr
                non_score_reward = -kl_coef * kl
                rewards = non_score_reward.clone()
                # the score lands on the last response token, as in TRL legacy compute_rewards
                rewards[torch.arange(len(rewards), device=device), seq_last] += train_scores
                if args.whiten_rewards:
                    rewards = masked_whiten(rewards, valid.float(), shift_mean=False).masked_fill(is_pad, 0.0)

                # ---- 3. GAE (Schulman et al. 2016), backwards over the response --------------
                gen_len = responses.shape[1]
                lastgaelam = torch.zeros(len(rewards), device=device)
                adv_rev = []
                for t in reversed(range(gen_len)):
                    nextvalues = values[:, t + 1] if t < gen_len - 1 else torch.zeros_like(lastgaelam)
                    delta = rewards[:, t] + args.gamma * nextvalues - values[:, t]
                    lastgaelam = delta + args.gamma * args.lam * lastgaelam
                    adv_rev.append(lastgaelam)
                advantages = torch.stack(adv_rev[::-1], dim=1)
                returns = advantages + values
                vmask = valid.float()
                advantages = masked_whiten(advantages, vmask).masked_fill(is_pad, 0.0)

            # ---- 4. PPO epochs over shuffled minibatches -------------------------------------
            stats: dict[str, list[float]] = {k: [] for k in ("approxkl", "clipfrac", "pg", "vf", "vfclip", "ent", "ratio", "grad")}
            policy.train()
            value_model.train()
            for _ in range(args.num_ppo_epochs):
                perm = torch.randperm(args.batch_size, generator=cpu_gen).to(device)
                for mb_start in range(0, args.batch_size, mini_bs):
                    mb = perm[mb_start : mb_start + mini_bs]
                    mb_mask = vmask[mb]
                    new_logprobs, logits, vpred = forward_actor_critic(
                        policy, value_model, query_responses[mb], ctx, args, tok.pad_token_id
                    )
                    new_logprobs = new_logprobs.masked_fill(is_pad[mb], INVALID_LOGPROB)
                    vpred = vpred.masked_fill(is_pad[mb], 0.0)
                    # clipped value loss (PPO2 / TRL): 0.5 * max(unclipped, clipped) squared error
                    vpredclipped = torch.clamp(
                        vpred, values[mb] - args.cliprange_value, values[mb] + args.cliprange_value
                    )
                    vf_losses1 = (vpred - returns[mb]) ** 2
                    vf_losses2 = (vpredclipped - returns[mb]) ** 2
                    vf_loss = 0.5 * masked_mean(torch.max(vf_losses1, vf_losses2), mb_mask)
                    # clipped policy loss (Schulman et al. 2017, eq. 7)
                    logprobs_diff = new_logprobs - logprobs[mb]
                    ratio = torch.exp(logprobs_diff)
                    pg_losses = -advantages[mb] * ratio
                    pg_losses2 = -advantages[mb] * torch.clamp(ratio, 1.0 - args.cliprange, 1.0 + args.cliprange)
                    pg_loss = masked_mean(torch.max(pg_losses, pg_losses2), mb_mask)
                    probs = torch.softmax(logits, dim=-1)
                    entropy = torch.logsumexp(logits, dim=-1) - (probs * logits).sum(-1)
                    loss = pg_loss + args.vf_coef * vf_loss
                    if args.ent_coef:
                        loss = loss - args.ent_coef * masked_mean(entropy, mb_mask)
                    optimizer.zero_grad(set_to_none=True)
                    loss.backward()
                    # clip_grad_norm_ returns the norm *before* clipping, which is what HF logs
                    max_norm = args.max_grad_norm if args.max_grad_norm is not None else math.inf
                    grad_norm = torch.nn.utils.clip_grad_norm_(params, max_norm)
                    optimizer.step()
                    with torch.no_grad():
                        stats["approxkl"].append(0.5 * masked_mean(logprobs_diff**2, mb_mask).item())
                        stats["clipfrac"].append(masked_mean((pg_losses2 > pg_losses).float(), mb_mask).item())
                        stats["pg"].append(pg_loss.item())
                        stats["vf"].append(vf_loss.item())
                        stats["vfclip"].append(masked_mean((vf_losses2 > vf_losses1).float(), mb_mask).item())
                        stats["ent"].append(masked_mean(entropy, mb_mask).item())
                        stats["ratio"].append(masked_mean(ratio, mb_mask).item())
                        stats["grad"].append(grad_norm.item())
            policy.train(False)
            value_model.train(False)

            # ---- 5. metrics: TRL PPOTrainer names (docs/sources.md#trl-ppo-metrics) + ground truth ------------
            with torch.no_grad():
                mean_kl = kl.sum(1).mean().item()
                # TRL's objective/entropy: seq-sum of -logp of the sampled tokens (padding excluded
                # here; TRL's own sum counts each pad as -1 because of INVALID_LOGPROB)
                seq_neglogp = (-logprobs * vmask).sum(1).mean().item()
                non_score = non_score_reward.sum(1).mean().item()
                ret_var = masked_var(returns, vmask)
                explained = 1.0 - (masked_var(returns - values, vmask) / ret_var).item() if ret_var > 0 else math.nan
                ratios = np.array(stats["ratio"])
                # with the fake clock one step takes one second, so eps is reproducible too
                elapsed = float(update) if args.fake_clock else max(time.time() - start, 1e-9)
                metrics = {
                    "eps": int(update * args.batch_size / elapsed),
                    "objective/kl": mean_kl,
                    "objective/entropy": seq_neglogp,
                    "objective/non_score_reward": non_score,
                    "objective/rlhf_reward": non_score + scores.mean().item(),
                    "objective/scores": scores.mean().item(),
                    "policy/approxkl_avg": float(np.mean(stats["approxkl"])),
                    "policy/clipfrac_avg": float(np.mean(stats["clipfrac"])),
                    "loss/policy_avg": float(np.mean(stats["pg"])),
                    "loss/value_avg": float(np.mean(stats["vf"])),
                    "val/clipfrac_avg": float(np.mean(stats["vfclip"])),
                    "policy/entropy_avg": float(np.mean(stats["ent"])),
                    "val/ratio": float(ratios.mean()),
                    "val/ratio_var": float(ratios.var()),
                    "val/num_eos_tokens": int(contain_eos.sum().item()),
                    "lr": args.learning_rate,
                    "episode": update * args.batch_size,
                    # not logged by TRL's new PPOTrainer, but by its legacy trainer or HF Trainer:
                    "objective/kl_coef": kl_coef,
                    # HF Trainer logs the pre-clip norm of each optimizer step; per PPO update we
                    # log its mean and its largest value (one outlier minibatch shows in the max)
                    "grad_norm": float(np.mean(stats["grad"])),
                    "grad_norm_max": float(np.max(stats["grad"])),
                    "tokens/responses_len_mean": valid.float().sum(1).mean().item(),
                    "ppo/std_scores": scores.std().item(),
                    "ppo/val/mean": masked_mean(values, vmask).item(),
                    "ppo/returns/mean": masked_mean(returns, vmask).item(),
                    "ppo/val/var_explained": explained,
                }
            logger.log(update, metrics)
            for k, v in metrics.items():
                history.setdefault(k, []).append(float(v))
            samples = None
            if args.sample_every > 0 and (update % args.sample_every == 0 or update == 1):
                samples = [
                    {
                        "prompt": all_prompts[int(rows[i])],
                        "response": tok.decode(resp_list[i]),
                        "reward": round(float(scores[i]), 4),
                    }
                    for i in range(min(args.num_samples, args.batch_size))
                ]
                logger.log_samples(update, samples)
            # the row as the logs hold it (trainer_state adds HF's ``epoch``), so live = offline
            row = {k: v for k, v in logger.history[-1].items() if k != "step"}
            if live is not None and live.step(update, row, samples):
                break

            # adaptive KL controller (Ziegler et al. 2019, TRL legacy AdaptiveKLController)
            if args.adap_kl_ctrl:
                err = float(np.clip(mean_kl / args.target - 1.0, -0.2, 0.2))
                kl_coef *= 1.0 + err * args.batch_size / args.horizon

            if not all(torch.isfinite(p).all() for p in policy.parameters()):
                log.warning("%s: the policy's weights became non-finite at step %d; stopping", args.exp_name, update)
                break
    finally:
        logger.close()
    return history

