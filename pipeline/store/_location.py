"""Where a job directory lives: a local folder (flock, temp file + fsync + rename) or a folder
of an object store named by an fsspec URL (``s3://``, ``gs://``, ``az://``/``abfs://``,
``memory://``), where there is neither rename nor flock: every object is one PUT (atomic:
readers see the whole object or none), and the lock is a lease (:mod:`pipeline.store._lease`).

:class:`Location` is the one interface :class:`pipeline.store.JobDir`, the part functions and
the readers use, with one signature for both kinds: what differs (the lock, how a file is
written, temp files, listing) is a method of :class:`LocalLocation` or :class:`RemoteLocation`,
never a test of which one a caller holds. :func:`location` makes one from a path or URL, and
:func:`job_path` names a directory (or a file in it) the way messages and readers show it.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path
from typing import IO, Any, cast
from urllib.parse import urlsplit

from pipeline.errors import BoggleError, ConfigError, RunIOError
from pipeline.store._flock import run_lock
from pipeline.store._pack import SUFFIX, PackedFolder, UnpackError
from pipeline.store._schema import LOCK_FILE, PARTS_DIR
from pipeline.urls import SCHEMES, check_url, filesystem, is_url
from pipeline.urls import reason as _reason

__all__ = [
    "SCHEMES",
    "LocalLocation",
    "Location",
    "ObjectPath",
    "PartRef",
    "RemoteLocation",
    "UnpackError",
    "check_url",
    "file_blake2b",
    "is_url",
    "job_path",
    "location",
]


class ObjectPath(str):
    """The URL of a file or folder in an object store, with the few Path methods readers use
    (``name``, ``parent``, ``/``, ``resolve``, ``read_bytes``)."""

    @property
    def name(self) -> str:
        return self.rstrip("/").rsplit("/", 1)[-1]

    @property
    def parent(self) -> ObjectPath:
        return ObjectPath(self.rstrip("/").rsplit("/", 1)[0])

    def __truediv__(self, name: str) -> ObjectPath:
        return ObjectPath(f"{self.rstrip('/')}/{name}")

    def resolve(self) -> ObjectPath:
        return self

    def read_bytes(self) -> bytes:
        return location(str(self.parent)).read_bytes(self.name)


PartRef = Path | ObjectPath  # a job directory or a file in it: a local path, or an object's URL


class Location(PackedFolder):
    """A job directory: files named relative to it (``part-00000.parquet``,
    ``_parts/_part-00000.json``). A run's side files are packed (:class:`PackedFolder`): the
    methods take the store's names and pack and unpack them."""

    display: str = ""

    def __str__(self) -> str:
        return self.display

    def size(self, name: str) -> int:
        raise NotImplementedError

    def blake2b(self, name: str) -> str:
        with self.open(name) as fh:
            return _blake2b_of(fh)

    def open(self, name: str) -> IO[bytes]:
        raise NotImplementedError

    def names(self, folder: str = "") -> list[str]:
        """The names of the files directly in ``folder`` (none if it is absent)."""
        raise NotImplementedError

    def remove(self, name: str) -> None:
        """Remove a file; an absent one is fine."""
        raise NotImplementedError

    @contextmanager
    def writing(self, name: str) -> Iterator[Path]:
        """A local path to write ``name`` to; it becomes visible whole once the block ends."""
        raise NotImplementedError
        yield Path()

    def url(self, name: str = "") -> str:
        return f"{self.display}/{name}" if name else self.display

    def ensure(self) -> None:
        """Check the location can hold a job directory (create the local folder)."""

    def is_dir(self) -> bool:
        """Whether the directory is there. An object store has no folders (one is there as soon
        as an object under it is): what a reader misses there shows as its missing files."""
        return True

    def local_file(
        self, name: str, size: int, blake2b: str, *, verify: bool = True
    ) -> tuple[Path, str | None]:
        """A file on this machine that holds ``name`` as a manifest recorded it (``size``
        bytes, BLAKE2b ``blake2b``), for a reader to read, and what is wrong with it (None:
        nothing): its size and, with ``verify``, its checksum against the record. A local
        folder's file itself; in an object store a download kept for the process (what is
        verified is exactly what is read)."""
        raise NotImplementedError

    def ref(self, name: str = "") -> PartRef:
        """The directory (or the file ``name`` in it) as messages and readers name it."""
        raise NotImplementedError

    def lock(self) -> AbstractContextManager[Any]:
        """Hold the directory for a writer for the block: yields the lease to check before each
        commit (None where the lock cannot be lost: a local flock)."""
        raise NotImplementedError

    def entries(self) -> list[str]:
        """What the directory holds besides the lock and the part records (a local folder's
        subfolders included): what a job directory that holds no job must not."""
        return self.names()

    def remove_temp_files(self) -> None:
        """Delete the temp files a killed writer left behind (call with the lock held); an
        object store has none (every file is one PUT)."""

    def remove_folder(self, folder: str) -> None:
        """Remove the folder ``folder`` and every file in it."""
        for name in self.names(folder):
            self.remove(f"{folder}/{name}")

    def folders_holding(self, markers: tuple[str, ...]) -> list[tuple[str, int]]:
        """Every folder at or below this one that holds a file named in ``markers`` (the
        outermost: nothing below one is searched), as (path or URL, bytes of every file in
        it); a ConfigError (exit 2) where there is nothing at all."""
        raise NotImplementedError


class LocalLocation(Location):
    """A folder on a local or network file system (today's code path: flock, rename, fsync)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.display = str(path)

    def _exists(self, name: str) -> bool:
        return (self.path / name).is_file()

    def _get(self, name: str) -> bytes:
        return (self.path / name).read_bytes()

    def _put(self, name: str, data: bytes) -> None:
        from pipeline.io import atomic_path

        with atomic_path(self.path / name) as tmp:
            tmp.write_bytes(data)

    def size(self, name: str) -> int:
        return (self.path / self.physical(name)).stat().st_size

    def open(self, name: str) -> IO[bytes]:
        return open(self.path / self.physical(name), "rb")

    def names(self, folder: str = "") -> list[str]:
        d = self.path / folder if folder else self.path
        if not d.is_dir():
            return []
        prefix = f"{folder}/" if folder else ""
        return [self.logical(prefix + p.name)[len(prefix) :] for p in d.iterdir() if p.is_file()]

    def remove(self, name: str) -> None:
        (self.path / self.physical(name)).unlink(missing_ok=True)

    @contextmanager
    def writing(self, name: str) -> Iterator[Path]:
        from pipeline.io import atomic_path

        if self.physical(name) == name:
            with atomic_path(self.path / name) as tmp:
                yield tmp
            return
        # packed, through a temp file beside it (a killed writer's is removed with the others)
        folder, _, base = name.rpartition("/")
        (self.path / folder).mkdir(parents=True, exist_ok=True)
        tmp_name = f".{base}.{os.getpid()}.{threading.get_ident()}.tmp"
        with self.packing_through(name, self.path / folder / tmp_name) as tmp:
            yield tmp

    def url(self, name: str = "") -> str:
        return str(self.path / self.physical(name)) if name else str(self.path)

    def is_dir(self) -> bool:
        return self.path.is_dir()

    def local_file(
        self, name: str, size: int, blake2b: str, *, verify: bool = True
    ) -> tuple[Path, str | None]:
        path = self.ref(name)
        got = self.size(name)
        if got != size:
            return path, _size_problem(got, size)
        if verify and self.blake2b(name) != blake2b:
            return path, CHECKSUM_DIFFERS
        return path, None

    def ref(self, name: str = "") -> Path:
        return self.path / self.physical(name) if name else self.path

    @contextmanager
    def lock(self) -> Iterator[None]:
        with run_lock(self.path):
            yield None

    def entries(self) -> list[str]:
        skip = (LOCK_FILE, PARTS_DIR)
        return sorted(self.logical(p.name) for p in self.path.iterdir() if p.name not in skip)

    def remove_temp_files(self) -> None:
        for folder in (self.path, self.path / PARTS_DIR):
            for p in folder.iterdir() if folder.is_dir() else ():
                if p.name.startswith(".") and p.name.endswith(".tmp") and p.is_file():
                    p.unlink(missing_ok=True)

    def remove_folder(self, folder: str) -> None:
        shutil.rmtree(self.path / folder, ignore_errors=True)

    def folders_holding(self, markers: tuple[str, ...]) -> list[tuple[str, int]]:
        if not self.path.is_dir():
            raise ConfigError(f"{self}: no such folder")
        out = []
        markers = (*markers, *(m + SUFFIX for m in markers))  # a packed job's too
        for folder, dirs, files in os.walk(self.path):
            if any(m in files for m in markers):
                dirs[:] = []  # nothing below a job directory is another job
                out.append((folder, _folder_bytes(Path(folder))))
            else:
                dirs.sort()
        return out


class RemoteLocation(Location):
    """A folder of an object store. Every file is written whole by one PUT (a part is written
    to a local temp file first, then uploaded); nothing is renamed."""

    def __init__(self, scheme: str, root: str):
        self.scheme = scheme
        self.root = root
        self.display = f"{scheme}://{root}"
        self._fs: Any = None

    def __getstate__(self) -> dict[str, Any]:
        # workers rebuild the file system from their own environment (credential chain)
        return {"scheme": self.scheme, "root": self.root, "display": self.display, "_fs": None}

    @property
    def fs(self) -> Any:
        if self._fs is None:
            self._fs = filesystem(self.scheme)
        return self._fs

    def key(self, name: str = "") -> str:
        return f"{self.root}/{name}" if name else self.root

    @contextmanager
    def _io(self, what: str) -> Iterator[None]:
        """Storage errors as one line, exit 5 (no credentials in them: only our own URL)."""
        try:
            yield
        except (BoggleError, FileExistsError):
            raise
        except FileNotFoundError as exc:
            raise RunIOError(f"{what}: not found ({_reason(exc)})", source=self.display) from None
        except PermissionError:
            raise RunIOError(f"{what}: permission denied", source=self.display) from None
        except Exception as exc:
            raise RunIOError(f"{what}: {_reason(exc)}", source=self.display) from None

    def ensure(self) -> None:
        if self.scheme == "memory":
            return
        bucket = self.root.split("/", 1)[0]
        with self._io("cannot reach the bucket"):
            try:
                # the folder itself: a role may list its prefix and not the bucket's top
                self.fs.ls(self.root, detail=False)
            except FileNotFoundError:  # a new folder, or no such bucket
                self.fs.info(bucket)

    def _exists(self, name: str) -> bool:
        with self._io(f"cannot read {name}"):
            found = bool(self.fs.isfile(self.key(name)))
        if not found and not getattr(self, "_reached", False):
            # the file systems answer "no such file" for a missing bucket or an endpoint that
            # cannot be reached too: that is an I/O failure (exit 5), not a folder without it
            self.ensure()
            self._reached = True
        return found

    def _get(self, name: str) -> bytes:
        try:
            return bytes(self.fs.cat_file(self.key(name)))
        except FileNotFoundError:
            raise
        except Exception:
            with self._io(f"cannot read {name}"):
                raise

    def _put(self, name: str, data: bytes) -> None:
        with self._io(f"cannot write {name}"):
            self.fs.pipe_file(self.key(name), data)

    def create_bytes(self, name: str, data: bytes) -> None:
        """Create ``name`` only if no such object exists (a conditional PUT, If-None-Match);
        FileExistsError if one does."""
        with self._io(f"cannot create {name}"):
            self.fs.pipe_file(self.key(name), data, mode="create")

    def size(self, name: str) -> int:
        with self._io(f"cannot read {name}"):
            return int(self.fs.info(self.key(self.physical(name)))["size"])

    def open(self, name: str) -> IO[bytes]:
        with self._io(f"cannot read {name}"):
            return self.fs.open(self.key(self.physical(name)), "rb")  # type: ignore[no-any-return,unused-ignore]

    def names(self, folder: str = "") -> list[str]:
        with self._io("cannot list the job directory"):
            try:
                entries = self.fs.ls(self.key(folder), detail=True)
            except FileNotFoundError:
                return []
        found = [e["name"].rstrip("/").rsplit("/", 1)[-1] for e in entries if e.get("type") == "file"]
        prefix = f"{folder}/" if folder else ""
        return [self.logical(prefix + name)[len(prefix) :] for name in found]

    def remove(self, name: str) -> None:
        with self._io(f"cannot remove {name}"), suppress(FileNotFoundError):
            self.fs.rm_file(self.key(self.physical(name)))

    @contextmanager
    def writing(self, name: str) -> Iterator[Path]:
        folder = tempfile.mkdtemp(prefix="boggle-put-")
        tmp = Path(folder) / name.rsplit("/", 1)[-1]
        try:
            yield tmp
            if self.physical(name) != name:  # a packed side file: one PUT of the packed file
                self.write_bytes(name, tmp.read_bytes())
                return
            with self._io(f"cannot write {name}"):
                # one PUT (a multipart upload for large files, which is as atomic: the object
                # appears only when the upload completes)
                self.fs.put_file(str(tmp), self.key(name))
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def url(self, name: str = "") -> str:
        return f"{self.display}/{self.physical(name)}" if name else self.display

    def ref(self, name: str = "") -> ObjectPath:
        return ObjectPath(self.url(name))

    def lock(self) -> AbstractContextManager[Any]:
        from pipeline.store._lease import Lease

        self.ensure()
        return Lease(self)

    def entries(self) -> list[str]:
        return sorted(self.names())  # lease and part records live in folders of their own

    def folders_holding(self, markers: tuple[str, ...]) -> list[tuple[str, int]]:
        try:
            listing: dict[str, Any] = self.fs.find(self.root, detail=True)
        except FileNotFoundError:
            listing = {}
        if not listing:
            raise ConfigError(f"{self}: nothing there")
        # some stores (memory://) answer "/bucket/key" for "bucket/key"
        keys = {k.strip("/"): int(v.get("size") or 0) for k, v in listing.items()}
        markers = (*markers, *(m + SUFFIX for m in markers))  # a packed job's too
        held = sorted({k.rsplit("/", 1)[0] for k in keys if k.rsplit("/", 1)[-1] in markers})
        # a job directory's folders hold no other job: keep the outermost
        outer = [j for j in held if not any(j.startswith(o + "/") for o in held if o != j)]
        return [
            (f"{self.scheme}://{j}", sum(s for k, s in keys.items() if k.startswith(j + "/"))) for j in outer
        ]

    def download(self, name: str, dest: Path) -> None:
        with self._io(f"cannot read {name}"):
            self.fs.get_file(self.key(self.physical(name)), str(dest))

    def local_file(
        self, name: str, size: int, blake2b: str, *, verify: bool = True
    ) -> tuple[Path, str | None]:
        """The download of ``name`` (once: a copy of the same checksum is reused), checked; a
        fresh copy's checksum is compared even without ``verify`` (the copy is kept under the
        checksum it must have), and a copy that differs is removed."""
        key = hashlib.blake2b(self.url(name).encode(), digest_size=8).hexdigest()
        path = _cache_dir() / f"{key}-{blake2b}-{name}"
        fresh = not path.is_file()
        if fresh:
            from pipeline.io import atomic_path

            with atomic_path(path) as tmp:
                self.download(name, tmp)
        problem = None
        if path.stat().st_size != size:
            problem = _size_problem(path.stat().st_size, size)
        elif (verify or fresh) and file_blake2b(path) != blake2b:
            problem = CHECKSUM_DIFFERS
        if problem is not None:
            path.unlink(missing_ok=True)
        return path, problem


def location(spec: str | os.PathLike[str] | Location, what: str = "--out") -> Location:
    """The location ``spec`` names: a plain path or ``file://`` URL is local, any other URL
    remote (see :data:`SCHEMES`)."""
    if isinstance(spec, Location):
        return spec
    if not is_url(spec):
        return LocalLocation(Path(spec))
    text = check_url(str(spec), what)
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme == "file":
        return LocalLocation(Path(parts.path))
    return RemoteLocation(scheme, f"{parts.netloc}{parts.path}".rstrip("/"))


def job_path(spec: str | os.PathLike[str] | Location, what: str = "--out") -> PartRef:
    """A job directory named by a path or URL, as it is shown and read: a local ``Path``, or
    the :class:`ObjectPath` of a folder in an object store (no trailing ``/``)."""
    return location(spec, what).ref()


CHECKSUM_DIFFERS = "checksum differs from the one recorded (damaged or replaced)"


def _size_problem(size: int, recorded: int) -> str:
    return f"{size:,} bytes, {recorded:,} recorded (truncated or replaced)"


def file_blake2b(path: Path | str) -> str:
    """BLAKE2b (128-bit) of a file's bytes, hex; streamed, so memory stays flat."""
    with open(path, "rb") as fh:
        return _blake2b_of(fh)


def _blake2b_of(fh: IO[bytes]) -> str:
    # hashlib's loop reads into one reused buffer; it needs readinto, which IO does not declare
    reader = cast("io.BufferedIOBase", fh)
    return hashlib.file_digest(reader, lambda: hashlib.blake2b(digest_size=16)).hexdigest()


_CACHE: dict[str, Path] = {}
_CACHE_LOCK = threading.Lock()  # parts are checked (and downloaded) on several threads


def _cache_dir() -> Path:
    """Where parts read from an object store are kept: a temporary folder (``$TMPDIR``)
    removed when the process ends."""
    with _CACHE_LOCK:
        if "dir" not in _CACHE:
            import atexit

            folder = Path(tempfile.mkdtemp(prefix="boggle-parts-"))
            atexit.register(shutil.rmtree, folder, True)
            _CACHE["dir"] = folder
        return _CACHE["dir"]


def _folder_bytes(folder: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(folder):
        for name in files:
            with suppress(OSError):  # removed while we looked
                total += (Path(dirpath) / name).stat().st_size
    return total
