"""veRL console logs: one ``step:N - key:value - key:value ...`` line per training step.

veRL's console backend (``verl/utils/logger/aggregate_logger.py::concat_dict_to_str``,
``docs/sources.md#verl-metrics``) prints every step's metrics on one line.  Under Ray the line is
prefixed with ``(TaskRunner pid=...)`` and wrapped in ANSI colour codes.  Value formats:

* veRL <= 0.4.1: ``f"{v:.3f}"``, three decimals, so metrics below 0.0005 (``actor/ppo_kl``, small
  learning rates) read as 0.000 — reported as a warning, since it limits what can be judged;
* veRL >= 0.5: ``pprint.pformat(v)``, which with numpy >= 2 prints ``np.float64(0.0123)``;
* ``nan`` / ``inf`` literally.

Validation metrics (``val-core/...``, ``val-aux/...``, older ``val/...``) go to the eval series.
The trainer prints its config as a ``pprint`` dict at start-up; it is parsed with
``ast.literal_eval`` (literals only, nothing is executed) into the run config.  The validation
samples veRL prints (``[prompt]``, ``[response]``, ``[ground_truth]``, ``[score]``) become text
samples at the step whose metrics line follows them.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import LogReadError
from ...frame import RawRun, RawSeries, ReadIssue, TextSample
from ...canonical.frameworks import VERL_CONSOLE_EVAL_PREFIXES
from .. import filebytes
from ..base import is_int64
from ..console import ANSI, MAX_LINE_BYTES, console_name, scan

NAME = "verl_console"

_RAY_PREFIX = re.compile(r"^\s*\([A-Za-z_][\w.]* pid=\d+[^)]*\)\s?")
_STEP_LINE = re.compile(r"\bstep:(\d+) - ")
_STEP_LINE_BYTES = re.compile(rb"\bstep:\d+ - [\w/@.\-]+:")
_WRAPPED = re.compile(r"^(?:np\.)?(?:float|int|uint)(?:16|32|64)?\((.*)\)$|^tensor\((.*)\)$")
_DECIMAL = re.compile(r"^-?\d+\.\d+$")
_SAMPLE_TAG = re.compile(r"^\[(prompt|response|ground_truth|score)\]\s?(.*)$")
_MAX_CONFIG_LINES = 20000


def sniff(path: Path, head: bytes) -> bool:
    """A text file with a ``step:N - key:value`` line within its first 16 MiB.

    Only console-log-like files are scanned past the head (a log/txt/out/err name, no suffix, or
    Ray's ``pid=`` prefixes), so that discovery does not read every large text file of a tree.
    """
    named = console_name(path) or b" pid=" in head
    return scan(path, head, lambda data: _STEP_LINE_BYTES.search(data) is not None, console_named=named)


def _value(text: str) -> float | None:
    t = text.strip()
    m = _WRAPPED.match(t)
    if m:
        t = (m.group(1) or m.group(2) or "").split(",")[0].strip()
    try:
        return float(t)
    except ValueError:
        return None


def read(path: Path) -> list[RawRun]:
    src = str(path)
    try:
        data, long = filebytes.read_capped_lines(path, MAX_LINE_BYTES)
    except OSError as exc:
        raise LogReadError(src, f"cannot read file ({exc.strerror or exc})") from exc
    text = data.decode("utf-8", "replace")
    points: dict[str, tuple[list[int], list[float]]] = {}
    n_values = three_dec = skipped = 0
    config_lines: list[str] | None = None
    config: dict[str, Any] = {}
    pending: list[tuple[str, str]] = []  # (kind, text) of a validation sample block
    samples: list[TextSample] = []
    steps_seen: list[int] = []
    lines = text.split("\n")
    # A last line without its line end may have been cut while being written (a live run, a
    # killed job): only its items followed by " - " are known to be complete.
    cut_line = len(lines) - 1 if lines[-1].strip() else None
    partial = False
    for n_line, raw in enumerate(lines):
        line = _RAY_PREFIX.sub("", ANSI.sub("", raw.rstrip("\r")))
        if config_lines is not None:
            # pprint indents every continuation line; the first other line ends the dump
            if line.startswith(" ") and len(config_lines) < _MAX_CONFIG_LINES:
                config_lines.append(line)
                if line.rstrip().endswith("}"):
                    parsed = _literal("\n".join(config_lines))
                    if parsed is not None:
                        config, config_lines = parsed, None
                continue
            config_lines = None
        if not config and line.startswith("{'"):
            parsed = _literal(line)
            if parsed is not None:
                config = parsed
            else:
                config_lines = [line]
            continue
        m = _STEP_LINE.search(line)
        if m is None:
            tag = _SAMPLE_TAG.match(line)
            if tag:
                pending.append((tag.group(1), tag.group(2)))
            elif pending and pending[-1][0] in ("prompt", "response"):
                kind, body = pending[-1]
                pending[-1] = (kind, body + "\n" + line)
            continue
        step = int(m.group(1))
        if not is_int64(step):
            skipped += 1
            continue
        steps_seen.append(step)
        items = line[m.end() :].split(" - ")
        if n_line == cut_line:
            items.pop()
            partial = True
        for item in items:
            key, sep, val = item.rpartition(":")
            key = key.strip()
            if not sep or not key:
                skipped += 1
                continue
            v = _value(val)
            if v is None:
                skipped += 1
                continue
            text = val.strip()
            if _DECIMAL.match(text):  # nan / np.float64(...) say nothing about the precision
                n_values += 1
                three_dec += len(text.rsplit(".", 1)[1]) == 3
            ps = points.setdefault(key, ([], []))
            ps[0].append(step)
            ps[1].append(v)
        if pending:
            samples.extend(_samples(pending, step, src))
            pending = []
    if not points:
        raise LogReadError(src, "no 'step:N - key:value' line found")
    run = RawRun(config=config, texts=samples)
    if partial:
        msg = f"partial last line {len(lines)}: no line end, its last item was not read (file cut short or still being written?)"
        run.issues.append(ReadIssue(src, msg, offset=data.rfind(b"\n") + 1))
    for key, (st, vals) in points.items():
        s = RawSeries(tag=key, steps=np.asarray(st), values=np.asarray(vals), source=src)
        (run.eval_series if key.startswith(VERL_CONSOLE_EVAL_PREFIXES) else run.series).append(s)
    if three_dec and three_dec == n_values:
        run.issues.append(
            ReadIssue(src, "values printed with 3 decimals (veRL <= 0.4 console): metrics below 0.0005 (ppo_kl, lr ...) read as 0", level="warning")
        )
    if skipped:
        run.issues.append(ReadIssue(src, f"{skipped} item(s) of step lines were not 'key:number' and were skipped", level="warning"))
    arr = np.asarray(steps_seen)
    back = np.flatnonzero(arr[1:] <= arr[:-1]) + 1
    if len(back):
        run.restarts = [int(arr[i]) for i in back]
        run.issues.append(ReadIssue(src, f"step goes back {len(back)} time(s) (restarted job appended to the same log?); the last value wins", level="warning"))
    run.issues[:0] = [
        ReadIssue(src, f"line {ln.number} skipped: {ln.length} bytes, over the {MAX_LINE_BYTES}-byte line limit (MAX_LINE_BYTES)", offset=ln.offset, level="warning")
        for ln in long
    ]
    return [run]


def _literal(text: str) -> dict[str, Any] | None:
    """A printed dict, evaluated as a literal only (``ast.literal_eval`` runs no code)."""
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _samples(block: list[tuple[str, str]], step: int, src: str) -> list[TextSample]:
    """veRL prints prompt, response, ground truth and score in turn for a validation sample."""
    out: list[TextSample] = []
    prompt: str | None = None
    current: TextSample | None = None
    for kind, body in block:
        if kind == "prompt":
            prompt = body.strip()
        elif kind == "response":
            current = TextSample(step=step, tag="val/response", text=body.strip(), prompt=prompt, source=src)
            out.append(current)
        elif kind == "score" and current is not None:
            current.reward = _value(body)
    return out
