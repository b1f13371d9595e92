"""The console-log readers of what a training printed (``python train.py | tee train.log``): the
HF Trainer / TRL log dicts (:mod:`ppo_doctor.ingest.readers.hf_console`) and SB3's ``verbose=1``
tables (:mod:`ppo_doctor.ingest.readers.sb3_console`).

Every input is built at test time: printed lines following docs/sources.md#hf-trainer-console-logs
and docs/sources.md#sb3-console-tables, and the console output of a real ``transformers.Trainer``
(a tiny GPT-2 built from a config, nothing downloaded) and of a real SB3 PPO on CartPole-v1.
"""

from __future__ import annotations

import contextlib
import math
from pathlib import Path
from typing import Any

import pytest

import hostile_inputs as h
import ppo_doctor
from ppo_doctor import ingest
from ppo_doctor.errors import LogReadError
from ppo_doctor.ingest.base import read_head
from ppo_doctor.ingest.readers import hf_console, sb3_console

BAR = "\r{pct:3d}%|{fill:<10}| {n}/6 [00:0{n}<00:05,  1.23it/s]"


def bar(n: int) -> str:
    """tqdm's progress bar redrawn to step ``n`` of 6, then cleared for a ``tqdm.write``."""
    return "".join(BAR.format(pct=100 * k // 6, fill="#" * (10 * k // 6), n=k) for k in range(n + 1)) + "\r" + " " * 40 + "\r"


def write(path: Path, lines: list[str], end: str = "\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + end, encoding="utf-8")
    return path


def series(run: Any, tag: str, *, eval_: bool = False) -> tuple[list[int], list[float]]:
    """(steps, values) of one tag of a RawRun."""
    (s,) = [s for s in (run.eval_series if eval_ else run.series) if s.tag == tag]
    return s.steps.tolist(), s.values.tolist()


def messages(run: Any) -> str:
    return " | ".join(i.message for i in run.issues)


# ---------------------------------------------------------------------------------------------
# HF Trainer / TRL console dicts
# ---------------------------------------------------------------------------------------------
HF_LINES = [
    "Some weights of GPT2LMHeadModel were not initialized from the model checkpoint and are newly initialized",
    "{'model': 'tiny-gpt2', 'learning_rate': 1e-06}",  # the script's own print of a dict: no row
    # transformers 5: ProgressCallback prints floats as f"{v:.4g}" strings
    bar(1) + "{'loss': '0.0123', 'grad_norm': 'nan', 'learning_rate': '1e-06', 'rewards/accuracy_reward/mean': '0.25', "
    "'reward': '0.25', 'kl': '0.0004', 'epoch': '0.02'}",
    # a plain print (PrinterCallback, older releases): nan, numpy 2 scalars, lists
    bar(2) + "\x1b[A{'loss': 0.011, 'grad_norm': nan, 'learning_rate': 1e-06, 'reward': np.float64(0.5), 'kl': inf, "
    "'tags': ['a', 'b'], 'epoch': 0.04}",
    "{'eval_loss': 0.5, 'eval_reward': np.float64(0.3), 'eval_runtime': 0.12, 'epoch': 0.04}",
    "/usr/lib/python3/site-packages/trl/trainer/grpo_trainer.py:123: UserWarning: something {odd}",
    bar(3) + "{'loss': -inf, 'grad_norm': 1.5, 'learning_rate': 1e-06, 'reward': 0.75, 'kl': 0.002, 'epoch': 0.06}",
    "{'ppo_doctor': 'PD101 kl-above-band from step 3', 'epoch': 0.06}",
    "{'loss': '0.2', 'grad_norm': np.float32(2.5), 'learning_rate': '1e-06', 'reward': '1', 'kl': '0.003', 'epoch': '0.08'}",
    "{'train_runtime': '3.2', 'train_samples_per_second': '10.1', 'train_steps_per_second': '1.25', 'train_loss': '0.05', 'epoch': '0.08'}",
    bar(4) + "{'loss': 0.3, 'grad_n",  # cut while it was written
]


def test_hf_console_reads_the_printed_dicts_between_bars_and_other_prints(tmp_path):
    f = write(tmp_path / "train.log", HF_LINES, end="")
    assert hf_console.sniff(f, read_head(f)) and ingest.sniff(f).NAME == "hf_console"
    (run,) = hf_console.read(f)
    steps, loss = series(run, "loss")
    assert steps == [1, 2, 3, 4] and loss == [0.0123, 0.011, -math.inf, 0.2]
    _, grad = series(run, "grad_norm")
    assert math.isnan(grad[0]) and math.isnan(grad[1]) and grad[2:] == [1.5, 2.5]
    assert series(run, "reward") == ([1, 2, 3, 4], [0.25, 0.5, 0.75, 1.0])
    assert series(run, "kl")[1][1] == math.inf
    assert series(run, "rewards/accuracy_reward/mean") == ([1], [0.25])
    assert {s.tag for s in run.series} == {"loss", "grad_norm", "learning_rate", "reward", "kl", "epoch", "rewards/accuracy_reward/mean"}
    # the evaluation printed after the second training row is at its step; epoch is no eval metric
    assert series(run, "eval_loss", eval_=True) == ([2], [0.5])
    assert series(run, "eval_reward", eval_=True) == ([2], [0.3])
    assert {s.tag for s in run.eval_series} == {"eval_loss", "eval_reward", "eval_runtime"}
    # the summary row is config, the doctor's own row is skipped
    assert run.config["train_runtime"] == 3.2 and run.config["train_loss"] == 0.05
    assert hf_console.STEP_NOTE in messages(run)
    assert "non-numeric fields ignored: tags" in messages(run)
    (partial,) = [i for i in run.issues if "partial last line" in i.message]
    assert partial.level == "error" and partial.offset == f.read_bytes().rindex(b"\n") + 1
    # the line of each point, for findings that point at it
    (loss_series,) = [s for s in run.series if s.tag == "loss"]
    assert loss_series.lines.tolist() == [3, 4, 7, 9]


def test_hf_console_loaded_as_a_run_with_the_trainer_names_mapped(tmp_path):
    f = write(tmp_path / "run" / "train.log", HF_LINES)
    (run,) = ppo_doctor.load_runs(f.parent)
    assert run.format == "hf_console"
    assert run.mapping["loss"] == "loss/total" and run.mapping["grad_norm"] == "grad/norm" and run.mapping["learning_rate"] == "opt/lr"
    assert run.series("loss/total").index.tolist() == [1, 2, 3, 4]


def test_hf_console_row_split_by_a_progress_bar_keeps_its_place(tmp_path):
    # a pipe buffers stdout: the bar (stderr) is drawn between the halves of a printed row
    lines = [
        "{'loss': 1.0, 'epoch': 0.1}",
        "{'loss': 2.0, 'ep" + bar(2) + "och': 0.2}",
        "{'eval_loss': 1.5, 'epoch': 0.2}",
        "{'loss': 3.0, 'epoch': 0.3}",
    ]
    f = write(tmp_path / "train.log", lines)
    (run,) = hf_console.read(f)
    assert series(run, "loss") == ([1, 3], [1.0, 3.0])
    assert series(run, "eval_loss", eval_=True) == ([2], [1.5])
    (lost,) = [i for i in run.issues if "split by other output" in i.message]
    assert lost.offset == len(lines[0]) + 1


def test_hf_console_uses_a_printed_step_and_never_evaluates_the_text(tmp_path):
    marker = tmp_path / "PWNED"
    lines = [
        f"{{'loss': __import__('os').system('touch {marker}'), 'step': 10, 'epoch': 0.1}}",
        "{'loss': 0.5, 'step': 20, 'epoch': 0.2}",
        "{'loss': 0.25, 'step': 30, 'epoch': 0.3}",
    ]
    (run,) = hf_console.read(write(tmp_path / "train.log", lines))
    assert not marker.exists()
    assert series(run, "loss") == ([20, 30], [0.5, 0.25])
    assert hf_console.STEP_NOTE not in messages(run)


def test_hf_console_sniffs_rows_after_a_long_preamble_only_in_console_named_files(tmp_path):
    preamble = ["Loading checkpoint shards: " + bar(6)] * 200  # over the 4 KiB head
    rows = ["{'loss': 1.0, 'epoch': 0.1}", "{'loss': 0.9, 'epoch': 0.2}"]
    log = write(tmp_path / "train.log", preamble + rows)
    assert len(read_head(log)) == 4096 and hf_console.sniff(log, read_head(log))
    other = write(tmp_path / "train.dat", preamble + rows)
    assert not hf_console.sniff(other, read_head(other))
    one = write(tmp_path / "one.log", ["{'loss': 1.0, 'epoch': 0.1}", "done"])
    assert not hf_console.sniff(one, read_head(one))  # one printed dict is no log
    # a terminal capture pasted into Markdown is console-named by its stem; a README is not
    md = write(tmp_path / "run_terminal.md", ["```text", *preamble, *rows, "```"])
    readme = write(tmp_path / "README.md", ["```text", *preamble, *rows, "```"])
    assert hf_console.sniff(md, read_head(md)) and not hf_console.sniff(readme, read_head(readme))


def test_hf_console_without_rows_is_a_read_error_naming_the_file(tmp_path):
    f = write(tmp_path / "train.log", ["{'model': 'gpt2'}", "nothing else"])
    with pytest.raises(LogReadError) as exc:
        hf_console.read(f)
    assert exc.value.path == str(f)


# ---------------------------------------------------------------------------------------------
# Stable-Baselines3 stdout tables
# ---------------------------------------------------------------------------------------------
def sb3_table(kvs: dict[str, Any], max_length: int = 36) -> list[str]:
    """A table as SB3's ``HumanOutputFormat.write`` prints it (docs/sources.md#sb3-console-tables)."""

    def cut(text: str) -> str:
        return text[: max_length - 3] + "..." if len(text) > max_length else text

    cells: dict[tuple[str, str], str] = {}
    tag = ""
    for key, value in sorted(kvs.items()):
        text = f"{value:<8.3g}" if isinstance(value, float) else str(value)
        if key.find("/") > 0:
            tag = key[: key.find("/") + 1]
            cells[(tag, cut(tag))] = ""
        if tag and tag in key:
            key = "   " + key[len(tag) :]
        cells[(tag, cut(key))] = cut(text)
    kw = max(len(k) for _, k in cells)
    vw = max(len(v) for v in cells.values())
    dashes = "-" * (kw + vw + 7)
    return [dashes, *(f"| {k}{' ' * (kw - len(k))} | {v}{' ' * (vw - len(v))} |" for (_, k), v in cells.items()), dashes]


def rollout(step: int, rew: float, kl: float | None = None) -> dict[str, Any]:
    kvs: dict[str, Any] = {"rollout/ep_len_mean": rew, "rollout/ep_rew_mean": rew, "time/fps": 1234, "time/iterations": step // 512,
                           "time/time_elapsed": 3, "time/total_timesteps": step}
    if kl is not None:
        kvs.update({"train/approx_kl": kl, "train/clip_fraction": 0.05, "train/entropy_loss": -0.68, "train/learning_rate": 0.0003,
                    "train/some_very_long_custom_metric_name_that_is_cut": 1.0})
    return kvs


def test_sb3_console_reads_whole_tables_between_other_prints(tmp_path):
    broken = sb3_table(rollout(2560, 40.0, 0.004))
    lines = [
        "Using cpu device",
        "Wrapping the env with a `Monitor` wrapper",
        *sb3_table(rollout(512, 22.5)),
        "my own print | with a bar",
        *sb3_table(rollout(1024, float("nan"), 0.0087)),
        "Eval num_timesteps=1024, episode_reward=9.20 +/- 0.75",
        "New best mean reward!",
        *sb3_table({"eval/mean_ep_length": 9.2, "eval/mean_reward": 9.2, "time/total_timesteps": 1024}),
        "\r 50%|#####     | 1536/3072 [00:01<00:01]\x1b[A\r" + sb3_table(rollout(1536, 30.25, 0.0061))[0],
        *sb3_table(rollout(1536, 30.25, 0.0061))[1:],
        *broken[:4], "UserWarning: a print inside a table", *broken[4:],
        *sb3_table(rollout(3072, 1.23456e5, 0.0035)),
        *sb3_table(rollout(3584, 60.0, 0.003))[:5],  # the job was killed
    ]
    f = write(tmp_path / "train.log", lines)
    assert sb3_console.sniff(f, read_head(f)) and ingest.sniff(f).NAME == "sb3_console"
    (run,) = sb3_console.read(f)
    steps, rew = series(run, "rollout/ep_rew_mean")
    assert steps == [512, 1024, 1536, 3072] and rew[0] == 22.5 and math.isnan(rew[1]) and rew[2:] == [30.2, 1.23e5]  # %-8.3g
    assert series(run, "train/approx_kl") == ([1024, 1536, 3072], [0.0087, 0.0061, 0.0035])
    assert series(run, "eval/mean_reward", eval_=True) == ([1024], [9.2])
    assert "time/total_timesteps" not in {s.tag for s in run.series}
    (cut,) = [s.tag for s in run.series if s.tag.startswith("train/some_very_long")]
    assert cut.endswith("...") and len(cut) == len("train/") + 33
    text = messages(run)
    assert "cut by the logger's max_length" in text and "broken by other output" in text
    (partial,) = [i for i in run.issues if "partial table" in i.message]
    assert partial.level == "error" and partial.offset == f.read_text().index("\n".join(sb3_table(rollout(3584, 60.0, 0.003))[:5]))


def test_sb3_console_loaded_with_the_sb3_names_mapped(tmp_path):
    lines = [line for k in range(1, 5) for line in sb3_table(rollout(512 * k, 20.0 + k, 0.01 / k if k > 1 else None))]
    (run,) = ppo_doctor.load_runs(write(tmp_path / "sb3" / "stdout.txt", lines))
    assert run.format == "sb3_console" and run.framework == "sb3"
    assert run.series("reward/score").index.tolist() == [512, 1024, 1536, 2048]
    assert run.series("kl/old").index.tolist() == [1024, 1536, 2048]


def test_sb3_console_other_step_keys_the_order_and_a_text_without_tables(tmp_path):
    # OpenAI baselines' tables: ungrouped keys, the step column its progress.csv would give
    lines = sb3_table({"eprewmean": 1.5, "nupdates": 10}) + sb3_table({"eprewmean": 2.5, "nupdates": 20})
    (run,) = sb3_console.read(write(tmp_path / "baselines.log", lines))
    assert series(run, "eprewmean") == ([10, 20], [1.5, 2.5]) and sb3_console.STEP_NOTE not in messages(run)
    lines = sb3_table({"eprewmean": 1.5, "fps": 100}) + sb3_table({"eprewmean": 2.5, "fps": 90})
    (run,) = sb3_console.read(write(tmp_path / "custom.log", lines))
    assert series(run, "eprewmean") == ([1, 2], [1.5, 2.5]) and sb3_console.STEP_NOTE in messages(run)
    f = write(tmp_path / "train.log", ["| a | b |", "----", "nothing"])
    with pytest.raises(LogReadError) as exc:
        sb3_console.read(f)
    assert exc.value.path == str(f)


# ---------------------------------------------------------------------------------------------
# the other readers keep their files
# ---------------------------------------------------------------------------------------------
def test_the_other_readers_still_win_on_their_files(tmp_path):
    rows = [f'{{"loss": {0.5 / k}, "epoch": {k / 10}, "step": {k}}}' for k in range(1, 6)]  # JSON lines with an epoch
    for name in ("metrics.jsonl", "train.log"):
        f = write(tmp_path / "run_jsonl" / name, rows)
        assert ingest.sniff(f).NAME == "jsonl", name
    (tmp_path / "run_verl").mkdir()
    verl = h.verl_console(12).write(tmp_path / "run_verl" / "train.log")  # its config is a printed dict
    assert ingest.sniff(verl).NAME == "verl_console"
    (tmp_path / "run_hf").mkdir()
    state = h.trainer_state(6).write(tmp_path / "run_hf" / "trainer_state.json")
    assert ingest.sniff(state).NAME == "trainer_state"
    (tmp_path / "run_sb3").mkdir()
    csv = h.csv(6).write(tmp_path / "run_sb3" / "progress.csv")
    assert ingest.sniff(csv).NAME == "csv_logs"
    runs = {r.id: r.format for r in ppo_doctor.load_runs(tmp_path)}
    assert runs == {"run_jsonl": "jsonl", "run_verl": "verl_console", "run_hf": "trainer_state", "run_sb3": "csv_logs"}


def test_analyze_a_folder_of_console_logs_gives_a_report(tmp_path):
    write(tmp_path / "grpo" / "train.log", HF_LINES)
    lines = [line for k in range(1, 31) for line in sb3_table(rollout(512 * k, 20.0 + k, 0.01 if k > 1 else None))]
    write(tmp_path / "ppo" / "train.log", lines)
    report = ppo_doctor.analyze(tmp_path)
    assert sorted(r.run.format for r in report.runs) == ["hf_console", "sb3_console"]
    assert all(r.verdict in ("healthy", "unhealthy", "unknown") and r.verdict_reason for r in report.runs)
    assert not [e for e in report.errors if e.level == "error"]


# ---------------------------------------------------------------------------------------------
# real trainers' console output
# ---------------------------------------------------------------------------------------------
def test_a_real_transformers_trainer_console_log(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=64, n_positions=16, n_embd=16, n_layer=1, n_head=2))
    data = [{"input_ids": ids, "labels": ids} for ids in torch.randint(0, 64, (48, 12))]
    args = TrainingArguments(
        output_dir=str(tmp_path / "out"), max_steps=12, logging_steps=1, per_device_train_batch_size=8, learning_rate=1e-3,
        report_to=[], save_strategy="no", use_cpu=True, disable_tqdm=False, eval_strategy="steps", eval_steps=5,
    )
    log = tmp_path / "run" / "train.log"
    log.parent.mkdir()
    with open(log, "w") as fh, contextlib.redirect_stdout(fh), contextlib.redirect_stderr(fh):
        trainer = Trainer(model=model, args=args, train_dataset=data, eval_dataset=data[:16])
        trainer.train()
    (run,) = ppo_doctor.load_runs(log.parent)
    assert run.format == "hf_console"
    history = [row for row in trainer.state.log_history if "loss" in row]
    for raw, metric in (("loss", "loss/total"), ("grad_norm", "grad/norm"), ("learning_rate", "opt/lr")):
        got = run.series(metric)
        assert got.index.tolist() == list(range(1, 13)), metric
        assert got.tolist() == pytest.approx([row[raw] for row in history], rel=1e-3), metric  # printed with 4 digits
    evals = [row["step"] for row in trainer.state.log_history if "eval_loss" in row]
    assert run.eval_frame is not None and run.eval_frame.series("loss/total").index.tolist() == evals == [5, 10, 12]
    assert run.raw_config.get("train_runtime") is not None


def test_a_real_sb3_ppo_console_log(tmp_path):
    torch = pytest.importorskip("torch")
    gym = pytest.importorskip("gymnasium")
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO
    from stable_baselines3.common.logger import configure

    torch.set_num_threads(1)
    log = tmp_path / "console" / "train.log"
    log.parent.mkdir()
    with open(log, "w") as fh, contextlib.redirect_stdout(fh):
        model = PPO("MlpPolicy", gym.make("CartPole-v1"), n_steps=512, seed=0, device="cpu", verbose=1)
        model.set_logger(configure(str(tmp_path / "csv"), ["stdout", "csv"]))  # the same values as progress.csv too
        model.learn(4096)
    (run,) = ppo_doctor.load_runs(log.parent)
    (csv,) = ppo_doctor.load_runs(tmp_path / "csv")
    assert run.format == "sb3_console" and csv.format == "csv_logs"
    assert run.series("reward/score").index.tolist() == list(range(512, 4097, 512))
    assert run.series("kl/old").index.tolist() == list(range(1024, 4097, 512))
    for metric in ("reward/score", "kl/old", "loss/value"):
        got, full = run.series(metric), csv.series(metric)
        assert got.index.tolist() == full.index.tolist(), metric
        assert got.tolist() == pytest.approx(full.tolist(), rel=6e-3), metric  # %-8.3g: 3 significant digits


def test_windows_line_ends(tmp_path):
    hf = tmp_path / "hf.log"
    hf.write_bytes(b"\r\n".join(line.encode() for line in HF_LINES[:9]) + b"\r\n")
    (run,) = hf_console.read(hf)
    assert series(run, "loss")[0] == [1, 2, 3, 4] and "split by other output" not in messages(run)
    sb3 = tmp_path / "sb3.log"
    sb3.write_bytes(b"\r\n".join(line.encode() for k in (1, 2) for line in sb3_table(rollout(512 * k, 20.0, 0.01))) + b"\r\n")
    (run,) = sb3_console.read(sb3)
    assert series(run, "train/approx_kl") == ([512, 1024], [0.01, 0.01])


def test_sample_factory_console_reads_each_reward_at_its_reports_frames(tmp_path):
    from ppo_doctor.ingest.readers import sample_factory_console

    lines = ["[2025-07-03 17:19:26,118][07522] Saving configuration to ./train_dir/x/config.json..."]
    for i, frames in enumerate([0, 0, 4096, 8192, 12288]):
        lines.append(f"[2025-07-03 17:19:3{i},983][07522] Fps is (10 sec: nan, 60 sec: nan, 300 sec: nan). Total num frames: {frames}. Throughput: 0: nan. Samples: 0. Policy #0 lag: (min: -1.0, avg: -1.0, max: -1.0)")
        if i:  # the first report comes before any episode has finished
            lines.append(f"[2025-07-03 17:19:3{i},983][07522] Avg episode reward: [(0, '{-100.0 + 10 * i:.3f}'), (1, '{float(i):.3f}')]")
    log = write(tmp_path / "sf_log.txt", lines)
    assert sample_factory_console.sniff(log, read_head(log))
    (raw,) = sample_factory_console.read(log)
    series = {s.tag: s for s in raw.series}
    assert series["reward/reward"].steps.tolist() == [0, 4096, 8192, 12288]
    assert series["reward/reward"].values.tolist() == [-90.0, -80.0, -70.0, -60.0]
    assert series["policy_1/reward/reward"].values.tolist() == [1.0, 2.0, 3.0, 4.0]
    (run,) = ppo_doctor.load_runs(tmp_path)
    assert run.frame.has("reward/score") and run.format == "sample_factory_console"
