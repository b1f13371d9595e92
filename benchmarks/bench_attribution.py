"""A sweep's attribution at search scale (issue 28): ``attribute()`` on a random search of N trials.

    python -m benchmarks.bench_attribution [--counts 1000,3000,10000,30000] [--repeats 3]
        [--baseline TREE --baseline-counts 200,400,800,1600] [--no-write]

The input is :func:`benchmarks.gen_sweep.random_search` (a distinct learning rate and KL
coefficient per trial, so each has N - 1 candidate thresholds; a batch size and an optimiser; three
outcomes), built before the clock.  Each count is timed in a fresh process (median of
``--repeats`` calls).  ``--baseline TREE`` times an earlier checkout's ``attribute`` on the same
inputs (``git worktree add /tmp/base <commit>``; its ``ppo_doctor`` imported first), at its own, smaller
counts: the version before issue 28 built every candidate's two sides as sets and took hours at
10,000 trials.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from benchmarks._common import ROOT, machine, write_section

CHILD = """
import json, statistics, sys, time
sys.path.insert(0, {root!r})
from benchmarks.gen_sweep import random_search  # this checkout's generator, the same inputs
sys.path.insert(0, {tree!r})
for name in [m for m in sys.modules if m == "ppo_doctor" or m.startswith("ppo_doctor.")]:
    del sys.modules[name]
from ppo_doctor.sweep.attribution import attribute  # the timed tree's
params, outcomes = random_search({n}, seed=0)
times = []
for _ in range({repeats}):
    t0 = time.perf_counter(); att = attribute(params, outcomes); times.append(time.perf_counter() - t0)
top = att.splits[0]
print(json.dumps({{"seconds": statistics.median(times), "top": top.label(), "p": top.p_value, "tests": top.tests}}))
"""


def measure(n: int, repeats: int, tree: str | None = None) -> dict[str, object]:
    """One count in a fresh process; ``tree``: the checkout whose ``ppo_doctor`` is timed."""
    code = CHILD.format(root=str(ROOT), tree=str(tree or ROOT), n=n, repeats=repeats)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def table(rows: list[tuple[int, dict[str, object]]]) -> list[str]:
    first = rows[0][1]["seconds"] / rows[0][0]  # type: ignore[operator]
    lines = ["| trials | candidate splits | median wall | per trial | per trial vs the smallest | top split |", "|---|---|---|---|---|---|"]
    for n, r in rows:
        per = r["seconds"] / n  # type: ignore[operator]
        lines.append(f"| {n:,} | {r['tests']:,} per outcome | {r['seconds']:.2f} s | {per * 1e3:.3f} ms | {per / first:.2f}x | {r['top']} |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--counts", default="1000,3000,10000,30000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline", help="an earlier checkout to time on the same inputs")
    parser.add_argument("--baseline-counts", default="200,400,800,1600")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    rows = [(n, measure(n, args.repeats)) for n in map(int, args.counts.split(","))]
    body = [
        f"Reproduce: `python -m benchmarks.bench_attribution --counts {args.counts} --repeats {args.repeats}"
        + (f" --baseline {args.baseline} --baseline-counts {args.baseline_counts}`" if args.baseline else "`"),
        "",
        "`attribute()` on `benchmarks.gen_sweep.random_search(N)`: 4 parameters (two continuous, one distinct value per trial), 3 outcomes; "
        "a fresh process per count, the input built before the clock.",
        "",
        f"Machine: {machine()}.",
        "",
        *table(rows),
    ]
    if args.baseline:
        base = [(n, measure(n, 1, args.baseline)) for n in map(int, args.baseline_counts.split(","))]
        same = {n: r for n, r in rows}
        body += ["", f"Before (the tree at `{args.baseline}`, one call each):", "", *table(base)]
        body += [f"- the same top split as now at {n:,} trials: {'yes' if same[n]['top'] == r['top'] else 'no'}" for n, r in base if n in same]
    text = "\n".join(body)
    print(text)
    if not args.no_write:
        write_section("attribution", "Sweep attribution at search scale (issue 28)", text)


if __name__ == "__main__":
    main()
