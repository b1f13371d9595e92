"""Text statistics behind the sample rules (PD95x): bounds, and results that do not depend on
the process (a set of words iterates in a per-process hash order)."""

from __future__ import annotations

import os
import subprocess
import sys

from ppo_doctor.rules.textstats import js_divergence

EARLY = ["the movie was fine and the acting was good", "a calm story about a family", "good pacing overall"]
LATE = ["wow best movie ever !!!", "amazing amazing loved it", "so good 10/10 best ever", "the movie was fine"]


def test_js_divergence_bounds():
    assert js_divergence(EARLY, EARLY) == 0.0
    assert js_divergence(["alpha beta"], ["gamma delta"]) == 1.0
    assert 0.0 < js_divergence(EARLY, LATE) < 1.0
    assert js_divergence([], LATE) == 0.0


def test_js_divergence_is_the_same_in_every_process():
    """Reports must not change in their last digit from one run to the next."""
    code = f"from ppo_doctor.rules.textstats import js_divergence; print(repr(js_divergence({EARLY!r}, {LATE!r})))"
    outs = set()
    for seed in ("1", "2", "3", "4"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        outs.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout)
    assert len(outs) == 1 and float(outs.pop()) == js_divergence(EARLY, LATE)



def _analyze_log(tmp_path, samples):
    """A run folder of 300 steps of reward (metrics.jsonl) and its text samples (samples.jsonl), analysed."""
    import json

    import ppo_doctor

    run = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
    run.mkdir()
    rows = [{"step": i, "reward": 0.1 * (i % 7)} for i in range(1, 301)]
    (run / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    (run / "samples.jsonl").write_text("\n".join(json.dumps(r) for r in samples) + "\n", encoding="utf-8")
    (report,) = ppo_doctor.analyze(run).runs
    return report.findings


def test_samples_from_one_step_are_no_collapse_and_no_degeneration(tmp_path):
    """A collapse or a rise in repetition is a change: samples from a single step have no earlier
    level to compare with, so PD952 / PD951 say what they see as a note, with no invented
    'early: 0%' (a structured task answers alike by design: a JSON action per state)."""
    actions = ['{"work": 0.88, "consumption": 0.68}'] * 6 + ['{"work": 0.6, "consumption": 0.6}'] * 2
    looped = ["I love it I love it I love it I love it I love it I love it"] * 4
    for texts, code in ((actions, "PD952"), (looped, "PD951")):
        samples = [{"step": 300, "prompt": f"state {i}", "completion": t} for i, t in enumerate(texts)]
        (finding,) = [f for f in _analyze_log(tmp_path, samples) if f.code == code]
        assert finding.severity == "info" and "no earlier sampled step" in finding.message, finding.message
        assert "early" not in finding.observed
    # with an earlier step of diverse samples the same late samples are a warning
    early = [{"step": 10, "prompt": f"state {i}", "completion": f"a different answer number {i} about item {i * 7}"} for i in range(8)]
    late = [{"step": 300, "prompt": f"state {i}", "completion": t} for i, t in enumerate(actions)]
    (finding,) = [f for f in _analyze_log(tmp_path, early + late) if f.code == "PD952"]
    assert finding.severity == "warning" and "early: 0%" in finding.message
