"""HTML report of 30 runs: wall time and file size (issue 18 budget: under 15 s and 10 MB).

    python -m benchmarks.bench_html              # 30 runs, 3 repeats
    python -m benchmarks.bench_html --no-write   # print only

Input: the five ``sample_logs/`` runs (TRL-named TensorBoard, JSONL and ``trainer_state.json``
logs with incidents: KL blow-up, reward hacking, negative KL, an LR x100 collapse, one healthy
run) copied six times into ``benchmarks/data/html30/set-N/``, 30 runs in all.  Measured:

* ``ppo-doctor report DIR --format html -o FILE`` end to end in a fresh process (imports,
  reading, rules, plots, writing), wall and CPU time, and the file's size;
* in one process, the figures the page embeds now (one overview figure per run, the HTML
  style: 80 dpi, 64-colour palette PNG, capped y ticks) against what it embedded before (every
  group figure of ``ppo-doctor plot``, 100 dpi RGBA PNG), called in alternation so both see
  the same machine load: the ratio is the figure that survives a busy machine.
"""

from __future__ import annotations

import argparse
import base64
import io
import shutil
import statistics
import tempfile
from pathlib import Path

from benchmarks._common import DATA, ROOT, machine, paired_times, python_subprocess, write_section

COPIES = 6
BUDGET_S, BUDGET_MB = 15.0, 10.0


def inputs(copies: int = COPIES) -> Path:
    """``copies`` x the sample runs under benchmarks/data/html30 (rebuilt when incomplete)."""
    out = DATA / "html30"
    samples = [p for p in sorted((ROOT / "sample_logs").iterdir()) if p.is_dir()]
    if not all((out / f"set-{i}" / p.name).is_dir() for i in range(copies) for p in samples):
        shutil.rmtree(out, ignore_errors=True)
        for i in range(copies):
            for p in samples:
                shutil.copytree(p, out / f"set-{i}" / p.name)
    return out


def _embedded_now(report) -> int:
    from ppo_doctor.report.plots import png_data_uris

    return sum(len(uri) for rr in report.runs for _, uri in png_data_uris(rr))


def _embedded_before(report) -> int:
    """What the page embedded before issue 18: every group figure, plot-command style."""
    from ppo_doctor.report.plots import PLOT_STYLE, draw, plot_specs, save

    total = 0
    for rr in report.runs:
        for spec in plot_specs(rr):
            buf = io.BytesIO()
            save(draw(spec, None, PLOT_STYLE), buf, "png", PLOT_STYLE)
            total += len("data:image/png;base64,") + len(base64.b64encode(buf.getvalue()))
    return total


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args(argv)
    folder = inputs()
    walls, cpus, sizes = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.html"
        for _ in range(args.repeats):
            wall, proc, cpu = python_subprocess(
                ["-m", "ppo_doctor.cli", "report", str(folder), "--isolated", "--format", "html", "-o", str(out)], one_core=False
            )
            if proc.returncode != 0:
                raise SystemExit(f"ppo-doctor failed ({proc.returncode}): {proc.stderr[-2000:]}")
            walls.append(wall)
            cpus.append(cpu)
            sizes.append(out.stat().st_size)
    from ppo_doctor import analyze

    report = analyze(str(folder))
    runs = len(report.runs)
    pair = paired_times(lambda: _embedded_before(report), lambda: _embedded_now(report), 2)
    wall, cpu, mb = statistics.median(walls), statistics.median(cpus), statistics.median(sizes) / 1e6
    table = "\n".join(
        [
            f"Machine: {machine()}",
            "",
            "| measure | value | budget |",
            "|---|---|---|",
            f"| runs in the report | {runs} | 30 |",
            f"| `report --format html` wall time, fresh process (median of {args.repeats}) | {wall:.1f} s ({wall / runs:.2f} s per run) | < {BUDGET_S:g} s {'met' if wall < BUDGET_S else '**missed**'} |",
            f"| same, CPU time (user + system) | {cpu:.1f} s | |",
            f"| HTML file size | {mb:.1f} MB ({mb * 1e3 / runs:.0f} kB per run) | < {BUDGET_MB:g} MB {'met' if mb < BUDGET_MB else '**missed**'} |",
            f"| figures embedded before (every group, 100 dpi RGBA) | {statistics.median(pair.a):.1f} s, {pair.last_a / 1e6:.1f} MB | |",
            f"| figures embedded now (overview, 80 dpi, 64-colour palette) | {statistics.median(pair.b):.1f} s, {pair.last_b / 1e6:.1f} MB | |",
            f"| now / before, paired in one process | time {pair.ratio:.2f}x (IQR {pair.low:.2f}-{pair.high:.2f}), size {pair.last_b / pair.last_a:.2f}x | |",
        ]
    )
    print(table)
    if not args.no_write:
        write_section("html", "HTML report of 30 runs (issue 18)", "Reproduce: `python -m benchmarks.bench_html`\n\n" + table)


if __name__ == "__main__":
    main()
