"""TRL's own trainers, run for a few steps: every metric they log must be mapped, and two runs
of one configuration must log the same values.

The short form trains a random tiny GPT-2 (``tiny_lm.random_lm``, no SFT) for 4 steps with
``GRPOTrainer`` and ``RLOOTrainer``, so a TRL release that renames or adds a metric fails here.
The whole GRPO fault suite runs in the slow test at the end when ``PPO_DOCTOR_FULL_SUITES`` is
set (it takes longer than the rest of the test suite together), and in ``ppo-doctor validate
--suite trl``.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("datasets")
pytest.importorskip("trl")

from ppo_doctor import load_runs  # noqa: E402
from ppo_doctor.results import SYMPTOMS  # noqa: E402
from ppo_doctor.diagnose.catalog import CAUSE_IDS  # noqa: E402
from ppo_doctor.reference.trl_scenarios import TRL_SCENARIOS  # noqa: E402
from ppo_doctor.reference.trl_suite import GrpoArgs, Reward, run, trainer_config  # noqa: E402

# The run's totals (HF Trainer's last log row), not series.
TOTALS = {"train_runtime", "train_samples_per_second", "train_steps_per_second", "train_loss", "total_flos"}
# Timings, different on every run.
TIMINGS = {"step_time"}

SHORT = dict(steps=4, prompts_per_step=2, num_generations=4, max_completion_length=8, init="random",
             learning_rate=1e-3)
# Between them the configurations make the trainers log every optional metric of the default loss:
# kl (beta > 0), entropy_coef and policy_loss (entropy bonus on), one rewards/<name>/{mean,std} pair
# per reward function; and the beta = 0 layout without kl.
CONFIGS = {
    "grpo-kl-two-rewards": dict(beta=0.04, rewards=("sentiment", "hackable"), entropy_coef=0.01),
    "grpo-beta0": dict(beta=0.0, loss_type="grpo"),
    "rloo": dict(trainer="rloo", beta=0.05),
}


def _step_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if not TOTALS & r.keys()]


def _logged_names(rows: list[dict[str, Any]]) -> set[str]:
    return {k for r in _step_rows(rows) for k in r if k != "step"}


@pytest.fixture(scope="module")
def short_runs(tmp_path_factory) -> dict[str, tuple[Path, list[dict[str, Any]]]]:
    out = {}
    for name, changes in CONFIGS.items():
        folder = tmp_path_factory.mktemp(name)
        out[name] = folder, run(GrpoArgs(exp_name=name, **SHORT, **changes), folder)  # type: ignore[arg-type]
    return out


@pytest.mark.parametrize("name", list(CONFIGS))
def test_every_metric_trl_logs_is_mapped(short_runs, name):
    folder, rows = short_runs[name]
    logged = _logged_names(rows)
    assert {"reward", "reward_std", "entropy", "grad_norm", "loss"} <= logged, logged
    assert ("kl" in logged) == (CONFIGS[name].get("beta", 0.0) != 0.0)
    (loaded,) = load_runs(folder)
    assert loaded.framework == ("trl_rloo" if name == "rloo" else "trl_grpo")
    # TensorBoard writes train/<name>, trainer_state.json <name>: whichever the reader kept
    unmapped = sorted(n for n in logged if not ({n, f"train/{n}"} & loaded.mapping.keys()))
    assert not unmapped, f"{name}: TRL metrics with no canonical name: {unmapped}"


def test_each_reward_function_keeps_its_own_series(short_runs):
    folder, _ = short_runs["grpo-kl-two-rewards"]
    (loaded,) = load_runs(folder)
    per_function = {t: m for t, m in loaded.mapping.items() if t.removeprefix("train/").startswith("rewards/")}
    assert len(per_function) == 4, per_function  # {sentiment, hackable} x {mean, std}
    assert len(set(per_function.values())) == 4, per_function


def test_the_logs_are_the_trainers_own(short_runs):
    folder, rows = short_runs["grpo-kl-two-rewards"]
    assert (folder / "trainer_state.json").is_file()
    assert list(folder.glob("runs/*/events.out.tfevents.*"))
    assert [r["step"] for r in _step_rows(rows)] == [1, 2, 3, 4]


def test_same_args_same_logged_values(short_runs, tmp_path):
    folder, rows = short_runs["grpo-kl-two-rewards"]
    again = run(GrpoArgs(exp_name="again", **SHORT, **CONFIGS["grpo-kl-two-rewards"]), tmp_path)  # type: ignore[arg-type]

    def values(rs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in r.items() if k not in TIMINGS} for r in _step_rows(rs)]

    assert values(again) == values(rows)


def test_a_nan_reward_is_null_in_trainer_state_and_absent_from_tensorboard(tmp_path):
    # What the nan-reward scenario shows a reader: TRL 1.16 logs None for an all-NaN reward, which
    # trainer_state.json writes as null and the TensorBoard callback skips (it writes numbers only)
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run(GrpoArgs(exp_name="nan", **{**SHORT, "steps": 3}, nan_from_step=2), tmp_path)  # type: ignore[arg-type]
    state = json.loads((tmp_path / "trainer_state.json").read_text())
    rewards = [row["reward"] for row in _step_rows(state["log_history"])]
    assert math.isfinite(rewards[0]) and rewards[1:] == [None, None]
    (events,) = tmp_path.glob("runs/*/events.out.tfevents.*")
    acc = EventAccumulator(str(events))
    acc.Reload()
    assert [e.step for e in acc.Scalars("train/reward")] == [1]
    assert [e.step for e in acc.Scalars("train/grad_norm")] == [1, 2, 3]


class _State:
    """What a reward function reads of TRL's trainer state: the optimizer steps done."""

    def __init__(self, global_step: int):
        self.global_step = global_step


def test_a_constant_reward_gives_every_group_zero_spread():
    reward = Reward("constant", GrpoArgs(rewards=("constant",), constant_value=1.0))
    assert reward(["good .", "bad bad !", ""], trainer_state=_State(0)) == [1.0, 1.0, 1.0]


def test_the_sign_flip_negates_every_reward_from_its_step_on():
    reward = Reward("sentiment", GrpoArgs(sign_flip_from_step=3))
    texts = ["good .", "bad ."]
    assert reward(texts, trainer_state=_State(1)) == [math.tanh(1), math.tanh(-1)]  # step 2
    assert reward(texts, trainer_state=_State(2)) == [-math.tanh(1), -math.tanh(-1)]  # step 3
    assert reward(texts, trainer_state=_State(50)) == [-math.tanh(1), -math.tanh(-1)]


def test_shuffled_rewards_are_a_seeded_permutation_of_the_scores():
    texts = ["good .", "bad .", "good and great .", "dull .", "long .", "fun !"] * 4
    plain = Reward("sentiment", GrpoArgs())(texts, trainer_state=_State(4))
    shuffled = Reward("sentiment", GrpoArgs(shuffle_rewards=True))(texts, trainer_state=_State(4))
    assert sorted(shuffled) == sorted(plain) and shuffled != plain
    # deterministic, and one permutation per step for every reward function
    again = Reward("sentiment", GrpoArgs(shuffle_rewards=True))(texts, trainer_state=_State(4))
    assert again == shuffled
    assert Reward("sentiment", GrpoArgs(shuffle_rewards=True))(texts, trainer_state=_State(5)) != shuffled


def test_format_and_correctness_conflict():
    args = GrpoArgs(rewards=("format", "correct"), reward_weights=(1.0, 0.2))
    fmt, correct = Reward("format", args), Reward("correct", args)
    texts = ["very good .", "good and great .", "good and great", "good !", "really good , the cast was great ."]
    assert fmt(texts, trainer_state=_State(0)) == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert correct(texts, trainer_state=_State(0)) == [0.0, 1.0, 1.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="one weight per reward"):
        GrpoArgs(rewards=("format", "correct"), reward_weights=(1.0,))


def test_the_new_knobs_reach_grpo_config(tmp_path):
    args = GrpoArgs(
        steps=100, lr_scheduler_type="cosine", warmup_steps=0.1, gradient_accumulation_steps=4,
        epsilon_high=0.28, rewards=("format", "correct"), reward_weights=(1.0, 0.2), max_grad_norm=0.0,
    )
    config = trainer_config(args, tmp_path)
    assert config.lr_scheduler_type == "cosine" and config.get_warmup_steps(100) == 10
    # one generation batch of prompts_per_step x num_generations per optimizer step, in 4 micro-batches
    assert config.per_device_train_batch_size * config.gradient_accumulation_steps == args.prompts_per_step * args.num_generations
    assert config.generation_batch_size == args.prompts_per_step * args.num_generations
    assert config.epsilon_high == 0.28 and config.reward_weights == [1.0, 0.2] and config.max_grad_norm == 0.0
    with pytest.raises(ValueError, match="gradient_accumulation_steps"):
        GrpoArgs(gradient_accumulation_steps=3)


def test_scenarios_are_valid_and_labelled():
    assert sum(sc.healthy for sc in TRL_SCENARIOS.values()) >= 2
    for sc in TRL_SCENARIOS.values():
        assert sc.suite == "trl"
        assert sc.expected <= set(SYMPTOMS) and sc.allowed <= set(SYMPTOMS)
        assert not (sc.expected & sc.allowed)
        assert "value_instability" not in sc.expected | sc.allowed  # critic-free
        assert sc.healthy == (sc.top_cause is None)
        assert sc.top_cause is None or sc.top_cause in CAUSE_IDS
        sc.args()  # valid GrpoArgs fields and values


def test_validate_help_imports_neither_torch_nor_trl():
    code = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from cli_invoke import run_cli\n"
        "r = run_cli(['validate', '--help'])\n"
        "assert r.exit_code == 0 and '--suite' in r.output, r.output\n"
        "assert not {'torch', 'transformers', 'trl', 'datasets'} & sys.modules.keys()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_validate_rejects_a_scenario_of_the_other_suite():
    from cli_invoke import run_cli

    r = run_cli(["validate", "--suite", "trl", "-s", "lr-x100"])
    assert r.exit_code == 2 and "unknown trl scenario" in r.output and "grpo-lr-x100" in r.output


@pytest.mark.slow
def test_cli_validate_trl_writes_its_section_and_keeps_the_ppo_one(tmp_path):
    from cli_invoke import run_cli

    card = tmp_path / "scorecard.md"
    card.write_text("# Scenario scorecard\n\nthe PPO suite's section\n", encoding="utf-8")
    r = run_cli(["validate", "--suite", "trl", "-s", "grpo-healthy-s1,grpo-reward-glitch",
                                 "--steps", "3", "-o", str(card), "--workdir", str(tmp_path / "runs")])
    assert r.exit_code == 0, r.output
    text = card.read_text(encoding="utf-8")
    assert text.startswith("# Scenario scorecard\n\nthe PPO suite's section\n")
    assert "# GRPO scenario scorecard (real TRL GRPOTrainer)" in text and "| grpo-reward-glitch |" in text
    assert (tmp_path / "runs" / "grpo-healthy-s1" / "trainer_state.json").is_file()


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("PPO_DOCTOR_FULL_SUITES"),
    reason="the full GRPO suite takes 5-20 min on one core (1191 s measured on the shared 2-core VM); "
    "set PPO_DOCTOR_FULL_SUITES=1 or run `ppo-doctor validate --suite trl`",
)
def test_full_grpo_suite_trains_and_is_read(tmp_path):
    """Every scenario trains with the real trainer and is read as one run."""
    from ppo_doctor.reference.validate import run_suite

    outcomes = run_suite(list(TRL_SCENARIOS.values()), tmp_path)
    assert not [o.failure for o in outcomes if o.failure]
    assert len(outcomes) == len(TRL_SCENARIOS)
