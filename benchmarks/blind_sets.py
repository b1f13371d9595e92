"""Restore the blind sets of the labelled real runs from git snapshots of their repositories.

    python -m benchmarks.blind_sets repos                                # the repositories to fetch
    python -m benchmarks.blind_sets restore --mirrors DIR [--into DIR]   # copy their logs back

The blind sets (``realruns/real5`` on in ``tests/data/real_labels.json``) are public logs that
sessions fetched, labelled from their curves and scored once before changing anything for them.
Their files are never committed (several repositories have no licence) and live beside a
session's checkout, so a new machine starts without them.  ``benchmarks/blind_sources.json`` says
where each run came from: the repository, the commit, and which repository paths were copied to
which path under ``realruns/<set>/<slug>/``; a directory is copied with everything under it.

``restore`` reads git snapshots laid out as the session's ``fetch`` tool leaves them
(``DIR/<owner>+<name>/repo``, a bare git directory or a clone with ``.git``) with plain ``git``
and writes ``--into`` (default ``../shared/realruns``).  A run whose repository is not under
``--mirrors``, whose commit the snapshot lacks, or whose source was read page by page from a
search index (``commit`` null) is listed as not restored.  Files a snapshot lists but does not
hold (the largest files of some snapshots) are skipped and counted: they are model checkpoints
far more often than logs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Iterable, Sequence

from benchmarks.real_scorecard import SHARED

SOURCES = Path(__file__).resolve().with_name("blind_sources.json")

__all__ = ["SOURCES", "git_dir", "load_sources", "main", "repositories", "restore", "restore_one"]


def load_sources(path: Path = SOURCES) -> list[dict]:
    """The entries of the sources file: ``set``, ``slug``, ``run``, ``repo``, ``commit``, ``copy``
    (pairs of repository path and path under the slug folder) and an optional ``note``."""
    return json.loads(path.read_text(encoding="utf-8"))["runs"]


def repositories(sources: Iterable[dict]) -> list[str]:
    """The repositories (``owner/name``) the restorable entries need, each once."""
    return sorted({s["repo"] for s in sources if s.get("commit")})


def git_dir(mirrors: Path, repo: str) -> Path | None:
    """The git directory of ``repo``'s snapshot under ``mirrors``, or None."""
    base = mirrors / repo.replace("/", "+") / "repo"
    for candidate in (base / ".git", base):
        if (candidate / "HEAD").is_file():
            return candidate
    return None


def _git(gdir: Path, *args: str) -> subprocess.CompletedProcess:
    # Repository paths hold brackets and spaces ("results/n8 [sparse, n4]"): read them literally.
    env = {**os.environ, "GIT_LITERAL_PATHSPECS": "1"}
    return subprocess.run(["git", "--git-dir", str(gdir), *args], capture_output=True, env=env, check=False)


def restore_one(entry: dict, gdir: Path, dest: Path) -> Counter:
    """Copy one entry's paths from commit ``entry["commit"]`` of ``gdir`` into ``dest`` (the slug
    folder); counts ``files`` written and ``absent`` blobs the snapshot lists but lacks."""
    counts: Counter = Counter()
    for source, target in entry["copy"]:
        listing = _git(gdir, "ls-tree", "-r", "-z", entry["commit"], "--", source.rstrip("/"))
        for line in listing.stdout.decode("utf-8", "surrogateescape").split("\0"):
            if not line:
                continue
            meta, path = line.split("\t", 1)
            _mode, kind, sha = meta.split()
            if kind != "blob":
                continue
            blob = _git(gdir, "cat-file", "blob", sha)
            if blob.returncode:
                counts["absent"] += 1
                continue
            inner = os.path.relpath(path, source.rstrip("/")) if path != source.rstrip("/") else ""
            out = dest / target / inner if inner else dest / target
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(blob.stdout)
            counts["files"] += 1
    return counts


def restore(sources: Sequence[dict], mirrors: Path, into: Path) -> tuple[Counter, list[str]]:
    """Restore every entry it can; the totals and one line per entry not restored."""
    totals: Counter = Counter()
    missing: list[str] = []
    for entry in sources:
        where = f"{entry['set']}/{entry['slug']} {entry['run']!r} ({entry['repo']})"
        if not entry.get("commit"):
            missing.append(f"{where}: read from a search index, not from a snapshot ({entry.get('note', '')})")
            continue
        gdir = git_dir(mirrors, entry["repo"])
        if gdir is None:
            missing.append(f"{where}: no snapshot under {mirrors}")
            continue
        if _git(gdir, "cat-file", "-e", f"{entry['commit']}^{{commit}}").returncode:
            missing.append(f"{where}: the snapshot lacks commit {entry['commit']}")
            continue
        counts = restore_one(entry, gdir, into / entry["set"] / entry["slug"])
        if not counts["files"]:
            missing.append(f"{where}: no file copied")
        totals.update(counts)
        totals["runs"] += bool(counts["files"])
    return totals, missing


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("repos", "restore"))
    parser.add_argument("--sources", type=Path, default=SOURCES)
    parser.add_argument("--mirrors", type=Path, help="the folder of git snapshots (<owner>+<name>/repo)")
    parser.add_argument("--into", type=Path, default=SHARED / "realruns", help="where realN/<slug>/ go")
    args = parser.parse_args(argv)
    sources = load_sources(args.sources)
    if args.command == "repos":
        print("\n".join(repositories(sources)))
        return 0
    if args.mirrors is None:
        parser.error("restore needs --mirrors")
    totals, missing = restore(sources, args.mirrors, args.into)
    print(f"restored {totals['runs']} of {len(sources)} runs: {totals['files']} files, {totals['absent']} absent from their snapshot")
    for line in missing:
        print("not restored:", line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
