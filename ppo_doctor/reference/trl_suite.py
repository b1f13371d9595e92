"""Real-TRL GRPO runs for validation: TRL's own ``GRPOTrainer`` on the tiny grammar LM, on CPU.

Unlike the reference PPO loop (``ppo.py``), nothing of the training here is ours: the trainer,
its loss, its metric names and both log files are TRL's and transformers' (``report_to=
["tensorboard"]`` writes ``runs/<date>_<host>/events.out.tfevents.*`` with ``train/`` tags, and
``Trainer.save_state`` writes ``trainer_state.json`` with the same numbers under plain keys).
What we supply is what a user supplies: a model (the reference loop's SFT GPT-2 from
``tiny_lm.py``, saved as a local folder because TRL builds its reference model from the path),
a prompt dataset (the grammar's 32 prompts), and reward functions (the grammar's scorers, plus
the faults the scenarios inject into them: noise, NaN, scale, sparsity, a glitch, a constant, a
sign flip, rewards shuffled across the batch, and an easy format reward against a hard
correctness one).

Runs are deterministic: one torch thread, ``torch.use_deterministic_algorithms``, the trainer's
``seed``/``data_seed``, and rewards that depend only on the completion text, the step and the
seed.  Two runs of one :class:`GrpoArgs` log the same values (wall times and ``step_time``
aside): measured, all 14 scenarios' trainer_state.json were identical between two processes on
the same machine, started at different times under different load.

This module imports torch, transformers, datasets and TRL at import time: it is imported only by
``validate --suite trl`` and the tests (the ``[trl]`` extra).
"""

from __future__ import annotations

import math
import random
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import torch

from .grammar import NEGATIVE, POSITIVE, hackable_score, sentiment_score
from .tiny_lm import hf_tokenizer, prompt_texts, random_lm, save_model_dir, sft_lm

REWARDS = ("sentiment", "hackable", "noise", "sparse", "constant", "format", "correct")
TRAINERS = ("grpo", "rloo")


@dataclass
class GrpoArgs:
    """The knobs a scenario changes.  Names follow TRL's ``GRPOConfig`` where TRL has the knob."""

    exp_name: str = "grpo-healthy"
    """run name (the output folder is chosen by the caller)"""
    seed: int = 1
    """GRPOConfig.seed and data_seed, the noise reward's seed; the SFT model is always seed 1's"""
    steps: int = 120
    """optimizer steps (GRPOConfig.max_steps)"""
    learning_rate: float = 5e-5
    """AdamW peak learning rate (TRL's default 1e-6 is for billion-parameter models; this
    57-token GPT-2 needs the reference loop's order of magnitude).  Measured over 120 steps,
    seeds 1-3: the reward rises from about 0 to 0.3-0.4 with KL <= 0.13 nats per token; at 1e-4
    seed 2's KL reaches 0.84 and its responses double in length, 2e-4 reaches 2.9 on seed 1."""
    lr_scheduler_type: str = "constant"
    """GRPOConfig.lr_scheduler_type ('constant', 'cosine', 'linear', ...; transformers' default is
    'linear', the suite keeps the rate fixed unless a scenario asks for a schedule)"""
    warmup_steps: float = 0
    """GRPOConfig.warmup_steps: steps of linear warm-up; a float below 1 is a share of ``steps``
    (transformers 5 reads it so; ``warmup_ratio`` is gone)"""
    gradient_accumulation_steps: int = 1
    """GRPOConfig.gradient_accumulation_steps: the step's ``prompts_per_step * num_generations``
    completions are generated at once and trained in this many micro-batches (TRL's
    ``steps_per_generation`` defaults to it), so one optimizer step sees the same samples"""
    beta: float = 0.04
    """KL coefficient (TRL's default is 0, which logs no KL; 0.04 was its default before 0.19 and
    is DeepSeekMath's value)"""
    temperature: float = 1.0
    num_generations: int = 8
    """completions per prompt (the group)"""
    prompts_per_step: int = 4
    """prompts per optimizer step: per_device_train_batch_size = prompts_per_step * num_generations"""
    max_completion_length: int = 16
    max_grad_norm: float = 1.0
    """gradient clipping; 0 turns it off (the Trainer then logs no grad_norm)"""
    epsilon: float = 0.2
    """GRPOConfig.epsilon: the PPO clip range's lower side (and upper side unless epsilon_high)"""
    epsilon_high: float | None = None
    """GRPOConfig.epsilon_high: DAPO's clip-higher upper bound (0.28 in the DAPO paper); only
    matters when the policy moves within a generation batch (num_iterations > 1)"""
    scale_rewards: str = "group"
    """GRPOConfig.scale_rewards: 'group' (default), 'batch' or 'none'"""
    rewards: tuple[str, ...] = ("sentiment",)
    """reward functions, from :data:`REWARDS` (each is logged as rewards/<name>/{mean,std})"""
    reward_weights: tuple[float, ...] | None = None
    """GRPOConfig.reward_weights: one weight per reward function (None: all 1); the logged
    ``reward`` is the weighted sum, the per-function means are logged unweighted"""
    reward_scale: float = 1.0
    """every reward function's output is multiplied by this"""
    nan_from_step: int | None = None
    """from this (1-based) step on, every reward function returns NaN"""
    glitch_steps: tuple[int, ...] = ()
    """at these (1-based) steps, every reward is ``glitch_value`` (a broken scorer for a moment)"""
    glitch_value: float = 50.0
    constant_value: float = 1.0
    """what the 'constant' reward pays for every completion (every group has zero spread, so
    every advantage and the policy gradient are exactly zero)"""
    sign_flip_from_step: int | None = None
    """from this (1-based) step on, every reward is negated (a scorer whose sign was inverted by
    a deploy: what the policy learned is now punished)"""
    shuffle_rewards: bool = False
    """every step, the rewards are permuted across the batch (seeded by seed and step): each
    completion is paid another's score, so the reward carries no information about the text"""
    format_max_words: int = 3
    """'format' pays 1 for a single sentence of at most this many words ending in '.'"""
    sparse_min_positive: int = 3
    """'sparse' pays 1 only for a completion with at least this many positive adjectives"""
    entropy_coef: float = 0.0
    num_iterations: int = 1
    """GRPOConfig.num_iterations: policy updates per generation batch (mu in the GRPO paper)"""
    loss_type: str = "dapo"
    """TRL 1.16's default"""
    trainer: str = "grpo"
    """'grpo' (GRPOTrainer) or 'rloo' (RLOOTrainer, same layout; it has no scale_rewards,
    entropy_coef or loss_type, so those fields are ignored for it)"""
    init: str = "sft"
    """'sft' (the reference loop's SFT model) or 'random' (untrained: instant, for smoke tests)"""
    cache_dir: str | None = None
    """SFT cache folder (default ``~/.cache/ppo_doctor``)"""
    threads: int = 1
    """torch intra-op threads during the run (a fixed count keeps float sums in one order)"""

    def __post_init__(self) -> None:
        unknown = set(self.rewards) - set(REWARDS)
        if unknown or not self.rewards:
            raise ValueError(f"rewards must be a non-empty subset of {REWARDS}, got {self.rewards}")
        if self.trainer not in TRAINERS:
            raise ValueError(f"trainer must be one of {TRAINERS}, got {self.trainer!r}")
        if self.init not in ("sft", "random"):
            raise ValueError(f"init must be 'sft' or 'random', got {self.init!r}")
        if self.reward_weights is not None and len(self.reward_weights) != len(self.rewards):
            raise ValueError(f"reward_weights needs one weight per reward function, got {self.reward_weights} for {self.rewards}")
        if (self.prompts_per_step * self.num_generations) % self.gradient_accumulation_steps:
            raise ValueError("gradient_accumulation_steps must divide prompts_per_step * num_generations")


class Reward:
    """One reward function as TRL calls it: ``f(prompts=, completions=, trainer_state=, ...)``.

    TRL names the logged component after ``__name__`` (``rewards/<name>/mean``).  The step is
    read from ``trainer_state.global_step`` (the number of optimizer steps done, so the rewards
    of step N are computed at global_step N-1).
    """

    def __init__(self, name: str, args: GrpoArgs):
        self.__name__ = name
        self.args = args
        self.score: Callable[[str, int, int], float] = getattr(self, f"_{name}")

    def __call__(self, completions: list[str], trainer_state: Any = None, **_: Any) -> list[float | None]:
        step = (trainer_state.global_step if trainer_state is not None else 0) + 1
        a = self.args
        if a.nan_from_step is not None and step >= a.nan_from_step:
            return [math.nan] * len(completions)
        if step in a.glitch_steps:
            return [a.glitch_value] * len(completions)
        sign = -1.0 if a.sign_flip_from_step is not None and step >= a.sign_flip_from_step else 1.0
        values: list[float | None] = [sign * a.reward_scale * self.score(c, step, i) for i, c in enumerate(completions)]
        if a.shuffle_rewards:
            # one permutation per step for every reward function, so the components stay paired
            random.Random(f"{a.seed}/{step}/shuffle").shuffle(values)
        return values

    @staticmethod
    def _sentiment(text: str, step: int, i: int) -> float:
        return sentiment_score(text.split()).value

    @staticmethod
    def _hackable(text: str, step: int, i: int) -> float:
        return hackable_score(text.split()).value

    def _noise(self, text: str, step: int, i: int) -> float:
        # depends on (seed, step, index) only: the reward carries no information about the text
        return random.Random(f"{self.args.seed}/{step}/{i}").gauss(0.0, 1.0)

    def _sparse(self, text: str, step: int, i: int) -> float:
        return float(sum(w in POSITIVE for w in text.split()) >= self.args.sparse_min_positive)

    def _constant(self, text: str, step: int, i: int) -> float:
        return self.args.constant_value

    def _format(self, text: str, step: int, i: int) -> float:
        # the easy component: one short sentence closed by a full stop.  The grammar writes it
        # for a quarter of its reviews (measured on 5000 samples), a mode the policy can sharpen
        # quickly; a review of three words has room for one adjective only: it conflicts with
        # 'correct' (no sample of the 5000 pays both).
        words = text.split()
        return float(0 < len(words) <= self.args.format_max_words and words[-1] == "." and words.count(".") == 1)

    def _correct(self, text: str, step: int, i: int) -> float:
        # the hard component: a wholly positive review with at least two positive adjectives
        # (22 % of the grammar's samples)
        words = text.split()
        return float(sum(w in POSITIVE for w in words) >= 2 and not any(w in NEGATIVE for w in words))


def trainer_config(args: GrpoArgs, out: str | Path) -> Any:
    """The GRPOConfig (or RLOOConfig) a run of ``args`` writing into ``out`` trains with."""
    common: dict[str, Any] = dict(
        output_dir=str(out),
        max_steps=args.steps,
        per_device_train_batch_size=args.prompts_per_step * args.num_generations // args.gradient_accumulation_steps,
        num_generations=args.num_generations,
        max_completion_length=args.max_completion_length,
        learning_rate=args.learning_rate,
        lr_scheduler_type=args.lr_scheduler_type,
        warmup_steps=args.warmup_steps,
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        beta=args.beta,
        temperature=args.temperature,
        max_grad_norm=args.max_grad_norm,
        epsilon=args.epsilon,
        epsilon_high=args.epsilon_high,
        reward_weights=list(args.reward_weights) if args.reward_weights is not None else None,
        logging_steps=1,
        report_to=["tensorboard"],
        use_cpu=True,
        bf16=False,
        seed=args.seed,
        data_seed=args.seed,
        full_determinism=True,
        save_strategy="no",
        disable_tqdm=True,
        dataloader_num_workers=0,
        # gradient checkpointing (TRL's default) only costs time on a 2-layer model
        gradient_checkpointing=False,
    )
    if args.trainer == "rloo":
        from trl import RLOOConfig

        return RLOOConfig(**common)
    from trl import GRPOConfig

    return GRPOConfig(
        **common,
        scale_rewards=args.scale_rewards,
        entropy_coef=args.entropy_coef,
        loss_type=args.loss_type,
        num_iterations=args.num_iterations,
    )


def run(args: GrpoArgs, out: str | Path, callbacks: Sequence[Any] = ()) -> list[dict[str, float]]:
    """Train GRPO (or RLOO) with ``args``, writing TRL's logs into ``out``; return the trainer's
    log rows (``trainer.state.log_history``: one per step, then the run's totals).
    ``callbacks``: more ``TrainerCallback``s (``DoctorCallback`` for the live tests).

    The model folder TRL needs lives in a temporary directory, so ``out`` holds only what the
    trainer wrote (``runs/``, ``trainer_state.json``).
    """
    from datasets import Dataset  # type: ignore[import-untyped]
    from transformers.trainer_callback import PrinterCallback
    from trl import GRPOTrainer, RLOOTrainer

    out = Path(out)
    threads = torch.get_num_threads()
    deterministic = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(args.threads)
    try:
        with tempfile.TemporaryDirectory(prefix="ppo-doctor-tiny-lm-") as tmp:
            model = sft_lm(1, cache_dir=Path(args.cache_dir) if args.cache_dir else None) if args.init == "sft" else random_lm(args.seed)
            model_dir = save_model_dir(model, Path(tmp) / "model")
            # every prompt appears once per epoch; enough rows that no run ends its first epoch
            dataset = Dataset.from_dict({"prompt": prompt_texts(32 * max(1, args.steps * args.prompts_per_step // 32 + 1))})
            trainer_class = RLOOTrainer if args.trainer == "rloo" else GRPOTrainer
            trainer = trainer_class(
                model=str(model_dir),
                reward_funcs=[Reward(name, args) for name in args.rewards],
                args=trainer_config(args, out),
                train_dataset=dataset,
                processing_class=hf_tokenizer(),
                callbacks=list(callbacks) or None,
            )
            # disable_tqdm makes transformers print every log row to stdout; the logs are in files
            trainer.remove_callback(PrinterCallback)
            trainer.train()
            trainer.save_state()
            return [dict(row) for row in trainer.state.log_history]
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(deterministic)
