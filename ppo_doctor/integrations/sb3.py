"""``DoctorCallback``: the doctor inside a Stable-Baselines3 algorithm (``[sb3]`` extra).

::

    from stable_baselines3 import PPO
    from ppo_doctor.integrations.sb3 import DoctorCallback
    model = PPO("MlpPolicy", "CartPole-v1")
    model.learn(200_000, callback=DoctorCallback(stop_on="error"))

* Once per rollout, a point per metric goes to a :class:`~ppo_doctor.monitor.Monitor` at
  ``num_timesteps`` (SB3's own x-axis): the values the algorithm's logger holds
  (``self.logger.name_to_value``: ``train/*`` of the latest update) and the episode statistics
  SB3 logs as ``rollout/ep_rew_mean`` / ``rollout/ep_len_mean``, computed from
  ``model.ep_info_buffer`` as ``OnPolicyAlgorithm.dump_logs`` does (at a rollout's end the logger
  has already dumped and cleared them).  The Monitor checks from the first rollout in which an
  episode has ended (before that SB3 has no reward to log; an env without SB3's ``Monitor``
  wrapper, whose ``ep_info_buffer`` stays empty, is checked only when training ends), then once at
  least ``check_every`` timesteps have passed since the last check (default: 3 % of
  ``total_timesteps``, as the HF callback's default is of ``max_steps``; every PPO rollout of a
  run of up to ~68,000 timesteps, while A2C's 5-step rollouts are not each checked).
* The Monitor is told ``total_timesteps`` as the plan (so a rule judging an absence of progress
  waits for the run's fair share of it, :mod:`ppo_doctor.standing`) and the algorithm's
  hyper-parameters as the run's config (``learning_rate``, ``clip_range``, ``target_kl``,
  ``ent_coef``, ``vf_coef``, ``n_epochs``, ``n_steps``, ``batch_size``, ``max_grad_norm``,
  ``gamma``, ``gae_lambda``; schedules read at the start), so findings are judged against them.
* Where it checks: an on-policy algorithm (PPO, A2C) is checked on the last step of each rollout,
  before ``train()`` runs on it, so ``_on_step`` returning False stops the run before the
  rollout that showed the fault updates the policy (checked at ``_on_rollout_end``, a NaN
  reward would first be trained on, and the NaN weights would crash the next rollout's policy
  forward before any callback could stop it); other algorithms at ``_on_rollout_end``, stopping
  at the next step.
* ``stop_on`` is :func:`ppo_doctor.monitor.matches`' (default ``"error"``; None: report only).
* Alerts go to ``logging`` (logger ``ppo_doctor.integrations.sb3``), into SB3's own logger (the
  ``ppo_doctor/warnings`` / ``ppo_doctor/errors`` counts for every output format it has,
  stdout, CSV, TensorBoard ...; the alert texts for TensorBoard only), and to ``webhook=URL``
  as Slack/Discord JSON (:mod:`ppo_doctor.webhook`).
* It never breaks training: an internal error is logged once and the callback goes quiet.

``stable_baselines3`` is imported by this module only; ``import ppo_doctor`` never imports it.
"""

from __future__ import annotations

import logging
import math
from typing import Any, Callable, Mapping

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from ..canonical.frameworks import is_doctor_tag
from ..config import coerce, resolve
from ..monitor import Monitor, StopOn, as_number, check_stop_on, describe, matches
from ..results import Finding
from ..settings import Config
from ..webhook import Webhook
from .reporting import ALERT_TAG, Sinks, WebhookSink, alert_title, severity_counts, stop_message

log = logging.getLogger(__name__)

# The algorithm's attributes given to the Monitor as the run's config, under SB3's names (the
# canonical mapping reads them as offline: canonical/hparams.py, by_framework "sb3").
HPARAMS = ("learning_rate", "clip_range", "clip_range_vf", "target_kl", "ent_coef", "vf_coef", "n_epochs", "n_steps", "batch_size", "max_grad_norm", "gamma", "gae_lambda", "normalize_advantage")
# Default check interval: this share of total_timesteps (the HF callback's CHECK_SHARE of max_steps).
CHECK_SHARE = 0.03
# SB3's own outputs that take text (TensorBoard's add_text); the others would print a line per alert.
_TEXT_EXCLUDED = ("stdout", "log", "json", "csv")


def algorithm_config(model: Any) -> dict[str, Any]:
    """The hyper-parameters of an SB3 algorithm, schedules read at the start of training
    (``progress_remaining = 1``), plus its class and environment id."""
    # ``policy_class`` is a key of SB3's own saved config (``BaseAlgorithm.save``'s data): it marks the
    # run as SB3 for the framework guess, whose tag markers are PPO's (SAC logs train/actor_loss ...)
    policy = getattr(model, "policy_class", None)
    out: dict[str, Any] = {"algo": type(model).__name__, "policy_class": getattr(policy, "__name__", str(policy))}
    for name in HPARAMS:
        value = getattr(model, name, None)
        if name == "learning_rate" and callable(getattr(model, "lr_schedule", None)):
            value = model.lr_schedule(1.0)
        elif callable(value):
            value = value(1.0)
        number = as_number(value)
        if number is not None and math.isfinite(number):
            out[name] = number
        elif isinstance(value, bool):
            out[name] = value
    env = getattr(model, "env", None)
    spec = getattr(getattr(env, "unwrapped", env), "spec", None) if env is not None else None
    env_id = getattr(spec, "id", None) or _vec_env_id(env)
    if env_id:
        out["env_id"] = str(env_id)
    return out


def _vec_env_id(env: Any) -> str | None:
    try:
        specs = env.get_attr("spec") if env is not None else []
    except (AttributeError, TypeError):
        return None
    return getattr(specs[0], "id", None) if specs else None


def _episode_means(buffer: Any) -> dict[str, float]:
    """``rollout/ep_rew_mean`` and ``rollout/ep_len_mean`` as ``dump_logs`` computes them."""
    episodes = list(buffer or ())
    if not episodes:
        return {}
    return {
        "rollout/ep_rew_mean": float(np.mean([float(e["r"]) for e in episodes])),
        "rollout/ep_len_mean": float(np.mean([float(e["l"]) for e in episodes])),
    }


class DoctorCallback(BaseCallback):
    """Checks an SB3 training while it runs; see the module docstring.

    Args:
        stop_on: what stops training (default ``"error"``; None: never stop, only report).
        check_every: timesteps between checks (default: :data:`CHECK_SHARE` of ``total_timesteps``;
            1: every rollout).
        config: analysis settings as :func:`ppo_doctor.config.resolve` returns them; None reads
            the config file found from the working directory.
        webhook: an http(s) URL to POST each new warning or error (and the stop) to.
        verbose: SB3's verbosity (unused by the doctor, which logs through ``logging``).
    """

    def __init__(
        self,
        stop_on: StopOn = "error",
        *,
        check_every: int | None = None,
        config: Config | Mapping[str, Any] | None = None,
        webhook: str | None = None,
        verbose: int = 0,
    ) -> None:
        super().__init__(verbose)
        if check_every is not None and check_every < 1:
            raise ValueError(f"check_every must be >= 1, got {check_every}")
        check_stop_on(stop_on)
        self.stop_on = stop_on
        self.check_every = check_every
        self.config = resolve() if config is None else coerce(config)
        self.webhook = Webhook(webhook) if webhook else None  # a bad URL raises here
        self.monitor: Monitor | None = None
        self.sinks = Sinks()
        self.stopped_by: Finding | None = None
        self.stop_text: str | None = None
        self.alerts: list[tuple[int, Finding]] = []
        self._every = check_every or 1
        self._checked_at: int | None = None
        self._logged_at = -1
        self._broken = False

    # -- SB3 hooks ------------------------------------------------------------------------
    def _on_training_start(self) -> None:
        self._guard(self._start)

    def _on_step(self) -> bool:
        if self.stopped_by is None and self._last_step_of_rollout():
            self._guard(self._rollout_done)
        return self.stopped_by is None

    def _on_rollout_end(self) -> None:
        self._guard(self._rollout_done)

    def _on_training_end(self) -> None:
        self._guard(self._end)

    # -- work -----------------------------------------------------------------------------
    def _guard(self, fn: Callable[[], None]) -> None:
        if self._broken:
            return
        try:
            fn()
        except Exception:  # noqa: BLE001 - the doctor must never take the training down
            self._broken = True
            log.error("ppo-doctor: internal error, the callback stops checking this run", exc_info=True)

    def _start(self) -> None:
        model = self.model
        planned = int(getattr(model, "_total_timesteps", 0) or self.locals.get("total_timesteps", 0) or 0)
        hparams = {**algorithm_config(model), "total_timesteps": planned}
        run_id = hparams.get("env_id", "sb3") + f"-{hparams['algo']}"
        self.monitor = Monitor(self.config, hparams=hparams, run_id=str(run_id), source="sb3", planned_steps=planned if planned > 0 else None, warmup_steps=0)
        self.sinks = Sinks([WebhookSink(self.webhook, str(run_id))] if self.webhook is not None else [])
        self._every = self.check_every or max(1, math.ceil(CHECK_SHARE * planned))
        log.info("ppo-doctor: checking %s every %d timesteps of %d%s", run_id, self._every, planned, f", stopping on {self.stop_on}" if self.stop_on else "")

    def _last_step_of_rollout(self) -> bool:
        """True on the last ``on_step`` of an on-policy rollout (``collect_rollouts`` counts
        ``n_steps`` up to ``n_rollout_steps`` after the callback)."""
        n, total = self.locals.get("n_steps"), self.locals.get("n_rollout_steps")
        return isinstance(n, int) and isinstance(total, int) and n + 1 >= total

    def _rollout_done(self) -> None:
        if self.monitor is None:
            self._start()
        assert self.monitor is not None
        step = int(self.num_timesteps)
        if step == self._logged_at:  # _on_rollout_end of a rollout checked on its last step
            return
        self._logged_at = step
        metrics = {k: v for k, v in dict(self.logger.name_to_value).items() if not is_doctor_tag(k)}
        episodes = _episode_means(getattr(self.model, "ep_info_buffer", None))
        self.monitor.log(step, {**metrics, **episodes})
        if not episodes:
            return  # no episode has ended yet: SB3 has no reward to log, and a check would say so
        if self._checked_at is None or step - self._checked_at >= self._every:
            self._checked_at = step
            self._check(step, final=False)

    def _check(self, step: int, *, final: bool) -> None:
        assert self.monitor is not None
        new = self.monitor.check(final=final)
        texts: list[str] = []
        for f in new:
            text = ("changed: " if self.monitor.previous(f) is not None else "") + describe(f, self.monitor.last_causes)
            self.alerts.append((step, f))
            (log.error if f.severity == "error" else log.warning if f.severity == "warning" else log.info)("ppo-doctor at timestep %d: %s", step, text)
            self.sinks.alert(step, f.severity, alert_title(f), text)
            if f.severity in ("warning", "error"):
                texts.append(text)
        planned = int(self.monitor.planned_steps or 0)
        # nothing left to stop at the plan's end: the last check reports, it does not "stop"
        left = not planned or step < planned
        hit = None if final or not left or self.stopped_by is not None else next((f for f in new if matches(f, self.stop_on)), None)
        if hit is not None:
            self.stopped_by = hit
            self.stop_text = stop_message(hit, step, planned, self.monitor.last_causes, self.stop_on, unit="timestep")
            log.error("ppo-doctor: %s", self.stop_text)
            self.sinks.alert(step, "error", "ppo-doctor: stopping training", self.stop_text, stop=True)
            texts.append(self.stop_text)
        if final:
            return  # learn() has ended: SB3 dumps nothing more (the log line and the webhook have it)
        # into SB3's own outputs, written with the update's train/* values at the next dump
        for tag, n in severity_counts(self.monitor.last_findings).items():
            self.logger.record(tag, n)
        if texts:
            self.logger.record(ALERT_TAG, "\n\n".join(texts), exclude=_TEXT_EXCLUDED)
        if hit is not None:
            self.logger.dump(step)  # learn() ends before its next dump_logs: write them now

    def _end(self) -> None:
        if self.monitor is None or not self.monitor.points:
            self.sinks.finish("unknown", "nothing was logged")
            return
        self._check(int(self.num_timesteps), final=True)
        rr = self.monitor.run_report()
        self.sinks.finish(rr.verdict, rr.verdict_reason)
        log.info("ppo-doctor: run %s is %s (%s)", rr.run.id, rr.verdict, rr.verdict_reason)


__all__ = ["DoctorCallback", "algorithm_config"]
