"""Atomic file writes and provenance shared by every stage that writes output.

Every output file is written to a hidden temporary name in the same directory and renamed into
place, so a reader (or a resumed run) never sees a partial file.
"""

from __future__ import annotations

import errno
import json
import os
import platform
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from importlib import metadata
from pathlib import Path
from typing import IO, Any

PACKAGES = ("boggle-pipeline", "numpy", "numba", "pandas", "pyarrow", "joblib", "typer")


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it into place if the block succeeds.

    The file is fsynced before the rename and the directory after it, so after a crash or a
    power cut the name holds either the old file or the whole new one, never an empty one.
    An OSError raised here names the path it was about.
    """
    path = Path(path)
    with _naming(path.parent):
        path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with _naming(path):  # a write that fails (disk full) raises an OSError with no name
            yield tmp
        with _naming(tmp), open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        with _naming(path):
            os.replace(tmp, path)
        fsync_dir(path.parent)
    finally:
        # best effort: a failed clean-up must not hide the error that brought us here
        with suppress(OSError):
            tmp.unlink(missing_ok=True)


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
def _naming(path: Path) -> Iterator[None]:
    """Re-raise an OSError that carries no file name (``os.fsync``) with ``path`` as its name,
    so the one-line error says which file failed."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None:
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
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


def read_text_input(spec: str | Path, what: str = "input") -> tuple[str, str]:
    """(text, source name) of a UTF-8 file, or of standard input when ``spec`` is ``-``; a
    missing or non-UTF-8 file is a one-line BoggleError."""
    from pipeline.errors import BoggleError

    if str(spec) == "-":
        return sys.stdin.read(), "<stdin>"
    path = Path(spec)
    if not path.is_file():
        raise BoggleError(f"{what} file not found: {spec}")
    try:
        return path.read_text(encoding="utf-8"), str(spec)
    except UnicodeDecodeError:
        raise BoggleError(f"{spec}: not UTF-8 text") from None


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
