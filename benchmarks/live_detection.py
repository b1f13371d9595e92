"""How early the live checks catch the reference scenarios' faults (docs/live.md).

    python -m benchmarks.live_detection sample_logs/*            # the bundled runs
    python -m benchmarks.live_detection RUN_DIR ... --check-every 10 --write

Each finished run is replayed step by step through a ``Monitor`` (:func:`ppo_doctor.monitor.replay`)
with a check every ``--check-every`` logged steps.  For every warning or error finding of the
offline report (log-quality notes aside) it reports the finding's onset (``start_step``), the
step of the check that first announced that rule on that metric, and the difference: the steps
a training would have run past the onset before the alert.  ``stop@error`` is the step at which
``stop_on="error"`` would have stopped the run, and ``re-said`` how many later announcements the
rule made after the first (a separate incident of it, or its severity rose, as the run grew).
Last, the alerts said on the way that the finished run's report does not hold (live false alarms).
"""

from __future__ import annotations

import argparse
import logging
import statistics
from pathlib import Path

import ppo_doctor
from benchmarks._common import write_section
from ppo_doctor.monitor import replay

log = logging.getLogger(__name__)


def measure(path: Path, check_every: int) -> tuple[list[list[str]], list[int], list[str]]:
    rows: list[list[str]] = []
    delays: list[int] = []
    transient: list[str] = []
    for rr in ppo_doctor.analyze(path).runs:
        _, alerts = replay(rr.run, check_every=check_every)
        final = {(f.code, f.metric) for f in rr.findings if f.severity != "info"}
        for s, a in alerts:  # said on the way (warning or worse) but not in the finished run's report
            if a.severity != "info" and a.symptom != "log_quality" and (a.code, a.metric) not in final:
                transient.append(f"{path.name}: {a.severity} {a.code} {a.name} on {a.metric} at step {s}")
        rng = rr.run.frame.step_range()
        last = rng[1] if rng else 0
        stop = next((s for s, f in alerts if f.severity == "error"), None)
        for f in rr.findings:
            if f.severity == "info" or f.symptom == "log_quality":
                continue
            said = [(s, a) for s, a in alerts if (a.code, a.metric) == (f.code, f.metric)]
            first = said[0][0] if said else None
            delay = None if first is None or f.start_step is None else first - f.start_step
            if delay is not None and f.metric != "texts":
                delays.append(delay)
            rows.append(
                [
                    path.name,
                    f"{f.code} {f.name}",
                    f.symptom,
                    f.severity,
                    str(f.start_step),
                    "-" if first is None else str(first),
                    "-" if delay is None else str(delay),
                    "-" if stop is None else str(stop),
                    str(max(0, len(said) - 1)),
                    str(last),
                ]
            )
    return rows, delays, transient


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--check-every", type=int, default=10)
    parser.add_argument("--write", action="store_true", help="rewrite the live-detection section of RESULTS.md")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    table = [
        "| run | finding | symptom | severity (final) | onset | first alert at | steps after onset | stop@error | re-said | last step |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    all_delays: list[int] = []
    all_transient: list[str] = []
    for p in args.paths:
        rows, delays, transient = measure(p, args.check_every)
        all_delays += delays
        all_transient += transient
        table += ["| " + " | ".join(r) + " |" for r in rows]
    summary = (
        f"{len(all_delays)} findings on metrics (the text rules' rows aside: their onset is where the 'late' "
        "samples begin, which moves with the run, so it says nothing about detection delay); steps from onset "
        f"to the first alert: median {statistics.median(all_delays):g}, "
        f"max {max(all_delays)}, min {min(all_delays)} (a check every {args.check_every} steps)."
        if all_delays
        else "no warning or error finding"
    )
    body = "\n".join(
        [
            f"Reproduce: `python -m benchmarks.live_detection {' '.join(str(p) for p in args.paths)} --check-every {args.check_every}`",
            "",
            *table,
            "",
            summary,
            "",
            f"Alerts (warning or error) said during a run but absent from the finished run's report: {len(all_transient)}"
            + (":" if all_transient else "."),
            *[f"- {t}" for t in all_transient],
        ]
    )
    log.info(body)
    if args.write:
        write_section("live-detection", "Live checks: steps from onset to the first alert", body)


if __name__ == "__main__":
    main()
