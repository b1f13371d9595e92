"""Every rule's examples run as tests (pylint's good/bad documentation examples,
docs/sources.md#peer-linters):
the bad example fires, the good one stays silent, and every finding is well formed."""

from __future__ import annotations

import re

import pytest

from ppo_doctor.results import SEVERITIES, SYMPTOMS
from ppo_doctor.rules.engine import run_rules
from ppo_doctor.rules.examples import example_run
from ppo_doctor.rules.registry import CAUSE_IDS, all_rules

RULES = all_rules()
IDS = [r.code for r in RULES]
DOC_SECTIONS = ("**What it detects.**", "**Why it matters.**", "**Known false positives.**", "**Source.**")
# hundreds digit -> symptoms of that family (PD7xx also holds length, whose explosion is hacking,
# and rising entropy, updates that push the policy apart; PD203's reward spread collapsing after
# the reward fell is a policy collapse)
FAMILY = {
    "1": {"kl_blowup", "negative_kl"},
    "2": {"reward_spike", "reward_hacking", "reward_collapse", "stagnation", "entropy_collapse"},
    "3": {"stagnation"},
    "4": {"value_instability"},
    "5": {"oscillation"},
    "6": {"nan", "gradient_explosion"},
    "7": {"entropy_collapse", "reward_hacking", "unstable_updates"},
    "8": {"unstable_updates"},
    "9": {"log_quality", "reward_hacking", "entropy_collapse"},
}


def check_finding(rule, f):
    assert f.code == rule.code and f.name == rule.name
    assert f.symptom in SYMPTOMS and f.severity in SEVERITIES
    assert f.symptom in FAMILY[rule.code[2]]
    assert f.start_step is not None, "every finding states its onset"
    if f.threshold_step is not None:
        assert f.start_step <= f.threshold_step, "the onset is never after the threshold crossing"
    if f.end_step is not None:
        assert f.end_step >= f.start_step
    assert f.message and not re.search(r"\{[a-z_]+(:[^}]*)?\}", f.message), f"unformatted message: {f.message}"
    assert set(f.causes) <= set(CAUSE_IDS)
    assert all(0 <= w <= 1 for w in f.causes.values())
    f.to_dict()  # JSON-ready


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_bad_example_fires(rule):
    example = rule.bad_example()
    assert example is not None, f"{rule.code} needs a bad example"
    run = example_run(example)
    assert rule.missing(run) == []
    findings = list(rule().run(run))
    assert findings, f"{rule.code} {rule.name} did not fire on its bad example"
    for f in findings:
        check_finding(rule, f)


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_good_example_is_silent(rule):
    example = rule.good_example()
    assert example is not None, f"{rule.code} needs a good example"
    run = example_run(example)
    assert rule.missing(run) == [], "a good example must exercise the rule, not skip it"
    assert list(rule().run(run)) == []


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_good_examples_are_healthy_for_every_rule(rule):
    """A good example is a healthy run: no rule at all may call it broken."""
    run = example_run(rule.good_example())
    findings, _ = run_rules(run)
    assert [f.code for f in findings if f.severity == "error"] == []


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_rule_metadata_and_documentation(rule):
    doc = rule.__doc__ or ""
    for section in DOC_SECTIONS:
        assert section in doc, f"{rule.code} docstring lacks {section}"
    assert rule.summary().endswith(".")
    assert rule.message
    for name, default in rule.params.items():
        assert name.isidentifier() and not isinstance(default, (list, dict))
    assert set(rule.causes) <= set(CAUSE_IDS)


def test_registry_is_complete_and_ordered():
    codes = [r.code for r in RULES]
    assert codes == sorted(codes) and len(set(codes)) == len(codes)
    assert len({r.name for r in RULES}) == len(RULES)
    covered = {r.symptom for r in RULES}
    assert covered == set(SYMPTOMS), f"symptoms without a rule: {set(SYMPTOMS) - covered}"
    assert len(RULES) >= 30
