"""``ppo-doctor metrics``: what was read from a path, run by run, before any judgement.

Per run: id, path, format(s), framework guess, step range, points per metric, the raw tag ->
canonical mapping, unmapped tags, the config found, the standard task it trains on (with its solved
level), and the warnings met while reading; then the
errors (files or parts of files that could not be read).  ``text`` is for people, ``json`` is a
stable document (``schema_version`` 1) for scripts.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..canonical.tasks import solved_level
from ..ingest import LoadResult, display
from ..run import Run
from .escape import plain

SCHEMA_VERSION = 1
# Config keys shown in the text output (all of them are in the JSON output).
_TEXT_CONFIG_KEYS = 12


def render_metrics(result: LoadResult, fmt: str = "text") -> str:
    """The ``metrics`` command's output for a load result, as ``text`` or ``json``."""
    if fmt == "json":
        return json.dumps(metrics_document(result), indent=2, sort_keys=False, default=str)
    return _text(result)


def summary_line(run: Run) -> str:
    """``run <id>: <format>, <framework>, steps <a>..<b>, <n> metrics (<m> mapped), <p> points, <w> warnings``."""
    rng = run.frame.step_range()
    steps = f"steps {rng[0]}..{rng[1]}" if rng else "no train steps"
    metrics = run.frame.metrics
    canonical = set(run.mapping.values())
    mapped = sum(1 for m in metrics if m in canonical)
    return (
        f"run {_shown(run.id)}: {run.format}, {run.framework}, {steps}, {len(metrics)} metrics ({mapped} mapped), "
        f"{len(run.frame)} points, {len(run.issues)} warning{'s' if len(run.issues) != 1 else ''}"
    )


def metrics_document(result: LoadResult) -> dict[str, Any]:
    """The JSON document: one entry per run, then the errors."""
    return {
        "schema_version": SCHEMA_VERSION,
        "runs": [_run_dict(r) for r in result.runs],
        "errors": [{"path": _clean(e.path), "offset": e.offset, "message": _clean(e.message)} for e in result.errors],
    }


def _run_dict(run: Run) -> dict[str, Any]:
    rng = run.frame.step_range()
    canonical = set(run.mapping.values())
    metrics = {
        m: {"points": run.frame.count(m), "raw_tags": [_clean(t) for t in run.frame.raw_tags(m)], "canonical": m in canonical}
        for m in run.frame.metrics
    }
    ev = run.eval_frame
    return {
        "run": _clean(run.id),
        "path": _clean(run.path),
        "format": run.format,
        "framework": run.framework,
        "files": [_clean(f) for f in run.files],
        "steps": {"first": rng[0], "last": rng[1]} if rng else None,
        "points": len(run.frame),
        "metrics": metrics,
        "mapping": {_clean(k): v for k, v in sorted(run.mapping.items())},
        "unmapped": [_clean(t) for t in run.unmapped],
        "inferred": sorted(k for k, v in run.metric_info.items() if v.inferred),
        "by_design": dict(run.by_design),
        "meanings": {k: v.to_dict() for k, v in sorted(run.metric_info.items())},
        "eval": {m: ev.count(m) for m in ev.metrics} if ev is not None else {},
        "config": _plain(run.config),
        "raw_config_keys": len(run.raw_config),
        "texts": len(run.texts),
        "restarts": list(run.restarts),
        "warnings": [{"path": _clean(i.path), "offset": i.offset, "level": i.level, "message": _clean(i.message)} for i in run.issues],
    }


def _text(result: LoadResult) -> str:
    out: list[str] = []
    for run in result.runs:
        out.append(summary_line(run))
        out.append(f"  path: {_shown(run.path)}")
        if len(run.files) > 1 or (run.files and run.files[0] != run.path):
            out.append("  files: " + ", ".join(_shown(f) for f in run.files))
        canonical = set(run.mapping.values())
        if run.frame.metrics:
            out.append("  metrics (points, raw tags):")
            width = max(len(m) for m in run.frame.metrics)
            for m in run.frame.metrics:
                tags = run.frame.raw_tags(m)
                src = "" if tags == [m] else "  <- " + ", ".join(_shown(t) for t in tags)
                meaning = run.metric_info.get(m)
                mark = "" if m in canonical else "  (unmapped)"
                if meaning is not None and meaning.inferred:
                    mark = f"  (inferred from the name{': ' + _shown(meaning.note) if meaning.note else ''})"
                out.append(f"    {_shown(m):<{width}}  {run.frame.count(m):>8}{src}{mark}")
        for why in run.by_design.values():
            out.append(f"  {_shown(why)}")
        if run.eval_frame is not None and run.eval_frame.metrics:
            ev = run.eval_frame
            out.append(f"  eval: {len(ev.metrics)} metrics, {len(ev)} points ({', '.join(_shown(m) for m in ev.metrics[:6])}{' ...' if len(ev.metrics) > 6 else ''})")
        if run.config:
            keys = sorted(run.config)
            shown = ", ".join(f"{_shown(k)}={_short(run.config[k])}" for k in keys[:_TEXT_CONFIG_KEYS])
            more = f" ... (+{len(keys) - _TEXT_CONFIG_KEYS})" if len(keys) > _TEXT_CONFIG_KEYS else ""
            out.append(f"  config: {shown}{more}")
        elif run.raw_config:
            out.append(f"  config: {len(run.raw_config)} raw keys, none of them a trainer setting the rules read")
        else:
            out.append("  config: none found")
        task = solved_level(run)
        if task is not None:  # the level PD307 judges a plateau against
            out.append(f"  task: {_shown(task.task)}, solved at a return of {task.level:g} (from {_shown(task.where)})")
        if run.texts:
            out.append(f"  text samples: {len(run.texts)}")
        if run.restarts:
            out.append(f"  restarts at steps: {', '.join(str(s) for s in run.restarts[:10])}{' ...' if len(run.restarts) > 10 else ''}")
        for issue in run.issues:
            out.append(f"  {issue.level}: {_shown(str(issue))}")
        out.append("")
    if result.errors:
        out.append(f"errors ({len(result.errors)}):")
        for e in result.errors:
            out.append(f"  {_shown(str(e))}")
    elif not result.runs:
        out.append("no runs found")
    return "\n".join(out).rstrip("\n")


def _clean(text: str) -> str:
    """Encodable text for the JSON document: undecodable file-name bytes become ``\\xNN``
    escapes (``json.dumps`` escapes every control character itself)."""
    return display(text) if isinstance(text, str) else str(text)


def _shown(text: Any) -> str:
    """Text from a log made safe for a terminal, as ``report`` does (:func:`..report.escape.plain`):
    no escape sequence (an OSC title, a colour), no control byte, no newline that could spoof
    an output line (tests/test_hostile_round2.py)."""
    return plain(_clean(text))


def _short(value: Any) -> str:
    s = repr(value) if not isinstance(value, str) else value
    return _shown(s if len(s) <= 40 else s[:37] + "...")


def _plain(value: Any) -> Any:
    """JSON-safe copy: non-finite floats as strings (JSON has no NaN), other objects as text."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return _clean(value) if isinstance(value, str) else value
    return _clean(str(value))
