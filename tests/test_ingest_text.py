"""Text-format readers: JSONL / JSON documents, trainer_state.json, CSV, MLflow file store, veRL console.

Every fixture is written at test time, by the real writer where one is installed (MLflow), else
following the layouts of docs/sources.md#sb3-logger-keys (SB3 CSV), docs/sources.md#hf-trainer-logs
(trainer_state.json) and docs/sources.md#verl-metrics (veRL).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppo_doctor.errors import LogReadError
from ppo_doctor.ingest.readers import csv_logs, jsonl, trainer_state, verl_console
from ppo_doctor.ingest.readers import mlflow as mlflow_reader
from ppo_doctor.ingest.base import read_head
from ppo_doctor.pipeline import load


def series(run, tag, *, eval_=False):
    """(steps, values) of one tag of a RawRun."""
    pool = run.eval_series if eval_ else run.series
    hits = [s for s in pool if s.tag == tag]
    assert len(hits) == 1, f"{tag} not found once in {[s.tag for s in pool]}"
    return hits[0].steps.tolist(), hits[0].values.tolist()


def tags(run):
    return sorted(s.tag for s in run.series)


def messages(run):
    return " | ".join(i.message for i in run.issues)


def write_lines(path: Path, lines: list[str], end: str = "\n") -> Path:
    path.write_text("\n".join(lines) + end)
    return path


# ---------------------------------------------------------------------------------------------
# JSONL
# ---------------------------------------------------------------------------------------------
def test_jsonl_steps_nesting_and_nonfinite_tokens(tmp_path):
    f = write_lines(
        tmp_path / "log.jsonl",
        [
            '{"global_step": 10, "loss": 0.5, "ppo": {"policy": {"clipfrac": 0.1}}, "kl": NaN}',
            '{"global_step": 20, "loss": Infinity, "ppo": {"policy": {"clipfrac": 0.2}}, "kl": -Infinity}',
            '{"global_step": 30, "loss": 0.25, "ppo": {"policy": {"clipfrac": 0.3}}, "kl": 0.01}',
        ],
    )
    assert jsonl.sniff(f, read_head(f))
    (run,) = jsonl.read(f)
    assert tags(run) == ["kl", "loss", "ppo/policy/clipfrac"]
    steps, vals = series(run, "loss")
    assert steps == [10, 20, 30] and vals[0] == 0.5 and vals[1] == math.inf
    _, kl = series(run, "kl")
    assert math.isnan(kl[0]) and kl[1] == -math.inf
    assert series(run, "ppo/policy/clipfrac")[1] == [0.1, 0.2, 0.3]
    assert not run.issues


@pytest.mark.parametrize("key", ["step", "_step", "iteration", "train/global_step", "time/total_timesteps"])
def test_jsonl_step_key_variants(tmp_path, key):
    f = write_lines(tmp_path / "m.jsonl", [json.dumps({key: 2 * i, "reward": float(i)}) for i in range(4)])
    (run,) = jsonl.read(f)
    assert series(run, "reward")[0] == [0, 2, 4, 6]
    assert tags(run) == ["reward"]


def test_jsonl_without_step_uses_line_order_and_warns(tmp_path):
    f = write_lines(tmp_path / "m.jsonl", ['{"reward": 1}', '{"reward": 2}', '{"reward": 3}'])
    (run,) = jsonl.read(f)
    assert series(run, "reward")[0] == [0, 1, 2]
    assert "no step key" in messages(run)


def test_jsonl_garbage_and_partial_last_line_are_reported_with_line_and_offset(tmp_path):
    lines = ['{"step": 0, "loss": 1.0}', "not json at all", '{"step": 1, "loss": 0.5}', "", '{"step": 2, "lo']
    f = tmp_path / "cut.jsonl"
    f.write_text("\n".join(lines))  # no newline at the end: the writer was killed mid-line
    (run,) = jsonl.read(f)
    assert series(run, "loss") == ([0, 1], [1.0, 0.5])
    by_line = {i.message.split(":")[0]: i for i in run.issues if i.message.startswith("line")}
    assert by_line["line 2 skipped"].offset == len(lines[0]) + 1
    partial = by_line["line 5 skipped"]
    assert "partial last line" in partial.message
    assert partial.offset == len("\n".join(lines[:4])) + 1
    assert all(i.level == "error" for i in by_line.values())


def test_jsonl_hostile_values_do_not_crash(tmp_path):
    deep = "{" + '"a": {' * 3000 + '"b": 1' + "}" * 3001
    deep_ok = "{" + '"x": {' * 40 + '"y": 1' + "}" * 41
    f = write_lines(
        tmp_path / "h.jsonl",
        [
            '{"step": 0, "big": 1' + "0" * 400 + ', "neg": -1' + "0" * 400 + ', "v": 1}',
            deep,
            '{"step": 1, "big": 2, "neg": -2, "v": 2, "name": "000020"}',
            deep_ok.replace("{", '{"step": 2, ', 1),
            "[1, 2, 3]",
        ],
    )
    (run,) = jsonl.read(f)
    assert series(run, "big")[1] == [math.inf, 2.0]
    assert series(run, "neg")[1] == [-math.inf, -2.0]
    assert "name" not in tags(run)  # a numeric-looking string is not a number
    text = messages(run)
    assert "nesting too deep" in text and "not a JSON object" in text and "nested deeper than" in text


def test_jsonl_verl_file_logger_nulls_are_nan_and_reported(tmp_path):
    f = write_lines(
        tmp_path / "exp.jsonl",
        [
            '{"step": 1, "data": {"actor/pg_loss": 0.1, "actor/kl_loss": null, "critic/score/mean": 1.0, "never": null}}',
            '{"step": 2, "data": {"actor/pg_loss": null, "actor/kl_loss": 0.02, "critic/score/mean": 1.5, "never": null}}',
        ],
    )
    (run,) = jsonl.read(f)
    assert tags(run) == ["actor/kl_loss", "actor/pg_loss", "critic/score/mean"]
    steps, vals = series(run, "actor/pg_loss")
    assert steps == [1, 2] and vals[0] == 0.1 and math.isnan(vals[1])
    text = messages(run)
    assert "2 null value(s)" in text and "orjson" in text and "always null ignored: never" in text


def test_jsonl_nan_token_is_not_confused_with_null(tmp_path):
    f = write_lines(tmp_path / "n.jsonl", ['{"step": 0, "x": NaN, "y": 1}', '{"step": 1, "x": 2.0, "y": 2}'])
    (run,) = jsonl.read(f)
    assert math.isnan(series(run, "x")[1][0])
    assert "null" not in messages(run)


def test_jsonl_a_null_after_the_first_line_is_reported_too(tmp_path):
    # every line has the same keys and the first is all numbers: the lines are converted as one
    # block of numbers, in which numpy reads null as NaN without a word
    rows = [{"step": i, "data": {"actor/kl": 0.01, "critic/score/mean": None if i == 7 else 1.0}} for i in range(20)]
    (run,) = jsonl.read(write_lines(tmp_path / "v.jsonl", [json.dumps(r) for r in rows]))
    assert math.isnan(series(run, "critic/score/mean")[1][7])
    assert "1 null value(s)" in messages(run) and "orjson" in messages(run)


def test_jsonl_texts_of_lines_with_other_keys_are_in_line_order(tmp_path):
    rows = [{"step": i, "completion": f"answer {i}", **({"loss": 1.0} if i % 3 else {})} for i in range(30)]
    (run,) = jsonl.read(write_lines(tmp_path / "t.jsonl", [json.dumps(r) for r in rows]))
    assert [t.text for t in run.texts] == [f"answer {i}" for i in range(30)]
    assert [t.line for t in run.texts] == list(range(1, 31))


def _contents(runs) -> list:
    """What a reader gave, comparable with ==."""
    out = []
    for run in runs:
        cols = [(s.tag, s.steps.tolist(), np.nan_to_num(s.values, nan=-9.0).tolist(), None if s.lines is None else s.lines.tolist()) for s in run.series + run.eval_series]
        texts = [(t.step, t.tag, t.text, t.prompt, t.line, t.reward) for t in run.texts]
        out.append((run.name, cols, texts, list(run.restarts), [(i.message, i.level, i.offset) for i in run.issues]))
    return out


@pytest.mark.parametrize("kind", ["mixed", "verl"])
def test_jsonl_read_block_by_block_is_the_file_read_at_once(tmp_path, monkeypatch, kind):
    # the lines are parsed and made columns a block at a time (issue 39): where the blocks end
    # must change nothing, not the wrapper or time keys the first lines decide, not a line number
    if kind == "verl":
        lines = [json.dumps({"step": i, "data": {"kl": 0.1 * (i % 5), "score": None if i % 9 == 4 else 1.0}}) for i in range(150)]
        lines += [json.dumps({"step": 150 + i, "kl": 0.2, "note": "x"}) for i in range(40)]
    else:
        lines = []
        for i in range(300):
            row = {"step": i // 2 if i % 17 else None, "loss": 1 / (i + 1), "timestamp": 1.7e9 + i, "completion": f"answer {i}"}
            if i % 4 == 0:
                row["prompt"] = f"question {i}"
            if i % 5 == 0:
                del row["loss"]
            lines.append(json.dumps({k: v for k, v in row.items() if v is not None}))
            if i % 11 == 3:
                lines.append(["not json", "", "[1, 2]", lines[-1] + lines[-1], lines[-1][:-4]][i % 5])
        lines[50] = lines[50].replace('"timestamp"', '"kl": NaN, "timestamp"')
        lines.append('{"step": 999, "loss')  # cut short
    f = write_lines(tmp_path / "b.jsonl", lines, end="" if kind == "mixed" else "\n")
    at_once = _contents(jsonl.read(f))
    monkeypatch.setattr(jsonl, "_BLOCK_BYTES", 1)  # every line a block of its own
    assert _contents(jsonl.read(f)) == at_once
    assert ("more damaged line(s)" if kind == "mixed" else "null value(s)") in str(at_once)  # the files hold what they should


def test_jsonl_texts_paired_and_lists(tmp_path):
    f = write_lines(
        tmp_path / "samples.jsonl",
        [
            json.dumps({"step": 3, "reward": 0.5, "prompt": "2+2?", "completion": "4"}),
            json.dumps({"step": 4, "reward": 0.7, "samples": ["a", "b"]}),
        ],
    )
    (run,) = jsonl.read(f)
    assert tags(run) == ["reward"]
    got = sorted((t.step, t.tag, t.text, t.prompt) for t in run.texts)
    assert got == [(3, "completion", "4", "2+2?"), (4, "samples", "a", None), (4, "samples", "b", None)]


def test_jsonl_iso_timestamps_become_wall_time(tmp_path):
    f = write_lines(
        tmp_path / "t.jsonl",
        ['{"timestamp": "2025-08-28T21:17:26.5", "step": 1, "loss": 1}', '{"timestamp": "2025-08-28T21:17:27.5", "step": 2, "loss": 2}'],
    )
    (run,) = jsonl.read(f)
    (s,) = run.series
    assert s.wall_time[1] - s.wall_time[0] == pytest.approx(1.0)
    assert s.wall_time[0] == pytest.approx(pd.Timestamp("2025-08-28T21:17:26.5", tz="UTC").timestamp())
    assert tags(run) == ["loss"] and not run.issues


def test_jsonl_elapsed_time_stays_a_metric(tmp_path):
    f = write_lines(tmp_path / "t.jsonl", ['{"step": 1, "time": 12.5, "loss": 1}', '{"step": 2, "time": 25.0, "loss": 2}'])
    (run,) = jsonl.read(f)
    assert tags(run) == ["loss", "time"] and run.series[0].wall_time is None


def _interleaved_lines() -> list[str]:
    """Two runs appending to one file, in the order seen in corpus tinker_qwen4b."""
    order = [("a", 0), ("a", 1), ("a", 2), ("b", 0), ("b", 1), ("a", 3), ("b", 2), ("a", 4), ("b", 3), ("b", 4)]
    return [json.dumps({"step": s, "reward": s + (100 if r == "b" else 0)}) for r, s in order]


def test_jsonl_two_runs_interleaved_are_split(tmp_path):
    f = write_lines(tmp_path / "metrics.jsonl", _interleaved_lines())
    runs = jsonl.read(f)
    assert [r.name for r in runs] == ["part1", "part2"]
    assert series(runs[0], "reward") == ([0, 1, 2, 3, 4], [0, 1, 2, 3, 4])
    assert series(runs[1], "reward") == ([0, 1, 2, 3, 4], [100, 101, 102, 103, 104])
    assert "2 runs written to the same file" in messages(runs[0])


def test_jsonl_train_and_eval_lines_at_one_step_are_one_run(tmp_path):
    lines = []
    for s in range(6):
        lines.append(json.dumps({"step": s, "loss": 1.0 / (s + 1)}))
        lines.append(json.dumps({"step": s, "eval/loss": 2.0 / (s + 1)}))
    f = write_lines(tmp_path / "m.jsonl", lines + lines[-2:])  # the last two lines written twice
    (run,) = jsonl.read(f)
    assert run.name is None and not run.restarts and not run.issues
    assert series(run, "loss")[0] == [0, 1, 2, 3, 4, 5, 5]
    assert series(run, "eval/loss", eval_=True)[0] == [0, 1, 2, 3, 4, 5, 5]


def test_jsonl_restart_is_kept_last_wins_and_reported(tmp_path):
    steps = list(range(0, 6)) + list(range(3, 8))  # resumed from step 3 and appended
    f = write_lines(tmp_path / "r.jsonl", [json.dumps({"step": s, "loss": float(i)}) for i, s in enumerate(steps)])
    (run,) = jsonl.read(f)
    assert run.name is None and run.restarts == [3]
    assert series(run, "loss")[0] == steps  # every point kept, file order
    assert "step goes back 1 time(s)" in messages(run)


def test_jsonl_disorder_that_is_not_a_clean_split_stays_one_run(tmp_path):
    rng = np.random.default_rng(0)
    steps = rng.permutation(200).tolist()
    f = write_lines(tmp_path / "x.jsonl", [json.dumps({"step": s, "v": 1}) for s in steps])
    (run,) = jsonl.read(f)
    assert run.name is None and len(run.series[0]) == 200


def test_jsonl_sb3_progress_json_and_sibling_config(tmp_path):
    rows = [{"time/total_timesteps": 2048 * (i + 1), "rollout/ep_rew_mean": -10.0 + i, "time/fps": 900} for i in range(3)]
    f = write_lines(tmp_path / "progress.json", [json.dumps(r) for r in rows])
    (tmp_path / "config.json").write_text(json.dumps({"learning_rate": 3e-4, "n_steps": 2048}))
    (run,) = jsonl.read(f)
    assert series(run, "rollout/ep_rew_mean")[0] == [2048, 4096, 6144]
    assert run.config == {"learning_rate": 3e-4, "n_steps": 2048}


def test_json_document_of_arrays(tmp_path):
    doc = {"beta": 0.1, "seed": 42, "rewards_curve": [1.0, 2.0, None], "kl_curve": [0.1, 0.2, 0.3], "short": [1, 2]}
    f = tmp_path / "ppo_metrics.json"
    f.write_text(json.dumps(doc, indent=2))
    assert jsonl.sniff(f, read_head(f)) and not trainer_state.sniff(f, read_head(f))
    (run,) = jsonl.read(f)
    assert tags(run) == ["kl_curve", "rewards_curve"]
    steps, vals = series(run, "rewards_curve")
    assert steps == [0, 1, 2] and math.isnan(vals[2])
    assert run.config == {"beta": 0.1, "seed": 42}
    assert "array position" in messages(run) and "short" in messages(run)


@pytest.mark.parametrize("orient,indent", [("index", 4), ("index", None), ("columns", None), ("columns", 2)])
def test_json_pandas_table_rows_are_records(tmp_path, orient, indent):
    # pd.DataFrame(trainer.state.log_history).to_json(...): the default orient="columns" or
    # orient="index", pretty-printed or not; a row without a value is written as null
    frame = pd.DataFrame({"reward": [-2.0, -1.5, float("inf"), -1.0], "kl": [0.0, 0.01, 0.02, None], "loss": [0.5, 0.4, 0.3, 0.2]})
    f = tmp_path / "train_logs.json"
    frame.to_json(f, orient=orient, indent=indent)
    assert jsonl.sniff(f, read_head(f))
    (run,) = jsonl.read(f)
    assert tags(run) == ["kl", "loss", "reward"]
    steps, vals = series(run, "loss")
    assert steps == [0, 1, 2, 3] and vals == [0.5, 0.4, 0.3, 0.2]
    assert "its row label used as step" in messages(run)


def test_json_pandas_table_with_a_step_column_keeps_its_steps(tmp_path):
    frame = pd.DataFrame({"global_step": [10, 20, 30], "reward": [0.1, 0.2, 0.3]}, index=[5, 6, 7])
    f = tmp_path / "log.json"
    frame.to_json(f, orient="index")
    (run,) = jsonl.read(f)
    assert series(run, "reward") == ([10, 20, 30], [0.1, 0.2, 0.3]) and "row label" not in messages(run)


@pytest.mark.parametrize("indent", [None, 4])
def test_json_array_of_records_is_read(tmp_path, indent):
    # a home-made loop's json.dump(history, f) of one dict per episode (pandas' orient="records"
    # writes the same): the position is the step, nested dicts are flattened
    history = [{"episode": i + 1, "return": float(r), "losses": {"policy": 0.1 * i}} for i, r in enumerate([-315.0, 11.0, -276.0, 40.0])]
    f = tmp_path / "training_log.json"
    f.write_text(json.dumps(history, indent=indent))
    assert jsonl.sniff(f, read_head(f))
    (run,) = jsonl.read(f)
    assert series(run, "return") == ([0, 1, 2, 3], [-315.0, 11.0, -276.0, 40.0])
    assert series(run, "losses/policy")[1][1] == pytest.approx(0.1)
    assert "position used as step" in messages(run)
    stepped = tmp_path / "log.json"
    pd.DataFrame({"global_step": [10, 20, 30], "reward": [0.1, 0.2, 0.3]}).to_json(stepped, orient="records")
    (run,) = jsonl.read(stepped)
    assert series(run, "reward") == ([10, 20, 30], [0.1, 0.2, 0.3]) and "position" not in messages(run)


def test_json_arrays_that_are_not_records_are_not_claimed(tmp_path):
    numbers = tmp_path / "eos.json"
    numbers.write_text("[1, 2, 3]")
    assert not jsonl.sniff(numbers, read_head(numbers))
    one = tmp_path / "one.json"
    one.write_text('[{"reward": 1.0}]')
    with pytest.raises(LogReadError):
        jsonl.read(one)


def test_json_settings_keyed_by_number_are_not_a_table(tmp_path):
    # one entry keyed by a number, or entries holding nested settings, are no table of rows
    one = tmp_path / "trial.json"
    one.write_text(json.dumps({"1": {"lr": 0.1, "beta": 0.05}}, indent=2))
    nested = tmp_path / "trials.json"
    nested.write_text(json.dumps({"1": {"opt": {"lr": 0.1}}, "2": {"opt": {"lr": 0.2}}}, indent=2))
    assert jsonl._frame_rows(json.loads(one.read_text())) is None
    assert jsonl._frame_rows(json.loads(nested.read_text())) is None


def test_jsonl_not_claimed_for_model_files_and_plain_objects(tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"n_layer": 2, "eos_token_id": [1, 2]}, indent=2))
    plain = tmp_path / "settings.json"
    plain.write_text(json.dumps({"a": 1, "b": {"c": "x"}}, indent=2))
    assert not jsonl.sniff(cfg, read_head(cfg))
    assert not jsonl.sniff(plain, read_head(plain))


def test_jsonl_file_without_metrics_reads_empty(tmp_path):
    f = write_lines(tmp_path / "checkpoints.jsonl", ['{"name": "000020", "batch": 20, "state_path": "x"}'] * 2)
    (run,) = jsonl.read(f)
    assert not run.series and not run.issues


def test_jsonl_empty_or_garbage_file_raises_with_path(tmp_path):
    empty = tmp_path / "e.jsonl"
    empty.write_text("\n\n")
    with pytest.raises(LogReadError, match="empty"):
        jsonl.read(empty)
    junk = tmp_path / "j.jsonl"
    junk.write_text("{oops\n")
    with pytest.raises(LogReadError) as err:
        jsonl.read(junk)
    assert err.value.path == str(junk) and err.value.offset == 0


def test_jsonl_fast_and_careful_parsers_agree(tmp_path):
    rng = np.random.default_rng(1)
    lines = [json.dumps({"step": i, "a": float(rng.normal()), "b": {"c": int(rng.integers(9))}}) for i in range(300)]
    clean = write_lines(tmp_path / "clean.jsonl", lines)
    crlf = tmp_path / "crlf.jsonl"
    crlf.write_bytes(("\r\n".join(lines) + "\r\n").encode())  # CRLF takes the per-chunk path
    (a,) = jsonl.read(clean)
    (b,) = jsonl.read(crlf)
    for tag in ("a", "b/c"):
        assert series(a, tag) == series(b, tag)


@pytest.mark.slow
def test_jsonl_speed_at_least_pandas(tmp_path):
    """1,000,000 points (50 tags x 20,000 lines): at least as fast as pandas.read_json(lines=True)."""
    rng = np.random.default_rng(0)
    f = tmp_path / "big.jsonl"
    with open(f, "w") as fh:
        for i in range(20000):
            row = {"step": i}
            row.update({f"m/tag_{j}": float(v) for j, v in enumerate(rng.normal(size=50))})
            fh.write(json.dumps(row) + "\n")
    ours = theirs = math.inf
    for _ in range(3):  # best of three, interleaved, so a busy machine hits both alike
        t = time.perf_counter()
        (run,) = jsonl.read(f)
        ours = min(ours, time.perf_counter() - t)
        t = time.perf_counter()
        pd.read_json(f, lines=True)
        theirs = min(theirs, time.perf_counter() - t)
    assert sum(len(s) for s in run.series) == 1_000_000
    # a regression guard with room for a busy CI machine; the >= 1.0x budget itself is measured
    # side by side in benchmarks/bench_formats.py
    assert ours <= theirs * 1.5, f"jsonl {ours:.3f}s vs pandas {theirs:.3f}s"


# ---------------------------------------------------------------------------------------------
# trainer_state.json
# ---------------------------------------------------------------------------------------------
def _trainer_state(n: int = 4) -> dict:
    hist = [{"epoch": 0.1 * s, "loss": 1.0 / s, "grad_norm": float("nan") if s == 2 else 0.5, "kl": 0.01 * s, "step": s} for s in range(1, n + 1)]
    hist.insert(2, {"epoch": 0.2, "eval_loss": 0.9, "eval_runtime": 1.5, "step": 2})
    hist.append({"epoch": 0.4, "step": n, "total_flos": 0.0, "train_loss": 0.5, "train_runtime": 12.0, "train_samples_per_second": 3.0, "train_steps_per_second": 0.3})
    return {"best_metric": None, "epoch": 0.4, "global_step": n, "log_history": hist, "logging_steps": 1, "max_steps": n, "train_batch_size": 8}


def test_trainer_state_rows_eval_and_summary(tmp_path):
    f = tmp_path / "trainer_state.json"
    f.write_text(json.dumps(_trainer_state(), indent=2, sort_keys=True))  # as transformers writes it
    assert "NaN" in f.read_text()
    assert trainer_state.sniff(f, read_head(f)) and not jsonl.sniff(f, read_head(f))
    (run,) = trainer_state.read(f)
    assert tags(run) == ["epoch", "grad_norm", "kl", "loss"]
    steps, gn = series(run, "grad_norm")
    assert steps == [1, 2, 3, 4] and math.isnan(gn[1])
    assert sorted(s.tag for s in run.eval_series) == ["eval_loss", "eval_runtime"]
    assert series(run, "eval_loss", eval_=True) == ([2], [0.9])
    assert run.config["global_step"] == 4 and run.config["train_batch_size"] == 8
    assert run.config["train_runtime"] == 12.0 and "log_history" not in run.config
    assert not run.issues


def test_trainer_state_bare_list_under_another_name(tmp_path):
    hist = _trainer_state()["log_history"]
    f = tmp_path / "step_logs.json"
    f.write_text(json.dumps(hist, indent=2))
    assert trainer_state.sniff(f, read_head(f))
    (run,) = trainer_state.read(f)
    assert series(run, "loss")[0] == [1, 2, 3, 4] and run.config["train_loss"] == 0.5


def test_trainer_state_cut_short_keeps_complete_entries(tmp_path):
    text = json.dumps(_trainer_state(6), indent=2, sort_keys=True)
    cut = text.index('"step": 5') + 4  # inside the 5th train entry (the eval row came earlier)
    f = tmp_path / "trainer_state.json"
    f.write_text(text[:cut])
    (run,) = trainer_state.read(f)
    assert series(run, "loss")[0] == [1, 2, 3, 4]
    assert run.config["global_step"] == 6  # fields before log_history survive
    (issue,) = [i for i in run.issues if "cut short" in i.message]
    assert issue.level == "error" and 0 < issue.offset < cut


def test_trainer_state_not_json_raises_with_offset(tmp_path):
    f = tmp_path / "trainer_state.json"
    f.write_text('{"global_step": 3, oops')
    with pytest.raises(LogReadError) as err:
        trainer_state.read(f)
    assert err.value.offset is not None and "not valid JSON" in err.value.message


@pytest.mark.slow
def test_trainer_state_written_by_transformers(tmp_path):
    """transformers' own TrainerState.save_to_json (what Trainer calls at each checkpoint)."""
    transformers = pytest.importorskip("transformers")
    state = transformers.TrainerState(global_step=6, max_steps=6, logging_steps=2, train_batch_size=4)
    for step in (2, 4, 6):  # Trainer.log appends {**logs, "step": global_step}
        state.log_history.append({"loss": 1.0 / step, "grad_norm": float("nan") if step == 4 else 0.3, "learning_rate": 1e-5, "epoch": step / 6, "step": step})
        if step % 3 == 0:
            state.log_history.append({"eval_loss": 0.9, "eval_runtime": 0.1, "epoch": step / 6, "step": step})
    state.log_history.append({"train_runtime": 1.0, "train_loss": 0.4, "train_samples_per_second": 9.0, "train_steps_per_second": 6.0, "total_flos": 0.0, "epoch": 1.0, "step": 6})
    out = tmp_path / "checkpoint-6" / "trainer_state.json"
    out.parent.mkdir()
    state.save_to_json(str(out))
    (run,) = trainer_state.read(out)
    assert series(run, "loss")[0] == [2, 4, 6]
    assert math.isnan(series(run, "grad_norm")[1][1])
    assert series(run, "eval_loss", eval_=True) == ([6], [0.9])
    assert run.config["global_step"] == 6 and run.config["train_loss"] == 0.4 and run.config["logging_steps"] == 2


# ---------------------------------------------------------------------------------------------
# CSV
# ---------------------------------------------------------------------------------------------
SB3_HEADER = "time/fps,rollout/ep_rew_mean,rollout/ep_len_mean,time/time_elapsed,time/total_timesteps,time/iterations"
SB3_TRAIN = ",train/approx_kl,train/entropy_loss,train/explained_variance,train/n_updates"


def test_sb3_progress_csv(tmp_path):
    """SB3's CSV logger: first row before any update has empty train/* cells; nan written literally."""
    f = write_lines(
        tmp_path / "progress.csv",
        [
            SB3_HEADER + SB3_TRAIN,
            "1449,-7.86,50.0,0,1024,1,,,,",
            "861,-6.91,50.0,2,2048,2,0.0188,-0.68,nan,10",
            "850,-6.50,51.0,4,3072,3,0.0150,-0.66,0.1,20",
        ],
    )
    assert csv_logs.sniff(f, read_head(f))
    (run,) = csv_logs.read(f)
    assert "time/total_timesteps" not in tags(run)
    assert series(run, "rollout/ep_rew_mean")[0] == [1024, 2048, 3072]
    steps, ev = series(run, "train/explained_variance")
    assert steps == [2048, 3072] and math.isnan(ev[0]) and ev[1] == 0.1  # empty cell != nan
    assert not run.issues


def test_sb3_header_rewritten_mid_file(tmp_path):
    """An interrupted header rewrite leaves a second, longer header line in the file."""
    f = write_lines(
        tmp_path / "progress.csv",
        [
            SB3_HEADER,
            "1449,-7.86,50.0,0,1024,1",
            SB3_HEADER + SB3_TRAIN,
            "861,-6.91,50.0,2,2048,2,0.0188,-0.68,0.5,10",
            SB3_HEADER + SB3_TRAIN,
            "850,-6.50,51.0,4,3072,3,0.0150,-0.66,0.1,20",
        ],
    )
    (run,) = csv_logs.read(f)
    assert series(run, "rollout/ep_rew_mean") == ([1024, 2048, 3072], [-7.86, -6.91, -6.5])
    assert series(run, "train/approx_kl")[0] == [2048, 3072]
    text = messages(run)
    assert "header line changed 1 time(s)" in text and "1 repeated header line(s) skipped" in text


def test_csv_ragged_rows_and_partial_last_line(tmp_path):
    lines = ["step,loss,kl", "0,1.0,0.1", "1,0.9,0.2,999", "2,0.8", "3,0.7,0.3", "4,0.6"]
    f = tmp_path / "metrics.csv"
    f.write_text("\n".join(lines))  # cut in the middle of the last row
    (run,) = csv_logs.read(f)
    assert series(run, "loss")[0] == [0, 2, 3]
    assert series(run, "kl")[0] == [0, 3]
    by = {i.message.split(" ")[3]: i for i in run.issues if "cells than the header" in i.message}
    assert by["more"].offset == len("step,loss,kl\n0,1.0,0.1\n") and "line 3" in by["more"].message
    assert "line 4" in by["fewer"].message
    (partial,) = [i for i in run.issues if "partial last line" in i.message]
    assert partial.offset == len("\n".join(lines[:-1])) + 1


def test_baselines_csv_with_spaces_and_num_episodes_step(tmp_path):
    f = write_lines(
        tmp_path / "progress.csv",
        ["agent acc,entropy loss,kl,mean 100 episode reward,num episodes,value loss", "0.8,0.68,-2.5e-05,25.75,4,21.4", "0.7,0.61,6.1e-06,62.03,354,10.5"],
    )
    (run,) = csv_logs.read(f)
    assert series(run, "mean 100 episode reward")[0] == [4, 354]
    assert "num episodes" not in tags(run)


def test_tensorboard_scalar_export_takes_its_tag_from_the_file_name(tmp_path):
    # TensorBoard's "Download CSV" of one tag: Wall time,Step,Value, the tag only in the name
    f = write_lines(
        tmp_path / "run-walker_v3-tag-scalars_train_return.csv",
        ["Wall time,Step,Value", "1696394223.64,0,49.9", "1696394797.59,8000,34.9", "1696395371.20,16000,61.5"],
    )
    (run,) = csv_logs.read(f)
    assert tags(run) == ["scalars_train_return"]
    assert series(run, "scalars_train_return") == ([0, 8000, 16000], [49.9, 34.9, 61.5])
    assert run.series[0].wall_time is not None and run.series[0].wall_time[0] == pytest.approx(1696394223.64)
    # a renamed export is named by its file's stem
    g = write_lines(tmp_path / "ppo_reward.csv", ["Wall time,Step,Value", "1696394223.64,0,1.0", "1696394797.59,10,2.0"])
    (renamed,) = csv_logs.read(g)
    assert tags(renamed) == ["ppo_reward"]


def test_lightning_metrics_csv_sparse_rows(tmp_path):
    f = write_lines(tmp_path / "metrics.csv", ["epoch,step,train_loss,val_loss", "0,49,0.9,", "0,99,0.8,", "0,99,,0.85", "1,149,0.7,"])
    (run,) = csv_logs.read(f)
    assert series(run, "train_loss") == ([49, 99, 149], [0.9, 0.8, 0.7])
    assert series(run, "val_loss") == ([99], [0.85])
    assert series(run, "epoch")[0] == [49, 99, 99, 149]


@pytest.mark.parametrize("delim", [";", "\t"])
def test_csv_other_delimiters_and_row_index_fallback(tmp_path, delim):
    f = write_lines(tmp_path / "log.tsv", [delim.join(["reward", "loss"]), delim.join(["1", "2"]), delim.join(["3", "4"])])
    assert csv_logs.sniff(f, read_head(f))
    (run,) = csv_logs.read(f)
    assert series(run, "reward") == ([0, 1], [1.0, 3.0])
    assert "row index used as step" in messages(run)


def test_csv_text_columns_and_absolute_wall_time(tmp_path):
    f = write_lines(tmp_path / "runs.csv", ["step,timestamp,status,loss", "1,1700000000.5,ok,1.0", "2,1700000010.5,ok,0.5"])
    (run,) = csv_logs.read(f)
    assert tags(run) == ["loss"]
    assert run.series[0].wall_time.tolist() == [1700000000.5, 1700000010.5]
    assert "non-numeric columns ignored: status" in messages(run)


def test_csv_episode_column_is_the_step_of_a_per_episode_log(tmp_path):
    # a home-made loop's per-episode CSV: Episode, total_reward, epsilon; its restarts are reported
    rows = ["Episode,total_reward,epsilon"] + [f"{e},{e * 2},{1 - e / 10}" for e in (0, 1, 2, 0, 1, 2, 3)]
    (run,) = csv_logs.read(write_lines(tmp_path / "training_log.csv", rows))
    assert series(run, "total_reward")[0] == [0, 1, 2, 0, 1, 2, 3] and run.restarts == [0]
    assert "row index used as step" not in messages(run)


def test_csv_numbers_written_as_tensor_or_numpy_reprs_are_numbers(tmp_path):
    # a home-made loop that logs str(loss) without .item(): the cell is the tensor's repr
    rows = ["episode,total_reward,policy_loss,entropy,note"] + [
        f'{e},{e},"tensor(-2.98{e}, grad_fn=<NegBackward0>)",np.float64(1.5{e}),tensor board' for e in range(4)
    ]
    (run,) = csv_logs.read(write_lines(tmp_path / "training_metrics.csv", rows))
    assert series(run, "policy_loss")[1] == [-2.980, -2.981, -2.982, -2.983]
    assert series(run, "entropy")[1] == [1.50, 1.51, 1.52, 1.53]
    assert "non-numeric columns ignored: note" in messages(run)


def test_csv_long_table_of_several_runs_is_split_by_its_run_column(tmp_path):
    # a notebook's comparison table: arm,step,reward with each arm's steps starting again
    rows = ["arm,step,reward,grad_norm"]
    for arm, n in (("SFT -> RL (shaped)", 5), ("composite", 3), ("typecheck-only", 4)):
        rows += [f"{arm},{s},{s / 10},{s}" for s in range(1, n + 1)]
    f = write_lines(tmp_path / "training_metrics.csv", rows)
    runs = csv_logs.read(f)
    assert [r.name for r in runs] == ["SFT -> RL (shaped)", "composite", "typecheck-only"]
    assert series(runs[1], "reward") == ([1, 2, 3], [0.1, 0.2, 0.3])
    assert "told apart by its 'arm' column" in messages(runs[2]) and "lines 10-13" in messages(runs[2])
    assert not any(r.restarts for r in runs) and "arm" not in "".join(tags(r)[0] for r in runs)


def test_csv_a_phase_column_while_the_steps_keep_counting_is_one_run(tmp_path):
    # a curriculum stage or a warm-up phase names parts of one run, not runs
    rows = ["phase,step,reward"] + [f"{'warmup' if s < 4 else 'main'},{s},{s}" for s in range(1, 9)]
    (run,) = csv_logs.read(write_lines(tmp_path / "log.csv", rows))
    assert run.name is None and series(run, "reward")[0] == list(range(1, 9))
    # and a restart the column does not explain stays one run whose restart is reported
    rows = ["arm,step,reward"] + [f"a,{s},{s}" for s in (1, 2, 3, 1, 2)] + [f"b,{s},{s}" for s in (3, 4)]
    (run,) = csv_logs.read(write_lines(tmp_path / "log2.csv", rows))
    assert run.name is None and run.restarts


def test_csv_does_not_claim_wandb_exports_or_text(tmp_path):
    hist = write_lines(tmp_path / "h.csv", ["_step,_runtime,loss", "0,1.0,0.5"])
    panel = write_lines(tmp_path / "wandb_export.csv", ["Step,run-a - train/kl,run-a - train/kl__MIN", "1,0.1,0.1"])
    prose = write_lines(tmp_path / "notes.txt", ["Logging to logs", "hello, world"])
    for f in (hist, panel, prose):
        assert not csv_logs.sniff(f, read_head(f)), f.name


@pytest.mark.slow
def test_csv_speed_like_pandas(tmp_path):
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(20000, 50)), columns=[f"train/m{j}" for j in range(50)])
    df.insert(0, "time/total_timesteps", np.arange(20000) * 2048)
    f = tmp_path / "progress.csv"
    df.to_csv(f, index=False)
    ours = theirs = math.inf
    for _ in range(3):
        t = time.perf_counter()
        (run,) = csv_logs.read(f)
        ours = min(ours, time.perf_counter() - t)
        t = time.perf_counter()
        pd.read_csv(f)
        theirs = min(theirs, time.perf_counter() - t)
    assert sum(len(s) for s in run.series) == 1_000_000
    # regression guard (see benchmarks/bench_formats.py for the measured ratio)
    assert ours <= theirs * 2.0, f"csv {ours:.3f}s vs pandas {theirs:.3f}s"


# ---------------------------------------------------------------------------------------------
# MLflow file store
# ---------------------------------------------------------------------------------------------
@pytest.fixture
def mlflow_run(tmp_path, monkeypatch):
    """A run written by the real mlflow client into a file store."""
    mlflow = pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # mlflow >= 3.x gates the file store
    monkeypatch.chdir(tmp_path)
    mlflow.set_tracking_uri("file://" + str(tmp_path / "mlruns"))
    mlflow.set_experiment("ppo")
    with mlflow.start_run(run_name="beta-0.05") as active:
        mlflow.log_param("kl_coef", 0.05)
        mlflow.log_param("model", "gpt2")
        for i in range(4):
            mlflow.log_metric("objective/kl", 0.1 * i, step=10 * i)
            mlflow.log_metric("loss", float("nan") if i == 2 else 1.0 / (i + 1), step=10 * i)
        mlflow.log_metric("ratio", float("inf"), step=30)
        run_id = active.info.run_id
    (folder,) = [p for p in (tmp_path / "mlruns").glob(f"*/{run_id}")]
    return folder


def test_mlflow_real_writer(mlflow_run):
    assert mlflow_reader.sniff(mlflow_run, b"")
    (run,) = mlflow_reader.read(mlflow_run)
    assert tags(run) == ["loss", "objective/kl", "ratio"]
    steps, loss = series(run, "loss")
    assert steps == [0, 10, 20, 30] and math.isnan(loss[2]) and loss[3] == 0.25
    assert series(run, "ratio")[1] == [math.inf]
    kl = next(s for s in run.series if s.tag == "objective/kl")
    assert np.all(kl.wall_time > 1e9)
    assert run.config["kl_coef"] == 0.05 and run.config["model"] == "gpt2"
    assert run.config["run_name"] == "beta-0.05" and run.config["mlflow.status"] == "FINISHED"
    assert run.config["mlflow.experiment_name"] == "ppo"
    result = load(mlflow_run.parents[1])  # the whole mlruns/ folder, through discovery
    (loaded,) = result.runs
    assert loaded.format == "mlflow" and len(loaded.frame) == 9 and not result.errors


def test_mlflow_five_and_two_field_lines_and_damage(mlflow_run):
    (mlflow_run / "metrics" / "actor").mkdir()
    (mlflow_run / "metrics" / "actor" / "pg_loss").write_text("1700000000000 0.5 3 train abc123\n1700000000001 -inf 4 train abc123\n")
    (mlflow_run / "metrics" / "legacy").write_text("1700000000000 7.0\ngarbage line here too long\n1700000000005 8\n")
    (run,) = mlflow_reader.read(mlflow_run)
    assert series(run, "actor/pg_loss") == ([3, 4], [0.5, -math.inf])  # step is field 3, not 0
    assert series(run, "legacy") == ([0, 0], [7.0, 8.0])
    (bad,) = [i for i in run.issues if "legacy" in i.path]
    assert bad.offset == len("1700000000000 7.0\n") and "line 2" in bad.message


# ---------------------------------------------------------------------------------------------
# veRL console
# ---------------------------------------------------------------------------------------------
RAY = "\x1b[36m(TaskRunner pid=14640)\x1b[0m "


def test_verl_console_old_format(tmp_path):
    lines = [
        "Job submitted",
        RAY + "{'algorithm': {'adv_estimator': 'gae',",
        RAY + "               'kl_ctrl': {'kl_coef': 0.001, 'type': 'fixed'}},",
        RAY + " 'trainer': {'total_epochs': 15}}",
        RAY + "step:1 - actor/pg_loss:0.019 - actor/ppo_kl:0.000 - critic/vf_loss:nan - val-core/gsm8k/reward/mean@1:0.800",
        RAY + "[prompt] system",
        RAY + "Be helpful.",
        RAY + "[response] 18",
        RAY + "[ground_truth] 18",
        RAY + "[score] 1.0",
        RAY + "step:2 - actor/pg_loss:-0.296 - actor/ppo_kl:-0.001 - critic/vf_loss:0.011",
    ]
    f = write_lines(tmp_path / "verl_demo.log", lines)
    assert verl_console.sniff(f, read_head(f))
    (run,) = verl_console.read(f)
    assert tags(run) == ["actor/pg_loss", "actor/ppo_kl", "critic/vf_loss"]
    steps, vf = series(run, "critic/vf_loss")
    assert steps == [1, 2] and math.isnan(vf[0])
    assert series(run, "val-core/gsm8k/reward/mean@1", eval_=True) == ([1], [0.8])
    assert run.config["algorithm"]["kl_ctrl"]["kl_coef"] == 0.001
    (sample,) = run.texts
    assert (sample.step, sample.text, sample.reward) == (2, "18", 1.0) and "Be helpful." in sample.prompt
    assert "3 decimals" in messages(run)


def test_verl_console_numpy_repr_format(tmp_path):
    f = write_lines(
        tmp_path / "train.log",
        ["step:5 - actor/pg_loss:np.float64(0.0123456) - training/global_step:np.int64(5) - actor/kl_loss:np.float64(nan)"],
    )
    (run,) = verl_console.read(f)
    assert series(run, "actor/pg_loss") == ([5], [0.0123456])
    assert series(run, "training/global_step") == ([5], [5.0])
    assert math.isnan(series(run, "actor/kl_loss")[1][0])
    assert "3 decimals" not in messages(run)


def test_verl_sniff_finds_step_lines_after_a_long_preamble(tmp_path):
    f = tmp_path / "ray.log"
    f.write_text("x" * 80 + "\n" * 1 + ("loading weights ...\n" * 2000) + "step:1 - actor/pg_loss:0.1\n")
    assert verl_console.sniff(f, read_head(f))
    other = write_lines(tmp_path / "other.log", ["INFO starting", "step 1 done"])
    assert not verl_console.sniff(other, read_head(other))


def test_jsonl_samples_file_gives_texts_with_rewards_not_series(tmp_path):
    # several generations per step (the reference loop's samples.jsonl): texts, not a second run
    f = write_lines(
        tmp_path / "samples.jsonl",
        [json.dumps({"step": s, "prompt": f"p{i}", "response": f"r{s}{i}", "reward": s + i / 10}) for s in (1, 10) for i in range(3)],
    )
    (run,) = jsonl.read(f)
    assert run.series == [] and run.name is None
    got = sorted((t.step, t.text, t.prompt, t.reward) for t in run.texts)
    assert got[0] == (1, "r10", "p0", 1.0) and got[-1] == (10, "r102", "p2", pytest.approx(10.2))


def test_verl_console_step_beyond_int64_is_skipped_not_a_crash(tmp_path):
    # found by the atheris fuzz target: a step of 30 digits overflowed the int64 step column
    f = tmp_path / "verl.log"
    f.write_text("step:1 - actor/pg_loss:0.5\nstep:" + "9" * 30 + " - actor/pg_loss:0.7\nstep:2 - actor/pg_loss:0.6\n")
    (run,) = verl_console.read(f)
    (s,) = run.series
    assert s.steps.tolist() == [1, 2] and s.values.tolist() == [0.5, 0.6]


def test_mlflow_step_beyond_int64_is_a_bad_line_not_a_crash(mlflow_run):
    # found by the atheris fuzz target: MLflow steps are Java longs, a longer one overflowed the int64 step column
    metric = mlflow_run / "metrics" / "objective" / "kl"
    metric.write_text(metric.read_text() + "1700000000000 0.9 " + "9" * 25 + "\n")
    (run,) = mlflow_reader.read(mlflow_run)
    kl = next(s for s in run.series if s.tag == "objective/kl")
    assert kl.steps.max() < 2**63 - 1 and 0.9 not in kl.values.tolist()
    assert any("line" in i.message and i.path.endswith("kl") for i in run.issues)


def test_csv_growing_while_read_is_parsed_as_the_snapshot(tmp_path):
    # pandas parses the path itself only while the file still has the size that was read
    f = tmp_path / "progress.csv"
    f.write_text("step,loss\n1,0.5\n2,0.4\n")
    data = f.read_bytes()
    snapshot = csv_logs._Snapshot(f, len(data))
    with open(f, "a") as fh:
        fh.write("3,0.3\n4,0.2\n")  # a live run appends after the read
    df = csv_logs._read_csv(data, snapshot, sep=",", engine="c")
    assert df["step"].tolist() == [1, 2]
    assert csv_logs._read_csv(f.read_bytes(), csv_logs._Snapshot(f, f.stat().st_size), sep=",", engine="c")["step"].tolist() == [1, 2, 3, 4]


def test_iso_times_past_2262_do_not_overflow(tmp_path):
    """pandas >= 3 keeps such a year in seconds; converting it back to nanoseconds overflowed
    (found by the CSV fuzz target: a ``time`` column holding "4096-...")."""
    from ppo_doctor.ingest.readers.jsonl import to_wall_seconds

    secs = to_wall_seconds(["2024-01-01T00:00:00Z", "4096-01-01", "not a time"])
    assert secs[0] == 1704067200.0 and secs[1] == 67090118400.0 and np.isnan(secs[2])
    f = tmp_path / "progress.csv"
    f.write_text("time,step,loss\n4096-01-01,1,0.5\n4096-01-02,2,0.4\n")
    (run,) = csv_logs.read(f)
    assert [s.tag for s in run.series] == ["loss"]


# -- the line each point was read from (SARIF regions and GitHub annotations point at it) ---------


def lines_of(run, tag, *, eval_=False):
    pool = run.eval_series if eval_ else run.series
    (s,) = [s for s in pool if s.tag == tag]
    return None if s.lines is None else s.lines.tolist()


def test_jsonl_points_keep_their_lines_past_blank_damaged_and_run_together_lines(tmp_path):
    f = tmp_path / "metrics.jsonl"
    f.write_text(
        '{"step": 1, "data": {"a": 0.5}}\n\n{"step": 2, "data": {"a": 0.6}}\nnot json\n'
        '{"step": 3, "data": {"a": 0.7}}{"step": 4, "data": {"a": 0.8}}\n{"step": 5, "data": {"a": 0.9, "completion": "hi"}}\n'
    )
    (run,) = jsonl.read(f)
    assert series(run, "a")[0] == [1, 2, 3, 4, 5]
    assert lines_of(run, "a") == [1, 3, 5, 5, 6]
    assert [(t.step, t.line) for t in run.texts] == [(5, 6)]


def test_jsonl_lines_after_a_skipped_long_line_keep_their_numbers(tmp_path, monkeypatch):
    from ppo_doctor.ingest import filebytes

    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", filebytes.WINDOW)
    f = tmp_path / "metrics.jsonl"
    long = '{"step": 2, "a": [' + "0," * filebytes.WINDOW + "0]}"
    f.write_text('{"step": 1, "a": 0.5}\n' + long + '\n{"step": 3, "a": 0.7}\n')
    (run,) = jsonl.read(f)
    assert "line 2 skipped" in messages(run)
    assert series(run, "a")[0] == [1, 3] and lines_of(run, "a") == [1, 3]


@pytest.mark.parametrize(
    "text, lines",
    [
        ("step,a\n1,0.5\n2,0.6\n", [2, 3]),  # the small-file path
        ("step,a,label\n1,0.5,x\n\n2,0.6,y\n", [2, 4]),  # pandas, a blank line skipped
        ('step,a,label\n1,0.5,"x\ny"\n2,0.6,z\n', [3, 4]),  # pandas, a quoted line break: the row's last line
        ("step,a\n1,0.5\nstep,a\n2,0.6\n", [2, 4]),  # row by row: a repeated header skipped
        ("step,a\n1,0.5\n\n2,0.6\n", [2, 4]),  # an all-number table with a blank line leaves pyarrow for pandas
    ],
)
def test_csv_points_keep_the_line_of_their_row(tmp_path, monkeypatch, text, lines):
    f = tmp_path / "progress.csv"
    f.write_text(text)
    if text.endswith("0.6\n") and "\n\n" in text:
        monkeypatch.setattr(csv_logs, "PARSER_IMPORT_BYTES", 0)
        assert csv_logs._arrow_run(f) is None
    (run,) = csv_logs.read(f)
    assert series(run, "a")[0] == [1, 2] and lines_of(run, "a") == lines


def _indented_state(rows: list[dict]) -> str:
    return json.dumps({"global_step": 3, "log_history": rows, "max_steps": 3}, indent=2, sort_keys=True)


def test_trainer_state_points_keep_the_line_that_opens_their_entry(tmp_path):
    rows = [{"loss": 0.5, "step": 1}, {"eval_loss": 0.9, "step": 1}, {"loss": 0.4, "nested": {"x": 1}, "step": 2}, {"loss": 0.3, "step": 3}]
    text = _indented_state(rows)
    f = tmp_path / "trainer_state.json"
    f.write_text(text)
    (run,) = trainer_state.read(f)
    opening = [i + 1 for i, line in enumerate(text.splitlines()) if line == "    {"]
    assert lines_of(run, "loss") == [opening[0], opening[2], opening[3]]
    assert lines_of(run, "eval_loss", eval_=True) == [opening[1]]
    # cut short inside the last entry: the complete ones keep their lines
    f.write_text(text[: text.rindex('"loss": 0.3')])
    (cut,) = trainer_state.read(f)
    assert "cut short" in messages(cut) and lines_of(cut, "loss") == [opening[0], opening[2]]
    # one line: no line tells one entry from another, the location stays the file
    f.write_text(json.dumps({"log_history": rows}))
    assert lines_of(trainer_state.read(f)[0], "loss") is None


def test_a_bare_list_of_trainer_entries_keeps_its_lines_too(tmp_path):
    rows = [{"loss": 0.5, "step": 1}, {"loss": 0.4, "step": 2}]
    f = tmp_path / "step_logs.json"
    text = json.dumps(rows, indent=2)
    f.write_text(text)
    (run,) = trainer_state.read(f)
    assert lines_of(run, "loss") == [i + 1 for i, line in enumerate(text.splitlines()) if line == "  {"] == [2, 6]
