"""Tiny-size runs of every benchmark script, the generators' round trips through our readers,
and the CSV reader's written-nan / empty-cell distinction on its fast path (issue 6)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks import _common, bench_check, bench_formats, bench_jobs, bench_memory, bench_sweep, gen_formats, gen_inputs
from ppo_doctor.ingest.readers import csv_logs, jsonl, trainer_state
from ppo_doctor.ingest.wandb import binary as wandb_binary
from ppo_doctor.pipeline import load


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    """Benchmarks write their inputs here instead of benchmarks/data/."""
    for mod in (bench_check, bench_formats, bench_jobs, bench_memory, bench_sweep):
        monkeypatch.setattr(mod, "DATA", tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    "gen, reader",
    [
        (gen_formats.wandb_file, wandb_binary),
        (gen_formats.jsonl_file, jsonl),
        (gen_formats.csv_file, csv_logs),
        (gen_formats.trainer_state_file, trainer_state),
    ],
)
def test_format_generators_round_trip(tmp_path, gen, reader):
    """Every point the generator writes is read back, values and steps exact (NaN/Inf included)."""
    path = gen(tmp_path, n_tags=6, n_steps=3000, seed=3)
    (run,) = reader.read(path)
    tags, steps, values, _ = gen_inputs.scalar_series(6, 3000, 3)
    got = {s.tag: s for s in run.series}
    assert sorted(got) == sorted(tags)
    for j, tag in enumerate(tags):
        np.testing.assert_array_equal(got[tag].steps, steps)
        np.testing.assert_array_equal(got[tag].values, values[:, j].astype(np.float64))
    assert not [i for i in run.issues if i.level == "error"]


def test_wandb_writer_fragments_records_across_blocks(tmp_path):
    """A row bigger than a 32 KiB block is written as FIRST/MIDDLE/LAST and read back whole."""
    path = tmp_path / "run-big.wandb"
    w = gen_formats.WandbLogWriter(path)
    items = [("_step", "5")] + [(f"m/{k:04d}", repr(k / 7)) for k in range(3000)]
    w.write(gen_formats.wandb_history_record(items, 5))
    w.close()
    assert path.stat().st_size > 2 * 32 * 1024
    (run,) = wandb_binary.read(path)
    assert len(run.series) == 3000
    assert math.isclose(float({s.tag: s for s in run.series}["m/0021"].values[0]), 3.0)


def test_tensorboard_run_continues_steps_across_files(tmp_path):
    folder = gen_formats.tensorboard_run(tmp_path / "run", tags=gen_formats.CHECK_TAGS[:4], n_steps=50, n_files=3)
    (run,) = load(folder).runs
    assert len(run.frame) == 4 * 50 * 3
    assert run.frame.step_range() == (0, (3 * 50 - 1) * 64)
    assert not run.restarts


def test_csv_fast_path_keeps_written_nan_and_skips_empty_cells(tmp_path):
    f = tmp_path / "progress.csv"
    f.write_text('step,a,b,c\n1,nan,,1\n2,,3,NaN\n3,"4",-nan,inf\n4,5,6\n')
    (run,) = csv_logs.read(f)
    got = {s.tag: s for s in run.series}
    np.testing.assert_array_equal(got["a"].steps, [1, 3, 4])
    assert np.isnan(got["a"].values[0]) and list(got["a"].values[1:]) == [4.0, 5.0]
    np.testing.assert_array_equal(got["b"].steps, [2, 3, 4])
    assert np.isnan(got["b"].values[1])
    np.testing.assert_array_equal(got["c"].steps, [1, 2, 3])  # the short last row has no c
    assert np.isnan(got["c"].values[1]) and got["c"].values[2] == np.inf


def test_bench_formats_smoke(data_dir, monkeypatch):
    monkeypatch.setattr(bench_formats, "MIN_SECONDS", 0.0)
    table = bench_formats.run(repeats=1, n_tags=3, n_steps=200)
    assert table.count("| 600 |") >= 4  # every reader returned all 3 x 200 points


def test_paired_times_alternate_and_run_long_enough():
    calls = []

    def fn(name):
        calls.append(name)
        return name

    pair = _common.paired_times(lambda: fn("a"), lambda: fn("b"), 3)
    assert calls == ["a", "b", "b", "a", "a", "b"]  # who goes first alternates
    assert len(pair.a) == len(pair.b) == 3 and pair.last_a == "a" and pair.last_b == "b"
    assert pair.low <= pair.ratio <= pair.high
    # a short call is repeated until each side has run min_seconds (or max_repeats is reached)
    short = _common.paired_times(lambda: sum(range(20_000)), lambda: sum(range(20_000)), 2, min_seconds=0.01, max_repeats=500)
    assert len(short.a) > 2 and (min(sum(short.a), sum(short.b)) >= 0.01 or len(short.a) == 500)


@pytest.mark.slow  # fresh ppo-doctor subprocesses: ~5-15 s
def test_bench_check_smoke(data_dir):
    table = bench_check.run(repeats=1, n_steps=100, engine_sizes=[200, 400])
    assert "Heavy packages imported by the check run" in table
    assert "**none**" in table  # matplotlib, scipy, torch ... stay out of the check path
    assert "| 400 |" in table


@pytest.mark.slow  # fresh ppo-doctor subprocesses: ~5-15 s
def test_bench_memory_smoke(data_dir):
    table = bench_memory.run(n_files=2, n_steps=20)
    assert "| load + analyze | 2,000 |" in table


@pytest.mark.slow  # fresh ppo-doctor subprocesses: ~5-15 s
def test_bench_jobs_smoke(data_dir):
    table = bench_jobs.run(n_runs=3, n_steps=20, jobs=2, repeats=1)
    assert "3,000 / 3,000" in table


@pytest.mark.slow  # five fresh subprocesses, one of them a Dask LocalCluster: ~20-40 s (more under load)
def test_bench_sweep_smoke(data_dir):
    table = bench_sweep.run(n_runs=6, n_steps=30, n_metrics=4, jobs=2, growth=[6])
    assert "6 runs x 4 metrics x 30 steps (720 points" in table
    assert "the same report from every executor (hash of the JSON without paths): **yes**" in table


def test_write_section_replaces_only_its_part(tmp_path):
    results = tmp_path / "RESULTS.md"
    results.write_text("# Benchmark results\n\n<!-- other:start -->\nkeep\n<!-- other:end -->\n")
    _common.write_section("mine", "Mine", "one", results=results)
    _common.write_section("mine", "Mine", "two", results=results)
    text = results.read_text()
    assert "keep" in text and "two" in text and "one" not in text


def test_bench_live_and_watch_smoke(data_dir, monkeypatch, caplog):
    """The live benchmarks at toy sizes (the full ones: python -m benchmarks.bench_live / bench_watch)."""
    import logging

    from benchmarks import bench_live, bench_watch

    monkeypatch.setattr(bench_watch, "DATA", data_dir)
    with caplog.at_level(logging.INFO):
        bench_live.main(["--steps", "120", "--repeats", "1", "--no-write"])
        bench_watch.main(["--steps", "100", "--per-poll", "100", "--polls", "5", "--no-write"])
    text = caplog.text
    assert "| 120 x 30 | 3,600 |" in text
    assert "identical to" in text  # the followed file's pieces join into what one read gives


def test_hostile_generators_make_what_they_say(tmp_path):
    """bench_hostile's inputs at a tiny size: the readers see the records, tags and columns."""
    from benchmarks import bench_hostile

    tail = bench_hostile.zero_tail_file(tmp_path / "c3", 1 << 20, n_events=40)
    assert tail.stat().st_size > 1 << 20
    (run,) = load(tail.parent).runs
    assert len(run.frame) == 40
    (run,) = load(bench_hostile.many_tags(tmp_path / "c4", 300)).runs
    assert len(run.frame.metrics) == 300
    (run,) = load(bench_hostile.wide_csv(tmp_path / "c6", 123, 4, True)).runs
    assert len(run.frame) == 4 * 122
    assert len(load(bench_hostile.sparse_event_file(tmp_path / "c2", 1 << 30)).errors) == 1


def test_live_replay_on_sample_logs_stops_no_healthy_run(sample_logs, caplog):
    """The live-replay benchmark (docs/live.md): sample_logs' healthy run is never stopped, every
    live error is still an error at the end, each faulty run is stopped for its own fault."""
    from benchmarks import live_replay
    import ppo_doctor

    outs = [o for o in (live_replay.measure(rr) for rr in ppo_doctor.analyze(sample_logs).runs) if o is not None]
    healthy = [o for o in outs if o.healthy]
    assert healthy and all(o.stop is None and not o.unkept_warnings for o in healthy)
    assert all(o.errors_kept == o.errors_said for o in outs)
    assert all(o.stop is not None and o.own_fault for o in outs if not o.healthy)
    assert live_replay.scenario_of("/x/trl-s19/grpo-nan-reward-s19").name == "grpo-nan-reward"
