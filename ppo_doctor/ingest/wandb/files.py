"""The small side files of a W&B run: config, summary, metadata and logged text tables.

Used by :mod:`.binary` (a run folder ``run-*/`` or ``offline-run-*/`` holds
``run-<id>.wandb`` plus ``files/``) and by :mod:`.csv` (history exports saved with
``<id>_config.json`` / ``<id>_summary.json`` beside them).  Layouts are in
``docs/sources.md#wandb-run-folders``:

* ``files/config.yaml``: ``wandb_version: 1`` then ``key: {desc: null, value: <v>}`` per
  top-level key, plus an internal ``_wandb`` key (``sdk/lib/config_util.py``);
* ``files/wandb-summary.json``: last value per key plus ``_step``, ``_runtime``, ``_timestamp``;
* ``files/wandb-metadata.json``: program, args, python, git ... of the process;
* ``files/media/table/**/<key>_<step>_<hash>.table.json``: a ``wandb.Table``
  (``{"columns": [...], "data": [[...], ...]}``), how TRL and others log generated samples.

Every helper returns what it could read plus :class:`ReadIssue` entries; nothing here raises
on bad input, because a broken side file must not hide the metrics of the run.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from ...frame import RawRun, ReadIssue, TextSample
from ...lazy import yaml
from .. import safe_yaml
from ..storage import open_binary

# Keys W&B adds to a config that are not hyper-parameters (docs/sources.md#wandb-run-folders).
_INTERNAL_CONFIG_KEYS = ("wandb_version", "_wandb")

# Metadata fields worth keeping to explain a run.  Host, user name and e-mail are left out
# on purpose: reports get shared, and those say nothing about training health.
_METADATA_KEYS = ("program", "codePath", "args", "python", "startedAt", "git", "gpu", "gpu_count", "cuda")

# Column names (lower-cased) of the tables RLHF libraries log: TRL legacy ``game_log``
# (query, response, reward), TRL PPO/GRPO ``completions`` (query / prompt, model response /
# completion, score / reward, step), OpenRLHF and custom loops (input/output).
_PROMPT_COLUMNS = ("prompt", "query", "question", "input", "instruction")
_TEXT_COLUMNS = ("response", "completion", "model response", "model_response", "generation", "output", "text", "answer")
_REWARD_COLUMNS = ("reward", "score", "rewards", "scores")
_STEP_COLUMNS = ("step", "global_step", "_step")

# W&B names media files "<key>_<step>_<hash>" (sdk/data_types/base_types/media.py); used only
# when no history row points at the file.
_TABLE_NAME = re.compile(r"^(?P<key>.+)_(?P<step>\d+)_[0-9a-f]{8,64}\.table\.json$")


class TableRef(NamedTuple):
    """A history row that logged a table: its key, the file it names and the row's step."""

    key: str
    path: str  # relative to the run's ``files/`` folder, as W&B writes it
    step: int


@dataclass
class SideFiles:
    """Everything read from a run's side files, ready to merge into a :class:`RawRun`."""

    config: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    texts: list[TextSample] = field(default_factory=list)
    issues: list[ReadIssue] = field(default_factory=list)


def unwrap_config(raw: dict[str, Any]) -> dict[str, Any]:
    """Hyper-parameters of a W&B config dict: internal keys dropped, ``{desc, value}`` unwrapped.

    Accepts both the ``config.yaml`` layout and a plain ``run.config`` dict (what the public
    API returns and what people save as ``<id>_config.json``).
    """
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key in _INTERNAL_CONFIG_KEYS:
            continue
        if isinstance(value, dict) and "value" in value and set(value) <= {"desc", "value"}:
            value = value["value"]
        out[str(key)] = value
    return out


def read_config_yaml(path: Path) -> tuple[dict[str, Any], list[ReadIssue]]:
    """``files/config.yaml`` -> hyper-parameters (yaml.safe_load only: the file is untrusted)."""
    try:
        with open_binary(path) as fh:
            raw = safe_yaml.safe_load(fh.read().decode("utf-8", "replace"))
    except (OSError, ValueError, yaml.YAMLError) as exc:
        return {}, [ReadIssue(str(path), f"config not read: {_short(exc)}", level="warning")]
    if raw is None:
        return {}, []
    if not isinstance(raw, dict):
        return {}, [ReadIssue(str(path), "config not read: top level is not a mapping", level="warning")]
    return unwrap_config(raw), []


def read_json_object(path: Path, what: str) -> tuple[dict[str, Any], list[ReadIssue]]:
    """A JSON object file (summary, metadata, exported config); ``NaN``/``Infinity`` accepted."""
    try:
        with open_binary(path) as fh:
            raw = json.loads(fh.read())
    except (OSError, ValueError, RecursionError) as exc:
        return {}, [ReadIssue(str(path), f"{what} not read: {_short(exc)}", level="warning")]
    if not isinstance(raw, dict):
        return {}, [ReadIssue(str(path), f"{what} not read: top level is not a JSON object", level="warning")]
    return raw, []


def summary_step_issue(summary: dict[str, Any], last_step: int | None, path: str) -> ReadIssue | None:
    """A warning when the summary says the run logged further than the history we read.

    ``_step`` in the summary is the last history step W&B saw (docs/sources.md#wandb-run-folders); a smaller
    last step in the history means it was cut (truncated file, partial export).
    """
    step = summary.get("_step")
    if isinstance(step, bool) or not isinstance(step, (int, float)) or not math.isfinite(step):
        return None
    if last_step is None or int(step) > last_step:
        got = "no history" if last_step is None else f"history ends at step {last_step}"
        return ReadIssue(path, f"summary says the run reached _step {int(step)} but the {got}", level="warning")
    return None


def read_side_files(files_dir: Path, table_refs: list[TableRef] | None = None, source: str = "") -> SideFiles:
    """Read ``config.yaml``, ``wandb-summary.json``, ``wandb-metadata.json`` and the text tables.

    ``table_refs`` are the tables the history logged (with their steps); tables found on disk
    but not referenced get their step from the file name.
    """
    side = SideFiles()
    if not files_dir.is_dir():
        return side
    cfg_path = files_dir / "config.yaml"
    if cfg_path.is_file():
        side.config, issues = read_config_yaml(cfg_path)
        side.issues += issues
    summary_path = files_dir / "wandb-summary.json"
    if summary_path.is_file():
        side.summary, issues = read_json_object(summary_path, "summary")
        side.issues += issues
    meta_path = files_dir / "wandb-metadata.json"
    if meta_path.is_file():
        meta, issues = read_json_object(meta_path, "metadata")
        side.metadata = {k: meta[k] for k in _METADATA_KEYS if meta.get(k) is not None}
        side.issues += issues
    texts, issues = read_tables(files_dir, table_refs or [], source)
    side.texts += texts
    side.issues += issues
    return side


def merge_side_files(raw: RawRun, side: SideFiles) -> None:
    """Merge side-file content into ``raw``: the final ``config.yaml`` overrides record values."""
    raw.config.update(side.config)
    if side.metadata:
        raw.config.setdefault("wandb_run", {}).update(side.metadata)
    raw.texts += side.texts
    raw.issues += side.issues


def read_tables(files_dir: Path, refs: list[TableRef], source: str = "") -> tuple[list[TextSample], list[ReadIssue]]:
    """Text samples of every ``*.table.json`` under ``files_dir/media/table``."""
    table_root = files_dir / "media" / "table"
    if not table_root.is_dir():
        return [], []
    by_path = {Path(r.path).as_posix(): r for r in refs}
    texts: list[TextSample] = []
    issues: list[ReadIssue] = []
    for table_path in sorted(table_root.rglob("*.table.json")):
        rel = table_path.relative_to(files_dir).as_posix()
        ref = by_path.get(rel)
        if ref is not None:
            key, step = ref.key, ref.step
        else:
            m = _TABLE_NAME.match(table_path.name)
            sub = table_path.parent.relative_to(table_root).as_posix()
            stem = m.group("key") if m else table_path.name[: -len(".table.json")]
            key = stem if sub == "." else f"{sub}/{stem}"
            step = int(m.group("step")) if m else 0
        table, table_issues = read_json_object(table_path, "table")
        issues += table_issues
        if table:
            texts += table_texts(table, key, step, source or str(table_path))
    return texts, issues


def table_texts(table: dict[str, Any], key: str, step: int, source: str) -> list[TextSample]:
    """TextSamples of one W&B table.

    With a recognisable response column each row becomes one sample (prompt, text, reward,
    and its own step when the table has a step column, as TRL's GRPO table does); otherwise
    every string cell becomes a sample tagged ``<key>/<column>``.
    """
    columns = table.get("columns")
    data = table.get("data")
    if not isinstance(columns, list) or not isinstance(data, list):
        return []
    names = [str(c).strip().lower() for c in columns]
    text_col = _first_index(names, _TEXT_COLUMNS)
    prompt_col = _first_index(names, _PROMPT_COLUMNS)
    reward_col = _first_index(names, _REWARD_COLUMNS)
    step_col = _first_index(names, _STEP_COLUMNS)
    out: list[TextSample] = []
    for row in data:
        if not isinstance(row, list) or len(row) != len(columns):
            continue
        row_step = _as_int(row[step_col]) if step_col is not None else None
        at = step if row_step is None else row_step
        if text_col is not None:
            text = row[text_col]
            if not isinstance(text, str):
                continue
            prompt = row[prompt_col] if prompt_col is not None and isinstance(row[prompt_col], str) else None
            reward = _as_float(row[reward_col]) if reward_col is not None else None
            out.append(TextSample(step=at, tag=key, text=text, prompt=prompt, reward=reward, source=source))
        else:
            for name, cell in zip(columns, row):
                if isinstance(cell, str):
                    out.append(TextSample(step=at, tag=f"{key}/{name}", text=cell, source=source))
    return out


def _first_index(names: list[str], wanted: tuple[str, ...]) -> int | None:
    for w in wanted:
        if w in names:
            return names.index(w)
    return None


def _as_float(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        return float(v)
    except OverflowError:  # an int beyond float range
        return math.inf if v > 0 else -math.inf


def _as_int(v: Any) -> int | None:
    f = _as_float(v)
    if f is None or not math.isfinite(f) or f != int(f):
        return None
    return int(f)


def _short(exc: BaseException) -> str:
    text = str(exc).replace("\n", " ")
    return text if len(text) <= 200 else text[:197] + "..."
