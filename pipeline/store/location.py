"""Where a job directory lives: a local folder (flock, temp file + fsync + rename) or a folder
of an object store named by an fsspec URL (``s3://``, ``gs://``, ``az://``/``abfs://``,
``memory://``), where there is neither rename nor flock: every object is one PUT (atomic:
readers see the whole object or none), and the lock is a lease (:mod:`pipeline.store.lease`).

:class:`Location` is the one interface :class:`pipeline.store.JobDir`, the part functions and
the readers use; :class:`LocalLocation` keeps today's local code path exactly.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from pipeline.errors import BoggleError, RunIOError
from pipeline.urls import SCHEMES, check_url, filesystem, is_url
from pipeline.urls import reason as _reason

__all__ = ["SCHEMES", "LocalLocation", "Location", "RemoteLocation", "check_url", "is_url", "location"]


class Location:
    """A job directory: files named relative to it (``part-00000.parquet``,
    ``_parts/_part-00000.json``)."""

    local: bool = True
    display: str = ""

    def __str__(self) -> str:
        return self.display

    def is_file(self, name: str) -> bool:
        raise NotImplementedError

    def read_bytes(self, name: str) -> bytes:
        raise NotImplementedError

    def write_bytes(self, name: str, data: bytes) -> None:
        """Write a whole file so that a reader sees the old one or the new one, never a part."""
        raise NotImplementedError

    def size(self, name: str) -> int:
        raise NotImplementedError

    def blake2b(self, name: str) -> str:
        h = hashlib.blake2b(digest_size=16)
        with self.open(name) as fh:
            while block := fh.read(1 << 20):
                h.update(block)
        return h.hexdigest()

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


class LocalLocation(Location):
    """A folder on a local or network file system (today's code path: flock, rename, fsync)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.display = str(path)

    def is_file(self, name: str) -> bool:
        return (self.path / name).is_file()

    def read_bytes(self, name: str) -> bytes:
        return (self.path / name).read_bytes()

    def write_bytes(self, name: str, data: bytes) -> None:
        from pipeline.io import atomic_path

        with atomic_path(self.path / name) as tmp:
            tmp.write_bytes(data)

    def size(self, name: str) -> int:
        return (self.path / name).stat().st_size

    def open(self, name: str) -> IO[bytes]:
        return open(self.path / name, "rb")

    def names(self, folder: str = "") -> list[str]:
        d = self.path / folder if folder else self.path
        return [p.name for p in d.iterdir() if p.is_file()] if d.is_dir() else []

    def remove(self, name: str) -> None:
        (self.path / name).unlink(missing_ok=True)

    @contextmanager
    def writing(self, name: str) -> Iterator[Path]:
        from pipeline.io import atomic_path

        with atomic_path(self.path / name) as tmp:
            yield tmp

    def url(self, name: str = "") -> str:
        return str(self.path / name) if name else str(self.path)


class RemoteLocation(Location):
    """A folder of an object store. Every file is written whole by one PUT (a part is written
    to a local temp file first, then uploaded); nothing is renamed."""

    local = False

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

    def is_file(self, name: str) -> bool:
        with self._io(f"cannot read {name}"):
            found = bool(self.fs.isfile(self.key(name)))
        if not found and not getattr(self, "_reached", False):
            # the file systems answer "no such file" for a missing bucket or an endpoint that
            # cannot be reached too: that is an I/O failure (exit 5), not a folder without it
            self.ensure()
            self._reached = True
        return found

    def read_bytes(self, name: str) -> bytes:
        try:
            return bytes(self.fs.cat_file(self.key(name)))
        except FileNotFoundError:
            raise
        except Exception:
            with self._io(f"cannot read {name}"):
                raise

    def write_bytes(self, name: str, data: bytes) -> None:
        with self._io(f"cannot write {name}"):
            self.fs.pipe_file(self.key(name), data)

    def create_bytes(self, name: str, data: bytes) -> None:
        """Create ``name`` only if no such object exists (a conditional PUT, If-None-Match);
        FileExistsError if one does."""
        with self._io(f"cannot create {name}"):
            self.fs.pipe_file(self.key(name), data, mode="create")

    def size(self, name: str) -> int:
        with self._io(f"cannot read {name}"):
            return int(self.fs.info(self.key(name))["size"])

    def open(self, name: str) -> IO[bytes]:
        with self._io(f"cannot read {name}"):
            return self.fs.open(self.key(name), "rb")  # type: ignore[no-any-return,unused-ignore]

    def names(self, folder: str = "") -> list[str]:
        with self._io("cannot list the job directory"):
            try:
                entries = self.fs.ls(self.key(folder), detail=True)
            except FileNotFoundError:
                return []
        return [e["name"].rstrip("/").rsplit("/", 1)[-1] for e in entries if e.get("type") == "file"]

    def remove(self, name: str) -> None:
        with self._io(f"cannot remove {name}"), suppress(FileNotFoundError):
            self.fs.rm_file(self.key(name))

    @contextmanager
    def writing(self, name: str) -> Iterator[Path]:
        folder = tempfile.mkdtemp(prefix="boggle-put-")
        tmp = Path(folder) / name.rsplit("/", 1)[-1]
        try:
            yield tmp
            with self._io(f"cannot write {name}"):
                # one PUT (a multipart upload for large files, which is as atomic: the object
                # appears only when the upload completes)
                self.fs.put_file(str(tmp), self.key(name))
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def download(self, name: str, dest: Path) -> None:
        with self._io(f"cannot read {name}"):
            self.fs.get_file(self.key(name), str(dest))


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
