"""``analyze(jobs=N)`` reads and analyses runs in worker processes: same report as ``jobs=1``."""

from __future__ import annotations

from pathlib import Path

from ppo_doctor import analyze

SAMPLE_LOGS = Path(__file__).resolve().parent.parent / "sample_logs"


def _summary(report):
    return [
        (r.run.id, r.verdict, [(f.code, f.start_step, f.message) for f in r.findings], [(c.id, c.confidence) for c in r.causes])
        for r in report.runs
    ], [(e.path, e.message) for e in report.errors]


def test_parallel_analysis_gives_the_same_report(tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "metrics.jsonl").write_text("not json at all\n")
    paths = [SAMPLE_LOGS, broken]
    serial = analyze(paths, jobs=1)
    parallel = analyze(paths, jobs=2)
    assert len(serial.runs) == 5
    assert _summary(parallel) == _summary(serial)
    assert len(parallel.runs[0].run.frame) == len(serial.runs[0].run.frame)
