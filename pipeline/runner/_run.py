"""The run: ``run_from_file`` -> ``run_job`` -> ``execute``: prepare (``plan_run``), open or resume
the folder, dispatch the chunks, finish (manifest last)."""

from __future__ import annotations

import datetime
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures.process import BrokenProcessPool
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import numpy as np

from pipeline import store
from pipeline.config import RunConfig, load_config
from pipeline.errors import (
    InternalError,
    RunIOError,
    WorkerLostError,
)
from pipeline.parallel import backend_is_dask, prepare_worker_environment
from pipeline.runner._plan import Counters, RunPlan, chunk_tasks, plan_run
from pipeline.runner._workers import (
    JOBS_PER_CORE,
    ChunkResult,
    NoteCallback,
    ProgressCallback,
    RunSummary,
    make_handle,
    run_backend,
    watched_solve_chunk,
)


def run_from_file(
    path: str | Path | None,
    overrides: Mapping[str, Any] | None = None,
    assignments: Sequence[str] = (),
    *,
    overwrite: bool = False,
    progress: ProgressCallback | None = None,
    note: NoteCallback | None = None,
    day: datetime.date | None = None,
    option_names: Mapping[str, str] | None = None,
    expect: Sequence[str] = (),
) -> RunSummary:
    """Load a config file, apply command-line overrides, and run it (``boggle run``); ``day``
    and ``option_names`` as for :func:`pipeline.config.load_config`; ``expect``: expectations
    added to the config's (``--expect``)."""
    config = load_config(path, overrides, assignments, day=day, option_names=option_names)
    if expect:
        config = config.with_expectations(expect)
    return run_job(config, overwrite=overwrite, progress=progress, note=note)


def run_job(
    config: RunConfig,
    *,
    overwrite: bool = False,
    progress: ProgressCallback | None = None,
    note: NoteCallback | None = None,
) -> RunSummary:
    """Run a job with the parallelism its ``[run]`` section asks for (``n_jobs`` capped at the
    chunk count and at JOBS_PER_CORE x the cores, with a note)."""
    import dataclasses

    config = config.resolve()
    n_jobs = capped_n_jobs(config, note)
    if n_jobs != config.run.n_jobs:
        config = dataclasses.replace(config, run=dataclasses.replace(config.run, n_jobs=n_jobs))
    with run_backend(config.run):
        return execute(config, overwrite=overwrite, progress=progress, note=note)


def capped_n_jobs(config: RunConfig, note: NoteCallback | None = None) -> int:
    """``[run] n_jobs`` of a resolved config, capped: more workers than chunks would idle, and
    more than JOBS_PER_CORE per core only cost memory (a remote dask cluster is not capped)."""
    wanted = config.run.n_jobs
    if config.run.backend == "dask" and (config.run.scheduler or config.run.scheduler_file):
        return wanted
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if wanted < 0:  # joblib's meaning: -1 every core, -2 all but one...
        resolved = max(1, cores + 1 + wanted)
        n_chunks = _generate_chunks(config)
        # only a run with fewer chunks than cores needs fewer workers than asked (no note: the
        # user asked for "all cores", not for a number)
        return min(resolved, n_chunks) if n_chunks is not None and n_chunks < resolved else wanted
    limit, why = JOBS_PER_CORE * cores, f"{JOBS_PER_CORE} x {cores} cores"
    n_chunks = _generate_chunks(config)
    if n_chunks is not None and n_chunks < limit:
        limit, why = n_chunks, f"the run has {n_chunks} chunk{'s' if n_chunks != 1 else ''}"
    if wanted <= limit:
        return wanted
    if note is not None:
        note(f"n_jobs {wanted} capped to {limit} ({why})")
    return limit


def _generate_chunks(config: RunConfig) -> int | None:
    """The chunk count of a generate run (None for ingest: not known before reading)."""
    b = config.boards
    return -(-b.count // b.chunk_size) if b.source == "generate" else None


def execute(
    config: RunConfig,
    *,
    n_jobs: int | None = None,
    overwrite: bool = False,
    progress: ProgressCallback | None = None,
    workers_write: bool | None = None,
    note: NoteCallback | None = None,
) -> RunSummary:
    """Run a job under the active ``joblib.parallel_config`` (``n_jobs=None`` defers to it).

    ``workers_write`` (default: yes; on dask, when every worker sees the output folder) says
    whether workers write their own part files or send tables back for the main process to
    write (the client then carries all the output: it says so in a note).
    Workers always write their own parts to an object store (they get its URL; the main
    process records each part's size and checksum from the object).

    The steps: :func:`plan_run` (prepare), :func:`_open_or_resume`, :func:`_dispatch`,
    :func:`_finish`.
    """
    t_start = time.perf_counter()
    plan = plan_run(config, workers_write=workers_write)
    with _open_or_resume(plan, overwrite, note) as job:
        if job.state is store.JobState.DONE:
            outcome = job.outcome()
            # checked again (what is asked now), from the finished parts; the manifest keeps
            # what was checked when the run finished
            files = [str(p["file"]) for p in outcome.manifest.get("parts") or []]
            checked = _expectations(plan, job, files)
            return _summary(outcome, 0, time.perf_counter() - t_start, checked)
        counters = _dispatch(plan, job, n_jobs, progress, note)
        return _finish(plan, job, counters, t_start)


def _open_or_resume(
    plan: RunPlan, overwrite: bool, note: NoteCallback | None
) -> AbstractContextManager[store.JobDir]:
    """The run's folder under its lock: new, to resume (same identity), or done (see
    :class:`pipeline.store.JobDir`; a finished generate run must list the parts its config
    makes)."""
    return store.JobDir.open(
        plan.run_dir,
        store.RUN,
        plan.identity,
        plan.cfg.to_dict(),
        overwrite=overwrite,
        note=note,
        parts=_generate_chunks(plan.cfg),
        # the side files are packed with the parts' schema, so every engine reads the folder
        side_schema=store.board_schema(plan.lexicon.rules.min_length, words=plan.cfg.boards.words),
    )


def _dispatch(
    plan: RunPlan,
    job: store.JobDir,
    n_jobs: int | None,
    progress: ProgressCallback | None,
    note: NoteCallback | None,
) -> Counters:
    """Solve every chunk not committed yet and commit each result as it comes back (in any
    order); rejected input rows go to the rejects file. Returns the run's counters."""
    from joblib import Parallel, delayed

    _warm_kernels(plan)
    workers_write = plan.workers_write
    if workers_write is None:
        assert isinstance(plan.run_dir, Path)  # plan_run decides for an object store
        workers_write = not backend_is_dask() or _workers_see(plan.run_dir, note)
    # dask workers get the compiled lexicon with the tasks: they may not share our disk
    handle = make_handle(
        plan.cfg.lexicon.path or "", plan.lexicon, ship=not workers_write or backend_is_dask()
    )
    out_dir = str(plan.run_dir) if workers_write else None
    counters = Counters()

    def report() -> None:
        if progress is not None:
            progress(counters.progress(plan))

    counters.start_solving()

    with (
        job.side_file(store.REJECTS) as rejects_tmp,
        open(rejects_tmp, "w", encoding="utf-8") as rejects_fh,
    ):
        tasks = chunk_tasks(plan, counters, rejects_fh, job)
        report()
        prepare_worker_environment()  # also under a joblib backend set by the caller
        results = Parallel(n_jobs=n_jobs, return_as="generator_unordered", batch_size=1)(
            delayed(watched_solve_chunk)(task, handle, out_dir, os.getpid()) for task in tasks
        )
        _commit_results(results, job, counters, report, plan.run_dir)
        report()  # chunks found committed after the last result count too
    return counters


def _warm_kernels(plan: RunPlan) -> None:
    """Compile the kernels here once when numba has no cache yet, so workers do not all compile
    them at the same time. With a warm cache the main process skips this and never imports
    numba (about 100 MB less, as it only dispatches chunks and writes the manifest)."""
    from pipeline.solve import kernel_needs_compile, solve_arrays

    if kernel_needs_compile() or kernel_needs_compile(module="_summary"):
        from pipeline.solve import summarise_words

        shape = plan.cfg.shape
        cells = shape[0] * shape[1] if shape else 16
        n_bins = len(store.length_bins(3))
        warm = solve_arrays(np.zeros((1, cells), np.int8), *(shape or (4, 4)), plan.lexicon, bins=(3, n_bins))
        summarise_words(warm.offsets, warm.word_ids, plan.lexicon, 3, n_bins)


def _commit_results(
    results: Iterable[ChunkResult],
    job: store.JobDir,
    counters: Counters,
    report: Callable[[], None],
    run_dir: store.PartRef,
) -> None:
    """Commit each chunk's result (its part written by the worker, or its table to write here)
    and ``report``; a write failure or a dead worker becomes a one-line error naming the run."""
    try:
        for res in results:
            written = store.PartInfo(
                chunk=res.chunk, rows=res.rows, bytes=res.bytes, blake2b=res.blake2b, stats=res.stats_entry
            )
            job.commit(
                res.chunk,
                res.rows,
                res.table,
                written=None if res.table is not None else written,
                stats=res.stats,
                totals=res.totals,
            )
            counters.solved_boards += res.rows
            counters.solved_chunks += 1
            counters.committed()
            report()
    except OSError as exc:
        if exc.filename is not None:
            raise
        # pyarrow's write errors name no file (errno 28 inside the text): name the run
        what = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
        raise RunIOError(
            f"I/O failure writing parts: {what}; fix it and re-run the same command to resume",
            source=str(run_dir),
        ) from None
    except BrokenProcessPool as exc:
        # a worker was killed (OOM killer, kill -9): what was committed stays valid
        raise WorkerLostError.from_pool(exc, str(run_dir)) from None
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            with warnings.catch_warnings():
                # stopping early (an error, Ctrl-C, SIGTERM) cancels the queued chunks on
                # purpose; joblib would warn about it on stderr below our one line
                warnings.filterwarnings("ignore", ".*tasks which were still being processed")
                close()


def _finish(plan: RunPlan, job: store.JobDir, counters: Counters, t_start: float) -> RunSummary:
    """Certify the run (no input changed while it was read, the parts hold every valid board)
    and write its manifest, ``_SUCCESS``, last; the summary's time runs from ``t_start`` (a
    ``perf_counter``) to the manifest written."""
    if plan.ingest:  # an input replaced or rewritten while it was read is never certified
        from pipeline.boards.ingest import check_unchanged

        check_unchanged(plan.inputs, counters.digests)
    manifest = _write_manifest(job, plan, counters)
    elapsed = time.perf_counter() - t_start
    summary = _summary(job.outcome(), counters.solved_boards, elapsed, manifest.get("expectations") or [])
    summary.solve_s = counters.solve_s
    return summary


def _workers_see(run_dir: Path, note: NoteCallback | None) -> bool:
    """Whether every worker of the active dask cluster sees ``run_dir`` (a shared disk), so it
    can write its own parts; else a note says the client will write them all."""
    import uuid

    from joblib.parallel import get_active_backend

    client = getattr(get_active_backend()[0], "client", None)
    probe = run_dir / f".probe-{uuid.uuid4().hex}.tmp"  # a temp name: a killed run leaves no trace
    seen: dict[str, bool] = {}
    if client is not None:
        probe.write_bytes(b"")
        try:
            seen = client.run(os.path.isfile, str(probe))
        finally:
            probe.unlink(missing_ok=True)
    if seen and all(seen.values()):
        return True
    if note is not None:
        blind = sorted(w for w, ok in seen.items() if not ok)
        note(
            f"the dask workers{' ' + ', '.join(blind[:3]) if blind else ''} cannot see {run_dir} (no shared "
            "disk): the client writes every part; put --out on a shared file system for the workers to "
            "write their own"
        )
    return False


def _write_manifest(job: store.JobDir, plan: RunPlan, counters: Counters) -> dict[str, Any]:
    """Total the parts, check they hold every valid input board, and write ``_SUCCESS``."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    job.check_covered(counters.chunks)
    boards = words = score = 0
    # ParquetFile and pyarrow.compute rather than read_table and numpy: those import pandas,
    # 50 MB the main process does not otherwise need
    total = pc.ScalarAggregateOptions(min_count=0)
    for k in range(counters.chunks):
        record = job.record(k)
        if record is not None and record.totals is not None:  # what the worker counted
            boards += record.rows
            words += record.totals["words"]
            score += record.totals["score"]
            continue
        # a part recorded by an older version: read its two columns
        with job.loc.open(store.part_name(k)) as fh, pq.ParquetFile(fh) as pf:
            t = pf.read(columns=["n_words", "score"])
        boards += t.num_rows
        words += pc.sum(t.column("n_words"), options=total).as_py()
        score += pc.sum(t.column("score"), options=total).as_py()
    if boards != counters.valid:
        raise InternalError(
            f"{job.path}: the parts hold {boards} boards but the input gave {counters.valid}; "
            "re-run with --overwrite"
        )
    fields = {
        "lexicon": plan.lexicon.provenance(),
        "rules": plan.rules.to_dict(),
        "python": sys.version.split()[0],
        "inputs": plan.inputs,
        "counts": {
            "input_rows": counters.input_rows,
            "boards": boards,
            "rejected": counters.rejected,
            "words_total": words,
            "score_total": score,
        },
        "rejects_file": store.REJECTS,
        # the schedule's date the run was made for (the run_date column), None without one
        "run_date": plan.cfg.boards.seed_date,
        "columns": store.columns_doc(plan.cfg.boards.words),
    }
    if plan.dice is not None:  # the faces rolled, so analysis rebuilds each board's dice without the file
        fields["dice"] = plan.dice.record()
    if plan.cfg.expect.checks:  # measured on the parts just written; broken ones fail the command
        fields["expectations"] = _expectations(
            plan, job, [store.part_name(k) for k in range(counters.chunks)]
        )
    write_vocabulary(job, plan.lexicon.words)
    return job.finish(counters.chunks, fields, side_files=(store.REJECTS, store.VOCABULARY))


def write_vocabulary(job: store.JobDir, words: list[str]) -> None:
    """The run's vocabulary side file (:data:`pipeline.store.VOCABULARY`): the word list the
    parts' statistics count words of by id, one word a line, gzip (no timestamp: the same
    list gives the same bytes)."""
    import gzip

    text = "".join(w + "\n" for w in words).encode("utf-8")
    with job.side_file(store.VOCABULARY) as tmp, open(tmp, "wb") as raw:
        raw.write(gzip.compress(text, compresslevel=6, mtime=0))


def _expectations(plan: RunPlan, job: store.JobDir, files: list[str]) -> list[dict[str, Any]]:
    """The config's expectations measured on the part files ``files`` of the run
    (:mod:`pipeline.runner._expect`); none asked: nothing read."""
    from pipeline.runner._expect import check_all, part_tables

    expectations = plan.cfg.expect.parsed()
    if not expectations:
        return []
    tables = part_tables(job.loc, files)
    return check_all(expectations, tables, plan.run_dir, plan.identity, plan.cfg.boards.seed_date)


def _summary(
    outcome: store.JobOutcome, solved: int, elapsed: float, expectations: list[dict[str, Any]] | None = None
) -> RunSummary:
    """The run's summary: the job's outcome with the run's own counts from its manifest, and
    the expectations measured."""
    c = outcome.manifest["counts"]
    return RunSummary(
        run_dir=outcome.where,
        status=outcome.status,
        boards=int(c["boards"]),
        rejected=int(c["rejected"]),
        input_rows=int(c["input_rows"]),
        words_total=int(c["words_total"]),
        chunks=outcome.parts_total,
        chunks_reused=outcome.parts_reused,
        boards_solved=solved,
        elapsed_s=elapsed,
        manifest=outcome.manifest,
        expectations=list(expectations or []),
    )
