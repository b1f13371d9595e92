"""The blind sets are restored from git snapshots as benchmarks/blind_sources.json says
(benchmarks/blind_sets.py): a directory with everything under it, a single file to a new name, and
every entry that cannot be restored named with its reason."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from benchmarks import blind_sets
from benchmarks.real_scorecard import load_labels

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _snapshot(mirrors, repo, files):
    """A bare git snapshot of ``repo`` under ``mirrors`` as the fetch tool lays it out; its commit."""
    work = mirrors.parent / ("work-" + repo.replace("/", "+"))
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "logs"], check=True)
    bare = mirrors / repo.replace("/", "+") / "repo"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    return subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()


def test_restore_copies_directories_and_renamed_files_and_names_what_it_cannot(tmp_path):
    mirrors = tmp_path / "mirrors"
    commit = _snapshot(
        mirrors,
        "alice/rl",
        {
            "runs/PPO_1/events.out.tfevents.1": "a",
            "runs/PPO_1/sub/progress.csv": "b",
            "logs/dqn_rmsprop.csv": "c",
            "logs/dqn_adam.csv": "d",
        },
    )
    sources = [
        {"set": "real9", "slug": "sb3-alice", "run": "runs/PPO_1", "repo": "alice/rl", "commit": commit, "copy": [["runs/PPO_1", "runs/PPO_1"]]},
        # one file of a folder that holds several runs' files, kept under the run's id
        {"set": "real9", "slug": "dqn-rmsprop-alice", "run": "logs", "repo": "alice/rl", "commit": commit, "copy": [["logs/dqn_rmsprop.csv", "logs/dqn_rmsprop.csv"]]},
        {"set": "real9", "slug": "gone", "run": "x", "repo": "bob/none", "commit": "0" * 40, "copy": [["x", "x"]]},
        {"set": "real9", "slug": "paged", "run": "y", "repo": "carol/p", "commit": None, "copy": [], "note": "read_file pages"},
        {"set": "real9", "slug": "old", "run": "z", "repo": "alice/rl", "commit": "1" * 40, "copy": [["z", "z"]]},
    ]
    into = tmp_path / "realruns"
    totals, missing = blind_sets.restore(sources, mirrors, into)

    assert (into / "real9/sb3-alice/runs/PPO_1/events.out.tfevents.1").read_text() == "a"
    assert (into / "real9/sb3-alice/runs/PPO_1/sub/progress.csv").read_text() == "b"
    assert sorted(p.name for p in (into / "real9/dqn-rmsprop-alice/logs").iterdir()) == ["dqn_rmsprop.csv"]
    assert totals["runs"] == 2 and totals["files"] == 3
    assert [m.split(":", 1)[0] for m in missing] == ["real9/gone 'x' (bob/none)", "real9/paged 'y' (carol/p)", "real9/old 'z' (alice/rl)"]
    assert "no snapshot" in missing[0] and "search index" in missing[1] and "lacks commit" in missing[2]
    assert blind_sets.repositories(sources) == ["alice/rl", "bob/none"]


def test_every_blind_labelled_run_has_a_source_and_every_source_a_label():
    labels, _, _ = load_labels()
    blind = {(lab.folder, lab.run) for lab in labels if lab.set.startswith("realruns/real") and int(lab.set.rsplit("real", 1)[1]) >= 5}
    sources = {(f"realruns/{s['set']}/{s['slug']}", s["run"]) for s in blind_sets.load_sources()}
    assert sources == blind


def test_the_sources_file_is_well_formed():
    doc = json.loads(blind_sets.SOURCES.read_text(encoding="utf-8"))
    for s in doc["runs"]:
        assert {"set", "slug", "run", "repo", "commit", "copy"} <= set(s), s
        assert s["commit"] is None or len(s["commit"]) == 40, s
        assert s["commit"] is None or s["copy"], s
