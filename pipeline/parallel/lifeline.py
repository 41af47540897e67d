"""Worker processes die with the main process that started them.

A ``kill -9`` (or the OOM killer) of ``boggle run``, ``prove`` or ``optimize`` runs no clean-up
code, so the workers must notice on their own, and must never commit a part after it. The main
process calls :func:`mark_main` before it starts workers (it records its pid in the environment
they inherit); a loky worker calls :func:`arm` as it starts (the pool's initializer, set by
:func:`pipeline.parallel.parallel_backend`, which every command's workers run under: a worker
spawned just before the kill may never get a task), each worker entry point calls it again on
its first task, and a worker calls :func:`exit_if_orphaned` right before it renames a part
into place.

On Linux :func:`arm` asks the kernel for SIGKILL when the parent goes
(``prctl(PR_SET_PDEATHSIG)``): it works while the worker is busy in a kernel that holds the GIL,
and costs nothing. The kernel sends it when the *thread* that forked the worker exits, not the
process, so it is only used when :func:`mark_main` ran on the main thread: loky then spawns
workers from that thread or from its executor-manager thread, dask's Nanny from the watcher
thread of each worker process, the optimize Manager from the main thread, all of which outlive
the processes they start. Elsewhere (other systems, or workers started for a caller's own
thread, which may end before they do) a daemon thread polls the parent instead.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

from pipeline import settings

#: The main process's pid, and "+thread" when it started workers from a thread other than
#: its main one (PR_SET_PDEATHSIG is then unsafe: that thread may end before the workers).
ENV = "BOGGLE_MAIN_PID"
PR_SET_PDEATHSIG = 1
POLL_S = 0.2  # the fallback watchdog's period
ORPHAN_EXIT = 1

#: (this process's pid, the main process's pid) once armed; the pid guards against a fork of an
#: armed worker inheriting the flag without the kernel's setting (which fork clears)
_ARMED: tuple[int, int] | None = None
_LOCK = threading.Lock()


def mark_main() -> None:
    """In the main process, before it starts workers: name it as the process they serve."""
    on_main = threading.current_thread() is threading.main_thread()
    settings.export(ENV, f"{os.getpid()}" if on_main else f"{os.getpid()}+thread")


def _from_env() -> tuple[int, bool] | None:
    """(main pid, may use PR_SET_PDEATHSIG) from the environment, None when unset."""
    value = settings.get().main_pid or ""
    pid, _, how = value.partition("+")
    if not pid.isdigit():
        return None
    return int(pid), how == ""


def _in_dask_worker() -> bool:
    if "distributed" not in sys.modules:
        return False
    from distributed import get_worker

    try:
        get_worker()
    except ValueError:
        return False
    return True


def arm(parent_pid: int | None = None) -> None:
    """In a worker process: exit now if the main process ``parent_pid`` (default: the one
    recorded by :func:`mark_main`) is no longer its parent, else die when it dies. Idempotent
    and cheap on later calls; does nothing in the main process itself (threads, ``n_jobs=1``)
    or in a process no boggle main process started. In a dask worker a task does not arm it:
    a local cluster's workers are armed as they start (:func:`dask_setup`), and a remote
    scheduler's workers are not ours to kill (their nanny watches them)."""
    global _ARMED
    recorded = _from_env()
    if parent_pid is None:
        if recorded is None:
            return
        parent_pid = recorded[0]
    if parent_pid == os.getpid():
        return
    if _ARMED is not None and _ARMED[0] == os.getpid():
        exit_if_orphaned()
        return
    if _in_dask_worker():
        return
    kernel = recorded is not None and recorded == (parent_pid, True)
    _arm(parent_pid, kernel=kernel)


def _arm(parent_pid: int, *, kernel: bool) -> None:
    global _ARMED
    with _LOCK:
        if _ARMED is not None and _ARMED[0] == os.getpid():
            return
        if os.getppid() != parent_pid:
            os._exit(ORPHAN_EXIT)  # the main process died before this worker armed
        if not (kernel and _parent_death_signal()):
            _start_watchdog(parent_pid)
        _ARMED = (os.getpid(), parent_pid)
    # the parent may have died between the check above and the prctl: the kernel sends
    # nothing for a death that came first
    exit_if_orphaned()


def _parent_death_signal() -> bool:
    """Ask the kernel for SIGKILL when the parent thread exits; False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _start_watchdog(parent_pid: int) -> None:
    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(POLL_S)
        os._exit(ORPHAN_EXIT)

    threading.Thread(target=watch, name="boggle-lifeline", daemon=True).start()


def exit_if_orphaned() -> None:
    """In an armed worker: exit now if its main process is gone. Called right before a part is
    committed, so a worker never renames one into place for a run whose main process died."""
    armed = _ARMED
    if armed is not None and armed[0] == os.getpid() and os.getppid() != armed[1]:
        os._exit(ORPHAN_EXIT)


def dask_setup(worker: Any) -> None:
    """dask preload hook (``LocalCluster(preload=["pipeline.parallel.lifeline"])``): arm each local worker
    process as it starts, so an idle one dies with the client process too."""
    recorded = _from_env()
    if recorded is not None and recorded[0] != os.getpid():
        _arm(recorded[0], kernel=recorded[1])
