"""The batch runner: config -> chunks of boards -> joblib workers -> Parquet parts -> manifest.

``execute`` runs one job under whatever ``joblib.parallel_config`` the caller set (the caller
owns parallelism); ``run_job`` sets it from the config's ``[run]`` section (loky processes by
default, threads, or a dask.distributed cluster) and calls ``execute``.

How the work flows:

* Generated boards: each task carries only (dice, seed, chunk); the worker rolls the chunk's
  boards from ``SeedSequence(seed).spawn(n_chunks)[chunk]`` (see :mod:`pipeline.generate`).
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
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pipeline import store
from pipeline.config import RunConfig, RunSettings, load_config
from pipeline.errors import (
    BoggleError,
    ConfigError,
    LexiconError,
    OutputConflictError,
    RunIOError,
    WorkerLostError,
)
from pipeline.io import atomic_open, package_versions
from pipeline.lexicon import CompiledLexicon, compile_lexicon, lexicon_alphabet
from pipeline.rules import Rules
from pipeline.trie import Alphabet


@dataclass(frozen=True)
class Progress:
    """What the runner reports after each chunk (and once at the start)."""

    boards_done: int  # boards in finished chunks, reused ones included
    boards_total: int | None  # None while ingesting (the input is not counted in advance)
    chunks_done: int
    chunks_total: int | None
    boards_reused: int  # boards found already committed by an earlier, interrupted run
    rejected: int  # input rows rejected so far


ProgressCallback = Callable[[Progress], None]
NoteCallback = Callable[[str], None]  # one-line notes for the user (capped n_jobs, distrusted parts)
JOBS_PER_CORE = 2  # more worker processes than this per core only add memory and switching


@dataclass
class RunSummary:
    """The outcome of a run (``status``: "complete", "resumed" or "already complete")."""

    run_dir: Path
    status: str
    boards: int
    rejected: int
    input_rows: int
    words_total: int
    chunks: int
    chunks_reused: int
    boards_solved: int  # by this invocation
    elapsed_s: float
    manifest: dict[str, Any] = field(repr=False, default_factory=dict)

    @property
    def rejects_file(self) -> Path:
        return self.run_dir / store.REJECTS

    @property
    def boards_per_s(self) -> float:
        return self.boards_solved / self.elapsed_s if self.elapsed_s > 0 else 0.0


# ---------------------------------------------------------------- lexicon in workers


@dataclass(frozen=True)
class LexiconHandle:
    """What a task carries to name its lexicon. ``payload`` (the compiled lexicon itself) is
    set only for workers that may not share the main process's disk (dask)."""

    key: str
    spec: str
    content_hash: str
    alphabet: Alphabet
    rules: Rules
    payload: CompiledLexicon | None = None

    def __sizeof__(self) -> int:
        # joblib's dask backend scatters arguments it sizes above 1 kB once per worker instead
        # of sending them with every task; report the real size so that happens.
        if self.payload is None:
            return 256
        trie = self.payload.trie
        return trie.nbytes + sum(len(w) + 50 for w in trie.words)


_LEXICONS: dict[str, CompiledLexicon] = {}


def lexicon_key(lexicon: CompiledLexicon) -> str:
    return f"{lexicon.content_hash}|{lexicon.alphabet.key()}|{lexicon.rules.key()}"


def make_handle(spec: str, lexicon: CompiledLexicon, *, ship: bool) -> LexiconHandle:
    """A handle for ``lexicon`` (compiled from ``spec``); ``ship`` embeds the arrays."""
    key = lexicon_key(lexicon)
    _LEXICONS[key] = lexicon  # the main process (and n_jobs=1) never reloads it
    return LexiconHandle(
        key, spec, lexicon.content_hash, lexicon.alphabet, lexicon.rules, lexicon if ship else None
    )


def worker_lexicon(handle: LexiconHandle) -> CompiledLexicon:
    """The compiled lexicon for a handle, loaded at most once per process."""
    lex = _LEXICONS.get(handle.key)
    if lex is not None:
        return lex
    if handle.payload is not None:
        lex = handle.payload
    else:
        lex = compile_lexicon(handle.spec, handle.alphabet, handle.rules)
        if lex.content_hash != handle.content_hash:
            raise LexiconError("the word list changed while the run was going; re-run", source=handle.spec)
    _LEXICONS[handle.key] = lex
    return lex


# ---------------------------------------------------------------- tasks


@dataclass
class ChunkTask:
    """One chunk of work. Generated chunks carry a recipe; ingested ones carry their boards."""

    chunk: int
    first_id: int
    metadata: dict[str, str]
    source: str = ""  # dice set name (generate)
    seed: int = 0
    count: int = 0
    rows: int = 0
    cols: int = 0
    groups: list[Any] = field(default_factory=list)  # ingest.BoardGroup (ingest)
    sources: list[str] = field(default_factory=list)  # input files the groups refer to


@dataclass
class ChunkResult:
    chunk: int
    rows: int
    bytes: int
    table: Any = None  # a pyarrow.Table when the worker did not write the part itself


_PARENT_PID: int | None = None  # the main process a worker process serves, once watched


def _watch_parent(parent_pid: int) -> None:
    """In a worker process of ``parent_pid``: exit as soon as that parent is gone (re-parented),
    so a ``kill -9`` of the main process leaves no worker solving or writing. Idempotent; does
    nothing in the main process itself (threads, n_jobs=1) or under another parent (dask)."""
    global _PARENT_PID
    if _PARENT_PID is not None or os.getpid() == parent_pid or os.getppid() != parent_pid:
        return
    _PARENT_PID = parent_pid

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.2)
        os._exit(1)

    threading.Thread(target=watch, name="boggle-parent-watchdog", daemon=True).start()


def _exit_if_orphaned() -> None:
    if _PARENT_PID is not None and os.getppid() != _PARENT_PID:
        os._exit(1)  # never commit a part for a run whose main process is gone


def watched_solve_chunk(
    task: ChunkTask, handle: LexiconHandle, out_dir: str | None, parent_pid: int
) -> ChunkResult:
    """:func:`solve_chunk` in a worker that exits when the main process ``parent_pid`` dies."""
    _watch_parent(parent_pid)
    return solve_chunk(task, handle, out_dir)


def solve_chunk(task: ChunkTask, handle: LexiconHandle, out_dir: str | None) -> ChunkResult:
    """Worker entry point: build the chunk's boards, solve them, write (or return) the part."""
    import pyarrow as pa

    from pipeline.generate import GenerateChunk, generate_chunk
    from pipeline.solve import solve_arrays
    from pipeline.solve.summary import summarise_words

    lex = worker_lexicon(handle)
    schema = store.board_schema(lex.rules.min_length)
    bins = store.length_bins(lex.rules.min_length)

    def summarise(result: Any) -> Any:
        return summarise_words(result.offsets, result.word_ids, lex, int(bins[0]), len(bins))

    tables = []
    if task.groups:
        for g in task.groups:
            result = solve_arrays(g.boards, g.rows, g.cols, lex)
            names = pa.array(task.sources, type=pa.string()).take(pa.array(g.source))
            tables.append(
                store.results_table(
                    g.boards,
                    g.rows,
                    g.cols,
                    task.first_id + g.index,
                    result,
                    lex,
                    source=names,
                    chunk=task.chunk,
                    schema=schema,
                    summary=summarise(result),
                )
            )
    elif task.count:
        ch = GenerateChunk(task.chunk, task.first_id, task.count)
        boards = generate_chunk(task.source, lex.alphabet, task.seed, ch, task.rows, task.cols)
        result = solve_arrays(boards, task.rows, task.cols, lex)
        ids = np.arange(task.first_id, task.first_id + task.count, dtype=np.int64)
        tables.append(
            store.results_table(
                boards,
                task.rows,
                task.cols,
                ids,
                result,
                lex,
                source=task.source,
                chunk=task.chunk,
                schema=schema,
                summary=summarise(result),
            )
        )
    if not tables:
        table = schema.empty_table()
    elif len(tables) == 1:
        table = tables[0]
    else:
        table = pa.concat_tables(tables).sort_by("board_id")
    if out_dir is None:
        table = table.replace_schema_metadata({k.encode(): v.encode() for k, v in task.metadata.items()})
        return ChunkResult(task.chunk, table.num_rows, 0, table)
    _exit_if_orphaned()
    nbytes = store.write_part(out_dir, task.chunk, table, task.metadata)
    return ChunkResult(task.chunk, table.num_rows, nbytes)


# ---------------------------------------------------------------- parallel backends


@contextlib.contextmanager
def parallel_backend(settings: RunSettings) -> Iterator[None]:
    """``joblib.parallel_config`` for the config's ``[run]`` section.

    ``backend = "dask"`` connects to ``scheduler`` (or starts a local cluster with ``n_jobs``
    worker processes when there is none) and closes what it opened afterwards.
    """
    import joblib

    if settings.backend != "dask":
        with joblib.parallel_config(backend=settings.backend, n_jobs=settings.n_jobs):
            yield
        return
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise ConfigError(
            "backend = \"dask\" needs dask.distributed: pip install 'dask[distributed]'"
        ) from None
    with contextlib.ExitStack() as stack:
        if settings.scheduler:
            try:
                client = stack.enter_context(Client(settings.scheduler, timeout="20s", set_as_default=False))
            except (OSError, TimeoutError) as exc:
                raise BoggleError(f"cannot reach the dask scheduler {settings.scheduler}: {exc}") from None
        else:
            import os

            workers = (os.cpu_count() or 1) if settings.n_jobs < 0 else settings.n_jobs
            cluster = stack.enter_context(
                LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
            )
            client = stack.enter_context(Client(cluster, set_as_default=False))
        with joblib.parallel_config(backend="dask", client=client):
            yield


def _backend_is_dask() -> bool:
    from joblib.parallel import get_active_backend

    backend, _ = get_active_backend()
    return type(backend).__name__ == "DaskDistributedBackend"


# ---------------------------------------------------------------- the run


@dataclass
class _Counters:
    reused_boards: int = 0
    reused_chunks: int = 0
    chunks: int = 0
    input_rows: int = 0
    rejected: int = 0
    valid: int = 0


def run_from_file(
    path: str | Path | None,
    overrides: Mapping[str, Any] | None = None,
    assignments: Sequence[str] = (),
    *,
    overwrite: bool = False,
    progress: ProgressCallback | None = None,
    note: NoteCallback | None = None,
) -> RunSummary:
    """Load a config file, apply command-line overrides, and run it (``boggle run``)."""
    return run_job(
        load_config(path, overrides, assignments), overwrite=overwrite, progress=progress, note=note
    )


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
    with parallel_backend(config.run):
        return execute(config, overwrite=overwrite, progress=progress, note=note)


def capped_n_jobs(config: RunConfig, note: NoteCallback | None = None) -> int:
    """``[run] n_jobs`` of a resolved config, capped: more workers than chunks would idle, and
    more than JOBS_PER_CORE per core only cost memory (a remote dask cluster is not capped)."""
    wanted = config.run.n_jobs
    if wanted < 0 or (config.run.backend == "dask" and config.run.scheduler):
        return wanted
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    limit, why = JOBS_PER_CORE * cores, f"{JOBS_PER_CORE} x {cores} cores"
    b = config.boards
    if b.source == "generate":
        n_chunks = -(-b.count // b.chunk_size)
        if n_chunks < limit:
            limit, why = n_chunks, f"the run has {n_chunks} chunk{'s' if n_chunks != 1 else ''}"
    if wanted <= limit:
        return wanted
    if note is not None:
        note(f"n_jobs {wanted} capped to {limit} ({why})")
    return limit


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

    ``workers_write`` (default: yes, except on dask) says whether workers write their own part
    files or send tables back for the main process to write.
    """
    from joblib import Parallel, delayed

    from pipeline.solve import kernel_needs_compile, solve_arrays

    t_start = time.perf_counter()
    cfg = config.resolve()
    b = cfg.boards
    rules = cfg.rule_set()
    shape = cfg.shape
    ingest = b.source == "ingest"
    if workers_write is None:
        workers_write = not _backend_is_dask()

    inputs: list[dict[str, Any]] = []
    if ingest:
        from pipeline.ingest import check_input, fingerprint

        for f in b.files:
            check_input(f, b.column)
        inputs = [fingerprint(f) for f in b.files]
    lexicon = _compile(cfg, rules)
    identity = {
        "schema_version": store.SCHEMA_VERSION,
        "data": cfg.data_dict(),
        "lexicon_sha256": lexicon.content_hash,
        "alphabet": list(lexicon.alphabet.faces),
        "inputs": [{"file": i["file"], "sha256": i["sha256"]} for i in inputs],
    }
    run_dir = Path(cfg.run.out)
    metadata = store.parquet_metadata(cfg.data_dict(), lexicon.provenance(), rules.to_dict())

    with store.run_lock(run_dir):
        state = store.prepare_run_dir(run_dir, identity, overwrite=overwrite)
        if state == "done":
            if not _damaged_finished_run(run_dir, metadata[store.META_CONFIG], overwrite, note):
                return _summary_from_manifest(run_dir, "already complete", time.perf_counter() - t_start)
            state = "resume"
        if state == "new":
            started_at = store.now_iso()
            store.write_run_record(
                run_dir,
                {
                    "identity": identity,
                    "config": cfg.to_dict(),
                    "started_at": started_at,
                    "packages": package_versions(),
                },
            )
        else:
            started_at = store.read_json(run_dir / store.RUN_RECORD).get("started_at", store.now_iso())
        committed = store.committed_chunks(run_dir)
        reusable = _Reuse(run_dir, metadata[store.META_CONFIG], note, overwrite)

        # Compile the kernels here once when numba has no cache yet, so workers do not all
        # compile them at the same time. With a warm cache the main process skips this and never
        # imports numba (about 100 MB less, as it only dispatches chunks and writes the manifest).
        if kernel_needs_compile() or kernel_needs_compile(module="summary"):
            from pipeline.solve.summary import summarise_words

            cells = shape[0] * shape[1] if shape else 16
            warm = solve_arrays(np.zeros((1, cells), np.int8), *(shape or (4, 4)), lexicon)
            summarise_words(warm.offsets, warm.word_ids, lexicon, 3, len(store.length_bins(3)))

        handle = make_handle(cfg.lexicon.path or "", lexicon, ship=not workers_write)
        counters = _Counters()
        out_dir = str(run_dir) if workers_write else None
        total = b.count if not ingest else None
        n_chunks_total = -(-b.count // b.chunk_size) if not ingest else None

        with atomic_open(run_dir / store.REJECTS, "w") as rejects_fh:
            if ingest:
                tasks = _ingest_tasks(
                    cfg, lexicon.alphabet, metadata, committed, counters, rejects_fh, reusable
                )
            else:
                from pipeline.ingest import write_rejects_header

                write_rejects_header(rejects_fh)
                tasks = _generate_tasks(cfg, metadata, committed, counters, reusable)
            solved = 0
            done_chunks = 0

            def report() -> None:
                if progress is not None:
                    progress(
                        Progress(
                            counters.reused_boards + solved,
                            total,
                            done_chunks + counters.reused_chunks,
                            n_chunks_total,
                            counters.reused_boards,
                            counters.rejected,
                        )
                    )

            report()
            results = Parallel(n_jobs=n_jobs, return_as="generator_unordered", batch_size=1)(
                delayed(watched_solve_chunk)(task, handle, out_dir, os.getpid()) for task in tasks
            )
            try:
                for res in results:
                    if res.table is not None:
                        store.write_part(run_dir, res.chunk, res.table)
                    store.record_part(run_dir, res.chunk, res.rows)
                    solved += res.rows
                    done_chunks += 1
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
                died = str(exc).split("The exit codes of the workers are")[-1].strip(" .{}\n")
                why = f" (exit {died})" if died and len(died) < 60 else ""
                raise WorkerLostError(
                    f"a worker process died{why}; committed parts are kept: re-run the same "
                    "command to resume",
                    source=str(run_dir),
                ) from None
            finally:
                close = getattr(results, "close", None)
                if close is not None:
                    with warnings.catch_warnings():
                        # stopping early (an error, Ctrl-C, SIGTERM) cancels the queued chunks on
                        # purpose; joblib would warn about it on stderr below our one line
                        warnings.filterwarnings("ignore", ".*tasks which were still being processed")
                        close()
            report()  # chunks found committed after the last result count too

        manifest = _finish(
            run_dir,
            cfg,
            identity,
            lexicon,
            rules,
            inputs,
            counters,
            started_at,
            ingest=ingest,
            n_chunks=counters.chunks,
        )
        status = "resumed" if counters.reused_chunks else "complete"
        elapsed = time.perf_counter() - t_start
        return _summary(run_dir, status, manifest, counters.reused_chunks, solved, elapsed)


def _compile(cfg: RunConfig, rules: Rules) -> CompiledLexicon:
    from pipeline.boards import check_face
    from pipeline.dice import generator_alphabet

    b = cfg.boards
    spec = cfg.lexicon.path or "tanglet:en"
    try:
        if b.source == "generate":
            shape = cfg.shape or (4, 4)
            alphabet = generator_alphabet(b.dice, *shape)
        else:
            extra = []
            for f in b.faces:
                try:
                    extra.append(check_face(f, "[boards] faces"))
                except BoggleError as exc:
                    raise ConfigError(exc.message, source=cfg.origin) from None
            alphabet = lexicon_alphabet(spec).union(extra)
        return compile_lexicon(spec, alphabet, rules)
    except LexiconError as exc:
        raise LexiconError(
            exc.message + "; or set [lexicon] path in the config to a word-list file",
            source=exc.source,
            line=exc.line,
        ) from None


@dataclass
class _Reuse:
    """Decides which committed parts a started run may reuse (call it with chunk and path): a
    part that fails verification is named in a note and removed, so it is recomputed. Parts
    beyond the run's chunks are refused unless ``overwrite``, which removes them."""

    run_dir: Path
    config: str
    note: NoteCallback | None
    overwrite: bool = False

    def __call__(self, chunk: int, path: Path) -> bool:
        problem = store.part_problem(path, store.read_part_record(self.run_dir, chunk), self.config)
        if problem is None:
            return True
        self._say(f"{path}: {problem}; recomputing it")
        store.discard_part(self.run_dir, chunk)
        return False

    def strays(self, committed: Mapping[int, Path], n_chunks: int) -> None:
        if not self.overwrite:
            _check_no_stray_parts(committed, n_chunks)
            return
        for k in sorted(k for k in committed if k >= n_chunks):
            self._say(f"{committed[k]}: beyond this run's {n_chunks} chunks; removed (--overwrite)")
            store.discard_part(self.run_dir, k)

    def _say(self, message: str) -> None:
        if self.note is not None:
            self.note(message)


def _damaged_finished_run(run_dir: Path, config: str, overwrite: bool, note: NoteCallback | None) -> bool:
    """Check a finished run's parts against its manifest. Intact: False. Damaged: refused
    (OutputConflictError naming the parts) unless ``overwrite``, which removes the damaged
    parts and the manifest so the run resumes and recomputes just those (True)."""
    problems = store.finished_run_problems(run_dir, config)
    if not problems:
        return False
    shown = "; ".join(f"{store.part_name(k)}: {why}" for k, why in problems[:3])
    more = f"; and {len(problems) - 3} more" if len(problems) > 3 else ""
    if not overwrite:
        raise OutputConflictError(
            f"{run_dir} is a finished run with damaged parts ({shown}{more}); "
            "re-run with --overwrite to recompute them"
        )
    if note is not None:
        note(f"repairing {run_dir}: {shown}{more}; recomputing")
    for chunk, _ in problems:
        store.discard_part(run_dir, chunk)
    (run_dir / store.MANIFEST).unlink()
    return True


def _generate_tasks(
    cfg: RunConfig,
    metadata: dict[str, str],
    committed: dict[int, Path],
    counters: _Counters,
    reusable: _Reuse,
) -> Iterator[ChunkTask]:
    from pipeline.generate import chunk_plan

    b = cfg.boards
    rows, cols = cfg.shape or (4, 4)
    plan = chunk_plan(b.count, b.chunk_size)
    counters.chunks = len(plan)
    counters.input_rows = counters.valid = b.count
    if len(plan) > store.MAX_PART:
        raise ConfigError(
            f"{len(plan)} chunks is more than {store.MAX_PART}; raise [boards] chunk_size", source=cfg.origin
        )
    reusable.strays(committed, len(plan))
    todo = []
    for ch in plan:
        if ch.chunk in committed and reusable(ch.chunk, committed[ch.chunk]):
            counters.reused_chunks += 1
            counters.reused_boards += ch.count
        else:
            todo.append(ch)
    # the generator is consumed lazily by joblib; the counters above are final already
    return (ChunkTask(ch.chunk, ch.start, metadata, b.dice, b.seed, ch.count, rows, cols) for ch in todo)


def _check_no_stray_parts(committed: Mapping[int, Path], n_chunks: int) -> None:
    stray = sorted(k for k in committed if k >= n_chunks)
    if stray:
        raise OutputConflictError(
            f"{committed[stray[0]].parent} holds part files beyond this run's {n_chunks} chunks "
            f"({committed[stray[0]].name}...); use --overwrite"
        )


def _ingest_tasks(
    cfg: RunConfig,
    alphabet: Alphabet,
    metadata: dict[str, str],
    committed: dict[int, Path],
    counters: _Counters,
    rejects_fh: Any,
    reusable: _Reuse,
) -> Iterator[ChunkTask]:
    """Stream, parse and hand out the ingest chunks (runs lazily, as joblib dispatches)."""
    from pipeline.ingest import iter_ingest_chunks, write_rejects_header

    b = cfg.boards
    writer = write_rejects_header(rejects_fh)
    next_id = 0
    for parsed in iter_ingest_chunks(b.files, alphabet, b.chunk_size, shape=cfg.shape, column=b.column):
        if parsed.chunk >= store.MAX_PART:
            raise ConfigError(
                f"the input needs more than {store.MAX_PART} chunks; raise [boards] chunk_size",
                source=cfg.origin,
            )
        for rej in parsed.rejects:
            writer.writerow(rej.row())
        counters.chunks += 1
        counters.input_rows += parsed.n_input
        counters.rejected += len(parsed.rejects)
        n_valid = parsed.n_valid
        counters.valid += n_valid
        first = next_id
        next_id += n_valid
        done = committed.get(parsed.chunk)
        if done is not None and reusable(parsed.chunk, done):
            have = store.part_rows(done)
            if have != n_valid:
                raise OutputConflictError(
                    f"{done} holds {have} boards but chunk {parsed.chunk} of the input has {n_valid}; "
                    "the input or the code changed since it was written; use --overwrite"
                )
            counters.reused_chunks += 1
            counters.reused_boards += n_valid
            continue
        yield ChunkTask(parsed.chunk, first, metadata, groups=parsed.groups, sources=parsed.sources)
    reusable.strays(committed, counters.chunks)


def _finish(
    run_dir: Path,
    cfg: RunConfig,
    identity: dict[str, Any],
    lexicon: CompiledLexicon,
    rules: Rules,
    inputs: list[dict[str, Any]],
    counters: _Counters,
    started_at: str,
    *,
    ingest: bool,
    n_chunks: int,
) -> dict[str, Any]:
    """Check every chunk is committed, total the parts, and write ``_SUCCESS``."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    committed = store.committed_chunks(run_dir)
    missing = [k for k in range(n_chunks) if k not in committed]
    if missing:
        raise BoggleError(f"{run_dir}: chunks {missing[:5]} were not written; re-run to finish")
    _check_no_stray_parts(committed, n_chunks)
    parts = []
    boards = words = score = 0
    # ParquetFile and pyarrow.compute rather than read_table and numpy: those import pandas,
    # 50 MB the main process does not otherwise need
    total = pc.ScalarAggregateOptions(min_count=0)
    for k in range(n_chunks):
        with pq.ParquetFile(committed[k]) as pf:
            t = pf.read(columns=["n_words", "score"])
        n = t.num_rows
        boards += n
        words += pc.sum(t.column("n_words"), options=total).as_py()
        score += pc.sum(t.column("score"), options=total).as_py()
        info = store.read_part_record(run_dir, k) or store.record_part(run_dir, k, n)
        parts.append(info.to_dict())
    if boards != counters.valid:
        raise BoggleError(
            f"{run_dir}: the parts hold {boards} boards but the input gave {counters.valid}; "
            "re-run with --overwrite"
        )
    manifest = {
        "identity": identity,
        "config": cfg.to_dict(),
        "lexicon": lexicon.provenance(),
        "rules": rules.to_dict(),
        "packages": package_versions(),
        "python": sys.version.split()[0],
        "inputs": inputs,
        "counts": {
            "input_rows": counters.input_rows,
            "boards": boards,
            "rejected": counters.rejected,
            "words_total": words,
            "score_total": score,
        },
        "parts": parts,
        "rejects_file": store.REJECTS,
        "columns": store.COLUMNS,
        "chunks_reused": counters.reused_chunks,
        "started_at": started_at,
        "finished_at": store.now_iso(),
    }
    store.write_manifest(run_dir, manifest)
    return {"format": store.FORMAT, "schema_version": store.SCHEMA_VERSION, **manifest}


def _summary(
    run_dir: Path, status: str, manifest: dict[str, Any], reused: int, solved: int, elapsed: float
) -> RunSummary:
    c = manifest["counts"]
    return RunSummary(
        run_dir,
        status,
        int(c["boards"]),
        int(c["rejected"]),
        int(c["input_rows"]),
        int(c["words_total"]),
        len(manifest["parts"]),
        reused,
        solved,
        elapsed,
        manifest,
    )


def _summary_from_manifest(run_dir: Path, status: str, elapsed: float) -> RunSummary:
    manifest, _ = store.open_run(run_dir)
    return _summary(run_dir, status, manifest, len(manifest["parts"]), 0, elapsed)
