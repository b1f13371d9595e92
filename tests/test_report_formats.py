"""Every report format on hand-built reports: content, structure, and the format's own rules."""

from __future__ import annotations

import dataclasses
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from ppo_doctor.report import FORMATS, RenderOptions, render
from ppo_doctor.report.github import escape_data, escape_property
from ppo_doctor.report.json_out import json_schema
from ppo_doctor.report.sarif import to_sarif
from ppo_doctor.results import Report, RuleMeta
from ppo_doctor.verdict import verdict_for
from report_builders import (
    healthy_report,
    hostile_report,
    kl_finding,
    sample_report,
    unhealthy_report,
    warning_finding,
)

DATA = Path(__file__).parent / "data"
# RFC 3986 characters; anything else in a URI must be percent-encoded
URI_CHARS = re.compile(r"^[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*$")


@pytest.fixture(scope="module")
def sarif_validator() -> jsonschema.Draft7Validator:
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)


@pytest.fixture(scope="module")
def report_validator() -> jsonschema.Draft202012Validator:
    schema = json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


# -- text ---------------------------------------------------------------------------------
def test_text_report_has_verdicts_onsets_causes_and_read_errors():
    out = render(sample_report(), "text")
    # the deciding finding's message is shown once, on its own line under the verdict
    assert "UNHEALTHY: kl_blowup from step 120 (PD101 kl-above-band, error); also gradient_explosion from step 121, nan from step 190\n" in out
    assert out.count("KL to the reference rose from 0.05 to 40 after step 120") == 1
    assert "run healthy  HEALTHY\n" in out
    assert "UNKNOWN: the run logs no reward or KL" in out
    assert "PD101 kl-above-band" in out and "kl/ref from step 120: " in out
    assert "likely cause: KL coefficient too low" in out and "try: Raise the KL coefficient" in out
    assert "logs/broken/events.out.tfevents.2 at byte 4096: truncated record" in out
    assert "\x1b[" not in out  # no colour unless asked


def test_short_text_report_folds_what_it_leaves_out():
    """Default: one block per run, a summary table first for several runs, a count of the
    rules that could not run instead of their list, one line per finding."""
    out = render(sample_report(), "text")
    lines = out.splitlines()
    assert lines[2].split() == ["run", "verdict", "findings", "top", "cause"]
    assert [ln.split()[:2] for ln in lines[3:6]] == [["kl_blowup", "UNHEALTHY"], ["healthy", "HEALTHY"], ["only-loss", "UNKNOWN"]]
    assert "not applicable, missing metrics" not in out and "PD403 (value/explained_var)" not in out
    assert "rule(s) not applicable (metrics not logged): -v for detail" in out
    block = out[out.index("run kl_blowup"):out.index("run healthy")]
    rr = sample_report().runs[0]
    assert len([ln for ln in block.splitlines() if ln.lstrip().startswith(("ERROR", "WARNING", "INFO"))]) == len(rr.findings)
    assert "because " not in out  # evidence is -v detail


def test_verbose_text_report_is_the_full_detail():
    out = render(sample_report(), "text", RenderOptions(verbose=1))
    assert "PD101 kl-above-band" in out and "onset 120" in out
    assert "1. KL coefficient too low" in out and "try: Raise the KL coefficient" in out
    assert "not applicable, missing metrics: PD403 (value/explained_var)" in out
    assert "because " in out


def test_no_rst_markup_in_terminal_or_html():
    rr = unhealthy_report()
    rr.findings[0] = dataclasses.replace(rr.findings[0], message="KL of ``objective/kl`` above its band")
    rr.causes[0].fixes = ["raise ``kl_coef``"]
    report = Report(runs=[rr])
    for out in (render(report, "text"), render(report, "text", RenderOptions(verbose=1)), render(report, "html", RenderOptions(plots=False))):
        assert "``" not in out
        assert "objective/kl" in out and "kl_coef" in out


def test_a_run_with_a_warning_on_a_training_symptom_is_never_called_healthy():
    rr = healthy_report()
    rr.findings = [warning_finding()]
    rr.verdict, rr.verdict_reason = verdict_for(rr.run, rr.findings, [])
    out = render(Report(runs=[rr]), "text")
    assert "UNHEALTHY: gradient_explosion from step 121" in out and "HEALTHY (" not in out


def test_text_report_colours_only_when_asked():
    coloured = render(sample_report(), "text", RenderOptions(color=True))
    assert "\x1b[31m" in coloured  # red for UNHEALTHY / errors
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == render(sample_report(), "text")


def test_text_report_shows_only_top_three_causes():
    rr = unhealthy_report()
    rr.causes = rr.causes * 3  # six causes
    out = render(Report(runs=[rr]), "text", RenderOptions(verbose=1))
    assert "3. " in out and "4. " not in out


# -- markdown -----------------------------------------------------------------------------
def test_markdown_summary_and_findings_tables():
    out = render(sample_report(), "markdown")
    lines = out.splitlines()
    header = lines.index("| run | verdict | symptoms | findings | top cause |")
    assert lines[header + 2].startswith("| kl\\_blowup | **unhealthy** |")
    rows = [ln for ln in lines if ln.startswith("| error |") or ln.startswith("| warning |")]
    assert len(rows) == 3
    # every table row has exactly as many cells as its header (no stray pipes)
    assert all(r.count(" | ") == 6 for r in rows)
    assert "## Read problems" in out


# -- html ---------------------------------------------------------------------------------
def test_html_is_self_contained_with_plots():
    out = render(Report(runs=[unhealthy_report()]), "html")
    assert out.startswith("<!DOCTYPE html>")
    imgs = re.findall(r'<img class="plot" alt="[^"]*" src="([^"]+)"', out)
    assert len(imgs) == 1  # one overview figure per run (reward, KL and the incidents' metrics)
    assert all(src.startswith("data:image/png;base64,") for src in imgs)
    assert "ppo-doctor plot logs/kl_blowup</code> draws all" in out
    # nothing to fetch: no external URL anywhere in the page
    assert not re.search(r'(src|href)="(?!data:|#)', out)
    assert "Content-Security-Policy" in out and "<script" not in out


def test_html_lists_findings_causes_not_applicable_and_errors():
    out = render(sample_report(), "html", RenderOptions(plots=False))
    for text in ("kl-above-band", "KL coefficient too low", "Raise the KL coefficient", "value/explained_var",
                 "truncated record", "<td class=\"num\">4096</td>"):
        assert text in out
    assert out.count('class="badge') == 6  # 3 runs: summary table + section headers


# -- json ---------------------------------------------------------------------------------
def test_json_is_strict_and_matches_the_schema(report_validator):
    for report in (sample_report(), hostile_report()):
        report_validator.validate(_strict(render(report, "json")))
    nan_finding = _strict(render(sample_report(), "json"))["runs"][0]["findings"][1]
    assert nan_finding["code"] == "PD601"
    assert nan_finding["observed"] == {"first": "nan", "count": 10.0, "worst": "inf"}


def _strict(text: str) -> dict:
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON token {c}"))


def test_json_survives_nan_everywhere():
    rr = unhealthy_report()
    rr.causes[0].confidence = float("nan")
    rr.run.config["beta"] = float("-inf")
    rr.findings[0].observed["z"] = float("inf")
    doc = _strict(render(Report(runs=[rr]), "json"))
    assert doc["runs"][0]["config"]["beta"] == "-inf"
    assert doc["runs"][0]["causes"][0]["confidence"] == "nan"


# -- sarif --------------------------------------------------------------------------------
def test_sarif_validates_against_the_official_schema(sarif_validator):
    for report in (sample_report(), hostile_report()):
        doc = json.loads(render(report, "sarif"))
        errors = [f"{list(e.path)}: {e.message}" for e in sarif_validator.iter_errors(doc)]
        assert errors == []
        for result in doc["runs"][0]["results"]:
            uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            assert URI_CHARS.match(uri), uri


def test_sarif_one_result_per_finding_with_rule_metadata():
    report = sample_report()
    rules = [
        RuleMeta(code="PD101", name="kl-above-band", summary="KL to the reference runs away.", doc="KL ...\n\nLong doc.",
                 severity="error", symptom="kl_blowup", requires=("kl/ref",)),
    ]
    doc = to_sarif(report, rules=rules, root=Path.cwd())
    run = doc["runs"][0]
    results = run["results"]
    assert len(results) == sum(len(rr.findings) for rr in report.runs) == 3
    descriptors = run["tool"]["driver"]["rules"]
    by_id = {d["id"]: d for d in descriptors}
    assert by_id["PD101"]["fullDescription"]["text"] == "KL ...\n\nLong doc."
    assert by_id["PD101"]["defaultConfiguration"]["level"] == "error"
    # rules the registry does not know still get a descriptor, and ruleIndex points at it
    assert {"PD601", "PD602", "PD403"} <= set(by_id)
    for r in results:
        assert descriptors[r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["locations"][0]["physicalLocation"]["region"]["startLine"] == 1
    assert results[2]["level"] == "warning"
    logical = results[0]["locations"][0]["logicalLocations"][0]
    assert logical["name"] == "steps 120-199" and logical["fullyQualifiedName"] == "kl_blowup/kl/ref@120"
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert notes[0]["level"] == "error" and "truncated record" in notes[0]["message"]["text"]


def test_sarif_fingerprint_is_stable_across_onset_changes():
    a, b = unhealthy_report(), unhealthy_report()
    b.findings[0] = kl_finding(start=130)
    fa = to_sarif(Report(runs=[a]), rules=[])["runs"][0]["results"][0]["partialFingerprints"]
    fb = to_sarif(Report(runs=[b]), rules=[])["runs"][0]["results"][0]["partialFingerprints"]
    assert fa == fb


# -- junit --------------------------------------------------------------------------------
def _junit(report: Report, **kw) -> ET.Element:
    return ET.fromstring(render(report, "junit", RenderOptions(**kw)).encode("utf-8"))


def test_junit_is_well_formed_with_one_case_per_rule_per_run():
    root = _junit(sample_report())
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["kl_blowup", "healthy", "only-loss", "ppo-doctor read errors"]
    rule_names = [c.get("name") for c in suites[0].findall("testcase")]
    assert rule_names == ["PD101 kl-above-band", "PD403 explained-variance-negative", "PD601 non-finite-values",
                          "PD602 gradient-explosion"]
    assert all(len(s.findall("testcase")) == 4 for s in suites[:3])
    cases = {c.get("name"): c for c in suites[0].findall("testcase")}
    assert cases["PD101 kl-above-band"].find("failure").get("type") == "error"
    assert cases["PD403 explained-variance-negative"].find("skipped").get("message").endswith("value/explained_var")
    # a warning below --fail-on error passes, its text kept in system-out
    assert cases["PD602 gradient-explosion"].find("failure") is None
    assert "gradient norm" in cases["PD602 gradient-explosion"].find("system-out").text
    assert suites[2].find("testcase[@name='PD101 kl-above-band']/skipped") is not None
    assert suites[3].find("testcase/error").get("type") == "LogReadError"
    counts = {k: int(root.get(k)) for k in ("tests", "failures", "errors")}
    assert counts == {"tests": 13, "failures": 2, "errors": 1}
    assert root.get("skipped") is None and sum(int(s.get("skipped")) for s in suites) == 2  # per suite (junit-10.xsd)
    assert sum(int(s.get("tests")) for s in suites) == counts["tests"]


def test_junit_fail_on():
    warn = _junit(sample_report(), fail_on="warning")
    assert int(warn.get("failures")) == 3
    never = _junit(sample_report(), fail_on="never")
    assert int(never.get("failures")) == 0



def test_junit_strips_characters_xml_cannot_hold():
    report = hostile_report()
    first = report.runs[0].findings[0]
    report.runs[0].findings[0] = dataclasses.replace(first, message=first.message + "\x00\x01\x08 \ud800 end")
    root = _junit(report)  # parses: no forbidden character survived
    assert root.find(".//failure").text.endswith(" end")


# -- github -------------------------------------------------------------------------------
def test_github_escaping_follows_the_toolkit():
    assert escape_data("100%\r\nnext") == "100%25%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_github_one_annotation_per_finding_and_read_error():
    lines = render(sample_report(), "github").splitlines()
    assert len(lines) == 4
    assert lines[0].startswith("::error file=logs/kl_blowup/events.out.tfevents.1,title=PD101 kl-above-band (kl_blowup)::")
    assert lines[2].startswith("::warning ")
    assert "title=ppo-doctor%3A unreadable log" in lines[3]
    # a message cannot start a second workflow command: every line starts with one
    hostile = render(hostile_report(), "github").splitlines()
    assert all(re.match(r"^::(error|warning|notice) file=", ln) for ln in hostile)
    assert "%0A::error::injected" in hostile[0]


# -- registry of formats ------------------------------------------------------------------
@pytest.mark.parametrize("fmt", sorted(set(FORMATS) - {"html"}))
def test_every_format_renders_an_empty_report(fmt):
    out = render(Report(), fmt)
    assert out == "" if fmt == "github" else out.endswith("\n")


def test_unknown_format_is_rejected():
    with pytest.raises(ValueError, match="unknown report format"):
        render(Report(), "yaml")


@pytest.mark.slow
def test_html_report_of_sample_logs(sample_logs, tmp_path):
    """The shipped sample runs render to one page with plots for every run and findings."""
    from cli_invoke import run_cli

    out = tmp_path / "report.html"
    result = run_cli(["report", str(sample_logs), "--isolated", "--format", "html", "-o", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    runs = len(re.findall(r'<h2 id="run-\d+">', page))
    assert runs >= 1
    assert len(re.findall(r'<img class="plot"', page)) >= runs
    assert "<h3>Findings</h3>" in page and "<h3>Likely causes and fixes</h3>" in page


def test_info_findings_are_notes_not_symptoms():
    from dataclasses import replace

    from tests.report_builders import kl_finding, nan_finding, unhealthy_report

    rr = unhealthy_report()
    rr.findings = [kl_finding(), replace(nan_finding(), severity="info")]
    assert rr.symptoms == ["kl_blowup"]
    assert [f["severity"] for f in rr.to_dict()["findings"]] == ["error", "info"]


# -- notebook display ---------------------------------------------------------------------
def test_report_objects_have_a_short_repr_and_show_as_html():
    import ppo_doctor.report.html  # noqa: F401 - registers the notebook display, as in a notebook

    report = sample_report()
    assert repr(report) == "<Report: 3 run(s) (1 unhealthy, 1 unknown, 1 healthy), 3 finding(s), 1 read error(s)>"
    assert repr(report.runs[0]) == "<RunReport 'kl_blowup': unhealthy, 3 finding(s) (PD101, PD601, PD602)>"
    assert len(repr(report.runs[1])) < 80 and "finding" in repr(report.runs[1])
    html = report._repr_html_()
    assert html.startswith('<div class="ppo-doctor"><style>') and html.endswith("</div>")
    assert "<body" not in html and "<img" not in html  # a fragment, no plots to draw
    assert "kl-above-band" in html and "truncated record" in html
    # the page's styles are scoped to the fragment, so a notebook keeps its own
    css = html.split("<style>", 1)[1].split("</style>", 1)[0]
    assert all(rule.startswith(".ppo-doctor") for rule in css.replace("}", "}\n").split("\n") if rule)
    assert "kl_blowup" in report.runs[0]._repr_html_()


def test_a_report_shows_as_html_whatever_was_imported_first(tmp_path):
    """results imports no renderer; the first display imports it, with IPython imported before
    the package, after it, or not at all (a stub IPython stands in here)."""
    import subprocess
    import sys

    analyse = "report = ppo_doctor.analyze({'reward/score': [float(i) for i in range(40)]})\n"
    show = (
        "assert 'ppo_doctor.report.html' not in sys.modules\n"
        "for shown in (report._repr_html_(), report.runs[0]._repr_html_()):\n"
        "    assert shown.startswith('<div class=\"ppo-doctor\">'), shown[:80]\n"
    )
    stub = "sys.modules['IPython'] = types.ModuleType('IPython')\n"
    for script in (stub + "import ppo_doctor\n" + analyse, "import ppo_doctor\n" + analyse + stub, "import ppo_doctor\n" + analyse):
        done = subprocess.run([sys.executable, "-c", "import sys, types\n" + script + show], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
