"""The joblib backends the batch jobs run their tasks under (``boggle run`` and
``boggle prove``): loky processes, threads, or a dask.distributed cluster."""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Iterator

from pipeline import settings
from pipeline.errors import BoggleError, ConfigError
from pipeline.extras import require
from pipeline.parallel import lifeline

# Arrow's default allocator (mimalloc) holds on to what a chunk's Parquet writer freed: about
# 55 MB more per worker process than the C library's allocator, which costs 0-5% of the
# speed (measured in alternating pairs).
# Arrow reads this variable once per process, before pyarrow can switch pools for its Parquet
# writer, so it is set before any worker process starts, for the workers to inherit.
ARROW_POOL_ENV = "ARROW_DEFAULT_MEMORY_POOL"

# the start of the warning loky gives when it replaces a worker (the message filter is a regex)
LOKY_WORKER_REPLACED = "A worker stopped while some jobs were given to the executor"


def check_scheduler_file(path: str) -> None:
    """A ConfigError (exit 2) unless ``path`` is a regular file: dask would wait for ever on a
    FIFO and never finish reading a device."""
    import stat

    try:
        st = os.stat(path)
    except OSError:
        raise ConfigError(f"dask scheduler file not found: {path}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO, device or socket"
        raise ConfigError(f"dask scheduler file {path} is {kind}, not a regular file")


def prepare_worker_environment() -> None:
    """Environment for the worker processes started from now on: Arrow allocates with the C
    library's allocator (unless the user chose a pool in ``ARROW_DEFAULT_MEMORY_POOL``), and
    they know this process as the one to die with (:mod:`pipeline.parallel.lifeline`)."""
    settings.export(ARROW_POOL_ENV, "system", replace=False)
    lifeline.mark_main()


@contextlib.contextmanager
def parallel_backend(
    backend: str, n_jobs: int | None, scheduler: str | None = None, scheduler_file: str | None = None
) -> Iterator[None]:
    """``joblib.parallel_config`` for ``backend`` with ``n_jobs`` workers (joblib's meaning:
    None is joblib's default, -1 every core).

    ``backend = "dask"`` connects to ``scheduler`` (an address) or to the scheduler a
    ``scheduler_file`` names (what HPC job scripts use), or starts a local cluster with
    ``n_jobs`` worker processes when there is neither, and closes what it opened afterwards.
    """
    import joblib

    prepare_worker_environment()
    if backend != "dask":
        # loky workers arm as they start, not at their first task, which they reach only after
        # importing the pipeline (a second or more)
        early = {"initializer": lifeline.arm} if backend == "loky" else {}
        with joblib.parallel_config(backend=backend, n_jobs=n_jobs, **early), warnings.catch_warnings():
            # loky replaces a worker whose memory grew by 300 MB since its first task (a prover
            # worker after a dense class) and re-runs nothing; its warning about it would print
            # below our progress bar as if the job were in trouble. The filter is process-wide
            # because loky warns from its own thread.
            warnings.filterwarnings("ignore", LOKY_WORKER_REPLACED, UserWarning)
            yield
        return
    require("dask", 'backend = "dask"')
    from dask.distributed import Client, LocalCluster

    with contextlib.ExitStack() as stack:
        if scheduler or scheduler_file:
            where = {"address": scheduler} if scheduler else {"scheduler_file": scheduler_file}
            if scheduler_file:
                check_scheduler_file(scheduler_file)
            try:
                client = stack.enter_context(Client(**where, timeout="20s", set_as_default=False))
            except (OSError, TimeoutError, ValueError) as exc:
                raise BoggleError(
                    f"cannot reach the dask scheduler {scheduler or scheduler_file}: {exc}"
                ) from None
        else:
            workers = (os.cpu_count() or 1) if n_jobs is None or n_jobs < 0 else n_jobs
            # The preload arms each worker process as it starts, idle ones included, so the
            # whole cluster dies with this process even under kill -9. A remote scheduler's
            # workers (above) are not ours to kill: they outlive us and finish the task in hand
            # (the scheduler forgets this client's tasks when its connection drops); one that
            # sees the output folder may still rename that chunk's part into place. Nothing
            # records it in _parts/, so a re-run recomputes it, and a finished run whose part
            # it replaced fails verification by checksum (exit 4, --overwrite repairs).
            cluster = stack.enter_context(
                LocalCluster(
                    # a free local port: with None dask still serves HTTP on 8787 and warns
                    # when another cluster holds it
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address="127.0.0.1:0",
                    preload=[lifeline.__name__],
                )
            )
            client = stack.enter_context(Client(cluster, set_as_default=False))
        with joblib.parallel_config(backend=dask_backend(client)):
            yield


def dask_backend(client: object) -> object:
    """joblib's dask backend on ``client``, except that a cluster of one single-threaded worker
    still gets the work: joblib runs a pool of one slot in the calling process instead."""
    from joblib._dask import DaskDistributedBackend

    class ClusterBackend(DaskDistributedBackend):
        def effective_n_jobs(self, n_jobs: int | None) -> int:
            return max(2, int(super().effective_n_jobs(n_jobs)))

    return ClusterBackend(client=client)


def backend_is_dask() -> bool:
    """Whether the active joblib backend is dask's (its workers may not share our disk)."""
    from joblib.parallel import get_active_backend

    backend, _ = get_active_backend()
    return any(cls.__name__ == "DaskDistributedBackend" for cls in type(backend).__mro__)
