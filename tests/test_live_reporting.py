"""DoctorCallback says what it finds where the user looks (ppo_doctor/integrations/reporting.py):
the trainer's TensorBoard folder, its W&B run (offline), a webhook; nothing there with
``report_to="none"``.  A real HF ``Trainer`` on a tiny regression model (a second or two of
training); a callback fills the weights with NaN at step 12, so the loss is NaN from then on and
the doctor stops the run with an error.  Everything is read back with ppo_doctor's own readers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

from transformers import Trainer, TrainerCallback, TrainingArguments  # noqa: E402

import ppo_doctor  # noqa: E402
from ppo_doctor.ingest.tensorboard import reader as tensorboard  # noqa: E402
from ppo_doctor.integrations.reporting import ALERT_TAG, OUR_SUFFIX  # noqa: E402
from ppo_doctor.integrations.transformers import DoctorCallback  # noqa: E402
from test_webhook import _Server  # noqa: E402

MAX_STEPS = 40
FAULT_STEP = 12


class Regression(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 1)

    def forward(self, x: Any, labels: Any) -> dict[str, Any]:
        return {"loss": torch.nn.functional.mse_loss(self.linear(x).squeeze(-1), labels)}


class NaNWeights(TrainerCallback):  # type: ignore[misc]
    def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None, **kw: Any) -> None:
        if state.global_step == FAULT_STEP:
            with torch.no_grad():
                for p in model.parameters():
                    p.fill_(float("nan"))


def _data(n: int = 512) -> list[dict[str, Any]]:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 4, generator=g)
    y = x @ torch.tensor([1.0, -2.0, 0.5, 0.0])
    return [{"x": x[i], "labels": y[i]} for i in range(n)]


def _train(out: Path, report_to: list[str] | str, webhook: str | None = None) -> DoctorCallback:
    doctor = DoctorCallback(stop_on="error", check_every=5, write_reports=False, webhook=webhook)
    args = TrainingArguments(
        output_dir=str(out),
        max_steps=MAX_STEPS,
        logging_steps=1,
        per_device_train_batch_size=8,
        learning_rate=1e-2,
        report_to=report_to,
        save_strategy="no",
        use_cpu=True,
        disable_tqdm=True,
        seed=0,
    )
    trainer = Trainer(model=Regression(), args=args, train_dataset=_data(), callbacks=[NaNWeights(), doctor])
    trainer.train()
    return doctor


@pytest.fixture
def server() -> Iterator[_Server]:
    s = _Server()
    yield s
    s.stop()


def test_tensorboard_gets_the_alerts_and_the_counts(tmp_path: Path, server: _Server) -> None:
    out = tmp_path / "out"
    doctor = _train(out, ["tensorboard"], webhook=server.url)
    assert doctor.stopped_by is not None and doctor.stopped_by.severity == "error"
    stop_step = doctor.monitor.last_step if doctor.monitor else None
    assert stop_step is not None and stop_step < MAX_STEPS

    (ours,) = out.glob("runs/*/*" + OUR_SUFFIX)
    assert len(list(ours.parent.glob("events.out.tfevents.*"))) == 2  # the trainer's and ours, one folder
    (raw,) = tensorboard.read(ours)
    alerts = [t for t in raw.texts if t.tag.startswith(ALERT_TAG)]
    assert any(doctor.stopped_by.code in t.text for t in alerts)
    assert any(t.text.startswith("stopping training") and t.step == stop_step for t in alerts)

    # the project's reader: one run (our file is no second session), our counts in its frame,
    # never read as a metric or a text sample of the run
    (run,) = ppo_doctor.load_runs(out)
    assert run.id == "out"
    steps, errors = run.frame.arrays("ppo_doctor/errors")
    assert errors[-1] >= 1 and steps[-1] == stop_step and errors[0] == 0
    assert "ppo_doctor/errors" in run.unmapped and not any(t.tag.startswith("ppo_doctor/") for t in run.texts)
    assert doctor.stopped_by.code in {f.code for f in ppo_doctor.analyze(out).runs[0].findings}

    # the webhook got the error and the stop, as Slack/Discord JSON
    doctor.webhook.close(wait=5)  # type: ignore[union-attr]
    texts = [b["text"] for b in server.bodies]
    assert any(doctor.stopped_by.code in t and t.startswith("ppo-doctor [out at step") for t in texts)
    assert any("stopping training" in t for t in texts) and all(b["content"] == b["text"][:2000] for b in server.bodies)


def test_wandb_offline_run_gets_the_alerts_summary_and_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wandb = pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_PROJECT", "ppo-doctor-test")
    doctor = _train(tmp_path / "out", ["wandb"])
    wandb.finish()
    assert doctor.stopped_by is not None

    (run,) = ppo_doctor.load_runs(tmp_path / "wandb")
    steps, errors = run.frame.arrays("ppo_doctor/errors")
    assert errors.max() >= 1 and steps.max() < MAX_STEPS  # against the trainer's global step
    assert doctor.stopped_by.code in {f.code for f in ppo_doctor.analyze(tmp_path / "wandb").runs[0].findings}

    # alerts and summary are records of the .wandb file: read with the reader's own decoder
    from ppo_doctor.ingest.wandb.framing import iter_records
    from ppo_doctor.ingest.wandb.proto import fields, str_fields

    (log_file,) = (tmp_path / "wandb").glob("offline-run-*/*.wandb")
    alerts: list[dict[str, str]] = []
    summary: dict[str, Any] = {}
    for _, payload in iter_records(log_file.read_bytes(), str(log_file), []):
        for fno, wire, body in fields(payload):
            if wire == 2 and fno == 10:  # Record.alert: AlertRecord(title=1, text=2, level=3)
                alerts.append(str_fields(body, {1: "title", 2: "text", 3: "level"}))
            elif wire == 2 and fno == 3:  # Record.summary: SummaryRecord(update=1: SummaryItem(key=1, value_json=16))
                for ufno, uwire, item in fields(body):
                    if ufno == 1 and uwire == 2:
                        d = str_fields(item, {1: "key", 16: "value_json"})
                        summary[d.get("key", "")] = json.loads(d.get("value_json", "null"))
    assert any(a["level"] == "ERROR" and doctor.stopped_by.code in a["title"] for a in alerts)
    assert summary["ppo_doctor/stopped"].startswith("stopping training")
    assert summary["ppo_doctor/verdict"] == "unhealthy" and summary["ppo_doctor/errors"] >= 1


def test_no_stop_line_at_the_plans_last_step(tmp_path: Path) -> None:
    """The fault at step 12 of a 15-step plan: the error is first seen at the check of step 15,
    the last; it is said, but nothing is left to stop, so no stop line."""
    doctor = DoctorCallback(stop_on="error", check_every=15, write_reports=False)
    args = TrainingArguments(output_dir=str(tmp_path), max_steps=15, logging_steps=1, per_device_train_batch_size=8, report_to="none", save_strategy="no", use_cpu=True, disable_tqdm=True)
    trainer = Trainer(model=Regression(), args=args, train_dataset=_data(), callbacks=[NaNWeights(), doctor])
    trainer.train()
    assert [f for f in doctor.alerts if f.severity == "error"] and doctor.stopped_by is None
    assert not [h for h in trainer.state.log_history if "stopping training" in str(h.get("ppo_doctor", ""))]


def test_report_to_none_writes_nothing_there(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    doctor = _train(tmp_path / "out", "none")
    assert doctor.stopped_by is not None and doctor.sinks.sinks == []
    assert not (tmp_path / "out" / "runs").exists() and not (tmp_path / "wandb").exists()
