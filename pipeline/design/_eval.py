"""How a dice design compares two dice sets: boards rolled from one keyed stream and shown by both
sets, solved in parallel (:class:`Solver`), and a candidate move accepted or rejected from the
paired differences (:func:`evaluate_candidate`) with a z-interval after each batch.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline import parallel
from pipeline.design._config import DesignConfig, Objective
from pipeline.lexicon import CompiledLexicon

# the streams of random draws: search boards, moves, validation boards, the repair of a start
# set outside the per-die constraints (never shared)
SEARCH_STREAM, MOVES_STREAM, VALIDATE_STREAM, REPAIR_STREAM = 0, 1, 2, 3


def keyed_rng(seed: int, *key: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))


def _solve_part(
    handle: Any, boards: np.ndarray, rows: int, cols: int
) -> tuple[np.ndarray, np.ndarray, float, int]:
    """(score, words, CPU seconds of this thread, process id) of a slice of boards, in a worker."""
    from pipeline.runner import worker_lexicon
    from pipeline.solve import solve_arrays

    t = time.thread_time()
    res = solve_arrays(boards, rows, cols, worker_lexicon(handle), collect=False)
    return res.score.astype(np.int64), res.n_words.astype(np.int64), time.thread_time() - t, os.getpid()


class Solver:
    """Solves batches of encoded boards in this process (``n_jobs`` 1) or on the active joblib
    backend, and counts the boards and the CPU seconds."""

    def __init__(self, lexicon: CompiledLexicon, spec: str, rows: int, cols: int, n_jobs: int):
        from pipeline.runner import make_handle

        self.rows, self.cols, self.n_jobs = rows, cols, n_jobs
        self.handle = make_handle(spec, lexicon, ship=n_jobs != 1 and parallel.backend_is_dask())
        self.boards = 0
        self.worker_cpu = 0.0

    def solve(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.boards += len(boards)
        if len(boards) == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        if self.n_jobs == 1 or len(boards) < 512:
            s, w, _, _ = _solve_part(self.handle, boards, self.rows, self.cols)
            return s, w
        import joblib

        parts = max(1, min(joblib.effective_n_jobs(self.n_jobs), len(boards) // 256))
        out = joblib.Parallel(n_jobs=self.n_jobs)(
            joblib.delayed(_solve_part)(self.handle, b, self.rows, self.cols)
            for b in np.array_split(boards, parts)
        )
        # this process's CPU time already holds what its own threads (threading backend) spent
        self.worker_cpu += sum(c for _, _, c, pid in out if pid != os.getpid())
        return np.concatenate([s for s, _, _, _ in out]), np.concatenate([w for _, w, _, _ in out])


@dataclass
class Paired:
    """Per-board figures of two sets on the same draws (b: the second set)."""

    score_a: np.ndarray
    words_a: np.ndarray
    score_b: np.ndarray
    words_b: np.ndarray
    differ: int  # boards that show other faces


def paired_batch(
    solver: Solver,
    table_a: np.ndarray,
    table_b: np.ndarray,
    order: np.ndarray,
    face: np.ndarray,
    known_a: tuple[np.ndarray, np.ndarray] | None = None,
) -> Paired:
    """Both sets on the same draws; only the boards whose faces differ are solved for ``b``
    (``known_a``: the first set's figures, already solved)."""
    boards_a, boards_b = table_a[order, face], table_b[order, face]
    sa, wa = known_a if known_a is not None else solver.solve(boards_a)
    differ = (boards_a != boards_b).any(axis=1)
    sb, wb = sa.copy(), wa.copy()
    if differ.any():
        sb[differ], wb[differ] = solver.solve(boards_b[differ])
    return Paired(sa, wa, sb, wb, int(differ.sum()))


def _interval(d: np.ndarray, z: float) -> tuple[float, float, float]:
    mean = float(d.mean())
    half = z * float(d.std(ddof=1)) / math.sqrt(len(d)) if len(d) > 1 else math.inf
    return mean, mean - half, mean + half


@dataclass
class Decision:
    accept: bool
    estimate: float
    low: float
    high: float
    boards: int


def evaluate_candidate(
    solver: Solver,
    objective: Objective,
    cfg: DesignConfig,
    table_inc: np.ndarray,
    table_cand: np.ndarray,
    batch_of: Callable[[int], tuple[Any, ...]],
) -> Decision:
    """The sequential paired test of a candidate against the incumbent (module docstring);
    ``batch_of(k)`` gives batch ``k``'s draws and the incumbent's figures on them."""
    ds: list[np.ndarray] = []
    scores_a: list[np.ndarray] = []
    scores_b: list[np.ndarray] = []
    est = low = high = 0.0
    for k in range(cfg.max_batches):
        order, face, known = batch_of(k)
        p = paired_batch(solver, table_inc, table_cand, order, face, known)
        va, vb = objective.values(p.score_a, p.words_a), objective.values(p.score_b, p.words_b)
        ds.append(objective.sign * (vb - va))
        scores_a.append(p.score_a)
        scores_b.append(p.score_b)
        d = np.concatenate(ds)
        est, low, high = _interval(d, cfg.z)
        if high < 0:
            return Decision(False, est, low, high, len(d))
        if low > 0 and _sd_ok(cfg, scores_a, scores_b):
            return Decision(True, est, low, high, len(d))
    n = sum(len(x) for x in ds)
    accept = cfg.undecided == "estimate" and est > 0 and _sd_ok(cfg, scores_a, scores_b)
    return Decision(accept, est, low, high, n)


def _sd_ok(cfg: DesignConfig, scores_a: list[np.ndarray], scores_b: list[np.ndarray]) -> bool:
    if cfg.max_sd is None:
        return True
    sa, sb = np.concatenate(scores_a), np.concatenate(scores_b)
    return float(sb.std(ddof=1)) <= max(cfg.max_sd, float(sa.std(ddof=1)))
