"""Simulated annealing: from a random board, the whole move loop in machine code, with a
geometric temperature schedule from ``t_start`` to ``t_end`` over ``cycle`` moves; with a
budget, another cycle starts from a fresh random board. Each cycle contributes its best board.

The defaults (100 -> 20 over 80,000 moves) are measured, not guessed: on 4x4 with ENABLE2K the
optimum is found while the temperature is about 50-70, and longer, colder cycles (400,000 moves
down to 2) only polish local optima (9/10 restarts within 120 s against 10/10 at a tenth of the
moves).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.best.optimize._budget import Clock, Found, RestartResult, keep_best, restart_result
from pipeline.best.optimize._config import OptimizeConfig
from pipeline.best.optimize._scorer import Scorer, kernels
from pipeline.best.optimize._space import SearchSpace, canonical_key, shape_symmetries

ANNEAL_CHUNK = 8192  # moves per kernel call: the grain of progress and time-limit checks


@dataclass
class AnnealState:
    """The current board (die and face per cell) and its score, and the best board of the
    cycle so far. The kernel updates the arrays in place."""

    die: np.ndarray
    fidx: np.ndarray
    score: int
    best_die: np.ndarray
    best_fidx: np.ndarray
    best_score: int

    @classmethod
    def start(cls, die: np.ndarray, fidx: np.ndarray, score: int) -> AnnealState:
        return cls(die, fidx, score, die.copy(), fidx.copy(), score)

    def advance(
        self, scorer: Scorer, space: SearchSpace, step0: int, n_steps: int, cfg: OptimizeConfig, seed: int
    ) -> int:
        """Make ``n_steps`` moves (steps ``step0..`` of the cycle's schedule); returns how many
        were accepted."""
        score, best, accepted = kernels().anneal(
            self.die,
            self.fidx,
            self.score,
            self.best_die,
            self.best_fidx,
            self.best_score,
            space.table,
            space.n_opts,
            step0,
            n_steps,
            cfg.cycle,
            cfg.t_start,
            cfg.t_end,
            cfg.swap_p,
            seed,
            scorer.trie_args(),
            scorer.scratch.arrays(),
        )
        self.score = int(score)
        self.best_score = int(best)
        scorer.evaluations += n_steps
        return int(accepted)


def simulated_annealing(
    space: SearchSpace, scorer: Scorer, rng: np.random.Generator, cfg: OptimizeConfig, clock: Clock
) -> RestartResult:
    """One restart of simulated annealing; ``iterations`` are moves."""
    perms = shape_symmetries(space.rows, space.cols)
    limit = cfg.iterations
    kept: dict[bytes, Found] = {}
    moves = 0
    cycles = 0
    while True:
        cycles += 1
        die, fidx = space.random_state(rng)
        state = AnnealState.start(die, fidx, scorer.score(space.faces(die, fidx)))
        best_at = moves
        step = 0
        while step < cfg.cycle:
            n = min(ANNEAL_CHUNK, cfg.cycle - step)
            if limit is not None:
                n = min(n, limit - moves)
            before = state.best_score
            state.advance(scorer, space, step, n, cfg, int(rng.integers(0, 2**31 - 1)))
            step += n
            moves += n
            if state.best_score > before:
                best_at = moves
                best_faces = space.faces(state.best_die, state.best_fidx)
                clock.offer(state.best_score, best_faces, moves, scorer.evaluations)
            clock.beat(moves, scorer.evaluations)
            if clock.stop_reason(moves) is not None:
                break
        key, p = canonical_key(space.faces(state.best_die, state.best_fidx), perms)
        found = Found(key, state.best_score, state.best_die[perms[p]], state.best_fidx[perms[p]], best_at)
        kept = keep_best(kept, [found], cfg.keep)
        reason = clock.stop_reason(moves)
        if reason is not None or not clock.has_budget:
            break
    return restart_result(clock, scorer.evaluations, kept, moves, cycles, reason or "cycle")
