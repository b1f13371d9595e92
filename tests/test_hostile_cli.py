"""The CLI on broken and hostile inputs (issue 7): documented exit codes, one clear message per
bad file naming it, no traceback, other runs still analysed; log text rendered inert.

Exit codes (docs/architecture.md#contracts): 0 no finding at or above --fail-on, 1 there is one, 2 usage, config or
unreadable input (no run could be read).  The hostile runs are real log files (JSONL with
hostile keys and text samples, a config.json, a TensorBoard file with a hostile tag) in folders
with hostile names, analysed through ``ppo-doctor report``.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree

import pytest
from cli_invoke import run_cli

import hostile_inputs as h

REPO = Path(__file__).resolve().parents[1]


def strict_json(text: str):
    def refuse(token: str):
        raise ValueError(f"non-standard JSON token {token}")

    return json.loads(text, parse_constant=refuse)


def invoke(*args: str):
    return run_cli([*args, "--isolated"])


def assert_no_traceback(result) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    for text in (result.stdout, result.stderr):
        assert "Traceback" not in text and 'File "' not in text


def broken_files() -> dict[str, bytes]:
    """One broken log per folder: what people find on disks and in bug reports."""
    tb, wb = h.tensorboard(10).data, h.wandb(10).data
    return {
        "tb_empty/events.out.tfevents.1.a": b"",
        "tb_random/events.out.tfevents.1.b": h.random_bytes(1, 3000),
        "tb_cut_in_first_record/events.out.tfevents.1.c": tb[:20],
        "tb_gzip/events.out.tfevents.1.d": gzip.compress(tb),
        "wb_empty/wandb/run-20240101_000000-aaa/run-aaa.wandb": b"",
        "wb_garbage/wandb/run-20240101_000000-bbb/run-bbb.wandb": wb[:7] + h.random_bytes(2, 3000),
        "wb_version/wandb/run-20240101_000000-ccc/run-ccc.wandb": wb[:6] + b"\x07" + wb[7:],
        "ts_not_json/trainer_state.json": b'{"log_history": [ nope',
        "ts_cut_before_entries/trainer_state.json": h.trainer_state(5).data[:120],
        "ts_empty_history/trainer_state.json": b'{"log_history": []}',
        "csv_header_only/progress.csv": b"step,loss,kl\n",
        "csv_gzip/progress.csv": gzip.compress(h.csv(5).data),
        "jsonl_garbage/metrics.jsonl": b"{not json}\n{also not\n",
        "jsonl_deep/metrics.jsonl": b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n",
        "jsonl_empty/metrics.jsonl": b"\n\n  \n",
        "mlruns_broken/mlruns/0/0123456789abcdef/metrics/loss": b"garbage\n\x00\x01\n",
    }


@pytest.fixture
def broken_tree(tmp_path) -> tuple[Path, list[Path]]:
    files = []
    for rel, data in broken_files().items():
        path = tmp_path / rel
        if rel.startswith("mlruns_broken"):
            h.mlflow_run(tmp_path / "mlruns_broken")  # a whole run folder; its metric file is replaced
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        files.append(path)
    (tmp_path / "good").mkdir()
    h.jsonl(30).write(tmp_path / "good" / "metrics.jsonl")
    return tmp_path, files


def test_broken_files_beside_a_good_run_one_message_each(broken_tree):
    root, files = broken_tree
    result = invoke("check", str(root), "--format", "json")
    assert_no_traceback(result)
    assert result.exit_code == 2  # the good run is reported, but the gate never passes on unread logs (issue 28)
    doc = strict_json(result.stdout)
    assert [r["run"] for r in doc["runs"]] == ["good"] and doc["runs"][0]["points"] == 60
    by_path: dict[str, list[str]] = {}
    for e in doc["errors"]:
        by_path.setdefault(e["path"], []).append(e["message"])
    for f in files:
        assert len(by_path.get(str(f), [])) == 1, (f, by_path.get(str(f)))
    assert not [m for ms in by_path.values() for m in ms if "internal" in m]
    assert "gzip-compressed" in by_path[str(root / "tb_gzip/events.out.tfevents.1.d")][0]
    assert "cut short" in by_path[str(root / "ts_cut_before_entries/trainer_state.json")][0]
    listing = run_cli(["metrics", str(root), "--format", "json"])  # what was read, same inputs
    assert_no_traceback(listing)
    assert listing.exit_code == 0 and "good" in listing.stdout
    strict_json(listing.stdout)


@pytest.mark.parametrize("rel", sorted(broken_files()))
def test_each_broken_file_alone_exits_2_with_its_name_on_stderr(broken_tree, rel):
    root, _ = broken_tree
    target = root / rel
    result = invoke("check", str(target))
    assert_no_traceback(result)
    assert result.exit_code == 2, result.stdout + result.stderr
    named = [line for line in (result.stdout + result.stderr).splitlines() if str(target) in line and "no readable" not in line]
    assert len(named) == 1 and re.search(r"\b(error|warning)\b", named[0]), named


def test_usage_errors_exit_2_without_traceback(tmp_path):
    for args in (["check"], ["check", str(tmp_path / "missing")], ["report", str(tmp_path), "--format", "nope"], ["check", str(tmp_path)]):
        result = run_cli(args)
        assert_no_traceback(result)
        assert result.exit_code == 2, args


def test_real_process_on_a_broken_tree_prints_no_traceback(broken_tree):
    """A real interpreter (warnings, logging and exit paths included), not just run_cli in this process."""
    root, _ = broken_tree
    env = {**os.environ, "PYTHONWARNINGS": "default", "NO_COLOR": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "ppo_doctor.cli", "check", str(root), "--isolated", "--fail-on", "never"],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=120,
    )
    assert proc.returncode == 2, proc.stderr  # logs that could not be read (issue 28)
    assert proc.stderr.splitlines()[-1].startswith("ppo-doctor: exit 2: not read: ")
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "good" in proc.stdout


# -- hostile text in real log files -------------------------------------------------------------------------

NEWLINE_TAG = "x\n::stop-commands::t0k"
# (run folder name, the metric tag that goes non-finite in it, so that a finding names the tag)
HOSTILE_RUNS = (
    ("run <img src=x onerror=alert(1)>", h.HOSTILE_TEXTS[0]),
    ("run |x| `y` *z* [l](javascript:alert(1))", h.HOSTILE_TEXTS[2]),
    ("run \x1b[31mred\x1b[0m", h.HOSTILE_TEXTS[3]),
    ("run \x1b]8;;https:evil.example\x07link", NEWLINE_TAG),  # no "//": a path would fold it
)


def hostile_tree(root: Path) -> Path:
    """Runs whose folder names, metric tags, config values and text samples are hostile."""
    for name, tag in HOSTILE_RUNS:
        run = root / name
        run.mkdir(parents=True)
        lines = []
        for i in range(60):
            row = {"step": i, "objective/kl": 0.01 * i, tag: float("nan") if i > 40 else 1.0}
            row.update({t: float(i) for t in h.HOSTILE_TEXTS if t != tag})
            if i % 10 == 0:
                row["prompt"] = h.HOSTILE_TEXTS[(i // 10) % len(h.HOSTILE_TEXTS)]
                row["response"] = " ".join(h.HOSTILE_TEXTS)
            lines.append(json.dumps(row))
        (run / "metrics.jsonl").write_text("\n".join(lines) + "\n")
        (run / "config.json").write_text(json.dumps({"learning_rate": h.SCRIPT, "model_name": h.HOSTILE_TEXTS[4], h.HOSTILE_TEXTS[2]: 1}))
    tb_run = root / "tb <b>bold<b>"
    tb_run.mkdir()
    values = [0.1] * 30 + [float("inf")] * 10
    h.tensorboard(40, tags=(h.SCRIPT,), values=values).write(tb_run / "events.out.tfevents.1.host")
    return root


class Elements(HTMLParser):
    """Every element and attribute of an HTML document, and its visible text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


@pytest.fixture(scope="module")
def hostile_reports(tmp_path_factory) -> dict[str, str]:
    root = hostile_tree(tmp_path_factory.mktemp("hostile"))
    out = {}
    for fmt in ("html", "markdown", "text", "json", "sarif", "junit", "github"):
        result = invoke("report", str(root), "--format", fmt)
        assert_no_traceback(result)
        assert result.exit_code == 0, result.stderr
        out[fmt] = result.stdout
    return out


def test_html_report_is_inert(hostile_reports):
    html = hostile_reports["html"]
    doc = Elements()
    doc.feed(html)
    names = {t for t, _ in doc.tags}
    assert "script" not in names and "iframe" not in names and "object" not in names
    for tag, attrs in doc.tags:
        assert not [a for a in attrs if a.startswith("on")], (tag, attrs)
        for key in ("href", "src"):
            value = (attrs.get(key) or "").strip().lower()
            assert not value.startswith("javascript:"), (tag, attrs)
            assert key != "src" or not value or value.startswith("data:image/"), (tag, attrs)
        if tag == "a":
            assert (attrs.get("href") or "").startswith("#")
    visible = "".join(doc.text)
    assert "<img src=x onerror=alert(1)>" in visible  # shown, as text
    assert "<script>alert('pwn')</script>" in visible
    assert "\x1b" not in html and "\x07" not in html


def _outside_code(markdown: str) -> str:
    """Markdown without its fenced code blocks (whose content a renderer never interprets)."""
    out, fence = [], None
    for line in markdown.split("\n"):
        m = re.match(r"^(`{3,}|~{3,})", line)
        if fence is None and m:
            fence = m.group(1)
            continue
        if fence is not None:
            if line.startswith(fence) and not line.strip(fence[0]):
                fence = None
            continue
        out.append(line)
    assert fence is None, "unclosed code fence"
    return "\n".join(out)


def test_markdown_report_is_inert(hostile_reports):
    md = hostile_reports["markdown"]
    assert "\x1b" not in md and "\x07" not in md
    prose = _outside_code(md)
    assert "<script" not in prose and "<img" not in prose and "<b>" not in prose
    assert "](javascript:" not in prose  # a link needs an unescaped "](": every "[" and "(" is escaped
    assert re.search(r"(?<!\\)\[[^\]]*(?<!\\)\]\(", prose) is None
    for table in re.findall(r"((?:^\|.*\n)+)", prose, flags=re.M):
        rows = table.strip("\n").split("\n")
        widths = {len(re.findall(r"(?<!\\)\|", row)) for row in rows}
        assert len(widths) == 1, rows  # no cell added or removed by a "|" in log text
    assert "onerror=alert\\(1\\)" in prose  # the hostile run name is there, escaped


def test_terminal_report_has_no_escape_sequences(hostile_reports):
    text = hostile_reports["text"]
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", text)
    assert "run <img src=x onerror=alert(1)>" in text  # plain text needs no HTML escaping
    assert "x ::stop-commands::t0k" in text  # the tag's newline became a space


def test_machine_formats_parse_and_keep_the_names(hostile_reports):
    doc = strict_json(hostile_reports["json"])
    names = {r["run"] for r in doc["runs"]}
    assert {n for n, _ in HOSTILE_RUNS} <= names
    assert any(h.SCRIPT in r["unmapped"] for r in doc["runs"])
    strict_json(hostile_reports["sarif"])
    ElementTree.fromstring(hostile_reports["junit"])


def test_github_annotations_cannot_start_a_workflow_command(hostile_reports):
    text = hostile_reports["github"]
    lines = text.split("\n")[:-1]
    assert lines and all(re.match(r"^::(error|warning|notice)( |::)", line) for line in lines), lines
    assert "\r" not in text and "%0A::stop-commands::t0k" in text  # the tag's newline stayed inside its annotation
