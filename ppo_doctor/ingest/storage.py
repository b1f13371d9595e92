"""Where log files live: the local disk, or any fsspec filesystem named by a URL.

Every command takes fsspec URLs (``s3://``, ``gs://``, ``az://``, ``hf://``, ``http(s)://``,
``memory://``; the protocol packages are the optional ``[remote]`` extra).  This is the one thin
layer that discovery and the readers go through, so that a remote tree is listed and read in place,
never copied to local disk first:

* :class:`RemotePath` is a :class:`~pathlib.PurePosixPath` whose first part is the scheme
  (``s3:``), so the pure path operations discovery relies on (``parent``, ``parents``, ``name``,
  ``relative_to``, ``/``, sorting, hashing) work unchanged and stay remote; the methods a reader
  calls on a path (``open``, ``read_bytes``, ``stat``, ``is_file``, ``is_dir``, ``glob`` ...) go
  to its fsspec filesystem.  It has no ``__fspath__``: a built-in ``open()`` of a remote path
  fails loudly instead of looking for a local file of that name;
* :func:`as_path` turns a command-line string into a :class:`~pathlib.Path` or a ``RemotePath``;
* :func:`open_binary`, :func:`size_of`, :func:`scandir`, :func:`realpath` are what readers and
  discovery call instead of ``open``, ``os.fstat(fh.fileno())``, ``os.scandir`` and
  ``os.path.realpath``; on local paths they are exactly those calls.

Opened remote files are fsspec's buffered files behind an :class:`io.BufferedReader`
(:mod:`ppo_doctor.ingest.remote_file`): a reader that seeks and reads a few KiB (a sniffer's
head, a TFRecord header) fetches those byte ranges, one that reads everything streams the object
into memory once; where a server refuses ranges the file is streamed once into a bounded
temporary copy instead.  Filesystem options come from fsspec's own configuration
(``fsspec.config.conf``, or ``FSSPEC_<PROTOCOL>_<OPTION>`` environment variables such as
``FSSPEC_S3_ENDPOINT_URL``), so credentials stay where the user keeps them.
"""

from __future__ import annotations

import io
import os
import stat as stat_mod
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from types import SimpleNamespace
from typing import IO, Any, Iterator, cast
from urllib.parse import quote, unquote

from ..errors import PPODoctorError
from .remote_file import io_errors, open_remote

LOCAL_SCHEMES = ("file",)

# Seconds a remote request may wait to connect, and between two reads of its answer: a stalled
# server fails the read with the URL named instead of holding a CI job
# (tests/test_issue28_remote_bounds.py).  Whole transfers are not bounded (a large log streams for longer).  ``PPO_DOCTOR_REMOTE_TIMEOUT``
# sets it.
REMOTE_TIMEOUT = 30.0
TIMEOUT_ENV = "PPO_DOCTOR_REMOTE_TIMEOUT"


def remote_timeout() -> float:
    """The request timeout in seconds: ``$PPO_DOCTOR_REMOTE_TIMEOUT`` when it is a number > 0,
    else :data:`REMOTE_TIMEOUT`."""
    text = os.environ.get(TIMEOUT_ENV, "")
    try:
        value = float(text)
    except ValueError:
        return REMOTE_TIMEOUT
    return value if 0 < value < float("inf") else REMOTE_TIMEOUT


@contextmanager
def request_timeout(seconds: float | None) -> Iterator[None]:
    """Within the block, remote requests time out after ``seconds`` (None: unchanged).

    The setting travels in :data:`TIMEOUT_ENV`, the one knob :func:`remote_timeout` reads, so
    that the worker processes and the local Dask cluster started inside the block inherit it
    (the workers of an existing cluster read their own environment)."""
    if seconds is None:
        yield
        return
    before = os.environ.get(TIMEOUT_ENV)
    os.environ[TIMEOUT_ENV] = repr(float(seconds))
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(TIMEOUT_ENV, None)
        else:
            os.environ[TIMEOUT_ENV] = before


def _timeout_options(scheme: str) -> dict[str, Any]:
    """fsspec options that bound every request of ``scheme`` by :func:`remote_timeout`, merged
    over the user's own (``fsspec.config.conf``)."""
    t = remote_timeout()
    if scheme in ("http", "https"):
        from aiohttp import ClientTimeout  # fsspec's HTTP filesystem is aiohttp's client
        from fsspec.config import conf

        client = dict(conf.get(scheme, {}).get("client_kwargs", {}))
        client["timeout"] = ClientTimeout(total=None, connect=t, sock_connect=t, sock_read=t)
        return {"client_kwargs": client}
    if scheme in ("s3", "s3a"):
        from fsspec.config import conf

        config = dict(conf.get("s3", {}).get("config_kwargs", {}))
        config.update(connect_timeout=t, read_timeout=t)  # botocore.config.Config
        return {"config_kwargs": config}
    return {}


def is_url(path: object) -> bool:
    """Whether ``path`` names a remote (fsspec) location: ``scheme://...`` other than ``file://``."""
    if isinstance(path, RemotePath):
        return True
    if not isinstance(path, str) or "://" not in path:
        return False
    scheme = path.split("://", 1)[0]
    # RFC 3986 scheme syntax; one letter is a Windows drive, not a scheme
    return len(scheme) > 1 and scheme[0].isalpha() and all(c.isalnum() or c in "+-." for c in scheme) and scheme.lower() not in LOCAL_SCHEMES


def as_path(path: str | os.PathLike[str]) -> Path:
    """A :class:`Path` for a local path (``file://`` URLs included), a :class:`RemotePath` for a URL."""
    if isinstance(path, RemotePath):
        return path  # type: ignore[return-value]
    if isinstance(path, str) and path.startswith("file://"):
        return Path(path[len("file://") :])
    if isinstance(path, str) and is_url(path):
        return RemotePath(_decoded(path))  # type: ignore[return-value]
    return Path(path)


class RemotePath(PurePosixPath):
    """A path on an fsspec filesystem (see the module docstring)."""

    def __str__(self) -> str:
        parts = self.parts
        if parts and len(parts[0]) > 1 and parts[0].endswith(":"):
            return parts[0] + "//" + "/".join(parts[1:])
        return PurePosixPath.__str__(self)

    def __fspath__(self) -> str:
        raise TypeError(f"{self} is a remote path: open it with ppo_doctor.ingest.storage.open_binary")

    # -- the filesystem ---------------------------------------------------------------------
    @property
    def url(self) -> str:
        return str(self)

    def _fs(self) -> tuple[Any, str]:
        if not self._http():
            return _filesystem(self.url)
        # the parts are names as they are on the server; the request spells each one
        # percent-encoded, and fsspec is told not to encode the URL again
        scheme, host, *names = self.parts
        return _filesystem(f"{scheme}//{host}/" + "/".join(quote(n, safe="") for n in names), encoded=True)

    def open(self, mode: str = "rb", **kw: Any) -> IO[Any]:
        if mode.replace("t", "") not in ("r", "rb"):
            raise io.UnsupportedOperation(f"{self}: remote logs are only read (mode {mode!r})")
        fs, p = self._fs()
        binary = open_remote(fs, p)
        if "b" not in mode:
            return io.TextIOWrapper(binary, encoding=kw.get("encoding") or "utf-8", errors=kw.get("errors") or "strict", newline=kw.get("newline"))
        return binary

    def read_bytes(self) -> bytes:
        fs, p = self._fs()
        with io_errors(str(self)):
            return bytes(fs.cat_file(p))

    def read_text(self, encoding: str | None = None, errors: str | None = None) -> str:
        return self.read_bytes().decode(encoding or "utf-8", errors or "strict")

    def stat(self) -> SimpleNamespace:
        fs, p = self._fs()
        try:
            with io_errors(str(self)):
                info = fs.info(p)
        except FileNotFoundError as exc:
            raise FileNotFoundError(2, "No such file or directory", str(self)) from exc
        is_dir = info.get("type") == "directory"
        mode = (stat_mod.S_IFDIR | 0o755) if is_dir else (stat_mod.S_IFREG | 0o644)
        size = int(info.get("size") or 0)
        return SimpleNamespace(st_size=size, st_mode=mode, st_mtime=_mtime(info))

    def lstat(self) -> SimpleNamespace:
        return self.stat()

    def exists(self) -> bool:
        fs, p = self._fs()
        try:
            with io_errors(str(self)):
                return bool(fs.exists(p))
        except OSError:
            return False

    def is_file(self) -> bool:
        fs, p = self._fs()
        try:
            # on HTTP every URL that answers is a "file", a folder's index page too
            with io_errors(str(self)):
                return bool(fs.isfile(p)) and not (self._http() and self.is_dir())
        except OSError:
            return False

    def is_dir(self) -> bool:
        fs, p = self._fs()
        try:
            # HTTP has no folders: a URL is one when ``<url>/`` serves an index of links (a file
            # answers 404 there, so this never downloads a log)
            with io_errors(str(self)):
                return bool(fs.isdir(_listing(self, p)))
        except OSError:
            return False

    def _http(self) -> bool:
        return self.parts[0].lower() in ("http:", "https:")

    def is_symlink(self) -> bool:
        return False

    def resolve(self, strict: bool = False) -> "RemotePath":
        return self

    def iterdir(self) -> Iterator["RemotePath"]:
        for entry in scandir(self):
            yield entry.path_obj

    def glob(self, pattern: str) -> Iterator["RemotePath"]:
        fs, p = self._fs()
        with io_errors(str(self)):
            hits = sorted(fs.glob(p.rstrip("/") + "/" + pattern))
        for hit in hits:
            # fsspec gives paths without the scheme (s3: "bucket/key"), whole URLs for http
            yield RemotePath(_decoded(hit) if "://" in hit else f"{self.parts[0]}//{hit.lstrip('/')}")

    def rglob(self, pattern: str) -> Iterator["RemotePath"]:
        return self.glob("**/" + pattern)


class _Entry:
    """What :func:`scandir` yields for a remote folder: the ``os.DirEntry`` methods discovery uses."""

    def __init__(self, path: RemotePath, is_dir: bool):
        self.path_obj = path
        self.path = path  # discovery calls as_path(entry.path)
        self.name = path.name
        self._dir = is_dir

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        return self._dir

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        return not self._dir

    def is_symlink(self) -> bool:
        return False


def scandir(folder: Path | RemotePath | str) -> Iterator[Any]:
    """``os.scandir(folder)``, or the entries of a remote folder (one listing call)."""
    if not isinstance(folder, RemotePath):
        return iter(os.scandir(folder))
    fs, p = folder._fs()
    entries = []
    with io_errors(str(folder)):
        listing = fs.ls(_listing(folder, p), detail=True)
    for info in listing:
        name = str(info["name"]).rstrip("/").rsplit("/", 1)[-1]
        if folder._http():
            name = unquote(name)  # an index page links to percent-encoded names
        if not name or name in (".", "..") or "/" in name:
            continue  # no file in this folder has such a name
        child = folder / name
        if str(child).rstrip("/") == str(folder).rstrip("/"):
            continue  # some servers list the folder itself
        entries.append(_Entry(child, info.get("type") == "directory"))
    return iter(entries)


def _listing(folder: RemotePath, p: str) -> str:
    """The path to list ``folder`` at: an HTTP index page lives at ``<url>/``, and its relative
    links resolve against that."""
    return p.rstrip("/") + "/" if folder._http() else p


def open_binary(path: Path | RemotePath | str) -> io.BufferedIOBase:
    """``open(path, "rb")`` for a local path or a remote one (an :class:`io.BufferedReader` over
    the fsspec file: the same methods, ``readline(size)`` and ``peek`` included)."""
    if isinstance(path, RemotePath):
        return cast(io.BufferedIOBase, path.open("rb"))
    return open(path, "rb")


def size_of(fh: IO[bytes] | io.IOBase) -> int:
    """The size of an open file: ``os.fstat`` locally, the filesystem's size for a remote file."""
    try:
        return os.fstat(fh.fileno()).st_size
    except (AttributeError, OSError, ValueError, TypeError, NotImplementedError):
        size = getattr(fh, "size", None)
        if isinstance(size, int):
            return size
        here = fh.tell()
        end = fh.seek(0, os.SEEK_END)
        fh.seek(here)
        return int(end)


def has_fileno(fh: IO[bytes] | io.IOBase) -> bool:
    """Whether ``fh`` is a local file (one that ``mmap`` and ``os.fstat`` can use)."""
    try:
        fh.fileno()
    except (AttributeError, OSError, ValueError, TypeError, NotImplementedError):
        return False
    return True


def realpath(path: Path | str) -> str:
    """``os.path.realpath`` locally; a remote path is its own real path (no links to follow)."""
    if isinstance(path, RemotePath):
        return str(path)
    return os.path.realpath(path)


def _decoded(url: str) -> str:
    """An HTTP(S) URL with its path percent-decoded (the names :class:`RemotePath` holds); other
    URLs unchanged (an S3 key is not percent-encoded)."""
    scheme, _, rest = url.partition("://")
    if scheme.lower() not in ("http", "https"):
        return url
    return f"{scheme}://{unquote(rest)}"


def _filesystem(url: str, **options: Any) -> tuple[Any, str]:
    """The fsspec filesystem of ``url`` and the path inside it (fsspec caches the instances)."""
    try:
        from fsspec.core import url_to_fs
    except ImportError as exc:
        raise PPODoctorError(f"{url}: reading URLs needs fsspec and its protocol package: the [remote] extra (in a checkout of ppo-doctor: pip install -e '.[remote]')") from exc
    try:
        return url_to_fs(url, **{**_timeout_options(url.partition("://")[0].lower()), **options})
    except (ImportError, ValueError) as exc:  # the protocol's package is missing, or an unknown protocol

        raise PPODoctorError(f"{url}: {exc}") from exc


def _mtime(info: dict[str, Any]) -> float:
    for key in ("mtime", "LastModified", "last_modified", "created"):
        v = info.get(key)
        if isinstance(v, (int, float)):
            return float(v)
        stamp = getattr(v, "timestamp", None)  # a datetime (S3's LastModified)
        if callable(stamp):
            return float(stamp())
    return 0.0


__all__ = ["RemotePath", "as_path", "has_fileno", "is_url", "open_binary", "realpath", "scandir", "size_of"]
