"""Branch and bound over one board class.

The class bound (:mod:`pipeline.best.prove._bounds`) is computed; below the threshold the class is
eliminated. Otherwise the first cell in the split order (:func:`split_order`: most neighbours
first, centre, edges, corners) that still has several faces is split into one sub-class per face
and each is treated the same way. A sub-class of at most ``enumerate_max`` boards is not split
further: its boards are scored exactly by the solver's kernel
(:func:`pipeline.solve.solve_arrays`; the boards are listed by
:func:`pipeline.best.prove._bounds.class_boards`, many sub-classes to a call), so every board reported
is scored exactly and no board >= threshold is lost (the bounds are sound).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pipeline.best.prove._bounds import PackedTrie, ProveTrie, class_boards, class_bounds, class_sizes
from pipeline.boards import Geometry
from pipeline.errors import InternalError
from pipeline.lexicon import CompiledLexicon
from pipeline.solve import solve_arrays

ENUMERATE_MAX = 16
#: The most boards :meth:`ClassProver._enumerate_all` hands the solver's kernel in one call.
SCORE_BATCH = 1 << 14


def split_order(geo: Geometry, masks: np.ndarray | None = None) -> np.ndarray:
    """Cells by number of neighbours (descending), then, given a class's ``masks``, fewest
    letters, then distance to the centre, then index. Fewer letters first among cells of one
    degree: the tree prover lifts the first cells of the order, one tree per letter, so a cheap
    cell there leaves fewer, smaller lifted trees (docs/performance.md: 0.93 of the CPU on 100
    3x4 corner-recipe classes, 8% fewer branch nodes on the two heaviest)."""
    cr, cc = (geo.rows - 1) / 2, (geo.cols - 1) / 2
    letters = [bin(int(m)).count("1") for m in masks] if masks is not None else [0] * geo.n_cells
    keys = [
        (-int(geo.deg[c]), letters[c], (c // geo.cols - cr) ** 2 + (c % geo.cols - cc) ** 2, c)
        for c in range(geo.n_cells)
    ]
    return np.array([k[-1] for k in sorted(keys)], dtype=np.int64)


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


@dataclass(eq=False, repr=False)
class ClassProver:
    """Proves classes of one shape against one lexicon; holds the kernels' scratch space.
    ``trie``: the dense one (the sum and max bounds walk it); the tree bound's subclass also
    takes it packed. A dataclass for its constructor alone (the subclass adds its settings to
    these), compared and shown as a plain object."""

    geo: Geometry
    lexicon: CompiledLexicon
    trie: ProveTrie | PackedTrie
    threshold: int
    enumerate_max: int = ENUMERATE_MAX

    def __post_init__(self) -> None:
        self.order = split_order(self.geo)
        self.seen = np.zeros(max(self.trie.n_words, 1), np.int64)
        self.stamp = np.zeros(1, np.int64)

    def bound(self, masks: np.ndarray) -> int:
        t = self.trie
        if not isinstance(t, ProveTrie):
            raise InternalError("the sum and max bounds need the dense trie, not the packed one")
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

    def release(self) -> None:
        """Give back memory held for the next class (the worker calls it after each chunk):
        nothing here; see :meth:`pipeline.best.prove.tree.TreeProver.release`."""

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
        self._enumerate_all(masks[None, :], out)

    def _enumerate_all(self, subs: np.ndarray, out: ClassOutcome) -> None:
        """Score every board of the sub-classes ``subs`` (uint64 [k, cells]) exactly with the
        solver's kernel, :data:`SCORE_BATCH` boards a call at most (a sub-class is never cut),
        in order: sub-class by sub-class, each in mixed-radix order with the last cell fastest.
        The best board is the first to reach the best score, as if scored one by one."""
        ends = np.cumsum(class_sizes(subs))
        start, done = 0, 0
        while start < len(subs):
            stop = max(start + 1, int(np.searchsorted(ends, done + SCORE_BATCH, side="right")))
            boards = np.empty((int(ends[stop - 1]) - done, self.geo.n_cells), np.int8)
            if class_boards(subs[start:stop], boards) != len(boards):
                raise InternalError("class_boards: the board count disagrees")
            scores = solve_arrays(boards, self.geo.rows, self.geo.cols, self.lexicon, collect=False).score
            out.boards_scored += len(boards)
            top = int(np.argmax(scores))
            if int(scores[top]) > out.best_score:
                out.best_score = int(scores[top])
                out.best_board = boards[top].copy()
            hits = np.flatnonzero(scores >= self.threshold)
            out.found.extend((boards[i].copy(), int(scores[i])) for i in hits)
            start, done = stop, int(ends[stop - 1])
