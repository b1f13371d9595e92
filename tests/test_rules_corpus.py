"""Rules on real logs written by other people (../shared/corpus; skipped when absent).

The TRL KL sweep's author labelled beta 0.05 and 0.1 as reward hacking and beta 0.2 and 0.5 as
stable (results/stability_sweep/hacking_onset.txt).  The per-step arrays are TRL's own
``objective/scores`` and ``objective/kl`` (a k1 sequence sum), read here directly so that this
test depends on the rules only.
"""

from __future__ import annotations

import json

import pytest

from ppo_doctor.rules.base import Example
from ppo_doctor.rules.engine import run_rules
from ppo_doctor.verdict import verdict_for
from ppo_doctor.rules.examples import example_run

pytestmark = pytest.mark.corpus


def sweep_run(corpus_dir, name):
    path = corpus_dir / "trl-ppo-gpt2-kl-sweep" / "results" / "stability_sweep" / name / "ppo_metrics.json"
    if not path.exists():
        pytest.skip(f"{path} absent")
    d = json.loads(path.read_text())
    ex = Example(
        series={"reward/score": d["rewards_curve"], "kl/ref": d["kl_curve"]},
        config={"kl_coef": d["beta"]},
        metric_info={"kl/ref": {"estimator": "k1", "reduction": "seq_sum"}},
    )
    return example_run(ex, run_id=name)


@pytest.mark.parametrize("name", ["beta0.05_seed42", "beta0.05_seed123"])
def test_low_beta_runs_are_kl_blowups(corpus_dir, name):
    # beta 0.05: the KL holds 35-46 nats, more than 3x TRL's whole healthy range: a runaway
    run = sweep_run(corpus_dir, name)
    findings, na = run_rules(run)
    blowup = [f for f in findings if f.code == "PD101"]
    assert blowup and blowup[0].severity == "error" and blowup[0].basis == "runaway"
    assert blowup[0].start_step == blowup[0].threshold_step <= 40  # the KL escapes early in these runs
    assert any(f.code == "PD202" for f in findings)  # reward rising while the KL runs away
    assert verdict_for(run, findings, na)[0] == "unhealthy"


@pytest.mark.parametrize("name", ["beta0.1_seed42", "beta0.1_seed456"])
def test_a_kl_settled_above_its_band_while_the_reward_climbs_is_a_sign(corpus_dir, name):
    # beta 0.1: the KL settles at 1.5-2.5x the band while the score climbs and holds, KL gain per
    # reward gain 1.4 (under PTT's 3) and nothing else logged shows the reward is bought: a sign
    # for PD101 and PD202 alike, info notes that say what to watch (issue 37: outcome before
    # sign).  The author's own script calls it hacking by a fixed number (max KL > 15).
    run = sweep_run(corpus_dir, name)
    findings, na = run_rules(run)
    assert [f.severity for f in findings if f.code == "PD101"] == ["info"]
    (hack,) = [f for f in findings if f.code == "PD202"]
    assert (hack.severity, hack.basis) == ("info", "sign") and "exploiting" not in hack.message
    assert verdict_for(run, findings, na)[0] == "healthy"


@pytest.mark.parametrize("name", ["beta0.2_seed42", "beta0.5_seed42", "beta0.5_seed123", "beta0.5_seed456"])
def test_stable_runs_have_no_error(corpus_dir, name):
    run = sweep_run(corpus_dir, name)
    findings, na = run_rules(run)
    assert [f.code for f in findings if f.severity == "error"] == []
    assert verdict_for(run, findings, na)[0] == "healthy"
