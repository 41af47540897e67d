"""Where the batch jobs' tasks run: the joblib backends (loky processes, threads, or a
dask.distributed cluster), worker processes that die with the main process that started them,
and a long-lived worker giving freed memory back to the system.

* ``_backends``: :func:`parallel_backend` and the environment workers inherit;
* :mod:`pipeline.parallel.lifeline`: ``mark_main`` in the main process, ``arm`` in each worker,
  ``exit_if_orphaned`` before a worker commits (a namespace of its own: its names say what they
  do only beside its name);
* ``_memory``: :func:`return_freed_memory`.
"""

from __future__ import annotations

from pipeline.parallel import lifeline
from pipeline.parallel._backends import (
    backend_is_dask,
    check_scheduler_file,
    dask_backend,
    parallel_backend,
    prepare_worker_environment,
)
from pipeline.parallel._memory import return_freed_memory

__all__ = [
    "backend_is_dask",
    "check_scheduler_file",
    "dask_backend",
    "lifeline",
    "parallel_backend",
    "prepare_worker_environment",
    "return_freed_memory",
]
