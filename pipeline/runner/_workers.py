"""What runs in a worker: the lexicon handle, a chunk task and its result, and the parallel
backends (loky, threads, dask) the tasks run under."""

from __future__ import annotations

import builtins
import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pipeline import parallel, store
from pipeline.config import RunSettings
from pipeline.errors import (
    LexiconError,
)
from pipeline.lexicon import CompiledLexicon, compile_lexicon
from pipeline.lexicon.trie import Alphabet
from pipeline.parallel import lifeline
from pipeline.rules import Rules
from pipeline.store import write_part_info, write_stats


@dataclass(frozen=True, kw_only=True)
class Progress:
    """What the runner reports after each chunk (and once at the start)."""

    boards_done: int  # boards in finished chunks, reused ones included
    boards_total: int | None  # None while ingesting (the input is not counted in advance)
    chunks_done: int
    chunks_total: int | None
    boards_reused: int  # boards found already committed by an earlier, interrupted run
    rejected: int  # input rows rejected so far
    chunks_reused: int = 0  # of chunks_done, those found committed by an earlier run
    run_id: str | None = None  # the run's identity (the ``run_id`` column)
    # seconds from the start of solving to the latest chunk committed (what the summary's rate
    # divides by: a display that divides by it agrees with the summary)
    solve_s: float = 0.0


ProgressCallback = Callable[[Progress], None]
NoteCallback = Callable[[str], None]  # one-line notes for the user (capped n_jobs, distrusted parts)
JOBS_PER_CORE = 2  # more worker processes than this per core only add memory and switching


@dataclass(kw_only=True)
class RunSummary:
    """The outcome of a run (``status``: complete, resumed or already complete, as for every
    command: :class:`pipeline.store.JobOutcome`)."""

    run_dir: Path | str  # a local folder, or the URL of one in an object store
    status: store.JobStatus
    boards: int
    rejected: int
    input_rows: int
    words_total: int
    chunks: int
    chunks_reused: int
    boards_solved: int  # by this invocation
    elapsed_s: float  # the whole run: planning, solving, the manifest and the expectations
    manifest: dict[str, Any] = field(repr=False, default_factory=dict)
    # each expectation measured ([expect] checks: pipeline.runner._expect.check), in order
    expectations: list[dict[str, Any]] = field(default_factory=list)

    @property
    def rejects_file(self) -> Path | str:
        if isinstance(self.run_dir, Path):
            return self.run_dir / store.REJECTS
        return f"{self.run_dir}/{store.REJECTS}"

    # seconds of the solving stage: from its start to the last chunk committed (0: nothing solved)
    solve_s: float = 0.0

    @property
    def boards_per_s(self) -> float:
        """Boards solved a second of the solving stage (what the progress lines report)."""
        seconds = self.solve_s if self.solve_s > 0 else self.elapsed_s
        return self.boards_solved / seconds if seconds > 0 else 0.0


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
    words: bool = True  # False: no ``words`` column ([boards] words = false)
    labels: dict[str, str | None] = field(default_factory=dict)  # run_id, seed, dice, run_date columns
    dice: Any = None  # a dice file's pipeline.boards.DiceSet (the worker never reads the file)
    placement: str | None = None  # the dice's placement policy ([boards] placement), None: none


@dataclass
class ChunkResult:
    chunk: int
    rows: int
    bytes: int
    table: Any = None  # a pyarrow.Table when the worker did not write the part itself
    blake2b: str | None = None  # of the part the worker committed: the main process records it
    stats: builtins.bytes | None = None  # the part's statistics, when the worker did not write them
    stats_entry: dict[str, Any] | None = None  # size and checksum of the statistics it wrote
    totals: dict[str, int] | None = None  # words found and points scored on the part's boards


def watched_solve_chunk(
    task: ChunkTask, handle: LexiconHandle, out_dir: str | None, parent_pid: int
) -> ChunkResult:
    """:func:`solve_chunk` in a worker that dies with the main process ``parent_pid``."""
    lifeline.arm(parent_pid)
    return solve_chunk(task, handle, out_dir)


def solve_chunk(task: ChunkTask, handle: LexiconHandle, out_dir: str | None) -> ChunkResult:
    """Worker entry point: build the chunk's boards, solve them, write (or return) the part."""
    import pyarrow as pa

    from pipeline.boards import GenerateChunk, generate_chunk
    from pipeline.solve import solve_arrays, summarise_result

    lex = worker_lexicon(handle)
    schema = store.board_schema(lex.rules.min_length, words=task.words)
    bins = store.length_bins(lex.rules.min_length)
    tally = (int(bins[0]), len(bins))  # the kernel tallies the by-length columns as it solves

    def summarise(result: Any) -> Any:
        return summarise_result(result, lex, *tally, sort=task.words)

    tables = []
    found: list[tuple[Any, Any, Any]] = []  # each table's (result, summary, sources): for the statistics
    layout = None
    if task.groups:
        for g in task.groups:
            result = solve_arrays(g.boards, g.rows, g.cols, lex, collect=task.words, bins=tally)
            summary = summarise(result)
            found.append((result, summary, g.source))
            # one dictionary (every input file) for all groups, so the chunk's tables concatenate
            names = pa.DictionaryArray.from_arrays(
                pa.array(g.source, type=pa.int32()), pa.array(task.sources, type=pa.string())
            )
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
                    summary=summary,
                    labels=task.labels,
                )
            )
    elif task.count:
        ch = GenerateChunk(task.chunk, task.first_id, task.count)
        dice = task.dice if task.dice is not None else task.source
        # the layout as placed: what the boards show, and what the statistics record per die
        boards, layout = generate_chunk(
            dice, lex.alphabet, task.seed, ch, task.rows, task.cols, task.placement
        )
        result = solve_arrays(boards, task.rows, task.cols, lex, collect=task.words, bins=tally)
        summary = summarise(result)
        found.append((result, summary, task.source))
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
                summary=summary,
                labels=task.labels,
            )
        )
    order = None
    if not tables:
        table = schema.empty_table()
    elif len(tables) == 1:
        table = tables[0]
    else:
        table = pa.concat_tables(tables)
        order = np.argsort(table.column("board_id").to_numpy(), kind="stable")
        table = table.take(order)
    if out_dir is None:
        stats = chunk_stats(task, table, found, order, layout, lex, bins)
        table = table.replace_schema_metadata({k.encode(): v.encode() for k, v in task.metadata.items()})
        return ChunkResult(task.chunk, table.num_rows, 0, table, stats=stats, totals=part_totals(table))
    lifeline.exit_if_orphaned()
    info = write_part_info(out_dir, task.chunk, table, task.metadata)
    # after the part: the writer's buffers are freed by then (a lower peak at large chunks);
    # the part counts as committed only once the main process records it with its statistics
    entry = write_stats(out_dir, task.chunk, chunk_stats(task, table, found, order, layout, lex, bins))
    return ChunkResult(
        task.chunk,
        table.num_rows,
        info.bytes,
        blake2b=info.blake2b,
        stats_entry=entry,
        totals=part_totals(table),
    )


def part_totals(table: Any) -> dict[str, int]:
    """The words found and points scored on a part's boards: the run's manifest sums them
    from the part records instead of reading every part again."""
    import pyarrow.compute as pc

    zero = pc.ScalarAggregateOptions(min_count=0)
    return {
        "words": int(pc.sum(table.column("n_words"), options=zero).as_py()),
        "score": int(pc.sum(table.column("score"), options=zero).as_py()),
    }


def chunk_stats(
    task: ChunkTask,
    table: Any,
    found: list[tuple[Any, Any, Any]],
    order: np.ndarray | None,
    layout: Any,
    lex: CompiledLexicon,
    bins: list[str],
) -> bytes:
    """The chunk's statistics (:mod:`pipeline.stats`) as the bytes kept beside its part, from
    what the kernel found (``found``: each table's summary and its boards' sources, one name
    or an array of indices into ``task.sources``, in the order the tables were concatenated;
    ``order``: the rows' permutation that sorted them by board id)."""
    from pipeline import stats

    longest = np.concatenate([s.longest_id for _, s, _ in found]) if found else np.zeros(0, np.int32)
    if order is not None:
        longest = longest[order]
    words = None
    if task.words:
        words = []
        for result, summary, source in found:
            if isinstance(source, str):
                words.append((source, summary.word_ids))
                continue
            per_word = np.repeat(source, np.diff(result.offsets))
            for s in np.unique(source).tolist():
                words.append((task.sources[s], summary.word_ids[per_word == s]))
    dice_layout = None
    if layout is not None:
        dice_set, die, side = layout
        dice_layout = stats.DiceLayout(tuple(tuple(d) for d in dice_set.dice), die, side)
    ps = stats.part_stats(
        table,
        tag=task.metadata.get(store.META_CONFIG, ""),
        chunk=task.chunk,
        bins=bins,
        ids=stats.WordIds(longest, len(lex.words), tuple(words) if words is not None else None),
        layout=dice_layout,
    )
    return stats.to_bytes(ps)


# ---------------------------------------------------------------- parallel backends


@contextlib.contextmanager
def run_backend(settings: RunSettings) -> Iterator[None]:
    """:func:`pipeline.parallel.parallel_backend` for the config's ``[run]`` section."""
    with parallel.parallel_backend(
        settings.backend, settings.n_jobs, settings.scheduler, settings.scheduler_file
    ):
        yield
