"""Where the reference loop's numbers go: the log formats ppo_doctor reads, written by the
real writers where a library has one.

* TensorBoard events through ``torch.utils.tensorboard.SummaryWriter`` (scalars, the config as
  hparams and as the ``args`` text summary HF's TensorBoard callback writes, samples as text);
* ``metrics.jsonl``: one numeric object per step (samples go to ``samples.jsonl``);
* ``trainer_state.json`` shaped like HF ``Trainer``'s (``log_history`` rows with ``step`` and
  ``epoch``; ``json.dumps(indent=2, sort_keys=True)`` as transformers writes it, see
  docs/sources.md#hf-trainer-logs);
* ``config.json`` beside the JSONL / trainer_state files (those formats carry no config);
* a W&B offline run folder when the ``wandb`` package is installed and asked for.
"""

from __future__ import annotations

import json
import logging
import math
import time
from pathlib import Path
from typing import Any, Sequence

log = logging.getLogger(__name__)

FORMATS = ("tensorboard", "jsonl", "trainer_state", "wandb")

# With a fake clock (reproducible sample logs) every point gets this wall time plus one
# second per step.
FAKE_EPOCH = 1_700_000_000.0


class RunLogger:
    """Writes one run's metrics, config and text samples to every requested format.

    Args:
        out_dir: the run folder (created).
        config: hyper-parameters with TRL-style names (plain JSON values).
        formats: a subset of :data:`FORMATS`.
        tb_prefix: prefix for TensorBoard tags (``"train/"`` imitates HF's TensorBoard callback).
        fake_clock: use :data:`FAKE_EPOCH` + step as wall time, so file contents repeat.
        epoch_len: episodes per "epoch" for the ``epoch`` field HF adds to each log row.
    """

    def __init__(
        self,
        out_dir: Path,
        config: dict[str, Any],
        formats: Sequence[str],
        *,
        tb_prefix: str = "",
        fake_clock: bool = False,
        epoch_len: int = 1,
    ):
        unknown = sorted(set(formats) - set(FORMATS))
        if unknown:
            raise ValueError(f"unknown log format(s) {unknown}; choose from {list(FORMATS)}")
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.config = config
        self.formats = tuple(formats)
        self.tb_prefix = tb_prefix
        self.fake_clock = fake_clock
        self.epoch_len = max(1, epoch_len)
        self.history: list[dict[str, Any]] = []
        # optional writers, imported lazily (torch's SummaryWriter, a wandb Run): None when off
        self._tb: Any = None
        self._jsonl = None
        self._samples = None
        self._wandb: Any = None
        if "tensorboard" in self.formats:
            self._open_tensorboard()
        if "jsonl" in self.formats:
            self._jsonl = open(self.out_dir / "metrics.jsonl", "w", encoding="utf-8")
            self._samples = open(self.out_dir / "samples.jsonl", "w", encoding="utf-8")
        if "jsonl" in self.formats or "trainer_state" in self.formats:
            (self.out_dir / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
        if "wandb" in self.formats:
            self._open_wandb()

    # -- writers ----------------------------------------------------------------------------
    def _wall(self, step: int) -> float:
        return FAKE_EPOCH + step if self.fake_clock else time.time()

    def _open_tensorboard(self) -> None:
        from torch.utils.tensorboard import SummaryWriter
        from torch.utils.tensorboard.summary import hparams

        self._tb = SummaryWriter(log_dir=str(self.out_dir))
        # hparams go into the same event file (SummaryWriter.add_hparams would open a sub-run
        # named by the time); values must be numbers, strings or bools for the plugin.
        plain = {k: v if isinstance(v, (int, float, str, bool)) else str(v) for k, v in self.config.items()}
        writer = self._tb._get_file_writer()
        for summary in hparams(plain, {}):
            writer.add_summary(summary, walltime=self._wall(0))
        # HF's TensorBoardCallback writes the training arguments as the text summary "args".
        self._tb.add_text("args", json.dumps(self.config, indent=2, sort_keys=True), 0, walltime=self._wall(0))

    def _open_wandb(self) -> None:
        try:
            import wandb
        except ImportError:
            log.warning("wandb is not installed: no W&B offline run written")
            return
        self._wandb = wandb.init(
            mode="offline",
            dir=str(self.out_dir),
            project="ppo-doctor-reference",
            name=str(self.config.get("exp_name", "reference")),
            config=self.config,
            settings=wandb.Settings(silent=True, console="off"),
        )

    def log(self, step: int, metrics: dict[str, float]) -> None:
        """One PPO step's scalars, under the same names in every format."""
        wall = self._wall(step)
        if self._tb is not None:
            for key, value in metrics.items():
                self._tb.add_scalar(self.tb_prefix + key, value, step, walltime=wall)
        if self._jsonl is not None:
            # Python's json writes NaN/Infinity tokens, as HF and veRL <= 0.6 do (docs/sources.md#nan-encodings).
            self._jsonl.write(json.dumps({"step": step, **metrics}) + "\n")
        row = dict(metrics)
        row["epoch"] = round(metrics.get("episode", step) / self.epoch_len, 4)
        row["step"] = step
        self.history.append(row)
        if self._wandb is not None:
            self._wandb.log(metrics, step=step)

    def log_samples(self, step: int, samples: list[dict[str, Any]]) -> None:
        """Generated texts (prompt, response, reward) at ``step``."""
        if self._tb is not None:
            rows = "\n".join(
                f"| {s['prompt']} | {s['response']} | {s['reward']:.3f} |" for s in samples
            )
            table = "| prompt | response | reward |\n|---|---|---|\n" + rows
            self._tb.add_text("samples", table, step, walltime=self._wall(step))
        if self._samples is not None:
            for s in samples:
                self._samples.write(json.dumps({"step": step, **s}) + "\n")

    def close(self) -> None:
        """Flush everything; ``trainer_state.json`` is written once, at the end, like HF's save_state."""
        if self._tb is not None:
            self._tb.close()
            if self.fake_clock:
                self._fixed_event_name()
        for fh in (self._jsonl, self._samples):
            if fh is not None:
                fh.close()
        if "trainer_state" in self.formats:
            self._write_trainer_state()
        if self._wandb is not None:
            self._wandb.finish()

    def _fixed_event_name(self) -> None:
        # The writer names its file after the time, host and pid; a fixed name keeps regenerated
        # sample logs from churning.  Readers only need the "events.out.tfevents." prefix.
        files = sorted(self.out_dir.glob("events.out.tfevents.*"))
        for i, f in enumerate(files):
            f.rename(self.out_dir / f"events.out.tfevents.{int(FAKE_EPOCH)}.ppo-doctor.{i}")

    def _write_trainer_state(self) -> None:
        last = self.history[-1] if self.history else {}
        state = {
            "best_global_step": None,
            "best_metric": None,
            "best_model_checkpoint": None,
            "epoch": last.get("epoch", 0.0),
            "eval_steps": 500,
            "global_step": last.get("step", 0),
            "is_hyper_param_search": False,
            "is_local_process_zero": True,
            "is_world_process_zero": True,
            "log_history": self.history,
            "logging_steps": 1,
            "max_steps": self.config.get("num_total_batches", len(self.history)),
            "num_input_tokens_seen": 0,
            "num_train_epochs": math.ceil(self.config.get("total_episodes", 0) / self.epoch_len),
            "save_steps": 500,
            "stateful_callbacks": {},
            "total_flos": 0.0,
            "train_batch_size": self.config.get("batch_size"),
            "trial_name": None,
            "trial_params": None,
        }
        (self.out_dir / "trainer_state.json").write_text(json.dumps(state, indent=2, sort_keys=True) + "\n")
