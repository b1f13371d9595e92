"""The rule engine: selection, parameter overrides and their validation, not-applicable rules,
a failing rule, and verdicts."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from ppo_doctor.config import coerce, validate_rule_options, validate_selection
from ppo_doctor.rules import registry
from ppo_doctor.rules.base import Example
from ppo_doctor.rules.engine import run_rules
from ppo_doctor.verdict import verdict_for
from ppo_doctor.rules.examples import example_run, flat, ramp, saturating

KL_INFO = {"kl/ref": {"estimator": "k1", "reduction": "seq_sum"}}


def codes(rules):
    return [r.code for r in rules]


def test_select_by_prefix_name_and_all():
    assert all(c.startswith("PD1") for c in codes(registry.select(["PD1"])))
    assert codes(registry.select(["kl-above-band"])) == ["PD101"]
    assert codes(registry.select(["pd101"])) == ["PD101"]
    assert len(registry.select(["ALL"])) == len(registry.all_rules()) == len(registry.select())


def test_ignore_and_the_more_specific_entry_wins():
    sel = codes(registry.select(None, ["PD1"]))
    assert not any(c.startswith("PD1") for c in sel) and "PD201" in sel
    # select PD101 explicitly but ignore the KL family: the longer (more specific) entry wins
    assert "PD101" in codes(registry.select(["PD101", "PD2"], ["PD1"]))
    assert "PD102" not in codes(registry.select(["PD1"], ["PD102"]))
    # a name beats any prefix; a tie goes to ignore
    assert "PD101" in codes(registry.select(["kl-above-band"], ["PD10"]))
    assert codes(registry.select(["PD1"], ["PD1"])) == []


def test_get_and_unknown_selectors():
    assert registry.get("PD202").name == "reward-hacking"
    assert registry.get("reward-hacking").code == "PD202"
    with pytest.raises(KeyError, match="did you mean"):
        registry.get("reward-hackin")
    assert registry.unknown_selectors(["PD1", "PD99", "nope", "ALL"]) == ["PD99", "nope"]
    assert validate_selection(["PD1"], ["PD999"]) == ["ignore: 'PD999' matches no rule"]
    assert validate_selection("PD1") == ["select: expected a list of rule codes, prefixes or names"]


def test_validate_rule_options():
    assert validate_rule_options(None) == [] and validate_rule_options({}) == []
    errors = validate_rule_options(
        {
            "PD101": {"seq_band": 20, "bogus": 1},
            "kl-high-from-start": {"first_points": 2.5},
            "PD999": {},
            "reward-spike": {"direction": 3},
            "PD903": "x",
            "PD111": {"seq_tol": True},
        }
    )
    text = "\n".join(errors)
    assert "rules.PD101.bogus: unknown parameter" in text
    assert "PD101.seq_band" not in text  # an int is a fine float
    assert "rules.kl-high-from-start.first_points: expected int, got float" in text
    assert "rules.PD999: no rule" in text
    assert "rules.reward-spike.direction: expected str" in text
    assert "rules.PD903: expected a table" in text
    assert "rules.PD111.seq_tol: expected float, got bool" in text
    assert validate_rule_options(["PD1"]) == ["rules: expected a table of rule options, got list"]


def test_overrides_by_code_and_name_change_the_outcome():
    run = example_run(registry.get("PD101").bad_example())
    fired = {f.code for f in run_rules(run, coerce({"select": ["PD101"]}))[0]}
    assert fired == {"PD101"}
    for key in ("PD101", "kl-above-band", "pd101"):
        quiet, _ = run_rules(run, coerce({"select": ["PD101"], "rules": {key: {"seq_band": 100}}}))
        assert quiet == []


def test_not_applicable_names_the_missing_metrics():
    run = example_run(Example(series={"loss/value": flat(30, 1.0, 0.1)}))
    findings, na = run_rules(run)
    missing = {n.code: n.missing for n in na}
    assert missing["PD101"] == ["kl/ref"]
    assert missing["PD201"] == ["reward/score|reward/total"]
    assert missing["PD202"] == ["reward/score|reward/total", "kl/ref"]
    assert missing["PD951"] == ["text samples"]
    assert missing["PD603"] == ["grad/norm", "config max_grad_norm"]
    assert "PD401" not in missing
    assert all(n.to_dict()["missing"] for n in na)


def test_a_failing_rule_is_logged_and_skipped(monkeypatch, caplog):
    rule = registry.get("PD201")

    def boom(self, ctx):
        raise ZeroDivisionError("bad data")

    monkeypatch.setattr(rule, "evaluate", boom)
    run = example_run(registry.get("PD101").bad_example())
    with caplog.at_level(logging.ERROR):
        findings, na = run_rules(run)
    assert any(f.code == "PD101" for f in findings)
    assert ("PD201", ["internal error: ZeroDivisionError"]) in [(n.code, n.missing) for n in na]
    assert "PD201" in caplog.text


def test_verdicts():
    bad = example_run(registry.get("PD101").bad_example())
    verdict, reason = verdict_for(bad, *run_rules(bad))
    assert verdict == "unhealthy" and "PD101" in reason

    healthy = example_run(
        Example(
            series={"reward/score": saturating(200, 0, 3, sd=0.3), "kl/ref": saturating(200, 0, 5, sd=0.5, seed=1)},
            metric_info=KL_INFO,
        )
    )
    verdict, reason = verdict_for(healthy, *run_rules(healthy))
    assert verdict == "healthy"
    assert "not judged: no policy/value loss" in reason


def test_unknown_when_nothing_can_be_judged():
    # an SFT control run: a bare loss (HF maps it to loss/total), a learning rate, timings
    sft = example_run(Example(series={"loss/total": saturating(50, 2.0, 1.0), "opt/lr": flat(50, 1e-5), "time/step": flat(50, 0.3)}))
    verdict, reason = verdict_for(sft, *run_rules(sft))
    assert verdict == "unknown" and "no reward, no KL" in reason
    empty = example_run(Example(series={}))
    assert verdict_for(empty, *run_rules(empty))[0] == "unknown"


def test_healthy_without_kl_says_kl_was_not_judged():
    series = {"reward/score": saturating(100, 0, 2, sd=0.1), "loss/policy": flat(100, 0.0, 0.05)}
    # a GRPO run without ``beta`` in its config ran with TRL's default 0: KL off by design, PD902 a note
    run = example_run(Example(series=series, framework="trl_grpo"))
    findings, na = run_rules(run)
    verdict, reason = verdict_for(run, findings, na)
    assert verdict == "healthy" and "KL off by configuration" in reason
    assert [(f.code, f.severity) for f in findings if f.code == "PD902"] == [("PD902", "info")]
    # beta 0.04 and no KL logged: healthy on what it logs, never "healthy on KL"
    run = example_run(Example(series=series, config={"kl_coef": 0.04}, framework="trl_grpo"))
    findings, na = run_rules(run)
    verdict, reason = verdict_for(run, findings, na)
    assert verdict == "healthy" and "no KL metric" in reason


def test_warnings_make_a_run_unhealthy_with_a_one_sentence_reason():
    n = 200
    run = example_run(
        Example(
            series={
                "reward/score": flat(n, 1.0, 0.1, seed=3),  # stagnation warning
                "policy/clipfrac": flat(n, 0.45, 0.02),  # unstable_updates warning
                "policy/entropy": np.r_[flat(100, 2.0, 0.01, seed=4), flat(100, 0.5, 0.01, seed=5)],  # entropy_collapse from ~100
            }
        )
    )
    findings, na = run_rules(run)
    assert not [f for f in findings if f.severity == "error"]
    verdict, reason = verdict_for(run, findings, na)
    # one warning decides; the reason is the earliest worst finding with its message, the other
    # symptoms follow in step order
    first = min((f for f in findings if f.severity == "warning"), key=lambda f: (f.start_step, f.code))
    assert verdict == "unhealthy" and reason.startswith(f"{first.symptom} from step {first.start_step} ({first.code}")
    assert first.message in reason
    also = reason.split("; also ")[1].split(", ")
    steps = [int(x.rsplit(" ", 1)[1]) for x in also]
    assert steps == sorted(steps) and any(x.startswith("entropy_collapse from step") for x in also)
    assert {x.split(" ")[0] for x in also} | {first.symptom} == {"stagnation", "unstable_updates", "entropy_collapse"}


def test_findings_are_sorted_and_json_ready():
    run = example_run(registry.get("PD202").bad_example())
    findings, _ = run_rules(run)
    keys = [(f.code, f.start_step) for f in findings]
    assert keys == sorted(keys)
    assert all(isinstance(f.to_dict()["start_step"], int) for f in findings)


def test_engine_on_a_run_of_nans_and_infs_does_not_raise():
    v = np.full(40, np.nan)
    v[::3] = np.inf
    run = example_run(Example(series={m: v for m in ("reward/score", "kl/ref", "loss/value", "grad/norm", "policy/entropy", "len/response_mean")}))
    findings, na = run_rules(run)
    assert not [n for n in na if n.missing and n.missing[0].startswith("internal error")]
    assert any(f.code == "PD601" and f.severity == "error" for f in findings)


def test_ramp_fixture_sanity():
    assert ramp(5, 0, 4).tolist() == [0, 1, 2, 3, 4]


# -- untrusted input: any numbers, any config, no traceback ------------------------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ppo_doctor.results import SEVERITIES  # noqa: E402

NUMBERS = st.one_of(
    st.floats(-1e6, 1e6),
    st.sampled_from([np.nan, np.inf, -np.inf, 0.0, 1e300, -1e300, 1e-300]),
)
METRICS = ["reward/score", "reward/std", "kl/ref", "kl/coef", "kl/old", "loss/value", "loss/policy", "grad/norm",
           "policy/entropy", "policy/clipfrac", "policy/ratio_mean", "value/explained_var", "len/response_mean", "opt/lr"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    series=st.dictionaries(st.sampled_from(METRICS), st.lists(NUMBERS, min_size=0, max_size=60), max_size=8),
    estimator=st.sampled_from([None, "k1", "k2", "k3", "sqrt_k3", "full"]),
    reduction=st.sampled_from([None, "seq_sum", "token_mean"]),
    framework=st.sampled_from(["trl", "trl_legacy", "trl_grpo", "sb3", "cleanrl", "verl", "unknown"]),
    config=st.dictionaries(
        st.sampled_from(["lr", "ppo_epochs", "num_mini_batches", "max_grad_norm", "top_k", "kl_coef", "early_stop_kl", "do_sample"]),
        st.one_of(st.none(), st.booleans(), st.integers(-5, 100), st.floats(allow_nan=True), st.text(max_size=5)),
        max_size=5,
    ),
)
def test_engine_never_raises_on_arbitrary_input(series, estimator, reduction, framework, config):
    info = {"kl/ref": {"estimator": estimator, "reduction": reduction}} if "kl/ref" in series else {}
    run = example_run(Example(series=series, metric_info=info, framework=framework, config=config))
    findings, na = run_rules(run)
    assert not [n.missing for n in na if n.missing and n.missing[0].startswith("internal error")]
    for f in findings:
        assert f.severity in SEVERITIES
        f.to_dict()
    verdict_for(run, findings, na)


def test_departures_on_many_points_are_the_rewards_distribution_not_spikes():
    """A reward at its floor whose better episodes come every few points (16 % of them) has no
    spike: spikes are rare (PD201's MAX_SPIKE_SHARE)."""
    import numpy as np

    import ppo_doctor

    rng = np.random.default_rng(5)
    reward = -100.0 + rng.normal(0, 0.3, 2000)
    better = rng.random(2000) < 0.16
    reward[better] += rng.uniform(10, 25, better.sum())
    report = ppo_doctor.analyze({"step": np.arange(2000), "reward": reward})
    assert not [f for f in report.runs[0].findings if f.code == "PD201"]
    rare = -100.0 + rng.normal(0, 0.3, 2000)
    rare[[500, 1200, 1700]] += 40.0
    report = ppo_doctor.analyze({"step": np.arange(2000), "reward": rare})
    assert [f for f in report.runs[0].findings if f.code == "PD201"]
