"""The batch runner: config -> chunks of boards -> joblib workers -> Parquet parts -> manifest.

``execute`` runs one job under whatever ``joblib.parallel_config`` the caller set (the caller
owns parallelism); ``run_job`` sets it from the config's ``[run]`` section (loky processes by
default, threads, or a dask.distributed cluster) and calls ``execute``.

How the work flows:

* Generated boards: each task carries only (dice, seed, chunk); the worker rolls the chunk's
  boards from ``SeedSequence(seed).spawn(n_chunks)[chunk]`` (see :mod:`pipeline.boards`).
* Ingested boards: the main process streams the inputs, parses a chunk at a time (rejects go
  straight to ``_rejects.csv``) and ships the encoded boards (16 bytes a 4x4 board).
* Each worker solves its chunk with the numba kernel, builds the Arrow table and writes its own
  part file (atomic rename), returning only small stats, so results stream back as they finish
  and memory stays flat. On dask the workers may not share a disk, so they return the table and
  the main process writes it.
* The compiled lexicon is not shipped with every task: a task carries a small handle and each
  worker process loads the lexicon once (from the disk cache the main process filled) into a
  module-level dict keyed by content hash + alphabet + rules. For dask the handle carries the
  compiled arrays and joblib scatters it to the workers once.

Resume: a chunk is done iff its part file exists and matches the size and checksum the main
process recorded under ``_parts/`` when the worker reported it, with this run's embedded config;
a re-run reuses those chunks, names and recomputes any other, and produces the same bytes, so
the final dataset equals an uninterrupted run's.

Orphans: a loky worker whose main process died (``kill -9``) exits within a fraction of a
second (a watchdog thread watches its parent), and it checks its parent before committing a
part; a part an orphan committed anyway has no record, so it is never trusted.

What callers use is exported here: :func:`execute`, :func:`run_job` and :func:`run_from_file`
(a config file and CLI-style overrides), the :class:`Progress` they report and the
:class:`RunSummary` they return. The workers' side is :mod:`pipeline.runner._workers`.
"""

from pipeline.runner._run import execute, run_from_file, run_job
from pipeline.runner._workers import Progress, RunSummary, make_handle, worker_lexicon

__all__ = [
    "Progress",
    "RunSummary",
    "execute",
    "make_handle",
    "run_from_file",
    "run_job",
    "worker_lexicon",
]
