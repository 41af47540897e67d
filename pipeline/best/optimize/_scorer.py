"""Scoring boards with the search kernels (:mod:`pipeline.solve.kernels._score`; moves in
:mod:`pipeline.solve.kernels._move`): one board, a batch, every face of one cell at once (a
wildcard walk), and every move from a state."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.best.optimize._objectives import Objective
from pipeline.best.optimize._space import SearchSpace
from pipeline.boards import geometry
from pipeline.errors import ConfigError

MAX_CELLS = 64  # the kernels keep a board's cells in one 64-bit mask


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
        # contiguous copies: the trie's packed records give strided views, which the scoring
        # kernels read about 5-10% slower
        return cls(
            rows,
            cols,
            np.ascontiguousarray(t.mask),
            np.ascontiguousarray(t.first_child),
            np.ascontiguousarray(t.word_id),
            lex.word_points.astype(np.int64),
            max(t.max_depth, 1),
        )


def kernels() -> Any:
    """The numba scoring and move kernels (scoring, neighbourhood, annealing), imported on first
    use (compiling them is not free)."""
    from pipeline.solve import kernels

    return kernels


class Scorer:
    """Scores boards of one shape with the search kernels, reusing one set of work arrays;
    ``evaluations`` counts the boards scored."""

    def __init__(self, tables: Tables):
        from pipeline.solve.kernels import Scratch

        self.t = tables
        self.nbr_mask = geometry(tables.rows, tables.cols).nbr_mask
        self.scratch = Scratch(len(tables.weights), tables.rows * tables.cols, tables.max_depth)
        self.evaluations = 0

    def trie_args(self) -> tuple[Any, ...]:
        """The kernels' ``trie`` argument: neighbour masks, trie arrays and word weights."""
        t = self.t
        return (self.nbr_mask, t.mask, t.first_child, t.word_id, t.weights)

    def score(self, faces: np.ndarray) -> int:
        self.evaluations += 1
        board = np.ascontiguousarray(faces, np.int8)
        return int(kernels().score_one(board, self.trie_args(), self.scratch.arrays()))

    def score_many(self, boards: np.ndarray) -> np.ndarray:
        self.evaluations += len(boards)
        out: np.ndarray = kernels().score_batch(
            np.ascontiguousarray(boards, np.int8), self.trie_args(), self.scratch.arrays()
        )
        return out

    def cell_scores(self, faces: np.ndarray, cell: int, n_faces: int) -> np.ndarray:
        """Scores of the board with ``cell`` showing each face 0..n_faces-1."""
        self.evaluations += n_faces
        out: np.ndarray = kernels().cell_scores(
            np.ascontiguousarray(faces, np.int8),
            cell,
            n_faces,
            self.trie_args(),
            self.scratch.arrays(),
            self.scratch.wild_arrays(),
        )
        return out

    def neighbourhood(
        self, space: SearchSpace, die: np.ndarray, fidx: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every move from (die, fidx) and the score it leads to: (kind, a, b, score); see
        :func:`pipeline.best.optimize._space.apply_move`."""
        kind, a, b, score = kernels().neighbourhood(
            die,
            fidx,
            space.table,
            space.n_opts,
            space.free,
            space.n_faces,
            self.trie_args(),
            self.scratch.arrays(),
            self.scratch.wild_arrays(),
        )
        self.evaluations += len(score)
        return kind, a, b, score
