"""Measure the healthy reference population: what each sign reaches on runs whose outcome was good.

    python -m benchmarks.population [--labels FILE] [--shared DIR] [--write]

Every run of ``tests/data/real_labels.json`` labelled healthy in a calibration set (public logs
under ``../shared``, read in place; :func:`calibration`) is loaded and measured with :func:`ppo_doctor.rules.population.measure`; the table
(runs, repositories, p50 / p90 / max per sign, and the runaway limit each rule takes as its
default) is printed as markdown.  ``--write`` stores it in ``ppo_doctor/rules/population.json``,
the file the rules read.  ``benchmarks/real_scorecard.py --loro`` calls :func:`samples` and
:func:`ppo_doctor.rules.population.table` again without each held-out repository.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Iterable, Sequence

from benchmarks.real_scorecard import LABELS, SHARED, Label, load_labels, present
from ppo_doctor.rules import population

__all__ = ["calibration", "samples", "render", "main"]


def calibration(labels: Iterable[Label], doc: dict) -> list[Label]:
    """The labels of the sets the population is measured on (``calibration_sets`` of the labels
    file): the sets every copy of ../shared holds, so that anyone can measure the shipped limits
    again.  The other sets (the blind ones a session fetched) score the limits, never set them."""
    sets = set(doc["calibration_sets"])
    return [lab for lab in labels if lab.set in sets]


def samples(labels: Iterable[Label], shared: Path = SHARED) -> list[tuple[Label, population.Sample]]:
    """Each healthy-labelled run measured, with its label (one load per folder)."""
    from ppo_doctor import load_runs
    from ppo_doctor.view import RunView

    by_folder: dict[str, list[Label]] = {}
    for lab in labels:
        if lab.verdict == "healthy":
            by_folder.setdefault(lab.folder, []).append(lab)
    out = []
    for folder, labs in sorted(by_folder.items()):
        runs = {r.id: r for r in load_runs(str(shared / folder))}
        for lab in labs:
            run = runs.get(lab.run)
            if run is not None:
                view = RunView(run)
                sample = population.Sample(lab.repository or lab.folder, population.measure(view), view.domain, view.framework)
                out.append((lab, sample))
    return out


def render(table: dict[str, dict[str, float]], measured: Iterable[population.Sample] = ()) -> str:
    """The limits table, then the same percentiles per domain and framework (context: the limits
    are taken over the whole population)."""
    lines = [
        "| sign | healthy runs | repositories | p50 | p90 | max | runaway limit |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, e in table.items():
        limit = f"{e['limit']:.3g}" if "limit" in e else f"{population.FALLBACKS[key]:.3g} (too few runs: the documented fallback)"
        lines.append(f"| {key} | {e['runs']:.0f} | {e['repositories']:.0f} | {e['p50']:.3g} | {e['p90']:.3g} | {e['max']:.3g} | {limit} |")
    groups: dict[tuple[str, str, str], list[population.Sample]] = {}
    for smp in measured:
        for key in smp.levels:
            groups.setdefault((key, smp.domain, smp.framework), []).append(smp)
    if groups:
        lines += ["", "| sign | domain | framework | runs | repositories | p50 | p90 | max |", "|---|---|---|---|---|---|---|---|"]
        for (key, dom, fw), smps in sorted(groups.items()):
            sub = population.table(population.Sample(x.repository, {key: x.levels[key]}) for x in smps)[key]
            lines.append(
                f"| {key} | {dom} | {fw} | {sub['runs']:.0f} | {sub['repositories']:.0f} | {sub['p50']:.3g} | {sub['p90']:.3g} | {sub['max']:.3g} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument("--write", action="store_true", help=f"store the table in {population.DATA}")
    args = parser.parse_args(argv)
    if not args.shared.is_dir():
        print(f"{args.shared} is absent: nothing to measure", file=sys.stderr)
        return 2
    labels, _, doc = load_labels(args.labels)
    labels, absent = present(calibration(labels, doc), args.shared)
    if absent:
        print(f"calibration sets absent from {args.shared}: {', '.join(absent)}", file=sys.stderr)
        return 2
    measured = samples(labels, args.shared)
    table = population.table(s for _, s in measured)
    print(render(table, (s for _, s in measured)), end="")
    if args.write:
        doc = {
            "description": "Sustained level (90th percentile) of each sign on the healthy-labelled public runs of the "
            "calibration sets of tests/data/real_labels.json; 'limit' is the largest, never below the sign's documented band. "
            "Written by `python -m benchmarks.population --write`; see docs/population.md.",
            "sets": sorted({lab.set for lab in labels}),
            "healthy_runs": len(measured),
            "repositories": len({s.repository for _, s in measured}),
            "signs": table,
        }
        population.DATA.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
