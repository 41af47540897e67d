"""What a run will do: :func:`plan_run` resolves a config into a :class:`RunPlan` (inputs
checked, lexicon compiled, identity named) before anything is written; then the run's counters
and the generate and ingest task streams say which chunks it still has to do (a committed part
is reused only when :meth:`pipeline.store.JobDir.reusable` verifies it)."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pipeline import store
from pipeline.config import RunConfig
from pipeline.errors import (
    BoggleError,
    ConfigError,
    LexiconError,
    OutputConflictError,
)
from pipeline.lexicon import (
    CompiledLexicon,
    compile_lexicon,
    default_dictionary,
    lexicon_alphabet,
    limits_identity,
)
from pipeline.lexicon.trie import Alphabet
from pipeline.rules import Rules
from pipeline.runner._workers import ChunkTask, Progress


@dataclass(frozen=True, kw_only=True)
class RunPlan:
    """A run decided before its output folder is opened (make one with :func:`plan_run`)."""

    cfg: RunConfig  # resolved
    rules: Rules
    lexicon: CompiledLexicon
    inputs: list[dict[str, Any]]  # ingest: each input's fingerprint (file, size, sha256); else []
    identity: dict[str, Any]  # what the output folder must hold to be resumed
    metadata: dict[str, str]  # the Parquet key-value metadata of every part
    run_dir: store.PartRef
    workers_write: bool | None  # None: decided once the folder is open (dask: do workers see it?)
    # the dice.DiceSet boards are rolled with (None: letter generators, ingest); a dice file is
    # read once, here: workers get its faces, never the file
    dice: Any = None

    @functools.cached_property
    def run_id(self) -> str:
        """The ``run_id`` column's value (a hash of the identity), worked out once."""
        return store.run_id_of(self.identity)

    @property
    def ingest(self) -> bool:
        return self.cfg.boards.source == "ingest"

    @property
    def boards_total(self) -> int | None:
        """None for ingest: the input is not counted in advance."""
        return None if self.ingest else self.cfg.boards.count

    @property
    def chunks_total(self) -> int | None:
        b = self.cfg.boards
        return None if self.ingest else -(-b.count // b.chunk_size)


def plan_run(config: RunConfig, *, workers_write: bool | None = None) -> RunPlan:
    """Resolve ``config``, check and fingerprint its inputs, compile its lexicon and name the
    run's identity: every config, input and lexicon error is raised before a file is written.
    ``workers_write`` as for :func:`pipeline.runner.execute`."""
    cfg = config.resolve()
    rules = cfg.rule_set()
    remote = store.is_url(cfg.run.out)
    if remote:
        # a dask worker may not share the client's disk, but it reaches the object store;
        # memory:// is the one store a worker process cannot see (it is this process's)
        workers_write = not cfg.run.out.startswith("memory://")
    inputs = _fingerprint_inputs(cfg)
    dice = _dice_set(cfg)
    lexicon = _compile(cfg, rules, dice)
    identity = {
        "schema_version": store.SCHEMA_VERSION,
        "data": cfg.data_dict(),
        "lexicon_sha256": lexicon.content_hash,
        "alphabet": list(lexicon.alphabet.faces),
        "inputs": [{"file": i["file"], "sha256": i["sha256"]} for i in inputs],
        **limits_identity(),
    }
    if dice is not None and dice.file is not None:
        # the file's faces decide the data: an edited file is another run (a built-in set's
        # faces are pinned, and runs made before this keep their identity)
        identity["dice"] = {"faces": dice.record()["faces"], "sha256": dice.sha256}
    run_dir = store.job_path(cfg.run.out)
    metadata = store.parquet_metadata(cfg.data_dict(), lexicon.provenance(), rules.to_dict())
    metadata[store.META_CONFIG] = store.part_tag(store.FORMAT, identity)  # what readers check parts against
    return RunPlan(
        cfg=cfg,
        rules=rules,
        lexicon=lexicon,
        inputs=inputs,
        identity=identity,
        metadata=metadata,
        run_dir=run_dir,
        workers_write=workers_write,
        dice=dice,
    )


def _dice_set(cfg: RunConfig) -> Any:
    """The dice set a generated run rolls (None for the letter generators and ingest)."""
    from pipeline.boards import GENERATORS, load_dice_set

    b = cfg.boards
    if b.source != "generate" or b.dice in GENERATORS:
        return None
    return load_dice_set(b.dice, *(cfg.shape or (4, 4)))


def _fingerprint_inputs(cfg: RunConfig) -> list[dict[str, Any]]:
    """Ingest: check that every input is readable with its board column, then fingerprint it."""
    if cfg.boards.source != "ingest":
        return []
    from pipeline.boards.ingest import check_input, fingerprint

    for f in cfg.boards.files:
        check_input(f, cfg.boards.column)
    return [fingerprint(f) for f in cfg.boards.files]


def _compile(cfg: RunConfig, rules: Rules, dice: Any = None) -> CompiledLexicon:
    from pipeline.boards import check_face, generator_alphabet

    b = cfg.boards
    spec = cfg.lexicon.path or default_dictionary()
    try:
        if b.source == "generate":
            shape = cfg.shape or (4, 4)
            alphabet = generator_alphabet(dice if dice is not None else b.dice, *shape)
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
class Counters:
    reused_boards: int = 0
    reused_chunks: int = 0
    chunks: int = 0
    input_rows: int = 0
    rejected: int = 0
    valid: int = 0
    digests: dict[str, Any] = field(default_factory=dict)  # ingest: what was read of each input
    solved_boards: int = 0  # by this invocation
    solved_chunks: int = 0
    solve_started: float | None = None  # perf_counter when solving began (the first report)
    solve_s: float = 0.0  # seconds from then to the latest chunk committed: the rate's basis

    def start_solving(self) -> None:
        import time

        self.solve_started = time.perf_counter()

    def committed(self) -> None:
        """A chunk was committed now: the solving stage has lasted until now."""
        import time

        if self.solve_started is not None:
            self.solve_s = time.perf_counter() - self.solve_started

    def progress(self, plan: RunPlan) -> Progress:
        return Progress(
            boards_done=self.reused_boards + self.solved_boards,
            boards_total=plan.boards_total,
            chunks_done=self.solved_chunks + self.reused_chunks,
            chunks_total=plan.chunks_total,
            boards_reused=self.reused_boards,
            rejected=self.rejected,
            chunks_reused=self.reused_chunks,
            run_id=plan.run_id,
            solve_s=self.solve_s,
        )


def chunk_tasks(plan: RunPlan, counters: Counters, rejects_fh: Any, job: store.JobDir) -> Iterator[ChunkTask]:
    """The tasks of the chunks still to do (generate or ingest: :meth:`JobDir.pending` says
    which); ``rejects_fh`` gets the rejects file's header (and, for ingest, each rejected row
    as the input is read)."""
    if plan.ingest:
        return ingest_tasks(plan.cfg, plan.lexicon.alphabet, plan.metadata, counters, rejects_fh, job)
    from pipeline.boards.ingest import write_rejects_header

    write_rejects_header(rejects_fh)
    dice_file = plan.dice if plan.dice is not None and plan.dice.file is not None else None
    return generate_tasks(plan.cfg, plan.metadata, counters, job, dice_file)


def generate_tasks(
    cfg: RunConfig,
    metadata: dict[str, str],
    counters: Counters,
    job: store.JobDir,
    dice: Any = None,
) -> Iterator[ChunkTask]:
    """``dice``: the DiceSet of a dice file, handed to the workers with each task."""
    from pipeline.boards import chunk_plan

    b = cfg.boards
    run_id = store.run_id_of(job.identity)
    rows, cols = cfg.shape or (4, 4)
    plan = chunk_plan(b.count, b.chunk_size)
    counters.chunks = len(plan)
    counters.input_rows = counters.valid = b.count
    if len(plan) > store.MAX_PART:
        raise ConfigError(
            f"{len(plan)} chunks is more than {store.MAX_PART}; raise [boards] chunk_size", source=cfg.origin
        )

    def reuse(ch: Any, chunk: int) -> None:
        counters.reused_chunks += 1
        counters.reused_boards += ch.count

    # the task generator is consumed lazily by joblib; the counters are final before it starts
    todo = list(job.pending(plan, number=lambda ch: ch.chunk, reuse=reuse))
    return (
        ChunkTask(
            ch.chunk,
            ch.start,
            metadata,
            b.dice,
            b.seed,
            ch.count,
            rows,
            cols,
            words=b.words,
            labels={"run_id": run_id, "seed": str(b.seed), "dice": b.dice, "run_date": b.seed_date},
            dice=dice,
            placement=b.placement,
        )
        for ch in todo
    )


def ingest_tasks(
    cfg: RunConfig,
    alphabet: Alphabet,
    metadata: dict[str, str],
    counters: Counters,
    rejects_fh: Any,
    job: store.JobDir,
) -> Iterator[ChunkTask]:
    """Stream, parse and hand out the ingest chunks (runs lazily, as joblib dispatches)."""
    from pipeline.boards.ingest import iter_ingest_chunks, write_rejects_header

    b = cfg.boards
    run_id = store.run_id_of(job.identity)
    writer = write_rejects_header(rejects_fh)

    def parsed_chunks() -> Iterator[tuple[Any, int]]:
        """Each parsed chunk with its first board id; rejects written, counters kept."""
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
            counters.valid += parsed.n_valid
            yield parsed, next_id
            next_id += parsed.n_valid

    def reuse(item: tuple[Any, int], chunk: int) -> None:
        n_valid, have = item[0].n_valid, job.recorded_rows(chunk)
        if have != n_valid:
            raise OutputConflictError(
                f"{job.loc.ref(store.part_name(chunk))} holds {have} boards but chunk {chunk} of the input "
                f"has {n_valid}; the input or the code changed since it was written; use --overwrite"
            )
        counters.reused_chunks += 1
        counters.reused_boards += n_valid

    for parsed, first in job.pending(parsed_chunks(), number=lambda item: item[0].chunk, reuse=reuse):
        yield ChunkTask(
            parsed.chunk,
            first,
            metadata,
            groups=parsed.groups,
            sources=parsed.sources,
            words=cfg.boards.words,
            labels={"run_id": run_id, "seed": None, "dice": None, "run_date": None},
        )
