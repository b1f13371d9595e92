"""Discovery: walk a path and group the log files it holds into runs, as a user would see them.

Every file is recognised by content (``ppo_doctor.ingest.sniff``), then files are grouped:

* files of one folder belong to one run (several TensorBoard event files are read in the order
  of the timestamp in their names; a ``progress.csv`` or ``trainer_state.json`` beside them is the
  same run in another format).  Event files whose steps start again from the beginning are
  several runs in one folder and become one run each once read (``ingest._split_sessions``);
  a file that continues the steps is a resumed run and stays with it;
* HF Trainer's ``runs/<Mon DD_HH-MM-SS>_<host>/`` and the hparams sub-run ``<run>/<float time>/``
  belong to their parent run (the Trainer's ``output_dir``, also while it holds no log of its
  own yet, so a training has one name from its first line) (docs/sources.md#trl-legacy-ppo-metrics,
  docs/sources.md#hf-trainer-logs);
* ``checkpoint-N/trainer_state.json`` copies hold a prefix of the same history: only the newest is
  read (largest N, or the one in the output folder when its ``global_step`` is at least as large);
* a folder of event files under another folder of event files may be an ``add_scalars`` sub-run
  (torch: ``<logdir>/<main>_<k>/``, tensorboardX: ``<logdir>/<main>/<k>/``, tag ``<main>``): it is
  passed with its parent and the orchestrator merges it after checking its tags (see
  ``RunSource.subruns``);
* sibling role folders (``logs/`` + ``tb/``, ``log/`` + ``summary/<name>/`` ...) under a folder with no
  log of its own, each holding exactly one run, are one run in several formats (corpus
  ``rlhfkit-toy-ppo-gpt2``, ``tf1-a2c-minigrid-stagnant``);
* W&B ``run-*/`` and ``offline-run-*/`` folders are one run each (the ``.wandb`` file; its reader
  looks beside it for ``files/config.yaml``); MLflow ``mlruns/<exp>/<run>/`` folders are one run each;
* a single file passed directly is one run.

Not every file that parses is a training log: W&B's own side files (``debug.log``,
``debug-internal.log``, ``wandb-summary.json``, ``wandb-metadata.json``, ``requirements.txt``, and the
captured console ``output.log`` of a W&B run folder) are never runs, and a CSV with one row per
run is a sweep table (:mod:`.sweep_table`): it is skipped with a note.

Symbolic links to folders are followed only when their target lies outside the walked tree and
was not visited yet (``wandb/latest-run`` is not counted twice; loops end).  Unreadable files and
folders, empty log files and undecodable names become :class:`ReadIssue` entries, never errors.
Run ids are paths relative to the given root (its own name when the root itself is the run).
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple, Sequence

from ..frame import ReadIssue
from . import FORMAT_MODULES, display, sniff
from .base import HEAD_BYTES
from .readers.mlflow import is_run_dir
from .storage import RemotePath, as_path, open_binary, realpath, scandir
from .sweep_table import sweep_table_reason

SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules", ".trash", ".ipynb_checkpoints", ".venv", "venv", "site-packages"})
# Sibling folders that hold one run's logs in one format each (see the module docstring).  Not
# ``wandb/``: W&B steps count log calls (``_step``), so its series would not line up with the others.
ROLE_DIRS = frozenset({"logs", "log", "tb", "tensorboard", "tb_logs", "tensorboard_logs", "summary", "summaries", "metrics", "csv", "jsonl"})
_WANDB_RUN = re.compile(r"^(?:offline-)?run-\d{8}_\d{6}-[A-Za-z0-9]+$")
_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")
_HF_RUN = re.compile(r"^[A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2}_.+$")  # runs/Jun29_06-31-19_<host>
_HPARAMS_RUN = re.compile(r"^\d{9,}\.\d+$")  # add_hparams sub-run named by time.time()
_TF_NAME = re.compile(r"tfevents\.(\d+)\.(?:.*\.(\d+)\.(\d+)(?:\.[^.]*)?$)?")
_GLOBAL_STEP = re.compile(rb'"global_step"\s*:\s*(\d+)')
# Compressed files are named, not guessed at: the readers take logs as their writers leave them,
# and the message says what to run.  Magic numbers: gzip (RFC 1952), bzip2 ("BZh", a block size
# digit, then the block magic 0x314159265359 = "1AY&SY"), xz, zstd (RFC 8878), zip.
_COMPRESSED = (
    (re.compile(rb"\x1f\x8b"), "gzip", "gunzip"),
    (re.compile(rb"BZh[1-9]1AY&SY"), "bzip2", "bunzip2"),
    (re.compile(rb"\xfd7zXZ\x00"), "xz", "unxz"),
    (re.compile(rb"\x28\xb5\x2f\xfd"), "zstd", "unzstd"),
    (re.compile(rb"PK\x03\x04"), "zip", "unzip"),
)
_COMPRESSED_SUFFIX = re.compile(r"\.(?:gz|bz2|xz|zst|zip)$", re.IGNORECASE)
# A rotated log's number (logrotate's ``metrics.jsonl.1``, Python's RotatingFileHandler): a
# ``metrics.jsonl.1.gz`` beside ``metrics.jsonl`` holds the run's first half, never a file to pass
# over without a word (issue 39)
_ROTATED_SUFFIX = re.compile(r"\.\d+$")
# Files W&B writes beside a run's history (wandb/sdk: internal/internal.py, lib/filenames.py):
# logs of the client and its service, the summary and system metadata, the pip freeze.
WANDB_SIDE_FILES = frozenset({"debug.log", "debug-internal.log", "debug-core.log", "debug-cli.log", "wandb-summary.json", "wandb-metadata.json", "requirements.txt", "conda-environment.yaml"})
# What ppo-doctor itself writes beside a run (DoctorCallback's reports in ``output_dir``, a
# ``report --format json`` saved next to the logs): never a log of the run, never a read error.
OWN_OUTPUTS = frozenset({"ppo-doctor.json", "ppo-doctor.html", "ppo-doctor.sarif", "ppo-doctor.md", "ppo-doctor.xml"})
_OWN_JSON = re.compile(rb'^\s*\{\s*"schema_version"\s*:\s*\d+\s*,\s*"tool"\s*:\s*\{\s*"name"\s*:\s*"ppo-doctor"')
_LOG_LIKE = re.compile(r"(tfevents|\.jsonl$|\.ndjson$|\.csv$|\.tsv$|\.wandb$|trainer_state\.json$|progress\.json$|metrics\.json$)")


@dataclass
class RunSource:
    """One run found by discovery: its id, root folder (or file), and files as (format, path).

    ``subruns`` maps a file (as ``str(path)``) to the folder, relative to ``root``, of a possible
    ``add_scalars`` sub-run; the orchestrator merges it into the run when its tags confirm it and
    makes it a run of its own otherwise.
    """

    id: str
    root: Path
    files: list[tuple[str, Path]] = field(default_factory=list)
    subruns: dict[str, str] = field(default_factory=dict)
    # "path: why" of the files in the run's folder that discovery could not read
    unread: list[str] = field(default_factory=list)


@dataclass
class _Group:
    """The files of one run folder as the walk collects them, before they become a :class:`RunSource`."""

    root: Path
    files: list[tuple[str, Path]] = field(default_factory=list)
    subruns: dict[str, str] = field(default_factory=dict)
    unit: bool = False  # a W&B / MLflow run folder: never merged with anything


class Discovery(NamedTuple):
    """What a walk found: the runs (sorted by id), the problems met, and the sweep tables
    (:mod:`.sweep_table`) it skipped as training logs, in the order walked; ``ppo-doctor sweep``
    reads those instead of walking the roots again."""

    sources: list[RunSource]
    issues: list[ReadIssue]
    tables: list[Path]


def walk(path: str | Path, exclude: Sequence[str] = ()) -> Discovery:
    """Every run and sweep table under ``path`` and the problems met while looking; files and
    folders that match a glob of ``exclude`` (the ``exclude`` settings) are passed over."""
    root = as_path(path)
    walker = _Walker(root, exclude)
    if root.is_file():
        sources, issues = walker.single_file(root)
        return Discovery(sources, issues, walker.tables)
    if not root.is_dir():
        return Discovery([], [ReadIssue(display(root), _not_a_log(root))], [])
    walker.run()
    return Discovery(walker.sources(), walker.issues, walker.tables)


def discover(path: str | Path, exclude: Sequence[str] = ()) -> tuple[list[RunSource], list[ReadIssue]]:
    """Every run under ``path`` (sorted by id) and the problems met while looking."""
    found = walk(path, exclude)
    return found.sources, found.issues


# Folders a remote walk goes down at most, and lists at most in all (a local walk is bounded by
# the real paths it has seen; a remote one has no real path, and a server can make up folders).
MAX_REMOTE_DEPTH = 32
MAX_REMOTE_FOLDERS = 10_000


def _signature(folder: Path, entries: list[Any]) -> tuple[tuple[str, bool], ...] | None:
    """A remote folder's listing as names and kinds (None for a local folder)."""
    if not isinstance(folder, RemotePath):
        return None
    return tuple((e.name, bool(e.is_dir())) for e in entries)


class _Walker:
    def __init__(self, root: Path, exclude: Sequence[str] = ()):
        self.root = root
        # ruff's exclude patterns: a glob matched against an entry's name and against its path
        # under the root, a trailing "/" allowed on a folder's (docs/configuration.md)
        self.exclude = tuple(p.rstrip("/") for p in exclude if p.rstrip("/"))
        self.root_real = realpath(root)
        self.issues: list[ReadIssue] = []
        self.visited: set[str] = set()
        self.seen_files: set[str] = set()
        self.by_dir: dict[Path, list[tuple[str, Path]]] = {}
        self.units: list[_Group] = []
        self.checkpoints: dict[Path, list[tuple[int, Path]]] = {}
        self.dir_links: list[Path] = []
        self.file_links: list[Path] = []
        self.remote_listed = 0
        self.tables: list[Path] = []

    # -- walking ------------------------------------------------------------------------------
    def single_file(self, file: Path) -> tuple[list[RunSource], list[ReadIssue]]:
        fmt = self._sniff(file, quiet=False)
        if fmt is None or self._not_a_run(file, fmt):
            return [], self.issues
        return [RunSource(id=display(file.name), root=file, files=[(fmt, file)])], self.issues

    def run(self) -> None:
        self._walk(self.root)
        for link in sorted(self.dir_links):
            real = realpath(link)
            if _inside(real, self.root_real) or real in self.visited:
                continue  # the target is walked anyway (wandb/latest-run) or was already
            self._walk(link)
        for link in sorted(self.file_links):
            if realpath(link) not in self.seen_files:
                self._file(link)

    def _walk(self, top: Path) -> None:
        """Depth-first through ``top`` in name order, with a stack of folder listings instead of
        recursion: a tree thousands of folders deep is walked (tests/test_hostile_round2.py), as deep as the
        operating system's path calls go (past that, a folder is reported as unreadable)."""
        # real paths are joined on the way down (os.path.realpath costs one lstat per path
        # component: quadratic in depth); only the top and the symlinks are resolved
        real_top = realpath(top)
        first = self._list(top, real_top, [])
        stack = [(iter(first), real_top, _signature(top, first))]
        while stack:
            listing, real, _ = stack[-1]
            entry = next(listing, None)
            if entry is None:
                stack.pop()
                continue
            sub = self._entry(entry, real)
            if sub is not None:
                real_sub = os.path.join(real, entry.name)
                entries = self._list(sub, real_sub, [s for _, _, s in stack])
                stack.append((iter(entries), real_sub, _signature(sub, entries)))

    def _remote_loop(self, folder: Path, entries: list[Any], ancestors: list[Any]) -> bool:
        """Whether a remote ``folder`` repeats a folder above it, or lies too deep to walk.

        A server that follows symbolic links (``python -m http.server`` does) serves a link to a
        parent as an ever deeper tree of new URLs, each listing what the parent lists: a listing
        identical to an ancestor's is that loop, and :data:`MAX_REMOTE_DEPTH` bounds any other
        endless tree (a remote path has no real path to compare)."""
        sig = _signature(folder, entries)
        if sig is None:
            return False
        if sig and sig in ancestors:
            self.issues.append(ReadIssue(display(folder), "lists exactly what a folder above it lists: a link loop on the server, not walked", level="warning"))
            return True
        if len(ancestors) >= MAX_REMOTE_DEPTH:
            self.issues.append(ReadIssue(display(folder), f"more than {MAX_REMOTE_DEPTH} folders deep on a remote filesystem: not walked", level="warning"))
            return True
        return False

    def _list(self, folder: Path, real: str, ancestors: list[Any]) -> list[os.DirEntry]:
        """The entries of a folder to walk (``real``: its real path): none when it was
        visited, cannot be listed, or is handled whole (``_special``)."""
        if real in self.visited:
            return []
        self.visited.add(real)
        if isinstance(folder, RemotePath):
            self.remote_listed += 1
            if self.remote_listed > MAX_REMOTE_FOLDERS:
                if self.remote_listed == MAX_REMOTE_FOLDERS + 1:
                    self.issues.append(ReadIssue(display(folder), f"more than {MAX_REMOTE_FOLDERS} folders listed on a remote filesystem: this one and the rest are not walked", level="warning"))
                return []
        try:
            entries = sorted(scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            self.issues.append(ReadIssue(display(folder), f"cannot list folder ({exc.strerror or exc})", level="warning"))
            return []
        if self._remote_loop(folder, entries, ancestors):
            return []
        try:
            if self._special(folder, entries):
                return []
        except OSError as exc:
            self.issues.append(ReadIssue(display(folder), f"cannot inspect folder ({exc.strerror or exc})", level="warning"))
            return []
        return entries

    def _entry(self, entry: os.DirEntry, parent_real: str) -> Path | None:
        """Record one folder entry; return it when it is a folder to walk into."""
        p = as_path(entry.path)
        if self.exclude and self._excluded(p):
            return None
        try:
            if entry.is_symlink():
                try:
                    to_dir = entry.is_dir()
                    to_file = not to_dir and entry.is_file()
                except OSError:  # a link loop, whatever its name
                    self.issues.append(ReadIssue(display(p), _link_problem(p), level="warning"))
                    return None
                if to_dir:
                    self.dir_links.append(p)
                elif to_file:
                    self.file_links.append(p)
                elif _LOG_LIKE.search(entry.name):
                    self.issues.append(ReadIssue(display(p), _link_problem(p), level="warning"))
                return None
            if entry.is_dir(follow_symlinks=False):
                return p if entry.name not in SKIP_DIRS else None
            if entry.is_file(follow_symlinks=False):
                self._file(p, os.path.join(parent_real, entry.name))
            elif _LOG_LIKE.search(entry.name):  # never opened: reading a FIFO would block
                self.issues.append(ReadIssue(display(p), _not_a_log(p), level="warning"))
        except OSError as exc:
            self.issues.append(ReadIssue(display(p), f"cannot inspect ({exc.strerror or exc})", level="warning"))
        return None

    def _excluded(self, p: Path) -> bool:
        rel = _rel(p, self.root)
        return any(fnmatch.fnmatchcase(p.name, pat) or fnmatch.fnmatchcase(rel, pat) for pat in self.exclude)

    def _special(self, folder: Path, entries: list[os.DirEntry]) -> bool:
        """W&B run folders, MLflow run folders and checkpoint folders: handled whole."""

        name = folder.name
        if _WANDB_RUN.match(name):
            files = [as_path(e.path) for e in entries if e.name.endswith(".wandb") and e.is_file()]
            if not files:
                self.issues.append(ReadIssue(display(folder), "W&B run folder without a run-<id>.wandb file: its metrics are only in that file", level="warning"))
                return True
            group = _Group(root=folder, unit=True)
            for f in files:
                fmt = self._sniff(f, quiet=False)
                if fmt is not None:
                    group.files.append((fmt, f))
            if group.files:
                self.units.append(group)
            return True
        if is_run_dir(folder):
            self.units.append(_Group(root=folder, files=[("mlflow", folder)], unit=True))
            return True
        m = _CHECKPOINT.match(name)
        if m and folder != self.root:  # a checkpoint folder given directly is read like any folder
            # model weights, optimizer state, tokenizer ... and a copy of the trainer state
            for e in entries:
                if e.name == "trainer_state.json" and e.is_file():
                    self.checkpoints.setdefault(folder.parent, []).append((int(m.group(1)), as_path(e.path)))
            return True
        return False

    def _file(self, file: Path, real: str | None = None) -> None:
        if _wandb_side_file(file) or file.name in OWN_OUTPUTS:
            return  # W&B's logs and metadata, ppo-doctor's own reports: never a run, not worth a note
        fmt = self._sniff(file, quiet=True, real=real)
        if fmt is not None and not self._not_a_run(file, fmt):
            self.by_dir.setdefault(file.parent, []).append((fmt, file))
        elif fmt is None and file.name.lower().endswith((".csv", ".tsv")) and sweep_table_reason(file) is not None:
            # a runs table without a numeric column is no log at all (nothing to note), but
            # ``ppo-doctor sweep`` reads it
            self.tables.append(file)

    def _not_a_run(self, file: Path, fmt: str) -> bool:
        """A readable file that is not a training log: a W&B side file, a sweep table (noted)."""

        if _wandb_side_file(file):
            self.issues.append(ReadIssue(display(file), "a W&B side file (logs / metadata of the run), not a training log: skipped", level="info"))
            return True
        if fmt == "csv_logs":
            why = sweep_table_reason(file)
            if why is not None:
                self.issues.append(ReadIssue(display(file), f"sweep table ({why}), not a training log: skipped (ppo-doctor sweep reads it)", level="info"))
                self.tables.append(file)
                return True
        return False

    def _sniff(self, file: Path, *, quiet: bool, real: str | None = None) -> str | None:
        """The format NAME of a file, recording why not when it is a log that cannot be read."""
        shown = display(file)
        if shown != str(file) and _LOG_LIKE.search(shown):
            self.issues.append(ReadIssue(shown, "file name is not valid UTF-8 (shown with \\x escapes)", level="warning"))
        try:
            with open_binary(file) as fh:
                head = fh.read(HEAD_BYTES)
        except OSError as exc:
            if not quiet or _LOG_LIKE.search(file.name):
                self.issues.append(ReadIssue(shown, f"cannot read file ({exc.strerror or exc})"))
            return None
        real = real or realpath(file)
        if real in self.seen_files:
            return None
        if not head:
            if not quiet or _LOG_LIKE.search(file.name):
                self.issues.append(ReadIssue(shown, "empty file", level="warning"))
            return None
        if _OWN_JSON.match(head):
            return None  # a ppo-doctor JSON report under another name
        packed = next(((kind, tool) for magic, kind, tool in _COMPRESSED if magic.match(head)), None)
        if packed is not None:
            if not quiet or _LOG_LIKE.search(_ROTATED_SUFFIX.sub("", _COMPRESSED_SUFFIX.sub("", file.name))):
                self.issues.append(ReadIssue(shown, f"{packed[0]}-compressed: decompress first ({packed[1]})"))
            return None
        mod = sniff(file, head)
        if mod is None:
            if not quiet:
                self.issues.append(ReadIssue(shown, "not a recognised log format (TensorBoard, W&B, JSONL, JSON, CSV, MLflow, veRL / HF Trainer / SB3 console)"))
            elif _LOG_LIKE.search(file.name):
                self.issues.append(ReadIssue(shown, "looks like a log by its name but its content was not recognised", level="warning"))
            return None
        self.seen_files.add(real)
        return mod.NAME

    # -- grouping -----------------------------------------------------------------------------
    def sources(self) -> list[RunSource]:
        groups: dict[Path, _Group] = {d: _Group(root=d, files=list(fs)) for d, fs in self.by_dir.items()}
        for unit in self.units:
            groups[unit.root] = unit
        self._newest_trainer_state(groups)
        self._merge_named_subruns(groups)
        self._mark_add_scalars(groups)
        self._merge_role_dirs(groups)
        self._drop_monitors_beside_logs(groups)
        out: list[RunSource] = []
        for g in groups.values():
            if not g.files:
                continue
            rel = _rel(g.root, self.root)
            rid = display(self.root.resolve().name if rel == "." else rel)
            out.append(RunSource(id=rid, root=g.root, files=sorted(g.files, key=_file_order), subruns=dict(g.subruns)))
        out.sort(key=lambda s: s.id)
        self._attach_unread(out)
        return out

    def _attach_unread(self, sources: list[RunSource]) -> None:
        """Give each file discovery could not read to the run whose folder holds it (the deepest
        one): that run is then not reported as if it had been read in full."""
        by_root = {display(s.root): s for s in sources}
        for issue in self.issues:
            if issue.level != "error":
                continue
            folder = issue.path.rpartition("/")[0]  # display strings: local paths and URLs alike
            while folder and folder not in by_root:
                folder = folder.rpartition("/")[0]
            if folder:
                by_root[folder].unread.append(str(issue))

    def _within(self, p: Path) -> bool:
        # comparing parts, not ``self.root in p.parents``: one Path comparison per ancestor
        # made deep trees quadratic
        n = len(self.root.parts)
        return p.parts[:n] == self.root.parts

    def _newest_trainer_state(self, groups: dict[Path, _Group]) -> None:
        for parent, cps in self.checkpoints.items():
            n_max, newest = max(cps)
            group = groups.setdefault(parent, _Group(root=parent))
            own = [p for fmt, p in group.files if fmt == "trainer_state" and p.name == "trainer_state.json"]
            step = _global_step(own[0]) if own else None
            if step is not None and step >= n_max:
                continue  # save_state() wrote the full history to the output folder
            fmt = self._sniff(newest, quiet=False)
            if fmt is not None:
                group.files = [(f, p) for f, p in group.files if p not in own] + [(fmt, newest)]

    def _merge_named_subruns(self, groups: dict[Path, _Group]) -> None:
        """hparams sub-runs into their run, then HF ``runs/<date>_<host>/`` into the output folder."""
        for d in sorted(groups, key=lambda p: -len(p.parts)):
            parent = groups.get(d.parent)
            if _HPARAMS_RUN.match(d.name) and _only_tb(groups[d]) and parent is not None and _has_tb(parent):
                parent.files.extend(groups.pop(d).files)
        # The output folder names the training from its first line: while it trains, a Trainer
        # writes only runs/<date>_<host>/ (the output folder holds nothing yet, or checkpoints);
        # trainer_state.json arrives at the end.  Naming the run after runs/<date>_<host>/ until
        # then gave one training two names in ``watch`` (issue 41).
        by_output: dict[Path, list[Path]] = {}
        for d in groups:
            if _HF_RUN.match(d.name) and d.parent.name == "runs" and self._within(d.parent.parent):
                by_output.setdefault(d.parent.parent, []).append(d)
        for out_dir, runs in by_output.items():
            if len(runs) == 1 and not groups.get(out_dir, _Group(root=out_dir)).unit:  # several trainings into one folder stay apart
                groups.setdefault(out_dir, _Group(root=out_dir)).files.extend(groups.pop(runs[0]).files)

    def _mark_add_scalars(self, groups: dict[Path, _Group]) -> None:
        """Event-file folders below another event-file folder: possible add_scalars sub-runs."""
        for d in sorted(groups, key=lambda p: -len(p.parts)):
            if d not in groups or not _only_tb(groups[d]) or d == self.root:
                continue
            anc = d.parent
            while anc not in groups and anc != self.root and self._within(anc.parent):
                anc = anc.parent
            parent = groups.get(anc)
            if parent is None or not _has_tb(parent):
                continue
            g = groups.pop(d)
            rel = _rel(d, parent.root)
            for _, f in g.files:
                inner = g.subruns.get(str(f))
                parent.subruns[str(f)] = f"{rel}/{inner}" if inner else rel
            parent.files.extend(g.files)

    def _drop_monitors_beside_logs(self, groups: dict[Path, _Group]) -> None:
        """A Monitor episode file (``monitor.csv``) in a run that the trainer's own log describes
        is left out, with a note: the trainer's episode statistics come from that file (SB3's
        ``rollout/ep_rew_mean`` is a mean of its last 100 episodes), and its steps count one
        environment's steps, not the trainer's, so beside the trainer's series it would read as
        a metric that stopped early.  Alone, it is the run's log (:mod:`.readers.sb3_monitor`)."""
        for group in groups.values():
            monitors = [p for fmt, p in group.files if fmt == "sb3_monitor"]
            if not monitors or len(monitors) == len(group.files):
                continue
            group.files = [(fmt, p) for fmt, p in group.files if fmt != "sb3_monitor"]
            for p in monitors:
                self.issues.append(ReadIssue(display(p), "a Monitor episode file beside the trainer's own log: the trainer's log is read", level="info"))

    def _merge_role_dirs(self, groups: dict[Path, _Group]) -> None:
        # below[top][name]: the groups under top's child folder ``name``, kept up to date as
        # groups merge (one pass over each group's ancestors, not one per ancestor and group)
        below: dict[Path, dict[str, list[Path]]] = {}
        for r in groups:
            self._index_below(below, r, add=True)
        for top in sorted(below, key=lambda p: -len(p.parts)):
            children = below[top]
            if top in groups or len(children) < 2 or not all(name in ROLE_DIRS and len(rs) == 1 for name, rs in children.items()):
                continue
            merged = _Group(root=top)
            for (r,) in list(children.values()):
                part = groups.pop(r)
                self._index_below(below, r, add=False)
                merged.files.extend(part.files)
                merged.subruns.update(part.subruns)
            groups[top] = merged
            self._index_below(below, top, add=True)

    def _index_below(self, below: dict[Path, dict[str, list[Path]]], r: Path, *, add: bool) -> None:
        """Add (or remove) group ``r`` to the entries of its ancestors within the root."""
        if not self._within(r):
            return
        child = r
        for anc in r.parents:
            if not self._within(anc):
                break
            names = below.setdefault(anc, {})
            if add:
                names.setdefault(child.name, []).append(r)
            else:
                names[child.name].remove(r)
                if not names[child.name]:
                    del names[child.name]
            child = anc


def _kind(mode: int) -> str | None:
    """What a file that is neither a regular file nor a folder is, by its ``st_mode``."""
    for test, name in (
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return None


def _not_a_log(path: Path) -> str:
    """Why ``path`` (neither a regular file nor a folder) is not read: say what it is."""
    if path.is_symlink():
        return _link_problem(path)
    try:
        kind = _kind(os.stat(path).st_mode)
    except OSError as exc:
        return "no such file or directory" if isinstance(exc, FileNotFoundError) else f"cannot inspect ({exc.strerror or exc})"
    return f"{kind}, not a log file or folder: not read" if kind else "not a regular file or folder: not read"


def _link_problem(link: Path) -> str:
    """A symbolic link that leads to no file or folder: broken, a loop, or a link to a device."""
    try:
        kind = _kind(os.stat(link).st_mode)
    except FileNotFoundError:
        return "broken symbolic link"
    except OSError as exc:
        return f"symbolic link that cannot be followed ({exc.strerror or exc})"
    return f"symbolic link to {kind or 'something that is not a regular file or folder'}: not read"


def _wandb_side_file(file: Path) -> bool:
    """W&B's own files; ``output.log`` only in a W&B run's ``files/`` (elsewhere it may be a console log)."""
    if file.name in WANDB_SIDE_FILES:
        return True
    if file.name == "output.log" and file.parent.name == "files":
        run_dir = file.parent.parent
        return bool(_WANDB_RUN.match(run_dir.name)) or (file.parent / "wandb-metadata.json").exists()
    return False


def _has_tb(g: _Group) -> bool:
    return any(fmt == "tensorboard" for fmt, _ in g.files)


def _only_tb(g: _Group) -> bool:
    return bool(g.files) and all(fmt == "tensorboard" for fmt, _ in g.files)


def _inside(path: str, root: str) -> bool:
    """Whether the absolute path ``path`` lies in ``root`` (both real paths)."""
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:
        return False


def _rel(path: Path, root: Path) -> str:
    try:
        return PurePosixPath(path.relative_to(root)).as_posix()
    except ValueError:
        return path.as_posix()


def _global_step(file: Path) -> int | None:
    """``global_step`` of a trainer_state.json (sort_keys puts it before the log history)."""
    try:
        with open_binary(file) as fh:
            m = _GLOBAL_STEP.search(fh.read(1 << 16))
    except OSError:
        return None
    return int(m.group(1)) if m else None


def _file_order(item: tuple[str, Path]) -> tuple:
    """Higher-priority formats first; event files by the creation time in their names."""
    fmt, path = item
    prio = list(FORMAT_MODULES).index(fmt) if fmt in FORMAT_MODULES else len(FORMAT_MODULES)
    m = _TF_NAME.search(path.name) if fmt == "tensorboard" else None
    if m is None:
        return (prio, 0, 0, 0, str(path))
    # events.out.tfevents.<time>.<host>[.<pid>.<counter>]: by time, then the writer's counter
    return (prio, int(m.group(1)), int(m.group(2) or 0), int(m.group(3) or 0), str(path))
