"""ppo_doctor.sweep: attribution statistics, sweep tables, and ``ppo-doctor sweep`` end to end."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import jsonschema
import pytest
from cli_invoke import run_cli

from benchmarks.gen_sweep import write_sweep
from ppo_doctor.pipeline import Schedule
from ppo_doctor.sweep import sweep
from ppo_doctor.sweep.attribution import attribute
from ppo_doctor.sweep.progress import line
from ppo_doctor.sweep.table import join, name_tokens

DOCS = Path(__file__).resolve().parent.parent / "docs"
CORPUS_SWEEP = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "trl-ppo-gpt2-kl-sweep"


# -- attribution -------------------------------------------------------------------------------
def _grid(outcome, **extra):
    params, has = {}, {}
    for coef in (0.05, 0.1, 0.2, 0.5):
        for seed in (1, 2, 3):
            run = f"kl{coef}_s{seed}"
            params[run] = {"kl_coef": coef, "seed": seed, **{k: f(coef, seed) for k, f in extra.items()}}
            has[run] = outcome(coef, seed)
    return params, has


def test_numeric_split_with_counts_and_exact_p():
    params, has = _grid(lambda c, s: c <= 0.1)
    att = attribute(params, {"unhealthy": has})
    top = att.splits[0]
    assert top.label() == "kl_coef <= 0.1: 6/6 runs unhealthy; >= 0.2: 0/6"
    # Fisher exact, two-sided, on [[6, 0], [0, 6]]: 2 / C(12, 6)
    assert top.p_value == pytest.approx(2 / 924)
    assert top.tests == 3 + 2  # three kl_coef gaps, two seed gaps
    assert att.cautions == []
    assert all(s.separation == 0 for s in att.splits if s.parameter == "seed")


def test_category_split_and_ranking_by_support():
    params, has = _grid(lambda c, s: s == 3, optimizer=lambda c, s: "sgd" if s == 3 else "adam")
    # seed = 3 and optimizer = sgd pick the same runs: one of them (the first given) with the other named
    att = attribute(params, {"nan": has}, order=["optimizer"])
    top = att.splits[0]
    assert top.label() == "optimizer = sgd: 4/4 runs nan; = adam: 0/8"
    assert top.together == ["seed"]
    assert "optimizer and seed vary together" in att.cautions[0]


def test_identical_columns_are_one_parameter():
    params, has = _grid(lambda c, s: c <= 0.1, beta=lambda c, s: c)
    att = attribute(params, {"unhealthy": has}, order=["kl_coef"])
    assert att.splits[0].parameter == "kl_coef" and att.splits[0].same == ["beta"]
    assert not any(s.parameter == "beta" for s in att.splits)


def test_too_few_runs_and_chance_are_said_plainly():
    params = {f"r{i}": {"lr": i} for i in range(4)}
    att = attribute(params, {"unhealthy": {"r0": True, "r1": True, "r2": False, "r3": False}})
    assert att.splits == [] and att.cautions[0].startswith("too few runs to tell what makes unhealthy: 2 of 4")
    # a clean-looking split among many random-looking values is no better than chance
    params = {f"r{i}": {"lr": i, "bs": (i * 7) % 10} for i in range(10)}
    has = {f"r{i}": i in (0, 3, 5, 9) for i in range(10)}
    att = attribute(params, {"unhealthy": has})
    assert att.splits[0].adjusted_p > 0.05
    assert any(c.startswith("no split explains unhealthy better than chance") for c in att.cautions)


def test_no_parameters():
    att = attribute({"a": {}, "b": {}}, {"unhealthy": {"a": True, "b": False}})
    assert att.splits == [] and "no parameter found" in att.cautions[0]


# -- sweep tables ------------------------------------------------------------------------------
def test_name_tokens():
    assert name_tokens("beta0.05_seed42") == {"beta": 0.05, "seed": 42.0}
    assert name_tokens("lr=1e-5,kl_coef_0.1") == {"lr": 1e-5, "kl_coef": 0.1}


def test_table_joins_by_name_tokens_or_id_column_and_rejects_summaries():
    runs = [f"sweep/beta{b}_seed{s}" for b in (0.05, 0.5) for s in (1, 2)]
    by_tokens = join("t.csv", "beta,seed,max_kl\n0.05,1,40\n0.05,2,41\n0.5,1,3\n0.5,2,4\n", runs)
    assert by_tokens is not None and by_tokens.columns == ["beta", "seed"]  # outcome columns are not parameters
    assert by_tokens.params["sweep/beta0.5_seed2"] == {"beta": 0.5, "seed": 2}
    by_id = join("t.csv", "name,optimizer,warmup\nbeta0.05_seed1,adam,10\nbeta0.5_seed1,sgd,10\n", runs)
    assert by_id is not None and by_id.columns == ["optimizer"]  # warmup does not vary
    assert join("s.csv", "beta,mean_kl\n0.05,40\n0.5,4\n", runs) is None  # one row per value: a summary
    assert join("m.csv", "step,beta\n1,0.05\n2,0.5\n", runs) is None  # a metric log


# -- the command -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("sweep")
    write_sweep(root, n_steps=120, n_metrics=8)
    bad = root / "kl9_seed9"
    bad.mkdir()
    (bad / "events.out.tfevents.1700000000.host.0").write_bytes(b"\x00" * 7 + b"garbage, not a TFRecord" * 3)
    return root


def test_sweep_names_the_parameter_and_keeps_a_broken_run_as_an_error_row(sweep_dir):
    rep = sweep(sweep_dir)
    verdicts = {r.run: r.verdict for r in rep.rows}
    assert verdicts["kl9_seed9"] == "error"
    assert sum(v == "unhealthy" for v in verdicts.values()) == 6 and sum(v == "healthy" for v in verdicts.values()) == 6
    top = rep.attribution.splits[0]
    assert top.label() == "kl_coef <= 0.05: 6/6 runs unhealthy; >= 0.2: 0/6"
    row = next(r for r in rep.rows if r.run == "kl0.02_seed1")
    assert row.symptoms[0] == "kl_blowup" and row.top_cause["id"] == "kl-coef-too-low"
    assert row.onset is not None and row.steps_wasted == row.last_step - row.onset > 0


def test_sweep_formats(sweep_dir):
    out = run_cli(["sweep", str(sweep_dir), "--isolated", "--format", "json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    schema = json.loads((DOCS / "sweep.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(doc)
    assert doc["kind"] == "sweep" and doc["attribution"]["splits"][0]["parameter"] == "kl_coef"
    text = run_cli(["sweep", str(sweep_dir), "--isolated"]).stdout
    assert "1. kl_coef <= 0.05: 6/6 runs unhealthy; >= 0.2: 0/6" in text and re.search(r"\nkl9_seed9 +error\n", text)
    rows = list(csv.DictReader(io.StringIO(run_cli(["sweep", str(sweep_dir), "--isolated", "--format", "csv"]).stdout)))
    assert len(rows) == 13 and {r["param.kl_coef"] for r in rows if r["verdict"] == "unhealthy"} == {"0.02", "0.05"}
    md = run_cli(["sweep", str(sweep_dir), "--isolated", "--format", "markdown"]).stdout
    assert "| run | verdict |" in md and "kl\\_coef &lt;= 0.05" in md
    html = run_cli(["sweep", str(sweep_dir), "--isolated", "--format", "html"]).stdout
    assert html.count('<img class="plot"') == 1 and "data:image/png;base64," in html  # one top parameter


def test_sweep_exit_code_when_nothing_is_readable(tmp_path):
    (tmp_path / "events.out.tfevents.1.h.0").write_bytes(b"\x00" * 40)
    out = run_cli(["sweep", str(tmp_path), "--isolated"])
    assert out.exit_code == 2 and "no readable training run" in out.stderr


def test_progress_line():
    assert line(0, 10, 0.0) == "[............................] 0/10 runs"
    assert line(5, 10, 30.0) == "[##############..............] 5/10 runs  0:30 left"


@pytest.mark.slow  # a Dask LocalCluster of 2 worker processes (~5-15 s on 2 busy cores)
def test_dask_sweep_gives_the_local_report(sweep_dir):
    pytest.importorskip("distributed")
    local = sweep(sweep_dir).to_dict()
    on_dask = sweep(sweep_dir, schedule=Schedule(executor="dask", jobs=2)).to_dict()
    assert on_dask == local


@pytest.mark.corpus
@pytest.mark.skipif(not CORPUS_SWEEP.is_dir(), reason="../shared/corpus absent")
def test_corpus_kl_sweep_names_the_kl_coefficient():
    rep = sweep(CORPUS_SWEEP)
    assert len(rep.rows) == 12  # the sweep's summary CSVs are tables, not a run
    top = rep.attribution.splits[0]
    assert top.parameter == "kl_coef" and top.outcome == "unhealthy"
    # beta 0.05 runs away (KL 35-45 nats); beta 0.1 settles at 1.5-2.5x the band with its score
    # climbing: a sign, not an unhealthy run (tests/test_rules_corpus.py)
    assert top.label() == "kl_coef <= 0.05: 3/3 runs unhealthy; >= 0.1: 0/9"
    assert top.same == ["beta"]  # the sweep_results.csv column, joined through the folder names
    assert [Path(t).name for t in rep.tables] == ["sweep_results.csv"]


def test_sweep_reads_the_tables_discovery_found_and_walks_nothing_itself(tmp_path, monkeypatch):
    # issue 23: one walk of the roots; sweep/ takes discovery's sweep tables
    import ppo_doctor.ingest.discover as discover_mod
    from ppo_doctor.pipeline import find_sources

    root = tmp_path / "grid"
    write_sweep(root, n_steps=60, n_metrics=4)
    runs = sorted(p.name for p in root.iterdir() if p.is_dir())
    (root / "results.csv").write_text("name,optimizer\n" + "".join(f"{r},{'adam' if i % 2 else 'sgd'}\n" for i, r in enumerate(runs)))
    found = find_sources([root])
    assert [p.name for p in found.tables] == ["results.csv"]
    walks = []
    real = discover_mod.walk
    monkeypatch.setattr("ppo_doctor.pipeline.walk", lambda p, exclude=(): walks.append(p) or real(p, exclude))
    rep = sweep(root)
    assert len(walks) == 1  # the roots are walked once, by discovery
    assert [Path(t).name for t in rep.tables] == ["results.csv"]
    assert {r.params.get("optimizer") for r in rep.rows} == {"adam", "sgd"}
