"""The worker's side of ``boggle prove``: the problem (lexicon, prover trie, classes) loaded
once per process, and proving one chunk of classes into its certificate table."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline import store
from pipeline.best.prove._bounds import PackedTrie, ProveTrie, build_prove_trie, packed_trie
from pipeline.best.prove._certificate import CERTIFICATE_SCHEMA, columns_table
from pipeline.best.prove._classes import ClassSpace, default_spec
from pipeline.best.prove.tree import PROVERS
from pipeline.boards import Board, format_compact, geometry, parse_shape
from pipeline.errors import ConfigError, InternalError
from pipeline.lexicon import CompiledLexicon, compile_for_boards
from pipeline.parallel import return_freed_memory
from pipeline.rules import Rules, default_rules_for_shape, get_rules


@dataclass(frozen=True, kw_only=True)
class Problem:
    rows: int
    cols: int
    rules: Rules
    lexicon: CompiledLexicon
    packed: PackedTrie  # the prover's trie as the tree bound reads it
    space: ClassSpace  # the classes: per cell its buckets
    spec: str
    # the dense trie, built again on first use (the sum and max bounds, benchmarks): the tree
    # bound does not read it, and a process proving with it keeps 23 MB (3x3) to 37 MB (3x4) less
    _dense: list[ProveTrie] = field(default_factory=list, repr=False, compare=False)

    @property
    def trie(self) -> ProveTrie:
        """The prover's dense trie (:func:`pipeline.best.prove._bounds.build_prove_trie`)."""
        with _DENSE_LOCK:
            if not self._dense:
                self._dense.append(build_prove_trie(self.lexicon, self.rows * self.cols))
            return self._dense[0]


_DENSE_LOCK = threading.Lock()


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
    return_freed_memory()  # before the word list and the trie's temporaries
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
    packed = packed_trie(build_prove_trie(lexicon, rows * cols))  # the dense one freed
    problem = Problem(
        rows=rows, cols=cols, rules=rules, lexicon=lexicon, packed=packed, space=space, spec=spec
    )
    _PROBLEMS[key] = problem
    return problem


def proof_problem(out: Path | str) -> tuple[Problem, dict[str, Any], dict[str, Any]]:
    """The problem (lexicon, rules, classes) of the proof in ``out``, its config and identity,
    from its run record."""
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
        trie = problem.packed if bound == "tree" else problem.trie
        cache[key] = PROVERS[bound](geo, problem.lexicon, trie, threshold, enumerate_max)
    return cache[key]


def prove_chunk(
    args: ProblemArgs,
    threshold: int,
    enumerate_max: int,
    ids: np.ndarray,
    bound: str = "tree",
) -> tuple[pa.Table, float]:
    """Prove the classes ``ids``; (certificate table, CPU seconds of this call)."""
    # this thread's CPU (the nogil kernels run in it): under --backend threading the process's
    # CPU would count every worker thread's work in each chunk
    cpu0 = time.thread_time()
    problem = load_problem(*args)
    space = problem.space
    digits = space.digits(ids)
    prover = _prover(args, threshold, enumerate_max, bound)
    cols: dict[str, list[Any]] = {name: [] for name in CERTIFICATE_SCHEMA.names}
    try:
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
    finally:
        prover.release()  # the chunk's classes reused its arrays; an idle thread gives them back
    table = columns_table(CERTIFICATE_SCHEMA, cols)
    return table, time.thread_time() - cpu0


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
