"""Live mode: the doctor inside a training loop (docs/live.md).

::

    monitor = ppo_doctor.Monitor(config={"rules": {...}}, hparams=my_config)
    for step in range(n):
        ...
        monitor.log(step, {"objective/kl": kl, "objective/scores": score, ...})
        if step % 10 == 0:
            for finding in monitor.check():       # new or changed since the last check
                print(finding.code, finding.start_step, finding.message)
    report = monitor.report()                     # == analyze() of the same points

``log`` takes the metrics as the framework names them (TRL, OpenRLHF, veRL, CleanRL or our
canonical names): the points are kept under their raw tags and every check canonicalises them
with :func:`ppo_doctor.canonical.metrics.build_run`, the very function the offline readers feed, so the
live verdict and the offline report of the same points are one computation.

Storage is columnar and lossless: one row per ``log`` call (a call for the step of the previous
row that logs none of its metrics joins that row, as the HF Trainer's separate train / eval
``log`` calls do), a shared int64 step and float64 wall-time column, and per tag a float64 value
column with a presence mask, each grown geometrically by 1.5x as far as its own rows (amortised
O(1) per point; memory follows the points, not names x rows), behind one lock.  A check costs
one pass over the points plus the offline rules; it never grows faster than they do.

Announcements are stable (:class:`Announcer`, shared with ``ppo-doctor watch``): a finding is
identified by its rule code and metric; :meth:`Monitor.check` returns it when that incident
first fires and again only when its severity rises, so the same trouble is not repeated on
every check while the run grows; a separate later incident (a second spike) is new.
"""

from __future__ import annotations

import logging
import math
import reprlib
import threading
import time
from dataclasses import dataclass, field
from numbers import Real
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .analyze import analyze_run
from .config import coerce
from .settings import Config
from .frame import RawRun, RawSeries, ReadIssue, TextSample
from .canonical.frameworks import is_eval_key
from .canonical.metrics import build_run
from .results import SEVERITY_RANK, SYMPTOMS, Finding, RankedCause, Report, RunReport
from .rules import registry
from .run import Run
from .standing import MAX_STEP, step_count
from .textbounds import MAX_RUN_CHARS, MAX_SAMPLE_CHARS, MAX_SAMPLES, bound_sample, chars, spread

log = logging.getLogger(__name__)

_INITIAL_ROWS = 64
_INITIAL_COLUMN = 8
# Geometric growth by 1.5x (amortised O(1) a point, as Java's ArrayList): a row of 30 metrics costs
# 30 x 9 + 16 bytes of capacity, 1.19x its 8-byte values, so the columns stay under 1.5 x 1.19 = 1.8x
# the raw float64 size right after a growth; doubling would reach 2.4x there (budget: 2x).
GROWTH_NUM, GROWTH_DEN = 3, 2
# What ``stop_on`` accepts: see :func:`matches`.
StopOn = str | Sequence[str] | None


@dataclass
class _Column:
    """One tag's values from row ``start`` on; ``present[i]`` says whether row ``start + i`` logged
    it.  A column grows on its own (geometrically, as far as its own last row): a tag logged once
    holds a few slots, not one per row of the run (per-prompt evaluation names logged once each
    would otherwise cost names x rows)."""

    start: int
    values: np.ndarray
    present: np.ndarray
    count: int = 0
    extent: int = 0  # rows covered: the last row written, + 1, - start

    def put(self, row: int, value: float) -> None:
        i = row - self.start
        if i >= len(self.values):
            self._grow(max(i + 1, len(self.values) * GROWTH_NUM // GROWTH_DEN))
        self.values[i] = value
        self.present[i] = True
        self.count += 1
        self.extent = max(self.extent, i + 1)

    def has(self, row: int) -> bool:
        i = row - self.start
        return 0 <= i < self.extent and bool(self.present[i])

    def _grow(self, size: int) -> None:
        values = np.empty(size, dtype=np.float64)
        present = np.zeros(size, dtype=bool)
        values[: len(self.values)] = self.values
        present[: len(self.present)] = self.present
        self.values, self.present = values, present


@dataclass
class _Announced:
    """What has been said about one (code, metric): the step spans of the incidents announced
    (grown as they extend) and the highest severity said."""

    spans: list[list[float]] = field(default_factory=list)
    rank: int = -1
    last: Finding | None = None  # the latest announced version


class Announcer:
    """Decides which findings of a run's successive reports are worth saying.

    A finding is identified by its rule code and metric.  :meth:`update` returns it when no
    announced incident of that (code, metric) overlaps its steps (a new incident, e.g. a second
    reward spike), or when its severity rises above what was said (``changed``, e.g. a KL
    drift that became an error).  An onset that moves while the incident goes on (a change
    point re-estimated on more data, a text rule's "late samples" window sliding with the run)
    is the same trouble and is not said again.

    A warning is said once two successive reports hold it (the same code and metric, steps
    overlapping): on a growing log a warning seen by one check and gone at the next was the edge
    of the data speaking (a sparse GRPO reward's first successes read as spikes on 20 points,
    benchmarks/live_replay.py), and a warning is a claim about the run.  Errors (a NaN, a KL far
    past its band) and notes are said at once; ``final=True`` (the run ended: nothing more can
    confirm) says every pending warning.
    """

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], _Announced] = {}
        self._previous: dict[int, Finding | None] = {}
        self._pending: dict[tuple[str, str], list[tuple[float, float]]] = {}

    def update(self, findings: Iterable[Finding], *, final: bool = False) -> list[Finding]:
        """The findings of a new report that are new or changed (see the class docstring)."""
        out: list[Finding] = []
        self._previous = {}
        pending: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for f in findings:
            key = (f.code, f.metric)
            seen = self._seen.setdefault(key, _Announced())
            lo = -math.inf if f.start_step is None else float(f.start_step)
            hi = math.inf if f.end_step is None else float(f.end_step)
            hit = next((sp for sp in seen.spans if sp[0] <= hi and lo <= sp[1]), None)
            rank = SEVERITY_RANK[f.severity]
            if not (hit is None or rank > seen.rank):
                if hit is not None:
                    hit[0], hit[1] = min(hit[0], lo), max(hit[1], hi)
                continue
            if f.severity == "warning" and not final:
                confirmed = any(a <= hi and lo <= b for a, b in self._pending.get(key, ()))
                if not confirmed:
                    pending.setdefault(key, []).append((lo, hi))
                    continue
            if hit is None:
                seen.spans.append([lo, hi])
            else:
                hit[0], hit[1] = min(hit[0], lo), max(hit[1], hi)
            self._previous[id(f)] = None if hit is None else seen.last
            seen.rank = max(seen.rank, rank)
            seen.last = f
            out.append(f)
        self._pending = pending
        return out

    def previous(self, finding: Finding) -> Finding | None:
        """For a finding the last :meth:`update` returned: the announced version of the same
        incident whose severity it raised, or None when it is a new incident."""
        return self._previous.get(id(finding))


def as_number(value: Any) -> float | None:
    """``value`` as a float, or None when it is not a scalar number (strings, bools, lists ...).

    Accepts Python and numpy numbers and 0-d / one-element arrays or tensors (``.item()``), so a
    loop can log ``loss`` without converting it first.
    """
    if isinstance(value, bool) or isinstance(value, str):
        return None
    if isinstance(value, Real):
        return _float(value)
    item = getattr(value, "item", None)
    if not callable(item):
        return None
    try:
        out = item()  # numpy / torch: raises unless the array holds exactly one element
    except (TypeError, ValueError, RuntimeError):
        return None
    return None if isinstance(out, bool) or not isinstance(out, Real) else _float(out)


def _float(value: Real) -> float | None:
    """A real number as a float: one past a float's range (``10**400``, ``Fraction(10**400, 3)``)
    is the infinity of its sign, as numpy casts it, so PD601 reports it as a non-finite value;
    None for a number that cannot be converted at all (a ``Real`` whose ``__float__`` raises)."""
    try:
        return float(value)
    except OverflowError:
        try:
            return math.inf if value > 0 else -math.inf  # type: ignore[operator]  # every Real orders against 0
        except Exception:  # noqa: BLE001 - a user's number type: the value is dropped, never the step
            return None
    except Exception:  # noqa: BLE001 - idem
        return None


def matches(finding: Finding, stop_on: StopOn) -> bool:
    """Whether ``finding`` is one that ``stop_on`` names.

    ``stop_on`` is a severity (``"error"``: error-level findings; ``"warning"``: warning or
    error), a symptom (``"kl_blowup"``), a rule code or code prefix (``"PD101"``, ``"PD1"``), a
    rule name, or a list of any of these.  ``None`` matches nothing.
    """
    if stop_on is None:
        return False
    for item in [stop_on] if isinstance(stop_on, str) else list(stop_on):
        want = str(item).strip()
        if want in SEVERITY_RANK:
            if SEVERITY_RANK[finding.severity] >= SEVERITY_RANK[want]:
                return True
        elif want in (finding.symptom, finding.name) or (want.upper().startswith("PD") and finding.code.startswith(want.upper())):
            return True
    return False


def check_stop_on(stop_on: StopOn) -> None:
    """Raise ``ValueError`` for a ``stop_on`` entry that :func:`matches` could never match (a
    misspelt symptom, ``"Error"`` for ``"error"``, a code no rule has): a stop condition that
    cannot fire would let a broken run train to the end without a word.  Accepted: a severity, a
    symptom, a rule code or code prefix (``PD1``), a rule name, or a list of these."""
    if stop_on is None:
        return
    items = [stop_on] if isinstance(stop_on, str) else list(stop_on)
    rules = registry.all_rules()
    for item in items:
        want = str(item).strip()
        if want in SEVERITY_RANK or want in SYMPTOMS or any(want == r.name for r in rules):
            continue
        if want.upper().startswith("PD") and any(r.code.startswith(want.upper()) for r in rules):
            continue
        hint = next((c for c in (*SEVERITY_RANK, *SYMPTOMS, *(r.name for r in rules)) if c.lower() == want.lower()), None)
        raise ValueError(
            f"stop_on: {item!r} matches no finding (a severity: {', '.join(SEVERITY_RANK)}; a symptom; a rule code or "
            "prefix such as 'PD1'; a rule name)" + (f"; did you mean {hint!r}?" if hint else "")
        )


def describe(finding: Finding, causes: Sequence[RankedCause] = ()) -> str:
    """One line for a live alert: severity, code, symptom, metric, onset, message and the top fix."""
    onset = f" from step {finding.start_step}" if finding.start_step is not None else ""
    where = f" on {finding.metric}" if finding.metric else ""
    text = f"{finding.severity.upper()} {finding.code} {finding.name} [{finding.symptom}]{where}{onset}: {finding.message}"
    fix = top_fix(finding, causes)
    return text + (f" Fix to try first: {fix}" if fix else "")


def top_fix(finding: Finding, causes: Sequence[RankedCause]) -> str | None:
    """The first fix of the best-ranked of ``causes`` (a report's ranking) this finding supports
    in the run's domain (``RankedCause.supported_by``: a classic-RL run's findings support the
    classic causes the ranking put in place of the LLM ones)."""
    for cause in causes:
        if finding.code in cause.supported_by and cause.fixes:
            return cause.fixes[0]
    return None


class Monitor:
    """Collects a run's points as it trains and checks them with the offline rules.

    Args:
        config: the analysis settings ``analyze`` takes (``select``, ``ignore``, ``rules``,
            ``aliases``), e.g. :func:`ppo_doctor.config.resolve`'s result.
        hparams: the run's hyper-parameters as the framework names them (a TRL ``GRPOConfig``
            as a dict, a veRL config ...); they feed the cause ranking as offline.
        run_id: the run's name in reports.
        path: where the run writes (shown in reports; nothing is read from it).
        source: the ``source`` column of the points.
        planned_steps: the step the run is planned to end at (the Trainer's ``max_steps``);
            it tells :meth:`check` how far the run stands, so that a rule judging an absence of
            progress waits for its fair share of the plan (:mod:`ppo_doctor.standing`).  None:
            read from ``hparams`` (``max_steps``, ``total_timesteps`` ...) when they give it;
            with no plan at all, such rules stay info notes until :meth:`report`.
        warmup_steps: learning-rate warm-up steps (None: read from ``hparams``).
    """

    def __init__(
        self,
        config: Config | Mapping[str, Any] | None = None,
        *,
        hparams: Mapping[str, Any] | None = None,
        run_id: str = "live",
        path: str = "",
        source: str = "monitor",
        planned_steps: int | None = None,
        warmup_steps: int | None = None,
    ) -> None:
        # checked where they are received (issue 39): a NaN, infinite or boolean plan made every
        # trend rule fail on every check and drop out of the verdict unseen
        if planned_steps is not None and step_count(planned_steps) is None:
            raise ValueError(f"planned_steps must be a whole number of steps from 1 to {MAX_STEP}, got {reprlib.repr(planned_steps)}")
        if warmup_steps is not None and step_count(warmup_steps, minimum=0) is None:
            raise ValueError(f"warmup_steps must be a whole number of steps from 0 to {MAX_STEP}, got {reprlib.repr(warmup_steps)}")
        self.planned_steps = None if planned_steps is None else step_count(planned_steps)
        self.warmup_steps = None if warmup_steps is None else step_count(warmup_steps, minimum=0)
        self.config = coerce(config)
        self.hparams: dict[str, Any] = dict(hparams or {})
        self.run_id = run_id
        self.path = path
        self.source = source
        self._rows = 0
        self._steps = np.empty(_INITIAL_ROWS, dtype=np.int64)
        self._wall = np.empty(_INITIAL_ROWS, dtype=np.float64)
        self._cols: dict[str, _Column] = {}
        self._texts: list[TextSample] = []
        # what the text bounds (ppo_doctor.textbounds) cut while the run was logged, for its notes
        self._texts_cut = 0
        self._texts_seen = 0  # samples dropped by halving, beyond those held
        self._text_chars = 0
        # one writer at a time: a trainer's logging thread and the main loop may both call log(),
        # and a check reads the columns while they grow (never a lost point or a torn row)
        self._lock = threading.Lock()
        self._announcer = Announcer()
        self.last_findings: list[Finding] = []
        self.last_causes: list[RankedCause] = []
        self.last_verdict: str | None = None

    # -- feeding --------------------------------------------------------------------------
    def log(
        self,
        step: int,
        metrics: Mapping[str, Any],
        texts: Iterable[Any] | None = None,
        *,
        wall_time: float | None = None,
    ) -> None:
        """Record the metrics one step logged (non-numeric values are ignored).

        ``texts``: generated samples of this step, each a string, a ``(prompt, completion)``
        pair or a dict with ``completion``/``text``/``response`` and optional ``prompt`` and
        ``reward``.
        """
        step = _step_of(step)
        numbers = {_text(k, "metric"): v for k, v in ((k, as_number(v)) for k, v in metrics.items()) if v is not None}
        samples = [s for s in (_text_sample(step, t, self.source) for t in texts or ()) if s is not None]
        with self._lock:
            self._log(step, numbers, samples, _wall(wall_time))

    def _log(self, step: int, numbers: Mapping[str, float], samples: list[TextSample], wall_time: float | None) -> None:
        if numbers:
            row = self._row_for(step, numbers, time.time() if wall_time is None else wall_time)
            for tag, value in numbers.items():
                col = self._cols.get(tag)
                if col is None:
                    col = self._cols[tag] = _Column(row, np.empty(_INITIAL_COLUMN, dtype=np.float64), np.zeros(_INITIAL_COLUMN, dtype=bool))
                col.put(row, value)
        for sample in samples:
            sample, cut = bound_sample(sample)
            self._texts_cut += cut
            self._texts.append(sample)
            self._text_chars += chars(sample)
        if len(self._texts) > 2 * MAX_SAMPLES or self._text_chars > 2 * MAX_RUN_CHARS:
            # the samples held stay within twice the run's bounds: halved, evenly, as they grow
            self._texts_seen += len(self._texts) - len(self._texts) // 2
            self._texts = spread(self._texts, len(self._texts) // 2)
            self._text_chars = sum(chars(t) for t in self._texts)

    def _row_for(self, step: int, numbers: Mapping[str, float], wall: float) -> int:
        last = self._rows - 1
        if last >= 0 and self._steps[last] == step and not any(self._has(tag, last) for tag in numbers):
            return last
        if self._rows == len(self._steps):
            self._grow()
        row = self._rows
        self._steps[row] = step
        self._wall[row] = wall
        self._rows += 1
        return row

    def _has(self, tag: str, row: int) -> bool:
        col = self._cols.get(tag)
        return col is not None and col.has(row)

    def _grow(self) -> None:
        cap = len(self._steps) * GROWTH_NUM // GROWTH_DEN
        steps = np.empty(cap, dtype=np.int64)
        wall = np.empty(cap, dtype=np.float64)
        steps[: self._rows] = self._steps[: self._rows]
        wall[: self._rows] = self._wall[: self._rows]
        self._steps, self._wall = steps, wall

    # -- sizes ----------------------------------------------------------------------------
    @property
    def points(self) -> int:
        """How many scalar points have been logged."""
        return sum(c.count for c in self._cols.values())

    @property
    def nbytes(self) -> int:
        """Bytes held by the point storage (capacity included)."""
        return self._steps.nbytes + self._wall.nbytes + sum(c.values.nbytes + c.present.nbytes for c in self._cols.values())

    @property
    def last_step(self) -> int | None:
        return int(self._steps[self._rows - 1]) if self._rows else None

    # -- analysis -------------------------------------------------------------------------
    def raw_run(self) -> RawRun:
        """The points as the readers would return them: one RawSeries per tag, in log order
        (taken under the lock, so a check never sees a row half written; its views cover rows
        already written, which later calls never change)."""
        with self._lock:
            return self._raw_run()

    def _raw_run(self) -> RawRun:
        raw = RawRun(config=dict(self.hparams), texts=list(self._texts))
        if self._texts_cut or self._texts_seen:
            kept = len(self._texts)
            why = [f"{self._texts_cut:,} text sample(s) cut to their first {MAX_SAMPLE_CHARS:,} characters"] if self._texts_cut else []
            if self._texts_seen:
                why.append(f"{kept:,} of {kept + self._texts_seen:,} text samples kept, evenly spread as they were logged")
            raw.issues.append(ReadIssue(path=self.path or self.run_id, message="; ".join(why), level="warning"))
        for tag, col in self._cols.items():
            n = col.extent
            present = col.present[:n]
            if col.count == n:  # logged on every row it covers: views, no copy
                rows = slice(col.start, col.start + n)
                values = col.values[:n]
            else:
                idx = np.flatnonzero(present)
                rows = col.start + idx  # type: ignore[assignment]
                values = col.values[idx]
            series = RawSeries(tag=tag, steps=self._steps[rows], values=values, wall_time=self._wall[rows], source=self.source)
            (raw.eval_series if is_eval_key(tag) else raw.series).append(series)
        return raw

    def run(self, *, live: bool = False) -> Run:
        """The run as a :class:`~ppo_doctor.run.Run` (canonicalised exactly as offline), with the
        plan given to the Monitor; ``live``: the run is still training (:meth:`check`'s view)."""
        run = build_run(self.run_id, self.path, "live", [], self.raw_run(), self.config.aliases)
        if self.planned_steps is not None:
            run.planned_steps, run.planned_from = self.planned_steps, "Monitor(planned_steps)"
        if self.warmup_steps is not None:
            run.warmup_steps = self.warmup_steps
        run.live = live
        return run

    def run_report(self, *, live: bool = False) -> RunReport:
        """The :class:`RunReport` of everything logged so far (computed afresh); ``live`` judges
        it as a run still training, else as a run that ended where its log ends."""
        return analyze_run(self.run(live=live), self.config)

    def report(self) -> Report:
        """The full Report of everything logged so far, as of a run that ended here: ``analyze``
        of the same points (with the plan given to the Monitor)."""
        return Report(runs=[self.run_report()], rules=registry.metadata(self.config.select, self.config.ignore))

    def check(self, *, final: bool = False) -> list[Finding]:
        """Findings that are new incidents, or whose severity rose, since the last check
        (:class:`Announcer`: a warning once two checks hold it; ``final``: the run ended, say
        every pending warning).

        Only the findings, causes and verdict of the check are kept (:attr:`last_findings`,
        :attr:`last_causes`, :attr:`last_verdict`): the run frame the rules read is a copy of
        the points and is freed, so a check leaves no more memory behind than the columns.
        """
        rr = self.run_report(live=True)
        self.last_findings, self.last_causes, self.last_verdict = rr.findings, rr.causes, rr.verdict
        return self._announcer.update(rr.findings, final=final)

    def previous(self, finding: Finding) -> Finding | None:
        """For a finding the last :meth:`check` returned: the version of the same code and
        metric announced before it, or None when it is new."""
        return self._announcer.previous(finding)


def replay(
    run: Run,
    *,
    check_every: int = 10,
    config: Config | Mapping[str, Any] | None = None,
    planned_steps: int | None = None,
) -> tuple[Monitor, list[tuple[int, Finding]]]:
    """Feed a finished run to a new Monitor step by step as its loop would have, checking every
    ``check_every`` logged steps (0: never); returns the Monitor and each ``(step, finding)``
    alert.  Shows how early the live checks would have spoken (docs/live.md).

    The Monitor is told the run's plan as its trainer would have been: ``planned_steps``, else
    the plan its log gives (``max_steps`` ...), else its last logged step (a finished log is as
    long as it was planned to be, which is what the Trainer's ``max_steps`` tells a callback).

    The points go in per step in step order with their raw tags (a tag logged twice at one step
    goes into a second call, so nothing is merged away), each text sample with its step; the
    Monitor's report then equals the offline report of the run (tests/test_monitor.py).
    """
    if planned_steps is None:
        rng = run.frame.step_range()
        planned_steps = run.planned_steps or (max(1, rng[1]) if rng else None)
    mon = Monitor(config, hparams=run.raw_config, run_id=run.id, path=run.path, planned_steps=planned_steps, warmup_steps=run.warmup_steps)
    texts: dict[int, list[dict[str, Any]]] = {}
    for t in run.texts:
        texts.setdefault(t.step, []).append({"tag": t.tag, "completion": t.text, "prompt": t.prompt, "reward": t.reward})
    alerts: list[tuple[int, Finding]] = []
    for k, (step, metrics, wall) in enumerate(_calls(run)):
        mon.log(step, metrics, texts.pop(step, None), wall_time=wall)
        if check_every and (k + 1) % check_every == 0:
            alerts.extend((step, f) for f in mon.check())
    for step, samples in texts.items():  # samples at steps without metrics
        mon.log(step, {}, samples)
    if check_every:
        alerts.extend((mon.last_step or 0, f) for f in mon.check(final=True))
    return mon, alerts


def _calls(run: Run) -> Iterable[tuple[int, dict[str, float], float]]:
    frame = run.frame
    order = np.argsort(frame.column("step"), kind="stable")  # keeps each tag's file order
    steps, tags, values, wall = (frame.column(name)[order].tolist() for name in ("step", "raw_tag", "value", "wall_time"))
    call: dict[str, float] = {}
    step, t0 = 0, float("nan")
    for s, tag, v, w in zip(steps, tags, values, wall):
        if call and (s != step or tag in call):
            yield step, call, t0
            call = {}
        if not call:
            step, t0 = s, w
        call[tag] = v
    if call:
        yield step, call, t0


_INT64 = np.iinfo(np.int64)


def _step_of(step: Any) -> int:
    """``step`` as an int64 step, or ``ValueError`` naming it (the readers skip such a line with
    a note; a caller of the API gets told at once, never a silently wrapped or cast step)."""
    try:
        value = int(step)
        exact = value == step
    except (TypeError, ValueError, OverflowError):
        value, exact = 0, False
    if isinstance(step, bool) or not exact or not _INT64.min <= value <= _INT64.max:
        raise ValueError(f"step {step!r} is not an integer within int64")
    return value


def _text_sample(step: int, item: Any, source: str) -> TextSample | None:
    """One logged text item as a sample, or None when it is none of the shapes :meth:`Monitor.log`
    takes or cannot be read (a ``str()`` that raises, a mapping whose lookups raise): a text item
    must never raise into the training loop, where it would switch the doctor off (issue 39)."""
    try:
        return _sample_of(step, item, source)
    except Exception:  # noqa: BLE001 - see the docstring
        log.warning("a text sample of step %d could not be read and was left out", step, exc_info=log.isEnabledFor(logging.DEBUG))
        return None


def _sample_of(step: int, item: Any, source: str) -> TextSample | None:
    if isinstance(item, str):
        return TextSample(step=step, tag="text", text=str.__str__(item), source=source)
    if isinstance(item, (tuple, list)) and len(item) == 2 and all(isinstance(x, str) for x in item):
        return TextSample(step=step, tag="text", text=str.__str__(item[1]), prompt=str.__str__(item[0]), source=source)
    if isinstance(item, Mapping):
        text = next((item[k] for k in ("completion", "text", "response") if isinstance(item.get(k), str)), None)
        if text is None:
            return None
        prompt = item.get("prompt")
        reward = as_number(item.get("reward"))
        return TextSample(
            step=step,
            tag=_text(item.get("tag", "text"), "text"),
            text=str.__str__(text),
            prompt=str.__str__(prompt) if isinstance(prompt, str) else None,
            reward=reward,
            source=source,
        )
    return None


def _text(value: Any, fallback: str) -> str:
    """``value`` as plain text (a ``str`` subclass as its characters), ``fallback`` when its
    ``str()`` raises."""
    if isinstance(value, str):
        return str.__str__(value)
    try:
        return str(value)
    except Exception:  # noqa: BLE001 - a user's object: its name is not worth a lost step
        return fallback


def _wall(wall_time: Any) -> float | None:
    """A logged wall-clock time as finite seconds; None (the time of the call) for anything else."""
    if wall_time is None:
        return None
    t = as_number(wall_time)
    return t if t is not None and math.isfinite(t) else None


__all__ = ["Announcer", "Monitor", "replay", "StopOn", "as_number", "check_stop_on", "describe", "matches", "top_fix"]
