"""ppo_doctor.pipeline: every executor gives the same results in discovery order, and a worker
that dies takes only its own run down (retried, then reported)."""

from __future__ import annotations

import os
import sys
from functools import partial
from pathlib import Path

import pytest

from benchmarks.gen_sweep import write_sweep
from ppo_doctor.errors import ConfigError
from ppo_doctor.pipeline import find_sources, map_runs, stream
from ppo_doctor.settings import Schedule
from ppo_doctor.run import Run


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("pipeline")
    write_sweep(root, kl_coefs=(0.05, 0.5), seeds=(1, 2), n_steps=60, n_metrics=6)
    broken = root / "zz-broken"
    broken.mkdir()
    (broken / "metrics.jsonl").write_text("not json at all\n")
    return root


def _points(run: Run) -> tuple[str, int]:
    return run.id, len(run.frame)


def _die_on(name: str, run: Run) -> tuple[str, int]:
    if run.id.startswith(name):
        os._exit(3)  # a worker killed mid-task (out of memory, a crash in C code)
    return _points(run)


def _collect(outcomes) -> list:
    return [(r, [e.message for e in errors]) for results, errors in outcomes for r in results]


def test_schedule_choice():
    assert Schedule.choose().executor == "local"
    assert Schedule.choose(jobs=3).executor == "processes"
    assert Schedule.choose(dask="tcp://127.0.0.1:1").executor == "dask"
    with pytest.raises(ConfigError, match="needs the dask executor"):
        Schedule.choose(executor="processes", dask="tcp://127.0.0.1:1")
    with pytest.raises(ConfigError, match="unknown executor"):
        Schedule(executor="threads")


def test_processes_give_the_local_results_in_order(sweep_dir):
    local = list(map_runs(sweep_dir, _points))
    procs = list(map_runs(sweep_dir, _points, Schedule(executor="processes", jobs=2)))
    assert [r for rs, _ in local for r in rs] == [("kl0.05_seed1", 360), ("kl0.05_seed2", 360), ("kl0.5_seed1", 360), ("kl0.5_seed2", 360)]
    assert [(rs, [e.message for e in es]) for rs, es in procs] == [(rs, [e.message for e in es]) for rs, es in local]
    assert any("zz-broken" in e.path for _, es in local for e in es)


def test_progress_counts_every_run(sweep_dir):
    seen = []
    list(map_runs(sweep_dir, _points, Schedule(executor="processes", jobs=2), progress=lambda d, t: seen.append((d, t))))
    assert seen == [(k, 4) for k in range(1, 5)]  # the broken file is a discovery error, not a run


def test_a_lost_worker_costs_only_its_run(sweep_dir):
    sources = find_sources([sweep_dir]).sources
    outcomes = list(stream(sources, partial(_die_on, "kl0.05_seed2"), Schedule(executor="processes", jobs=2, retries=1)))
    assert sorted(o.index for o in outcomes) == list(range(len(sources)))
    by_id = {o.source.id: o for o in outcomes}
    lost = by_id["kl0.05_seed2"]
    assert lost.results == [] and "worker process died while reading this run (2 tries)" in lost.errors[0].message
    assert sorted(r for o in outcomes for r in o.results) == [("kl0.05_seed1", 360), ("kl0.5_seed1", 360), ("kl0.5_seed2", 360)]


def test_an_exception_in_fn_is_that_runs_error(sweep_dir):
    def boom(run: Run) -> None:
        raise RuntimeError("bad " + run.id)

    outcomes = list(stream(find_sources([sweep_dir]).sources, boom))
    assert all(o.results == [] for o in outcomes)
    assert "internal error (RuntimeError: bad kl0.05_seed1)" in outcomes[0].errors[0].message


@pytest.mark.slow  # starts a Dask LocalCluster of worker processes (~5-15 s on 2 busy cores)
def test_dask_local_cluster_gives_the_local_results_and_survives_a_lost_worker(sweep_dir):
    pytest.importorskip("distributed")
    import cloudpickle

    # the dying function lives in this test module, which Dask's spawned workers cannot import
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    sources = find_sources([sweep_dir]).sources
    schedule = Schedule(executor="dask", jobs=2, retries=1)
    outcomes = list(stream(sources, partial(_die_on, "kl0.5_seed1"), schedule))
    by_id = {o.source.id: o for o in outcomes}
    assert len(outcomes) == len(sources)
    assert "worker lost while reading this run (KilledWorker" in by_id["kl0.5_seed1"].errors[0].message
    local = {o.source.id: o.results for o in stream(sources, _points)}
    assert {k: o.results for k, o in by_id.items() if k != "kl0.5_seed1"} == {k: v for k, v in local.items() if k != "kl0.5_seed1"}


def test_import_ppo_doctor_loads_no_optional_engine():
    import subprocess

    code = (
        "import sys, ppo_doctor, ppo_doctor.pipeline, ppo_doctor.sweep; "
        "print(sorted(m for m in ('dask', 'distributed', 'fsspec', 's3fs', 'matplotlib', 'torch', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    assert out.stdout.strip() == "[]"


def test_a_run_whose_outcome_never_comes_back_is_an_error_not_a_gap(sweep_dir, monkeypatch):
    # an executor that loses a task without raising (issue 28: a run came back empty once in CI)
    import ppo_doctor.pipeline as pipeline

    real = pipeline.stream

    def lossy(sources, fn, schedule=Schedule(), **kw):
        return (o for o in real(sources, fn, schedule, **kw) if o.index != 1)

    monkeypatch.setattr(pipeline, "stream", lossy)
    pairs = list(map_runs(sweep_dir, _points))[1:]  # the first pair is discovery's
    assert len(pairs) == 4
    assert pairs[1][0] == [] and "no result came back for this run" in pairs[1][1][0].message
    assert [r for rs, _ in pairs for r in rs] == [("kl0.05_seed1", 360), ("kl0.5_seed1", 360), ("kl0.5_seed2", 360)]


def test_a_run_that_reads_as_nothing_says_so(sweep_dir, monkeypatch):
    import ppo_doctor.pipeline as pipeline

    monkeypatch.setattr(pipeline, "read_source", lambda source, aliases: ([], []))
    sources = find_sources([sweep_dir]).sources
    results, errors = pipeline.process_source(sources[0], _points, None)
    assert results == [] and "no run could be read" in errors[0].message


class _KilledWorker(Exception):
    """Stands for distributed's KilledWorker (the executor tells it by its class name)."""


_KilledWorker.__name__ = "KilledWorker"


class _FakeDask:
    """A stand-in for ``distributed`` that runs each task when its result is asked for and
    blames a crash on every task in flight, as Dask's scheduler counts a worker's death against
    every task the worker held (``allowed-failures``): a task of the ``culprit`` run, and any task
    in flight beside one, ends in KilledWorker."""

    def __init__(self, culprit: str):
        self.culprit = culprit
        self.in_flight: list[_FakeDask.Future] = []
        self.alone: list[list[str]] = []  # the run ids of each task submitted with nothing else in flight

    class Future:
        def __init__(self, dask: "_FakeDask", fn, args):
            self.dask, self.fn, self.args = dask, fn, args
            self.ids = [source.id for _, source in args[0]]

        def result(self):
            crashed = any(self.dask.culprit in f.ids for f in self.dask.in_flight)
            self.dask.in_flight.remove(self)
            if crashed:
                raise _KilledWorker(f"{self.ids} lost with their worker")
            return self.fn(*self.args)

        def release(self):
            pass

    def module(self):
        fake = self

        class Client:
            def __init__(self, *a, **k):
                pass

            def submit(self, fn, *args, **kw):
                if not fake.in_flight:
                    fake.alone.append([source.id for _, source in args[0]])
                fut = _FakeDask.Future(fake, fn, args)
                fake.in_flight.append(fut)
                return fut

            def wait_for_workers(self, n, timeout=None):
                pass

            def scheduler_info(self):
                return {"workers": {"w1": {}, "w2": {}}}

            def close(self):
                pass

        class LocalCluster:
            def __init__(self, *a, **k):
                pass

            def close(self):
                pass

        class as_completed:
            def __init__(self):
                self.queue: list = []

            def add(self, fut):
                self.queue.append(fut)

            def __iter__(self):
                while self.queue:
                    yield self.queue.pop(0)

        return type(sys)("distributed"), Client, LocalCluster, as_completed


def test_dask_a_run_blamed_for_another_runs_crash_is_tried_alone_and_kept(sweep_dir, monkeypatch):
    pytest.importorskip("dask")
    fake = _FakeDask(culprit="kl0.5_seed1")
    module, client, cluster, completed = fake.module()
    module.Client, module.LocalCluster, module.as_completed = client, cluster, completed
    monkeypatch.setitem(sys.modules, "distributed", module)
    sources = find_sources([sweep_dir]).sources
    outcomes = {o.source.id: o for o in stream(sources, _points, Schedule(executor="dask", jobs=2, retries=1))}
    assert len(outcomes) == len(sources)
    lost = outcomes["kl0.5_seed1"]
    assert lost.results == [] and "worker lost while reading this run (KilledWorker" in lost.errors[0].message
    local = {o.source.id: o.results for o in stream(sources, _points)}
    assert {k: o.results for k, o in outcomes.items() if k != "kl0.5_seed1"} == {k: v for k, v in local.items() if k != "kl0.5_seed1"}
    # every run blamed beside the culprit went again alone, and so did the culprit before it failed
    assert ["kl0.5_seed1"] in fake.alone and len(fake.alone) >= 2
