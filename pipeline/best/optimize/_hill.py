"""Pool hill climbing: a pool of the ``pool_size`` best distinct boards (canonical under the
board's symmetries). Each iteration expands the pool boards not yet expanded: every neighbour is
scored in machine code, and the best neighbours join the pool if they beat its worst board.
When no pool board is left to expand the climb has converged; with an iteration or time budget,
a fresh random pool starts the next climb."""

from __future__ import annotations

import numpy as np

from pipeline.best.optimize._budget import Clock, Found, RestartResult, keep_best, restart_result
from pipeline.best.optimize._config import OptimizeConfig
from pipeline.best.optimize._scorer import Scorer
from pipeline.best.optimize._space import SearchSpace, apply_move, canonical_key, shape_symmetries


def hill_climb(
    space: SearchSpace, scorer: Scorer, rng: np.random.Generator, cfg: OptimizeConfig, clock: Clock
) -> RestartResult:
    """One restart of pool hill climbing; ``iterations`` are pool generations."""
    perms = shape_symmetries(space.rows, space.cols)
    kept: dict[bytes, Found] = {}
    iteration = 0
    climbs = 0
    reason: str | None = None

    def entry(die: np.ndarray, fidx: np.ndarray, score: int) -> Found:
        key, p = canonical_key(space.faces(die, fidx), perms)
        return Found(key, score, die[perms[p]], fidx[perms[p]], iteration)

    def by_score(f: Found) -> tuple[int, bytes]:
        return (-f.score, f.key)

    while True:
        climbs += 1
        pool: dict[bytes, Found] = {}
        starts = [space.random_state(rng) for _ in range(cfg.pool_size)]
        scores = scorer.score_many(np.stack([space.faces(d, fi) for d, fi in starts]))
        for (d, fi), sc in zip(starts, scores, strict=True):
            e = entry(d, fi, int(sc))
            pool.setdefault(e.key, e)
        expanded: set[bytes] = set()
        top = min(pool.values(), key=by_score)
        clock.offer(top.score, space.faces(top.die, top.fidx), iteration, scorer.evaluations)
        while True:
            todo = sorted((f for f in pool.values() if f.key not in expanded), key=by_score)
            if not todo:
                break  # converged
            reason = clock.stop_reason(iteration)
            if reason is not None:
                break
            iteration += 1
            ranked = sorted(pool.values(), key=by_score)
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
            ranked = sorted(pool.values(), key=by_score)[: cfg.pool_size]
            pool = {f.key: f for f in ranked}
            clock.offer(
                ranked[0].score, space.faces(ranked[0].die, ranked[0].fidx), iteration, scorer.evaluations
            )
        kept = keep_best(kept, list(pool.values()), cfg.keep)
        # "iterations" stops only a climb with work left (above): a converged climb at the
        # limit lets the next climb find that out, as before the split
        reason = reason or clock.stop_reason()
        if reason is not None or not clock.has_budget:
            break
    return restart_result(clock, scorer.evaluations, kept, iteration, climbs, reason or "converged")
