"""The labelled real runs replayed live: is a run its labellers call healthy ever stopped?

    python -m benchmarks.live_labelled [--labels tests/data/real_labels.json] [--shared ../shared]

Every run of ``tests/data/real_labels.json`` labelled healthy or unhealthy (in the sets present
under ``--shared``: :func:`benchmarks.real_scorecard.present`) is analysed and
replayed through a :class:`~ppo_doctor.monitor.Monitor` on ``DoctorCallback``'s schedule, as
:mod:`benchmarks.live_replay` replays runs (a check every 3 % of its logged steps,
``stop_on="error"``); a stop is an error before the run's last step.  Unlike ``live_replay``,
whose unlabelled runs are healthy when their finished report says so, the labels are the
ground truth here: a healthy-labelled run stopped is the defect to count (docs/live.md).
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import ppo_doctor
from benchmarks.live_replay import first_stop, replay_on_schedule
from benchmarks.real_scorecard import LABELS, SHARED, load_labels, present

log = logging.getLogger(__name__)


def stops(labels: Path = LABELS, shared: Path = SHARED) -> list[tuple[dict, tuple[int, str, str] | None]]:
    """(label, (step, code, symptom) of the first live error before the last step, or None) per run."""
    here = {lab.key for lab in present(load_labels(labels)[0], shared)[0]}
    runs = [
        r
        for r in json.loads(labels.read_text(encoding="utf-8"))["runs"]
        if r["verdict"] in ("healthy", "unhealthy") and (r["folder"], r["run"]) in here
    ]
    out = []
    for folder in dict.fromkeys(r["folder"] for r in runs):
        reports = {rr.run.id: rr for rr in ppo_doctor.analyze(shared / folder).runs}
        for label in (r for r in runs if r["folder"] == folder):
            rr = reports.get(label["run"])
            rng = None if rr is None else rr.run.frame.step_range()
            if rng is None:
                continue
            hit = first_stop(replay_on_schedule(rr.run), rng[1])
            out.append((label, None if hit is None else (hit[0], hit[1].code, hit[1].symptom)))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--shared", type=Path, default=SHARED)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("ppo_doctor").setLevel(logging.ERROR)
    results = stops(args.labels, args.shared)
    healthy = [(lab, s) for lab, s in results if lab["verdict"] == "healthy"]
    faulty = [(lab, s) for lab, s in results if lab["verdict"] == "unhealthy"]
    own = [(lab, s) for lab, s in faulty if s is not None and (not lab["must"] or s[2] in lab["must"])]
    for lab, s in healthy:
        if s is not None:
            log.info("- healthy %s %s stopped at step %s by %s [%s]", lab["folder"], lab["run"], *s)
    log.info(
        "healthy-labelled runs: %d, stopped: %d; unhealthy-labelled: %d, stopped: %d, for a symptom their label names: %d",
        len(healthy), sum(s is not None for _, s in healthy), len(faulty), sum(s is not None for _, s in faulty), len(own),
    )


if __name__ == "__main__":
    main()
