"""Best-board search: parallel hill climbing and simulated annealing for high-scoring boards.

A search state is a die per cell and the face it shows (:mod:`pipeline.solve.score_kernel`):
free letters are n identical dice with every face of the alphabet, a dice set is itself, so
every dice-constrained board is rollable by construction. Two moves: re-roll one die (another
face of the die on that cell) and swap two dice.

Strategies (per restart, each with its own random stream):

* ``hill``: a pool of the ``pool_size`` best distinct boards (canonical under the board's
  symmetries). Each iteration expands the pool boards not yet expanded: every neighbour is
  scored in machine code (a cell's re-rolls by one wildcard walk), and the best neighbours join
  the pool if they beat its worst board. When no pool board is left to expand the climb has
  converged; with an iteration or time budget, a fresh random pool starts the next climb.
* ``anneal`` (the default): simulated annealing from a random board, the whole loop in machine
  code, with a geometric temperature schedule from ``t_start`` to ``t_end`` over ``cycle``
  moves; with a budget, another cycle starts from a fresh random board. The defaults (100 -> 20
  over 80,000 moves) are measured, not guessed: on 4x4 with ENABLE2K the optimum is found while
  the temperature is about 50-70, and longer, colder cycles (400,000 moves down to 2) only
  polish local optima (9/10 restarts within 120 s against 10/10 at a tenth of the moves).

Restarts run in parallel with joblib; restart ``i`` draws everything from
``numpy.random.SeedSequence(seed).spawn(restarts)[i]``, so the result of an iteration-bounded
run does not depend on the number of workers or the backend (a time limit only cuts a
trajectory short). Objectives: ``points`` (the rule set's scores), ``words`` (distinct words)
and ``subset`` (points of the words of a second word list only).

Output (``run_optimize``): ``OUT/part-00000.parquet`` with the best distinct boards (columns in
:data:`COLUMNS`) and ``OUT/_SUCCESS``, a JSON manifest with the resolved config, lexicon
provenance, rules, package versions, per-restart figures and counts. Progress goes through a
callback; this module never prints.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.boards import (
    Board,
    canonical,
    format_compact,
    format_shape,
    geometry,
    parse_shape,
    symmetry_maps,
)
from pipeline.errors import ConfigError
from pipeline.lexicon import CompiledLexicon

STRATEGIES = ("hill", "anneal")
OBJECTIVES = ("points", "words", "subset")
BACKENDS = ("loky", "threading")
FORMAT = "boggle-optimize"
SCHEMA_VERSION = 1
MAX_CELLS = 64
ANNEAL_CHUNK = 8192  # moves per kernel call: the grain of progress and time-limit checks
HEARTBEAT_S = 0.5

COLUMNS: dict[str, str] = {
    "board": "string: the board in compact notation, canonical under the symmetries of its shape",
    "rows": "int16: board rows",
    "cols": "int16: board columns",
    "score": "int32: the objective's value (points, words, or points over the subset)",
    "points": "int32: points under the rule set, all lexicon words counted",
    "n_words": "int32: distinct lexicon words on the board",
    "words": "list<string>: the lexicon words on the board, sorted",
    "restart": "int32: the first restart (by number) that found the board",
    "iteration": "int64: the iteration of that restart at which it was found (hill: pool "
    "generation; anneal: moves made, counted in blocks of 8,192)",
    "iterations": "int64: iterations that restart ran in all",
    "strategy": "string: hill or anneal",
    "objective": "string: points, words or subset",
    "seed": "int64: the run's seed (restart i uses SeedSequence(seed).spawn(restarts)[i])",
}


# ---------------------------------------------------------------- configuration


@dataclass(frozen=True)
class OptimizeConfig:
    """What to search for and how. ``iterations`` counts pool generations (hill) or moves
    (anneal) per restart; with neither ``iterations`` nor ``time_limit`` a restart is one climb
    (hill) or one cooling cycle (anneal). ``target`` stops a restart once reached."""

    dictionary: str
    shape: str = "4x4"
    dice: str | None = None
    rules: str | None = None
    min_length: int | None = None
    strategy: str = "anneal"
    objective: str = "points"
    subset: str | None = None
    restarts: int = 4
    seed: int = 0
    iterations: int | None = None
    time_limit: float | None = None
    target: int | None = None
    pool_size: int = 50
    keep: int = 10
    t_start: float = 100.0
    t_end: float = 20.0
    cycle: int = 80_000
    swap_p: float = 0.5
    # how to run, not what: never part of the run's identity
    n_jobs: int | None = None
    backend: str = "loky"
    out: str | None = None
    overwrite: bool = False

    def __post_init__(self) -> None:
        def bad(msg: str) -> ConfigError:
            return ConfigError(f"optimize: {msg}")

        if self.strategy not in STRATEGIES:
            raise bad(f"unknown strategy {self.strategy!r}; choose one of {', '.join(STRATEGIES)}")
        if self.objective not in OBJECTIVES:
            raise bad(f"unknown objective {self.objective!r}; choose one of {', '.join(OBJECTIVES)}")
        if (self.objective == "subset") != (self.subset is not None):
            raise bad("--objective subset needs --subset FILE, and --subset needs --objective subset")
        if self.backend not in BACKENDS:
            raise bad(f"unknown backend {self.backend!r}; choose one of {', '.join(BACKENDS)}")
        for name in ("restarts", "pool_size", "keep", "cycle"):
            if getattr(self, name) < 1:
                raise bad(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.iterations is not None and self.iterations < 1:
            raise bad(f"iterations must be >= 1, got {self.iterations}")
        if self.time_limit is not None and not self.time_limit > 0:
            raise bad(f"time limit must be > 0 seconds, got {self.time_limit}")
        if self.seed < 0:
            raise bad(f"seed must be >= 0, got {self.seed}")
        if not (0 < self.t_end <= self.t_start) or not math.isfinite(self.t_start):
            raise bad(f"temperatures need 0 < t_end <= t_start, got {self.t_start} -> {self.t_end}")
        if not 0 <= self.swap_p <= 1:
            raise bad(f"swap probability must be in [0, 1], got {self.swap_p}")
        parse_shape(self.shape)

    @property
    def rows_cols(self) -> tuple[int, int]:
        return parse_shape(self.shape)

    def resolve(self) -> OptimizeConfig:
        """Fill in the rule preset from the shape and make paths absolute."""
        from pipeline.rules import default_rules_for_shape

        rows, cols = self.rows_cols
        out = str(Path(self.out).expanduser().absolute()) if self.out else None
        dictionary = self.dictionary
        if not dictionary.startswith("tanglet:"):
            dictionary = str(Path(dictionary).expanduser())
        return dataclasses.replace(
            self,
            shape=format_shape(rows, cols),
            rules=self.rules or default_rules_for_shape(rows, cols),
            dictionary=dictionary,
            out=out,
        )

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def identity(self) -> dict[str, Any]:
        """The settings that decide the result (not n_jobs, backend, out, overwrite)."""
        d = self.to_dict()
        for k in ("n_jobs", "backend", "out", "overwrite"):
            d.pop(k)
        return d


# ---------------------------------------------------------------- the search space


@dataclass(frozen=True)
class SearchSpace:
    """The dice of the search: ``table[d, j]`` is face j of die d (int8 alphabet index, -1
    blank), ``n_opts[d]`` how many faces die d has. Free letters: one identical die per cell."""

    rows: int
    cols: int
    table: np.ndarray  # int8 [n_dice, max_faces]
    n_opts: np.ndarray  # int64 [n_dice]
    free: bool
    n_faces: int  # size of the alphabet
    dice_name: str | None = None

    @property
    def n_cells(self) -> int:
        return self.rows * self.cols

    def faces(self, die: np.ndarray, fidx: np.ndarray) -> np.ndarray:
        return self.table[die, fidx]

    def random_state(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """A uniformly random board: dice shuffled over the cells, one face each."""
        n = self.n_cells
        die = np.arange(n, dtype=np.int64) if self.free else rng.permutation(n).astype(np.int64)
        fidx = (rng.random(n) * self.n_opts[die]).astype(np.int64)
        return die, fidx


def free_space(rows: int, cols: int, n_faces: int) -> SearchSpace:
    n = rows * cols
    table = np.tile(np.arange(n_faces, dtype=np.int8), (n, 1))
    return SearchSpace(rows, cols, table, np.full(n, n_faces, np.int64), True, n_faces)


def dice_space(rows: int, cols: int, dice: Any, alphabet: Any) -> SearchSpace:
    """The search space of a :class:`pipeline.dice.DiceSet` (its dice must fill the board)."""
    if len(dice.dice) != rows * cols:
        raise ConfigError(
            f"dice set {dice.name!r} has {len(dice.dice)} dice, a {rows}x{cols} board has {rows * cols} cells"
        )
    width = max(len(d) for d in dice.dice)
    table = np.full((len(dice.dice), width), -1, np.int8)
    n_opts = np.zeros(len(dice.dice), np.int64)
    for d, die in enumerate(dice.dice):
        codes = alphabet.encode(die, where=f"dice set {dice.name}")
        table[d, : len(codes)] = codes
        n_opts[d] = len(codes)
    return SearchSpace(rows, cols, table, n_opts, False, len(alphabet), dice.name)


def apply_move(die: np.ndarray, fidx: np.ndarray, kind: int, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    """A new state: re-roll (kind 0) puts face index ``b`` of its die on cell ``a``; swap
    (kind 1) exchanges the dice of cells ``a`` and ``b`` with the faces they show."""
    die, fidx = die.copy(), fidx.copy()
    if kind == 0:
        fidx[a] = b
    else:
        die[a], die[b] = die[b], die[a]
        fidx[a], fidx[b] = fidx[b], fidx[a]
    return die, fidx


def shape_symmetries(rows: int, cols: int) -> np.ndarray:
    """The cell permutations that map the board onto itself (8 for squares, 4 otherwise)."""
    perms = [p for r, c, p in symmetry_maps(rows, cols) if (r, c) == (rows, cols)]
    return np.array(perms, dtype=np.int64)


def canonical_key(faces: np.ndarray, perms: np.ndarray) -> tuple[bytes, int]:
    """The smallest of the board's symmetric images as bytes (face index + 1, so a blank sorts
    first, as :func:`pipeline.boards.canonical` orders faces) and the permutation giving it."""
    images = (faces[perms] + 1).astype(np.uint8)
    keys = [row.tobytes() for row in images]
    best = min(range(len(keys)), key=keys.__getitem__)
    return keys[best], best


def key_faces(key: bytes) -> np.ndarray:
    return np.frombuffer(key, dtype=np.uint8).astype(np.int8) - 1


# ---------------------------------------------------------------- objectives


@dataclass(frozen=True)
class Objective:
    """A lexicon whose ``word_points`` are the objective's weights (so ``solve_arrays`` scores
    the objective), plus what the manifest records about it."""

    name: str
    lexicon: CompiledLexicon
    info: dict[str, Any]


def make_objective(
    lexicon: CompiledLexicon, name: str, subset_words: Sequence[str] | None = None
) -> Objective:
    """``points``: the lexicon as it is. ``words``: every word weighs 1. ``subset``: only the
    words of ``subset_words`` score (their usual points); the trie is pruned to them, which also
    makes the search faster. Word ids are unchanged, so results stay comparable."""
    if name == "points":
        return Objective(name, lexicon, {"name": name})
    if name == "words":
        ones = np.ones(lexicon.n_words, dtype=np.int32)
        return Objective(name, dataclasses.replace(lexicon, word_points=ones), {"name": name})
    if name != "subset":
        raise ConfigError(f"unknown objective {name!r}; choose one of {', '.join(OBJECTIVES)}")
    wanted = set(subset_words or ())
    in_lexicon = np.array([w in wanted for w in lexicon.words], dtype=bool)
    n_in = int(in_lexicon.sum())
    if n_in == 0:
        raise ConfigError("the subset word list shares no word with the lexicon (after its rules)")
    points = np.where(in_lexicon, lexicon.word_points, 0).astype(np.int32)
    trie = lexicon.trie.prune(keep_word=wanted.__contains__)
    info = {"name": name, "subset_words": len(wanted), "subset_in_lexicon": n_in}
    return Objective(name, dataclasses.replace(lexicon, trie=trie, word_points=points), info)


# ---------------------------------------------------------------- the kernel wrapper


@dataclass(frozen=True)
class Tables:
    """What a worker needs to score boards: trie arrays and weights (no word strings)."""

    rows: int
    cols: int
    mask: np.ndarray
    first_child: np.ndarray
    word_id: np.ndarray
    weights: np.ndarray  # int64 [n_words]
    max_depth: int

    @classmethod
    def of(cls, objective: Objective, rows: int, cols: int) -> Tables:
        lex = objective.lexicon
        if rows * cols > MAX_CELLS:
            raise ConfigError(f"optimize supports boards of at most {MAX_CELLS} cells, not {rows}x{cols}")
        if lex.rules.revisit:
            raise ConfigError("optimize supports the standard rule only (no --revisit)")
        t = lex.trie
        return cls(
            rows,
            cols,
            t.mask,
            t.first_child,
            t.word_id,
            lex.word_points.astype(np.int64),
            max(t.max_depth, 1),
        )


class Scorer:
    """Scores boards of one shape with the search kernels, reusing one set of work arrays."""

    def __init__(self, tables: Tables):
        from pipeline.solve.score_kernel import Scratch

        self.t = tables
        geo = geometry(tables.rows, tables.cols)
        self.nbr_mask = geo.nbr_mask
        self.s = Scratch(len(tables.weights), tables.rows * tables.cols, tables.max_depth)
        self.evaluations = 0

    def _trie(self) -> tuple[Any, ...]:
        t = self.t
        return (self.nbr_mask, t.mask, t.first_child, t.word_id, t.weights)

    def score(self, faces: np.ndarray) -> int:
        self.evaluations += 1
        return int(
            _kernels().score_one(np.ascontiguousarray(faces, np.int8), *self._trie(), *self.s.arrays())
        )

    def score_many(self, boards: np.ndarray) -> np.ndarray:
        self.evaluations += len(boards)
        out: np.ndarray = _kernels().score_batch(
            np.ascontiguousarray(boards, np.int8), *self._trie(), *self.s.arrays()
        )
        return out

    def cell_scores(self, faces: np.ndarray, cell: int, n_faces: int) -> np.ndarray:
        """Scores of the board with ``cell`` showing each face 0..n_faces-1."""
        self.evaluations += n_faces
        out: np.ndarray = _kernels().cell_scores(
            np.ascontiguousarray(faces, np.int8), cell, n_faces, *self._trie(), *self.s.arrays(),
            *self.s.wild_arrays(),
        )  # fmt: skip
        return out

    def neighbourhood(
        self, space: SearchSpace, die: np.ndarray, fidx: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every move from (die, fidx) and the score it leads to: (kind, a, b, score); see
        :func:`apply_move`."""
        kind, a, b, score = _kernels().neighbourhood(
            die, fidx, space.table, space.n_opts, space.free, space.n_faces, *self._trie(),
            *self.s.arrays(), *self.s.wild_arrays(),
        )  # fmt: skip
        self.evaluations += len(score)
        return kind, a, b, score

    def anneal(
        self, space: SearchSpace, state: list[Any], step0: int, n_steps: int, cfg: OptimizeConfig, seed: int
    ) -> int:
        """Run ``n_steps`` moves; ``state`` = [die, fidx, cur, best_die, best_fidx, best] is
        updated in place. Returns the moves accepted."""
        die, fidx, cur, bdie, bfidx, best = state
        cur, best, accepted = _kernels().anneal(
            die, fidx, cur, bdie, bfidx, best, space.table, space.n_opts, step0, n_steps, cfg.cycle,
            cfg.t_start, cfg.t_end, cfg.swap_p, seed, *self._trie(), *self.s.arrays(),
        )  # fmt: skip
        state[2] = int(cur)
        state[5] = int(best)
        self.evaluations += n_steps
        return int(accepted)


def _kernels() -> Any:
    """The numba kernels, imported on first use (compiling them is not free)."""
    from pipeline.solve import score_kernel

    return score_kernel


# ---------------------------------------------------------------- one restart


@dataclass
class Found:
    """A board a restart found: canonical key, score, its dice, and when."""

    key: bytes
    score: int
    die: np.ndarray
    fidx: np.ndarray
    iteration: int


@dataclass
class RestartResult:
    restart: int
    best_score: int
    iterations: int
    evaluations: int
    climbs: int  # climbs (hill) or cooling cycles (anneal) started
    seconds: float
    target_s: float | None  # seconds until the target was reached
    target_iteration: int | None
    stopped_by: str  # "converged", "cycle", "iterations", "time", "target"
    found: list[Found] = field(default_factory=list)  # the best distinct boards, best first

    def summary(self) -> dict[str, Any]:
        d = {k: v for k, v in dataclasses.asdict(self).items() if k != "found"}
        d["seconds"] = round(self.seconds, 3)
        if self.target_s is not None:
            d["target_s"] = round(self.target_s, 3)
        return d


class _Clock:
    """Budget and progress for one restart."""

    def __init__(self, restart: int, cfg: OptimizeConfig, sink: Any, space: SearchSpace):
        self.restart = restart
        self.cfg = cfg
        self.sink = sink
        self.space = space
        self.t0 = time.monotonic()
        self.last_beat = self.t0
        self.best = -1
        self.target_s: float | None = None
        self.target_iteration: int | None = None

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def out_of_time(self) -> bool:
        return self.cfg.time_limit is not None and self.elapsed() >= self.cfg.time_limit

    def hit_target(self) -> bool:
        return self.target_s is not None

    def offer(self, score: int, faces: np.ndarray, iteration: int, evaluations: int) -> None:
        """Record a restart-best candidate (and tell the sink when it improves)."""
        if score <= self.best:
            return
        self.best = score
        if self.cfg.target is not None and score >= self.cfg.target and self.target_s is None:
            self.target_s = self.elapsed()
            self.target_iteration = iteration
        if self.sink is not None:
            self.sink.put(
                ("best", self.restart, iteration, self.elapsed(), evaluations, score, faces.tobytes())
            )

    def beat(self, iteration: int, evaluations: int) -> None:
        now = time.monotonic()
        if self.sink is not None and now - self.last_beat >= HEARTBEAT_S:
            self.last_beat = now
            self.sink.put(("tick", self.restart, iteration, now - self.t0, evaluations, self.best, b""))


def _keep_best(found: dict[bytes, Found], new: Sequence[Found], keep: int) -> dict[bytes, Found]:
    for f in new:
        old = found.get(f.key)
        if old is None or old.iteration > f.iteration:
            found[f.key] = f
    ranked = sorted(found.values(), key=lambda f: (-f.score, f.key))[:keep]
    return {f.key: f for f in ranked}


def _restart_result(
    clock: _Clock, scorer: Scorer, kept: dict[bytes, Found], iterations: int, climbs: int, stopped_by: str
) -> RestartResult:
    """What one restart of either strategy reports: its distinct boards best first."""
    return RestartResult(
        clock.restart,
        max(f.score for f in kept.values()),
        iterations,
        scorer.evaluations,
        climbs,
        clock.elapsed(),
        clock.target_s,
        clock.target_iteration,
        stopped_by,
        sorted(kept.values(), key=lambda f: (-f.score, f.key)),
    )


def hill_climb(
    space: SearchSpace, scorer: Scorer, rng: np.random.Generator, cfg: OptimizeConfig, clock: _Clock
) -> RestartResult:
    """Pool hill climbing (see the module docstring) for one restart."""
    perms = shape_symmetries(space.rows, space.cols)
    budget = cfg.iterations is not None or cfg.time_limit is not None
    kept: dict[bytes, Found] = {}
    iteration = 0
    climbs = 0
    stopped_by = "converged"

    def entry(die: np.ndarray, fidx: np.ndarray, score: int) -> Found:
        key, p = canonical_key(space.faces(die, fidx), perms)
        return Found(key, score, die[perms[p]], fidx[perms[p]], iteration)

    while True:
        climbs += 1
        pool: dict[bytes, Found] = {}
        starts = [space.random_state(rng) for _ in range(cfg.pool_size)]
        scores = scorer.score_many(np.stack([space.faces(d, fi) for d, fi in starts]))
        for (d, fi), sc in zip(starts, scores, strict=True):
            e = entry(d, fi, int(sc))
            pool.setdefault(e.key, e)
        expanded: set[bytes] = set()
        top = min(pool.values(), key=lambda f: (-f.score, f.key))
        clock.offer(top.score, space.faces(top.die, top.fidx), iteration, scorer.evaluations)
        while not clock.hit_target():
            todo = sorted(
                (f for f in pool.values() if f.key not in expanded), key=lambda f: (-f.score, f.key)
            )
            if not todo:
                break
            if cfg.iterations is not None and iteration >= cfg.iterations:
                stopped_by = "iterations"
                break
            iteration += 1
            ranked = sorted(pool.values(), key=lambda f: (-f.score, f.key))
            floor = ranked[cfg.pool_size - 1].score if len(ranked) >= cfg.pool_size else -1
            for parent in todo:
                expanded.add(parent.key)
                kind, a, b, score = scorer.neighbourhood(space, parent.die, parent.fidx)
                better = np.flatnonzero(score > floor)
                if len(better) > cfg.pool_size:
                    # ties at the cut are broken by move order, which is deterministic
                    part = np.argsort(-score[better], kind="stable")[: cfg.pool_size]
                    better = better[part]
                for m in better:
                    die, fidx = apply_move(parent.die, parent.fidx, int(kind[m]), int(a[m]), int(b[m]))
                    e = entry(die, fidx, int(score[m]))
                    pool.setdefault(e.key, e)
                clock.beat(iteration, scorer.evaluations)
                if clock.out_of_time():
                    break
            ranked = sorted(pool.values(), key=lambda f: (-f.score, f.key))[: cfg.pool_size]
            pool = {f.key: f for f in ranked}
            clock.offer(
                ranked[0].score, space.faces(ranked[0].die, ranked[0].fidx), iteration, scorer.evaluations
            )
            if clock.out_of_time():
                break
        kept = _keep_best(kept, list(pool.values()), cfg.keep)
        if clock.hit_target():
            stopped_by = "target"
            break
        if clock.out_of_time():
            stopped_by = "time"
            break
        if stopped_by == "iterations" or not budget:
            break
    return _restart_result(clock, scorer, kept, iteration, climbs, stopped_by)


def simulated_annealing(
    space: SearchSpace, scorer: Scorer, rng: np.random.Generator, cfg: OptimizeConfig, clock: _Clock
) -> RestartResult:
    """Simulated annealing (see the module docstring) for one restart; ``iterations`` are
    moves. Each cooling cycle contributes its best board to the restart's results."""
    perms = shape_symmetries(space.rows, space.cols)
    budget = cfg.iterations is not None or cfg.time_limit is not None
    limit = cfg.iterations
    kept: dict[bytes, Found] = {}
    moves = 0
    cycles = 0
    stopped_by = "cycle"
    while True:
        cycles += 1
        die, fidx = space.random_state(rng)
        cur = scorer.score(space.faces(die, fidx))
        state: list[Any] = [die, fidx, cur, die.copy(), fidx.copy(), cur]
        best_at = moves
        step = 0
        while step < cfg.cycle:
            n = min(ANNEAL_CHUNK, cfg.cycle - step)
            if limit is not None:
                n = min(n, limit - moves)
            before = state[5]
            scorer.anneal(space, state, step, n, cfg, int(rng.integers(0, 2**31 - 1)))
            step += n
            moves += n
            if state[5] > before:
                best_at = moves
                clock.offer(state[5], space.faces(state[3], state[4]), moves, scorer.evaluations)
            clock.beat(moves, scorer.evaluations)
            if clock.hit_target() or clock.out_of_time() or (limit is not None and moves >= limit):
                break
        key, p = canonical_key(space.faces(state[3], state[4]), perms)
        kept = _keep_best(
            kept, [Found(key, state[5], state[3][perms[p]], state[4][perms[p]], best_at)], cfg.keep
        )
        if clock.hit_target():
            stopped_by = "target"
            break
        if clock.out_of_time():
            stopped_by = "time"
            break
        if limit is not None and moves >= limit:
            stopped_by = "iterations"
            break
        if not budget:
            break
    return _restart_result(clock, scorer, kept, moves, cycles, stopped_by)


@dataclass(frozen=True)
class RestartTask:
    restart: int
    seed: np.random.SeedSequence
    cfg: OptimizeConfig
    space: SearchSpace
    tables: Tables


def run_restart(task: RestartTask, sink: Any = None) -> RestartResult:
    """One restart, start to finish (what a joblib worker runs). ``sink.put(event)`` receives
    progress events when given."""
    rng = np.random.default_rng(task.seed)
    scorer = Scorer(task.tables)
    clock = _Clock(task.restart, task.cfg, sink, task.space)
    search = hill_climb if task.cfg.strategy == "hill" else simulated_annealing
    result = search(task.space, scorer, rng, task.cfg, clock)
    if sink is not None:
        sink.put(
            (
                "done",
                task.restart,
                result.iterations,
                result.seconds,
                result.evaluations,
                result.best_score,
                b"",
            )
        )
    return result


# ---------------------------------------------------------------- the parallel driver


@dataclass(frozen=True)
class OptimizeProgress:
    """What the search reports: the event, the restart it came from, and the run's best."""

    event: str  # "best" (a restart improved), "tick" (heartbeat), "done" (a restart finished)
    restart: int
    iteration: int
    elapsed: float  # seconds since that restart started
    evaluations: int  # boards that restart scored so far
    restart_best: int
    best_score: int  # the best over all restarts so far
    best_board: str  # compact notation
    restarts_done: int
    restarts_total: int


ProgressCallback = Callable[[OptimizeProgress], None]


class _Relay:
    """Turns worker events into OptimizeProgress for the callback, on one thread."""

    def __init__(self, space: SearchSpace, alphabet: Any, total: int, progress: ProgressCallback | None):
        self.space = space
        self.alphabet = alphabet
        self.total = total
        self.progress = progress
        self.best = -1
        self.board = ""
        self.done = 0

    def put(self, ev: tuple[Any, ...]) -> None:
        kind, restart, iteration, elapsed, evaluations, score, raw = ev
        if kind == "best" and score > self.best:
            self.best = int(score)
            faces = np.frombuffer(raw, dtype=np.int8)
            board = _board(faces, self.space, self.alphabet)
            # annealing reports its raw state; show the form the results will use
            self.board = format_compact(canonical(board) if board.rows == board.cols else board)
        if kind == "done":
            self.done += 1
        if self.progress is not None:
            self.progress(
                OptimizeProgress(
                    kind,
                    restart,
                    iteration,
                    elapsed,
                    evaluations,
                    score,
                    self.best,
                    self.board,
                    self.done,
                    self.total,
                )
            )


def _board(faces: np.ndarray, space: SearchSpace, alphabet: Any) -> Board:
    names = alphabet.faces
    return Board(space.rows, space.cols, tuple("" if f < 0 else names[f] for f in faces))


def search(
    cfg: OptimizeConfig,
    space: SearchSpace,
    tables: Tables,
    alphabet: Any,
    progress: ProgressCallback | None = None,
    n_jobs: int | None = None,
) -> list[RestartResult]:
    """Run every restart (in parallel under the caller's ``joblib.parallel_config``) and return
    their results in restart order. Progress events reach ``progress`` on one thread."""
    import joblib

    seeds = np.random.SeedSequence(cfg.seed).spawn(cfg.restarts)
    tasks = [RestartTask(i, s, cfg, space, tables) for i, s in enumerate(seeds)]
    relay = _Relay(space, alphabet, cfg.restarts, progress)
    if joblib.effective_n_jobs(n_jobs) == 1 or cfg.restarts == 1:
        return [run_restart(t, relay) for t in tasks]
    import multiprocessing
    import queue

    manager = multiprocessing.Manager()
    try:
        events = manager.Queue()
        stop = threading.Event()

        def drain() -> None:
            while True:
                try:
                    ev = events.get(timeout=0.1)
                except queue.Empty:
                    if stop.is_set():
                        return
                    continue
                except (EOFError, OSError):
                    return
                relay.put(ev)

        pump = threading.Thread(target=drain, name="optimize-progress", daemon=True)
        pump.start()
        try:
            results = joblib.Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
                joblib.delayed(run_restart)(t, events) for t in tasks
            )
            out = sorted(results, key=lambda r: r.restart)
        finally:
            stop.set()
            pump.join()
    finally:
        manager.shutdown()
    return out


# ---------------------------------------------------------------- results


@dataclass(frozen=True)
class BestBoard:
    board: Board
    score: int  # the objective
    points: int
    words: list[str]
    restart: int
    iteration: int
    iterations: int

    @property
    def n_words(self) -> int:
        return len(self.words)


@dataclass
class OptimizeResult:
    boards: list[BestBoard]  # distinct, best first
    restarts: list[RestartResult]
    manifest: dict[str, Any]
    out: Path | None

    @property
    def best(self) -> BestBoard:
        return self.boards[0]


def collect_boards(
    restarts: Sequence[RestartResult],
    space: SearchSpace,
    objective: Objective,
    lexicon: CompiledLexicon,
    keep: int,
) -> list[BestBoard]:
    """The best distinct boards over all restarts, re-solved with the batch solver: the
    objective's score is checked against the search kernel's, words and points come from the
    full lexicon."""
    from pipeline.errors import BoggleError
    from pipeline.solve import solve_arrays

    first: dict[bytes, tuple[Found, RestartResult]] = {}
    for r in restarts:  # in restart order, so the first restart to find a board owns it
        for found in r.found:
            first.setdefault(found.key, (found, r))
    ranked = sorted(first.values(), key=lambda fr: (-fr[0].score, fr[0].key))[:keep]
    if not ranked:
        return []
    boards = np.stack([key_faces(f.key) for f, _ in ranked])
    rows, cols = space.rows, space.cols
    check = solve_arrays(boards, rows, cols, objective.lexicon, collect=False).score
    full = solve_arrays(boards, rows, cols, lexicon, collect=True)
    ids = full.sorted_ids()
    out = []
    for k, (f, r) in enumerate(ranked):
        if int(check[k]) != f.score:
            raise BoggleError(f"internal: search kernel scored {f.score}, batch solver {int(check[k])}")
        words = [lexicon.words[i] for i in ids[full.offsets[k] : full.offsets[k + 1]]]
        out.append(
            BestBoard(
                _board(boards[k], space, lexicon.alphabet),
                f.score,
                int(full.score[k]),
                words,
                r.restart,
                f.iteration,
                r.iterations,
            )
        )
    return out


def results_table(boards: Sequence[BestBoard], cfg: OptimizeConfig) -> Any:
    import pyarrow as pa

    schema = pa.schema(
        [
            pa.field("board", pa.string(), nullable=False),
            pa.field("rows", pa.int16(), nullable=False),
            pa.field("cols", pa.int16(), nullable=False),
            pa.field("score", pa.int32(), nullable=False),
            pa.field("points", pa.int32(), nullable=False),
            pa.field("n_words", pa.int32(), nullable=False),
            pa.field("words", pa.list_(pa.field("item", pa.string(), nullable=False)), nullable=False),
            pa.field("restart", pa.int32(), nullable=False),
            pa.field("iteration", pa.int64(), nullable=False),
            pa.field("iterations", pa.int64(), nullable=False),
            pa.field("strategy", pa.string(), nullable=False),
            pa.field("objective", pa.string(), nullable=False),
            pa.field("seed", pa.int64(), nullable=False),
        ]
    )
    n = len(boards)
    data = {
        "board": [format_compact(b.board) for b in boards],
        "rows": [b.board.rows for b in boards],
        "cols": [b.board.cols for b in boards],
        "score": [b.score for b in boards],
        "points": [b.points for b in boards],
        "n_words": [b.n_words for b in boards],
        "words": [b.words for b in boards],
        "restart": [b.restart for b in boards],
        "iteration": [b.iteration for b in boards],
        "iterations": [b.iterations for b in boards],
        "strategy": [cfg.strategy] * n,
        "objective": [cfg.objective] * n,
        "seed": [cfg.seed] * n,
    }
    return pa.Table.from_pydict(data, schema=schema)


def read_results(out: Path | str) -> Any:
    """The boards table of a finished optimize run (a BoggleError if it is not one)."""
    import pyarrow.parquet as pq

    from pipeline import store
    from pipeline.errors import BoggleError

    out = Path(out)
    manifest = store.read_json(out / store.MANIFEST) if (out / store.MANIFEST).is_file() else {}
    if manifest.get("format") != FORMAT:
        raise BoggleError(f"{out}: not a finished optimize run (no {store.MANIFEST} of format {FORMAT})")
    return pq.read_table(out / store.part_name(0))


def prepare(cfg: OptimizeConfig) -> tuple[OptimizeConfig, CompiledLexicon, Objective, SearchSpace, Tables]:
    """Resolve the config and build the lexicon, objective, search space and kernel tables."""
    from pipeline.dice import load_dice_set
    from pipeline.lexicon import compile_for_boards, load_lexicon
    from pipeline.rules import get_rules

    cfg = cfg.resolve()
    rows, cols = cfg.rows_cols
    rules = get_rules(cfg.rules or "boggle", min_length=cfg.min_length)
    dice = load_dice_set(cfg.dice, rows, cols) if cfg.dice else None
    lexicon = compile_for_boards(cfg.dictionary, rules, dice.faces if dice else None)
    subset = load_lexicon(cfg.subset).words if cfg.subset else None
    objective = make_objective(lexicon, cfg.objective, subset)
    if dice is not None:
        space = dice_space(rows, cols, dice, lexicon.alphabet)
    else:
        space = free_space(rows, cols, len(lexicon.alphabet))
    return cfg, lexicon, objective, space, Tables.of(objective, rows, cols)


def optimize(
    cfg: OptimizeConfig, progress: ProgressCallback | None = None, n_jobs: int | None = None
) -> OptimizeResult:
    """Search without writing anything (``n_jobs=None``: the caller's joblib config decides).

    >>> res = optimize(OptimizeConfig("enable2k.txt", restarts=2, iterations=20))  # doctest: +SKIP
    >>> res.best.score, format_compact(res.best.board)  # doctest: +SKIP
    """
    from pipeline.store import now_iso

    started = now_iso()
    cfg, lexicon, objective, space, tables = prepare(cfg)
    return _optimize(cfg, lexicon, objective, space, tables, progress, n_jobs, started, time.time())


def _optimize(
    cfg: OptimizeConfig,
    lexicon: CompiledLexicon,
    objective: Objective,
    space: SearchSpace,
    tables: Tables,
    progress: ProgressCallback | None,
    n_jobs: int | None,
    started: str,
    t0: float,
) -> OptimizeResult:
    from pipeline.io import package_versions
    from pipeline.store import now_iso

    restarts = search(cfg, space, tables, lexicon.alphabet, progress, n_jobs)
    boards = collect_boards(restarts, space, objective, lexicon, cfg.keep)
    reached = [r for r in restarts if r.target_s is not None]
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "identity": cfg.identity(),
        "config": cfg.to_dict(),
        "lexicon": lexicon.provenance(),
        "rules": lexicon.rules.to_dict(),
        "objective": objective.info,
        "dice": None if space.free else {"name": space.dice_name},
        "packages": package_versions(),
        "counts": {
            "restarts": len(restarts),
            "boards": len(boards),
            "evaluations": sum(r.evaluations for r in restarts),
            "iterations": sum(r.iterations for r in restarts),
            "restarts_reached_target": len(reached) if cfg.target is not None else None,
        },
        "best": {"board": format_compact(boards[0].board), "score": boards[0].score} if boards else None,
        "restarts": [r.summary() for r in restarts],
        "columns": COLUMNS,
        "started_at": started,
        "finished_at": now_iso(),
        "seconds": round(time.time() - t0, 3),
    }
    return OptimizeResult(boards, restarts, manifest, None)


def run_optimize(cfg: OptimizeConfig, progress: ProgressCallback | None = None) -> OptimizeResult:
    """Search and write ``OUT/part-00000.parquet`` and ``OUT/_SUCCESS`` (atomically), under
    ``joblib.parallel_config(backend=cfg.backend, n_jobs=cfg.n_jobs)``. The output directory is
    locked for the whole run; a directory holding a different run is an OutputConflictError
    unless ``overwrite``. Without ``cfg.out`` nothing is written."""
    import joblib

    from pipeline import store
    from pipeline.io import write_json_atomic
    from pipeline.store import now_iso

    started = now_iso()
    t0 = time.time()
    cfg, lexicon, objective, space, tables = prepare(cfg)

    def go() -> OptimizeResult:
        with joblib.parallel_config(backend=cfg.backend, n_jobs=cfg.n_jobs if cfg.n_jobs is not None else -1):
            return _optimize(cfg, lexicon, objective, space, tables, progress, None, started, t0)

    if cfg.out is None:
        return go()
    out = Path(cfg.out)
    with store.run_lock(out):
        _check_out(out, cfg)
        res = go()
        table = results_table(res.boards, cfg)
        meta = store.parquet_metadata(cfg.to_dict(), lexicon.provenance(), lexicon.rules.to_dict())
        size = store.write_part(out, 0, table, metadata=meta)
        res.manifest["parts"] = [
            {"file": store.part_name(0), "chunk": 0, "rows": table.num_rows, "bytes": size}
        ]
        write_json_atomic(out / store.MANIFEST, res.manifest)
    res.out = out
    return res


def _check_out(out: Path, cfg: OptimizeConfig) -> None:
    """Refuse to overwrite another run (unless ``overwrite``); a finished run of the same config
    is searched again (a search with a time limit is not reproducible, so there is nothing to
    reuse safely)."""
    from pipeline import store

    state = store.prepare_run_dir(out, cfg.identity(), overwrite=cfg.overwrite)
    if state != "new":
        store.clear_run(out)
