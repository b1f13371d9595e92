"""Property-based tests (hypothesis): any mutation of a valid log (a flipped bit, a cut, inserted,
deleted or duplicated bytes) lets only :class:`PPODoctorError` escape a reader, and every point
of the records that lie wholly before the mutation is still read (issue 7).

Each reader gets a small valid file from ``hostile_inputs``; ``discover``/``load`` get a folder
holding one mutated file of every format.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hostile_inputs as h
from ppo_doctor.errors import PPODoctorError
from ppo_doctor.ingest.readers import csv_logs, deepspeed_chat_console, hf_console, jsonl, mlflow, sb3_console, trainer_state, verl_console
from ppo_doctor.ingest.tensorboard import reader as tensorboard
from ppo_doctor.ingest.wandb import binary as wandb_binary
from ppo_doctor.pipeline import load

FILES = {
    "tensorboard": ("events.out.tfevents.1700000000.host", lambda: h.tensorboard(12), tensorboard),
    "wandb": ("run-abc.wandb", lambda: h.wandb(12), wandb_binary),
    "jsonl": ("metrics.jsonl", lambda: h.jsonl(12), jsonl),
    "csv": ("progress.csv", lambda: h.csv(12), csv_logs),
    "trainer_state": ("trainer_state.json", lambda: h.trainer_state(6), trainer_state),
    "verl_console": ("train.log", lambda: h.verl_console(12), verl_console),
    "hf_console": ("train.log", lambda: h.hf_console(12), hf_console),
    "sb3_console": ("train.log", lambda: h.sb3_console(6), sb3_console),
    "deepspeed_chat_console": ("training.log", lambda: h.deepspeed_chat_console(8), deepspeed_chat_console),
}
# Records a file needs to be recognised at all: the HF console sniffer wants two printed rows
# (one printed dict is no log)
MIN_RECORDS = {"hf_console": 2}
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@st.composite
def mutations(draw) -> tuple[str, int, int, int]:
    return (
        draw(st.sampled_from(h.MUTATIONS)),
        draw(st.integers(0, 1 << 16)),
        draw(st.integers(0, 1 << 16)),
        draw(st.integers(0, 255)),
    )


def intact_until(data: bytes, kind: str, a: int, b: int) -> int:
    """The first byte offset the mutation changes: records ending before it are intact."""
    n = len(data)
    if n == 0:
        return 0
    i, j = sorted((a % (n + 1), b % (n + 1)))
    return {"flip": a % n, "truncate": a % (n + 1), "insert": i, "delete": i, "duplicate": j}[kind]


def check_reader(tmp_path: Path, fmt: str, mutation: tuple[str, int, int, int]) -> None:
    name, make, reader = FILES[fmt]
    written = make()
    kind, a, b, byte = mutation
    path = tmp_path / name
    path.write_bytes(h.mutate(written.data, kind, a, b, byte))
    must_keep = written.complete_before(intact_until(written.data, kind, a, b))
    try:
        runs = reader.read(path)
    except PPODoctorError:
        assert not must_keep, f"{fmt} {mutation}: unreadable although {sum(must_keep.values())} points were intact"
        return
    got = h.points_of(runs)
    assert not must_keep - got, f"{fmt} {mutation}: lost {dict(must_keep - got)}"
    assert all(i.path == str(path) for r in runs for i in r.issues)


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_reader_survives_any_mutation_and_keeps_the_intact_prefix(tmp_path, fmt):
    @SETTINGS
    @given(mutation=mutations())
    def run(mutation):
        check_reader(tmp_path, fmt, mutation)

    run()


@SETTINGS
@given(mutation=mutations())
def test_mlflow_run_with_a_mutated_metric_file(tmp_path_factory, mutation):
    run_dir, written = h.mlflow_run(tmp_path_factory.mktemp("ml"), n=12)
    kind, a, b, byte = mutation
    (run_dir / "metrics" / "loss").write_bytes(h.mutate(written.data, kind, a, b, byte))
    must_keep = written.complete_before(intact_until(written.data, kind, a, b))
    try:
        got = h.points_of(mlflow.read(run_dir))
    except PPODoctorError:
        assert not must_keep
        return
    assert not must_keep - got


@settings(max_examples=25, deadline=None)
@given(muts=st.lists(mutations(), min_size=len(FILES), max_size=len(FILES)))
def test_load_a_folder_of_mutated_logs(tmp_path_factory, muts):
    """Discovery and the orchestrator on a tree of damaged files: no exception, no reader bug
    caught as 'internal error', and each run keeps its intact prefix."""
    root = tmp_path_factory.mktemp("tree")
    keep: dict[str, Counter] = {}
    for (fmt, (name, make, _)), (kind, a, b, byte) in zip(sorted(FILES.items()), muts):
        written = make()
        (root / f"run_{fmt}").mkdir()  # not "csv/", "jsonl/": sibling role folders would merge into one run
        (root / f"run_{fmt}" / name).write_bytes(h.mutate(written.data, kind, a, b, byte))
        intact = intact_until(written.data, kind, a, b)
        if sum(end <= intact for end in written.ends) >= MIN_RECORDS.get(fmt, 1):
            keep[f"run_{fmt}"] = written.complete_before(intact)
    result = load(root)
    assert not [e for e in result.errors if "internal" in e.message], [str(e) for e in result.errors]
    runs = {r.id: r for r in result.runs}
    for fmt, must in keep.items():
        if must:
            assert fmt in runs, f"{fmt}: {[str(e) for e in result.errors]}"
            assert not must - h.frame_points(runs[fmt]), fmt
