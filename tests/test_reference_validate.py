"""Scoring of `ppo-doctor validate`, on hand-made expected/detected sets (no training, no rules)."""

from __future__ import annotations

import pytest

from ppo_doctor.reference import scenarios
from ppo_doctor.reference.validate import (
    Outcome,
    cause_accuracy,
    healthy_false_alarms,
    merge_section,
    outcome_from_report,
    render_markdown,
    render_text,
    summarize,
    symptom_counts,
)
from ppo_doctor.results import SYMPTOMS, Finding, RankedCause, RunReport
from report_builders import make_run


def fs(*xs: str) -> frozenset[str]:
    return frozenset(xs)


OUTCOMES = [
    # healthy, no findings
    Outcome("healthy-s1", fs(), detected=fs(), verdict="healthy"),
    # healthy with a false alarm at error level
    Outcome("healthy-s2", fs(), detected=fs("oscillation"), error_findings=1, verdict="unhealthy"),
    # fault found, side effect allowed, cause first
    Outcome(
        "kl-coef-zero",
        fs("kl_blowup"),
        allowed=fs("entropy_collapse"),
        top_cause="kl-coef-too-low",
        detected=fs("kl_blowup", "entropy_collapse"),
        causes=("kl-coef-too-low", "lr-too-high"),
    ),
    # fault missed, an unrelated symptom detected, cause second
    Outcome(
        "topk-sampling",
        fs("negative_kl"),
        top_cause="generation-settings",
        detected=fs("stagnation"),
        causes=("lr-too-low", "generation-settings"),
    ),
    # two expected, one found; cause absent
    Outcome(
        "hackable-reward",
        fs("reward_hacking", "kl_blowup"),
        top_cause="reward-model-flawed",
        detected=fs("kl_blowup"),
        causes=("kl-coef-too-low", "lr-too-high", "too-many-ppo-epochs", "reward-model-flawed"),
    ),
]


def test_symptom_counts_tp_fp_fn_and_allowed_side_effects():
    c = symptom_counts(OUTCOMES)
    assert set(c) == set(SYMPTOMS)
    assert (c["kl_blowup"].tp, c["kl_blowup"].fp, c["kl_blowup"].fn) == (2, 0, 0)
    assert (c["negative_kl"].tp, c["negative_kl"].fn) == (0, 1)
    assert (c["reward_hacking"].tp, c["reward_hacking"].fn) == (0, 1)
    # entropy_collapse was allowed in kl-coef-zero: neither TP nor FP
    assert (c["entropy_collapse"].tp, c["entropy_collapse"].fp) == (0, 0)
    assert c["oscillation"].fp == 1 and c["stagnation"].fp == 1
    assert c["oscillation"].precision == 0.0 and c["oscillation"].recall is None
    assert c["kl_blowup"].precision == 1.0 and c["kl_blowup"].recall == 1.0
    # every scenario lands in exactly one cell per symptom
    assert all(x.tp + x.fp + x.fn + x.tn == len(OUTCOMES) for x in c.values())


def test_cause_accuracy_top1_top3():
    assert cause_accuracy(OUTCOMES, 1) == (1, 3)
    assert cause_accuracy(OUTCOMES, 3) == (2, 3)
    assert cause_accuracy(OUTCOMES, 4) == (3, 3)
    assert [o.cause_rank for o in OUTCOMES] == [None, None, 1, 2, 4]


def test_missed_and_false_alarms_per_scenario():
    by = {o.scenario: o for o in OUTCOMES}
    assert by["topk-sampling"].missed == fs("negative_kl")
    assert by["topk-sampling"].false_alarms == fs("stagnation")
    assert by["kl-coef-zero"].false_alarms == fs()
    assert by["hackable-reward"].missed == fs("reward_hacking")


def test_summary_and_pass_rule():
    s = summarize(OUTCOMES)
    # micro: TP = 2 (kl_blowup x2), FP = 2 (oscillation, stagnation), FN = 2
    assert s.recall == pytest.approx(0.5)
    assert s.precision == pytest.approx(0.5)
    assert s.healthy_errors == 1
    assert healthy_false_alarms(OUTCOMES) == [("healthy-s1", 0), ("healthy-s2", 1)]
    assert not s.passed
    perfect = [OUTCOMES[0], OUTCOMES[2]]
    assert summarize(perfect).passed


def test_pass_rule_is_the_design_budget():
    """docs/architecture.md#budgets: recall >= 95 %, cause first >= 80 %, no warning-level symptom on a healthy seed."""
    found = [Outcome(f"f{i}", fs("kl_blowup"), top_cause="lr-too-high", detected=fs("kl_blowup"),
                     causes=("lr-too-high",)) for i in range(19)]
    missed = Outcome("m", fs("kl_blowup"), top_cause="lr-too-high", causes=("lr-too-high",))
    assert summarize(found + [missed]).recall == pytest.approx(0.95) and summarize(found + [missed]).passed
    assert not summarize(found[:9] + [missed]).passed  # recall 90 %
    second = [Outcome(f"s{i}", fs("kl_blowup"), top_cause="lr-too-high", detected=fs("kl_blowup"),
                      causes=("kl-coef-too-low", "lr-too-high")) for i in range(4)]
    assert summarize(found[:16] + second).passed  # 16/20 first
    assert not summarize(found[:15] + second + second[:1]).passed  # 15/20 first
    warned = Outcome("healthy-s1", fs(), detected=fs("oscillation"), error_findings=0)
    s = summarize(found + [warned])
    assert s.healthy_errors == 0 and s.healthy_symptoms == 1 and not s.passed


def test_a_failed_scenario_fails_the_suite():
    o = Outcome("lr-x100", fs("kl_blowup"), top_cause="lr-too-high", failure="RuntimeError('boom')")
    s = summarize([o])
    assert s.failures == ["lr-x100: RuntimeError('boom')"]
    assert not s.passed
    assert "FAILED" in render_text([o])


def test_renderers_show_every_scenario_and_the_headline():
    md = render_markdown(OUTCOMES, notes=["steps: 10"])
    for o in OUTCOMES:
        assert o.scenario in md
    assert "| negative_kl | 0 | 0 | 1 |" in md
    assert "expected cause ranked first: 1/3 (33%)" in md
    assert "result: FAIL" in md
    text = render_text(OUTCOMES)
    assert "cause top-1 1/3" in text and "error findings on healthy runs: 1" in text


def test_merge_section_replaces_its_own_suite_and_keeps_the_other():
    ppo = render_markdown(OUTCOMES[:2], notes=["ppo run"])
    trl = render_markdown(OUTCOMES[2:], title="GRPO scenario scorecard (real TRL GRPOTrainer)", notes=["trl run"])
    both = merge_section(ppo, trl)
    assert both.startswith(ppo) and both.endswith(trl) and both.count("\n# ") == 1
    # writing either suite again replaces only its own section, in place
    ppo2 = ppo.replace("ppo run", "ppo again")
    assert merge_section(both, ppo2) == merge_section(ppo2, trl)
    trl2 = trl.replace("trl run", "trl again")
    assert merge_section(both, trl2) == merge_section(ppo, trl2)
    assert merge_section("", trl) == trl


def _f(symptom: str, severity: str) -> Finding:
    return Finding(code="PD000", name="test-finding", symptom=symptom, severity=severity, metric="kl", message="")


def _c(cause: str) -> RankedCause:
    return RankedCause(id=cause, title=cause, confidence=0.5)


def test_outcome_from_report_counts_findings_from_min_severity_up():
    sc = scenarios.get("topk-sampling")
    rr = RunReport(
        run=make_run("r", {"kl": [0.1, 0.2]}),
        verdict="unhealthy",
        findings=[_f("negative_kl", "error"), _f("oscillation", "info"), _f("reward_spike", "warning")],
        causes=[_c("generation-settings"), _c("implementation-bug")],
    )
    o = outcome_from_report(sc, rr)
    assert o.detected == fs("negative_kl", "reward_spike")
    assert o.error_findings == 1 and o.cause_rank == 1
    assert outcome_from_report(sc, rr, min_severity="info").detected == fs("negative_kl", "oscillation", "reward_spike")
    assert outcome_from_report(sc, rr, min_severity="error").detected == fs("negative_kl")


def test_scenario_registry_is_consistent():
    names = scenarios.names()
    assert {"healthy", "healthy-s1", "healthy-s2", "healthy-s3", "kl-coef-zero", "lr-x100", "too-many-ppo-epochs",
            "topk-sampling", "min-length", "reward-unnormalized-x100", "value-lr-high", "policy-not-from-sft",
            "hackable-reward", "lr-tiny", "no-grad-clip-reward-outlier"} <= set(names)
    causes = {
        "kl-coef-too-low", "lr-too-high", "too-many-ppo-epochs", "batch-too-large", "no-grad-clipping",
        "policy-not-from-sft", "reward-model-flawed", "reward-not-normalized", "reward-not-clipped",
        "value-lr-mistuned", "value-undertrained", "gae-lambda", "generation-settings", "implementation-bug",
        "lr-too-low", "weak-learning-signal", "reward-dominated-by-query",
    }
    for sc in scenarios.SCENARIOS.values():
        assert sc.expected <= set(SYMPTOMS) and sc.allowed <= set(SYMPTOMS)
        assert not (sc.expected & sc.allowed)
        if sc.healthy:
            assert sc.top_cause is None and not sc.allowed
        else:
            assert sc.top_cause in causes
        sc.args()  # every scenario's changes are valid Args fields and values
    assert scenarios.get("healthy").name == "healthy-s1"
    with pytest.raises(KeyError, match="unknown scenario"):
        scenarios.get("nope")


def _chosen(monkeypatch, args: list[str]) -> list[tuple[str, int]]:
    """The scenarios ``validate ARGS`` would run, as (name, seed), without training anything."""
    from cli_invoke import run_cli
    from ppo_doctor.cli import reference as reference_cli

    seen: list[tuple[str, int]] = []

    def fake_run_suite(chosen, workdir, **kw):
        seen.extend((sc.name, sc.args().seed) for sc in chosen)
        return []

    monkeypatch.setattr(reference_cli, "run_suite", fake_run_suite)
    r = run_cli(["validate", *args])
    assert r.exit_code == 0, r.output
    return seen


def test_validate_leaves_unscored_scenarios_out_unless_named(monkeypatch):
    unscored = [n for n, sc in scenarios.SCENARIOS.items() if not sc.scored]
    assert unscored == ["value-lr-high"]  # its entry says why the tiny loop cannot show it
    default = [name for name, _ in _chosen(monkeypatch, [])]
    assert "value-lr-high" not in default and "healthy-s1" in default
    assert len(default) == len(scenarios.SCENARIOS) - 1
    assert _chosen(monkeypatch, ["-s", "value-lr-high"]) == [("value-lr-high", 1)]


def test_validate_seed_moves_every_scenario_to_held_out_seeds(monkeypatch):
    got = dict(_chosen(monkeypatch, ["--seed", "4", "-s", "healthy-s1,healthy-s3,lr-tiny"]))
    # healthy-sK runs on 4+K-1, so the healthy runs stay on distinct seeds
    assert got == {"healthy-s1-s4": 4, "healthy-s3-s6": 6, "lr-tiny-s4": 4}
