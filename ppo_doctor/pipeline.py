"""How runs are scheduled, for every command: in this process, in local worker processes, or on
a Dask cluster (docs/architecture.md: one module decides this, not ``ingest/``).

The unit of work is one discovered run (a :class:`~ppo_doctor.ingest.discover.RunSource`): a task
reads it and applies the command's function to each run it holds (``analyze_run`` for ``report``
and ``check``, a compact row for ``sweep``), so only that function's result travels back and a
worker holds one run at a time: its memory is bounded by the largest single run.

Executors (``Schedule.executor``):

* ``local``: one after the other in this process (the default, and what ``jobs=1`` means);
* ``processes``: ``jobs`` worker processes (:class:`concurrent.futures.ProcessPoolExecutor`); at
  most one task per worker is in flight, so results stream back as they finish and no queue of
  finished reports builds up in the workers;
* ``dask``: batches of up to :data:`DASK_BATCH_RUNS` runs, one ``Client.submit`` each, a few
  batches per worker in flight at a time, on the cluster at ``Schedule.dask`` (a scheduler
  address), or on a :class:`distributed.LocalCluster` of ``jobs`` single-threaded worker processes
  started for the call; only each run's compact result travels back, and the client's memory is
  bounded by the batches in flight.  ``dask.distributed`` is the optional ``[dask]`` extra, imported only here
  and only when asked for.

A worker that dies mid-task (killed for memory, a crash in a C extension) takes its task with it.
Here its runs are tried again, up to ``Schedule.retries`` times, each retry alone in a fresh pool so
that a second death is certainly its own; Dask retries a task whose worker died on its own
(``distributed.scheduler.allowed-failures``, set from ``retries`` on a cluster we start) and raises
``KilledWorker`` after that, then the run is tried once more with no other task in flight (Dask
blames a death on every task the worker held).  Either way the run becomes an error entry, and the other runs are kept.
"""

from __future__ import annotations

import logging
import os
import uuid
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable, Generic, Iterable, Iterator, NamedTuple, Sequence, TypeVar

from .errors import PPODoctorError
from .frame import ReadIssue
from .ingest import LoadResult, read_source, display
from .ingest.discover import RunSource, walk
from .ingest.storage import as_path, is_url, request_timeout
from .settings import Schedule
from .run import Run

T = TypeVar("T")

log = logging.getLogger(__name__)


@dataclass
class Outcome(Generic[T]):
    """What one task gave: ``fn``'s result for each run the source held, and read errors."""

    index: int  # the task's place in discovery order
    source: RunSource | None
    results: list[T]
    errors: list[ReadIssue]


class Found(NamedTuple):
    """What discovery found under the paths of one command."""

    sources: list[RunSource]  # the runs, in the order of the paths given, each sorted by id
    issues: list[ReadIssue]  # the problems met while looking
    tables: list[Path]  # the sweep tables skipped as training logs (``ppo-doctor sweep`` reads them)


def find_sources(paths: Iterable[str | Path], exclude: Sequence[str] = ()) -> Found:
    """Every run and sweep table under each path or fsspec URL, and the problems met; ``exclude``:
    the globs discovery passes over (:attr:`Config.excluded <ppo_doctor.settings.Config.excluded>`)."""
    sources: list[RunSource] = []
    issues: list[ReadIssue] = []
    tables: list[Path] = []
    path_list = list(paths)
    labels = root_labels(path_list) if len(path_list) > 1 else [None] * len(path_list)
    for path, label in zip(path_list, labels):
        p = as_path(path)
        if not p.exists() and not p.is_symlink():
            issues.append(ReadIssue(path=str(path), message="no such file or directory"))
            continue
        walked = walk(p, exclude)
        found, problems = walked.sources, walked.issues
        tables.extend(walked.tables)
        if not found and not problems:
            problems.append(
                ReadIssue(path=str(path), message="no training log found (TensorBoard, W&B, JSONL/JSON, CSV, MLflow, veRL / HF Trainer / SB3 console)")
            )
        if label is not None:
            for source in found:
                source.id = qualified_id(source, p, label)
        sources.extend(found)
        issues.extend(_displayed(problems))
    return Found(sources, issues, tables)


def root_labels(paths: list[str | Path]) -> list[str]:
    """What tells each of several inputs apart: the fewest last parts of their paths that differ
    for every input (``expA``, ``expB`` for ``expA/ expB/``; ``expA/logs``, ``expB/logs`` for
    ``expA/logs expB/logs``), the whole path where none do.  Local paths are made absolute, not
    resolved (a label is what the user sees, not where a link points), and never spelled out
    whole when a few names suffice: the ids stay free of this machine's folders."""
    spelled = [str(as_path(p)) if is_url(p) else os.path.abspath(p) for p in paths]
    split = [[part for part in s.split("/") if part] for s in spelled]
    for k in range(1, max(len(parts) for parts in split) + 1):
        labels = ["/".join(parts[-k:]) for parts in split]
        if len(set(labels)) == len(labels):
            return [display(label) for label in labels]
    return [display(s) for s in spelled]


def qualified_id(source: RunSource, root: Path, label: str) -> str:
    """A run's id within a report of several inputs: its input's label, then the run's id under it
    (a run that is the input itself is the label alone)."""
    return label if str(source.root) == str(root) else f"{label}/{source.id}"


def process_source(source: RunSource, fn: Callable[[Run], T], aliases: dict[str, str] | None) -> tuple[list[T], list[ReadIssue]]:
    """One task: read one discovered run and apply ``fn`` to each run it holds (runs in a worker)."""
    runs, errors = read_source(source, aliases)
    if not runs and not errors:
        # discovery found logs here: a run that reads as nothing must say so, never vanish
        errors = [ReadIssue(path=str(source.root), message="no run could be read from this run's files")]
    return [fn(run) for run in runs], _displayed(errors)


def stream(
    sources: list[RunSource],
    fn: Callable[[Run], T],
    schedule: Schedule = Schedule(),
    *,
    aliases: dict[str, str] | None = None,
) -> Iterator[Outcome[T]]:
    """Process every source under ``schedule``, yielding each :class:`Outcome` as it finishes.

    For ``processes`` and ``dask``, ``fn`` must be picklable (a module-level function or a
    ``partial`` of one).  A task that raises, or whose worker is lost past its retries, yields an
    Outcome with no results and one error naming the run's folder.
    """
    task = partial(process_source, fn=fn, aliases=aliases)
    if schedule.executor == "dask":
        yield from _on_dask(sources, task, schedule)
    elif schedule.executor == "processes" and len(sources) > 1 and schedule.jobs > 1:
        yield from _on_processes(sources, task, schedule)
    else:
        for i, source in enumerate(sources):
            yield _guarded(i, source, task)


def map_runs(
    paths: str | Path | Iterable[str | Path],
    fn: Callable[[Run], T],
    schedule: Schedule = Schedule(),
    *,
    aliases: dict[str, str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    exclude: Sequence[str] = (),
) -> Iterator[tuple[list[T], list[ReadIssue]]]:
    """Discover every run under ``paths``, apply ``fn`` to each under ``schedule``.

    Yields ``(results, errors)``: first the discovery problems, then one pair per discovered run in
    discovery order (results arrive as they finish and are put back in order here, so a report does
    not depend on the executor).  ``progress(done, total)`` is called as each run finishes.
    """
    path_list = [paths] if isinstance(paths, (str, Path)) else list(paths)
    with request_timeout(schedule.remote_timeout):
        sources, issues, _ = find_sources(path_list, exclude)
        yield [], issues
        pending: dict[int, Outcome[T]] = {}
        next_index = 0
        for done, outcome in enumerate(stream(sources, fn, schedule, aliases=aliases), 1):
            if progress is not None:
                progress(done, len(sources))
            pending[outcome.index] = outcome
            while next_index in pending:
                out = pending.pop(next_index)
                next_index += 1
                yield out.results, out.errors
        # every discovered run is accounted for: one whose outcome never came back (an executor
        # that lost a task without an exception) is an error, never a run silently left out
        for index in range(next_index, len(sources)):
            out = pending.pop(index) if index in pending else _failed(index, sources[index], "no result came back for this run")
            yield out.results, out.errors


def load(
    path: str | Path,
    *,
    jobs: int = 1,
    aliases: dict[str, str] | None = None,
    executor: str | None = None,
    dask: str | None = None,
    dask_timeout: float = 60.0,
) -> LoadResult:
    """Discover and read every run under ``path`` (a folder, a file or an fsspec URL), in ``jobs``
    processes or on Dask as :meth:`Schedule.choose` decides; nothing is analysed."""

    result = LoadResult()
    for runs, errors in map_runs(path, _identity, Schedule.choose(executor=executor, jobs=jobs, dask=dask, dask_timeout=dask_timeout), aliases=aliases):
        result.runs.extend(runs)
        result.errors.extend(errors)
    return result


def _identity(run: Run) -> Run:
    return run


def load_runs(path: str | Path, **kw: Any) -> list[Run]:
    """Every run under ``path`` (see :func:`load` for the errors)."""
    return load(path, **kw).runs


def _guarded(index: int, source: RunSource, task: Callable[[RunSource], tuple[list[T], list[ReadIssue]]]) -> Outcome[T]:
    """Run ``task`` here; an exception becomes the run's error instead of ending the sweep."""
    try:
        results, errors = task(source)
    except Exception as exc:  # noqa: BLE001 - one run's failure must not lose the others
        log.debug("task for %s failed", source.root, exc_info=True)
        return _failed(index, source, f"internal error ({type(exc).__name__}: {exc})")
    return Outcome(index, source, results, errors)


def _failed(index: int, source: RunSource, message: str) -> Outcome[Any]:
    return Outcome(index, source, [], [ReadIssue(path=display(source.root), message=message)])


def _on_processes(
    sources: list[RunSource], task: Callable[[RunSource], tuple[list[T], list[ReadIssue]]], schedule: Schedule
) -> Iterator[Outcome[T]]:
    """Local worker processes, one task per worker in flight; see the module docstring for retries."""
    # imported here: multiprocessing costs a one-run check 14 ms it does not use
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    workers = min(schedule.jobs, len(sources))
    todo = list(range(len(sources)))[::-1]  # a stack: pop() takes the next in discovery order
    suspects: list[int] = []  # tasks in flight when a worker died, retried alone
    deaths = [0] * len(sources)
    while todo or suspects:
        alone = bool(suspects)
        pool = ProcessPoolExecutor(max_workers=1 if alone else workers)
        in_flight: dict[Future, int] = {}
        broken = False
        try:
            while (todo or suspects or in_flight) and not broken:
                while not broken and len(in_flight) < (1 if alone else workers) and (suspects if alone else todo):
                    i = suspects.pop() if alone else todo.pop()
                    try:
                        in_flight[pool.submit(task, sources[i])] = i
                    except BrokenProcessPool:
                        (suspects if alone else todo).append(i)
                        broken = True
                if not in_flight:
                    break
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for fut in done:
                    i = in_flight.pop(fut)
                    try:
                        results, errors = fut.result()
                    except BrokenProcessPool:
                        broken = True
                        deaths[i] += 1
                        if deaths[i] > schedule.retries:
                            yield _failed(i, sources[i], f"worker process died while reading this run ({deaths[i]} tries)")
                        else:
                            suspects.append(i)
                        continue
                    except Exception as exc:  # noqa: BLE001 - an error in fn: this run's error only
                        yield _failed(i, sources[i], f"internal error ({type(exc).__name__}: {exc})")
                        continue
                    yield Outcome(i, sources[i], results, errors)
        finally:
            # tasks still in flight when the pool broke are suspects too
            for fut, i in in_flight.items():
                deaths[i] += 1
                suspects.append(i)
            pool.shutdown(wait=True, cancel_futures=True)


def dask_settings(schedule: Schedule) -> dict[str, Any]:
    """The Dask configuration a cluster started for ``schedule`` gets.

    Dask's nannies start workers with ``MALLOC_TRIM_THRESHOLD_=65536`` (distributed.yaml,
    ``nanny.pre-spawn-environ``) so that freed memory goes back to the OS at once; a run's numpy
    arrays are freed after every task, and on 200 runs that cost each worker ~600,000 page faults
    and half again the CPU (6.3-6.7 vs 3.9-4.4 s; benchmarks/RESULTS.md "Sweeps").  A worker's memory is
    bounded by its largest run anyway, so clusters started here leave glibc's default.
    """
    import dask

    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}) or {})
    environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    return {
        # KilledWorker after this many worker deaths while running the task (Dask's retry of lost work)
        "distributed.scheduler.allowed-failures": schedule.retries,
        "distributed.nanny.pre-spawn-environ": environ,
    }


# Runs per Dask task: a task costs the client and the scheduler ~1 ms of bookkeeping whatever it
# carries, and 10,000 one-run tasks in flight at once made that cost grow faster than the runs
# (4.7 s for 1,000 runs, 76 s for 10,000: benchmarks/RESULTS.md, "Dask at fleet size"); a batch
# amortises it.
DASK_BATCH_RUNS = 100
# Batches in flight per worker: enough to keep each one busy while results travel back; the
# client holds the results of at most this many batches, however many runs the sweep has.
DASK_BATCHES_PER_WORKER = 3


def process_batch(
    sources: list[tuple[int, RunSource]], task: Callable[[RunSource], tuple[list[T], list[ReadIssue]]]
) -> list[Outcome[T]]:
    """One Dask task: several runs one after the other, each guarded as in this process."""
    return [_guarded(i, source, task) for i, source in sources]


def _dask_batches(n: int, workers: int) -> list[range]:
    """Consecutive slices of the ``n`` runs: at most :data:`DASK_BATCH_RUNS` each, and small
    enough that every worker gets a few (a short sweep still spreads over the cluster)."""
    size = max(1, min(DASK_BATCH_RUNS, -(-n // (workers * DASK_BATCHES_PER_WORKER))))
    return [range(a, min(a + size, n)) for a in range(0, n, size)]


def _on_dask(
    sources: list[RunSource], task: Callable[[RunSource], tuple[list[T], list[ReadIssue]]], schedule: Schedule
) -> Iterator[Outcome[T]]:
    """Batches of runs (:func:`process_batch`) submitted a window at a time, each batch's
    outcomes taken (and released) as it completes.  A batch whose worker was lost past its
    retries is tried again one run per task, so that only the run that kills its worker fails."""
    try:
        import dask
        from distributed import Client, LocalCluster, as_completed
    except ImportError as exc:
        raise PPODoctorError("the dask executor needs dask.distributed: the [dask] extra (in a checkout of ppo-doctor: pip install -e '.[dask]')") from exc
    cluster = None
    with dask.config.set(dask_settings(schedule)):
        if schedule.dask:
            client = _connect(Client, schedule)
        else:
            cluster = LocalCluster(
                n_workers=schedule.jobs, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.WARNING
            )
            client = Client(cluster)
    try:
        _wait_for_a_worker(client, schedule)
        workers = max(1, len(client.scheduler_info().get("workers", {})) or schedule.jobs)
        todo = [[(i, sources[i]) for i in r] for r in _dask_batches(len(sources), workers)][::-1]  # a stack
        # unique keys: on a shared cluster, equal keys from two clients would be taken for one task
        tag = uuid.uuid4().hex
        count = 0
        in_flight: dict[Any, list[tuple[int, RunSource]]] = {}
        # Dask counts a worker's death against every task it was running or holding, so a run
        # that merely shared the worker of a crashing one can reach KilledWorker too: such a run
        # is tried once more with nothing else in flight, where a death is certainly its own
        alone: list[list[tuple[int, RunSource]]] = []
        tried_alone: set[int] = set()
        done = as_completed()

        def submit(batch: list[tuple[int, RunSource]]) -> None:
            nonlocal count
            fut = client.submit(process_batch, batch, task, pure=False, key=f"ppo-doctor-runs-{tag}-{count}")
            count += 1
            in_flight[fut] = batch
            done.add(fut)

        def refill() -> None:
            if alone:
                if not in_flight:
                    tried_alone.add(alone[-1][0][0])
                    submit(alone.pop())
                return
            while todo and len(in_flight) < workers * DASK_BATCHES_PER_WORKER:
                submit(todo.pop())

        refill()
        for fut in done:
            batch = in_flight.pop(fut)
            try:
                outcomes = fut.result()
            except Exception as exc:  # noqa: BLE001 - KilledWorker, or a failure outside fn
                name = type(exc).__name__
                if len(batch) > 1:
                    todo.extend([item] for item in batch[::-1])  # alone, in discovery order
                elif name == "KilledWorker" and batch[0][0] not in tried_alone:
                    alone.append(batch)
                else:
                    why = "worker lost while reading this run" if name == "KilledWorker" else "internal error"
                    yield _failed(batch[0][0], batch[0][1], f"{why} ({name}: {exc})")
            else:
                yield from outcomes
            fut.release()
            refill()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _connect(client_class: Any, schedule: Schedule) -> Any:
    """A client of the cluster at ``schedule.dask``, within ``schedule.dask_timeout`` seconds."""
    try:
        return client_class(schedule.dask, timeout=schedule.dask_timeout)
    except (OSError, TimeoutError) as exc:
        raise PPODoctorError(f"cannot reach the Dask scheduler at {schedule.dask} within {schedule.dask_timeout:g} s (dask-timeout): {exc}") from None


def _wait_for_a_worker(client: Any, schedule: Schedule) -> None:
    """Fail, instead of waiting forever, when the cluster has no worker within the timeout; say
    at once that it waits (a scheduler with no worker once kept ``sweep --dask`` silent for the
    whole timeout, issue 39)."""
    where = f"at {schedule.dask}" if schedule.dask else "started for this command"
    if not client.scheduler_info().get("workers"):
        log.warning("the Dask cluster %s has no worker yet: waiting up to %g s for one (dask-timeout)", where, schedule.dask_timeout)
    try:
        client.wait_for_workers(1, timeout=schedule.dask_timeout)
    except TimeoutError:
        raise PPODoctorError(
            f"the Dask cluster {where} has no worker after {schedule.dask_timeout:g} s (dask-timeout): start workers or raise the timeout"
        ) from None


def _displayed(errors: list[ReadIssue]) -> list[ReadIssue]:
    for e in errors:
        e.path = display(e.path)
    return errors


__all__ = ["EXECUTORS", "Found", "Outcome", "Schedule", "dask_settings", "find_sources", "map_runs", "process_batch", "process_source", "stream"]
