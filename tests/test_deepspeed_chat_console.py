"""The reader of DeepSpeed-Chat step 3's console output
(:mod:`ppo_doctor.ingest.readers.deepspeed_chat_console`).

Every log is built here from the line shapes of ``step3_rlhf_finetuning/main.py`` and its forks
(docs/sources.md#deepspeed-chat-console-logs): the newer ``Epoch: 0 | Step: 12 | ...`` lines, the
older ``epoch: 0|step: 12|...`` ones, the comma-separated lines of forks that log through
``logging``, and ReMax's reward line with more fields.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import hostile_inputs as h
import ppo_doctor
from ppo_doctor import ingest
from ppo_doctor.canonical.frameworks import guess_framework
from ppo_doctor.cli import cli
from ppo_doctor.errors import LogReadError
from ppo_doctor.exits import EXIT_ERROR
from ppo_doctor.ingest.base import read_head
from ppo_doctor.ingest.readers import deepspeed_chat_console as dsc

DASHES = "-" * 85
BAR = "\r{pct:3d}%|{fill:<10}| {n}/4 [00:0{n}<00:04,  1.10it/s]"


def bar(n: int) -> str:
    """A tqdm bar redrawn to ``n`` of 4 on one line, as the generation's progress shows it."""
    return "".join(BAR.format(pct=25 * k, fill="#" * (10 * k // 4), n=k) for k in range(n + 1))


def write(path: Path, lines: list[str], end: str = "\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + end, encoding="utf-8")
    return path


def series(run: Any, tag: str) -> tuple[list[int], list[float]]:
    (s,) = [s for s in run.series if s.tag == tag]
    return s.steps.tolist(), s.values.tolist()


def messages(run: Any) -> str:
    return " | ".join(i.message for i in run.issues)


def new_block(epoch: int, step: int, actor: float, critic: float, reward: float, ema: float | None = None) -> list[str]:
    """One step of the newer main.py: step line, throughput lines, reward line, dashes."""
    reward_line = f"Average reward score: {reward}" + (f" | EMA reward score: {ema}" if ema is not None else "")
    return [
        f"Epoch: {epoch} | Step: {step} | PPO Epoch: 1 | Actor Loss: {actor} | Critic Loss: {critic} | Unsupervised Loss: 0.0",
        "End-to-End => Latency: 21.35s, TFLOPs: 3.14, Samples/sec: 1.50, Time/seq 0.67s, Batch Size: 32, Total Seq. Length: 512",
        "Generation => Latency: 15.52s, Per-token Latency 60.62 ms, TFLOPs: 1.24, BW: 1014.28 GB/sec, Answer Seq. Length: 256",
        "Training   => Latency: 5.83s, TFLOPs: 8.21",
        "Actor Model Parameters => 0.331 B, Critic Model Parameters => 0.331 B",
        reward_line,
        DASHES,
    ]


def old_block(epoch: int, step: int, actor: float, critic: float, reward: float) -> list[str]:
    return [
        f"epoch: {epoch}|step: {step}|ppo_ep: 1|act_loss: {actor}|cri_loss: {critic}|unsuper_loss: 0.0",
        f"average reward score: {reward}",
        DASHES,
        "|E2E latency=3.73s |Gather latency=0.00s (0.00%) |Generate time=2.78s (74.61%) |Training time=0.74s (19.84%)",
    ]


NEW_LOG = [
    "[2024-05-01 10:00:00,000] [INFO] [real_accelerator.py:161:get_accelerator] Setting ds_accelerator to cuda (auto detect)",
    "***** Running training *****",
    "Beginning of Epoch 1/1, Total Generation Batches 3",
    *new_block(0, 0, 0.0361328125, 0.0892333984375, -5.7265625, -5.7265625),
    *new_block(0, 1, 0.03125, 0.078125, -5.5, -5.71),
    *new_block(0, 2, -0.015625, 0.0625, -5.25, -5.69),
]


# ---------------------------------------------------------------------------------------------
# line shapes
# ---------------------------------------------------------------------------------------------
def test_newer_main_py_with_ema(tmp_path):
    f = write(tmp_path / "training.log", NEW_LOG)
    assert dsc.sniff(f, read_head(f)) and ingest.sniff(f).NAME == "deepspeed_chat_console"
    (run,) = dsc.read(f)
    assert series(run, "reward") == ([0, 1, 2], [-5.7265625, -5.5, -5.25])
    assert series(run, "ema_reward") == ([0, 1, 2], [-5.7265625, -5.71, -5.69])
    assert series(run, "actor_loss") == ([0, 1, 2], [0.0361328125, 0.03125, -0.015625])
    assert series(run, "critic_loss") == ([0, 1, 2], [0.0892333984375, 0.078125, 0.0625])
    assert series(run, "unsup_loss") == ([0, 1, 2], [0.0, 0.0, 0.0])
    # the epoch and the PPO epoch are the step's coordinates, not metrics
    assert {s.tag for s in run.series} == {"reward", "ema_reward", "actor_loss", "critic_loss", "unsup_loss"}
    assert not run.restarts and not [i for i in run.issues if i.level != "info"]
    # the line of each point, for findings that point at it
    (reward,) = [s for s in run.series if s.tag == "reward"]
    assert reward.lines.tolist() == [9, 16, 23]


def test_reward_line_without_ema_and_a_step_line_without_the_ppo_epoch(tmp_path):
    lines = [
        "Epoch: 0 | Step: 0 | Actor Loss: 0.5 | Unsupervised Loss: 0.25",
        "Average reward score: 1.5",
        "Reward score running mean: 1.5, var:0.0",
        "Epoch: 0 | Step: 1 | Actor Loss: 0.25 | Unsupervised Loss: 0.125",
        "Average reward score: 2.5",
    ]
    (run,) = dsc.read(write(tmp_path / "training.log", lines))
    assert series(run, "reward") == ([0, 1], [1.5, 2.5])
    assert series(run, "actor_loss") == ([0, 1], [0.5, 0.25])
    assert series(run, "unsup_loss") == ([0, 1], [0.25, 0.125])
    assert {s.tag for s in run.series} == {"reward", "actor_loss", "unsup_loss"}


def test_older_main_py(tmp_path):
    lines = [line for k in range(4) for line in old_block(0, k, 0.25 - k / 16, 0.125 + k / 32, -0.5 + k / 4)]
    f = write(tmp_path / "training.log", lines)
    assert ingest.sniff(f).NAME == "deepspeed_chat_console"
    (run,) = dsc.read(f)
    assert series(run, "actor_loss") == ([0, 1, 2, 3], [0.25, 0.1875, 0.125, 0.0625])
    assert series(run, "critic_loss") == ([0, 1, 2, 3], [0.125, 0.15625, 0.1875, 0.21875])
    assert series(run, "reward") == ([0, 1, 2, 3], [-0.5, -0.25, 0.0, 0.25])
    assert series(run, "unsup_loss")[1] == [0.0] * 4


def test_a_fork_logging_comma_separated_lines_with_tensors(tmp_path):
    prefix = "2024-01-01 12:00:0{k} - INFO - train - "
    lines = []
    for k in range(3):
        lines.append(
            prefix.format(k=k) + f"epoch: 0, step: {k}, ppo_ep: 1, act_loss: tensor({0.5 - k / 8}, device='cuda:0', grad_fn=<DivBackward0>),"
            f"cri_loss: {0.25 + k / 8}, pretrain_loss: 0.0"
        )
        lines.append(prefix.format(k=k) + f"average reward score: {k / 2}")
    f = write(tmp_path / "train.log", lines)
    assert ingest.sniff(f).NAME == "deepspeed_chat_console"
    (run,) = dsc.read(f)
    assert series(run, "actor_loss") == ([0, 1, 2], [0.5, 0.375, 0.25])
    assert series(run, "critic_loss") == ([0, 1, 2], [0.25, 0.375, 0.5])
    assert series(run, "unsup_loss") == ([0, 1, 2], [0.0, 0.0, 0.0])
    assert series(run, "reward") == ([0, 1, 2], [0.0, 0.5, 1.0])
    assert not [i for i in run.issues if i.level != "info"]


def test_remax_reward_line_fields(tmp_path):
    lines = []
    for k in range(3):
        lines += [
            f"Epoch: 1/2 | Step: {k}/477 |  Actor Loss: {0.1 * k} | Unsupervised Loss: 0.0",
            f"Average reward score: {1.0 + k} Average return: {0.5 + k} Average length: {120 + k} Average kl: {0.01 * k} "
            f"Average entropy: {2.0 - k / 10} Max kl: {0.5 * k} Max return: {3.0 + k} KL ratio: {k / 4}",
            DASHES,
        ]
    (run,) = dsc.read(write(tmp_path / "training.log", lines))
    assert series(run, "reward") == ([0, 1, 2], [1.0, 2.0, 3.0])
    assert series(run, "return") == ([0, 1, 2], [0.5, 1.5, 2.5])
    assert series(run, "response_length") == ([0, 1, 2], [120.0, 121.0, 122.0])
    assert series(run, "kl") == ([0, 1, 2], [0.0, 0.01, 0.02])
    assert series(run, "entropy") == ([0, 1, 2], [2.0, 1.9, 1.8])
    assert series(run, "max_kl") == ([0, 1, 2], [0.0, 0.5, 1.0])
    assert series(run, "max_return") == ([0, 1, 2], [3.0, 4.0, 5.0])
    assert series(run, "kl_ratio") == ([0, 1, 2], [0.0, 0.25, 0.5])
    (loaded,) = ppo_doctor.load_runs(tmp_path)
    assert loaded.framework == "deepspeed_chat"
    assert loaded.mapping["kl"] == "kl/ref" and loaded.mapping["response_length"] == "len/response_mean"
    assert loaded.mapping["entropy"] == "policy/entropy" and loaded.mapping["reward"] == "reward/score"
    assert loaded.metric_info["kl/ref"].estimator == "k1"


# ---------------------------------------------------------------------------------------------
# the step axis
# ---------------------------------------------------------------------------------------------
def test_two_epochs_are_laid_end_to_end(tmp_path):
    lines = [line for epoch in range(2) for k in range(3) for line in new_block(epoch, k, 0.1 * k, 0.2, 10 * epoch + k)]
    (run,) = dsc.read(write(tmp_path / "training.log", lines))
    steps, rewards = series(run, "reward")
    assert steps == [0, 1, 2, 3, 4, 5] and rewards == [0, 1, 2, 10, 11, 12]
    assert series(run, "actor_loss")[0] == steps
    assert not run.restarts
    (note,) = [i for i in run.issues if "laid end to end" in i.message]
    assert note.level == "info"


def test_a_restarted_job_appended_is_a_restart_and_the_last_value_wins(tmp_path):
    first = [line for k in range(4) for line in new_block(0, k, 0.1, 0.2, float(k))]
    second = [line for k in range(3) for line in new_block(0, k, 0.1, 0.2, 100.0 + k)]
    (tmp_path / "run").mkdir()
    f = write(tmp_path / "run" / "training.log", first + ["Traceback (most recent call last):", "RuntimeError: CUDA out of memory", *second])
    (raw,) = dsc.read(f)
    assert series(raw, "reward") == ([0, 1, 2, 3, 0, 1, 2], [0.0, 1.0, 2.0, 3.0, 100.0, 101.0, 102.0])
    assert raw.restarts == [0]
    (warning,) = [i for i in raw.issues if "goes back" in i.message]
    assert warning.level == "warning"
    (run,) = ppo_doctor.load_runs(tmp_path / "run")
    assert run.restarts == [0]
    assert run.series("reward/score").to_dict() == {0: 100.0, 1: 101.0, 2: 102.0, 3: 3.0}


def test_a_line_per_ppo_epoch_is_no_restart(tmp_path):
    # forks that print inside the PPO-epoch loop: the same step again with the next PPO epoch
    lines = []
    for k in range(2):
        lines += [f"epoch: 0|step: {k}|ppo_ep: {ep}|act_loss: {k + ep / 10}|cri_loss: 0.5|unsuper_loss: 0.0" for ep in (1, 2)]
        lines.append(f"average reward score: {k}")
    (run,) = dsc.read(write(tmp_path / "training.log", lines))
    assert series(run, "actor_loss") == ([0, 0, 1, 1], [0.1, 0.2, 1.1, 1.2])
    assert series(run, "reward") == ([0, 1], [0.0, 1.0])
    assert not run.restarts


# ---------------------------------------------------------------------------------------------
# what else a console holds
# ---------------------------------------------------------------------------------------------
def test_progress_bars_ansi_and_other_prints_between_the_lines(tmp_path):
    lines = [
        "[2024-05-01 10:00:01,000] [INFO] [launch.py:145:main] WORLD INFO DICT: {'localhost': [0, 1]}",
        "\x1b[32m" + bar(4) + "\x1b[0m",
        "***** Evaluating policy, Epoch 1/1 Step 0/3 *****",
        # a print after a bar that left no line end: the step line follows the bar on its line
        bar(2) + "\x1b[1mEpoch: 0 | Step: 0 | PPO Epoch: 1 | Actor Loss: 0.5 | Critic Loss: 0.25 | Unsupervised Loss: 0.0\x1b[0m",
        "[2024-05-01 10:00:02,000] [INFO] [timer.py:199:stop] epoch=0/micro_step=10/global_step=10, RunningAvgSamplesPerSec=86.7",
        "\x1b[33mAverage reward score: 1.25 | EMA reward score: 1.0\x1b[0m",
        DASHES,
        "epoch: 0, step: 5, lr: 0.1",  # another print with an epoch and a step, no loss item
        "global_epoch: 3 | step: 7 | Actor Loss: 9.0",  # not DeepSpeed-Chat's epoch
        bar(3) + "\r" + " " * 40 + "\rEpoch: 0 | Step: 1 | PPO Epoch: 1 | Actor Loss: 0.375 | Critic Loss: nan | Unsupervised Loss: 0.0",
        "Average reward score: -inf",
        "  File \"main.py\", line 500, in main",
        "ValueError: Average reward score: None",
    ]
    (run,) = dsc.read(write(tmp_path / "training.log", lines))
    assert series(run, "actor_loss") == ([0, 1], [0.5, 0.375])
    assert series(run, "reward") == ([0, 1], [1.25, -math.inf])
    _, critic = series(run, "critic_loss")
    assert critic[0] == 0.25 and math.isnan(critic[1])
    assert not run.restarts
    assert "not 'key: number'" in messages(run)  # None is no number


def test_a_cut_last_line_gives_no_wrong_value(tmp_path):
    lines = NEW_LOG + ["Epoch: 0 | Step: 3 | PPO Epoch: 1 | Actor Loss: 0.0123"]  # "0.0123456" being written
    f = write(tmp_path / "training.log", lines, end="")
    (run,) = dsc.read(f)
    assert series(run, "actor_loss")[0] == [0, 1, 2]
    (partial,) = [i for i in run.issues if "partial last line" in i.message]
    assert partial.level == "error" and partial.offset == f.read_bytes().rindex(b"\n") + 1
    # the reward line of the last step cut short
    f = write(tmp_path / "cut.log", NEW_LOG[:-2] + ["Average reward score: -5.2"], end="")
    (run,) = dsc.read(f)
    assert series(run, "reward") == ([0, 1], [-5.7265625, -5.5]) and series(run, "actor_loss")[0] == [0, 1, 2]
    assert "partial last line" in messages(run)
    # a progress bar without its line end is no cut metric line
    f = write(tmp_path / "bar.log", [*NEW_LOG, bar(2)], end="")
    (run,) = dsc.read(f)
    assert series(run, "reward")[0] == [0, 1, 2] and "partial" not in messages(run)


def test_damaged_steps_and_keys_are_passed_over_with_a_note(tmp_path):
    lines = [
        "Epoch: 0 | Step: " + "9" * 5000 + " | Actor Loss: 1.0",  # more digits than Python converts: no step line
        "Epoch: 0 | Step: " + "9" * 25 + " | Actor Loss: 2.0",  # beyond int64
        "Epoch: 0 | Step: 1 | " + "k" * 100 + ": 3.0 | Actor Loss: 0.5",  # no key that long
        "Average reward score: 1.5",
    ]
    (run,) = dsc.read(write(tmp_path / "training.log", lines))
    assert {s.tag for s in run.series} == {"actor_loss", "reward"}
    assert series(run, "actor_loss") == ([1], [0.5]) and series(run, "reward") == ([1], [1.5])
    text = messages(run)
    assert "beyond int64" in text and "not 'key: number'" in text


def test_a_file_without_step_lines_is_a_read_error_naming_the_file(tmp_path):
    f = write(tmp_path / "training.log", ["***** Running training *****", "Average reward score: 1.0", DASHES])
    with pytest.raises(LogReadError) as exc:
        dsc.read(f)
    assert exc.value.path == str(f)
    assert not dsc.sniff(f, read_head(f))


@pytest.mark.parametrize(
    "lines",
    [
        ["step:1 - actor/pg_loss:0.1 - actor/ppo_kl:0.01", "step:2 - actor/pg_loss:0.2 - actor/ppo_kl:0.02"],  # veRL
        ["{'loss': 0.1, 'grad_norm': 1.0, 'epoch': 0.1}", "{'loss': 0.2, 'grad_norm': 1.0, 'epoch': 0.2}"],  # HF Trainer
        ["-" * 30, "| rollout/           |          |", "|    ep_rew_mean     | 20.5     |", "| time/              |          |",
         "|    total_timesteps | 512      |", "-" * 30],  # SB3 table
        ["In the first epoch: the step size was small, and the actor loss: it went down.",
         "At epoch 3 and step 5 the loss was 0.1; epoch: 2, step: 4 was better."],  # prose
        ["epoch: 0, step: 12, lr: 0.001, loss: 0.5"],  # another loop's epoch/step line
    ],
    ids=["verl", "hf", "sb3", "prose", "other-loop"],
)
def test_sniff_turns_away_other_console_logs_and_text(tmp_path, lines):
    f = write(tmp_path / "train.log", lines)
    assert not dsc.sniff(f, read_head(f))
    assert getattr(ingest.sniff(f), "NAME", None) != "deepspeed_chat_console"


def test_sniff_finds_the_first_step_line_after_a_long_preamble_in_console_named_files(tmp_path):
    preamble = ["Loading checkpoint shards: " + bar(4)] * 200  # over the 4 KiB head
    log = write(tmp_path / "training.log", preamble + NEW_LOG[3:])
    assert len(read_head(log)) == 4096 and dsc.sniff(log, read_head(log))
    other = write(tmp_path / "training.dat", preamble + NEW_LOG[3:])
    assert not dsc.sniff(other, read_head(other))


def test_the_other_console_readers_keep_their_files(tmp_path):
    for name, written in (("verl_console", h.verl_console(12)), ("hf_console", h.hf_console(12)), ("sb3_console", h.sb3_console(6))):
        f = written.write(tmp_path / f"{name}.log")
        assert ingest.sniff(f).NAME == name
    f = h.deepspeed_chat_console(12).write(tmp_path / "training.log")
    assert ingest.sniff(f).NAME == "deepspeed_chat_console"


# ---------------------------------------------------------------------------------------------
# end to end
# ---------------------------------------------------------------------------------------------
def test_the_framework_is_named_by_the_format():
    tags = ["reward", "actor_loss", "critic_loss", "unsup_loss"]
    assert guess_framework(tags) == "unknown"  # the names alone are any actor-critic loop's
    assert guess_framework(tags, fmt="deepspeed_chat_console") == "deepspeed_chat"
    assert guess_framework(tags, fmt="tensorboard+deepspeed_chat_console") == "deepspeed_chat"


def test_analyze_and_check_a_folder_with_a_deepspeed_chat_log(tmp_path):
    rewards = [-5.0 + k / 8 for k in range(40)]
    lines = [line for k, r in enumerate(rewards) for line in new_block(k // 20, k % 20, 0.05 - k / 1000, 0.1 / (k + 1), r, r)]
    write(tmp_path / "rlhf" / "training.log", lines)
    report = ppo_doctor.analyze(tmp_path)
    (rr,) = report.runs
    assert rr.run.format == "deepspeed_chat_console" and rr.run.framework == "deepspeed_chat"
    assert rr.run.framework_proof
    score = rr.run.series("reward/score")
    assert score.index.tolist() == list(range(40)) and score.tolist() == rewards
    assert rr.run.series("loss/policy").index.tolist() == list(range(40))
    assert rr.verdict in ("healthy", "unhealthy", "unknown") and rr.verdict_reason
    assert not [e for e in report.errors if e.level == "error"]
    result = CliRunner().invoke(cli, ["check", str(tmp_path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code != EXIT_ERROR, result.output
    assert "rlhf" in result.output
