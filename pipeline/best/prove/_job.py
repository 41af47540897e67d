"""``boggle prove`` as a batch job: canonical classes in chunks, joblib workers, Parquet parts,
resume, and a manifest written last after the coverage check.

Each chunk is a run of consecutive canonical class ids; a worker proves its classes
(:class:`pipeline.best.prove._search.ClassProver`) and returns one certificate row per class; the main
process writes the chunk's part file atomically (so the workers need no shared disk). A chunk is
done iff its part exists: a killed proof resumes with the missing chunks, and a finished one
(``_SUCCESS`` present, same identity) is a no-op. Before ``_SUCCESS`` is written, the parts'
class ids are checked to be exactly the canonical classes of the shape (the coverage check),
and the boards >= threshold are gathered in canonical form into ``_boards.pq`` (a Parquet file
named so that neither a dataset reader, which skips ``_`` files, nor a ``OUT/*.parquet`` glob
reaches it: ``pandas.read_parquet(OUT)`` and DuckDB's ``'OUT/*.parquet'`` read the certificate
alone); the manifest's ``boards_file`` names it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import os
import queue
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import store
from pipeline.best.prove._certificate import (
    CERTIFICATE_COLUMNS,
    FoundBoard,
    ProgressCallback,
    ProveProgress,
    ProveSummary,
    best_of,
    certificate_totals,
    check_coverage,
    columns_table,
    int64_values,
    sessions_wall,
)
from pipeline.best.prove._config import ProveConfig, selected_classes
from pipeline.best.prove._worker import Problem, ProblemArgs, ShippedLexicon, load_problem, prove_chunk
from pipeline.best.prove.tree import max_cells
from pipeline.errors import ConfigError, WorkerLostError
from pipeline.lexicon import limits_identity
from pipeline.parallel import parallel_backend

KIND = store.job_kind("boggle-prove").documented(CERTIFICATE_COLUMNS)
FORMAT = KIND.format
SCHEMA_VERSION = KIND.schema_version  # 2: parts recorded (size, BLAKE2b) and tagged; sealed manifest
BOARDS_FILE = "_boards.pq"  # Parquet; not *.parquet so that globs of the certificate miss it
DISPATCH_SEED = 21  # the chunks' shuffle (dispatch_order); not in the identity: parts are alike in any order
#: Each part's Parquet metadata key for the CPU seconds its worker spent on the chunk (a part
#: without it counts as not recorded); the manifest totals it.
META_CPU = "boggle.cpu_s"
#: Each part's session (when the ``boggle prove`` that wrote it started, UTC, ISO 8601) and the
#: seconds from that start to the part's commit: a session's wall time is its last part's, and
#: the manifest sums them.
META_SESSION, META_SESSION_S = "boggle.session", "boggle.session_s"


@dataclass(kw_only=True)
class ProofRun:
    """One session of a proof: what it proves (the resolved config, its problem and chunks of
    class ids) and what its parts record so far (CPU and wall time, by chunk)."""

    cfg: ProveConfig
    problem: Problem
    task_args: ProblemArgs  # what each task names the problem by
    # the recipe's canonical classes, kept for the coverage check; None in a sample (which is
    # never checked): 34 MB on 3x4 with 4 buckets
    all_ids: np.ndarray | None
    classes_total: int  # how many there are
    ids: np.ndarray  # the ones this proof proves (all, or a sample or chosen ones)
    chunks: list[np.ndarray]
    identity: dict[str, Any]
    t_start: float
    session: str  # when this session started (META_SESSION)
    progress: ProgressCallback | None = None
    part_cpu: dict[int, float] = field(default_factory=dict)  # chunk -> its worker's CPU, where recorded
    part_wall: dict[int, tuple[str, float]] = field(default_factory=dict)  # chunk -> (session, s in)

    @property
    def sample(self) -> bool:
        return len(self.ids) < self.classes_total

    def remember(self, chunk: int, table: pa.Table) -> None:
        """Take what a reused part records of its session (CPU, wall time)."""
        meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
        if META_CPU in meta:
            self.part_cpu[chunk] = float(meta[META_CPU])
        if META_SESSION in meta and META_SESSION_S in meta:
            self.part_wall[chunk] = (meta[META_SESSION], float(meta[META_SESSION_S]))

    def prove(self, pending: list[int], done: dict[int, pa.Table], job: store.JobDir | None) -> float:
        """Prove the ``pending`` chunks, committing each part to ``job`` (None: keep the tables
        in ``done`` only) as it comes back; returns the workers' CPU seconds."""
        tracker = _Tracker(self, done)
        tracker.report()
        if not pending:
            return 0.0
        cpu = 0.0
        cfg = self.cfg
        knobs = (cfg.threshold, cfg.enumerate_max)
        one = _one_worker(cfg)
        # a worker process arms its lifeline; this process's own thread has none to arm
        calls = [
            (_indexed, (c, self.task_args, *knobs, self.chunks[c], cfg.bound, not one))
            for c in dispatch_order(pending)
        ]
        # workers return their tables and this process writes the parts, so dask workers need
        # no shared disk (they read the word list from its path or compile tanglet:LANG)
        with (
            contextlib.nullcontext()
            if one
            else parallel_backend(cfg.backend, cfg.n_jobs, cfg.scheduler, cfg.scheduler_file)
        ):
            results = in_a_thread(calls) if one else _results(cfg, calls)
            # closed on the way out (a failed commit, a signal): its workers stop with it
            with contextlib.closing(results), _worker_lost(cfg.out):
                for c, table, chunk_cpu in results:
                    cpu += chunk_cpu
                    self._commit(job, c, table, chunk_cpu)
                    done[c] = table
                    tracker.add(table)
        return cpu

    def _commit(self, job: store.JobDir | None, c: int, table: pa.Table, chunk_cpu: float) -> None:
        self.part_cpu[c] = chunk_cpu
        self.part_wall[c] = (self.session, time.perf_counter() - self.t_start)
        if job is not None:
            meta = {
                META_CPU: repr(chunk_cpu),
                META_SESSION: self.session,
                META_SESSION_S: repr(self.part_wall[c][1]),
            }
            job.commit(c, table.num_rows, table, meta)


class _Tracker:
    """The progress of a session: classes done, boards found, the best board scored."""

    def __init__(self, run: ProofRun, done: dict[int, pa.Table]):
        self.run = run
        self.found = sum(len(x) for t in done.values() for x in t.column("found_boards").to_pylist())
        self.best: tuple[int, str] | None = best_of(done.values())
        self.classes_done = sum(t.num_rows for t in done.values())

    def add(self, table: pa.Table) -> None:
        self.classes_done += table.num_rows
        self.found += sum(len(x) for x in table.column("found_boards").to_pylist())
        b = best_of([table])
        if b is not None and (self.best is None or b[0] > self.best[0]):
            self.best = b
        self.report()

    def report(self) -> None:
        if self.run.progress is None:
            return
        best = self.best
        self.run.progress(
            ProveProgress(
                classes_done=self.classes_done,
                classes_total=len(self.run.ids),
                boards_found=self.found,
                best_score=best[0] if best else None,
                best_board=best[1] if best else None,
                elapsed=time.perf_counter() - self.run.t_start,
            )
        )


def _one_worker(cfg: ProveConfig) -> bool:
    """Whether the proof has one worker on this machine (loky or threads): it then runs in a
    thread of this process (:func:`in_a_thread`), joblib not even imported."""
    if cfg.backend == "dask":
        return False
    if cfg.n_jobs == 1:
        return True
    import joblib

    return bool(joblib.effective_n_jobs(cfg.n_jobs) == 1)


def _results(cfg: ProveConfig, calls: list[tuple[Any, tuple[Any, ...]]]) -> Generator[Any, None, None]:
    import joblib

    return joblib.Parallel(return_as="generator_unordered")(joblib.delayed(fn)(*a) for fn, a in calls)


def in_a_thread(calls: list[tuple[Any, tuple[Any, ...]]]) -> Generator[Any, None, None]:
    """The results of ``calls`` (function, arguments), in order, computed one after another by a
    daemon thread of this process, while this thread only waits for them. A class can keep the
    prover in compiled code for minutes, and a thread in compiled code takes no signal; the
    kernels release the GIL, so the main thread stays free: Ctrl-C and SIGTERM act at once
    (the generator is closed, the thread stops before its next call, and a process that exits
    does not wait for a daemon thread). One process where a worker process for ``-j 1`` made
    four (loky's worker and two resource trackers): one interpreter, one word list and one
    prover trie, and no start-up paid twice."""
    done: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
    stop = threading.Event()

    def work() -> None:
        try:
            for fn, args in calls:
                if stop.is_set():
                    return
                done.put((True, fn(*args)))
        except BaseException as exc:  # handed to the waiting thread, which raises it
            done.put((False, exc))

    thread = threading.Thread(target=work, name="boggle-prove", daemon=True)
    thread.start()
    try:
        for _ in calls:
            while True:
                try:
                    ok, value = done.get(timeout=0.5)  # a signal's handler runs between waits
                    break
                except queue.Empty:
                    continue
            if not ok:
                raise value
            yield value
    finally:
        stop.set()


def plan_proof(cfg: ProveConfig, progress: ProgressCallback | None = None) -> ProofRun:
    """Resolve ``cfg`` into a session: its problem, classes, chunks and identity (every config
    error raised before anything is written)."""
    t_start = time.perf_counter()
    session = datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds")
    cfg = cfg.resolve()
    assert cfg.rules is not None
    args: ProblemArgs = (cfg.dictionary, cfg.shape, cfg.rules, cfg.min_length, cfg.classes)
    problem = load_problem(*args)
    # dask workers get the compiled word list with the tasks: they need nothing from our disk
    task_args: ProblemArgs = args
    if cfg.backend == "dask":
        task_args = (ShippedLexicon(problem.lexicon), cfg.shape, cfg.rules, cfg.min_length, problem.spec)
    n_faces = len(problem.lexicon.alphabet)
    if cfg.bound == "tree" and problem.rows * problem.cols > max_cells(n_faces):
        raise ConfigError(
            f"prove: the tree bound holds at most {max_cells(n_faces)} cells with {n_faces} faces; "
            f"{cfg.shape} has {problem.rows * problem.cols} (use --bound sumax)"
        )
    all_ids = problem.space.canonical_ids()
    ids = selected_classes(all_ids, cfg)
    identity = {
        **cfg.identity(),
        "classes": problem.spec,
        "lexicon": problem.lexicon.content_hash,
        **limits_identity(),
    }
    return ProofRun(
        cfg=cfg,
        problem=problem,
        task_args=task_args,
        all_ids=all_ids if len(ids) == len(all_ids) else None,
        classes_total=len(all_ids),
        ids=ids,
        chunks=[ids[i : i + cfg.chunk_size] for i in range(0, len(ids), cfg.chunk_size)],
        identity=identity,
        t_start=t_start,
        session=session,
        progress=progress,
    )


def run_prove(
    cfg: ProveConfig, progress: ProgressCallback | None = None, note: Callable[[str], None] | None = None
) -> ProveSummary:
    """Prove ``cfg`` and write ``cfg.out`` (parts, _boards.pq, _SUCCESS) through the job
    protocol of :class:`pipeline.store.JobDir` (every reused part verified, a damaged finished
    proof refused); without ``out`` the certificate stays in memory and only the summary is
    returned. ``note`` receives one-line notes (parts distrusted and recomputed).

    >>> run_prove(ProveConfig("words.txt", shape="2x2", threshold=3, out="runs/p"))  # doctest: +SKIP
    """
    if cfg.backend == "dask" and cfg.scheduler_file:
        from pipeline.parallel import check_scheduler_file

        check_scheduler_file(cfg.scheduler_file)  # before the classes are planned: a FIFO waits
    run = plan_proof(cfg, progress)
    cfg = run.cfg
    if not cfg.out:
        tables: dict[int, pa.Table] = {}
        cpu = run.prove(list(range(len(run.chunks))), tables, None)
        alone = store.JobStatus.SAMPLE if run.sample else store.JobStatus.COMPLETE
        return _summary(run, alone, None, [tables[c] for c in sorted(tables)], cpu, sessions=False)
    out = store.job_path(cfg.out)
    with store.JobDir.open(
        out,
        KIND,
        run.identity,
        dataclasses.asdict(cfg),
        overwrite=cfg.overwrite,
        note=note,
        # a finished proof of another size is damaged, whatever its files say
        parts=len(run.chunks),
        records={"classes_total": run.classes_total},
    ) as job:
        if job.state is store.JobState.DONE:
            return _finished(run, job.outcome())
        done: dict[int, pa.Table] = {}

        def reuse(c: int, _: int) -> str | None:
            table = job.read_part(c)
            if not np.array_equal(int64_values(table.column("class_id")), run.chunks[c]):
                return f"not the classes of chunk {c}"
            done[c] = table
            run.remember(c, table)
            return None

        pending = list(job.pending(range(len(run.chunks)), reuse=reuse))
        cpu = run.prove(pending, done, job)
        tables_in_order = [done[c] for c in sorted(done)]
        # a sample until the coverage check certifies the proof
        summary = _summary(run, store.JobStatus.SAMPLE, out, tables_in_order, cpu)
        summary.parts_reused = job.chunks_reused
        if run.sample:
            return summary  # a sample certifies nothing: no _SUCCESS
        assert run.all_ids is not None  # kept unless a sample
        check_coverage(tables_in_order, run.all_ids)
        _certify(run, job, summary)
        summary.status = job.outcome().status  # complete or resumed
        return summary


def _finished(run: ProofRun, outcome: store.JobOutcome) -> ProveSummary:
    """The summary of a proof found finished (a no-op): the job's outcome with the proof's
    own figures from its manifest."""
    m = outcome.manifest
    return ProveSummary(
        out=outcome.where,
        status=outcome.status,
        threshold=run.cfg.threshold,
        classes_total=m["classes_total"],
        classes_done=m["classes_total"],
        boards=[FoundBoard(board=b, score=s) for b, s in m["boards"]],
        wall_s=time.perf_counter() - run.t_start,
        cpu_s=0.0,
        eliminated=m["eliminated"],
        boards_scored=m["boards_scored"],
        cpu_s_recorded=m.get("cpu_s", 0.0),
        parts_recorded=m.get("cpu_s_parts", 0),
        parts_total=outcome.parts_total,
        parts_reused=outcome.parts_reused,
        wall_s_recorded=m.get("wall_s", 0.0),
        parts_wall=m.get("wall_s_parts", 0),
    )


def _certify(run: ProofRun, job: store.JobDir, summary: ProveSummary) -> None:
    """Write the boards table and the manifest (the coverage check has passed)."""
    problem = run.problem
    _write_boards(job, summary.boards)
    fields = {
        "lexicon": problem.lexicon.provenance(),
        "rules": problem.rules.to_dict(),
        "classes": problem.spec,
        "classes_total": run.classes_total,
        "coverage": "every canonical class of the shape has one certificate row",
        "eliminated": summary.eliminated,
        "boards_scored": summary.boards_scored,
        "boards": [[b.board, b.score] for b in summary.boards],
        "boards_file": BOARDS_FILE,
        "wall_s_last_session": round(summary.wall_s, 3),
        # over the sessions: the workers' CPU on the parts that record it (see META_CPU)
        "cpu_s": round(summary.cpu_s_recorded, 3),
        "cpu_s_parts": summary.parts_recorded,
        # over the sessions: each one's start to its last part, summed (see META_SESSION)
        "wall_s": round(summary.wall_s_recorded, 3),
        "wall_s_parts": summary.parts_wall,
        "cpus": os.cpu_count(),
    }
    job.finish(len(run.chunks), fields, side_files=(BOARDS_FILE,))


@contextlib.contextmanager
def _worker_lost(out: str | None) -> Generator[None, None, None]:
    """A killed worker (the OOM killer, kill -9) as a one-line error (exit 5, resumable)."""
    from concurrent.futures.process import BrokenProcessPool

    try:
        yield
    except BrokenProcessPool as exc:
        raise WorkerLostError.from_pool(exc, out) from None


def _indexed(
    c: int,
    args: ProblemArgs,
    threshold: int,
    enumerate_max: int,
    ids: np.ndarray,
    bound: str,
    arm: bool = True,
) -> tuple[int, pa.Table, float]:
    """Chunk ``c`` proved: (c, its table, its CPU). A worker process arms its lifeline first
    (``arm``: a kill -9 of the main process leaves no worker proving on)."""
    if arm:
        from pipeline.parallel import lifeline

        lifeline.arm()
    table, cpu = prove_chunk(args, threshold, enumerate_max, ids, bound)
    return c, table, cpu


def proof_tag(identity: dict[str, Any]) -> str:
    """What every part of the proof with ``identity`` embeds as its ``boggle.config``."""
    return KIND.tag(identity)


def dispatch_order(pending: list[int]) -> list[int]:
    """The order the pending chunks are proved in: a fixed shuffle. Chunks are ranges of class
    ids, and cost follows the id (the ENABLE2K 3x4 proof's first half of parts holds 39% of its
    branch nodes, and its last eighth 2.7x the first eighth's), so in id order the progress
    bar's time left came out far short and the heaviest chunks ran last.
    Shuffled, every stretch of the proof is a fair sample of what is left; the parts, and so
    the certificate, do not depend on the order."""
    rng = np.random.default_rng(DISPATCH_SEED)
    return [pending[i] for i in rng.permutation(len(pending))]


def _summary(
    run: ProofRun,
    status: store.JobStatus,
    out: store.PartRef | None,
    tables: list[pa.Table],
    cpu: float,
    *,
    sessions: bool = True,
) -> ProveSummary:
    """The summary of this session; ``sessions``: with what the parts record over every session
    (a proof without ``out`` has no parts: those figures stay 0)."""
    eliminated, scored, boards = certificate_totals(tables, run.problem.rows, run.problem.cols)
    summary = ProveSummary(
        out=out,
        status=status,
        threshold=run.cfg.threshold,
        classes_total=run.classes_total,
        classes_done=sum(t.num_rows for t in tables),
        boards=boards,
        wall_s=time.perf_counter() - run.t_start,
        cpu_s=cpu,
        eliminated=eliminated,
        boards_scored=scored,
    )
    if sessions:
        summary.cpu_s_recorded, summary.parts_recorded = sum(run.part_cpu.values()), len(run.part_cpu)
        summary.wall_s_recorded, summary.parts_wall = (
            sessions_wall(run.part_wall.values()),
            len(run.part_wall),
        )
        summary.parts_total = len(run.chunks)
    return summary


def _write_boards(job: store.JobDir, boards: list[FoundBoard]) -> None:
    schema = pa.schema([("board", pa.string()), ("score", pa.int32())])
    table = columns_table(schema, {"board": [b.board for b in boards], "score": [b.score for b in boards]})
    with job.side_file(BOARDS_FILE) as tmp:
        pq.write_table(table, tmp, compression="zstd")
