"""Sweeps at search scale (issue 28): attribution near-linear in the runs, any value a value,
runs of two roots kept apart.

The p-values are checked against Fisher's test in exact rational arithmetic (written out here
with ``math.comb``), the attribution against a direct re-implementation of its definition (every
split scored one by one), and the sweep end to end on folders generated at test time.
"""

from __future__ import annotations

import json
import time
from fractions import Fraction
from math import comb
from pathlib import Path

import numpy as np
import pytest
from cli_invoke import run_cli

from benchmarks.gen_sweep import random_search, write_sweep
from ppo_doctor.sweep import sweep
from ppo_doctor.sweep.attribution import _apart, _fmt, attribute
from ppo_doctor.sweep.fisher import fisher_exact_two_sided, fisher_many


def _exact_p(a: int, b: int, c: int, d: int) -> float:
    """Two-sided Fisher p by its definition: the hypergeometric probabilities no larger than the
    observed one (scipy's relative tolerance of 1e-7), summed exactly."""
    r1, c1, n = a + b, a + c, a + b + c + d
    probs = {x: Fraction(comb(c1, x) * comb(n - c1, r1 - x), comb(n, r1)) for x in range(max(0, r1 - (n - c1)), min(r1, c1) + 1)}
    limit = probs[a] * Fraction(10**7 + 1, 10**7)
    return float(min(Fraction(1), sum(p for p in probs.values() if p <= limit)))


def test_p_values_match_exact_arithmetic_on_small_and_large_tables():
    for a, b, c, d in [(3, 1, 1, 3), (0, 5, 0, 7), (6, 0, 0, 6), (1, 9, 11, 3), (2, 2, 2, 2)]:
        assert fisher_exact_two_sided([[a, b], [c, d]]) == pytest.approx(_exact_p(a, b, c, d), rel=1e-9)
    rng = np.random.default_rng(7)
    for _ in range(60):
        n = int(rng.integers(50, 3000))
        r1, c1 = int(rng.integers(1, n)), int(rng.integers(1, n))
        low, high = max(0, r1 - (n - c1)), min(r1, c1)
        centre = r1 * c1 / n
        a = int(np.clip(round(centre + rng.normal(0, 4) * max(1.0, np.sqrt(centre))), low, high))
        expected = _exact_p(a, r1 - a, c1 - a, n - r1 - c1 + a)
        got = fisher_exact_two_sided([[a, r1 - a], [c1 - a, n - r1 - c1 + a]])
        if expected > 1e-290:
            assert got == pytest.approx(expected, rel=1e-9), (a, r1, c1, n)
    # far tails stay positive (log space, no underflow to a wrong 0) down to a float's range
    assert 0 < fisher_exact_two_sided([[400, 100], [100, 400]]) < 1e-80
    with pytest.raises(ValueError):
        fisher_exact_two_sided([[-1, 2], [3, 4]])


def test_many_tables_at_once_equal_one_by_one():
    rng = np.random.default_rng(3)
    n, k = 400, 150
    sizes = rng.integers(1, n, 200)
    hits = np.array([rng.integers(max(0, s - (n - k)), min(s, k) + 1) for s in sizes])
    many = fisher_many(hits, sizes, k - hits, n - sizes)
    one = [fisher_exact_two_sided([[int(h), int(s - h)], [int(k - h), int(n - s - k + h)]]) for h, s in zip(hits, sizes)]
    assert many.tolist() == pytest.approx(one, rel=1e-12)


def _search(n: int, seed: int = 0) -> tuple[dict, dict]:
    return random_search(n, seed)


def _best_by_definition(params: dict, has: dict[str, bool], name: str) -> tuple[float, str]:
    """The best split of one numeric parameter scored one threshold at a time (the definition)."""
    values = {i: params[i][name] for i in sorted(has)}
    distinct = sorted(set(values.values()))
    best = None
    for lo, hi in zip(distinct, distinct[1:]):
        a = [i for i, v in values.items() if v <= lo]
        b = [i for i, v in values.items() if v > lo]
        ha, hb = sum(has[i] for i in a), sum(has[i] for i in b)
        p = fisher_exact_two_sided([[ha, len(a) - ha], [hb, len(b) - hb]])
        key = (round(np.log10(max(p, 1e-300)), 9), -abs(ha / len(a) - hb / len(b)))
        if best is None or key < best[0]:
            best = (key, f"{name} <= {_fmt(lo)}")
    assert best is not None
    return best[0][0], best[1]


def test_attribution_of_a_search_equals_its_definition():
    params, outcomes = _search(300, seed=5)
    att = attribute(params, outcomes)
    for outcome in outcomes:
        for name in ("learning_rate", "kl_coef"):
            split = next(s for s in att.splits if s.parameter == name and s.outcome == outcome)
            key, side = _best_by_definition(params, outcomes[outcome], name)
            assert split.sides()[0] == side
            assert round(np.log10(max(split.p_value, 1e-300)), 6) == round(key, 6)


def test_ten_thousand_trials_are_attributed_in_seconds():
    params, outcomes = _search(10_000, seed=1)
    start = time.perf_counter()
    att = attribute(params, outcomes)
    elapsed = time.perf_counter() - start
    # measured 1.8 s on one core (benchmarks/RESULTS.md); the old pairwise version needed hours
    assert elapsed < 45, elapsed
    top = {s.outcome: s for s in att.splits if s.adjusted_p <= 0.05 and s.parameter == "learning_rate"}
    assert top["unhealthy"].kind == "numeric" and top["stagnation"].sides()[0].startswith("learning_rate <= ")
    assert att.items == 10_000


def test_cost_grows_near_linearly():
    def cost(n: int) -> float:
        params, outcomes = _search(n, seed=2)
        best = float("inf")
        for _ in range(2):
            start = time.perf_counter()
            attribute(params, outcomes)
            best = min(best, time.perf_counter() - start)
        return best

    small, large = cost(1_000), cost(8_000)
    # 8x the runs: linear is 8x, the windows' sqrt(N) terms make it ~23x at most; quadratic is 64x
    assert large / small < 40, (small, large)


def test_huge_and_infinite_values_are_values():
    runs = [f"r{i}" for i in range(12)]
    params = {
        r: {"big": 10**400 + i, "huger": 10**4000 * (1 + i % 2), "inf": float("inf") if i % 3 == 0 else 1.0, "text": "x" * 5000}
        for i, r in enumerate(runs)
    }
    outcomes = {"unhealthy": {r: i < 6 for i, r in enumerate(runs)}}
    att = attribute(params, outcomes)
    doc = json.dumps(att.to_dict())  # JSON-safe: big ints become text
    big = next(s for s in att.splits if s.parameter == "big")
    assert big.hits == (6, 0) and big.sizes == (6, 6)
    low, high = big.sides()
    # the bounds read apart: 10**400 + 5 against 10**400 + 6, as many digits as that takes
    assert low.startswith("big <= 1.000") and low.endswith("05e+400") and high.startswith(">= 1.000") and high.endswith("06e+400")
    assert "e+4000" in doc
    inf = next(s for s in att.splits if s.parameter == "inf")
    assert inf.kind == "category"
    assert _apart(1.0000001, 1.0000002) == ("1.0000001", "1.0000002")
    assert _apart(1e-5, 3e-5) == ("1e-05", "3e-05")


def _two_experiments(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "expA", tmp_path / "expB"
    runs_a = write_sweep(a, n_steps=60, n_metrics=8)
    # the same folder names, the opposite outcome: expB's low coefficients are healthy
    write_sweep(b, n_steps=60, n_metrics=8, blowup_below=0.01)
    names = sorted(p.name for p in runs_a)
    rows = ["run,big,group"] + [f"{n},{10**400 + i},g{i % 2}" for i, n in enumerate(names)]
    (a / "sweep_results.csv").write_text("\n".join(rows) + "\n")
    return a, b


def test_runs_of_two_roots_stay_apart_and_a_table_joins_its_own_root(tmp_path):
    a, b = _two_experiments(tmp_path)
    rep = sweep([a, b], schedule=None)
    ids = [r.run for r in rep.rows]
    assert len(ids) == len(set(ids)) == 24
    assert {r.run.split("/")[0] for r in rep.rows} == {"expA", "expB"}
    by_root = {root: [r for r in rep.rows if r.run.startswith(root + "/")] for root in ("expA", "expB")}
    assert sum(r.verdict == "unhealthy" for r in by_root["expA"]) == 6
    assert sum(r.verdict == "unhealthy" for r in by_root["expB"]) == 0
    # the table in expA gives expA's runs its columns, and none of expB's
    assert all("big" in r.params for r in by_root["expA"])
    assert not any("big" in r.params for r in by_root["expB"])
    assert rep.tables == [str(a / "sweep_results.csv")]
    assert rep.attribution is not None
    kl = next(s for s in rep.attribution.splits if s.parameter == "kl_coef" and s.outcome == "unhealthy")
    assert kl.support == 24 and kl.hits == (6, 0)  # 6 of expA's 12 low-coefficient runs, none of expB's


def test_a_huge_number_in_a_sweep_table_is_a_value_end_to_end(tmp_path):
    a, b = _two_experiments(tmp_path)
    result = run_cli(["sweep", str(a), str(b), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    big = [s for s in doc["attribution"]["splits"] if s["parameter"] == "big"]
    assert big and all(isinstance(s["low"], str) and s["low"].endswith("e+400") for s in big)
    text = run_cli(["sweep", str(a), str(b)])
    assert text.exit_code == 0 and "Traceback" not in text.output


def test_a_huge_cell_joined_by_folder_name_tokens_is_no_crash():
    from ppo_doctor.sweep.table import join

    table = join("t.csv", f"lr,big\n0.1,{10**400}\n0.2,{10**400 + 1}\n", ["lr0.1", "lr0.2"])
    assert table is not None and table.params == {"lr0.1": {"lr": 0.1}, "lr0.2": {"lr": 0.2}}
    # a column named in the folders whose cells are beyond a float matches no folder token
    assert join("t.csv", f"big,x\n{10**400},1\n{10**400 + 1},2\n", ["big1e400", "big2"]) is None
