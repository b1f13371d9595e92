"""DeepSpeed-Chat step-3 console output: the step and reward lines its PPO loop prints.

DeepSpeed-Chat (microsoft/DeepSpeedExamples,
``applications/DeepSpeed-Chat/training/step3_rlhf_finetuning/main.py``) writes TensorBoard only
with ``--enable_tensorboard``; what most users keep is what rank 0 printed
(``deepspeed main.py ... | tee training.log``, docs/sources.md#deepspeed-chat-console-logs).  After
every training step it prints a step line and, after its throughput lines, the batch's reward::

    Epoch: 0 | Step: 12 | PPO Epoch: 1 | Actor Loss: 0.0361328125 | Critic Loss: 0.0892 | Unsupervised Loss: 0.0
    Average reward score: -5.7265625 | EMA reward score: -5.7265625

Older releases, and most forks, print ``epoch: 0|step: 12|ppo_ep: 1|act_loss: ...|cri_loss:
...|unsuper_loss: ...`` and ``average reward score: ...``; forks that log through ``logging``
separate the items with commas (``epoch: 0, step: 12, ppo_ep: 1, act_loss: ...,cri_loss: ...,
pretrain_loss: ...``, after the logger's own prefix, the losses sometimes printed as torch tensors);
ReMax prints ``Epoch: 1/2 | Step: 12/477 |  Actor Loss: ...`` and more fields on its reward line
(``Average return``, ``Average length``, ``Average kl``, ``Average entropy``, ``Max kl``, ``Max
return``, ``KL ratio``).  What is read:

* the series under the TensorBoard tags DeepSpeed-Chat writes, so that its alias table applies:
  ``reward`` (average reward score), ``actor_loss``, ``critic_loss``; the others under plain
  names: ``unsup_loss`` (unsupervised / pretrain loss), ``ema_reward`` and ReMax's ``return``,
  ``response_length``, ``kl``, ``entropy``, ``max_kl``, ``max_return``, ``kl_ratio``; any other
  ``key: number`` item of these lines under its name in lower case with ``_`` for other characters.
  A reward line belongs to the step line printed before it;
* the step: ``Step`` is the dataloader index *inside* the epoch and starts again at 0 every epoch,
  so the epochs are laid end to end: an epoch first seen starts one step after the highest step
  read so far (epoch 1's step 0 follows epoch 0's last step).  The epoch and the PPO epoch are
  the step's coordinates and bookkeeping, not metrics, and are not series;
* values: numbers as Python prints them (``nan``, ``inf``, ``1e-06``) and numbers wrapped in
  ``tensor(...)`` / ``np.float64(...)``; an item that is no number is skipped with a warning.

Warned about: a step line whose (epoch, step) is not past the one before (a restarted job appended
to the same log; the last value wins, ``RawRun.restarts``), except the same step again with a
higher PPO epoch (forks that print every PPO epoch); reward lines before any step line; a last
line without its line end (cut while written), which is not read since its last value may be cut
short.  Everything else the job prints (DeepSpeed's ``[INFO]`` lines, throughput lines,
evaluations, tracebacks) is passed over.  Lines are read after a progress bar's carriage returns
and without ANSI escape sequences, and bounded as in every console reader
(:mod:`ppo_doctor.ingest.console`).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...errors import LogReadError
from ...frame import RawRun, RawSeries, ReadIssue
from .. import console
from ..base import is_int64

NAME = "deepspeed_chat_console"

# "Epoch: 0 | Step: 12 | <key>: ..." in all its spellings (``|`` or ``,``, ReMax's ``1/2`` and
# ``12/477``): the epoch and the step inside it, followed by a first item.  ``epoch`` may follow a
# digit or a bracket (a progress bar without a line end before it) but not a letter
# (``global_epoch: 3`` is another print).
# Their digits are bounded: Python refuses to convert a number of over 4300 digits (damage).
_STEP = re.compile(r"(?<![A-Za-z_])epoch: ?(\d{1,30})(?:/\d+)?[ \t]*[|,][ \t]*step: ?(\d{1,30})(?:/\d+)?(?=[ \t]*[|,][ \t]*[A-Za-z])", re.I)
# What makes a file this format: a step line (its epoch and step) with an actor loss (``Actor
# Loss`` or ``act_loss``) at most MAX_ITEMS_BYTES after them on the same line.  The two are found
# apart, each in one pass, so that a long line of near misses costs linear time.
_STEP_HEAD_BYTES = re.compile(rb"(?<![A-Za-z_])epoch: ?\d+(?:/\d+)?[ \t]*[|,][ \t]*step: ?\d+(?:/\d+)?[ \t]*[|,]", re.I)
_ACTOR_LOSS_BYTES = re.compile(rb"(?<![A-Za-z_])act(?:or)?[ _]loss[ \t]*:", re.I)
# The most bytes between a step line's step and its actor loss (the PPO epoch, a wide separator).
MAX_ITEMS_BYTES = 200
# The separator before an item of a step line: ``|`` or ``,`` followed by ``key:``.  A tensor's
# repr holds commas too (``tensor(0.03, device='cuda:0')``), but none followed by such a key.
# (Blanks before the separator stay with the value before it, which is stripped: matching them
# here would cost a scan of every run of blanks from each of its positions.)
_ITEM_SEPARATOR = re.compile(r"[|,][ \t]*(?=[A-Za-z][\w .]*:)")
_REWARD = re.compile(r"(?<![A-Za-z_])average reward score[ \t]*:", re.I)
# The value after each colon of a reward line, whose items are separated by `` | `` or by a space
# (ReMax); its key is the text since the value before.  Found from the colons, so that a long
# line of words stays linear; a wrapped value is bounded for the same reason.
_REWARD_VALUE = re.compile(rf":[ \t]*({console.NUMBER_WRAPPER}\([^)]{{0,200}}\)|[^\s|,]+)")
# A key of a step or reward line; a longer or stranger text before a colon is damage or another print.
_KEY = re.compile(r"[A-Za-z][\w .]{0,60}")
_WRAPPED = re.compile(rf"{console.NUMBER_WRAPPER}\((.*)\)", re.S)
_NOT_NAME = re.compile(r"[^a-z0-9]+")
# What a cut last line starts with when it was a step or reward line, for the report of the cut.
_LINE_STARTS = ("epoch:", "average reward score:")
_CUT_STEP = re.compile(r"(?<![a-z_])epoch: ?\d|average reward", re.I)

# The printed keys -> the series they are read into (DeepSpeed-Chat's TensorBoard tags where it
# has one); keys are compared in lower case with ``_`` and spaces alike.
KEYS = {
    "actor loss": "actor_loss",
    "act loss": "actor_loss",
    "critic loss": "critic_loss",
    "cri loss": "critic_loss",
    "unsupervised loss": "unsup_loss",
    "unsuper loss": "unsup_loss",
    "unsup loss": "unsup_loss",
    "pretrain loss": "unsup_loss",
    "average reward score": "reward",
    "ema reward score": "ema_reward",
    "average return": "return",
    "average length": "response_length",
    "average kl": "kl",
    "average entropy": "entropy",
    "max kl": "max_kl",
    "max return": "max_return",
    "kl ratio": "kl_ratio",
}
# What makes a line with an epoch and a step a step line: one of the losses it prints.
STEP_LINE_TAGS = frozenset({"actor_loss", "critic_loss", "unsup_loss"})
# The PPO epoch of a step line: bookkeeping that tells a fork's line per PPO epoch from a restart.
PPO_EPOCH_KEYS = frozenset({"ppo epoch", "ppo ep"})
RESTART_NOTE = "(epoch, step) goes back {n} time(s) (restarted job appended to the same log?); the last value wins"
EPOCHS_NOTE = "steps are DeepSpeed-Chat's per-epoch dataloader index with the {n} epochs laid end to end (each epoch's step 0 follows the last step before it)"


def sniff(path: Path, head: bytes) -> bool:
    """A step line with an actor loss in the head, or in the first 16 MiB of a file named like a console log."""
    return console.scan(path, head, _has_step_line)


def _has_step_line(chunk: bytes) -> bool:
    """Whether ``chunk`` holds a step line's epoch and step followed by an actor loss on its line."""
    losses: list[int] | None = None
    for head in _STEP_HEAD_BYTES.finditer(chunk):
        if losses is None:  # found once, and only in a chunk with a step line's start
            losses = [m.start() for m in _ACTOR_LOSS_BYTES.finditer(chunk)]
        i = bisect.bisect_left(losses, head.end())
        if i < len(losses) and losses[i] - head.end() <= MAX_ITEMS_BYTES and b"\n" not in chunk[head.end() : losses[i]]:
            return True
    return False


@dataclass
class _Read:
    """What the lines of a log gave: the points of each series and what could not be read."""

    points: dict[str, tuple[list[int], list[float], list[int]]] = field(default_factory=dict)  # tag -> steps, values, lines
    offsets: dict[int, int] = field(default_factory=dict)  # epoch -> global step of its step 0
    top: int = -1  # highest global step so far
    last: tuple[int, int] | None = None  # (global step, PPO epoch) of the last step line
    restarts: list[int] = field(default_factory=list)
    step_lines: int = 0
    skipped: int = 0  # items that are no number
    orphans: int = 0  # reward lines before any step line
    too_large: int = 0  # step lines whose step is beyond int64

    def add(self, tag: str, step: int, value: float, line: int) -> None:
        steps, values, lines = self.points.setdefault(tag, ([], [], []))
        steps.append(step)
        values.append(value)
        lines.append(line)

    def global_step(self, epoch: int, step: int) -> int:
        """The step on the run's axis: an epoch first seen starts after the highest step so far;
        an epoch seen before (a restarted job) keeps its start, so its steps fall on the same places."""
        if epoch not in self.offsets:
            self.offsets[epoch] = self.top + 1
        return self.offsets[epoch] + step


def read(path: Path) -> list[RawRun]:
    src = str(path)
    lines, data, issues = console.read_lines(path)
    found = _Read()
    # the last line without its line end may have been cut while it was written (a live run, a
    # killed job): its last value may be cut short, so it is not read
    cut = lines[-1] if lines and lines[-1].data and not data.endswith(b"\n") else None
    for line in lines:
        if b":" not in line.data and line is not cut:
            continue
        shown = console.pieces(line.data)
        if line is cut:
            if _maybe_metric_line(shown[-1]):
                msg = f"partial last line {line.number}: no line end, not read (file cut short or still being written?)"
                issues.append(ReadIssue(src, msg, offset=line.offset))
            shown = shown[:-1]
        for piece in shown:
            _take(piece, line.number, found)
    if not found.step_lines:
        damage = next((i for i in issues if i.level == "error"), None)
        if damage is not None:
            raise LogReadError(src, damage.message, offset=damage.offset)
        raise LogReadError(src, "no DeepSpeed-Chat step line ('Epoch: N | Step: N | Actor Loss: ...') found")
    return [_run(src, found, issues)]


def _maybe_metric_line(text: str) -> bool:
    """Whether a cut line was (the start of) a step or reward line."""
    t = text.strip().lower()
    return bool(t) and (_CUT_STEP.search(t) is not None or any(s.startswith(t) for s in _LINE_STARTS))


def _take(piece: str, number: int, found: _Read) -> None:
    """The step line or reward line of one piece of a line into ``found``."""
    m = _STEP.search(piece)
    if m is not None:
        _take_step(piece[m.end() :], int(m.group(1)), int(m.group(2)), number, found)
        return
    r = _REWARD.search(piece)
    if r is not None:
        _take_reward(piece[r.start() :], number, found)


def _take_step(rest: str, epoch: int, step: int, number: int, found: _Read) -> None:
    """A step line: its items at the step's place on the run's axis.  A line with an epoch and a
    step but none of the losses is another print (a data loader's, an evaluation's) and is passed over."""
    items: list[tuple[str, float]] = []
    ppo_epoch = 0
    skipped = 0
    losses = False
    for item in _ITEM_SEPARATOR.split(rest)[1:]:
        key, _, text = item.partition(":")
        name = _key(key)
        losses |= KEYS.get(name) in STEP_LINE_TAGS
        value = _number(text)
        if value is None or not _KEY.fullmatch(key.strip()):
            skipped += 1
        elif name in PPO_EPOCH_KEYS:
            ppo_epoch = int(value) if np.isfinite(value) else 0
        else:
            items.append((KEYS.get(name, _plain(name)), value))
    if not losses:
        return
    found.skipped += skipped
    g = found.global_step(epoch, step)
    if not is_int64(g):
        found.too_large += 1
        return
    _note_order(found, g, ppo_epoch)
    found.step_lines += 1
    found.top = max(found.top, g)
    for tag, value in items:
        found.add(tag, g, value, number)


def _note_order(found: _Read, g: int, ppo_epoch: int) -> None:
    """A step line not past the one before is a restart, unless it is the same step's next PPO
    epoch (forks that print a line per PPO epoch)."""
    if found.last is not None:
        last_step, last_ppo = found.last
        if g < last_step or (g == last_step and ppo_epoch <= last_ppo):
            found.restarts.append(g)
    found.last = (g, ppo_epoch)


def _take_reward(text: str, number: int, found: _Read) -> None:
    """A reward line: its values at the step of the step line printed before it."""
    if found.last is None:
        found.orphans += 1
        return
    step = found.last[0]
    start = 0
    for m in _REWARD_VALUE.finditer(text):
        key = text[start : m.start()].strip(" \t|,")
        start = m.end()
        value = _number(m.group(1))
        if value is None or not _KEY.fullmatch(key):
            found.skipped += 1
            continue
        name = _key(key)
        found.add(KEYS.get(name, _plain(name)), step, value, number)


def _key(text: str) -> str:
    """A printed key for the table: lower case, ``_`` read as a space, blanks squeezed."""
    return " ".join(text.replace("_", " ").lower().split())


def _plain(name: str) -> str:
    """The series name of a key the table does not know: ``Average reward ori`` -> ``average_reward_ori``."""
    return _NOT_NAME.sub("_", name).strip("_") or "value"


def _number(text: str) -> float | None:
    """A printed value: a number as Python prints it, or wrapped in ``tensor(...)`` / ``np.float64(...)``."""
    t = text.strip()
    m = _WRAPPED.fullmatch(t)
    if m is not None:
        t = m.group(1).split(",")[0]
    return console.printed_number(t)


def _run(src: str, found: _Read, issues: list[ReadIssue]) -> RawRun:
    run = RawRun()
    for tag, (steps, values, lines) in found.points.items():
        run.series.append(RawSeries(tag=tag, steps=np.asarray(steps, dtype=np.int64), values=np.asarray(values), source=src, lines=np.asarray(lines)))
    if found.restarts:
        run.restarts = list(found.restarts)
        issues.append(ReadIssue(src, RESTART_NOTE.format(n=len(found.restarts)), level="warning"))
    if len(found.offsets) > 1:
        issues.append(ReadIssue(src, EPOCHS_NOTE.format(n=len(found.offsets)), level="info"))
    if found.skipped:
        issues.append(ReadIssue(src, f"{found.skipped} item(s) of step and reward lines were not 'key: number' and were skipped", level="warning"))
    if found.orphans:
        issues.append(ReadIssue(src, f"{found.orphans} reward line(s) before any step line were skipped", level="warning"))
    if found.too_large:
        issues.append(ReadIssue(src, f"{found.too_large} step line(s) with a step beyond int64 were skipped", level="warning"))
    run.issues = issues
    return run
