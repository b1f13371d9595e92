"""Live alerts against the finished run: does the doctor, checking a run as its callback would,
only say what the finished run's report keeps (docs/live.md, "A live alert is one the finished run
would keep")?

    python -m benchmarks.live_replay sample_logs ../shared/corpus ../shared/realruns \\
        /tmp/suites/trl-s1 /tmp/suites/ppo-s1 --write

Every run found under the paths is analysed offline (the finished run's report) and replayed
through a :class:`~ppo_doctor.monitor.Monitor` on ``DoctorCallback``'s schedule: told its plan
(``max_steps`` from its log, else its last step, as the Trainer tells the callback), a check every
:func:`ppo_doctor.integrations.transformers.default_check_every` logged steps, ``stop_on="error"``.

A run is *healthy* when it is a scenario whose label expects no symptom (the folder names of
``ppo-doctor validate --workdir``: ``<scenario>`` or ``<scenario>-s<seed>``), or, for runs without
a label, when its finished report is healthy; *faulty* otherwise.  Per suite:

* healthy runs stopped (must be 0);
* live error alerts (log quality aside) whose rule and metric the finished report still holds at
  error level: kept / said;
* warnings or errors said live on a healthy run that its finished report does not hold, per run;
* faulty runs stopped, stopped for their own fault (a scenario's expected symptom; an unlabelled
  run's own final symptoms), and the median distance from the fault's onset (the earliest final
  finding of that symptom) to the stop, as a share of the run.
"""

from __future__ import annotations

import argparse
import logging
import math
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

import ppo_doctor
from benchmarks._common import write_section
from ppo_doctor.monitor import replay
from ppo_doctor.reference.scenarios import SCENARIOS, Scenario
from ppo_doctor.reference.trl_scenarios import TRL_SCENARIOS
from ppo_doctor.results import RunReport

log = logging.getLogger(__name__)

CHECK_SHARE, MIN_CHECK_EVERY = 0.03, 10  # DoctorCallback's default schedule (integrations/transformers.py)
_SEED = re.compile(r"-s\d+$")


def scenario_of(run_path: str) -> Scenario | None:
    """The scenario a ``validate --workdir`` run folder was trained for, or None."""
    for part in reversed(Path(run_path).parts):
        for name in (part, _SEED.sub("", part)):
            sc = SCENARIOS.get(name) or TRL_SCENARIOS.get(name)
            if sc is not None:
                return sc
    return None


@dataclass
class Outcome:
    run: str
    healthy: bool
    length: int
    stop: tuple[int, str, str] | None  # (step, code, symptom)
    own_fault: bool | None
    delay_share: float | None
    errors_said: int
    errors_kept: int
    unkept_warnings: list[str] = field(default_factory=list)
    unkept_errors: list[str] = field(default_factory=list)


def check_every(calls: int) -> int:
    """The callback's interval for a run of ``calls`` logged steps."""
    return max(MIN_CHECK_EVERY, math.ceil(CHECK_SHARE * calls))


def first_stop(alerts, last_step: int):
    """The first error-level alert (log quality aside) said before ``last_step``, as ``(step,
    finding)``, or None: a stop is a check before the run's last step (what the final check says,
    the run's end says)."""
    return next(((s, a) for s, a in alerts if s < last_step and a.severity == "error" and a.symptom != "log_quality"), None)


def replay_on_schedule(run):
    """``run`` replayed through a Monitor on ``DoctorCallback``'s schedule: its alerts."""
    calls = len(set(run.frame.column("step").tolist()))
    _, alerts = replay(run, check_every=check_every(calls))
    return alerts


def measure(rr: RunReport) -> Outcome | None:
    run = rr.run
    rng = run.frame.step_range()
    if rng is None or rr.verdict == "unknown":
        return None
    sc = scenario_of(run.path)
    healthy = sc.healthy if sc is not None else rr.verdict == "healthy"
    alerts = replay_on_schedule(run)
    final_err = {(f.code, f.metric) for f in rr.findings if f.severity == "error"}
    final_any = {(f.code, f.metric) for f in rr.findings if f.severity != "info"}
    said_err = {(a.code, a.metric) for _, a in alerts if a.severity == "error" and a.symptom != "log_quality"}
    length = max(1, (getattr(run, "planned_steps", None) or rng[1]) - rng[0])
    unkept = sorted(
        {
            f"{a.severity} {a.code} on {a.metric} at step {s} ({(s - rng[0]) / length:.0%} of the run)"
            for s, a in alerts
            if a.severity != "info" and a.symptom != "log_quality" and (a.code, a.metric) not in final_any
        }
    )
    stop = first_stop(alerts, rng[1])
    own = delay = None
    if stop is not None and not healthy:
        # a scenario's own fault: the symptoms its label expects or allows (what its curves show)
        wanted = set(sc.expected | sc.allowed) if sc is not None else set(rr.symptoms)
        own = stop[1].symptom in wanted
        onsets = [f.start_step for f in rr.findings if f.severity != "info" and f.symptom in wanted and f.start_step is not None]
        if own and onsets:
            delay = max(0, stop[0] - min(onsets)) / length
    return Outcome(
        run="/".join(Path(run.path).parts[-2:]),
        healthy=healthy,
        length=length,
        stop=None if stop is None else (stop[0], stop[1].code, stop[1].symptom),
        own_fault=own,
        delay_share=delay,
        errors_said=len(said_err),
        errors_kept=len(said_err & final_err),
        unkept_warnings=unkept if healthy else [],
        unkept_errors=sorted(f"{code} on {metric}" for code, metric in said_err - final_err),
    )


def summarize(name: str, outs: list[Outcome]) -> tuple[str, list[str]]:
    healthy = [o for o in outs if o.healthy]
    faulty = [o for o in outs if not o.healthy]
    stopped_healthy = [o for o in healthy if o.stop is not None]
    said = sum(o.errors_said for o in outs)
    kept = sum(o.errors_kept for o in outs)
    unkept = sum(len(o.unkept_warnings) for o in healthy)
    stopped = [o for o in faulty if o.stop is not None]
    own = [o for o in stopped if o.own_fault]
    delays = [o.delay_share for o in own if o.delay_share is not None]
    row = (
        f"| {name} | {len(healthy)} | **{len(stopped_healthy)}** | {kept}/{said}"
        f" ({(kept / said if said else 1):.0%}) | {unkept / len(healthy) if healthy else 0:.2f} | {len(faulty)} | {len(stopped)} | {len(own)} |"
        f" {(f'{statistics.median(delays):.1%}' if delays else '-')} |"
    )
    notes = [f"- {name}: healthy run {o.run} stopped at step {o.stop[0]} by {o.stop[1]} [{o.stop[2]}]" for o in stopped_healthy if o.stop]
    notes += [f"- {name}: {o.run} (faulty) stopped at step {o.stop[0]} by {o.stop[1]} [{o.stop[2]}], not its own fault" for o in stopped if not o.own_fault and o.stop]
    notes += [f"- {name}: {o.run} (faulty) not stopped" for o in faulty if o.stop is None]
    notes += [f"- {name}: {o.run} (healthy) said live, not kept: {w}" for o in healthy for w in o.unkept_warnings]
    notes += [f"- {name}: {o.run}: live error {e} is not an error at the end" for o in outs for e in o.unkept_errors]
    return row, notes


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--write", action="store_true", help="rewrite the live-replay section of RESULTS.md")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    table = [
        "| suite | healthy runs | healthy stopped | live errors kept at the end | unkept warnings per healthy run | faulty runs | stopped | for its own fault | median stop after onset (share of run) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    notes: list[str] = []
    pooled: list[Outcome] = []
    for p in args.paths:
        outs = [o for o in (measure(rr) for rr in ppo_doctor.analyze(p).runs) if o is not None]
        pooled += outs
        row, extra = summarize(p.name, outs)
        table.append(row)
        notes += extra
    table.append(summarize("**all**", pooled)[0])
    delays = sorted((o.delay_share, o.run) for o in pooled if o.delay_share is not None)
    notes.append("- stops after onset (share of the run), per run: " + ", ".join(f"{r} {d:.0%}" for d, r in delays))
    body = "\n".join(
        [f"Reproduce: `python -m benchmarks.live_replay {' '.join(str(p) for p in args.paths)}`", "", *table, "", *notes]
    )
    log.info(body)
    if args.write:
        write_section("live-replay", "Live replay: alerts against the finished run", body)


if __name__ == "__main__":
    main()
