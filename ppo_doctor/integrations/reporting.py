"""Where a live callback says what it found, besides its log lines (docs/live.md, "Where the
alerts go"): the reporting integrations the user already watches, and a webhook.

* TensorBoard: the alert text at its step (tag ``ppo_doctor/alerts``, the text plugin) and, at
  every check, one scalar per severity (``ppo_doctor/warnings``, ``ppo_doctor/errors``: how many
  findings of that severity the check holds), so a dashboard charts them beside the run's own
  curves.  They go into an event file of their own (suffix ``.ppo-doctor``) in the folder the
  trainer's writer uses, so TensorBoard shows them in the same run; ppo_doctor's readers keep
  them out of the analysis (``canonical.frameworks.is_doctor_tag``).
* W&B, into the run the trainer's integration started (``wandb.run``): ``wandb.alert`` per new
  warning or error (an e-mail / Slack message when the user set W&B alerts up,
  https://docs.wandb.ai/guides/runs/alert/), the same counts as history (against the trainer's
  step metric) and, in the run summary, the counts, the latest alert, the stop and the verdict.
* A webhook (:mod:`ppo_doctor.webhook`): each new warning or error, and the stop, as
  Slack/Discord JSON.

A sink that fails is logged once and left alone from then on; the training and the other
sinks go on.  Nothing here imports torch, tensorboard or wandb unless that integration is on.
"""

from __future__ import annotations

import importlib
import logging
import os
import re
import sys
from pathlib import Path
from typing import Any, Iterable, Protocol

from ..canonical.frameworks import DOCTOR_TAG_PREFIX
from ..monitor import describe
from ..results import Finding
from ..webhook import Webhook

log = logging.getLogger(__name__)

ALERT_TAG = DOCTOR_TAG_PREFIX + "alerts"
COUNT_TAGS = {"warning": DOCTOR_TAG_PREFIX + "warnings", "error": DOCTOR_TAG_PREFIX + "errors"}
OUR_SUFFIX = ".ppo-doctor"
# events.out.tfevents.<unix time>.<host>...: the time the writer opened the file
_TF_TIME = re.compile(r"tfevents\.(\d+)\.")


def severity_counts(findings: Iterable[Finding]) -> dict[str, int]:
    """``{"ppo_doctor/warnings": n, "ppo_doctor/errors": m}`` for the findings of one check."""
    out = dict.fromkeys(COUNT_TAGS.values(), 0)
    for f in findings:
        tag = COUNT_TAGS.get(f.severity)
        if tag is not None:
            out[tag] += 1
    return out


class Sink(Protocol):
    """One place the alerts go."""

    def check(self, step: int, counts: dict[str, int]) -> None: ...

    def alert(self, step: int, severity: str, title: str, text: str, stop: bool = False) -> None: ...

    def finish(self, verdict: str, reason: str) -> None: ...


class TensorBoardSink:
    """Writes into ``folder`` with a writer of its own (opened at the first write)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._writer: Any = None

    def _open(self) -> Any:
        if self._writer is None:
            try:  # the writer transformers' TensorBoardCallback uses, in its order
                module = importlib.import_module("torch.utils.tensorboard")
            except ImportError:
                module = importlib.import_module("tensorboardX")
            self._writer = module.SummaryWriter(log_dir=str(self.folder), filename_suffix=OUR_SUFFIX)
        return self._writer

    def check(self, step: int, counts: dict[str, int]) -> None:
        writer = self._open()
        for tag, n in counts.items():
            writer.add_scalar(tag, n, step)
        writer.flush()

    def alert(self, step: int, severity: str, title: str, text: str, stop: bool = False) -> None:
        writer = self._open()
        writer.add_text(ALERT_TAG, text, step)
        writer.flush()

    def finish(self, verdict: str, reason: str) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None


class WandbSink:
    """Writes into ``wandb.run`` (the run the trainer's W&B integration started); ``step_key`` is
    the trainer's step metric (HF's WandbCallback charts every key against ``train/global_step``)."""

    def __init__(self, wandb: Any, step_key: str | None = "train/global_step") -> None:
        self.wandb = wandb
        self.step_key = step_key

    @property
    def run(self) -> Any:
        return getattr(self.wandb, "run", None)

    def check(self, step: int, counts: dict[str, int]) -> None:
        run = self.run
        if run is None:
            return
        run.log({**counts, self.step_key: step} if self.step_key else dict(counts))
        run.summary.update(counts)

    def alert(self, step: int, severity: str, title: str, text: str, stop: bool = False) -> None:
        run = self.run
        if run is None:
            return
        levels = self.wandb.AlertLevel
        run.alert(title=title, text=text, level=levels.ERROR if severity == "error" else levels.WARN)
        run.summary[DOCTOR_TAG_PREFIX + "last_alert"] = text
        if stop:
            run.summary[DOCTOR_TAG_PREFIX + "stopped"] = text

    def finish(self, verdict: str, reason: str) -> None:
        run = self.run
        if run is not None:
            run.summary.update({DOCTOR_TAG_PREFIX + "verdict": verdict, DOCTOR_TAG_PREFIX + "verdict_reason": reason})


class WebhookSink:
    """Each alert as one chat message, prefixed with the run's name and step."""

    def __init__(self, hook: Webhook, run_id: str) -> None:
        self.hook = hook
        self.run_id = run_id

    def check(self, step: int, counts: dict[str, int]) -> None:
        return None  # counts are for charts; a chat gets the alerts only

    def alert(self, step: int, severity: str, title: str, text: str, stop: bool = False) -> None:
        self.hook.send(f"ppo-doctor [{self.run_id} at step {step}] {text}")

    def finish(self, verdict: str, reason: str) -> None:
        self.hook.close()


class Sinks:
    """The sinks of one run; a sink that raises is logged once and dropped."""

    def __init__(self, sinks: Iterable[Sink] = ()) -> None:
        self.sinks = list(sinks)

    def _each(self, method: str, *args: Any) -> None:
        for sink in list(self.sinks):
            try:
                getattr(sink, method)(*args)
            except Exception:  # noqa: BLE001 - a dashboard's failure must not stop the training or the other sinks
                log.warning("ppo-doctor: writing to %s failed; it gets nothing more from this run", type(sink).__name__, exc_info=True)
                self.sinks.remove(sink)

    def check(self, step: int, findings: Iterable[Finding]) -> None:
        self._each("check", step, severity_counts(findings))

    def alert(self, step: int, severity: str, title: str, text: str, stop: bool = False) -> None:
        """A new or changed finding (warnings and errors only; notes stay in the log), or the
        stop (``stop=True``)."""
        if severity in COUNT_TAGS:
            self._each("alert", step, severity, title, text, stop)

    def finish(self, verdict: str, reason: str) -> None:
        self._each("finish", verdict, reason)


def alert_title(finding: Finding) -> str:
    """A short title for a W&B alert: W&B holds back an alert whose title it saw in the last
    ``wait_duration``, so the title names the severity, the rule and the metric."""
    return f"ppo-doctor {finding.severity.upper()} {finding.code} {finding.name}" + (f" on {finding.metric}" if finding.metric else "")


def stop_message(hit: Finding, step: int, planned: int, causes: Any, stop_on: Any, unit: str = "step") -> str:
    """Why training stops: the finding (code, symptom, metric, onset, message), the fix to try
    first, and what the stop saves ("stopping training at step 40 of 200: 160 steps not spent")."""
    where = f"at {unit} {step}" + (f" of {planned}: {planned - step} {unit}s not spent" if planned > step else "")
    return f"stopping training {where} (stop_on={stop_on!r}); {describe(hit, causes)}"


def trainer_tensorboard_dir(output_dir: str, since: float) -> Path | None:
    """The folder the trainer's TensorBoardCallback writes to: ``$TENSORBOARD_LOGGING_DIR`` when
    set, else the ``<output_dir>/runs/<date>_<host>/`` folder (transformers' ``default_logdir``)
    whose event file was opened at or after ``since`` (the callback's writer opens its file in
    ``on_train_begin``, just before ours runs); the newest when several were."""
    env = os.environ.get("TENSORBOARD_LOGGING_DIR")
    if env:
        return Path(os.path.expanduser(env))
    runs = Path(output_dir) / "runs"
    if not runs.is_dir():
        return None
    best: tuple[int, Path] | None = None
    for f in runs.glob("*/events.out.tfevents.*"):
        m = _TF_TIME.search(f.name)
        if m is None or f.name.endswith(OUR_SUFFIX) or int(m.group(1)) < int(since):
            continue
        if best is None or int(m.group(1)) > best[0]:
            best = (int(m.group(1)), f.parent)
    return None if best is None else best[1]


def trainer_sinks(report_to: Iterable[str], output_dir: str, since: float, webhook: Webhook | None, run_id: str) -> Sinks:
    """The sinks for a Hugging Face trainer: TensorBoard and W&B when ``args.report_to`` names
    them (and their writer / run exist), the webhook when given."""
    wanted = {str(r).lower() for r in report_to}
    sinks: list[Sink] = []
    if "tensorboard" in wanted:
        folder = trainer_tensorboard_dir(output_dir, since)
        if folder is None:
            log.warning("ppo-doctor: report_to has tensorboard but no event file of this training was found under %s/runs: alerts are not written there", output_dir)
        else:
            sinks.append(TensorBoardSink(folder))
    wandb = sys.modules.get("wandb")  # imported by transformers' WandbCallback when report_to has it
    if "wandb" in wanted and wandb is not None:
        sinks.append(WandbSink(wandb))
    if webhook is not None:
        sinks.append(WebhookSink(webhook, run_id))
    return Sinks(sinks)


__all__ = ["ALERT_TAG", "COUNT_TAGS", "Sinks", "stop_message", "TensorBoardSink", "WandbSink", "WebhookSink", "alert_title", "severity_counts", "trainer_sinks", "trainer_tensorboard_dir"]
