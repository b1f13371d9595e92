"""Rule identity, determinism and the seams rules are written against (issue 13 §5, §6, §9):
each rule file is named after its code and name, every rule gives identical findings on
identical input, a message template that does not fit its fields fails, and the engine hands
a rule its resolved ``requires``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from ppo_doctor import load_runs
from ppo_doctor.rules.base import Example, RuleContext
from ppo_doctor.rules.examples import example_run, flat
from ppo_doctor.rules.messages import TemplateError, fmt_num, render
from ppo_doctor.rules.pd802_clipfrac_high import ClipfracHigh
from ppo_doctor.rules.registry import all_rules

RULES = all_rules()
IDS = [r.code for r in RULES]
PACKAGE = Path(__file__).resolve().parents[1] / "ppo_doctor"


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module as written, with leading dots; names imported) of every import in ``path``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            out.append(("." * node.level + (node.module or ""), [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out.extend((a.name, []) for a in node.names)
    return out


def test_rules_use_only_the_public_detectors():
    for path in sorted((PACKAGE / "rules").glob("*.py")):
        for module, names in _imports(path):
            if module.lstrip(".").startswith("detect") or module.startswith("ppo_doctor.detect"):
                assert module in ("..detect", "ppo_doctor.detect"), f"{path.name} imports {module}"
                assert not [n for n in names if n.startswith("_")], f"{path.name} imports private {names}"


def test_detect_imports_nothing_ppo_specific():
    for path in sorted((PACKAGE / "detect").glob("*.py")):
        for module, _ in _imports(path):
            top = module.split(".")[0]
            assert (module.startswith(".") and not module.startswith("..")) or top in ("__future__", "numpy", "dataclasses", "functools", "math", "typing"), (
                f"detect/{path.name} imports {module}"
            )


def _as_dicts(findings):
    """Everything a finding says, including what the JSON report leaves out."""
    return [(f.to_dict(), f.causes, f.observes, f.band) for f in findings]


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_rule_file_is_named_after_its_code_and_name(rule):
    module = rule.__module__.rsplit(".", 1)[-1]
    assert module == f"pd{rule.code[2:]}_{rule.name.replace('-', '_')}", f"{rule.code} {rule.name} lives in {module}.py"


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_every_rule_is_deterministic_on_its_bad_example(rule):
    first = _as_dicts(rule().run(example_run(rule.bad_example())))
    again = _as_dicts(rule().run(example_run(rule.bad_example())))
    assert first and first == again


def test_every_rule_is_deterministic_on_the_sample_logs(sample_logs):
    runs = load_runs(sample_logs)
    assert runs
    for rule in RULES:
        for run in runs:
            if rule.missing(run):
                continue
            assert _as_dicts(rule().run(run)) == _as_dicts(rule().run(run)), f"{rule.code} on {run.id}"


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_every_message_template_fills_on_the_bad_example(rule):
    """Rule.finding raises on a template that does not fit, so a bad example that fires has
    filled every field of its rule's message."""
    for f in rule().run(example_run(rule.bad_example())):
        assert f.message and not re.search(r"\{[a-z_]+(:[^}]*)?\}", f.message)


def test_a_broken_template_is_an_error_not_a_raw_message():
    class Broken(ClipfracHigh):
        message = "clip fraction {no_such_field:num}"

    with pytest.raises(TemplateError, match="no_such_field"):
        list(Broken().run(example_run(ClipfracHigh.bad_example())))
    with pytest.raises(TemplateError):
        render("{peak:.2q}", {"peak": 1.0})  # a spec the value does not support


def test_num_spec_is_fmt_num():
    for x in (0.0, 1.0, 123456.0, 1e-7, -2.5, 3, float("nan"), float("inf")):
        assert render("{x:num}", {"x": x}) == fmt_num(x)
    assert render("{x:g} and {y}", {"x": 0.3, "y": "text"}) == "0.3 and text"


def test_engine_resolves_each_requires_entry_once_with_the_sign_undone():
    run = example_run(
        Example(
            series={"reward/total": flat(30, 2.0), "loss/entropy": np.r_[flat(29, -1.5), np.nan]},
            metric_info={"loss/entropy": {"sign": -1}},
        )
    )
    ctx = RuleContext(run=run, params={}, requires=(("reward/score", "reward/total"), "loss/entropy"))
    reward, entropy = ctx.req
    assert reward.metric == "reward/total" and len(reward) == 30 and reward.early == reward.late == 2.0
    assert entropy.metric == "loss/entropy" and len(entropy) == 29  # the NaN left out
    assert np.all(entropy.values == 1.5) and entropy.window == 3  # -entropy logged, entropy judged
    assert ctx.req is ctx.req  # resolved once


def test_text_rules_observe_the_texts_and_kl_rules_carry_their_band():
    by_code = {r.code: r for r in RULES}
    for code in ("PD951", "PD952", "PD953"):
        (f, *_) = by_code[code]().run(example_run(by_code[code].bad_example()))
        assert f.observes == "texts" and f.band is None
    (kl, *_) = by_code["PD101"]().run(example_run(by_code["PD101"].bad_example()))
    assert kl.observes == "metrics" and kl.band == kl.observed["band"] == 10.0
    assert "band" not in kl.to_dict() and "observes" not in kl.to_dict()  # the JSON shape is unchanged
