"""DoctorCallback inside real trainers: a tiny GPT-2 built from a config, on CPU
(:mod:`ppo_doctor.reference.tiny_lm`: the reference grammar's vocabulary as an HF tokenizer).

A fault injected mid-run (NaN weights in an HF Trainer, a reward function that returns NaN in
TRL's GRPOTrainer) must stop training before ``max_steps``; the same runs without the fault must not
be stopped; the reports are written into ``output_dir``.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

from transformers import Trainer, TrainerCallback, TrainingArguments  # noqa: E402

from ppo_doctor.integrations.transformers import DoctorCallback, default_check_every  # noqa: E402
from ppo_doctor.reference.tiny_lm import hf_tokenizer, prompt_texts, random_lm  # noqa: E402

pytestmark = pytest.mark.slow

MAX_STEPS = 60
FAULT_STEP = 15


class NaNWeights(TrainerCallback):  # type: ignore[misc]
    """Fills every weight with NaN after ``step``: the loss and gradient norm are NaN from then on."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None, **kw: Any) -> None:
        if state.global_step == self.step:
            with torch.no_grad():
                for p in model.parameters():
                    p.fill_(float("nan"))


class LMDataset:
    """``n`` short reviews of the grammar as causal-LM examples (labels = input_ids, padding masked)."""

    def __init__(self, tok: Any, n: int = 256) -> None:
        sentences = ["the movie was very good and fun .", "the film was not boring .", "the plot was bad ."]
        enc = [tok(s)["input_ids"] for s in sentences]
        width = max(len(e) for e in enc)
        self.rows = []
        for i in range(n):
            ids = enc[i % len(enc)]
            pad = width - len(ids)
            self.rows.append(
                {
                    "input_ids": torch.tensor(ids + [tok.pad_token_id] * pad),
                    "labels": torch.tensor(ids + [-100] * pad),
                    "attention_mask": torch.tensor([1] * len(ids) + [0] * pad),
                }
            )

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return self.rows[i]


def hf_run(out: Path, fault: bool, max_steps: int = MAX_STEPS, save_strategy: str = "no") -> tuple[Trainer, DoctorCallback]:
    tok = hf_tokenizer()
    args = TrainingArguments(
        output_dir=str(out),
        max_steps=max_steps,
        logging_steps=1,
        per_device_train_batch_size=8,
        learning_rate=1e-3,
        report_to=[],
        save_strategy=save_strategy,
        save_steps=10_000,  # with "steps": no save of its own before max_steps, only the stop's
        use_cpu=True,
        disable_tqdm=True,
    )
    doctor = DoctorCallback(stop_on="error", config={}, plots=False)
    callbacks = ([NaNWeights(FAULT_STEP)] if fault else []) + [doctor]
    trainer = Trainer(model=random_lm(0), args=args, train_dataset=LMDataset(tok), callbacks=callbacks)
    trainer.train()
    return trainer, doctor


def test_default_check_interval() -> None:
    assert default_check_every(60) == 10
    assert default_check_every(1000) == 30
    assert default_check_every(0) == 10


def test_hf_trainer_with_nan_weights_is_stopped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="ppo_doctor"):
        trainer, doctor = hf_run(tmp_path, fault=True, save_strategy="steps")
    assert trainer.state.global_step < MAX_STEPS
    hit = doctor.stopped_by
    assert hit is not None and hit.symptom == "nan" and hit.severity == "error"
    assert hit.start_step is not None and FAULT_STEP <= hit.start_step <= trainer.state.global_step
    # said why: in the log and in log_history, and the trainer saved before exiting
    assert any("stopping training at step" in r.getMessage() and hit.code in r.getMessage() for r in caplog.records)
    assert any("stopping training" in str(h.get("ppo_doctor", "")) for h in trainer.state.log_history)
    assert list(tmp_path.glob("checkpoint-*"))
    assert "steps not spent" in next(str(h["ppo_doctor"]) for h in trainer.state.log_history if "stopping training" in str(h.get("ppo_doctor", "")))
    doc = json.loads((tmp_path / "ppo-doctor.json").read_text())
    assert doc["runs"][0]["verdict"] == "unhealthy"
    assert any(f["code"] == hit.code for f in doc["runs"][0]["findings"])
    assert (tmp_path / "ppo-doctor.html").read_text().lstrip().lower().startswith("<!doctype html")


def test_a_stop_honours_save_strategy_no(tmp_path: Path) -> None:
    trainer, doctor = hf_run(tmp_path, fault=True, save_strategy="no")
    assert doctor.stopped_by is not None and trainer.state.global_step < MAX_STEPS
    assert not list(tmp_path.glob("checkpoint-*"))  # the user saves nothing: neither does the stop


def test_healthy_hf_trainer_is_not_stopped(tmp_path: Path) -> None:
    trainer, doctor = hf_run(tmp_path, fault=False, max_steps=30)  # checks at steps 10, 20, 30
    assert trainer.state.global_step == 30
    assert doctor.stopped_by is None
    assert not [f for f in doctor.alerts if f.severity == "error"]
    assert (tmp_path / "ppo-doctor.json").is_file() and (tmp_path / "ppo-doctor.html").is_file()


def test_an_internal_error_is_logged_once_and_training_goes_on(tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    from ppo_doctor import monitor

    def broken(self: Any) -> list:
        raise RuntimeError("boom")

    monkeypatch.setattr(monitor.Monitor, "check", broken)
    with caplog.at_level(logging.ERROR, logger="ppo_doctor"):
        trainer, doctor = hf_run(tmp_path, fault=False, max_steps=20)
    assert trainer.state.global_step == 20
    errors = [r for r in caplog.records if "internal error" in r.getMessage()]
    assert len(errors) == 1 and errors[0].exc_info is not None


def grpo_run(out: Path, fault: bool, max_steps: int = 40) -> tuple[Any, DoctorCallback]:
    """A short GRPOTrainer run; ``fault``: the reward function returns NaN from step 10 on (a
    reward model that overflows), so the logged reward and the loss turn NaN."""
    pytest.importorskip("trl")
    datasets = pytest.importorskip("datasets")
    from trl import GRPOConfig, GRPOTrainer

    step = [0]

    class StepOf(TrainerCallback):  # type: ignore[misc]
        def on_step_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            step[0] = state.global_step

    def reward(completions: list[str], **kw: Any) -> list[float]:
        if fault and step[0] >= 10:
            return [float("nan")] * len(completions)
        return [float(c.count("good")) + 0.1 * len(c.split()) for c in completions]

    tok = hf_tokenizer()
    ds = datasets.Dataset.from_dict({"prompt": prompt_texts(64)})
    args = GRPOConfig(
        output_dir=str(out),
        max_steps=max_steps,
        logging_steps=1,
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=8,
        learning_rate=1e-3,
        beta=0.0,
        report_to=[],
        save_strategy="no",
        use_cpu=True,
        disable_tqdm=True,
    )
    doctor = DoctorCallback(stop_on="error", config={}, plots=False)
    trainer = GRPOTrainer(model=random_lm(0), reward_funcs=reward, args=args, train_dataset=ds, processing_class=tok, callbacks=[StepOf(), doctor])
    trainer.train()
    return trainer, doctor


def test_grpo_trainer_with_a_nan_reward_is_stopped(tmp_path: Path) -> None:
    trainer, doctor = grpo_run(tmp_path, fault=True)
    assert trainer.state.global_step < 40
    hit = doctor.stopped_by
    assert hit is not None and hit.severity == "error" and hit.symptom == "nan"
    doc = json.loads((tmp_path / "ppo-doctor.json").read_text())
    assert doc["runs"][0]["framework"] == "trl_grpo"
    assert doc["runs"][0]["verdict"] == "unhealthy"


def test_healthy_grpo_trainer_is_not_stopped(tmp_path: Path) -> None:
    trainer, doctor = grpo_run(tmp_path, fault=False, max_steps=20)  # checks at steps 10 and 20
    assert trainer.state.global_step == 20
    assert doctor.stopped_by is None


def test_the_callback_is_visible_with_no_logging_set_up(tmp_path: Path) -> None:
    """As the trainer's own messages are: the start line reaches stderr with no handler configured."""
    import subprocess
    import sys

    code = (
        "from transformers import TrainingArguments, TrainerState, TrainerControl\n"
        "from ppo_doctor.integrations.transformers import DoctorCallback\n"
        f"args = TrainingArguments(output_dir={str(tmp_path)!r}, max_steps=200, report_to=[], use_cpu=True)\n"
        "cb = DoctorCallback(stop_on='error', config={})\n"
        "cb.on_train_begin(args, TrainerState(max_steps=200), TrainerControl())\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert "ppo-doctor: checking every 10 steps of 200, stopping on error" in proc.stderr
