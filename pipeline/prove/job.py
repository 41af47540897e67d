"""``boggle prove`` as a batch job: canonical classes in chunks, joblib workers, Parquet parts,
resume, and a manifest written last after the coverage check.

Each chunk is a run of consecutive canonical class ids; a worker proves its classes
(:class:`pipeline.prove.search.ClassProver`) and returns one certificate row per class; the main
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
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline import store
from pipeline.backends import in_one_worker, parallel_backend
from pipeline.boards import Board, canonical, format_compact, format_shape, geometry, parse_shape
from pipeline.config import BACKENDS, MAX_CLASSES, MAX_PROVE_CHUNK, check_count, check_jobs
from pipeline.errors import ConfigError, DamagedRunError, InternalError, WorkerLostError
from pipeline.lexicon import CompiledLexicon, compile_for_boards, limits_identity
from pipeline.prove.bounds import ProveTrie, build_prove_trie
from pipeline.prove.classes import ClassSpace, default_spec
from pipeline.prove.search import ENUMERATE_MAX
from pipeline.prove.tree import PROVERS, max_cells
from pipeline.rules import Rules, default_rules_for_shape, get_rules
from pipeline.urls import resolve_out
from pipeline.wordlists import is_named

FORMAT = "boggle-prove"
MAX_CHOSEN = 10_000_000  # prove --class-ids
SCHEMA_VERSION = 2  # 2: parts recorded (size, BLAKE2b) and tagged with the identity; sealed manifest
BOARDS_FILE = "_boards.pq"  # Parquet; not *.parquet so that globs of the certificate miss it
MAX_CELLS = 64
DISPATCH_SEED = 21  # the chunks' shuffle (dispatch_order); not in the identity: parts are alike in any order
#: Each part's Parquet metadata key for the CPU seconds its worker spent on the chunk (parts
#: written before 2026-12-02 lack it); the manifest totals it.
META_CPU = "boggle.cpu_s"
#: Each part's session (when the ``boggle prove`` that wrote it started, UTC, ISO 8601) and the
#: seconds from that start to the part's commit (parts written before 2026-12-02's wall record
#: lack them): a session's wall time is its last part's, and the manifest sums them.
META_SESSION, META_SESSION_S = "boggle.session", "boggle.session_s"

CERTIFICATE_SCHEMA = pa.schema(
    [
        ("class_id", pa.int64()),
        ("letters", pa.list_(pa.string())),
        ("root_bound", pa.int64()),
        ("status", pa.string()),
        ("boards_scored", pa.int64()),
        ("nodes", pa.int64()),
        ("best_board", pa.string()),
        ("best_score", pa.int32()),
        ("found_boards", pa.list_(pa.string())),
        ("found_scores", pa.list_(pa.int32())),
        ("seconds", pa.float64()),
    ]
)

COLUMNS: dict[str, str] = {
    "class_id": "int64: the class (each cell's bucket number, as a mixed-radix number, cell 0 first)",
    "letters": "list<string>: the faces allowed on each cell (its bucket), row-major (Qu shown as q)",
    "root_bound": "int64: the class's upper bound: min(tree, sum) (--bound tree), min(sum, max) (sumax)",
    "status": "string: eliminated (no board had to be scored) or enumerated",
    "boards_scored": "int64: boards of the class scored exactly by the solver",
    "nodes": "int64: sub-classes branched on",
    "best_board": "string: the best board scored (compact, as found), null when none was",
    "best_score": "int32: its score, null when no board was scored",
    "found_boards": "list<string>: boards of the class scoring >= threshold (compact, as found)",
    "found_scores": "list<int32>: their scores",
    "seconds": "float64: wall seconds spent on the class",
}
# _boards.pq: every board >= threshold once, best first
BOARD_COLUMNS: dict[str, str] = {
    "board": "string: a board scoring >= threshold, compact, in canonical form under the shape's symmetries",
    "score": "int32: its score",
}


@dataclass(frozen=True)
class ProveConfig:
    """What to prove: every board of ``shape`` scoring >= ``threshold`` with ``dictionary``."""

    dictionary: str
    shape: str = "3x3"
    threshold: int = 1
    classes: str | None = None
    rules: str | None = None
    min_length: int | None = None
    dice: str | None = None
    chunk_size: int = 64
    limit_classes: int | None = None  # prove only the first N chunks' worth (a sample); no _SUCCESS
    sample_seed: int | None = None  # with limit_classes: a random sample instead of the first N
    # only these canonical class ids of the recipe (re-checks, shards, benchmarks); no _SUCCESS
    class_ids: tuple[int, ...] | None = None
    enumerate_max: int = ENUMERATE_MAX
    # "tree" (orderly-tree bound, the default) or "sumax" (min of the sum and max bounds): the same
    # boards either way, but root_bound, nodes and boards_scored in the certificate differ
    bound: str = "tree"
    # how to run, not what: never part of the identity
    n_jobs: int | None = None
    backend: str = "loky"
    scheduler: str | None = None  # dask: the scheduler's address (none: a local cluster)
    scheduler_file: str | None = None  # dask: a scheduler file instead of an address
    out: str | None = None
    overwrite: bool = False

    def __post_init__(self) -> None:
        rows, cols = parse_shape(self.shape)
        if self.dice is not None:
            raise ConfigError(
                "prove: dice-constrained classes are not supported (a class bound would have to "
                "assign dice to cells); prove free-letter boards without --dice"
            )
        if rows * cols > MAX_CELLS:
            raise ConfigError(f"prove: shape {self.shape} has {rows * cols} cells; at most {MAX_CELLS}")
        if self.threshold < 1:
            raise ConfigError(f"prove: threshold must be >= 1, got {self.threshold}")
        if self.chunk_size < 1 or self.enumerate_max < 1:
            raise ConfigError("prove: chunk size and enumerate-max must be >= 1")
        if self.limit_classes is not None and self.limit_classes < 1:
            raise ConfigError(f"prove: --limit-classes must be >= 1, got {self.limit_classes}")
        check_count("chunk_size", self.chunk_size, 1, MAX_PROVE_CHUNK, "prove")
        check_count("limit_classes", self.limit_classes, 1, MAX_CLASSES, "prove")
        if self.class_ids is not None:
            # a list from a recorded config (JSON) becomes the tuple a frozen config holds
            object.__setattr__(self, "class_ids", tuple(sorted({int(i) for i in self.class_ids})))
            assert self.class_ids is not None
            if not self.class_ids or self.class_ids[0] < 0 or len(self.class_ids) > MAX_CHOSEN:
                raise ConfigError(f"prove: --class-ids takes 1 to {MAX_CHOSEN:,} class ids >= 0")
            if self.limit_classes is not None:
                raise ConfigError("prove: --class-ids and --limit-classes each choose the classes; give one")
        check_jobs(self.n_jobs, "prove")
        if self.bound not in PROVERS:
            raise ConfigError(f"prove: unknown bound {self.bound!r}; choose one of {', '.join(PROVERS)}")
        if self.backend not in BACKENDS:
            raise ConfigError(f"prove: unknown backend {self.backend!r}; choose one of {', '.join(BACKENDS)}")

    def resolve(self) -> ProveConfig:
        rows, cols = parse_shape(self.shape)
        dictionary = self.dictionary
        if not is_named(dictionary):
            dictionary = str(Path(dictionary).expanduser().absolute())
        return dataclasses.replace(
            self,
            shape=format_shape(rows, cols),
            rules=self.rules or default_rules_for_shape(rows, cols),
            dictionary=dictionary,
            out=resolve_out(self.out, "--out", None) if self.out else None,
        )

    def identity(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        for k in ("n_jobs", "backend", "scheduler", "scheduler_file", "out", "overwrite"):
            d.pop(k)
        if d["class_ids"] is None:  # absent, as in every proof made before the option existed
            d.pop("class_ids")
        else:
            d["class_ids"] = list(d["class_ids"])
        return d


@dataclass(frozen=True)
class ProveProgress:
    classes_done: int
    classes_total: int
    boards_found: int  # boards >= threshold so far (not yet de-duplicated by symmetry)
    best_score: int | None
    best_board: str | None
    elapsed: float


ProgressCallback = Callable[[ProveProgress], None]


@dataclass(frozen=True)
class FoundBoard:
    board: str
    score: int


@dataclass
class ProveSummary:
    out: Path | None
    status: str  # new, resume, done (a no-op) or sample
    threshold: int
    classes_total: int
    classes_done: int
    boards: list[FoundBoard] = field(default_factory=list)  # canonical, score descending
    wall_s: float = 0.0
    cpu_s: float = 0.0
    eliminated: int = 0
    boards_scored: int = 0
    # over every session: the workers' CPU on the parts that record it (META_CPU), and how many
    # of the proof's parts do (older parts do not)
    cpu_s_recorded: float = 0.0
    parts_recorded: int = 0
    parts_total: int = 0
    parts_reused: int = 0  # parts an earlier session wrote
    # over every session: the wall time from each session's start to its last part (META_SESSION),
    # summed, and how many of the proof's parts record it
    wall_s_recorded: float = 0.0
    parts_wall: int = 0

    @property
    def best(self) -> FoundBoard | None:
        return self.boards[0] if self.boards else None


# ---------------------------------------------------------------- setup shared by main and workers


@dataclass(frozen=True)
class Problem:
    rows: int
    cols: int
    rules: Rules
    lexicon: CompiledLexicon
    trie: ProveTrie
    space: ClassSpace  # the classes: per cell its buckets
    spec: str


_PROBLEMS: dict[tuple[Any, ...], Problem] = {}


class ShippedLexicon:
    """A compiled lexicon sent along with the tasks to dask workers, which may not see the
    client's word list (or see another file at its path). Equal and hashed by content, so it
    keys the per-process caches like a path does."""

    def __init__(self, lexicon: CompiledLexicon):
        self.lexicon = lexicon
        self.key = f"{lexicon.content_hash}|{lexicon.alphabet.key()}|{lexicon.rules.key()}"

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ShippedLexicon) and other.key == self.key

    def __sizeof__(self) -> int:
        # joblib's dask backend scatters an argument it sizes above 1 kB once per worker
        # instead of sending it with every task: report the real size so that happens
        trie = self.lexicon.trie
        return int(trie.nbytes) + sum(len(w) + 50 for w in trie.words)

    def __str__(self) -> str:
        return str(self.lexicon.provenance().get("name", "shipped word list"))


# what names a problem in a task: (dictionary or shipped lexicon, shape, rules, min_length, spec)
ProblemArgs = tuple["str | ShippedLexicon", str, str, int | None, str | None]


def load_problem(
    dictionary: str | ShippedLexicon, shape: str, rules_name: str, min_length: int | None, spec: str | None
) -> Problem:
    """Compile the lexicon and the prover's trie once per process (a worker reuses them for
    every chunk it gets; the compiled lexicon comes from the disk cache the main process
    filled, or with the tasks: :class:`ShippedLexicon`)."""
    key = (dictionary, shape, rules_name, min_length, spec)
    if key in _PROBLEMS:
        return _PROBLEMS[key]
    rows, cols = parse_shape(shape)
    rules = get_rules(rules_name, min_length=min_length)
    if rules.revisit:
        raise ConfigError(
            "prove: rules with revisits are not supported (the bounds assume each cell once per word)"
        )
    if isinstance(dictionary, ShippedLexicon):
        lexicon = dictionary.lexicon
    else:
        lexicon = compile_for_boards(dictionary, rules)
    spec = spec if spec is not None else default_spec(lexicon.alphabet, lexicon.words, rows * cols)
    space = ClassSpace.from_spec(spec, lexicon.alphabet, rows, cols)
    trie = build_prove_trie(lexicon, rows * cols)
    problem = Problem(rows, cols, rules, lexicon, trie, space, spec)
    _PROBLEMS[key] = problem
    return problem


def proof_problem(out: Path) -> tuple[Problem, dict[str, Any], dict[str, Any]]:
    """The problem (lexicon, rules, classes) of the proof in ``out`` (a local folder), its config
    and identity, from its run record."""
    run = store.read_manifest(out, store.RUN_RECORD)  # sealed: a changed record is refused
    config, identity = run["config"], run["identity"]
    rows, cols = (int(x) for x in config["shape"].split("x"))
    rules = config["rules"] or default_rules_for_shape(rows, cols)
    problem = load_problem(
        config["dictionary"], config["shape"], rules, config["min_length"], identity["classes"]
    )
    return problem, config, identity


def _compact(problem: Problem, faces: np.ndarray) -> str:
    alphabet = problem.lexicon.alphabet.faces
    return format_compact(Board(problem.rows, problem.cols, tuple(alphabet[int(f)] for f in faces)))


# ---------------------------------------------------------------- worker

_PROVERS = threading.local()  # per thread (the threading backend runs chunks concurrently)
_PROVERS_KEPT = 4


def _prover(args: ProblemArgs, threshold: int, enumerate_max: int, bound: str) -> Any:
    """The prover for a problem, built once per worker (building one compacts the trie, ~33 ms)
    and reused by every chunk; a few are kept per thread, the oldest dropped first."""
    cache: dict[tuple[Any, ...], Any] = _PROVERS.__dict__.setdefault("cache", {})
    key = (args, threshold, enumerate_max, bound)
    if key not in cache:
        problem = load_problem(*args)
        while len(cache) >= _PROVERS_KEPT:
            del cache[next(iter(cache))]
        geo = geometry(problem.rows, problem.cols)
        cache[key] = PROVERS[bound](geo, problem.lexicon, problem.trie, threshold, enumerate_max)
    return cache[key]


def prove_chunk(
    args: ProblemArgs,
    threshold: int,
    enumerate_max: int,
    ids: np.ndarray,
    bound: str = "tree",
) -> tuple[pa.Table, float]:
    """Prove the classes ``ids``; (certificate table, CPU seconds of this call)."""
    cpu0 = time.process_time()
    problem = load_problem(*args)
    space = problem.space
    digits = space.digits(ids)
    prover = _prover(args, threshold, enumerate_max, bound)
    cols: dict[str, list[Any]] = {name: [] for name in CERTIFICATE_SCHEMA.names}
    for cid, d in zip(ids, digits, strict=True):
        t0 = time.perf_counter()
        res = prover.prove(space.masks(d))
        confirm_found(problem, res.found)
        cols["class_id"].append(int(cid))
        cols["letters"].append([space.bucket_text(c, int(b)) for c, b in enumerate(d)])
        cols["root_bound"].append(res.root_bound)
        cols["status"].append(res.status)
        cols["boards_scored"].append(res.boards_scored)
        cols["nodes"].append(res.nodes)
        scored = res.boards_scored > 0
        cols["best_board"].append(_compact(problem, res.best_board) if scored else None)
        cols["best_score"].append(res.best_score if scored else None)
        cols["found_boards"].append([_compact(problem, b) for b, _ in res.found])
        cols["found_scores"].append([s for _, s in res.found])
        cols["seconds"].append(time.perf_counter() - t0)
    table = pa.table(cols, schema=CERTIFICATE_SCHEMA)
    return table, time.process_time() - cpu0


def confirm_found(problem: Problem, found: list[tuple[np.ndarray, int]]) -> None:
    """Re-score the boards >= threshold with the project's solver: a certificate's scores come
    from two independent implementations."""
    if not found:
        return
    from pipeline.solve import solve_arrays

    boards = np.stack([b for b, _ in found]).astype(np.int8)
    scores = solve_arrays(boards, problem.rows, problem.cols, problem.lexicon, collect=False).score
    for (b, s), t in zip(found, scores, strict=True):
        if int(t) != s:
            raise InternalError(f"the prover scored {_compact(problem, b)} {s}, the solver {int(t)}")


# ---------------------------------------------------------------- the job


def selected_classes(ids: np.ndarray, cfg: ProveConfig) -> np.ndarray:
    """The classes ``cfg`` proves of the canonical ``ids``: all, its sample (--limit-classes), or
    the chosen ones (--class-ids; each must be one of ``ids``)."""
    if cfg.class_ids is not None:
        chosen = np.array(cfg.class_ids, dtype=ids.dtype)
        unknown = chosen[~np.isin(chosen, ids)]
        if len(unknown):
            raise ConfigError(
                f"prove: class id {int(unknown[0])} is not a canonical class of this recipe "
                f"({len(unknown):,} of the {len(chosen):,} given are not; it has {len(ids):,}, "
                f"the largest id {int(ids[-1])})"
            )
        return chosen
    if cfg.limit_classes is None or cfg.limit_classes >= len(ids):
        return ids
    if cfg.sample_seed is None:
        return ids[: cfg.limit_classes]
    rng = np.random.default_rng(cfg.sample_seed)
    return np.sort(rng.choice(ids, cfg.limit_classes, replace=False))


def run_prove(
    cfg: ProveConfig, progress: ProgressCallback | None = None, note: Callable[[str], None] | None = None
) -> ProveSummary:
    """Prove ``cfg`` and write ``cfg.out`` (parts, _boards.pq, _SUCCESS) through the job
    lifecycle of :class:`pipeline.store.JobDir` (every reused part verified, a damaged finished
    proof refused); without ``out`` the certificate stays in memory and only the summary is
    returned. ``note`` receives one-line notes (parts distrusted and recomputed).

    >>> run_prove(ProveConfig("words.txt", shape="2x2", threshold=3, out="runs/p"))  # doctest: +SKIP
    """
    import joblib

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
    chunks = [ids[i : i + cfg.chunk_size] for i in range(0, len(ids), cfg.chunk_size)]
    identity = {
        **cfg.identity(),
        "classes": problem.spec,
        "lexicon": problem.lexicon.content_hash,
        **limits_identity(),
    }
    out: Any = store.job_path(cfg.out) if cfg.out else None

    part_cpu: dict[int, float] = {}  # chunk -> its worker's CPU seconds, where recorded
    part_wall: dict[int, tuple[str, float]] = {}  # chunk -> (its session, seconds in), where recorded

    def run_chunks(pending: list[int], done_tables: dict[int, pa.Table], job: store.JobDir | None) -> float:
        cpu = 0.0
        found = sum(len(x) for t in done_tables.values() for x in t.column("found_boards").to_pylist())
        best: tuple[int, str] | None = best_of(done_tables.values())
        classes_done = sum(t.num_rows for t in done_tables.values())

        def report() -> None:
            if progress is not None:
                progress(
                    ProveProgress(
                        classes_done,
                        len(ids),
                        found,
                        best[0] if best else None,
                        best[1] if best else None,
                        time.perf_counter() - t_start,
                    )
                )

        report()
        if not pending:
            return cpu
        # workers return their tables and this process writes the parts, so dask workers need
        # no shared disk (they read the word list from its path or compile tanglet:LANG)
        knobs = (cfg.threshold, cfg.enumerate_max)
        calls = [(_indexed, (c, task_args, *knobs, chunks[c], cfg.bound)) for c in dispatch_order(pending)]
        with parallel_backend(cfg.backend, cfg.n_jobs, cfg.scheduler, cfg.scheduler_file):
            if cfg.backend == "loky" and joblib.effective_n_jobs(cfg.n_jobs) == 1:
                # a class can keep the prover in compiled code for minutes: not in this process,
                # which must stay free to take a signal
                results: Generator[Any, None, None] = in_one_worker(calls)
            else:
                results = joblib.Parallel(return_as="generator_unordered")(
                    joblib.delayed(fn)(*a) for fn, a in calls
                )
            # closed on the way out (a failed commit, a signal): its workers stop with it
            with contextlib.closing(results), _worker_lost(cfg.out):
                for c, table, chunk_cpu in results:
                    cpu += chunk_cpu
                    part_cpu[c] = chunk_cpu
                    part_wall[c] = (session, time.perf_counter() - t_start)
                    if job is not None:
                        meta = {
                            META_CPU: repr(chunk_cpu),
                            META_SESSION: session,
                            META_SESSION_S: repr(part_wall[c][1]),
                        }
                        job.commit(c, table.num_rows, table, meta)
                    done_tables[c] = table
                    classes_done += table.num_rows
                    found += sum(len(x) for x in table.column("found_boards").to_pylist())
                    b = best_of([table])
                    if b is not None and (best is None or b[0] > best[0]):
                        best = b
                    report()
        return cpu

    if out is None:
        tables: dict[int, pa.Table] = {}
        cpu = run_chunks(list(range(len(chunks))), tables, None)
        return _summary(
            cfg,
            problem,
            "sample" if len(ids) < len(all_ids) else "new",
            None,
            [tables[c] for c in sorted(tables)],
            len(all_ids),
            t_start,
            cpu,
        )

    with store.JobDir.open(
        out,
        FORMAT,
        SCHEMA_VERSION,
        identity,
        dataclasses.asdict(cfg),
        overwrite=cfg.overwrite,
        note=note,
    ) as job:
        if job.state == "done":
            m = job.manifest
            assert m is not None
            if m.get("classes_total") != len(all_ids) or len(m.get("parts", [])) != len(chunks):
                raise DamagedRunError(
                    f"{out}: a finished proof whose manifest records {m.get('classes_total')} classes "
                    f"in {len(m.get('parts', []))} parts, where its recipe makes {len(all_ids):,} in "
                    f"{len(chunks)}; refused as damaged (--overwrite recomputes it)"
                )
            return ProveSummary(
                out,
                "done",
                cfg.threshold,
                m["classes_total"],
                m["classes_total"],
                [FoundBoard(b, s) for b, s in m["boards"]],
                time.perf_counter() - t_start,
                0.0,
                m["eliminated"],
                m["boards_scored"],
                m.get("cpu_s", 0.0),
                m.get("cpu_s_parts", 0),
                len(m["parts"]),
                len(m["parts"]),
                m.get("wall_s", 0.0),
                m.get("wall_s_parts", 0),
            )
        committed = job.committed()
        job.strays(committed, len(chunks))
        done: dict[int, pa.Table] = {}
        for c, path in sorted(committed.items()):
            if job.reusable(c):
                table = job.read_part(c)
                if np.array_equal(table.column("class_id").to_numpy(), chunks[c]):
                    done[c] = table
                    meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
                    if META_CPU in meta:
                        part_cpu[c] = float(meta[META_CPU])
                    if META_SESSION in meta and META_SESSION_S in meta:
                        part_wall[c] = (meta[META_SESSION], float(meta[META_SESSION_S]))
                    continue
                if note is not None:
                    note(f"{path}: not the classes of chunk {c}; recomputing it")
                job.discard(c)
        job.chunks_reused = len(done)
        cpu = run_chunks([c for c in range(len(chunks)) if c not in done], done, job)
        tables_in_order = [done[c] for c in sorted(done)]
        summary = _summary(cfg, problem, job.state, out, tables_in_order, len(all_ids), t_start, cpu)
        summary.cpu_s_recorded = sum(part_cpu.values())
        summary.parts_recorded, summary.parts_total = len(part_cpu), len(chunks)
        summary.parts_reused = job.chunks_reused
        summary.wall_s_recorded, summary.parts_wall = sessions_wall(part_wall.values()), len(part_wall)
        if len(ids) < len(all_ids):
            summary.status = "sample"
            return summary  # a sample certifies nothing: no _SUCCESS
        check_coverage(tables_in_order, all_ids)
        _write_boards(job, summary.boards)
        fields = {
            "lexicon": problem.lexicon.provenance(),
            "rules": problem.rules.to_dict(),
            "classes": problem.spec,
            "classes_total": len(all_ids),
            "coverage": "every canonical class of the shape has one certificate row",
            "eliminated": summary.eliminated,
            "boards_scored": summary.boards_scored,
            "boards": [[b.board, b.score] for b in summary.boards],
            "boards_file": BOARDS_FILE,
            "columns": COLUMNS,
            "wall_s_last_session": round(summary.wall_s, 3),
            # over the sessions: the workers' CPU on the parts that record it (see META_CPU)
            "cpu_s": round(summary.cpu_s_recorded, 3),
            "cpu_s_parts": summary.parts_recorded,
            # over the sessions: each one's start to its last part, summed (see META_SESSION)
            "wall_s": round(summary.wall_s_recorded, 3),
            "wall_s_parts": summary.parts_wall,
            "cpus": os.cpu_count(),
        }
        job.finish(len(chunks), fields, side_files=(BOARDS_FILE,))
        return summary


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
) -> tuple[int, pa.Table, float]:
    from pipeline import lifeline

    lifeline.arm()  # a kill -9 of the main process leaves no worker proving on
    table, cpu = prove_chunk(args, threshold, enumerate_max, ids, bound)
    return c, table, cpu


def proof_tag(identity: dict[str, Any]) -> str:
    """What every part of the proof with ``identity`` embeds as its ``boggle.config``."""
    return store.part_tag(FORMAT, identity)


def dispatch_order(pending: list[int]) -> list[int]:
    """The order the pending chunks are proved in: a fixed shuffle. Chunks are ranges of class
    ids, and cost follows the id (the ENABLE2K 3x4 proof's first half of parts holds 39% of its
    branch nodes, and its last eighth 2.7x the first eighth's), so in id order the progress
    bar's time left came out far short and the heaviest chunks ran last.
    Shuffled, every stretch of the proof is a fair sample of what is left; the parts, and so
    the certificate, do not depend on the order."""
    rng = np.random.default_rng(DISPATCH_SEED)
    return [pending[i] for i in rng.permutation(len(pending))]


def sessions_wall(parts: Any) -> float:
    """The wall time of the sessions that wrote ``parts`` ((session, seconds from its start to
    the part's commit) pairs): each session's last part, summed."""
    last: dict[str, float] = {}
    for session, seconds in parts:
        last[session] = max(last.get(session, 0.0), seconds)
    return sum(last.values())


def best_of(tables: Any) -> tuple[int, str] | None:
    """(score, board) of the best board the certificate ``tables`` scored, None if none was."""
    best: tuple[int, str] | None = None
    for t in tables:
        for b, s in zip(t.column("best_board").to_pylist(), t.column("best_score").to_pylist(), strict=True):
            if s is not None and (best is None or s > best[0]):
                best = (s, b)
    return best


def check_coverage(tables: list[pa.Table], canonical_ids: np.ndarray) -> None:
    """The certificate rows name every canonical class exactly once (else a BoggleError)."""
    got = (
        np.concatenate([t.column("class_id").to_numpy() for t in tables]) if tables else np.empty(0, np.int64)
    )
    if len(got) != len(canonical_ids) or not np.array_equal(np.sort(got), canonical_ids):
        missing = np.setdiff1d(canonical_ids, got)
        raise InternalError(
            f"coverage check failed: {len(got)} certificate rows for {len(canonical_ids)} canonical "
            f"classes ({len(missing)} missing, e.g. {missing[:3].tolist()})"
        )


def _summary(
    cfg: ProveConfig,
    problem: Problem,
    status: str,
    out: Path | None,
    tables: list[pa.Table],
    n_classes: int,
    t_start: float,
    cpu: float,
) -> ProveSummary:
    eliminated, scored, boards = certificate_totals(tables, problem.rows, problem.cols)
    done = sum(t.num_rows for t in tables)
    wall = time.perf_counter() - t_start
    return ProveSummary(out, status, cfg.threshold, n_classes, done, boards, wall, cpu, eliminated, scored)


def certificate_totals(tables: list[pa.Table], rows: int, cols: int) -> tuple[int, int, list[FoundBoard]]:
    """Of the certificate ``tables``: classes eliminated, boards scored, and the boards >= the
    threshold in canonical form, best first."""
    best: dict[str, int] = {}
    eliminated = 0
    scored = 0
    for t in tables:
        eliminated += sum(1 for s in t.column("status").to_pylist() if s == "eliminated")
        scored += int(pc.sum(t.column("boards_scored")).as_py() or 0)
        for bs, ss in zip(
            t.column("found_boards").to_pylist(), t.column("found_scores").to_pylist(), strict=True
        ):
            for b, s in zip(bs, ss, strict=True):
                best[canonical_compact(b, rows, cols)] = s
    boards = sorted((FoundBoard(b, s) for b, s in best.items()), key=lambda x: (-x.score, x.board))
    return eliminated, scored, boards


def canonical_compact(board: str, rows: int, cols: int) -> str:
    from pipeline.boards import parse_compact

    return format_compact(canonical(parse_compact(board, (rows, cols))))


def _write_boards(job: store.JobDir, boards: list[FoundBoard]) -> None:
    table = pa.table(
        {"board": [b.board for b in boards], "score": pa.array([b.score for b in boards], pa.int32())}
    )
    with job.side_file(BOARDS_FILE) as tmp:
        pq.write_table(table, tmp, compression="zstd")
