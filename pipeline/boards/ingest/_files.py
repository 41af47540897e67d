"""The input files of an ingest: their kind (from the name), a local copy of a remote input, and
reading them safely and once: regular files only, hashed as they are read (so a re-run can tell
that an input changed), gzip inflated under a ratio cap, lines bounded in length.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import stat
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pipeline.errors import BoardError, BoggleError, InternalError
from pipeline.io import INFLATE_FLOOR, MAX_INFLATE_RATIO, MAX_LINE_BYTES, describe_mode

HASH_BLOCK = 1 << 20


def file_kind(path: str) -> str:
    """``csv``, ``parquet`` or ``text``, from the file name."""
    name = path.lower()
    if name.endswith(".csv"):
        return "csv"
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    return "text"


_DOWNLOADED: dict[str, str] = {}


def local_input(path: str) -> str:
    """The local file to read for the input ``path``: itself, or for a URL (``s3://...``) a
    copy downloaded once per process, so the bytes fingerprinted are the bytes parsed (the
    board ``source`` column still names the URL)."""
    from pipeline.urls import download, is_url

    if not is_url(path):
        return path
    if path not in _DOWNLOADED:
        import atexit
        import shutil
        import tempfile

        folder = tempfile.mkdtemp(prefix="boggle-input-")
        atexit.register(shutil.rmtree, folder, True)
        dest = Path(folder) / (path.rstrip("/").rsplit("/", 1)[-1] or "input")
        download(path, dest)
        _DOWNLOADED[path] = str(dest)
    return _DOWNLOADED[path]


def not_regular(mode: int) -> str:
    return f"not a regular file ({describe_mode(mode)}); ingest reads regular files only"


def fingerprint(path: str) -> dict[str, Any]:
    """Size and SHA-256 of an input file, taken before the run reads it (recorded so a resumed
    run can tell it is unchanged; :func:`check_unchanged` compares it with what was read)."""
    raw, _ = open_regular(path)
    with raw:
        size, sha = hash_rest(raw, hashlib.sha256())
    return {"file": path, "bytes": size, "sha256": sha.hexdigest()}


@dataclass(frozen=True)
class InputDigest:
    """What an ingest read of one input: the size and SHA-256 of the bytes the parser consumed
    through one open handle, and (device, inode, size, mtime_ns) of the file when it was opened."""

    file: str
    bytes: int
    sha256: str
    opened: tuple[int, int, int, int]


def check_unchanged(inputs: Sequence[Mapping[str, Any]], digests: Mapping[str, InputDigest]) -> None:
    """Refuse (BoggleError, exit 2) a run whose input changed while it ran: the bytes read must
    hash to the fingerprint taken at the start (``inputs``, from :func:`fingerprint`), and the
    path must still name the file that was opened, with its size and mtime. Call it after the
    last chunk and before anything is certified."""
    for fp in inputs:
        path = fp["file"]
        got = digests.get(path)
        if got is None:
            raise InternalError(f"input {path} was not read to its end before the run was finished")
        try:
            now: tuple[int, int, int, int] | None = file_identity(os.stat(local_input(path)))
        except FileNotFoundError:
            now = None
        if got.sha256 != fp["sha256"] or got.bytes != fp["bytes"] or now != got.opened:
            what = "removed" if now is None else "replaced or modified"
            raise BoggleError(
                f"input file {what} while the run read it (its size, mtime or SHA-256 no longer "
                "match those taken at the start); nothing was certified: re-run once it stays put "
                "(with --overwrite if its content changed)",
                source=path,
            )


def file_identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def open_regular(path: str) -> tuple[IO[bytes], os.stat_result]:
    """Open ``path`` unbuffered and refuse it unless it is a regular file: /dev/zero never ends
    and a FIFO can change under a second reading, so neither can be fingerprinted."""
    # O_NONBLOCK: opening a FIFO must not wait for a writer before it can be refused
    fd = os.open(local_input(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise BoggleError(not_regular(st.st_mode), source=path)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=0), st
    except BaseException:
        os.close(fd)
        raise


def hash_rest(fh: IO[bytes], sha: Any) -> tuple[int, Any]:
    size = 0
    while block := fh.read(HASH_BLOCK):
        sha.update(block)
        size += len(block)
    return size, sha


class _HashingReader(io.RawIOBase):
    """Hashes every byte read through it, so the digest is that of the bytes the parser got."""

    def __init__(self, raw: IO[bytes]):
        self._raw = raw
        self.sha = hashlib.sha256()
        self.size = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self._raw.readinto(buffer)  # type: ignore[attr-defined]
        if n:
            self.sha.update(memoryview(buffer)[:n])
            self.size += n
        return n or 0

    def fileno(self) -> int:
        return self._raw.fileno()

    def drain(self) -> None:
        """Hash what the parser left unread (a gzip trailer), so the digest covers the file."""
        n, _ = hash_rest(self._raw, self.sha)
        self.size += n


@contextmanager
def read_source(path: str, digests: MutableMapping[str, InputDigest] | None) -> Iterator[_HashingReader]:
    """One input opened once; when the block reads it to the end, ``digests[path]`` records what
    was read (a block left early records nothing)."""
    raw, st = open_regular(path)
    try:
        reader = _HashingReader(raw)
        yield reader
        reader.drain()
        if digests is not None:
            digests[path] = InputDigest(path, reader.size, reader.sha.hexdigest(), file_identity(st))
    finally:
        raw.close()


class _InflateCap(io.RawIOBase):
    """Decompressed bytes of a gzip input, refused past ``cap`` (a decompression bomb)."""

    def __init__(self, inner: Any, cap: int, path: str):
        self._inner = inner
        self._cap = cap
        self._path = path
        self.out = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self._inner.readinto(buffer)
        self.out += n or 0
        if self.out > self._cap:
            raise BoardError(
                f"gzip input inflates to more than {self._cap:,} bytes ({MAX_INFLATE_RATIO}x its "
                "size); refused as a likely decompression bomb",
                source=self._path,
            )
        return n or 0


def binary_stream(reader: _HashingReader, path: str) -> IO[bytes]:
    """The input's bytes, gunzipped as they are read when it starts with the gzip magic."""
    buffered = io.BufferedReader(reader, HASH_BLOCK)
    if buffered.peek(2)[:2] != b"\x1f\x8b":
        return buffered
    size = os.fstat(reader.fileno()).st_size
    cap = max(INFLATE_FLOOR, MAX_INFLATE_RATIO * size)
    gz = gzip.GzipFile(fileobj=buffered, mode="rb")
    return io.BufferedReader(_InflateCap(gz, cap, path), HASH_BLOCK)


def bounded_lines(fh: IO[bytes]) -> Iterator[tuple[bytes, int]]:
    """(line, length) with the line end kept; a line longer than MAX_LINE_BYTES comes as its
    first MAX_LINE_BYTES bytes and its whole length, the rest read past in blocks, never held."""
    while line := fh.readline(MAX_LINE_BYTES + 1):
        if len(line) <= MAX_LINE_BYTES or line.endswith(b"\n"):
            yield line, len(line)
            continue
        length = len(line)
        while more := fh.readline(HASH_BLOCK):
            length += len(more)
            if more.endswith(b"\n"):
                break
        yield line[:MAX_LINE_BYTES], length
