"""docs/rules.md is generated from the rules and committed up to date; ``rules`` and ``explain``."""

from __future__ import annotations

import json

from cli_invoke import run_cli
from ppo_doctor.rules import docs
from ppo_doctor.rules.registry import all_rules


def test_committed_rules_md_is_up_to_date():
    assert docs.DEFAULT_PATH.read_text(encoding="utf-8") == docs.render(), "run: python -m ppo_doctor.rules.docs"


def test_docs_check_mode(tmp_path):
    target = tmp_path / "rules.md"
    assert docs.main([str(target), "--check"]) == 1
    assert docs.main([str(target)]) == 0
    assert docs.main([str(target), "--check"]) == 0
    text = target.read_text(encoding="utf-8")
    for rule in all_rules():
        assert f"## {rule.code} {rule.name}" in text


def test_rules_command_text_and_json():
    out = run_cli(["rules"])
    assert out.exit_code == 0
    assert "PD101" in out.output and "kl-above-band" in out.output and "negative_kl" in out.output
    js = run_cli(["rules", "--format", "json"])
    assert js.exit_code == 0
    data = json.loads(js.output)
    assert [d["code"] for d in data] == [r.code for r in all_rules()]
    first = data[0]
    assert set(first) >= {"code", "name", "symptom", "severity", "summary", "requires", "params", "causes"}


def test_explain_by_code_and_name_and_unknown():
    out = run_cli(["explain", "negative-kl-sustained"])
    assert out.exit_code == 0
    for needle in ("PD111", "What it detects", "seq_tol = 1.0", "generation-settings", "bad example", "-> error:"):
        assert needle in out.output
    assert run_cli(["explain", "pd101"]).exit_code == 0
    bad = run_cli(["explain", "PD999"])
    assert bad.exit_code == 2 and "no rule" in bad.output


def test_explain_cites_only_what_a_user_has():
    """Sources by name and docs/sources.md anchor (tests/test_citations.py checks that each
    exists), no RST markup; the guides by title, the public one by URL."""
    import re

    from cli_invoke import run_cli
    from ppo_doctor.rules.registry import all_rules

    for rule in all_rules():
        out = run_cli(["explain", rule.code]).output
        # only pages of docs/, which the repository ships (no reference notes, no README sections)
        cited = re.findall(r"[\w./-]+\.md\b", out)
        assert all(re.fullmatch(r"docs/[\w-]+\.md", c) and (docs.DEFAULT_PATH.parent.parent / c).is_file() for c in cited), (
            rule.code,
            cited,
        )
        assert "``" not in out and "**" not in out
        assert "TRL Training FAQ <https://huggingface.co/docs/trl/how_to_train>" in out
        assert "Troubleshooting PPO Training Instability" in out
    out = run_cli(["explain", "PD101"]).output
    assert "(docs/sources.md#kl-band, docs/sources.md#guides); the healthy population (docs/population.md)." in " ".join(out.split())
