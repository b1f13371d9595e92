"""Following log files while a training writes them (``ppo-doctor watch``).

A :class:`Tail` per file keeps what has been read and, at each :meth:`Tail.poll`, reads only
what is new, with the readers' own record decoders:

* TensorBoard event files (:class:`TensorBoardTail`): the bytes after the last complete
  TFRecord are read, framed and decoded by :mod:`.tensorboard`'s fast path; the points of each
  poll are kept as pieces and joined in file order when the run is analysed, so a poll costs
  what was appended, not the file size.
* JSONL (:class:`JsonlTail`): the lines after the last complete line are parsed by
  :func:`.jsonl.parse_lines`; the records accumulate and :func:`.jsonl.records_to_runs` turns
  them into the run as :func:`.jsonl.read` would.
* every other format (``trainer_state.json``, CSV, ``.wandb``, MLflow ...): the file is read
  again whenever its size or modification time changed (:class:`RereadTail`);
  ``trainer_state.json`` is rewritten whole at every save, so it has to be.

What a writer has not finished is waited for, never reported as damage: a TFRecord whose
header or data runs past the end of the file, a JSONL line without its newline, and any read
error of a re-read file whose size or time changed since the previous poll (it is still being
written; the previous good read is kept).  Damage that stays is reported: the final report of
``watch`` is the offline :func:`ppo_doctor.analyze` of the folder.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import struct
from dataclasses import dataclass
from pathlib import Path
import numpy as np

from ..errors import PPODoctorError
from ..frame import RawRun, RawSeries, ReadIssue
from . import reader_for
from .readers.jsonl import records_to_runs, parse_lines
from .tensorboard import tfrecord
from .tensorboard.collect import Collector
from .tensorboard.events import WALL_TIME_KEY
from .tensorboard.fastpath import MAX_FAST_LENGTH, decode_fast

log = logging.getLogger(__name__)

# Equal-length records decoded in bulk from this many on (the reader's default is 32): an appended
# 1,000-scalar piece of a 50-tag file holds ~20 records of each length (measured on
# benchmarks/bench_watch.py's file: 8 cut a poll from about 16 to 12 ms on a loaded VM).
FOLLOW_MIN_GROUP = 8
_VECTOR_FRAMING_BYTES = 1 << 20
_U64 = struct.Struct("<Q")
_U32 = struct.Struct("<I")


@dataclass(frozen=True)
class FileStat:
    """What tells a followed file changed: its size, modification time and identity."""

    size: int
    mtime_ns: int
    inode: tuple[int, int] = (0, 0)  # (st_dev, st_ino): a file replaced or rotated under its name is another file

    @classmethod
    def of(cls, path: str | Path) -> "FileStat | None":
        try:
            st = os.stat(path)
        except OSError:
            return None
        return cls(st.st_size, st.st_mtime_ns, (st.st_dev, st.st_ino))


class Tail:
    """One followed file: :meth:`poll` reads what is new; :meth:`raw_runs` is the file so far.

    A file that shrinks below what was read (truncated and rewritten) or that is another file
    under the same name (rotated, replaced by a rename) is followed from its new start:
    :meth:`restarted` says so and the reading tails forget what they had read.
    """

    def __init__(self, path: Path, fmt: str) -> None:
        self.path = Path(path)
        self.fmt = fmt
        self._seen: FileStat | None = None

    def restarted(self, offset: int) -> bool:
        """True when the file is no longer the one read up to ``offset`` (see the class docstring)."""
        st = FileStat.of(self.path)
        before, self._seen = self._seen, st
        if st is None or before is None:
            return False
        return st.inode != before.inode or st.size < offset

    def poll(self) -> bool:
        """Read what the writer added; True when something new was read."""
        raise NotImplementedError

    def raw_runs(self) -> list[RawRun] | None:
        """What the file holds so far, as the format's ``read`` returns it (None: nothing yet)."""
        raise NotImplementedError


class RereadTail(Tail):
    """Reads the whole file again when its size or modification time changed."""

    def __init__(self, path: Path, fmt: str) -> None:
        super().__init__(path, fmt)
        self._stat: FileStat | None = None
        self._runs: list[RawRun] | None = None

    def poll(self) -> bool:
        st = FileStat.of(self.path)
        if st is None or st == self._stat:
            return False
        try:
            runs = reader_for(self.fmt).read(self.path)
        except (PPODoctorError, OSError, ValueError) as exc:
            log.debug("%s: not readable yet (%s); waiting", self.path, exc)
            runs = None
        damaged = runs is None or any(i.level == "error" for r in runs for i in r.issues)
        if damaged and FileStat.of(self.path) != st:
            return False  # it changed while we read it: a save in progress, read it at the next poll
        self._stat = st
        if damaged and self._runs is not None:
            return False  # keep the last good read; a later save will be read when the file changes
        self._runs = runs
        return runs is not None

    def raw_runs(self) -> list[RawRun] | None:
        return self._runs


class JsonlTail(Tail):
    """Parses only the complete lines appended since the last poll."""

    def __init__(self, path: Path, fmt: str = "jsonl") -> None:
        super().__init__(path, fmt)
        self._offset = 0
        self._records: list[dict] = []
        self._lines: list[int] = []
        self._issues: list[ReadIssue] = []
        self._line_count = 0
        self._fallback: RereadTail | None = None

    def _reset(self) -> None:
        self._offset, self._line_count, self._fallback = 0, 0, None
        self._records, self._lines, self._issues = [], [], []

    def poll(self) -> bool:
        if self.restarted(self._offset):
            log.info("%s was truncated or replaced: following it from its new start", self.path)
            self._reset()
        if self._fallback is not None:
            return self._fallback.poll()

        chunk = _read_from(self.path, self._offset)
        end = chunk.rfind(b"\n") + 1
        if end == 0:
            return False
        if self._offset == 0 and chunk[:end].lstrip()[:1] != b"{":
            self._fallback = RereadTail(self.path, self.fmt)  # a JSON document, not one object a line
            return self._fallback.poll()
        data = chunk[:end]
        fast = b"NaN" not in data and b"Infinity" not in data  # the fast parser reads NaN as null
        records, lines, issues = parse_lines(self.path, data, fast=fast)
        base_line, base = self._line_count, self._offset
        self._records.extend(records)
        self._lines.extend(n + base_line for n in lines)
        for i in issues:
            i.offset = None if i.offset is None else i.offset + base
        self._issues.extend(issues)
        self._line_count += data.count(b"\n")
        self._offset += end
        return bool(records or issues)

    def raw_runs(self) -> list[RawRun] | None:
        if self._fallback is not None:
            return self._fallback.raw_runs()
        if not self._records:
            return None

        return records_to_runs(self.path, list(self._records), list(self._lines), list(self._issues))


@dataclass
class _Chunk:
    base: int
    raw: RawRun
    events: int


class TensorBoardTail(Tail):
    """Decodes only the TFRecords appended since the last poll (see the module docstring)."""

    def __init__(self, path: Path, fmt: str = "tensorboard") -> None:
        super().__init__(path, fmt)
        self._offset = 0
        self._chunks: list[_Chunk] = []
        self._fallback: RereadTail | None = None

    def poll(self) -> bool:
        if self.restarted(self._offset):
            log.info("%s was truncated or replaced: following it from its new start", self.path)
            self._offset, self._chunks, self._fallback = 0, [], None
        if self._fallback is not None:
            return self._fallback.poll()
        chunk = _read_from(self.path, self._offset)
        end, damaged = complete_records(chunk)
        if damaged:
            # a bad length checksum is damage, not a record in progress: from here on the file is
            # read whole by the reader, which reports it (and resynchronises past it)
            self._fallback = RereadTail(self.path, self.fmt)
            return self._fallback.poll()
        if end == 0:
            return False
        if self._offset == 0 and tfrecord.first_header_problem(memoryview(chunk)):
            # no event file from its first header on: the whole-file reader says why
            self._fallback = RereadTail(self.path, self.fmt)
            return self._fallback.poll()
        raw, events = decode_records(chunk[:end], str(self.path), self._offset)
        self._chunks.append(_Chunk(self._offset, raw, events))
        self._offset += end
        return True

    def raw_runs(self) -> list[RawRun] | None:
        if self._fallback is not None:
            return self._fallback.raw_runs()
        if not self._chunks:
            return None
        return [join_chunks(self._chunks, str(self.path))]


def _read_from(path: Path, offset: int) -> bytes:
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            return fh.read()
    except OSError:
        return b""


def complete_records(buf: bytes) -> tuple[int, bool]:
    """``(end, damaged)``: the end of the last whole TFRecord in ``buf``; ``damaged`` when a length
    checksum is wrong (a record cut by the end of ``buf`` is not damage: its writer is not done).

    A big ``buf`` (the first poll of a long file) is framed by the reader's vectorised walker
    first, and only its last records one by one: walking a million headers in Python took 4x a
    whole read of the file (measured on benchmarks/bench_watch.py's 1,000,000-scalar file).
    Damage the vectorised walker steps over is reported when the records are decoded.
    """
    pos, n = 0, len(buf)
    if n > _VECTOR_FRAMING_BYTES:
        framing = tfrecord.frame_fast(memoryview(buf), "", lead_byte=WALL_TIME_KEY)
        if len(framing):
            pos = int(framing.starts[-1] + tfrecord.OVERHEAD + framing.lengths[-1])
    while pos + tfrecord.HEADER_BYTES <= n:
        (length,) = _U64.unpack_from(buf, pos)
        if tfrecord.masked_crc32c(buf[pos : pos + 8]) != _U32.unpack_from(buf, pos + 8)[0]:
            return pos, True
        end = pos + tfrecord.OVERHEAD + length
        if end > n:
            break
        pos = end
    return pos, False


def decode_records(data: bytes, path: str, base: int) -> tuple[RawRun, int]:
    """The whole TFRecords ``data`` (starting at byte ``base`` of ``path``) with the TensorBoard
    reader's fast decoder; issue offsets are file offsets."""
    padded = np.zeros(len(data) + MAX_FAST_LENGTH + tfrecord.FOOTER_BYTES, dtype=np.uint8)
    padded[: len(data)] = np.frombuffer(data, dtype=np.uint8)
    buf = memoryview(padded)[: len(data)]  # type: ignore[arg-type]  # numpy arrays are buffers
    framing = tfrecord.frame_fast(buf, path, lead_byte=WALL_TIME_KEY)
    for issue in framing.issues:
        issue.offset = None if issue.offset is None else issue.offset + base
    col = Collector(path, framing.starts + base)
    decode_fast(buf, padded, framing, col, min_group=FOLLOW_MIN_GROUP)
    raw = col.build(framing.issues)
    if base > 0 or not raw.series:
        # the chunk-level notes about the file's start and about an empty read are decided on the
        # joined file (join_chunks), not on each appended piece
        raw.issues = [i for i in raw.issues if not _chunk_note(i)]
    return raw, col.events


def _chunk_note(issue: ReadIssue) -> bool:
    return issue.level == "warning" and (issue.message.startswith("no file_version event") or issue.message.startswith("no scalar found"))


def join_chunks(chunks: list[_Chunk], path: str) -> RawRun:
    """One RawRun from the pieces read poll by poll, as one read of the whole file gives it:
    each tag's points in file order, tags in order of first appearance, texts and issues in
    file order, the first value of a config key kept, restarts across poll boundaries found."""
    pieces: dict[str, list[RawSeries]] = {}
    out = RawRun()
    for c in chunks:
        for s in c.raw.series:
            pieces.setdefault(s.tag, []).append(s)
        for k, v in c.raw.config.items():
            out.config.setdefault(k, v)
        out.texts.extend(c.raw.texts)
        out.issues.extend(c.raw.issues)
        out.restarts.extend(c.raw.restarts)
    for tag, parts in pieces.items():
        for a, b in zip(parts, parts[1:]):
            if len(a) and len(b) and b.steps[0] < a.steps[-1]:
                out.restarts.append(int(b.steps[0]))
        out.series.append(_concat(tag, parts))
    if not out.series:
        out.issues.append(ReadIssue(path, f"no scalar found ({sum(c.events for c in chunks)} event(s) read)", None, "warning"))
    return out


def _concat(tag: str, parts: list[RawSeries]) -> RawSeries:
    if len(parts) == 1:
        return parts[0]
    return RawSeries(
        tag=tag,
        steps=np.concatenate([p.steps for p in parts]),
        values=np.concatenate([p.values for p in parts]),
        wall_time=np.concatenate([p.wall_time if p.wall_time is not None else np.full(len(p), np.nan) for p in parts]),
        source=parts[0].source,
    )


def fresh(runs: list[RawRun] | None) -> list[RawRun] | None:
    """New RawRun / RawSeries / TextSample objects over the same arrays: building a run renames
    ``add_scalars`` tags and cleans strings in place, which must not touch what a tail keeps."""
    if runs is None:
        return None
    return [
        dataclasses.replace(
            r,
            series=[dataclasses.replace(x) for x in r.series],
            eval_series=[dataclasses.replace(x) for x in r.eval_series],
            texts=[dataclasses.replace(t) for t in r.texts],
            issues=[dataclasses.replace(i) for i in r.issues],
            config=dict(r.config),
            restarts=list(r.restarts),
        )
        for r in runs
    ]


def tail_for(path: Path, fmt: str) -> Tail:
    """The follower for one file of format ``fmt`` (a reader's NAME: a key of
    :data:`~ppo_doctor.ingest.FORMAT_MODULES` or a plugin's, re-read whole as it grows)."""
    if fmt == "tensorboard":
        return TensorBoardTail(Path(path))
    if fmt == "jsonl":
        return JsonlTail(Path(path))
    return RereadTail(Path(path), fmt)


__all__ = ["FileStat", "fresh", "JsonlTail", "RereadTail", "Tail", "TensorBoardTail", "complete_records", "decode_records", "join_chunks", "tail_for"]
