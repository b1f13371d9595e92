"""``ppo-doctor metrics`` through run_cli (tests/cli_invoke.py), and every corpus folder end to end."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from cli_invoke import run_cli
from ppo_doctor.pipeline import load

SUMMARY = re.compile(r"^run (?P<id>\S+): (?P<fmt>[\w+]+), (?P<fw>\w+), steps (?P<a>-?\d+)\.\.(?P<b>-?\d+), (?P<n>\d+) metrics \((?P<m>\d+) mapped\), (?P<p>\d+) points, (?P<w>\d+) warnings?$", re.M)


def invoke(*args: str):
    return run_cli(["metrics", *args], catch_exceptions=False)


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    """A TRL-style JSONL run and an SB3-style CSV run."""
    trl = tmp_path / "trl_run"
    trl.mkdir()
    rows = [{"step": s, "objective/kl": 0.1 * s, "objective/scores": 1.0 + s, "lr": 1e-5, "custom/thing": 3} for s in range(5)]
    (trl / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (trl / "config.json").write_text(json.dumps({"kl_coef": 0.05, "learning_rate": 1e-5}))
    sb3 = tmp_path / "sb3"
    sb3.mkdir()
    (sb3 / "progress.csv").write_text(
        "time/total_timesteps,rollout/ep_rew_mean,train/approx_kl,train/entropy_loss\n2048,-5,,\n4096,-4,0.01,-0.6\n6144,-3,0.02,nan\n"
    )
    return tmp_path


def test_text_output_has_a_summary_line_per_run(logdir):
    res = invoke(str(logdir))
    assert res.exit_code == 0, res.output
    lines = {m["id"]: m for m in SUMMARY.finditer(res.output)}
    assert set(lines) == {"sb3", "trl_run"}
    trl = lines["trl_run"]
    assert (trl["fmt"], trl["a"], trl["b"], trl["n"], trl["p"]) == ("jsonl", "0", "4", "4", "20")
    assert int(trl["m"]) >= 2  # objective/kl and objective/scores have canonical names
    sb3 = lines["sb3"]
    assert (sb3["fmt"], sb3["a"], sb3["b"], sb3["p"]) == ("csv_logs", "2048", "6144", "7")
    assert "custom/thing" in res.output and "<- objective/kl" in res.output
    assert "config:" in res.output


def test_json_output_is_a_stable_document(logdir):
    res = invoke(str(logdir), "--format", "json")
    assert res.exit_code == 0
    doc = json.loads(res.output)
    assert doc["schema_version"] == 1 and doc["errors"] == []
    runs = {r["run"]: r for r in doc["runs"]}
    trl = runs["trl_run"]
    assert trl["steps"] == {"first": 0, "last": 4} and trl["points"] == 20 and trl["format"] == "jsonl"
    assert trl["mapping"]["objective/kl"] == "kl/ref"
    assert "custom/thing" in trl["unmapped"] and trl["metrics"]["custom/thing"] == {"points": 5, "raw_tags": ["custom/thing"], "canonical": False}
    assert trl["raw_config_keys"] >= 2
    sb3 = runs["sb3"]
    kl_metric = sb3["mapping"]["train/approx_kl"]
    assert sb3["metrics"][kl_metric]["points"] == 2  # the empty first-row cell is not a point
    assert sum(m["points"] for m in sb3["metrics"].values()) == sb3["points"] == 7


def test_parallel_jobs_give_the_same_runs(logdir):
    one = json.loads(invoke(str(logdir), "--format", "json").output)
    two = json.loads(invoke(str(logdir), "--format", "json", "--jobs", "2").output)
    assert one == two


def test_errors_are_listed_and_exit_2_when_nothing_is_readable(tmp_path):
    (tmp_path / "broken.jsonl").write_text("{not json\n")
    res = invoke(str(tmp_path))
    assert res.exit_code == 2
    assert "errors (1):" in res.output and "broken.jsonl at byte 0" in res.output
    empty = tmp_path / "empty"
    empty.mkdir()
    res = invoke(str(empty))
    assert res.exit_code == 2 and "no training log found" in res.output
    res = invoke(str(tmp_path / "missing"), "--format", "json")
    assert res.exit_code == 2 and json.loads(res.output)["errors"][0]["message"] == "no such file or directory"


def test_partly_broken_input_still_reports_the_rest(tmp_path):
    good = tmp_path / "a.jsonl"
    good.write_text('{"step": 1, "loss": 1.0}\n{"step": 2, "loss": 0.5}\n{"step": 3, "lo')
    res = invoke(str(good))
    assert res.exit_code == 0
    assert "steps 1..2" in res.output and "partial last line" in res.output


def test_undecodable_file_names_print(tmp_path):
    folder = os.fsencode(str(tmp_path)) + b"/r\xe9"  # a Latin-1 byte: not valid UTF-8
    os.makedirs(folder)
    with open(folder + b"/m\xff.jsonl", "wb") as fh:
        fh.write(b'{"step": 0, "loss": 1}\n')
    res = invoke(str(tmp_path))
    assert res.exit_code == 0 and "run r\\xe9: jsonl" in res.output
    res = invoke(str(tmp_path), "--format", "json")
    assert res.exit_code == 0 and json.loads(res.output)["runs"][0]["run"] == "r\\xe9"


# ---------------------------------------------------------------------------------------------
# the real-log corpus: every folder loads, run counts and points as PROVENANCE.md says
# ---------------------------------------------------------------------------------------------
# folder -> {run id: (first step, last step, points or None)}; ids follow discovery's grouping.
CORPUS_RUNS = {
    "control-colossalai-coati-sft-wandb-offline": {
        "applications/Chat/examples/wandb/offline-run-20230413_033614-x199n1yz": (0, 15, 64),  # 16 rows x loss, lr, epoch, batch_id
    },
    "gail-ppo-cartpole-tf2": {"sample_result/human": (4, None, 1500), "sample_result/ppo": (4, None, 1500)},  # 100 rows x 15
    "rlhfkit-toy-ppo-gpt2": {"runs/run_20250828_211717": (1, 50, 700)},  # 50 steps x 14 metrics, JSONL + TB of one run
    "sb3-chess-ppo-reddyn12": {
        "logs": (10, 1020, 102 * 15),  # root tfevents == progress.csv: 102 rows, 12 TB tags + 3 CSV-only columns
        "logs/PPO_1": (10, 2330, 233 * 12),
        "logs/PPO_2": (10, 1830, 183 * 12),
        "logs/PPO_3": (10, 1320, 132 * 12),
        "logs/PPO_4": (10, 1960, 196 * 12),
        "logs/PPO_5": (50, 100000, 2000 * 12),
        "logs/PPO_6": (50, 6550, 131 * 12),
        "logs/PPO_9": (50, 9150, 183 * 12),
        "logs/PPO_10": (320, 99840, 312 * 12),
    },
    "sb3-jobshop-ppo": {"logs": (2048, 51200, None)},
    "sb3-racer-ppo": {"logs": (2048, 1001472, None)},
    "tf1-a2c-minigrid-stagnant": {"tf1-a2c-minigrid-stagnant": (80, 9680, 121 * 4 + 2 * 5)},  # TB 4 tags x 121 + 5 CSV-only columns x 2 rows
    "tinker-dakota-qwen3": {
        "dakota_rl_training/outputs/tinker_qwen30b": (0, 198, None),
        "dakota_rl_training/outputs/tinker_qwen4b/part1": (0, 297, None),
        "dakota_rl_training/outputs/tinker_qwen4b/part2": (0, 297, None),
    },
    "trl-grpo-chaos-economy": {"commit_7138430": (5, 200, 40 * 32), "trl-grpo-chaos-economy": (5, 250, 50 * 34)},
    "trl-grpo-rho-sweep-qwen35": {
        "results/qwen35/sweep_coarse/rho0.10_seed42": (5, 200, 40 * 24),
        "results/qwen35/sweep_coarse/rho0.70_seed42": (0, 200, 40 * 24 + 800 * 11),  # + rho_grpo_logs.json, 800 micro-step rows
        "results/qwen35/sweep_coarse/rho1.00_seed42": (5, 200, 40 * 24),
        "results/qwen35/sweep_coarse/rho3.00_seed42": (5, 200, 40 * 24),
    },
    "verl-ppo-gsm8k-dstack": {"verl-ppo-gsm8k-dstack": (101, 435, 65 * 335 + 2 * 34)},  # val steps add timing_s/testing, save_checkpoint
}
CORPUS_COUNTS = {  # folders whose runs are checked by count and shape only
    "control-hf-trainer-tb-layout": 1,
    "primerl-dakota-qwen3-0.6b": 2,
    "procgen-starpilot-ppo-conceptppo": 2,
    "sb3-flappybird-ppo": 3,
    "trl-ppo-gpt2-kl-sweep": 12,  # 12 runs; summary.csv and sweep_results.csv are sweep tables, skipped with a note
}


@pytest.mark.corpus
def test_every_corpus_folder_loads(corpus_dir):
    folders = sorted(p.name for p in corpus_dir.iterdir() if p.is_dir())
    assert set(folders) == set(CORPUS_RUNS) | set(CORPUS_COUNTS), "a corpus folder has no expectation here"
    for name in folders:
        result = load(corpus_dir / name)
        got = {r.id: r for r in result.runs}
        want = CORPUS_RUNS.get(name)
        if want is None:
            assert len(got) == CORPUS_COUNTS[name], (name, sorted(got))
        else:
            assert sorted(got) == sorted(want), name
            for rid, (first, last, points) in want.items():
                lo, hi = got[rid].frame.step_range()
                assert lo == first and (last is None or hi == last), (name, rid, lo, hi)
                assert points is None or len(got[rid].frame) == points, (name, rid, len(got[rid].frame))
        errors = [e for e in result.errors if e.level == "error"]
        if name == "trl-ppo-gpt2-kl-sweep":  # one row per run: not training logs (issue 14)
            notes = sorted(Path(e.path).name for e in result.errors if "sweep table" in e.message)
            assert notes == ["summary.csv", "sweep_results.csv"]
        if name == "sb3-chess-ppo-reddyn12":  # PPO_7 and PPO_8 are 40-byte event files
            # read in full, with no metric in them: a warning, not an unreadable log (issue 28:
            # an error there makes check exit 2)
            empty = [e for e in result.errors if "no metric values found" in e.message]
            assert sorted(Path(e.path).name for e in empty) == ["PPO_7", "PPO_8"] and {e.level for e in empty} == {"warning"}
        assert not errors, (name, [str(e) for e in errors])
        render = run_cli(["metrics", str(corpus_dir / name), "--format", "json"], catch_exceptions=False)
        assert render.exit_code == 0 and len(json.loads(render.output)["runs"]) == len(got)


@pytest.mark.corpus
def test_corpus_details(corpus_dir):
    """A few facts from PROVENANCE.md that only a right reading gives."""
    (verl,) = load(corpus_dir / "verl-ppo-gsm8k-dstack").runs
    assert verl.eval_frame is not None and len(verl.eval_frame) == 34
    (racer,) = load(corpus_dir / "sb3-racer-ppo").runs
    assert len(racer.eval_frame) == 200  # 100 EvalCallback rows x 2 eval/* columns
    assert racer.frame.count(racer.mapping["rollout/ep_rew_mean"]) == 489
    runs = {r.id: r for r in load(corpus_dir / "tinker-dakota-qwen3").runs}
    a = runs["dakota_rl_training/outputs/tinker_qwen4b/part1"]
    b = runs["dakota_rl_training/outputs/tinker_qwen4b/part2"]
    assert a.frame.df["step"].nunique() == b.frame.df["step"].nunique() == 298
    assert a.config and "2 runs written to the same file" in " ".join(a.warnings)
