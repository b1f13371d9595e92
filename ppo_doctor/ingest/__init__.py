"""Ingestion: discover runs under a path, read every file with its format module, and
canonicalise the result into :class:`~ppo_doctor.run.Run` objects.

``load(path)`` never raises for bad input: unreadable files become entries of
``LoadResult.errors`` (file, offset, message) and every other run is still returned.
The readers are the built-in format modules of :data:`FORMAT_MODULES` (:mod:`.readers`, and the
TensorBoard and W&B wings :mod:`.tensorboard` and :mod:`.wandb`), then those of the
``ppo_doctor.readers`` plugins (:mod:`ppo_doctor.plugins`), which are asked last.  The modules at
this level are the helpers they share (:mod:`.base`, :mod:`.storage`, :mod:`.tabular` ...),
discovery (:mod:`.discover`, :mod:`.sweep_table`) and the followers of growing files (:mod:`.follow`).
"""

from __future__ import annotations

import importlib
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from .. import plugins
from ..errors import LogReadError, PPODoctorError
from ..frame import RawRun, RawSeries, ReadIssue, RunFrame
from ..canonical.frameworks import is_doctor_tag
from ..canonical.metrics import build_run
from ..run import Run
from .base import read_head
from .storage import as_path

log = logging.getLogger(__name__)

# The built-in readers in priority order, each format's name (its reader's NAME) -> the dotted
# path of its module: when two formats of one run hold the same raw tag, the earlier (more
# precise, less likely down-sampled) one is kept and the other is not counted twice.
FORMAT_MODULES = {
    "tensorboard": "ppo_doctor.ingest.tensorboard.reader",
    "wandb_binary": "ppo_doctor.ingest.wandb.binary",
    "trainer_state": "ppo_doctor.ingest.readers.trainer_state",
    "jsonl": "ppo_doctor.ingest.readers.jsonl",
    "mlflow": "ppo_doctor.ingest.readers.mlflow",
    "wandb_csv": "ppo_doctor.ingest.wandb.csv",
    "sb3_monitor": "ppo_doctor.ingest.readers.sb3_monitor",
    "csv_logs": "ppo_doctor.ingest.readers.csv_logs",
    "verl_console": "ppo_doctor.ingest.readers.verl_console",
    "sample_factory_console": "ppo_doctor.ingest.readers.sample_factory_console",
    # before the generic console readers: its step lines are specific, and a fork's printed dicts
    # or a box of dashes in the same log must not make it an HF or SB3 log
    "deepspeed_chat_console": "ppo_doctor.ingest.readers.deepspeed_chat_console",
    "hf_console": "ppo_doctor.ingest.readers.hf_console",
    "sb3_console": "ppo_doctor.ingest.readers.sb3_console",
}
# Formats whose reader imports decoders that recognising a file does not need: the module of a
# light ``sniff`` that imports none of them.  Sniffing asks the formats in priority order and
# imports each one's light sniffer only when it is reached; what it turns away costs nothing more,
# what it passes the reader's own ``sniff`` decides (W&B's readers re-export theirs: it decides at
# once).  So a check of one JSON-lines file imports neither the TensorBoard decoders nor the W&B
# history decoder, nor any reader after the one that claims it (benchmarks/RESULTS.md, "One small check").
SNIFFERS = {
    "tensorboard": "ppo_doctor.ingest.tensorboard.sniff",
    "wandb_binary": "ppo_doctor.ingest.wandb.binary_sniff",
    "wandb_csv": "ppo_doctor.ingest.wandb.csv_sniff",
}
# a reader's NAME: it names the format in reports (``Run.format``) and in the file lists
READER_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")

_PLUGIN_READERS: list[ModuleType] | None = None


@dataclass
class LoadResult:
    """The runs read from the paths given and the problems that kept others from being read."""

    runs: list[Run] = field(default_factory=list)
    errors: list[ReadIssue] = field(default_factory=list)


def display(path: Path | str) -> str:
    """A path as printable text: undecodable bytes of a file name appear as ``\\xNN`` escapes."""
    return os.fsencode(str(path)).decode("utf-8", "backslashreplace")


def reader_modules() -> list[ModuleType]:
    """The reader modules in priority order, the plugins' last.

    Not named ``readers``: importing the subpackage :mod:`.readers` binds that name on this
    package (the import system sets a submodule as an attribute of its parent)."""
    return [_import_builtin(name, module) for name, module in FORMAT_MODULES.items()] + plugin_readers()


def _import_builtin(name: str, module: str) -> ModuleType:
    """A built-in format's module.  One that cannot be imported is a broken installation,
    reported as such: dropping it would report its runs as absent (a broken plugin is a
    :class:`~ppo_doctor.errors.PluginError` for the same reason)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise PPODoctorError(f"the {name} reader ({module}) cannot be imported: {exc}; reinstall ppo-doctor") from exc


def plugin_readers() -> list[ModuleType]:
    """The ``ppo_doctor.readers`` plugins' modules, loaded and checked on first use."""
    global _PLUGIN_READERS
    if _PLUGIN_READERS is None:
        taken = {name: "a built-in reader" for name in FORMAT_MODULES}
        found = []
        for plugin in plugins.load(plugins.READERS):
            found.append(_checked_reader(plugin, taken))
            taken[found[-1].NAME] = f"the reader {plugin.target} of {plugin.dist}"
        _PLUGIN_READERS = found
    return list(_PLUGIN_READERS)


def _checked_reader(plugin: plugins.Plugin, taken: dict[str, str]) -> ModuleType:
    """The module of a reader plugin when it has the interface of :mod:`.base` and a free NAME."""
    mod = plugin.obj
    if not isinstance(mod, ModuleType):
        raise plugin.error(f"expected a reader module (NAME, sniff, read), got {plugins.kind(mod)}")
    name = getattr(mod, "NAME", None)
    if not isinstance(name, str) or not READER_NAME_RE.match(name):
        raise plugin.error(f"the reader's NAME must be lower-case letters, digits and _, got {name!r}")
    if name in taken:
        raise plugin.error(f"the format name {name!r} is already taken by {taken[name]}")
    missing = [f for f in ("sniff", "read") if not callable(getattr(mod, f, None))]
    if missing:
        raise plugin.error(f"the reader lacks the function(s) {', '.join(missing)} (sniff(path, head) -> bool, read(path) -> list[RawRun])")
    return mod


def reader_for(name: str) -> ModuleType:
    """The reader whose NAME is ``name`` (a format id discovery gave a file)."""
    if name in FORMAT_MODULES:
        return _import_builtin(name, FORMAT_MODULES[name])
    for mod in plugin_readers():
        if mod.NAME == name:
            return mod
    raise KeyError(f"no reader {name!r}")


def _claims(name: str, sniffer: Any, path: Path, head: bytes) -> bool:
    try:
        return bool(sniffer.sniff(path, head))
    except Exception:  # noqa: BLE001 - a sniffer must never take the walk down
        log.debug("sniffer %s failed on %s", name, path, exc_info=True)
        return False


def sniff(path: Path, head: bytes | None = None) -> ModuleType | None:
    """The reader of the first format (in priority order) that recognises ``path``; ``head`` =
    its first bytes.  The plugins are loaded first (a broken one is an error whatever the file),
    then asked last."""
    if head is None:
        head = read_head(path)
    plugged = plugin_readers()
    for name, module in FORMAT_MODULES.items():
        light = SNIFFERS.get(name)
        if light is not None and not _claims(name, _import_builtin(name, light), path, head):
            continue
        if _claims(name, _import_builtin(name, module), path, head):
            return reader_for(name)
    for mod in plugged:
        if _claims(mod.NAME, mod, path, head):
            return mod
    return None


def _read_file(fmt: str, fpath: Path, errors: list[ReadIssue]) -> list[RawRun] | None:
    """One file through its reader; what cannot be read becomes an entry of ``errors``."""
    try:
        return _checked_raws(fmt, reader_for(fmt).read(as_path(fpath)))
    except LogReadError as exc:
        errors.append(ReadIssue(path=exc.path, message=exc.message, offset=exc.offset))
    except PPODoctorError as exc:
        errors.append(ReadIssue(path=str(fpath), message=str(exc)))
    except Exception as exc:  # noqa: BLE001 - a reader bug must not hide the other runs
        log.debug("reader %s crashed on %s", fmt, fpath, exc_info=True)
        errors.append(ReadIssue(path=str(fpath), message=f"internal reader error ({type(exc).__name__}: {exc})"))
    return None


def _checked_raws(fmt: str, raws: Any) -> list[RawRun]:
    """What a reader returned, when it is a list of :class:`RawRun` holding :class:`RawSeries`;
    a :class:`PPODoctorError` naming the reader otherwise (a plugin reader that returns a string
    must cost its own file, not the run it sits in: issue 39)."""
    if not isinstance(raws, list) or not all(isinstance(r, RawRun) for r in raws):
        bad = raws if not isinstance(raws, list) else next(r for r in raws if not isinstance(r, RawRun))
        raise PPODoctorError(f"the {fmt} reader returned {type(bad).__name__}, not a list of RawRun{_plugin_note(fmt)}")
    for raw in raws:
        for s in (*raw.series, *raw.eval_series):
            if not isinstance(s, RawSeries):
                raise PPODoctorError(f"the {fmt} reader returned a RawRun holding {type(s).__name__}, not RawSeries{_plugin_note(fmt)}")
    return raws


def _plugin_note(fmt: str) -> str:
    """" (a plugin reader: module acme.reader)" for a plugin's format, "" for a built-in one."""
    return "" if fmt in FORMAT_MODULES else f" (a plugin reader: module {reader_for(fmt).__name__})"


ReadFile = Callable[[str, Path, list[ReadIssue]], "list[RawRun] | None"]


def read_source(source: Any, aliases: dict[str, str] | None, read_file: ReadFile | None = None) -> tuple[list[Run], list[ReadIssue]]:
    """Read every file of one discovered run and build its Run(s).

    Files of several formats merge into one run (the earlier, higher-priority format keeps a tag
    both have); a file holding several runs (interleaved JSONL parts) gives one run per part;
    ``add_scalars`` sub-run folders merge as ``<main>/<k>`` tags when their tags confirm it and
    are runs of their own otherwise.  ``read_file`` replaces the reading of one file (``watch``
    hands in what its followers have read so far); None means the format's ``read``.
    """
    errors: list[ReadIssue] = []
    subruns: dict[str, str] = getattr(source, "subruns", {}) or {}
    main: list[tuple[str, str, list[RawRun]]] = []
    by_sub: dict[str, list[tuple[str, str, list[RawRun]]]] = {}
    for fmt, fpath in source.files:
        raws = (read_file or _read_file)(fmt, fpath, errors)
        if raws is None:
            continue
        rel = subruns.get(str(fpath))
        (main if rel is None else by_sub.setdefault(rel, [])).append((fmt, str(fpath), raws))
    sessions = _split_sessions(main)
    main = sessions[-1]
    separate: list[tuple[str, Path, list[tuple[str, str, list[RawRun]]]]] = []
    for rel, items in sorted(by_sub.items()):
        if _rename_add_scalars(items, rel):
            main.extend(items)
        else:
            separate.append((f"{source.id}/{rel}", as_path(source.root) / rel, items))
    first = [(source.id, as_path(source.root), main)]
    if len(sessions) > 1:  # several runs in one folder: one run per session, named by its first event file
        first = [(f"{source.id}/{as_path(items[0][1]).name}", as_path(source.root), items) for items in sessions]

    # the files of this run that could not be read: the run is judged on the others only
    unread = list(getattr(source, "unread", [])) + [str(e) for e in errors if e.level == "error"]
    runs: list[Run] = []
    for rid, root, items in first + separate:
        parts = _assemble(items)
        filled = [p for p in parts if p[1].series or p[1].eval_series]
        for name, raw, formats, files in parts:
            if not raw.series and not raw.eval_series:
                if not filled:  # a metric-less side file (checkpoint list ...) next to real logs is fine
                    damage = [i for i in raw.issues if i.level == "error"]
                    # the damage says why nothing was read; otherwise say that nothing was found
                    # read in full with nothing to judge: nothing was lost, so not an error
                    errors.extend(damage or [ReadIssue(path=str(root), message="no metric values found in " + ", ".join(as_path(f).name for f in files), level="warning")])
                continue
            run_id = f"{rid}/{name}" if name else rid
            _printable(raw)
            try:
                runs.append(build_run(run_id, display(root), "+".join(formats), [display(f) for f in files], raw, aliases))
                runs[-1].unread = list(unread)
            except Exception as exc:  # noqa: BLE001 - like a reader bug: it must not hide the other runs
                log.debug("building run %s failed", run_id, exc_info=True)
                errors.append(ReadIssue(path=display(root), message=f"internal error while building the run ({type(exc).__name__}: {exc})"))
    return runs, errors


def _split_sessions(items: list[tuple[str, str, list[RawRun]]]) -> list[list[tuple[str, str, list[RawRun]]]]:
    """The files of one folder as training sessions: event files whose steps start again from the
    beginning are separate runs, one per file; a file that continues the steps stays with them.

    Several runs written into one log folder (one ``SummaryWriter`` per launch, TensorBoard draws
    them over each other) each start at the first step of the first file (usually 0); a resumed run
    starts later, at its checkpoint's step, and stays one run (its overlap is reported as a
    restart).  The doctor's own event file (only ``ppo_doctor/`` tags, :func:`_doctor_only`) and
    other formats in the folder (a ``progress.csv`` rewritten by each launch) go with
    the last session.  The event files are in name order, which is their creation time.
    """
    tb = [it for it in items if it[0] == "tensorboard" and not _doctor_only(it[2])]
    if len(tb) < 2:
        return [items]
    sessions: list[list[tuple[str, str, list[RawRun]]]] = [[]]
    origin: int | None = None  # first step of the first file
    reach: int | None = None  # last step of the current session
    for it in tb:
        first, end = _step_span(it[2])
        if first is not None and origin is not None and reach is not None and first <= origin < reach:
            sessions.append([])  # back to the beginning the earlier files went past
        sessions[-1].append(it)
        if first is not None:
            origin = first if origin is None else origin
            reach = end if reach is None or len(sessions[-1]) == 1 else max(reach, end)
    sessions[-1].extend(it for it in items if not any(it is t for t in tb))
    return sessions


def _doctor_only(raws: list[RawRun]) -> bool:
    """Whether a file holds nothing but the doctor's own tags: the event file DoctorCallback writes
    beside the trainer's (docs/live.md), whose first step is the first check's, is never a session."""
    tags = [s.tag for r in raws for s in r.series] + [t.tag for r in raws for t in r.texts]
    return bool(tags) and all(is_doctor_tag(t) for t in tags)


def _step_span(raws: list[RawRun]) -> tuple[int | None, int]:
    """First and last step of a file's series (None, 0 when it holds none)."""
    firsts = [int(s.steps.min()) for r in raws for s in r.series if len(s)]
    lasts = [int(s.steps.max()) for r in raws for s in r.series if len(s)]
    return (min(firsts), max(lasts)) if firsts else (None, 0)


def _printable(raw: RawRun) -> None:
    """Make every string a reader produced encodable as UTF-8: the frame's string columns
    (pyarrow-backed) and every output format need it.

    File names that are not valid UTF-8 (kept as surrogates by Python) become ``\\xNN`` text;
    lone surrogates inside log content (JSON ``"\\ud800"`` escapes, undecodable bytes a reader
    kept with ``surrogateescape``) become U+FFFD.
    """
    shown: dict[str, str] = {}  # every series of a file has the same source
    for s in raw.series + raw.eval_series:
        if s.source not in shown:
            shown[s.source] = display(s.source)
        s.source = shown[s.source]
        s.tag = _utf8(s.tag)
    for t in raw.texts:
        t.source = display(t.source)
        t.tag, t.text, t.prompt = _utf8(t.tag), _utf8(t.text), _utf8(t.prompt)
    for i in raw.issues:
        i.path = display(i.path)
        i.message = _utf8(i.message)
    _utf8_tree(raw.config)


def _utf8(value: Any) -> Any:
    """``value`` with lone surrogates replaced by U+FFFD (non-strings unchanged)."""
    if not isinstance(value, str) or value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        # through UTF-16: a lone surrogate is undecodable there and becomes U+FFFD
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return value


def _utf8_tree(root: dict) -> None:
    """:func:`_utf8` on every key and string of a config, in place.  Iterative, and each
    container is visited once: JSON nests deeper than Python's recursion limit allows, and
    YAML aliases can share (or even contain) a container."""
    stack: list[Any] = [root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        items = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        for key, value in items:
            if isinstance(value, (dict, list)):
                stack.append(value)
            elif isinstance(value, str):
                node[key] = _utf8(value)
            if isinstance(node, dict) and isinstance(key, str) and _utf8(key) is not key:
                node[_utf8(key)] = node.pop(key)


def _assemble(items: list[tuple[str, str, list[RawRun]]]) -> list[tuple[str | None, RawRun, list[str], list[str]]]:
    """Merge the RawRuns of a run's files: unnamed ones into one, named parts by their name."""
    merged: dict[str | None, tuple[RawRun, list[str], list[str]]] = {}
    for fmt, fpath, raws in items:
        named = len(raws) > 1 or any(r.name for r in raws)
        for k, r in enumerate(raws, 1):
            key = (r.name or f"part{k}") if named else None
            into, formats, files = merged.setdefault(key, (RawRun(), [], []))
            _merge(into, r, fmt, formats)
            if fmt not in formats:
                formats.append(fmt)
            if fpath not in files:
                files.append(fpath)
    return [(name, raw, formats, files) for name, (raw, formats, files) in merged.items()]


def _rename_add_scalars(items: list[tuple[str, str, list[RawRun]]], rel: str) -> bool:
    """Rename the tags of an ``add_scalars`` sub-run folder to ``<main>/<k>``; False if it is not one.

    torch writes ``<logdir>/<main with '/' -> '_'>_<k>/`` and tensorboardX ``<logdir>/<main>/<k>/``,
    both with tag ``<main>`` (docs/sources.md#tensorboard-event-files).  Every tag must fit that pattern.
    """
    plan: list[tuple[RawSeries, str]] = []
    for _, _, raws in items:
        for raw in raws:
            for s in raw.series + raw.eval_series:
                new = _add_scalars_tag(s.tag, rel)
                if new is None:
                    return False
                plan.append((s, new))
    if not plan:
        return False
    for s, new in plan:
        s.tag = new
    return True


def _add_scalars_tag(tag: str, rel: str) -> str | None:
    if "/" not in rel:  # torch: one folder named <main with '/' -> '_'>_<k>
        flat = tag.replace("/", "_") + "_"
        if rel.startswith(flat) and len(rel) > len(flat):
            return f"{tag}/{rel[len(flat):]}"
        return None
    main, _, k = rel.rpartition("/")  # tensorboardX: folders <main>/<k>
    return f"{tag}/{k}" if main == tag and k else None


def _tag_key(tag: str) -> str:
    """One key for the names one metric gets in different sinks of the same run.

    HF ``Trainer`` writes ``loss`` / ``eval_loss`` in trainer_state.json but ``train/loss`` /
    ``eval/loss`` to TensorBoard and W&B (``rewrite_logs``, docs/sources.md#hf-trainer-logs).
    """
    if tag.startswith("train/"):
        return tag[len("train/") :]
    if tag.startswith("eval/"):
        return "eval_" + tag[len("eval/") :]
    return tag


def _merge(into: RawRun, raw: RawRun, fmt: str, formats_seen: list[str]) -> None:
    """Add one file's RawRun to a run; a later format only adds tags the earlier ones lack."""
    for attr in ("series", "eval_series"):
        have = getattr(into, attr)
        incoming = getattr(raw, attr)
        if formats_seen and fmt not in formats_seen:
            keys = {_tag_key(s.tag) for s in have}
            dup = [s.tag for s in incoming if _tag_key(s.tag) in keys]
            have.extend(s for s in incoming if _tag_key(s.tag) not in keys)
            if dup:
                where = incoming[0].source if incoming else ""
                into.issues.append(
                    ReadIssue(
                        path=where,
                        message=f"{len(dup)} tag(s) also read from {'+'.join(formats_seen)} were not counted twice (e.g. {dup[0]})",
                        # a note: the same training written in two formats is routine, and
                        # nothing the user could change (shown with -v, in JSON and SARIF)
                        level="info",
                    )
                )
        else:
            have.extend(incoming)
    for k, v in raw.config.items():
        into.config.setdefault(k, v)
    # A sample both a TensorBoard text table and samples.jsonl hold (the reference loop, HF's
    # callbacks) is one sample: counted twice it doubles the weight text rules give it, and the
    # live Monitor, fed each sample once, would disagree with the offline report.
    have_texts = {(t.step, t.text, t.prompt) for t in into.texts}
    into.texts.extend(t for t in raw.texts if (t.step, t.text, t.prompt) not in have_texts)
    into.issues.extend(raw.issues)
    into.restarts.extend(raw.restarts)


__all__ = ["LoadResult", "display", "reader_modules", "reader_for", "sniff", "RunFrame"]
