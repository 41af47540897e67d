"""Atomic file writes and provenance shared by every stage that writes output.

Every output file is written to a hidden temporary name in the same directory and renamed into
place, so a reader (or a resumed run) never sees a partial file.
"""

from __future__ import annotations

import errno
import functools
import gzip
import json
import os
import platform
import stat
import sys
import tempfile
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import IO, Any

PACKAGES = ("boggle-pipeline", "numpy", "numba", "pandas", "pyarrow", "joblib", "typer")

# The longest input line (and board record) read: a 100x100 board of multi-letter faces fits
# several times over. A longer line is refused (ingest: one reject) without being held in memory.
MAX_LINE_BYTES = 65_536
# A gzip input may inflate to MAX_INFLATE_RATIO x its own size (text and boards compress 2-10x),
# or INFLATE_FLOOR bytes for a small file of repeated lines; beyond that it is refused as a
# decompression bomb instead of being read for minutes.
MAX_INFLATE_RATIO = 100
INFLATE_FLOOR = 64 << 20
# The most text read whole into memory (`solve -f`, `check --contest`, standard input): a
# million 4x4 boards fit three times over; a larger batch is what `boggle run` ingests.
MAX_TEXT_INPUT = 64 << 20
READ_BLOCK = 1 << 20


class OutputError(OSError):
    """Writing an output failed for a reason outside the data (a folder that takes no files, a
    full disk, no permission): an I/O failure (exit 5) naming the output the user gave, never
    the temporary file it was being written to. Whatever its errno: a file system that refuses
    new files (``/proc``) answers "no such file", which is not a missing input."""


#: numpy reads each array's header of an .npy/.npz with ``ast.literal_eval``, and CPython 3.11
#: keeps the AST constructor's recursion depth per interpreter, not per thread: two threads
#: parsing at once can fail with a spurious ``SystemError: AST constructor recursion depth
#: mismatch`` (seen in `make test` when the analysis's threads read part statistics together).
_NPZ_LOCK = threading.Lock()


def load_npz(source: str | Path | IO[bytes]) -> dict[str, Any]:
    """Every array of an ``.npz`` file or stream (pickles refused), read under one lock so that
    threads reading at once do not trip over each other's header parsing (:data:`_NPZ_LOCK`).
    numpy's own errors (``ValueError``, ``zipfile.BadZipFile``, ``KeyError``, ...) pass through."""
    import numpy as np

    with _NPZ_LOCK, np.load(source, allow_pickle=False) as z:
        return {name: z[name] for name in z.files}


def check_output_target(path: str | os.PathLike[str], what: str = "output") -> None:
    """A BoggleError (exit 2) when ``path`` exists and is not a regular file: an output is
    written beside it and renamed over it, which would replace a device (``/dev/null``), a
    FIFO or a socket with a plain file, and cannot replace a directory."""
    from pipeline.errors import BoggleError

    try:
        st = os.stat(path)
    except OSError:  # absent (the usual case) or unreadable: the write itself will say
        return
    if not stat.S_ISREG(st.st_mode):
        raise BoggleError(
            f"{what} is {describe_mode(st.st_mode)}, not a regular file; refused (give a file name)",
            source=str(path),
        )


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it into place if the block succeeds.

    The file is fsynced before the rename and the directory after it, so after a crash or a
    power cut the name holds either the old file or the whole new one, never an empty one.
    ``path`` must be absent or a regular file (:func:`check_output_target`). A failure to
    create, write, sync or rename the file is an :class:`OutputError` naming ``path``.
    """
    path = Path(path)
    check_output_target(path)
    with _output_errors(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        # an unpredictable name, created exclusively (O_EXCL): nobody who can write the folder
        # can have put a link or a file of theirs there first; the mode a plain open would give
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(name)
    try:
        with _output_errors(path):
            try:
                if hasattr(os, "fchmod"):
                    os.fchmod(fd, 0o666 & ~_umask())
            finally:
                os.close(fd)
        with _naming(path, tmp):  # a write that fails (disk full) raises an OSError with no name
            yield tmp
        with _output_errors(path):
            with open(tmp, "rb") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, path)
            fsync_dir(path.parent)
    finally:
        # best effort: a failed clean-up must not hide the error that brought us here
        with suppress(OSError):
            tmp.unlink(missing_ok=True)


@contextmanager
def _output_errors(path: Path) -> Iterator[None]:
    """Any OSError of the block as an :class:`OutputError` naming ``path``."""
    try:
        yield
    except OutputError:
        raise
    except OSError as exc:
        raise OutputError(exc.errno, exc.strerror or str(exc), str(path)) from None


@functools.cache
def _umask() -> int:
    """The process's umask (read, not set, where /proc shows it: setting it races other threads)."""
    with suppress(OSError, StopIteration, ValueError), open("/proc/self/status") as fh:
        return int(next(line.split()[1] for line in fh if line.startswith("Umask:")), 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def fsync_dir(directory: Path) -> None:
    """Make the renames in ``directory`` durable (POSIX). Skipped quietly where the OS cannot
    open a directory (Windows) or its file system cannot fsync one."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise OSError(exc.errno, exc.strerror, str(directory)) from None
    finally:
        os.close(fd)


@contextmanager
def _naming(path: Path, tmp: Path | None = None) -> Iterator[None]:
    """Re-raise an OSError that carries no file name (``os.fsync``), or names the temporary
    file ``tmp`` being written, as an error naming ``path``, so the one-line error says which
    file failed (the user's, not a temporary name)."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None:
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
        if tmp is not None and str(exc.filename) == str(tmp):
            raise OutputError(exc.errno, exc.strerror or str(exc), str(path)) from None
        raise


@contextmanager
def atomic_open(path: Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO[Any]]:
    with atomic_path(path) as tmp, open(tmp, mode, encoding=None if "b" in mode else encoding) as fh:
        yield fh


def write_json_atomic(path: Path, data: Any) -> None:
    with atomic_open(path) as fh:
        json.dump(data, fh, indent=2, sort_keys=True, ensure_ascii=False, default=str)
        fh.write("\n")


def write_text_atomic(path: Path, text: str) -> None:
    with atomic_open(path) as fh:
        fh.write(text)


def describe_mode(mode: int) -> str:
    """What a file that is not a regular file is, in words (``a FIFO``)."""
    return (
        "a directory"
        if stat.S_ISDIR(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "a FIFO"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a special file"
    )


@contextmanager
def open_regular(path: str | Path, what: str = "input") -> Iterator[tuple[IO[bytes], os.stat_result]]:
    """``path`` opened unbuffered, refused (BoggleError, exit 2) unless it is a regular file: a
    FIFO may never be written (opening it must not wait for a writer), /dev/zero never ends."""
    from pipeline.errors import BoggleError

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise BoggleError(f"{what} file not found: {path}") from None
    except IsADirectoryError:  # some systems refuse to open one at all
        raise BoggleError(f"{what} file {path} is a directory, not a file") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise BoggleError(f"{what} file {path} is {describe_mode(st.st_mode)}, not a regular file")
        os.set_blocking(fd, True)
        fh = os.fdopen(fd, "rb", buffering=0)
    except BaseException:
        os.close(fd)
        raise
    with fh:
        yield fh, st


def read_regular_bytes(path: str | Path, cap: int, what: str = "input") -> bytes:
    """The bytes of the regular file ``path``, refused (BoggleError) past ``cap`` bytes before
    any is read (and should it grow while read)."""
    from pipeline.errors import BoggleError

    with open_regular(path, what) as (fh, st):
        data = fh.read(cap + 1) if st.st_size <= cap else b""
    if st.st_size > cap or len(data) > cap:
        raise BoggleError(f"{what} file {path} is larger than {cap:,} bytes; refused")
    return data


def read_text_input(spec: str | Path, what: str = "input") -> tuple[str, str]:
    """(text, source name) of a UTF-8 file (gunzipped when it starts with the gzip magic), or
    of standard input when ``spec`` is ``-``. Anything that is not such a text is a one-line
    BoggleError, found before it is read whole: a missing file, a FIFO, a directory or a device;
    more than MAX_TEXT_INPUT bytes (inflated: also more than MAX_INFLATE_RATIO x the file); a
    line longer than MAX_LINE_BYTES; not UTF-8."""
    from pipeline.errors import BoggleError

    if str(spec) == "-":
        return _bounded_text(sys.stdin.buffer, "<stdin>", MAX_TEXT_INPUT), "<stdin>"
    with open_regular(spec, what) as (fh, st):
        head = fh.read(2)
        if head == b"\x1f\x8b":
            fh.seek(0)
            cap = min(MAX_TEXT_INPUT, max(INFLATE_FLOOR, MAX_INFLATE_RATIO * st.st_size))
            try:
                with gzip.GzipFile(fileobj=fh, mode="rb") as gz:
                    return _bounded_text(gz, str(spec), cap), str(spec)
            except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
                raise BoggleError(
                    f"not a readable gzip file ({exc or 'truncated'})", source=str(spec)
                ) from None
        if st.st_size > MAX_TEXT_INPUT:
            raise BoggleError(
                f"{st.st_size:,} bytes, more than the {MAX_TEXT_INPUT:,} read whole; "
                "boggle run ingests larger batches",
                source=str(spec),
            )
        return _bounded_text(fh, str(spec), MAX_TEXT_INPUT, head), str(spec)


def _bounded_text(fh: IO[bytes] | gzip.GzipFile, source: str, cap: int, head: bytes = b"") -> str:
    """The UTF-8 text read from ``fh`` (after ``head``, its first bytes), refused as soon as it
    passes ``cap`` bytes or holds a line longer than MAX_LINE_BYTES."""
    from pipeline.errors import BoggleError

    blocks: list[bytes] = []
    size = current = 0  # bytes so far, bytes of the line not yet ended
    lineno = 1
    block = head or fh.read(min(READ_BLOCK, cap + 1))
    while block:
        blocks.append(block)
        size += len(block)
        parts = block.split(b"\n")
        current += len(parts[0])
        lengths = [current, *map(len, parts[1:])]
        if max(lengths) > MAX_LINE_BYTES:
            at = lineno + next(i for i, n in enumerate(lengths) if n > MAX_LINE_BYTES)
            raise BoggleError(f"line longer than {MAX_LINE_BYTES:,} bytes; refused", source=source, line=at)
        lineno += len(parts) - 1
        current = lengths[-1]
        if size > cap:
            raise BoggleError(
                f"more than {cap:,} bytes of text; refused (boggle run ingests larger batches)", source=source
            )
        block = fh.read(min(READ_BLOCK, cap + 1 - size))
    try:
        return b"".join(blocks).decode("utf-8")
    except UnicodeDecodeError:
        raise BoggleError("not UTF-8 text", source=source) from None


def package_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


_COMMAND: list[str | None] = [None]  # this process's command line, when the CLI started it


def record_command(command: str | None) -> None:
    """Have every job this process writes keep ``command`` (``boggle run ...``, as typed) in its
    record and manifest; the ``boggle`` entry point sets it, library calls do not."""
    _COMMAND[0] = command


def recorded_command() -> str | None:
    """The command :func:`record_command` set (None: none)."""
    return _COMMAND[0]


def now_iso() -> str:
    """The time now, UTC, to the second, as the records and manifests write it."""
    return datetime.now(UTC).isoformat(timespec="seconds")
