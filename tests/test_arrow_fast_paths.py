"""The pyarrow fast paths of the CSV and JSON-lines readers give exactly what their other paths
give, on random files.

CSV (``csv_logs._arrow_run``) takes all-numeric tables only; the files mix integer steps, floats
printed with ``repr`` (round-trip exact), numpy's ``nan``/``inf`` spellings, other NaN spellings
and empty cells, so how a written ``nan`` stays a logged NaN and how an empty cell stays "not
logged" are compared.  JSON lines (``jsonl._arrow_columns``) takes flat all-number lines
without ``null``; the files mix key sets per line, ints, doubles (``NaN``/``Infinity`` tokens
too), bools, huge ints, time stamps and steps that go back.  trainer_state.json
(``trainer_state._arrow_history``) takes an indented state whose ``log_history`` entries are flat
numbers; the files mix train, eval and summary entries, key orders, indents, the same values and
``null`` in the other fields.  Values are also checked against Python's own parse, and the
line each point is recorded at (``RawSeries.lines``, what SARIF regions point at) against the
file's own lines.

Files under ``PARSER_IMPORT_BYTES`` take neither pyarrow nor pandas' ujson (issue 26): the CSV
reader's ``float()`` path and ``json`` must give what the pyarrow and ujson paths give on the
same random files.  The other tests here lower the size to 0 so that they compare the paths
large files take.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

import json

from ppo_doctor.ingest.readers import csv_logs, jsonl, trainer_state

SPECIAL = ["nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e400", "-0.0", "0", "5e-324"]
# spellings pyarrow reads that the small-file CSV path must read the same, or hand on to pyarrow
ODD = ["+1", ".5", "1.", "007", "1E5", "-0", "-Infinity", " 1", "1 ", "1_0", '"2"', "+nan", "NAN", "0x10"]
SMALL = 1 << 20  # PARSER_IMPORT_BYTES as shipped


@pytest.fixture(autouse=True)
def _as_large_files(monkeypatch):
    """Every file takes the paths of a large one (pyarrow, ujson) unless a test restores SMALL."""
    for mod in (csv_logs, jsonl, trainer_state):
        monkeypatch.setattr(mod, "PARSER_IMPORT_BYTES", 0)


def _small_files(monkeypatch) -> None:
    for mod in (csv_logs, jsonl, trainer_state):
        monkeypatch.setattr(mod, "PARSER_IMPORT_BYTES", SMALL)


def _cell(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.08:
        return ""
    if r < 0.14:
        return rng.choice(SPECIAL)
    if r < 0.3:
        return str(rng.randint(-(10**6), 10**6))
    return repr(rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30))


def _write(path, rng: random.Random, delim: str) -> list[list[str]]:
    n_cols, n_rows = rng.randint(1, 6), rng.randint(1, 60)
    names = ["step", *(f"m/{j}" for j in range(n_cols))]
    rows = [[str(i * rng.randint(1, 3) + i), *(_cell(rng) for _ in range(n_cols))] for i in range(n_rows)]
    path.write_text(delim.join(names) + "\n" + "".join(delim.join(r) + "\n" for r in rows))
    return [names, *rows]


def _lines(s) -> list[int] | None:
    return None if s.lines is None else np.asarray(s.lines).tolist()


def _as_dict(runs) -> dict:
    (run,) = runs
    out = {}
    for s in [*run.series, *run.eval_series]:
        out[s.tag] = (np.asarray(s.steps).tolist(), np.asarray(s.values, dtype=np.float64), _lines(s))
    return out, [i.message for i in run.issues], run.restarts


@pytest.mark.parametrize("seed", range(40))
def test_fast_path_matches_pandas_path(tmp_path, monkeypatch, seed):
    rng = random.Random(seed)
    delim = rng.choice([",", ";", "\t"])
    f = tmp_path / "progress.csv"
    table = _write(f, rng, delim)
    fast = csv_logs._arrow_run(f)
    assert fast is not None, "an all-numeric table must take the fast path"
    fast_d, fast_issues, fast_restarts = _as_dict([fast])
    monkeypatch.setattr(csv_logs, "_arrow_run", lambda path: None)
    slow_d, slow_issues, slow_restarts = _as_dict(csv_logs.read(f))
    assert fast_d.keys() == slow_d.keys()
    for tag, (steps, values, lines) in fast_d.items():
        s_steps, s_values, s_lines = slow_d[tag]
        assert steps == s_steps and lines == s_lines, tag
        np.testing.assert_array_equal(values, s_values, err_msg=tag)
        # each point's line is the row of its step in the file (the header is line 1)
        assert [int(table[line - 1][0]) for line in lines] == steps, tag
    assert fast_issues == slow_issues and fast_restarts == slow_restarts
    # and both equal Python's own parse of every non-empty cell
    names, rows = table[0], table[1:]
    for j, name in enumerate(names[1:], start=1):
        expected = [float(r[j]) for r in rows if r[j] != ""]
        if not expected:
            assert name not in fast_d
            continue
        got = fast_d[name][1].tolist()
        assert len(got) == len(expected)
        assert all((math.isnan(a) and math.isnan(b)) or a == b for a, b in zip(got, expected)), name


@pytest.mark.parametrize("seed", range(40))
def test_small_csv_python_path_matches_pyarrow_path(tmp_path, monkeypatch, seed):
    rng = random.Random(seed)
    f = tmp_path / "progress.csv"
    names, *rows = _write(f, rng, rng.choice([",", ";", "\t"]))
    if seed % 4 == 0:  # an odd spelling in a cell: read the same, or left to pyarrow
        rows[rng.randrange(len(rows))][1] = rng.choice(ODD)
        f.write_text("".join(",".join(r) + "\n" for r in [names, *rows]))
    _small_files(monkeypatch)
    arrow = csv_logs._arrow_run(f)
    small = csv_logs._python_run(f)
    if small is None:
        assert seed % 4 == 0, "a plain all-numeric table must take the small-file path"
        return
    assert arrow is not None, "what the small-file path reads, pyarrow reads"
    _equal_dicts(_as_dict([small]), _as_dict([arrow]))
    assert all(s.values.flags.c_contiguous for s in small.series)


def _equal_dicts(a, b) -> None:
    (da, ia, ra), (db, ib, rb) = a, b
    assert da.keys() == db.keys() and ia == ib and ra == rb
    for tag in da:
        assert da[tag][0] == db[tag][0] and da[tag][2] == db[tag][2], tag
        np.testing.assert_array_equal(da[tag][1], db[tag][1], err_msg=tag)


def test_a_small_csv_imports_no_pyarrow(tmp_path, monkeypatch):
    f = tmp_path / "progress.csv"
    f.write_text("time/total_timesteps,rollout/ep_rew_mean,train/loss\n2048,1.5,nan\n4096,,0.25\n")
    _small_files(monkeypatch)
    monkeypatch.setattr(csv_logs, "_arrow_run", lambda path: pytest.fail("pyarrow path taken"))
    (run,) = csv_logs.read(f)
    assert {s.tag for s in run.series} == {"rollout/ep_rew_mean", "train/loss"}


@pytest.mark.parametrize(
    "text",
    [
        "step,a,label\n1,0.5,x\n2,0.6,y\n",  # a text column
        "step,a\n1,0.5\nstep,a\n2,0.6\n",  # a repeated header line (SB3 rewrite)
        "step,a\n1,0.5\n2\n3,0.7\n",  # a short row
        "step,a\n1,0.5\n2,0.6,9\n",  # a long row
        "step,a\n1,0.5\n2,0.6",  # no line end on the last line
        "step,a,a\n1,0.5,0.6\n",  # a repeated column name
        "step,a\n1, 0.5\n2,True\n",  # spaces, a bool
        "step," + ",".join(f"m{j}" for j in range(300)) + "\n" + "1," * 300 + "x\n",  # one bad cell after many (no backtracking blow-up)
    ],
)
def test_other_files_leave_the_fast_path(tmp_path, monkeypatch, text):
    f = tmp_path / "progress.csv"
    f.write_text(text)
    assert csv_logs._arrow_run(f) is None
    monkeypatch.setattr(csv_logs, "PARSER_IMPORT_BYTES", SMALL)
    assert csv_logs._python_run(f) is None
    assert csv_logs.read(f)  # the pandas or careful path still reads them


def test_written_nan_is_logged_empty_cell_is_not(tmp_path):
    f = tmp_path / "progress.csv"
    f.write_text("step,a,b\n1,nan,1\n2,,2\n3,0.5,\n")
    run = csv_logs._arrow_run(f)
    assert run is not None
    by_tag = {s.tag: s for s in run.series}
    assert np.asarray(by_tag["a"].steps).tolist() == [1, 3]
    assert math.isnan(by_tag["a"].values[0]) and by_tag["a"].values[1] == 0.5
    assert np.asarray(by_tag["b"].steps).tolist() == [1, 2]


def _json_value(rng: random.Random):
    r = rng.random()
    if r < 0.05:
        return rng.choice([math.nan, math.inf, -math.inf])
    if r < 0.1:
        return rng.choice([2**63 + rng.randint(0, 9), -(2**70)])
    if r < 0.3:
        return rng.randint(-(10**9), 10**9)
    return rng.uniform(-1, 1) * 10 ** rng.randint(-300, 300)


def _jsonl_lines(rng: random.Random) -> list[str]:
    keys = [f"k/{j}" for j in range(rng.randint(1, 5))]
    extra = rng.choice([[], ["_timestamp"], ["wall_time"]])
    flag = rng.random() < 0.3  # a bool key (pyarrow rejects a key mixing bools and numbers)
    sparse = rng.choice([1.0, 1.0, 0.8, 0.3])
    step = 0
    lines = []
    for i in range(rng.randint(1, 80)):
        step = step + rng.randint(1, 3) if rng.random() > 0.05 else max(step - 5, 0)  # restarts too
        # lines log different key sets (train and eval lines): a key is left out now and then
        rec = {"step": step, **{k: _json_value(rng) for k in keys if rng.random() < sparse}, **{k: 1.7e9 + i for k in extra}}
        if flag:
            rec["done"] = rng.random() < 0.5
        lines.append(json.dumps(rec))
    return lines


def _same_runs(fast, slow) -> None:
    assert len(fast) == len(slow)  # steps that go back may split the file into interleaved parts
    for a, b in zip(fast, slow):
        assert a.name == b.name and [s.tag for s in a.series] == [s.tag for s in b.series]
        for sa, sb in zip(a.series, b.series):
            np.testing.assert_array_equal(sa.steps, sb.steps)
            np.testing.assert_array_equal(sa.values, sb.values)
            np.testing.assert_array_equal(sa.wall_time, sb.wall_time)
            assert _lines(sa) == _lines(sb), sa.tag
        assert [i.message for i in a.issues] == [i.message for i in b.issues] and a.restarts == b.restarts


@pytest.mark.parametrize("seed", range(30))
def test_jsonl_fast_path_matches_record_path(tmp_path, monkeypatch, seed):
    rng = random.Random(seed)
    lines = _jsonl_lines(rng)
    f = tmp_path / "metrics.jsonl"
    f.write_text("\n".join(lines) + ("\n" if rng.random() < 0.8 else ""))
    assert jsonl._arrow_columns(f, f.read_bytes()) is not None, "flat all-number lines must take the fast path"
    fast = jsonl.read(f)
    monkeypatch.setattr(jsonl, "_arrow_columns", lambda path, data: None)
    slow = jsonl.read(f)
    _same_runs(fast, slow)
    _small_files(monkeypatch)  # json instead of ujson, as a file under 1 MiB is read
    _same_runs(fast, jsonl.read(f))
    if len(fast) > 1:
        return
    parsed = [json.loads(l) for l in lines]
    for run in fast:  # each point's line is a line of its step that logged its tag
        for s in run.series:
            at = [parsed[line - 1] for line in _lines(s)]
            assert [rec["step"] for rec in at] == np.asarray(s.steps).tolist() and all(s.tag in rec for rec in at), s.tag
    for s in fast[0].series:  # against json's own parse of each line (bools and ints as floats)
        last = {}
        for rec in parsed:
            if s.tag in rec:
                last[rec["step"]] = float(rec[s.tag])
        got = dict(zip(np.asarray(s.steps).tolist(), np.asarray(s.values).tolist()))
        assert got.keys() == last.keys()
        assert all((math.isnan(got[k]) and math.isnan(v)) or got[k] == v for k, v in last.items()), s.tag


@pytest.mark.parametrize(
    "text",
    [
        '{"step": 1, "a": 0.5}\n\n{"step": 2, "a": 0.6}\n',  # a blank line
        '{"step": 1, "a": 0.5}{"step": 2, "a": 0.6}\n',  # two objects on one line
        '{"step": 1, "a": 0.5, "a": 0.7}\n',  # a key given twice (json keeps the last)
        '{"step": 1, "a": 0.5}\n{"step": 2, "a": null}\n',  # a null (NaN or not logged?)
        '{"step": 1, "a": "x"}\n',  # text
        '{"step": 1, "data": {"a": 0.5}}\n',  # nested (veRL)
        '{"step": 1, "a": 0.5}\r\n',  # CRLF
        '{"step": 1, "a": 0.5}\n{"step": 2, "a": true}\n',  # a key mixing numbers and bools
    ],
)
def test_other_jsonl_files_leave_the_fast_path(tmp_path, text):
    f = tmp_path / "metrics.jsonl"
    f.write_text(text)
    assert jsonl._arrow_columns(f, f.read_bytes()) is None
    assert jsonl.read(f) is not None


def _history(rng: random.Random) -> list[dict]:
    """Trainer log entries: train rows, some eval rows, maybe the final summary row."""
    keys = [f"train/k{j}" for j in range(rng.randint(1, 5))] + rng.choice([[], ["loss", "grad_norm"]])
    flag = rng.random() < 0.3
    rows, step = [], 0
    for _ in range(rng.randint(1, 60)):
        step = step + rng.randint(1, 3) if rng.random() > 0.05 else max(step - 5, 0)
        if rng.random() < 0.15:
            rows.append({"epoch": step / 10, "eval_loss": _json_value(rng), "eval_runtime": rng.random(), "step": step})
            continue
        row = {"epoch": step / 10, **{k: _json_value(rng) for k in keys if rng.random() < 0.9}, "step": step}
        if flag:
            row["done"] = rng.random() < 0.5
        rows.append(row)
    for _ in range(rng.choice([0, 1, 1, 2])):  # at the end; a resumed run has one in the middle too
        summary = {"epoch": 3.0, "step": step, "total_flos": rng.choice([12345678901234567890, 1.5e18]), "train_loss": rng.random(), "train_runtime": 12.5}
        rows.insert(rng.choice([len(rows), rng.randint(0, len(rows))]), summary)
    return rows


def _runs_equal(a, b) -> None:
    for fast_list, slow_list in ((a.series, b.series), (a.eval_series, b.eval_series)):
        fa, sl = {s.tag: s for s in fast_list}, {s.tag: s for s in slow_list}
        assert fa.keys() == sl.keys()  # the order may differ; the frame sorts tags
        for tag in fa:
            np.testing.assert_array_equal(fa[tag].steps, sl[tag].steps, err_msg=tag)
            np.testing.assert_array_equal(fa[tag].values, sl[tag].values, err_msg=tag)
            assert _lines(fa[tag]) == _lines(sl[tag]), tag
    assert a.config == b.config and {k: type(v) for k, v in a.config.items()} == {k: type(v) for k, v in b.config.items()}
    assert [i.message for i in a.issues] == [i.message for i in b.issues] and a.restarts == b.restarts


@pytest.mark.parametrize("seed", range(30))
def test_trainer_state_fast_path_matches_json_path(tmp_path, monkeypatch, seed):
    rng = random.Random(seed)
    state = {
        "best_metric": None,  # null outside log_history is fine
        "global_step": 7,
        "log_history": _history(rng),
        "stateful_callbacks": {"TrainerControl": {"args": {"should_save": True}, "attributes": {}}},
        "trial_params": None,
    }
    text = json.dumps(state, indent=rng.choice([1, 2, 4]), sort_keys=rng.random() < 0.7)
    f = tmp_path / "trainer_state.json"
    f.write_text(text)
    fast = trainer_state._arrow_history(f, f.read_bytes())
    assert fast is not None, "flat all-number entries must take the fast path"
    _small_files(monkeypatch)  # a file under 1 MiB is read by json alone
    monkeypatch.setattr(trainer_state, "_arrow_history", lambda path, data: pytest.fail("pyarrow path taken"))
    (slow,) = trainer_state.read(f)
    _runs_equal(fast, slow)
    text_lines = text.split("\n")
    for s in [*fast.series, *fast.eval_series]:  # each point's line opens an entry of its step and tag
        for step, line in zip(np.asarray(s.steps).tolist(), _lines(s)):
            assert text_lines[line - 1].strip() == "{", s.tag
            entry, _ = json.JSONDecoder().raw_decode("\n".join(text_lines[line - 1 :]).lstrip())
            assert entry["step"] == step and s.tag in entry, s.tag
    for s in fast.series:  # against json's own parse (bools and ints as floats)
        expected = [float(r[s.tag]) for r in state["log_history"] if s.tag in r and "train_runtime" not in r and "eval_loss" not in r]
        got = np.asarray(s.values).tolist()
        assert len(got) == len(expected)
        assert all((math.isnan(x) and math.isnan(y)) or x == y for x, y in zip(got, expected)), s.tag


def _state_text(history_json: str) -> str:
    return '{\n  "global_step": 2,\n  "log_history": [\n' + history_json + '\n  ],\n  "max_steps": 2\n}'


@pytest.mark.parametrize(
    "entries",
    [
        '    {\n      "loss": null,\n      "step": 1\n    }',  # a null (GRPOTrainer: every value NaN)
        '    {\n      "loss": 0.5,\n      "step": 1\n    },\n    {\n      "loss": "x",\n      "step": 2\n    }',  # text
        '    {\n      "loss": 0.5,\n      "loss": 0.7,\n      "step": 1\n    }',  # a key given twice
        '    {\n      "loss": {"a": 1},\n      "step": 1\n    }',  # nested
        '    {\n      "loss": [1, 2],\n      "step": 1\n    }',  # a list
        '    {\n      "loss": 0.5,\n      "step": 1\n    },\n    {\n      "loss": true,\n      "step": 2\n    }',  # bool then number
        '    {\n      "loss": 0.5,\n      "step": 1\n    },\n    7',  # an entry that is not an object
        '    {\n      "loss": 0.5,\n      "step": 1\n    }, {\n      "loss": 0.6,\n      "step": 2\n    }',  # odd layout
    ],
)
def test_other_trainer_states_leave_the_fast_path(tmp_path, monkeypatch, entries):
    f = tmp_path / "trainer_state.json"
    f.write_text(_state_text(entries))
    assert trainer_state._arrow_history(f, f.read_bytes()) is None
    assert trainer_state.read(f)  # the json path still reads them


def test_trainer_state_fast_path_needs_one_log_history(tmp_path):
    entry = '    {\n      "loss": 0.5,\n      "step": 1\n    }'
    twice = _state_text(entry).replace('"max_steps": 2', '"log_history": [\n' + entry.replace("0.5", "0.9") + '\n  ]')
    f = tmp_path / "trainer_state.json"
    f.write_text(twice)
    assert trainer_state._arrow_history(f, f.read_bytes()) is None
    (run,) = trainer_state.read(f)  # json keeps the last log_history
    assert run.series[0].values.tolist() == [0.9]


@pytest.mark.corpus
@pytest.mark.parametrize(
    "rel",
    [
        "trl-grpo-chaos-economy/commit_7138430/trainer_state.json",  # TRL GRPOTrainer
        "trl-grpo-chaos-economy/training_logs.json",  # the same kind of state under another name
        "control-hf-trainer-tb-layout/trainer_state.json",  # transformers Trainer (SFT)
    ],
)
def test_real_trainer_states_take_the_fast_path_with_the_same_result(corpus_dir, monkeypatch, rel):
    path = corpus_dir / rel
    if not path.exists():
        pytest.skip(f"{rel} is absent")
    fast = trainer_state._arrow_history(path, path.read_bytes())
    assert fast is not None, "a state written by transformers takes the pyarrow path"
    monkeypatch.setattr(trainer_state, "_arrow_history", lambda p, data: None)
    (slow,) = trainer_state.read(path)
    _runs_equal(fast, slow)
