"""TensorBoard event files (``events.out.tfevents.*``): every scalar, losslessly and fast.

Format: docs/sources.md#tensorboard-event-files. A file is a TFRecord stream (see
:mod:`.tfrecord`) of ``Event`` protobufs, decoded by hand (:mod:`.events`; no TensorFlow, no
protobuf runtime).

What a run gets: scalars from ``simple_value`` (torch ``add_scalar``, tensorboardX, TF1) and from
scalar ``tensor`` values whose tag uses the ``scalars`` plugin (TF2, torch ``new_style=True``,
float or double), all in file order, float32 widened exactly, NaN/Inf kept, nothing sampled
(unlike ``EventAccumulator``'s default ``size_guidance``). Text summaries become
``RawRun.texts``, except the HF Trainer ``args``/``model_config`` JSON and the CleanRL
``hyperparameters`` table, which become ``RawRun.config`` together with the hparams plugin's
``session_start_info``. Restarts (a tag's step going back, or a ``SessionLog.START`` after data)
are reported, never purged (``EventAccumulator(purge_orphaned_data=True)`` drops data there).

Speed: a million scalars must read >= 100x faster than tbparse (docs/architecture.md#budgets; a plain
Python loop over the records already takes seconds). Records are framed in bulk
(:func:`.tfrecord.frame_fast`) and decoded in bulk by :mod:`.fastpath` (records of equal length
as one byte matrix, CRCs checked together, payloads read through a template of the first row);
records no template covers go through the per-record decoder. :mod:`.collect` gathers the
points into the run, :mod:`.text` reads config and samples from text and hparams summaries.
:func:`read_reference` reads a whole file the plain per-record way; the tests check that both
give identical runs on random and damaged files.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from ...errors import LogReadError
from ...frame import RawRun
from .. import filebytes
from . import tfrecord
from ..base import HEAD_BYTES
from ..storage import as_path, open_binary, size_of
from .collect import Collector, decode_reference
from .events import WALL_TIME_KEY, Event, SummaryValue, decode_event
from .fastpath import MAX_FAST_LENGTH, decode_fast
from .protowire import ProtoDecodeError
from .sniff import FILE_PREFIX, LENGTH
from .text import hparams_from_plugin_content

NAME = "tensorboard"


def sniff(path: Path, head: bytes) -> bool:
    """An ``events.out.tfevents.*`` file, or a TFRecord whose first record is an Event with a
    file_version (``brain.Event:N``).  Discovery asks this only of what :func:`.sniff.sniff` passed."""
    if as_path(path).name.startswith(FILE_PREFIX):
        return True
    if len(head) < tfrecord.OVERHEAD:
        return False
    length = LENGTH.unpack_from(head)[0]
    if length > len(head) - tfrecord.OVERHEAD or tfrecord.masked_crc32c(head[:8]) != struct.unpack_from("<I", head, 8)[0]:
        return False
    try:
        ev = decode_event(head[tfrecord.HEADER_BYTES : tfrecord.HEADER_BYTES + length])
    except ProtoDecodeError:
        return False
    return bool(ev.file_version and ev.file_version.startswith("brain.Event:"))


def _load(path: Path) -> tuple[memoryview, np.ndarray]:
    """The whole file as a memoryview, and the same bytes in a numpy array with spare zero
    bytes after the end (see :func:`.fastpath.decode_fast`). Numpy-owned memory gets transparent huge
    pages, which makes the fast path's scattered row gathers cheaper.

    The first record header is checked on the file's first bytes before anything else is
    read (a 20 GB file of zeros named like an event file is refused after 4 KiB), and the rest
    is read by :func:`.filebytes.load_padded`: runs of zero bytes (a pre-allocated or crashed
    writer's tail) commit no memory.
    """
    spath = str(path)
    try:
        with open_binary(path) as fh:
            size = size_of(fh)
            problem = tfrecord.first_header_problem(fh.read(HEAD_BYTES), size)
            if problem:
                raise LogReadError(spath, f"not a readable TensorBoard event file: {problem}", 0)
            fh.seek(0)
            padded, got = filebytes.load_padded(fh, MAX_FAST_LENGTH + tfrecord.FOOTER_BYTES)
    except OSError as exc:
        raise LogReadError(spath, f"cannot read file: {exc.strerror or exc}") from None
    except MemoryError:
        raise LogReadError(spath, "file too large to load into memory") from None
    # a file still being written may have changed since fstat: use what was read
    buf = padded.data[:got]
    problem = tfrecord.first_header_problem(buf)
    if problem:  # it shrank under us
        raise LogReadError(spath, f"not a readable TensorBoard event file: {problem}", 0)
    return buf, padded


def read(path: Path) -> list[RawRun]:
    """Read one event file into one RawRun (every scalar, texts, config, restarts, issues)."""
    spath = str(path)
    buf, padded = _load(path)
    framing = tfrecord.frame_fast(buf, spath, lead_byte=WALL_TIME_KEY)
    col = Collector(spath, framing.starts)
    decode_fast(buf, padded, framing, col)
    return [col.build(framing.issues)]


def read_reference(path: Path) -> list[RawRun]:
    """The same as :func:`read`, one record and one field at a time (no numpy tricks).

    Slow (a few seconds per million scalars); kept as the oracle the fast path is tested against.
    """
    spath = str(path)
    buf, _ = _load(path)
    framing = tfrecord.frame_reference(buf, spath)
    col = Collector(spath, framing.starts)
    for rec, (start, length) in enumerate(zip(framing.starts.tolist(), framing.lengths.tolist())):
        decode_reference(buf, rec, start, length, col)
    return [col.build(framing.issues)]


__all__ = ["NAME", "FILE_PREFIX", "sniff", "read", "read_reference", "decode_event", "Event", "SummaryValue", "hparams_from_plugin_content"]
