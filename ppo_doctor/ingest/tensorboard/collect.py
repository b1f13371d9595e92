"""Gathering the points, texts, config and issues of one event file into its
:class:`~ppo_doctor.frame.RawRun` (:class:`Collector`), for both the bulk and the per-record
decoders; restarts (a tag's step going back, or a ``SessionLog.START`` after data) are reported,
never purged."""

from __future__ import annotations

import logging
import re
from typing import NamedTuple

import numpy as np

from ...frame import RawRun, RawSeries, ReadIssue, TextSample
from .protowire import ProtoDecodeError
from .events import SESSION_START, Event, SummaryValue, decode_event
from .text import config_from_text, hparams_from_plugin_content, text_samples
from . import tfrecord

log = logging.getLogger(__name__)

_SCALAR_PLUGINS = ("", "scalars")  # a numeric scalar tensor under another plugin is not a metric
_MAX_ISSUES_PER_KIND = 20  # per-record problems listed one by one before being summarised
SLOT_BITS = 24  # a point's file position is (record index << SLOT_BITS) | index of its value in the event


class _Piece(NamedTuple):
    pos: np.ndarray  # file position of each point (see SLOT_BITS), increasing within a piece
    step: np.ndarray
    value: np.ndarray
    wall: np.ndarray


class Collector:
    """Gathers points, texts, config and issues of one file, then builds its RawRun."""

    def __init__(self, path: str, starts: np.ndarray):
        self.path = path
        self.starts = starts  # record index -> byte offset, for messages
        # per (tag, from a tensor?): tensor values count only if the tag is a scalars-plugin tag
        self.pieces: dict[tuple[str, bool], list[_Piece]] = {}
        self.foreign_plugin_tags: set[str] = set()  # tags declared under a non-scalar plugin
        self.pending: dict[tuple[str, bool], tuple[list[int], list[int], list[float], list[float]]] = {}
        self.texts: list[tuple[int, TextSample]] = []
        self.config: dict = {}
        self.issues: list[ReadIssue] = []
        self.session_starts: list[tuple[int, int]] = []  # (record index, step)
        self.file_version: str | None = None
        self.events = 0

    # fast path
    def add_points(self, tag: str, pos: np.ndarray, step: np.ndarray, value: np.ndarray, wall: np.ndarray, tensor: bool, plugin: str | None) -> None:
        self._note_plugin(tag, plugin)
        self.pieces.setdefault((tag, tensor), []).append(_Piece(pos, step, value, wall))

    def _note_plugin(self, tag: str, plugin: str | None) -> None:
        if plugin is not None and plugin not in _SCALAR_PLUGINS:
            self.foreign_plugin_tags.add(tag)

    # reference path
    def add_event(self, rec: int, ev: Event) -> None:
        self.events += 1
        if ev.file_version is not None and self.file_version is None:
            self.file_version = ev.file_version
        if ev.session_status == SESSION_START:
            self.session_starts.append((rec, ev.step))
        for slot, v in enumerate(ev.values):
            self._note_plugin(v.tag, v.plugin)
            if v.strings is not None:
                if v.plugin in (None, "text"):
                    self._add_text(rec, ev.step, v.tag, "\n".join(v.strings))
            elif v.plugin == "hparams":
                self._add_hparams(rec, v)
            elif v.scalar is not None:
                positions, steps, values, walls = self.pending.setdefault((v.tag, v.from_tensor), ([], [], [], []))
                positions.append((rec << SLOT_BITS) | min(slot, (1 << SLOT_BITS) - 1))
                steps.append(ev.step)
                values.append(v.scalar)
                walls.append(ev.wall_time)

    def _add_text(self, rec: int, step: int, tag: str, text: str) -> None:
        base = tag[: -len("/text_summary")] if tag.endswith("/text_summary") else tag
        parsed = config_from_text(base, text)
        if parsed is not None:
            for k, v in parsed.items():
                self.config.setdefault(k, v)
            return
        for sample in text_samples(step, tag, text, self.path):
            self.texts.append((rec, sample))

    def _add_hparams(self, rec: int, v: SummaryValue) -> None:
        try:
            hparams = hparams_from_plugin_content(v.plugin_content)
        except ProtoDecodeError as exc:
            self.issue(rec, f"hparams summary {v.tag!r} could not be decoded ({exc}); skipped", "warning")
            return
        for k, val in hparams.items():
            self.config.setdefault(k, val)

    def issue(self, rec: int | None, message: str, level: str = "error", offset: int | None = None) -> None:
        if offset is None and rec is not None:
            offset = int(self.starts[rec])
        self.issues.append(ReadIssue(self.path, message, offset, level))

    # the run
    def build(self, framing_issues: list[ReadIssue]) -> RawRun:
        for key, (pos, step, value, wall) in self.pending.items():
            self.pieces.setdefault(key, []).append(
                _Piece(np.array(pos, np.int64), np.array(step, np.int64), np.array(value, np.float64), np.array(wall, np.float64))
            )
        by_tag: dict[str, list[_Piece]] = {}
        for (tag, tensor), pieces in self.pieces.items():
            if tensor and tag in self.foreign_plugin_tags:
                # e.g. a one-element tensor of the hparams or pr_curves plugin: not a metric
                log.debug("%s: tensor values of tag %r belong to another plugin; skipped", self.path, tag)
                continue
            by_tag.setdefault(tag, []).extend(pieces)
        merged: list[tuple[int, str, _Piece]] = []
        for tag, pieces in by_tag.items():
            piece = _merge_pieces(pieces)
            if len(piece.pos):
                merged.append((int(piece.pos[0]), tag, piece))
        merged.sort(key=lambda t: t[0])
        run = RawRun()
        run.series = [RawSeries(tag=tag, steps=p.step, values=p.value, wall_time=p.wall, source=self.path) for _, tag, p in merged]
        run.config = self.config
        run.texts = [s for _, s in sorted(self.texts, key=lambda t: t[0])]
        run.restarts = self._restarts([(tag, p) for _, tag, p in merged])
        run.issues = _cap_issues(framing_issues + self.issues)
        if self.file_version is None:
            run.issues.append(ReadIssue(self.path, "no file_version event: not written by a TensorBoard writer, or its start is missing", None, "warning"))
        if not run.series:
            run.issues.append(ReadIssue(self.path, f"no scalar found ({self.events} event(s) read)", None, "warning"))
        return run

    def _restarts(self, series: list[tuple[str, _Piece]]) -> list[int]:
        """Steps at which the log goes back (per tag), plus SessionLog.START after data."""
        found: dict[int, tuple[int, int | None]] = {}  # new step -> (record index, previous step)
        first_rec = None
        if series:
            # all tags in one pass (a numpy call per tag made 100,000 one-point tags cost seconds)
            step = np.concatenate([p.step for _, p in series])
            pos = np.concatenate([p.pos for _, p in series])
            firsts = np.cumsum([0] + [len(p.step) for _, p in series[:-1]])
            back = np.zeros(len(step), dtype=bool)
            back[1:] = step[1:] < step[:-1]
            back[firsts] = False  # a tag's first point does not go back from the previous tag's last
            for i in np.flatnonzero(back).tolist():
                new, rec = int(step[i]), int(pos[i]) >> SLOT_BITS
                if new not in found or rec < found[new][0]:
                    found[new] = (rec, int(step[i - 1]))
            first_rec = int(pos[firsts].min()) >> SLOT_BITS
        for rec, start_step in self.session_starts:
            if first_rec is not None and rec > first_rec and (start_step not in found or rec < found[start_step][0]):
                found[start_step] = (rec, None)
        ordered = sorted(found.items(), key=lambda kv: kv[1][0])
        for new, (rec, prev) in ordered[:_MAX_ISSUES_PER_KIND]:
            if prev is None:
                why = f"SessionLog.START at step {new} after logged data"
            else:
                why = f"steps go back from {prev} to {new}"
            self.issue(rec, f"{why}: the run was restarted or resumed into the same file; every point is kept (TensorBoard would purge the orphaned ones)", "info")
        if len(ordered) > _MAX_ISSUES_PER_KIND:
            self.issue(None, f"{len(ordered) - _MAX_ISSUES_PER_KIND} more restart(s) not listed", "info")
        return [new for new, _ in ordered]


def _merge_pieces(pieces: list[_Piece]) -> _Piece:
    """Join the pieces of one tag in file order (each piece is already in file order)."""
    if len(pieces) == 1:
        p = pieces[0]
        return _Piece(np.ascontiguousarray(p.pos), np.ascontiguousarray(p.step), np.ascontiguousarray(p.value), np.ascontiguousarray(p.wall))
    pieces = sorted(pieces, key=lambda p: int(p.pos[0]) if len(p.pos) else -1)
    cat = _Piece(*(np.concatenate([getattr(p, f) for p in pieces]) for f in ("pos", "step", "value", "wall")))
    if len(cat.pos) > 1 and np.any(cat.pos[1:] < cat.pos[:-1]):
        order = np.argsort(cat.pos, kind="stable")
        cat = _Piece(cat.pos[order], cat.step[order], cat.value[order], cat.wall[order])
    return cat


def _cap_issues(issues: list[ReadIssue]) -> list[ReadIssue]:
    """Sort by offset and keep the first few of each message kind, summarising the rest."""
    issues = sorted(issues, key=lambda i: (i.offset is None, i.offset or 0))
    kept: list[ReadIssue] = []
    dropped: dict[tuple[str, str], int] = {}
    counts: dict[tuple[str, str], int] = {}
    for i in issues:
        kind = (i.level, re.sub(r"\d+", "#", i.message))
        counts[kind] = counts.get(kind, 0) + 1
        if counts[kind] <= _MAX_ISSUES_PER_KIND:
            kept.append(i)
        else:
            dropped[kind] = dropped.get(kind, 0) + 1
    for (level, _), n in dropped.items():
        kept.append(ReadIssue(issues[0].path, f"{n} more problem(s) like the ones above not listed", None, level))
    return kept


def decode_reference(buf: memoryview, rec: int, start: int, length: int, col: Collector) -> None:
    data_at = start + tfrecord.HEADER_BYTES
    try:
        ev = decode_event(buf[data_at : data_at + length])
    except ProtoDecodeError as exc:
        col.issue(rec, f"record is not a valid Event ({exc}); skipped")
        return
    col.add_event(rec, ev)

