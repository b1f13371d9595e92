"""``ppo-doctor watch PATH``: follow a log folder while a training writes it.

Every ``--interval`` seconds the folder is discovered again (new runs appear), each file of
each run is polled by its follower (:mod:`ppo_doctor.ingest.follow`: only what was appended is
read), and a run that changed is analysed with the offline line (the same discovery, merge,
canonicalisation, rules and ranking as ``check``).  Each new or changed finding is said once
(:class:`ppo_doctor.monitor.Announcer`): a line on the terminal, or one JSON object per event
with ``--format jsonl``; ``--exec CMD`` runs CMD (through the shell) once per new finding with
the event as JSON on its stdin, for the user's own notifier; ``--webhook URL`` POSTs each new
warning or error as Slack/Discord JSON (:mod:`ppo_doctor.webhook`: a background thread with a
timeout and bounded retries, so a slow chat server never holds the watch up).

One training is one run: when discovery regroups files already followed into a new run (a
Trainer's ``runs/<date>_<host>/`` TensorBoard folder, then the ``trainer_state.json`` it writes
into ``output_dir`` at the end), the new run takes over their followers and what was said about
them, so nothing is announced twice.  The runs are analysed as live (:mod:`ppo_doctor.standing`:
a rule that judges an absence of progress waits for the run's fair share of its plan).

It ends when every run has been idle for ``--idle`` seconds (waiting time in which no file grew
or changed: :meth:`Watcher.all_idle`), or on Ctrl-C.
The closing verdicts are :func:`ppo_doctor.analyze` of the folder (the offline report, which
also reports any damage that remained), and the exit code is ``check``'s: 0 when no finding is
at or above ``--fail-on``, 1 when one is, 2 on a usage or configuration error or when no run
was ever read.

JSON events (``--format jsonl``), one per line::

    {"event": "run", "run": "...", "path": "...", "time": 1700000000.0}
    {"event": "finding", "status": "new" | "changed", "run": "...", "step": 120, "time": ...,
     "finding": {Finding.to_dict()}, "fix": "..." | null}
    {"event": "end", "reason": "idle" | "interrupted", "exit_code": 0, "time": ...,
     "runs": [{"run": "...", "verdict": "...", "verdict_reason": "...", "symptoms": [...]}],
     "errors": [{"path": "...", "message": "..."}]}
"""

from __future__ import annotations

import json
import logging
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from .analyze import analyze, analyze_run
from .config import coerce
from .settings import Config
from .exits import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK
from .frame import RawRun, ReadIssue
from .ingest import read_source
from .ingest.discover import discover
from .ingest.follow import FileStat, Tail, fresh, tail_for
from .monitor import Announcer, describe, top_fix
from .report.json_out import finite_json
from .results import Finding, RankedCause, Report, RunReport

log = logging.getLogger(__name__)

EXEC_TIMEOUT_S = 60.0


@dataclass
class _RunState:
    """One discovered run folder: its files' tails, their last size/time/identity, and how long
    it has been idle (waiting time only: see :meth:`Watcher.all_idle`)."""

    id: str
    path: str
    tails: dict[str, Tail] = field(default_factory=dict)
    stats: dict[str, FileStat | None] = field(default_factory=dict)
    idle_for: float = 0.0

    def touched(self, files: list[str]) -> bool:
        """Whether any file grew, changed or was replaced since the last poll (a record being
        written slowly is activity before it is complete)."""
        moved = False
        for f in files:
            now = FileStat.of(f)
            moved |= now is not None and self.stats.get(f) != now
            self.stats[f] = now
        return moved


class Watcher:
    """Follows ``path`` and reports findings as they appear (see the module docstring).

    Args:
        path: a log folder (or one file) being written.
        config: settings as :func:`ppo_doctor.config.resolve` returns them.
        emit: called with each event dict (``run``, ``finding``, ``end``).
        idle: seconds without any change after which every run counts as finished.
        clock: the time source (tests drive it).
    """

    def __init__(self, path: str | Path, config: Config | Mapping[str, Any] | None, emit: Callable[[dict[str, Any]], None], *, idle: float = 120.0, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self.config = coerce(config)
        self.emit = emit
        self.idle = idle
        self.clock = clock
        self.runs: dict[str, _RunState] = {}
        # per run id (a file holding several runs gives ids "<folder>/<part>"): what was said
        self.announcers: dict[str, Announcer] = {}
        self.started = clock()
        # the idle clock counts waiting, not work: a first poll of many runs, an analysis or a
        # slow --exec notifier is time the watcher spent, not time the writers were quiet
        self._polled_at: float | None = None
        self._idle_without_runs = 0.0

    def poll(self) -> None:
        """Discover, read what is new, analyse the runs that changed, emit their new findings."""

        now = self.clock()
        waited = 0.0 if self._polled_at is None else max(0.0, now - self._polled_at)
        try:
            self._poll(now, waited)
        finally:
            self._polled_at = self.clock()

    def _poll(self, now: float, waited: float) -> None:
        sources, _ = discover(self.path, self.config.excluded)  # a file not recognisable yet (half its first record) comes later
        if not sources:
            self._idle_without_runs += waited
        seen = {source.id for source in sources}
        for gone in self.runs.values():
            if gone.id not in seen:
                gone.idle_for += waited  # gone from the folder: nothing more is coming from it
        for source in sources:
            files = [str(f) for _, f in source.files]
            state = self.runs.get(source.id)
            if state is None:
                state = self.runs[source.id] = self._adopt(source.id, str(source.root), files, now)
            touched = state.touched(files)
            changed = False
            for fmt, fpath in source.files:
                tail = state.tails.get(str(fpath))
                if tail is None:
                    tail = state.tails[str(fpath)] = tail_for(Path(fpath), fmt)
                changed |= tail.poll()
            state.idle_for = 0.0 if (touched or changed) else state.idle_for + waited
            if not changed:
                continue

            def read_file(fmt: str, fpath: Path, errors: list[ReadIssue], tails: dict[str, Tail] = state.tails) -> list[RawRun] | None:
                tail = tails.get(str(fpath))
                return None if tail is None else fresh(tail.raw_runs())

            runs, _ = read_source(source, self.config.aliases, read_file)
            for run in runs:
                run.live = True
                self._announce(analyze_run(run, self.config))

    def _adopt(self, run_id: str, root: str, files: list[str], now: float) -> _RunState:
        """The state of a run seen for the first time: it takes over the followers and the
        announcements of the runs whose files it now holds (the same training, regrouped); a run
        that holds none of them is announced as new."""
        state = _RunState(run_id, root)
        wanted = set(files)
        for old_id in [k for k, old in self.runs.items() if wanted.intersection(old.tails)]:
            old = self.runs.pop(old_id)
            state.tails.update(old.tails)
            state.stats.update(old.stats)
            for key in [k for k in self.announcers if k == old_id or k.startswith(old_id + "/")]:
                self.announcers.setdefault(run_id + key[len(old_id) :], self.announcers.pop(key))
            log.debug("watch: run %s continues as %s", old_id, run_id)
        if not state.tails:
            self.emit({"event": "run", "run": run_id, "path": root, "time": now})
        return state

    def _announce(self, rr: RunReport, *, final: bool = False) -> None:
        step = rr.run.frame.step_range()
        announcer = self.announcers.setdefault(rr.run.id, Announcer())
        for f in announcer.update(rr.findings, final=final):
            self.emit(self.finding_event(rr.run.id, f, announcer.previous(f), rr.causes, None if step is None else step[1]))

    def finding_event(self, run_id: str, f: Finding, before: Finding | None, causes: list[RankedCause], step: int | None) -> dict[str, Any]:
        return {
            "event": "finding",
            "status": "new" if before is None else "changed",
            "run": run_id,
            "step": step,
            "time": self.clock(),
            "finding": finite_json(f.to_dict()),
            "fix": top_fix(f, causes),
            "text": describe(f, causes),
        }

    def all_idle(self) -> bool:
        """True when every run has been idle ``idle`` seconds (or none appeared in that time).

        Idle time is waiting time: the time between polls in which no file of the run grew,
        changed or was replaced, plus the wait since the last poll; the time spent inside a
        poll (discovery, reading, analysis, ``--exec``) never counts."""
        now = self.clock()
        since = now - (self.started if self._polled_at is None else self._polled_at)
        if not self.runs:
            return self._idle_without_runs + since >= self.idle
        return all(s.idle_for + since >= self.idle for s in self.runs.values())

    def finish(self, reason: str, fail_on: str) -> int:
        """The closing report (offline ``analyze`` of the folder), its events and the exit code."""

        report: Report = analyze(self.path, self.config)
        for rr in report.runs:
            self._announce(rr, final=True)  # what only the final read shows is said too
        if not report.runs:
            code = EXIT_ERROR
        else:
            failing = [] if fail_on == "never" else report.findings_at_or_above(fail_on)
            code = EXIT_FINDINGS if failing else EXIT_OK
        self.emit(
            {
                "event": "end",
                "reason": reason,
                "exit_code": code,
                "time": self.clock(),
                "runs": [{"run": r.run.id, "verdict": r.verdict, "verdict_reason": r.verdict_reason, "symptoms": r.symptoms} for r in report.runs],
                "errors": [{"path": e.path, "message": e.message} for e in report.errors],
            }
        )
        return code


def webhook_text(event: dict[str, Any]) -> str | None:
    """The chat message for a ``finding`` event at warning or error level (None for the rest:
    notes and run / end events stay on the terminal)."""
    if event.get("event") != "finding" or event["finding"].get("severity") not in ("warning", "error"):
        return None
    step = f" at step {event['step']}" if event.get("step") is not None else ""
    return f"ppo-doctor [{event['run']}{step}] {'changed: ' if event['status'] == 'changed' else ''}{event['text']}"


def run_exec(cmd: str, event: dict[str, Any]) -> None:
    """Run the user's ``--exec`` command with ``event`` as JSON on stdin; a failure is logged."""
    try:
        proc = subprocess.run(cmd, shell=True, input=json.dumps(event) + "\n", text=True, timeout=EXEC_TIMEOUT_S, check=False)  # noqa: S602 - the user's own command line
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("--exec %r failed: %s", cmd, exc)
        return
    if proc.returncode:
        log.warning("--exec %r exited with %d", cmd, proc.returncode)


__all__ = ["Watcher", "run_exec", "webhook_text"]
