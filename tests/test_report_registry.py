"""Reports against the real rule registry: SARIF descriptors and JUnit test cases per rule."""

from __future__ import annotations

import inspect
import json
import xml.etree.ElementTree as ET

from ppo_doctor.report import render
from ppo_doctor.results import Report
from ppo_doctor.rules.registry import all_rules, metadata
from report_builders import healthy_report


def test_sarif_rule_descriptors_come_from_the_rule_docs():
    doc = json.loads(render(Report(runs=[healthy_report()], rules=metadata()), "sarif"))
    descriptors = {d["id"]: d for d in doc["runs"][0]["tool"]["driver"]["rules"]}
    for rule in all_rules():
        d = descriptors[rule.code]
        assert d["name"] == rule.name
        assert d["shortDescription"]["text"] == rule.summary()
        # the rule's docstring as written: it cites public sources only (tests/test_citations.py)
        assert d["fullDescription"]["text"] == inspect.cleandoc(rule.__doc__)
        assert "**Source.**" in d["fullDescription"]["text"]
        assert d["defaultConfiguration"]["level"] == {"info": "note"}.get(rule.severity, rule.severity)
        assert rule.symptom in d["properties"]["tags"]


def test_junit_lists_the_selected_rules():
    every = ET.fromstring(render(Report(runs=[healthy_report()], rules=metadata()), "junit"))
    assert len(every.findall("testsuite/testcase")) == len(all_rules())
    kl_only = ET.fromstring(render(Report(runs=[healthy_report()], rules=metadata(["PD1"])), "junit"))
    names = [c.get("name") for c in kl_only.findall("testsuite/testcase")]
    assert names and all(n.startswith("PD1") for n in names)
    first = all_rules()[0]
    report = Report(runs=[healthy_report()], rules=metadata(ignore=[first.name]))
    without = ET.fromstring(render(report, "junit"))
    assert f"{first.code} {first.name}" not in [c.get("name") for c in without.findall("testsuite/testcase")]
