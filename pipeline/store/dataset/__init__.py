"""Finished jobs as data: runs read as an Arrow table, a pandas DataFrame, a DuckDB relation or a
polars LazyFrame, and the catalog of the job directories under a folder (``boggle runs``).

Each function takes one run directory or several; a directory without ``_SUCCESS`` (an
unfinished or foreign one) is refused with a :class:`~pipeline.errors.BoggleError`. Only the
part files the manifest lists are read, so nothing a crashed writer left behind gets in, and
each is verified first against the manifest (size and BLAKE2b checksum; a damaged, missing,
extra or foreign part is a :class:`~pipeline.errors.DamagedRunError` naming it). ``verify=False``
skips the checksums (sizes and names are still checked) to save reading every part once: about
0.3 s for a 1M-board run (221 MB) on 2 cores (``make bench-verify``), which matters when only a
column or two is read. The lazy readers verify when they are created.
Several runs are combined by column name: a column one run lacks (a scores-only run has no
``words``; a ``min_length = 2`` run has ``words_len_2``) is null in the other's rows. A run of
another schema version than this release writes is refused in one line naming both. Rows
keep the order of the runs given and board_id order within each; board_ids restart at 0 in
every run, so tell runs apart by ``lexicon``, ``rules`` or ``source``.

>>> from pipeline import read_run, read_run_pandas, run_relation
>>> read_run("runs/default", columns=["board_id", "score"]).num_rows  # doctest: +SKIP
100000
>>> run_relation(["runs/en", "runs/enable"]).aggregate(  # doctest: +SKIP
...     "lexicon, avg(score) AS mean_score", "lexicon")

:func:`pipeline.store.open_run` gives a run's manifest and part paths, for anything else.

* ``_read``: the run readers (:func:`read_run`, :func:`read_run_pandas`, :func:`run_relation`,
  :func:`scan_run_polars`) and where the default run is (:func:`resolve_run_dir`);
* ``_catalog``: the catalog (:func:`find_jobs`, :func:`describe_job`, :func:`verify_job`),
  one reading for runs, proofs and searches, and what a list of runs
  given on the command line names (:func:`expand`, :func:`jobs_of`, :func:`runs_below`: run
  folders, folders of runs, globs);
* ``_query``: SQL over runs in a sandbox (:func:`query_runs`).
"""

from __future__ import annotations

from pipeline.store.dataset._catalog import (
    CatalogEntry,
    Verification,
    config_summary,
    describe_job,
    design_key,
    expand,
    find_jobs,
    jobs_of,
    runs_below,
    verify_job,
    verify_jobs,
)
from pipeline.store.dataset._query import QueryResult, query_runs
from pipeline.store.dataset._read import (
    DEFAULT_RUN,
    RunPaths,
    read_run,
    read_run_pandas,
    repo_root,
    resolve_run_dir,
    run_dirs,
    run_parts,
    run_relation,
    scan_run_polars,
)

__all__ = [
    "DEFAULT_RUN",
    "CatalogEntry",
    "QueryResult",
    "RunPaths",
    "Verification",
    "config_summary",
    "describe_job",
    "design_key",
    "expand",
    "find_jobs",
    "jobs_of",
    "query_runs",
    "read_run",
    "read_run_pandas",
    "repo_root",
    "resolve_run_dir",
    "run_dirs",
    "run_parts",
    "run_relation",
    "runs_below",
    "scan_run_polars",
    "verify_job",
    "verify_jobs",
]
