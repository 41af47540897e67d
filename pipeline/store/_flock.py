"""The lock of a local job directory: an exclusive ``fcntl.flock`` on ``RUN_DIR/.lock``
(a job directory in an object store has a lease instead, :mod:`pipeline.store._lease`)."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from pipeline.errors import OutputConflictError, RunIOError
from pipeline.store._schema import LOCK_FILE


def _lock_fd(run_dir: Path, path: Path) -> int:
    """A descriptor holding the exclusive flock on ``path``, which names that very file."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = ""
            with suppress(OSError):
                holder = os.pread(fd, 64, 0).decode(errors="replace").strip()
            os.close(fd)
            who = f" (pid {holder})" if holder else ""
            raise OutputConflictError(
                f"output directory {run_dir} is in use by another run{who}; wait for it or "
                "choose another --out"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        # The holder before us unlinks the file before it lets go, so the inode we opened may
        # no longer be at ``path``; a lock on it would exclude nobody. Try again on the new file.
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)


@contextmanager
def run_lock(run_dir: Path | str) -> Iterator[Path]:
    """Hold an exclusive ``fcntl.flock`` on RUN_DIR/.lock for the block, and remove the file
    when the block ends, so a finished run leaves no lock file among its parts.

    The OS drops the lock when the holder dies, so a killed run never blocks its re-run (the
    file stays until the next run on the directory ends). A second run on the same directory
    gets an :class:`OutputConflictError` at once. Unlinking a held lock file is safe because
    every taker checks, once it holds the lock, that the path still names the file it locked.
    """
    run_dir = Path(run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise RunIOError(f"output {run_dir} exists and is not a directory; a re-run resumes once it is fixed")
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / LOCK_FILE
    fd = _lock_fd(run_dir, path)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield path
    finally:
        # Unlink while still holding the lock: a waiter that opened the old file sees it is
        # gone (samestat fails) and retries on a fresh one.
        with suppress(OSError):
            path.unlink()
        os.close(fd)  # closing the descriptor releases the lock
