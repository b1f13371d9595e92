"""Sweep tables: a CSV with one row per run of a sweep (its parameters), joined to the runs.

A sweep launcher often writes such a table next to the run folders (``sweep_results.csv`` with
``beta,seed,...`` columns beside ``beta0.05_seed42/``; a W&B sweep export with a ``name`` column).
:mod:`ppo_doctor.ingest.sweep_table` recognises such files (discovery skips them as runs); here a
recognised table is parsed (a header, at most ``MAX_ROWS`` rows, no step column) and used when its
rows join the sweep's runs one to one:

* by an id column (``run``, ``run_id``, ``run_name``, ``name``, ``id``) whose values are run ids or
  run folder names: every other column with two or more values is a parameter;
* else by the ``<name><value>`` tokens of the run folder names (``beta0.05_seed42``,
  ``lr=1e-5``, ``kl_coef_0.1``): the columns named there are the join keys and the parameters
  (the table's other columns, often outcomes such as ``max_kl``, are not taken as parameters).

A table whose rows match several runs each (a per-value summary) or no run is not a sweep table.
Cells are read as numbers when they parse as one (``True``/``False`` as booleans), else as text.
"""

from __future__ import annotations

import csv
import io
import logging
import math
import re
from dataclasses import dataclass
from typing import Any, Iterable

log = logging.getLogger(__name__)

MAX_ROWS = 100_000
ID_COLUMNS = ("run", "run_id", "run_name", "name", "id")
STEP_COLUMNS = frozenset({"step", "_step", "global_step", "steps_done", "timesteps", "time/total_timesteps", "total_timesteps", "iteration"})
# <key><sep?><number>, ended by a separator or the end: beta0.05, seed_42, lr=1e-5, kl_coef-0.1.
# The key ends with a letter: ``ppo__1`` (CleanRL's ``{env}__{exp_name}__{seed}__{time}``) is two
# fields, not a key ``ppo_``.
_TOKEN = re.compile(r"([A-Za-z](?:[A-Za-z_]*[A-Za-z])?)([=_-]?)(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?=$|[_,\s-])")


# Tokens of a folder name that name the run's random seed: a replicate's label, not a setting
# that could explain an outcome (a split on it would only say which draws were unlucky).
SEED_KEYS = frozenset({"seed", "random_seed", "rng_seed"})


@dataclass
class SweepTable:
    path: str
    params: dict[str, dict[str, Any]]  # run id -> {column: value}
    columns: list[str]  # the parameter columns


def name_tokens(name: str) -> dict[str, float]:
    """``beta0.05_seed42`` -> ``{"beta": 0.05, "seed": 42.0}`` (keys lower-cased).

    A name gives a parameter only where it writes one (issue 39): ``key=value``, ``key<value>``, or
    a lower-case ``key_value`` / ``key-value``.  A run counter is not one: SB3 names its
    TensorBoard runs ``{tb_log_name}_{N}`` (``PPO_3``, ``stable_baselines3/common/utils.py``,
    ``get_latest_run_id``), an upper-case name, a separator and a whole number.  A number past a
    float's range (``lr=1e999``) is no setting either: it is left out with a warning."""
    out: dict[str, float] = {}
    for m in _TOKEN.finditer(name):
        key, sep, number = m.group(1), m.group(2), m.group(3)
        if sep in ("_", "-") and key != key.lower() and _is_integer(number):
            continue  # a run counter
        value = float(number)
        if not math.isfinite(value):
            log.warning("folder %r: %s%s%s is past a number's range: not read as a parameter", name, key, sep, number)
            continue
        out.setdefault(key.lower(), value)
    return out


def _is_integer(text: str) -> bool:
    return text.lstrip("-").isdigit()


def parse_table(text: str) -> tuple[list[str], list[dict[str, Any]]] | None:
    """Header and typed rows of a CSV that may be a sweep table; None when it cannot be one."""
    try:
        dialect = csv.Sniffer().sniff(text[:4096], delimiters=",\t;")
    except csv.Error:
        dialect = csv.excel
    rows = list(csv.reader(io.StringIO(text), dialect))
    if len(rows) < 3 or len(rows) > MAX_ROWS + 1:
        return None
    header = [h.strip() for h in rows[0]]
    if len(set(header)) != len(header) or any(h.lower() in STEP_COLUMNS for h in header) or any(not h for h in header):
        return None
    out = []
    for row in rows[1:]:
        if not row:
            continue
        if len(row) != len(header):
            return None
        out.append({h: _cell(c) for h, c in zip(header, row)})
    return header, out


def join(path: str, text: str, run_ids: Iterable[str]) -> SweepTable | None:
    """The table at ``path`` (its ``text``) joined to ``run_ids``, or None when it is not a sweep table."""
    parsed = parse_table(text)
    if parsed is None:
        return None
    header, rows = parsed
    ids = list(run_ids)
    leaf = {rid: rid.rstrip("/").rsplit("/", 1)[-1] for rid in ids}
    id_col = next((h for h in header if h.lower() in ID_COLUMNS), None)
    if id_col is not None:
        by_name: dict[str, list[str]] = {}
        for rid in ids:
            for key in {rid, leaf[rid]}:
                by_name.setdefault(key, []).append(rid)
        matched = _one_to_one(rows, lambda row: by_name.get(str(row[id_col]), []))
        if matched is None:
            return None
        columns = [h for h in header if h != id_col and len({_key(r[h]) for r in rows}) > 1]
    else:
        tokens = {rid: name_tokens(leaf[rid]) for rid in ids}
        keys = {h: h.lower() for h in header if any(h.lower() in t for t in tokens.values())}
        if not keys:
            return None

        def runs_of(row: dict[str, Any]) -> list[str]:
            return [
                rid
                for rid, t in tokens.items()
                if all(k in t for k in keys.values())
                and all(isinstance(row[h], (int, float)) and not isinstance(row[h], bool) and _close(row[h], t[k]) for h, k in keys.items())
            ]

        matched = _one_to_one(rows, runs_of)
        if matched is None:
            return None
        columns = list(keys)
    params = {rid: {c: row[c] for c in columns if row[c] is not None} for rid, row in matched.items()}
    log.debug("sweep table %s: %d runs, parameters %s", path, len(params), columns)
    return SweepTable(path=path, params=params, columns=columns)


def _one_to_one(rows: list[dict[str, Any]], runs_of: Any) -> dict[str, dict[str, Any]] | None:
    """run id -> row when every row matches at most one run, two or more rows match, and no run
    is matched twice; else None."""
    matched: dict[str, dict[str, Any]] = {}
    for row in rows:
        runs = runs_of(row)
        if len(runs) > 1:
            return None
        if runs:
            if runs[0] in matched:
                return None
            matched[runs[0]] = row
    return matched if len(matched) >= 2 else None


def _close(a: float, b: float) -> bool:
    """Equal to within float rounding; a cell too large for a float equals only itself."""
    try:
        return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))
    except OverflowError:  # an int beyond a float's range against a float token
        return False


def _key(v: Any) -> str:
    return repr(v)


def _cell(text: str) -> Any:
    t = text.strip()
    if t == "":
        return None
    if t in ("True", "true", "TRUE"):
        return True
    if t in ("False", "false", "FALSE"):
        return False
    try:
        return int(t)
    except ValueError:
        pass
    try:
        return float(t)
    except ValueError:
        return t
