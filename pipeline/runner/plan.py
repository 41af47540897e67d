"""What a run is and which chunks it still has to do: the :class:`RunPlan` prepared before the
run directory is opened, the run's counters, and the generate and ingest task streams (a
committed part is reused only when :meth:`pipeline.store.JobDir.reusable` verifies it)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pipeline import store
from pipeline.config import RunConfig
from pipeline.errors import (
    ConfigError,
    OutputConflictError,
)
from pipeline.lexicon import CompiledLexicon
from pipeline.rules import Rules
from pipeline.runner.workers import ChunkTask
from pipeline.trie import Alphabet


@dataclass(frozen=True)
class RunPlan:
    """A run as :func:`pipeline.runner.run.prepare_run` prepares it, before its directory is
    opened: what to compute (the resolved config, its rules and compiled lexicon, the ingest
    inputs' fingerprints), the identity a resumed run must match, and where parts go."""

    cfg: RunConfig
    rules: Rules
    lexicon: CompiledLexicon
    inputs: list[dict[str, Any]]  # ingest: each input's file, size and sha256 when read
    identity: dict[str, Any]  # what a resumed run must match (schema, data, lexicon, inputs, limits)
    run_dir: Any  # a Path, or a store.ObjectPath in an object store
    metadata: dict[str, str]  # the Parquet key-value metadata of every part
    workers_write: bool | None  # None: decided when the workers are known (dask: a shared disk?)


@dataclass
class Counters:
    reused_boards: int = 0
    reused_chunks: int = 0
    chunks: int = 0
    input_rows: int = 0
    rejected: int = 0
    valid: int = 0
    digests: dict[str, Any] = field(default_factory=dict)  # ingest: what was read of each input


def generate_tasks(
    cfg: RunConfig,
    metadata: dict[str, str],
    committed: dict[int, store.PartRef],
    counters: Counters,
    job: store.JobDir,
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
    job.strays(committed, len(plan))
    todo = []
    for ch in plan:
        if ch.chunk in committed and job.reusable(ch.chunk, committed[ch.chunk]):
            counters.reused_chunks += 1
            counters.reused_boards += ch.count
        else:
            todo.append(ch)
    # the generator is consumed lazily by joblib; the counters above are final already
    return (
        ChunkTask(ch.chunk, ch.start, metadata, b.dice, b.seed, ch.count, rows, cols, words=b.words)
        for ch in todo
    )


def ingest_tasks(
    cfg: RunConfig,
    alphabet: Alphabet,
    metadata: dict[str, str],
    committed: dict[int, store.PartRef],
    counters: Counters,
    rejects_fh: Any,
    job: store.JobDir,
) -> Iterator[ChunkTask]:
    """Stream, parse and hand out the ingest chunks (runs lazily, as joblib dispatches)."""
    from pipeline.ingest import iter_ingest_chunks, write_rejects_header

    b = cfg.boards
    writer = write_rejects_header(rejects_fh)
    next_id = 0
    for parsed in iter_ingest_chunks(
        b.files, alphabet, b.chunk_size, shape=cfg.shape, column=b.column, digests=counters.digests
    ):
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
        if done is not None and job.reusable(parsed.chunk, done):
            have = store.part_rows(done)
            if have != n_valid:
                raise OutputConflictError(
                    f"{done} holds {have} boards but chunk {parsed.chunk} of the input has {n_valid}; "
                    "the input or the code changed since it was written; use --overwrite"
                )
            counters.reused_chunks += 1
            counters.reused_boards += n_valid
            continue
        yield ChunkTask(
            parsed.chunk,
            first,
            metadata,
            groups=parsed.groups,
            sources=parsed.sources,
            words=cfg.boards.words,
        )
    job.strays(committed, counters.chunks)
