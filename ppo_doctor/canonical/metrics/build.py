"""Building a :class:`~ppo_doctor.run.Run` from a reader's :class:`~ppo_doctor.frame.RawRun`
(:func:`build_run`, called by the ingest orchestrator): framework, tag mapping, meanings,
normalised hyper-parameters (:mod:`ppo_doctor.canonical.hparams`), the training and eval frames, and
what the run lacks by design (:mod:`ppo_doctor.canonical.design`)."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from ..design import by_design
from ...frame import RawRun, RawSeries, ReadIssue, RunFrame
from ..frameworks import candidate_keys, framework_proof, guess_framework, is_doctor_tag, is_settings_text, strip_eval_prefix
from ..hparams import flatten_config, normalize_config
from ..name_tokens import entropy_sign
from ...run import MetricInfo, Run
from .mapping import map_tags
from .plan import planned_from_lr, planned_length, warmup_length
from ...textbounds import bound_texts
from .vocabulary import FINAL_TOTALS

log = logging.getLogger(__name__)


def _plain(v: Any, nested: bool = False) -> Any:
    """A JSON-friendly copy of a config value (one list level kept, anything deeper as text)."""
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (list, tuple)) and not nested:
        return [_plain(x, nested=True) for x in v]
    return str(v)


def _min_value(series: list[RawSeries], tag: str) -> float | None:
    vals = [s.values for s in series if s.tag == tag and len(s)]
    if not vals:
        return None
    arr = np.concatenate(vals)
    finite = arr[np.isfinite(arr)]
    return float(finite.min()) if len(finite) else None


def _constant_tags(series: list[RawSeries]) -> frozenset[str]:
    """Tags whose finite values (at least 2) are one exact value: a column written but not
    measured, which a synonym that moves replaces (``map_tags``)."""
    lo: dict[str, float] = {}
    hi: dict[str, float] = {}
    n: dict[str, int] = {}
    for s in series:
        finite = s.values[np.isfinite(s.values)]
        if not len(finite):
            continue
        lo[s.tag] = min(lo.get(s.tag, np.inf), float(finite.min()))
        hi[s.tag] = max(hi.get(s.tag, -np.inf), float(finite.max()))
        n[s.tag] = n.get(s.tag, 0) + len(finite)
    return frozenset(tag for tag in lo if n[tag] >= 2 and lo[tag] == hi[tag])


def build_run(
    run_id: str,
    path: str,
    fmt: str,
    files: list[str],
    raw: RawRun,
    aliases: dict[str, str] | None = None,
) -> Run:
    """Canonicalise one run: framework, tag mapping, meanings, normalised config, frames."""
    issues = list(raw.issues)
    cfg_notes: list[str] = []
    series, totals = _split_totals(raw.series)
    series = _drop_time_axis_copies(series, cfg_notes)
    flat = flatten_config({**totals, **raw.config}, cfg_notes)
    all_tags = list(dict.fromkeys(s.tag for s in series))
    # the doctor's own counts stay in the frame under their names, but never name a framework
    # or a canonical metric (docs/live.md, "Where the alerts go")
    tags = [t for t in all_tags if not is_doctor_tag(t)]
    framework = guess_framework(tags, flat, fmt)

    if framework == "trl_grpo":
        # GRPO logs k3 (>= 0, docs/sources.md#kl-estimators); a clearly negative ``kl`` can only be RLOO >= 0.22's k1.
        kl_tag = next((t for t in tags if "kl" in candidate_keys(t)), None)
        low = _min_value(series, kl_tag) if kl_tag else None
        if low is not None and low < -1e-4:
            framework = "trl_rloo"
            cfg_notes.append(f"{kl_tag} goes below 0 ({low:.3g}), impossible for GRPO's k3 estimator: read as RLOO (k1)")

    config = normalize_config(flat, framework)
    proof = framework_proof(framework, flat, fmt)
    counts: dict[str, int] = {}
    for s in series:
        counts[s.tag] = counts.get(s.tag, 0) + len(s)
    result = map_tags(tags, framework, config, aliases, counts, _constant_tags(series))
    _sign_inferred_entropy(result.info, series)
    log.debug("run %s: framework %s, %d of %d tags mapped", run_id, framework, len(result.mapping), len(tags))
    mapping = result.mapping
    claimed = set(mapping.values())

    def metric_of(tag: str) -> str:
        m = mapping.get(tag)
        if m is not None:
            return m
        # an unmapped tag spelled like a claimed canonical name must not merge into it
        return f"raw:{tag}" if tag in claimed else tag

    eval_series, eval_names = list(raw.eval_series), _eval_names(raw.eval_series, framework, config, aliases)
    stand_in = _eval_reward_stand_in(eval_series, eval_names, result.info)
    if stand_in is not None:
        mapping[stand_in.tag] = "reward/score"
        result.info["reward/score"] = MetricInfo(
            canonical="reward/score", raw_tag=stand_in.tag, framework=framework, note=EVAL_STANDS_IN, inferred=True
        )
        series = [*series, stand_in]
        eval_series = [s for s in eval_series if s is not stand_in]
    frame = RunFrame.from_series((metric_of(s.tag), s) for s in series)
    eval_frame = RunFrame.from_series((eval_names.get(s.tag, s.tag), s) for s in eval_series) if eval_series else None
    restarts = sorted(set(int(r) for r in raw.restarts))
    if framework == "sb2" and restarts:
        issues, restarts = _sb2_steps(issues, restarts, str(path))

    texts, cut = bound_texts(raw.texts)
    if cut:
        cfg_notes.append(cut)
    planned, planned_from = planned_length(flat, cfg_notes)
    warmup = warmup_length(flat, planned, cfg_notes)
    for note in cfg_notes + result.notes:
        issues.append(ReadIssue(path=str(path), message=note, level="warning"))
    if planned is None and frame.has("opt/lr"):
        planned = planned_from_lr(*frame.arrays("opt/lr"))
        planned_from = "the learning-rate schedule (a linear decay to 0)" if planned else ""
    return Run(
        id=run_id,
        path=str(path),
        format=fmt,
        frame=frame,
        files=list(files),
        framework=framework,
        config=config,
        raw_config={k: _plain(v) for k, v in flat.items()},
        mapping=mapping,
        unmapped=sorted(t for t in all_tags if t not in mapping),
        metric_info=result.info,
        # the doctor's alerts and a trainer's settings dump are not samples
        texts=[t for t in texts if not (is_doctor_tag(t.tag) or is_settings_text(t.tag))],
        issues=issues,
        restarts=restarts,
        eval_frame=eval_frame,
        framework_proof=proof,
        by_design=by_design(framework, config, frame.has, proven=bool(proof)),
        planned_steps=planned,
        planned_from=planned_from,
        warmup_steps=warmup,
    )


def _drop_time_axis_copies(series: list[RawSeries], notes: list[str]) -> list[RawSeries]:
    """The series without copies of a statistic written against another axis than the step:
    rsl_rl writes its episode statistics against the iteration and again against the seconds
    trained (``on_policy_runner.py``: ``add_scalar("Train/mean_reward/time", ..., self.tot_time)``);
    rl_games writes each of ``rewards/step`` and ``episode_lengths/step`` against the frames played,
    then as ``/iter`` against the epoch and ``/time`` against the seconds (``a2c_common.py``).
    Seconds or epochs on the step axis would stretch or squeeze the run."""
    tags = {s.tag for s in series}

    def is_copy(tag: str) -> bool:
        stem, _, axis = tag.rpartition("/")
        if axis == "time" and stem in tags:
            return True
        return axis in ("time", "iter") and bool(stem) and any(f"{stem}/{main}" in tags for main in ("step", "frame"))

    copies = sorted({s.tag for s in series if is_copy(s.tag)})
    if not copies:
        return series
    notes.append(f"left out of the step axis (the same statistic written against seconds trained or epochs): {', '.join(copies)}")
    return [s for s in series if s.tag not in copies]


def _split_totals(series: list[RawSeries]) -> tuple[list[RawSeries], dict[str, float]]:
    """The series without the final-row totals (:data:`FINAL_TOTALS`, at most one point each),
    and those totals by name: HF's TensorBoard/W&B callbacks log ``train/train_runtime`` ... once."""
    keep: list[RawSeries] = []
    totals: dict[str, float] = {}
    for s in series:
        key = next((k for k in candidate_keys(s.tag) if k in FINAL_TOTALS), None)
        # return_counts: the plain np.unique imports numpy.ma (benchmarks/RESULTS.md "One small check")
        if key is not None and len(np.unique(s.steps, return_counts=True)[0]) <= 1:
            if len(s):
                totals[key] = float(s.values[-1])
            continue
        keep.append(s)
    return keep, totals


def _sign_inferred_entropy(info: dict[str, MetricInfo], series: list[RawSeries]) -> None:
    """An inferred entropy *loss* takes the sign its values show (:func:`name_tokens.entropy_sign`)."""
    meta = info.get("loss/entropy")
    if meta is None or not meta.inferred:
        return
    vals = [s.values for s in series if s.tag == meta.raw_tag]
    sign, why = entropy_sign(np.concatenate(vals) if vals else np.empty(0))
    meta.sign, meta.note = sign, f"{meta.note}; {why}"


def _sb2_steps(issues: list[ReadIssue], restarts: list[int], path: str) -> tuple[list[ReadIssue], list[int]]:
    """Stable-Baselines 2 steps go back by design, not because the run restarted.

    ppo2.py writes each minibatch's summary at ``(num_timesteps // update_fac + minibatch) *
    update_fac`` and ``total_episode_reward_logger`` writes each environment's episodes at
    ``num_timesteps + done index``: every rollout starts the environments' and the minibatches'
    counters again.  The readers' "steps go back" notes are replaced by this one.
    """
    kept = [i for i in issues if not (i.level == "info" and "steps go back" in i.message) and "more restart(s) not listed" not in i.message]
    kept.append(
        ReadIssue(
            path=path,
            message=f"steps go back {len(restarts)} time(s): Stable-Baselines 2 counts steps per minibatch and per environment within each rollout (not a restarted log)",
            level="info",
        )
    )
    return kept, []


def _eval_names(series: list[RawSeries], framework: str, config: dict[str, Any], aliases: dict[str, str] | None) -> dict[str, str]:
    """The canonical name of each eval tag whose stripped name maps (``eval_reward`` -> reward/score)."""
    if not series:
        return {}
    stripped = {s.tag: strip_eval_prefix(s.tag) for s in series}
    result = map_tags(list(dict.fromkeys(stripped.values())), framework, config, aliases)
    return {tag: result.mapping[name] for tag, name in stripped.items() if name in result.mapping}


# Why an evaluation reward is read as the run's reward (the MetricInfo note, shown by ``-v``).
EVAL_STANDS_IN = "no training reward is logged: the evaluation reward stands for it"


def _eval_reward_stand_in(series: list[RawSeries], names: dict[str, str], info: dict[str, MetricInfo]) -> RawSeries | None:
    """The evaluation reward of a log that logs no training reward (a loop that writes only
    ``eval_reward`` every N steps): what its author measures, so the reward rules judge it,
    as a success rate stands for a missing reward (``mapping._success_as_reward``).  None when
    a training reward is logged or no evaluation reward is."""
    if "reward/score" in info or "reward/total" in info:
        return None
    return next((s for s in series if names.get(s.tag) == "reward/score"), None) or next(
        (s for s in series if names.get(s.tag) == "reward/total"), None
    )

