"""The orderly-tree bound of a board class and branch and bound inside the class (``TreeProver``).

The sum and max bounds of :mod:`pipeline.prove.bounds` are loose on strong classes, so the
sum/max prover splits far too many sub-classes. The tree bound keeps, per class, a tree of
alternating nodes:

* a SUM node holds the points of the words that end at it plus the values of all its children;
* a CHOICE node stands for one cell's letter choice; its value is the best of its letter
  children (only the forced letter's child once the cell is forced).

Every word a board of the class can spell is inserted as its (cell, letter) pairs sorted by the
split order's rank of the cell ("orderly": the choice node of a cell can only sit where the
cells before it in the split order have been decided), so one cell set and letter assignment
reaches one SUM node. A word counts once per (node, word): paths that spell the same word over
the same cells with the same letters meet at the same node and are de-duplicated there.

Soundness: fix a board of the class and take, at each choice node, that board's letter. The
value is then the points summed over every (word, cell set) the board can spell, which is at
least the board's score (a word counts once however many cell sets spell it); taking the best
letter instead can only raise it. Forcing a cell keeps this argument for the boards that agree
with the forced letters, so the forced bound is a bound of the sub-class.

The tree is built once per class; branching forces the next cell of the split order to each of
its letters and re-evaluates without rebuilding. Sub-classes of at most ``enumerate_max`` boards
are scored exactly by :func:`pipeline.prove.bounds.enumerate_class`, so every board reported is
scored exactly. The build also yields the sum bound (each spellable word once), which can beat
the tree bound on weak classes (the tree counts a word once per cell set); the root bound is the
smaller. Neither the sum nor the max bound is an upper limit of the tree bound in general.

The tree lives in flat arrays (numba kernels, ``nogil``, cached): :mod:`pipeline.prove.tree_build`
builds it, :mod:`pipeline.prove.tree_eval` evaluates it in pre-order, where a subtree is a
contiguous index range and a forced evaluation skips the letters not chosen; the branch and
bound (:func:`pipeline.prove.tree_eval.tree_branch`) recomputes at each level only the subtrees
that hold a choice of the cell just forced.
:func:`tree_bound_reference` is the plain-Python twin used by the tests.
"""

from __future__ import annotations

import numpy as np

from pipeline.boards import Geometry
from pipeline.lexicon import CompiledLexicon
from pipeline.prove.bounds import ProveTrie
from pipeline.prove.search import ENUMERATE_MAX, ClassOutcome, ClassProver, split_order
from pipeline.prove.tree_build import FULL_NODES, FULL_SLOTS, build_tree, pack_trie, preorder, root_value
from pipeline.prove.tree_eval import eval_level, eval_tree, level_bits, tree_branch
from pipeline.prove.tree_sorted import (
    FULL_PATHS,
    collect_paths,
    field_bits,
    fits_one_key,
    radix_sort,
    tree_from_paths,
)

__all__ = [
    "PROVERS",
    "InsertBuilder",
    "SortedBuilder",
    "TreeProver",
    "eval_level",
    "eval_tree",
    "level_bits",
    "tree_bound_reference",
]


# ---------------------------------------------------------------- builders
def _node_arrays(cap: int) -> tuple[np.ndarray, ...]:
    """The build's per-node arrays: is_choice int8, label, points, first, sib, last, blk int32."""
    return (np.zeros(cap, np.int8), *(np.zeros(cap, np.int32) for _ in range(6)))


class InsertBuilder:
    """Builds class trees by :func:`build_tree` (any shape and alphabet), keeping the scratch
    arrays across classes (grown as needed). Same interface as
    :class:`pipeline.prove.tree_sorted.SortedBuilder`."""

    def __init__(self, rank: np.ndarray, order: np.ndarray, nbr_list: np.ndarray, deg: np.ndarray,
                 rec: np.ndarray, info: np.ndarray, n_faces: int, n_words: int):  # fmt: skip
        self.rank, self.order, self.nbr_list, self.deg = rank, order, nbr_list, deg
        self.rec, self.info = rec, info
        self.n_words = max(n_words, 1)
        self.word_seen = np.zeros(self.n_words, np.int64)
        self._tag = 0
        self._nodes = _node_arrays(1 << 16)
        self._slot = np.empty(1 << 18, np.int32)  # children's slot blocks
        self._seen = np.empty(1 << 16, np.int64)  # the (node, word) hash set
        self.n_nodes = 0

    def bounds(self, masks: np.ndarray, threshold: int) -> tuple[int, int]:
        """(sum bound, tree bound) of the class (``threshold`` is not needed: the tree and the
        sum bound come from one walk)."""
        while True:
            self._tag += 1
            is_choice, label, points, first, sib, last, blk = self._nodes
            n, total = build_tree(
                masks, self.rank, self.order, self.nbr_list, self.deg, self.rec, self.info,
                self.n_words, is_choice, label, points, first, sib, last, blk, self._slot,
                self._seen, self.word_seen, self._tag,
            )  # fmt: skip
            if n >= 0:
                break
            if n == FULL_NODES:
                self._nodes = _node_arrays(2 * self._nodes[0].shape[0])
            elif n == FULL_SLOTS:
                self._slot = np.empty(2 * self._slot.shape[0], np.int32)
            else:
                self._seen = np.empty(2 * self._seen.shape[0], np.int64)
        self.n_nodes = int(n)
        is_choice, _, points, first, sib = self._nodes[:5]
        return int(total), int(root_value(n, is_choice, points, first, sib))

    def preordered(self) -> tuple[np.ndarray, ...]:
        """The last tree built, in pre-order: (is_choice, label, points, parent, end)."""
        is_choice, label, points, first, sib = self._nodes[:5]
        return preorder(self.n_nodes, is_choice, label, points, first, sib)


class SortedBuilder:
    """Builds class trees by :func:`collect_paths`, :func:`radix_sort` and
    :func:`tree_from_paths`, keeping the arrays across classes (grown as needed)."""

    def __init__(self, rank: np.ndarray, order: np.ndarray, nbr_list: np.ndarray, deg: np.ndarray,
                 rec: np.ndarray, info: np.ndarray, n_faces: int, n_words: int):  # fmt: skip
        self.rank, self.order, self.nbr_list, self.deg = rank, order, nbr_list, deg
        self.rec, self.info = rec, info
        self.bits = field_bits(n_faces)
        self.key_bits = int(order.shape[0]) * self.bits
        self.word_seen = np.zeros(max(n_words, 1), np.int64)
        self.stamp = np.zeros(max(n_words, 1), np.int64)
        self._tag = 0
        self._stamp_tag = 0
        self._paths = self._path_arrays(1 << 15)
        self._tree = self._tree_arrays(1 << 16)
        self.n_nodes = 0

    @staticmethod
    def _path_arrays(cap: int) -> tuple[np.ndarray, ...]:
        """keys, trie nodes, and the radix sort's spare pair."""
        return tuple(np.empty(cap, t) for t in (np.uint64, np.int64, np.uint64, np.int64))

    @staticmethod
    def _tree_arrays(cap: int) -> tuple[np.ndarray, ...]:
        """is_choice, label, points, parent, end, val."""
        return (np.empty(cap, np.int8), *(np.empty(cap, np.int32) for _ in range(4)), np.empty(cap, np.int64))

    def bounds(self, masks: np.ndarray, threshold: int) -> tuple[int, int]:
        """(sum bound, tree bound) of the class; the tree is not built when the sum bound is
        already below ``threshold`` (the tree bound is then reported as the sum bound)."""
        while True:
            self._tag += 1
            keys, tnodes, tk, tv = self._paths
            n_paths, total = collect_paths(
                masks, self.rank, self.nbr_list, self.deg, self.rec, self.info, self.bits, keys,
                tnodes, self.word_seen, self._tag,
            )  # fmt: skip
            if n_paths != FULL_PATHS:
                break
            self._paths = self._path_arrays(2 * keys.shape[0])
        self.n_nodes = 0
        if total < threshold:
            return int(total), int(total)
        radix_sort(keys, tnodes, n_paths, tk, tv, self.key_bits)
        while True:
            n, used = tree_from_paths(
                keys, tnodes, n_paths, self.order, self.bits, self.rec, self.info, self.stamp,
                self._stamp_tag, *self._tree,
            )  # fmt: skip
            self._stamp_tag += int(used) + 1
            if n != FULL_NODES:
                break
            self._tree = self._tree_arrays(2 * self._tree[0].shape[0])
        self.n_nodes = int(n)
        return int(total), int(self._tree[5][0])

    def preordered(self) -> tuple[np.ndarray, ...]:
        """The last tree built, in pre-order: (is_choice, label, points, parent, end)."""
        return tuple(a[: self.n_nodes] for a in self._tree[:5])


# ---------------------------------------------------------------- prover


class TreeProver:
    """Same contract as :class:`pipeline.prove.search.ClassProver`, with the orderly-tree bound."""

    def __init__(
        self,
        geo: Geometry,
        lexicon: CompiledLexicon,
        trie: ProveTrie,
        threshold: int,
        enumerate_max: int = ENUMERATE_MAX,
        builder: str = "auto",
    ):
        """``builder``: ``sorted`` (:mod:`pipeline.prove.tree_sorted`, where a path fits one
        64-bit key), ``insert`` (:mod:`pipeline.prove.tree_build`, any shape) or ``auto`` (sorted
        where it fits)."""
        self.geo = geo
        self.lexicon = lexicon
        self.trie = trie
        self.threshold = threshold
        self.enumerate_max = enumerate_max
        self.order = split_order(geo)
        self.rank = np.empty(geo.n_cells, np.int64)
        self.rank[self.order] = np.arange(geo.n_cells)
        self.cheap = ClassProver(geo, lexicon, trie, threshold, enumerate_max)
        self.tree_nodes = 0  # size of the last tree built (for benchmarks)
        self.rec, self.info = pack_trie(trie.children, trie.node_word, trie.node_points)
        n_faces = int(trie.children.shape[1])
        sorted_ok = fits_one_key(geo.n_cells, n_faces)
        if builder == "sorted" and not sorted_ok:
            raise ValueError(
                f"the sorted builder needs cells x field bits <= 64: {geo.n_cells} cells, {n_faces} faces"
            )
        kind = SortedBuilder if builder == "sorted" or (builder == "auto" and sorted_ok) else InsertBuilder
        self.builder: SortedBuilder | InsertBuilder = kind(
            self.rank, self.order, geo.nbr_list, geo.deg, self.rec, self.info, n_faces, trie.n_words
        )

    def build(self, masks: np.ndarray) -> tuple[tuple[np.ndarray, ...], int]:
        """The class's tree in pre-order (see :func:`pipeline.prove.tree_build.preorder`) and
        its sum bound."""
        total, _ = self.builder.bounds(np.ascontiguousarray(masks, dtype=np.uint64), -(1 << 62))
        return self.builder.preordered(), total

    def root_bounds(self, masks: np.ndarray) -> tuple[int, int]:
        """(tree bound, sum bound) of the class."""
        total, root = self.builder.bounds(np.ascontiguousarray(masks, dtype=np.uint64), -(1 << 62))
        return root, total

    def tree_bound(self, masks: np.ndarray, forced: np.ndarray | None = None) -> int:
        """The tree bound of the class (with ``forced[cell] >= 0`` cells fixed)."""
        tree, _ = self.build(masks)
        if forced is None:
            forced = np.full(self.geo.n_cells, -1, np.int64)
        is_choice, label, points, parent, end = tree
        n = is_choice.shape[0]
        scratch = np.empty(n, np.int64), np.empty(n, np.int64)
        return int(eval_tree(is_choice, label, points, parent, end, forced, *scratch))

    def prove(self, masks: np.ndarray) -> ClassOutcome:
        masks = np.ascontiguousarray(masks, dtype=np.uint64)
        # the sum bound comes with the build; the max bound's walk would cost as much as the
        # build and rarely beats the tree, so it is not computed
        # most classes fall to the root bound: evaluate it on the raw build, relayout only the rest
        total, root = self.builder.bounds(masks, self.threshold)
        self.tree_nodes = self.builder.n_nodes
        if total < self.threshold:
            return ClassOutcome(root_bound=total)
        if root < self.threshold:
            return ClassOutcome(root_bound=root)
        tree = self.builder.preordered()
        sizes = [bin(int(m)).count("1") for m in masks]
        cells = [int(c) for c in self.order if sizes[c] > 1]
        faces = np.zeros((max(len(cells), 1), 64), np.int64)
        for lvl, c in enumerate(cells):
            fs = [f for f in range(64) if int(masks[c]) >> f & 1]
            faces[lvl, : len(fs)] = fs
        left = np.array(
            [int(np.prod([sizes[c] for c in cells[i:]])) for i in range(len(cells) + 1)], np.int64
        )
        is_choice, label, points, parent, end = tree
        root, nodes, leaves = tree_branch(
            is_choice, label, points, parent, end, np.array(cells, np.int64), faces,
            np.array([sizes[c] for c in cells], np.int64), left, self.threshold, self.enumerate_max,
            self.geo.n_cells,
        )  # fmt: skip
        out = ClassOutcome(root_bound=min(total, int(root)), nodes=int(nodes))
        for forced in leaves:
            sub = masks.copy()
            for cell in np.flatnonzero(forced >= 0):
                sub[cell] = np.uint64(1) << np.uint64(forced[cell])
            self.cheap._enumerate(sub, out)
        return out


#: Provers by name, for the job's switch.
PROVERS: dict[str, type[ClassProver] | type[TreeProver]] = {"sumax": ClassProver, "tree": TreeProver}


# ---------------------------------------------------------------- reference twin


def tree_bound_reference(
    masks: list[int],
    neighbours: list[list[int]],
    trie: ProveTrie,
    order: list[int],
    forced: dict[int, int] | None = None,
) -> int:
    """Plain-Python twin of the tree bound (for tests): nested dicts, a set per node for the
    de-duplication."""
    children = trie.children.tolist()
    node_word = trie.node_word.tolist()
    node_points = trie.node_points.tolist()
    rank = {c: i for i, c in enumerate(order)}
    forced = forced or {}
    # a SUM node: [points, {cell: {letter: SUM node}}, words counted here]
    root: list = [0, {}, set()]

    def insert(path: list[tuple[int, int]], word: int, pts: int) -> None:
        node = root
        for cell, face in sorted(path, key=lambda p: rank[p[0]]):
            node = node[1].setdefault(cell, {}).setdefault(face, [0, {}, set()])
        if word not in node[2]:
            node[2].add(word)
            node[0] += pts

    def walk(cell: int, tnode: int, path: list[tuple[int, int]]) -> None:
        for f in range(len(children[tnode])):
            child = children[tnode][f]
            if not masks[cell] >> f & 1 or child < 0:
                continue
            here = [*path, (cell, f)]
            if node_word[child] >= 0:
                insert(here, node_word[child], node_points[child])
            used = {c for c, _ in here}
            for nb in neighbours[cell]:
                if nb not in used:
                    walk(nb, child, here)

    for c in range(len(masks)):
        walk(c, 0, [])

    def value(node: list) -> int:
        total = node[0]
        for cell, letters in node[1].items():
            if cell in forced:
                total += value(letters[forced[cell]]) if forced[cell] in letters else 0
            else:
                total += max(value(s) for s in letters.values())
        return total

    return value(root)
