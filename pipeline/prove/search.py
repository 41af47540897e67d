"""Branch and bound over one board class.

The class bound (:mod:`pipeline.prove.bounds`) is computed; below the threshold the class is
eliminated. Otherwise the first cell in the split order (most neighbours first: centre, edges,
corners) that still has several faces is split into one sub-class per face and each is treated
the same way. A sub-class of at most ``enumerate_max`` boards is not split further: its boards
are scored exactly (:func:`pipeline.prove.bounds.enumerate_class`: the walk with one face per
cell is the board's score; tests check it against :func:`pipeline.solve.solve_arrays`), so every
board reported is scored exactly and no board >= threshold is lost (the bounds are sound).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pipeline.boards import Geometry
from pipeline.lexicon import CompiledLexicon
from pipeline.prove.bounds import ProveTrie, class_bounds, enumerate_class

ENUMERATE_MAX = 16


def split_order(geo: Geometry) -> np.ndarray:
    """Cells by number of neighbours (descending), then distance to the centre, then index."""
    cr, cc = (geo.rows - 1) / 2, (geo.cols - 1) / 2
    keys = [
        (-int(geo.deg[c]), (c // geo.cols - cr) ** 2 + (c % geo.cols - cc) ** 2, c)
        for c in range(geo.n_cells)
    ]
    return np.array([k[2] for k in sorted(keys)], dtype=np.int64)


def mask_faces(mask: int) -> list[int]:
    return [f for f in range(64) if mask >> f & 1]


@dataclass
class ClassOutcome:
    """What proving one class found: the root bound, whether any boards had to be scored,
    the best board scored (faces as int8 indices, empty when none was) and every board >= T."""

    root_bound: int
    boards_scored: int = 0
    nodes: int = 0
    best_score: int = -1
    best_board: np.ndarray = field(default_factory=lambda: np.empty(0, np.int8))
    found: list[tuple[np.ndarray, int]] = field(default_factory=list)

    @property
    def status(self) -> str:
        return "enumerated" if self.boards_scored else "eliminated"


class ClassProver:
    """Proves classes of one shape against one lexicon; holds the kernels' scratch space."""

    def __init__(
        self,
        geo: Geometry,
        lexicon: CompiledLexicon,
        trie: ProveTrie,
        threshold: int,
        enumerate_max: int = ENUMERATE_MAX,
    ):
        self.geo = geo
        self.lexicon = lexicon
        self.trie = trie
        self.threshold = threshold
        self.enumerate_max = enumerate_max
        self.order = split_order(geo)
        self.seen = np.zeros(max(trie.n_words, 1), np.int64)
        self.stamp = np.zeros(1, np.int64)

    def bound(self, masks: np.ndarray) -> int:
        t = self.trie
        s, m = class_bounds(
            masks,
            self.geo.nbr_list,
            self.geo.deg,
            t.children,
            t.node_word,
            t.node_points,
            t.kids,
            self.seen,
            self.stamp,
        )
        return int(min(s, m))

    def prove(self, masks: np.ndarray) -> ClassOutcome:
        masks = np.ascontiguousarray(masks, dtype=np.uint64)
        root = self.bound(masks)
        out = ClassOutcome(root_bound=root)
        if root >= self.threshold:
            self._branch(masks, out)
        return out

    def _branch(self, masks: np.ndarray, out: ClassOutcome) -> None:
        out.nodes += 1
        sizes = [bin(int(m)).count("1") for m in masks]
        if int(np.prod(sizes, dtype=np.int64)) <= self.enumerate_max:
            self._enumerate(masks, out)
            return
        cell = next(int(c) for c in self.order if sizes[c] > 1)
        for f in mask_faces(int(masks[cell])):
            sub = masks.copy()
            sub[cell] = np.uint64(1 << f)
            if self.bound(sub) >= self.threshold:
                self._branch(sub, out)

    def _enumerate(self, masks: np.ndarray, out: ClassOutcome) -> None:
        t = self.trie
        best, board, hits, scores = enumerate_class(
            masks, self.threshold, self.geo.nbr_list, self.geo.deg, t.children, t.node_word, t.node_points,
            t.kids, self.seen, self.stamp,
        )  # fmt: skip
        out.boards_scored += int(np.prod([bin(int(m)).count("1") for m in masks], dtype=np.int64))
        if int(best) > out.best_score:
            out.best_score = int(best)
            out.best_board = board
        out.found.extend((hits[i], int(scores[i])) for i in range(len(scores)))
