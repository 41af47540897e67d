"""Which chunks a run still has to do: the run's counters, reusing verified parts of a started
run, and the generate and ingest task streams."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline import store
from pipeline.config import RunConfig
from pipeline.errors import (
    ConfigError,
    OutputConflictError,
)
from pipeline.runner.workers import ChunkTask, NoteCallback
from pipeline.trie import Alphabet


@dataclass
class Counters:
    reused_boards: int = 0
    reused_chunks: int = 0
    chunks: int = 0
    input_rows: int = 0
    rejected: int = 0
    valid: int = 0


@dataclass
class Reuse:
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
            check_no_stray_parts(committed, n_chunks)
            return
        for k in sorted(k for k in committed if k >= n_chunks):
            self._say(f"{committed[k]}: beyond this run's {n_chunks} chunks; removed (--overwrite)")
            store.discard_part(self.run_dir, k)

    def _say(self, message: str) -> None:
        if self.note is not None:
            self.note(message)


def damaged_finished_run(run_dir: Path, config: str, overwrite: bool, note: NoteCallback | None) -> bool:
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


def generate_tasks(
    cfg: RunConfig,
    metadata: dict[str, str],
    committed: dict[int, Path],
    counters: Counters,
    reusable: Reuse,
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
    return (
        ChunkTask(ch.chunk, ch.start, metadata, b.dice, b.seed, ch.count, rows, cols, words=b.words)
        for ch in todo
    )


def check_no_stray_parts(committed: Mapping[int, Path], n_chunks: int) -> None:
    stray = sorted(k for k in committed if k >= n_chunks)
    if stray:
        raise OutputConflictError(
            f"{committed[stray[0]].parent} holds part files beyond this run's {n_chunks} chunks "
            f"({committed[stray[0]].name}...); use --overwrite"
        )


def ingest_tasks(
    cfg: RunConfig,
    alphabet: Alphabet,
    metadata: dict[str, str],
    committed: dict[int, Path],
    counters: Counters,
    rejects_fh: Any,
    reusable: Reuse,
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
        yield ChunkTask(
            parsed.chunk,
            first,
            metadata,
            groups=parsed.groups,
            sources=parsed.sources,
            words=cfg.boards.words,
        )
    reusable.strays(committed, counters.chunks)
