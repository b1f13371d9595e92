"""``DoctorCallback``: the doctor inside a Hugging Face ``Trainer`` or any TRL trainer.

::

    from ppo_doctor.integrations.transformers import DoctorCallback
    trainer = GRPOTrainer(..., callbacks=[DoctorCallback(stop_on="error")])

* ``on_log`` feeds every log dict (TRL / HF names, mapped as offline) to a
  :class:`~ppo_doctor.monitor.Monitor`; every ``check_every`` steps (default 3 % of
  ``max_steps``, at least 10) it checks.
* New or changed findings go to ``logging`` (logger ``ppo_doctor.integrations.transformers``)
  and to ``state.log_history`` as ``{"step": N, "ppo_doctor": "<text>"}`` rows, naming the
  symptom, the onset and the top fix.
* The Monitor is told ``state.max_steps`` and the warm-up of ``args``: a rule that judges an
  absence of progress (no reward improvement, vanishing gradients ...) is an info note until
  the run has had its fair share of the plan (:mod:`ppo_doctor.standing`), so a healthy run
  whose reward is still flat at step 20 of 200 is not stopped.
* ``stop_on`` (``"error"``, ``"warning"``, symptoms, rule codes or names, or a list of these;
  see :func:`ppo_doctor.monitor.matches`) sets ``control.should_training_stop`` and says why,
  with the finding's top fix and the steps not spent (at ``max_steps`` itself nothing is left to
  stop: the finding is said, with no stop line); ``control.should_save`` too unless
  ``args.save_strategy`` is ``"no"`` (a user who saves nothing gets no checkpoint from us).
  The decision depends only on the logged numbers, which every rank of a distributed run
  logs alike, so all ranks stop together.
* Where the user looks (:mod:`.reporting`, on the main process only): when ``args.report_to``
  has ``tensorboard``, each alert is a text at its step (``ppo_doctor/alerts``) and every check
  writes ``ppo_doctor/warnings`` / ``ppo_doctor/errors`` counts into the trainer's TensorBoard
  folder; with ``wandb``, each alert is a ``wandb.alert``, the counts go into the run's history
  and summary, with the stop and the verdict.  ``webhook=URL`` POSTs each new warning or error
  and the stop as Slack/Discord JSON (:mod:`ppo_doctor.webhook`, never blocking training).
* ``on_train_end`` writes ``ppo-doctor.json`` and ``ppo-doctor.html`` into ``args.output_dir``
  (on the main process only).
* Settings come from ``config`` when given, else from ``[tool.ppo-doctor]`` / ``ppo-doctor.toml``
  found from the working directory (:func:`ppo_doctor.config.resolve`); a bad file raises
  :class:`~ppo_doctor.errors.ConfigError` when the callback is built, before training starts.
* It is visible with no logging set up, as the trainer's own messages are: when neither the
  ``ppo_doctor`` loggers nor the root logger have a handler, its messages go to stderr as
  ``ppo-doctor: ...`` ("checking every N steps" at the start, alerts, where the report went).
* It never breaks training: an internal error in a hook is logged once, with its traceback,
  and the callback does nothing from then on.

``transformers`` is imported by this module only; ``import ppo_doctor`` never imports it.
"""

from __future__ import annotations

import logging
import math
import time
from pathlib import Path
from typing import Any, Callable, Mapping, cast

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from ..config import coerce, resolve
from ..settings import Config
from ..ingest.readers.trainer_state import DOCTOR_ROW_KEY, SUMMARY_MARKERS
from ..monitor import Monitor, StopOn, check_stop_on, describe, matches
from ..report import RenderOptions, render
from ..results import Finding
from ..webhook import Webhook
from .reporting import Sinks, alert_title, stop_message, trainer_sinks

log = logging.getLogger(__name__)

# Default check interval: this share of max_steps, and never more often than every MIN_CHECK_EVERY.
CHECK_SHARE = 0.03
MIN_CHECK_EVERY = 10
REPORT_JSON = "ppo-doctor.json"
REPORT_HTML = "ppo-doctor.html"
LOG_KEY = DOCTOR_ROW_KEY


def _history(state: TrainerState) -> list[dict[str, Any]]:
    """``state.log_history``, typed as what it holds (transformers annotates it float-valued, but
    its rows are JSON objects, and ours carry text)."""
    return cast("list[dict[str, Any]]", state.log_history)


def _make_visible() -> None:
    """Give this module's logger a stderr handler at INFO when nothing is configured (the way
    ``transformers.utils.logging`` gives its library root logger one), so the start line, the
    alerts and the report path are seen by a user who set up no logging."""
    if log.handlers or logging.getLogger("ppo_doctor").handlers or logging.getLogger().handlers:
        return
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))  # each message begins "ppo-doctor:"
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False


def _warmup_steps(args: TrainingArguments, max_steps: int) -> int:
    """The warm-up the Trainer's scheduler applies (``TrainingArguments.get_warmup_steps``)."""
    get = getattr(args, "get_warmup_steps", None)
    try:
        return int(get(max_steps)) if callable(get) and max_steps > 0 else 0
    except (TypeError, ValueError):
        return 0


def _saves(args: TrainingArguments) -> bool:
    """Whether the user's ``save_strategy`` saves at all (``"no"`` saves nothing)."""
    strategy = getattr(args, "save_strategy", "steps")
    return str(getattr(strategy, "value", strategy)).lower() != "no"


def default_check_every(max_steps: int) -> int:
    """A few per cent of the run, at least ``MIN_CHECK_EVERY`` steps."""
    return max(MIN_CHECK_EVERY, math.ceil(CHECK_SHARE * max(0, max_steps)))


class DoctorCallback(TrainerCallback):
    """Checks the run while it trains; see the module docstring.

    Args:
        stop_on: what stops training (None: never stop, only report).
        check_every: steps between checks (default: :func:`default_check_every` of ``max_steps``).
        config: analysis settings as :func:`ppo_doctor.config.resolve` returns them; None reads
            the config file found from the working directory.
        write_reports: write ``ppo-doctor.json`` / ``ppo-doctor.html`` at train end.
        plots: draw the plots into the HTML report (needs matplotlib).
        webhook: an http(s) URL to POST each new warning or error to (Slack/Discord JSON).
    """

    def __init__(
        self,
        stop_on: StopOn = None,
        *,
        check_every: int | None = None,
        config: Config | Mapping[str, Any] | None = None,
        write_reports: bool = True,
        plots: bool = True,
        webhook: str | None = None,
    ) -> None:
        if check_every is not None and check_every < 1:
            raise ValueError(f"check_every must be >= 1, got {check_every}")
        check_stop_on(stop_on)  # before training starts, as a bad config file is
        self.stop_on = stop_on
        self.check_every = check_every
        self.config = resolve() if config is None else coerce(config)
        self.write_reports = write_reports
        self.plots = plots
        self.webhook = Webhook(webhook) if webhook else None  # a bad URL raises here, before training
        self.sinks = Sinks()
        self._created = time.time()
        self.monitor: Monitor | None = None
        self.stopped_by: Finding | None = None
        self.alerts: list[Finding] = []
        self.reports_written: list[Path] = []
        self._every = check_every or MIN_CHECK_EVERY
        self._last_check_step = 0
        self._broken = False
        _make_visible()

    # -- hooks ----------------------------------------------------------------------------
    def on_train_begin(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any) -> None:
        self._guard(self._begin, args, state)

    def on_log(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, logs: dict[str, Any] | None = None, **kwargs: Any
    ) -> TrainerControl:
        self._guard(self._on_log, args, state, control, logs or {})
        return control

    def on_train_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any) -> None:
        self._guard(self._end, args, state)

    # -- work -----------------------------------------------------------------------------
    def _guard(self, fn: Callable[..., None], *a: Any) -> None:
        if self._broken:
            return
        try:
            fn(*a)
        except Exception:  # noqa: BLE001 - the doctor must never take the training down
            self._broken = True
            log.error("ppo-doctor: internal error, the callback stops checking this run", exc_info=True)

    def _begin(self, args: TrainingArguments, state: TrainerState) -> None:
        max_steps = int(state.max_steps or 0)
        self._every = self.check_every or default_check_every(max_steps)
        hparams = args.to_dict() if hasattr(args, "to_dict") else {}
        run_id = str(getattr(args, "run_name", None) or Path(str(args.output_dir or "run")).name)
        self.monitor = Monitor(
            self.config,
            hparams=hparams,
            run_id=run_id,
            path=str(args.output_dir or ""),
            source="trainer",
            planned_steps=max_steps if max_steps > 0 else None,
            warmup_steps=_warmup_steps(args, max_steps),
        )
        self._last_check_step = int(state.global_step or 0)
        if state.is_world_process_zero:  # one message per training, not one per rank
            self.sinks = trainer_sinks(getattr(args, "report_to", None) or [], str(args.output_dir or "."), self._created, self.webhook, run_id)
        plan = f" of {max_steps}" if max_steps > 0 else ""
        log.info("ppo-doctor: checking every %d steps%s%s", self._every, plan, f", stopping on {self.stop_on}" if self.stop_on else "")

    def _on_log(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, logs: dict[str, Any]) -> None:
        if self.monitor is None:  # a trainer that skipped on_train_begin
            self._begin(args, state)
        assert self.monitor is not None
        if LOG_KEY in logs or any(k in logs for k in SUMMARY_MARKERS):
            return  # Trainer.train's closing speed/summary row: offline it goes to the config, not a series
        step = int(state.global_step)
        self.monitor.log(step, {k: v for k, v in logs.items() if k != "step"})
        if step - self._last_check_step >= self._every:
            self._last_check_step = step
            self._check(state, control, args)

    def _check(self, state: TrainerState, control: TrainerControl | None, args: TrainingArguments | None = None) -> None:
        assert self.monitor is not None
        step = int(state.global_step)
        new = self.monitor.check(final=control is None)
        for f in new:
            before = self.monitor.previous(f)
            text = ("changed: " if before is not None else "") + describe(f, self.monitor.last_causes)
            self.alerts.append(f)
            (log.error if f.severity == "error" else log.warning if f.severity == "warning" else log.info)("ppo-doctor at step %d: %s", step, text)
            _history(state).append({"step": step, LOG_KEY: text})
            self.sinks.alert(step, f.severity, alert_title(f), text)
        self.sinks.check(step, self.monitor.last_findings)
        max_steps = int(state.max_steps or 0)
        if control is None or self.stopped_by is not None or 0 < max_steps <= step:
            return  # at the plan's last step there is nothing left to stop: the finding is said, no stop line
        hit = next((f for f in new if matches(f, self.stop_on)), None)
        if hit is not None:
            self.stopped_by = hit
            control.should_training_stop = True
            if args is None or _saves(args):
                control.should_save = True
            why = stop_message(hit, step, max_steps, self.monitor.last_causes, self.stop_on)
            log.error("ppo-doctor: %s", why)
            _history(state).append({"step": step, LOG_KEY: why})
            self.sinks.alert(step, "error", "ppo-doctor: stopping training", why, stop=True)

    def _end(self, args: TrainingArguments, state: TrainerState) -> None:
        if self.monitor is None or not self.monitor.points:
            self.sinks.finish("unknown", "nothing was logged")
            return
        # the run ended: what the last interval found, and warnings no later check can confirm
        self._check(state, None)
        writes = self.write_reports and state.is_world_process_zero
        if not (writes or self.sinks.sinks):
            return
        report = self.monitor.report()
        rr = report.runs[0]
        self.sinks.finish(rr.verdict, rr.verdict_reason)
        if not writes:
            return

        out = Path(args.output_dir or ".")
        out.mkdir(parents=True, exist_ok=True)
        options = RenderOptions(plots=self.plots)
        for name, fmt in ((REPORT_JSON, "json"), (REPORT_HTML, "html")):
            target = out / name
            target.write_text(render(report, fmt, options), encoding="utf-8")
            self.reports_written.append(target)
        log.info("ppo-doctor: run %s is %s (%s); report in %s", rr.run.id, rr.verdict, rr.verdict_reason, out / REPORT_HTML)


__all__ = ["DoctorCallback", "default_check_every", "stop_message"]
