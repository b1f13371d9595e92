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
