"""Offline preference optimisation (TRL's DPOTrainer and its kin) is told from OnlineDPOTrainer,
and judged as what it is (issue 37: "a guess is not a fact"; "causes fit the run").

DPOTrainer, KTOTrainer, ORPO and CPO log the same implicit rewards as OnlineDPOTrainer
(``rewards/chosen|rejected|margins|accuracies``, ``logps/*``), but they sample nothing: no reward,
no KL series, no critic.  A LLaMA-Factory ORPO log and TRL DPO logs were named "TRL
OnlineDPOTrainer", told they lacked ``objective/scores`` and a KL as if those were gaps, and given
GRPO's advice (``frac_reward_zero_std``) for an accuracy stuck at chance."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest

from ppo_doctor import analyze
from ppo_doctor.canonical.frameworks import guess_framework

HF = ["loss", "grad_norm", "learning_rate", "epoch"]


def _trl_keys(module: str) -> list[str]:
    """The literal metric names a TRL trainer module logs (``_metrics[...]``, ``self.stats[...]``,
    ``metrics[f"{prefix}..."]``)."""
    spec = importlib.util.find_spec("trl")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("trl is not installed")
    src = (Path(next(iter(spec.submodule_search_locations))) / module).read_text(encoding="utf-8")
    keys = set(re.findall(r'_metrics\[mode\]\["([^"]+)"\]', src))
    keys |= set(re.findall(r'self\.stats\["([^"]+)"\]', src)) | set(re.findall(r'metrics\[f"\{prefix\}([^"]+)"\]', src))
    assert keys, f"no metric names found in trl/{module}: the logging code moved"
    return sorted(keys)


@pytest.mark.parametrize(
    "module, framework",
    [
        ("trainer/dpo_trainer.py", "trl_dpo"),
        ("trainer/kto_trainer.py", "trl_dpo"),
        ("experimental/orpo/orpo_trainer.py", "trl_dpo"),
        ("experimental/online_dpo/online_dpo_trainer.py", "trl_online_dpo"),
    ],
)
@pytest.mark.parametrize("prefix", ["", "train/"])
def test_trl_preference_trainers_are_told_apart_by_what_only_sampling_logs(module, framework, prefix):
    assert guess_framework([prefix + k for k in _trl_keys(module) + HF]) == framework


# LLaMA-Factory's ORPO writes TRL's DPO names plus its own ``sft_loss`` / ``odds_ratio_loss``.
LLAMA_FACTORY_ORPO = ["rewards/chosen", "rewards/rejected", "rewards/accuracies", "rewards/margins", "logps/chosen",
                      "logps/rejected", "logits/chosen", "logits/rejected", "sft_loss", "odds_ratio_loss"]


def test_llama_factory_orpo_is_an_offline_preference_trainer():
    assert guess_framework(LLAMA_FACTORY_ORPO + HF) == "trl_dpo"


def _dpo_state(path: Path, accuracy: np.ndarray) -> Path:
    """A DPOTrainer checkpoint's trainer_state.json whose batch accuracy is ``accuracy``."""
    rng = np.random.default_rng(0)
    rows = []
    for i, acc in enumerate(accuracy):
        margin = float(acc - 0.5 + rng.normal(0, 0.01))
        rows.append(
            {"step": 10 * (i + 1), "epoch": (i + 1) / len(accuracy), "loss": 0.69 - margin / 4, "grad_norm": 3.0,
             "learning_rate": 5e-7, "rewards/chosen": margin / 2, "rewards/rejected": -margin / 2,
             "rewards/accuracies": float(acc), "rewards/margins": margin, "logps/chosen": -120.0,
             "logps/rejected": -125.0, "logits/chosen": -1.5, "logits/rejected": -1.6}
        )
    ckpt = path / "dpo" / f"checkpoint-{10 * len(accuracy)}"
    ckpt.mkdir(parents=True)
    (ckpt / "trainer_state.json").write_text(
        json.dumps({"global_step": 10 * len(accuracy), "max_steps": 10 * len(accuracy), "logging_steps": 10, "log_history": rows})
    )
    return path


def _one_run(path: Path):
    (rr,) = analyze(str(path)).runs
    return rr


def test_a_dpo_run_has_no_reward_or_kl_by_design(tmp_path):
    learning = 0.5 + 0.4 * (1 - np.exp(-np.arange(60) / 15)) + np.random.default_rng(1).normal(0, 0.02, 60)
    rr = _one_run(_dpo_state(tmp_path, learning))
    assert rr.run.framework == "trl_dpo" and rr.verdict == "healthy"
    notes = {f.code: f for f in rr.findings if f.code in ("PD901", "PD902")}
    assert {c: f.severity for c, f in notes.items()} == {"PD901": "info", "PD902": "info"}
    assert "samples nothing to score" in notes["PD901"].message
    assert "offline preference optimisation" in notes["PD902"].message
    assert "OnlineDPO" not in " ".join(rr.run.by_design.values())
    assert rr.run.by_design["critic"] == "critic-free (TRL's DPOTrainer family has no value function)"


def test_a_dpo_accuracy_stuck_at_chance_gets_preference_causes_not_grpo_ones(tmp_path):
    chance = 0.5 + np.random.default_rng(2).normal(0, 0.03, 60)
    rr = _one_run(_dpo_state(tmp_path, chance))
    assert rr.verdict == "unhealthy" and "stagnation" in rr.symptoms_at_or_above("warning")
    causes = {c.id: c for c in rr.causes}
    assert causes["weak-learning-signal"].title == "The preference pairs give no usable signal"
    fixes = " ".join(fx for c in rr.causes for fx in c.fixes)
    assert "frac_reward_zero_std" not in fixes and "entropy bonus" not in fixes and "KL coefficient" not in fixes
    # the run's rate (5e-7) is under DPOConfig's default, so raising it is advice it can use
    assert any("DPOConfig's default, 1e-6" in fx for fx in causes["lr-too-low"].fixes)
    # PPO's and the critic's causes cannot explain a run that has neither
    assert not {"too-many-ppo-epochs", "value-undertrained", "gae-lambda", "reward-not-normalized"} & set(causes)
