"""Every citation in the repository can be followed by someone who has only the repository.

The project's working notes (a design note and a reference folder: log formats, thresholds and
peers, the guides' digest, style anchors, the guides' original texts) are not part of it, so no
shipped file may name them; code and docs cite papers, framework files, docs pages, or an
anchor of ``docs/`` such as ``docs/sources.md#kl-band``, and each such anchor must exist.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What the repository ships: the package, its docs, the README, benchmarks, tests and their data.
SHIPPED = ("ppo_doctor", "docs", "benchmarks", "tests", "scripts", "sample_logs", "README.md", "pyproject.toml")
TEXT_SUFFIXES = {".py", ".md", ".toml", ".json", ".txt", ".yaml", ".yml", ".cfg", ".ini", ".csv", ".jsonl"}
SKIP_DIRS = {"__pycache__", ".pytest_cache", ".mypy_cache"}
# benchmarks/data is generated input (git ignores it)
SKIP_PATHS = {ROOT / "benchmarks" / "data"}

# The unshipped notes by name (written so that this file does not match itself).
UNSHIPPED = re.compile(
    r"\b(?:formats|DESIGN|thresholds-and-peers|guides-digest|style-anchors)(?:\.md\b|\s*§)"
    r"|\bthresholds-and-peers\b|\bguides-digest\b|\bstyle-anchors\b"
    r"|\breference[/](?:seeds\b|[\w-]+\.md\b)|\bseeds[/]"
)
# docs/sources.md#kl-band in code and docs; Markdown links to sources.md#kl-band from docs/ or
# to a page of ../docs/ from another folder
DOC_CITATION = re.compile(r"\bdocs/([\w-]+\.md)(?:#([\w-]+))?")
MD_LINK = re.compile(r"\]\(((?:\.\./)*(?:docs/)?)([\w-]+\.md)#([\w-]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def shipped_files() -> list[Path]:
    out = []
    for name in SHIPPED:
        top = ROOT / name
        if top.is_file():
            out.append(top)
            continue
        for path in top.rglob("*"):
            if SKIP_DIRS.intersection(path.parts) or any(p in path.parents for p in SKIP_PATHS):
                continue
            if path.is_file() and path.suffix in TEXT_SUFFIXES:
                out.append(path)
    return sorted(out)


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = read(page)
    return {slug(h) for h in HEADING.findall(text)} | set(HTML_ANCHOR.findall(text))


def test_slug_follows_github():
    assert slug("KL high from start") == "kl-high-from-start"
    assert slug("`ppo-doctor check` (CI)") == "ppo-doctor-check-ci"
    assert slug("Inputs are untrusted") == "inputs-are-untrusted"


def test_the_scan_sees_the_package_docs_and_tests():
    names = {p.relative_to(ROOT).as_posix() for p in shipped_files()}
    assert {"ppo_doctor/rules/pd101_kl_above_band.py", "docs/sources.md", "README.md", "tests/test_citations.py"} <= names


def test_no_shipped_file_names_an_unshipped_note():
    hits = []
    for path in shipped_files():
        if path == Path(__file__).resolve():
            continue  # names them to find them
        for n, line in enumerate(read(path).splitlines(), 1):
            if UNSHIPPED.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    assert not hits, "cite a public source or a docs/sources.md anchor instead:\n" + "\n".join(hits)


def test_the_pattern_catches_each_note():
    for text in ("formats.md §12.1", "(thresholds-and-peers §4.2)", "guides-digest.md", "style-anchors §1b",
                 "DESIGN.md", "reference/seeds/", "``reference/formats.md``"):
        assert UNSHIPPED.search(text), text
    for text in ("docs/sources.md#kl-band", "the design of docs/architecture.md", "healthy seeds", "formats"):
        assert not UNSHIPPED.search(text), text


def test_every_cited_docs_page_and_anchor_exists():
    docs = ROOT / "docs"
    known: dict[str, set[str]] = {p.name: anchors(p) for p in docs.glob("*.md")}
    missing = []
    for path in shipped_files():
        text = read(path)
        cited = [(page, anchor) for page, anchor in DOC_CITATION.findall(text)]
        if path.suffix == ".md":
            # a relative link from a page of docs/, or one through ../docs/ from another folder
            in_docs = path.parent == docs
            cited += [(page, anchor) for up, page, anchor in MD_LINK.findall(text) if in_docs or "docs/" in up]
        for page, anchor in cited:
            if page not in known:
                missing.append(f"{path.relative_to(ROOT)}: docs/{page} does not exist")
            elif anchor and anchor not in known[page]:
                missing.append(f"{path.relative_to(ROOT)}: docs/{page}#{anchor} is no heading of docs/{page}")
    assert not missing, "\n".join(sorted(set(missing)))


def test_rule_docstrings_cite_sources_by_anchor():
    """Each rule's Source paragraph points at docs/sources.md, where the thresholds are explained."""
    from ppo_doctor.rules.registry import builtin_rules

    for rule in builtin_rules():
        source = (rule.__doc__ or "").split("**Source.**", 1)
        assert len(source) == 2, f"{rule.code}: no **Source.** paragraph"
        assert "docs/sources.md#" in source[1], f"{rule.code}: its Source paragraph cites no docs/sources.md anchor"
