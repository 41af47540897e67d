"""The orderly-tree bound of a board class and branch and bound inside the class (``TreeProver``).

The sum and max bounds of :mod:`pipeline.prove.bounds` are loose on strong classes, so the
sum/max prover splits far too many sub-classes. The tree bound keeps, per class, a tree of
alternating nodes:

* a SUM node holds the points of the words that end at it plus the values of all its children;
* a CHOICE node stands for one cell's letter choice; its value is the best of its letter
  children (only the forced letter's child once the cell is forced).

Every word a board of the class can spell is inserted as its (cell, letter) pairs sorted by the
split order's rank of the cell ("orderly": the choice node of a cell can only sit where the
cells before it in the split order have been decided), so one set of pairs reaches one SUM
node. Cells with a single letter offer no choice and are left out of the pairs. A word counts
once per (node, word): paths that spell the same word over the same pairs meet at the same node
and are de-duplicated there.

Soundness: fix a board of the class and take, at each choice node, that board's letter. The
value is then the points summed over every (word, set of pairs) the board can spell, which is
at least the board's score (a word counts once however many paths spell it); taking the best
letter instead can only raise it. Forcing a cell keeps this argument for the boards that agree
with the forced letters, so the forced bound is a bound of the sub-class.

The tree is built once per class. Branching works on it in two ways
(:func:`pipeline.prove.tree_eval.tree_branch`): while a sub-class's bound is above
:data:`LIFT_RATIO` x T, the next cell of the split order is lifted (one merged tree per letter:
the forced letter's subtree merged into the rest, a max of sums instead of a sum of maxes, so
tighter); below it, the remaining cells are forced on that tree one by one with per-cell stacks
of pending CHOICE nodes, so a step costs only the forced cell's nodes. Sub-classes of at most
``enumerate_max`` boards (single boards in a class of :data:`SINGLE_NODES` tree nodes or more)
are scored exactly by the solver's kernel, all the leaves of a class's
branching in a few calls (:meth:`pipeline.prove.search.ClassProver._enumerate_all`), so every
board reported is scored exactly. The build also yields the sum bound (each spellable
word once), which can beat the tree bound on weak classes (the tree counts a word once per set
of pairs); the root bound is the smaller. A class of one board has no pairs: its tree bound is
its exact score. Neither the sum nor the max bound is an upper limit of the tree bound in
general.

Lifting above 1.7 x T, and rebuilding sub-class trees from sorted paths
(:func:`pipeline.prove.tree_build.derive_paths`, kept but off: :data:`REBUILD_NODES`), are
measured in docs/methods/prover.md.

The tree lives in one array of 16-byte node records (numba kernels, ``nogil``, cached):
:mod:`pipeline.prove.tree_build` builds it in pre-order with first-child / next-sibling
links, :mod:`pipeline.prove.tree_eval` lifts (new nodes after the tree, sharing its subtrees,
freed level by level) and bounds it.
:func:`pipeline.prove.tree_reference.tree_bound_reference` is the plain-Python twin the tests
check it against.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pipeline.boards import Geometry
from pipeline.errors import InternalError
from pipeline.lexicon import CompiledLexicon
from pipeline.prove.bounds import PackedTrie, ProveTrie, packed_trie
from pipeline.prove.search import ENUMERATE_MAX, ClassOutcome, ClassProver, mask_faces, split_order
from pipeline.prove.tree_build import (
    FULL_NODES,
    FULL_PATHS,
    HUGE_PAGES,
    POINTS_OVERFLOW,
    TAG,
    VAL,
    collect_paths,
    derive_paths,
    field_bits,
    huge_pages,
    max_cells,
    radix_sort,
    tree_from_paths,
    unpack_records,
)
from pipeline.prove.tree_eval import FULL_ARENA, FULL_ENTRIES, OVERFLOW, eval_tree, tree_branch

__all__ = ["PROVERS", "TreeBuilder", "TreeProver", "eval_tree", "max_cells", "packed_trie", "tree_branch"]


#: Trees bigger than this are split by rebuilding each sub-class's tree rather than by lifting
#: (see the module doc: off, as lifting measured faster).
REBUILD_NODES = 1 << 62

#: The most paths a class tree is built from (48 bytes each while it is built: about 1.6 GB).
#: A class with more is split on its first split cell and each sub-class proved on its own
#: (its bound is then the largest of theirs): a 3x4 Hebrew class of two 10-letter buckets grew
#: its path arrays past 2**27 and the OOM killer took the worker at 13 GB.
MAX_PATHS = 1 << 25

#: Paths a builder's arrays hold from the start.
PATHS_KEPT = 1 << 15
#: How much the path arrays grow when a walk fills them (the walk then starts again).
GROW = 8
#: Tree nodes the build's arrays get per path before the build, the rest room for lifting (13846:
#: 10.7M nodes of 4.3M paths; at 3 its lifting grew the arrays, 200 MB more at the peak).
NODES_PER_PATH = 4

#: After a chunk whose classes may have used more than this many bytes of the builder's arrays
#: (48 a path, 16 a tree node), they are allocated afresh (:meth:`TreeProver.release`): an idle
#: thread holds no more. Not after each class: fresh arrays fault in page by page (done after
#: each, 100 classes of the 3x4 corner recipe spent 6.7 of their 51.6 CPU s in the kernel).
RELEASE_BYTES = 16 << 20


class PathBudgetExceeded(Exception):
    """A class has more paths than the builder may hold (see :data:`MAX_PATHS`)."""


#: A (sub-)class whose bound is above this many times the threshold has its next cell lifted
#: (:func:`pipeline.prove.tree_eval.tree_branch`: one merged tree per letter, a tighter bound
#: than forcing the cell on the tree); below it the remaining cells are forced on the tree.
#: 0 never lifts. The field's C++ prover lifts while the bound is above about 1.7 x T.
LIFT_RATIO = 1.7

#: A class whose tree has at least this many nodes is bounded down to single boards (only the
#: boards whose own bound reaches T are scored) rather than to sub-classes of
#: ``enumerate_max`` boards. On the two heavy 3x4 corner classes 13846 and 16762 (10.7M and
#: 13.5M nodes; ENABLE2K, T = 1500) that scored 18,329 boards instead of 247,758 on the first
#: and cut the CPU 26%; on light classes (3x3 and 3x4, 4 buckets) it made no difference
#: either way, so they keep ``enumerate_max``.
SINGLE_NODES = 1 << 20

#: Cells left to force on the tree however high the bound: lifting stops once a sub-class has
#: no more than this many cells with several letters left (the field's C++ stops lifting at
#: that depth too, four cells before the last). 0 lifts down to the last cell: 4 measured the
#: same CPU on the heavy 3x4 corner classes 13846 and 16762 (ratio 1.006 in alternating runs).
LIFT_KEEP = 0


# ---------------------------------------------------------------- builder


class TreeBuilder:
    """Builds class trees with :mod:`pipeline.prove.tree_build` (paths collected, sorted, read
    into a tree in pre-order), keeping its arrays across classes (grown as needed).
    ``fields`` (key fields per 64-bit word) is for tests, which lower it to exercise keys
    spread over both words on small shapes."""

    def __init__(
        self,
        geo: Geometry,
        rank: np.ndarray,
        order: np.ndarray,
        trie: ProveTrie | PackedTrie,
        fields: int | None = None,
    ):
        huge_pages(HUGE_PAGES)
        packed = trie if isinstance(trie, PackedTrie) else packed_trie(trie)
        n_faces = packed.n_faces
        self.bits = field_bits(n_faces)
        self.fields = fields if fields is not None else 64 // self.bits
        if geo.n_cells > 2 * self.fields:
            raise ValueError(f"tree bound: at most {2 * self.fields} cells with {n_faces} faces")
        low = min(geo.n_cells, self.fields)
        self.key_bits = (low * self.bits, (geo.n_cells - low) * self.bits)
        self.geo, self.rank, self.order = geo, rank, order
        self.rec, self.word_pts = packed.rec, packed.word_pts  # shared, read only
        self.word_seen = np.zeros(max(trie.n_words, 1), np.int64)
        self.stamp = np.zeros(max(trie.n_words, 1), np.int64)
        self._tag = 0
        self._stamp_tag = 0
        self._paths = self._path_arrays(PATHS_KEPT)
        self._tree = self._tree_arrays(1 << 16)
        self.n_nodes = 0
        self.n_paths = 0  # the last class's paths, sorted once its tree is built
        self._touched = 0  # bytes of the arrays used since the last release, at least

    @staticmethod
    def _path_arrays(cap: int) -> tuple[np.ndarray, ...]:
        """keys, word ids (with the used fields), and the radix sort's spare pair."""
        return (
            np.empty((cap, 2), np.uint64),
            np.empty(cap, np.int64),
            np.empty((cap, 2), np.uint64),
            np.empty(cap, np.int64),
        )

    @staticmethod
    def _tree_arrays(cap: int) -> np.ndarray:
        """Node records (see :func:`pipeline.prove.tree_build.tree_from_paths`)."""
        return np.empty((cap, 4), np.int32)

    def arena(self) -> tuple[np.ndarray]:
        """The node records at full length: the last tree built, then room for lifted nodes
        (a 1-tuple: :func:`tree_branch`'s first argument)."""
        return (self._tree,)

    def grow_arena(self) -> None:
        """Double the room beyond the last tree built (the tree is kept)."""
        grown = self._tree_arrays(2 * self._tree.shape[0])
        grown[: self.n_nodes] = self._tree[: self.n_nodes]
        self._tree = grown
        self._touched = max(self._touched, grown.nbytes // 2)

    def release(self) -> None:
        """Give back the arrays' pages if more than :data:`RELEASE_BYTES` may have been used
        since the last release (the last tree is lost then)."""
        if self._touched <= RELEASE_BYTES:
            return
        self._paths = self._path_arrays(self._paths[0].shape[0])
        self._tree = self._tree_arrays(self._tree.shape[0])
        self.n_nodes = self.n_paths = self._touched = 0

    def bounds(self, masks: np.ndarray, threshold: int, max_paths: int | None = None) -> tuple[int, int]:
        """(sum bound, tree bound) of the class; the tree is not built when the sum bound is
        already below ``threshold`` (the tree bound is then reported as the sum bound).
        Raises :class:`PathBudgetExceeded` rather than hold more than ``max_paths`` paths."""
        geo = self.geo
        while True:
            self._tag += 1
            keys, wids, tk, tv = self._paths
            n_paths, total = collect_paths(
                masks,
                self.rank,
                geo.nbr_list,
                geo.deg,
                self.rec,
                self.word_pts,
                self.bits,
                self.fields,
                keys,
                wids,
                self.word_seen,
                self._tag,
            )
            if n_paths != FULL_PATHS:
                if max_paths is not None and n_paths > max_paths:
                    raise PathBudgetExceeded
                break
            if max_paths is not None and keys.shape[0] >= max_paths:
                raise PathBudgetExceeded
            # the walk starts again from scratch: grow 8x, so a heavy class walks at most
            # 1/7 more than once (doubling walked it about twice, 9 starts on 13846)
            grown = GROW * keys.shape[0]
            self._paths = self._path_arrays(min(grown, max_paths) if max_paths is not None else grown)
        self.n_nodes = self.n_paths = 0
        if total < threshold:
            return int(total), int(total)
        radix_sort(keys, wids, n_paths, tk, tv, *self.key_bits)
        return self._build(n_paths, total)

    def forced_bounds(
        self, parent: tuple[np.ndarray, np.ndarray], masks: np.ndarray, cell: int, letter: int, threshold: int
    ) -> tuple[int, int]:
        """:meth:`bounds` of the sub-class of a class whose sorted paths are ``parent`` (from
        :meth:`sorted_paths`) and masks ``masks`` with ``cell`` forced to ``letter``: the same
        bounds and tree as :meth:`bounds` of the sub-class, without walking the board again or
        sorting. ``cell`` must be the parent's first cell in split order with several letters
        (:func:`derive_paths` relies on its key field being the most significant one in use),
        else a ValueError."""
        before = self.order[: int(self.rank[cell])]
        if bin(int(masks[cell])).count("1") < 2 or any(bin(int(masks[c])).count("1") > 1 for c in before):
            raise ValueError(f"cell {cell} is not the class's first split cell with several letters")
        keys, wids = parent
        n = keys.shape[0]
        if self._paths[0].shape[0] < n:
            self._paths = self._path_arrays(n)
        p = self.geo.n_cells - 1 - int(self.rank[cell])
        self._tag += 1
        out_keys, out_wids, _, _ = self._paths
        n_paths, total = derive_paths(
            keys,
            wids,
            n,
            0 if p >= self.fields else 1,
            (p % self.fields) * self.bits,
            p,
            letter,
            self.bits,
            self.word_pts,
            out_keys,
            out_wids,
            self.word_seen,
            self._tag,
        )
        self.n_nodes = self.n_paths = 0
        if total < threshold:
            return int(total), int(total)
        return self._build(n_paths, total)

    def sorted_paths(self) -> tuple[np.ndarray, np.ndarray]:
        """Copies of the last class's sorted paths (keys, word ids), for :meth:`forced_bounds`."""
        return self._paths[0][: self.n_paths].copy(), self._paths[1][: self.n_paths].copy()

    def _build(self, n_paths: int, total: int) -> tuple[int, int]:
        keys, wids = self._paths[0], self._paths[1]
        if self._tree.shape[0] < NODES_PER_PATH * n_paths:
            # sized from the path count, so the tree is rarely read twice for want of room
            self._tree = self._tree_arrays(int(NODES_PER_PATH * n_paths))
        while True:
            n, used = tree_from_paths(
                keys,
                wids,
                n_paths,
                self.order,
                self.bits,
                self.fields,
                self.word_pts,
                self.stamp,
                self._stamp_tag,
                self._tree,
            )
            self._stamp_tag += int(used) + 1
            if n == POINTS_OVERFLOW:
                raise InternalError("tree bound: a node's points overflow its record")
            if n != FULL_NODES:
                break
            self._tree = self._tree_arrays(2 * self._tree.shape[0])
        self.n_nodes = int(n)
        self.n_paths = int(n_paths)
        self._touched = max(self._touched, int(n_paths) * (48 + 16 * NODES_PER_PATH))
        return int(total), int(self._tree[0, VAL])

    def preordered(self) -> tuple[np.ndarray, ...]:
        """The last tree built, in pre-order, as :func:`eval_tree` takes it (:func:`unpack_records`)."""
        return unpack_records(self._tree[: self.n_nodes])


# ---------------------------------------------------------------- prover


class TreeProver(ClassProver):
    """:class:`pipeline.prove.search.ClassProver` with the orderly-tree bound: its own
    :meth:`prove`; the exact scoring of small sub-classes is inherited."""

    def __init__(
        self,
        geo: Geometry,
        lexicon: CompiledLexicon,
        trie: ProveTrie | PackedTrie,
        threshold: int,
        enumerate_max: int = ENUMERATE_MAX,
        fields: int | None = None,
        rebuild_nodes: int = REBUILD_NODES,
        lift_ratio: float = LIFT_RATIO,
        lift_keep: int = LIFT_KEEP,
        single_nodes: int = SINGLE_NODES,
        derive: bool = True,
        max_paths: int = MAX_PATHS,
    ):
        """``fields``: see :class:`TreeBuilder`; ``rebuild_nodes``, ``lift_ratio``,
        ``lift_keep``, ``single_nodes``: see :data:`REBUILD_NODES`, :data:`LIFT_RATIO`,
        :data:`LIFT_KEEP` and :data:`SINGLE_NODES`;
        ``derive``: a sub-class's tree is built from its parent's sorted paths
        (:meth:`TreeBuilder.forced_bounds`) rather than by walking the board again (the same
        tree; False for tests and benchmarks);
        ``max_paths``: see :data:`MAX_PATHS`."""
        super().__init__(geo, lexicon, trie, threshold, enumerate_max)
        self.rank = np.empty(geo.n_cells, np.int64)
        self.rank[self.order] = np.arange(geo.n_cells)
        self.tree_nodes = 0  # size of the last tree built (for benchmarks)
        self.builder = TreeBuilder(geo, self.rank, self.order, trie, fields)
        self.rebuild_nodes = rebuild_nodes
        self.derive = derive
        self.max_paths = max_paths
        self.lift_above = int(lift_ratio * threshold) if lift_ratio > 0 else 1 << 62
        self.lift_keep = lift_keep
        self.single_nodes = single_nodes
        self._leaves = np.empty((1024, geo.n_cells + 1), np.int64)  # tree_branch's leaves table

    def use_order(self, masks: np.ndarray) -> None:
        """Split the class ``masks`` in its own :func:`split_order` (keys, lifting, forcing)."""
        order = split_order(self.geo, masks)
        self.order = self.builder.order = order
        self.rank[order] = np.arange(self.geo.n_cells)  # the builder's rank is this array

    def build(self, masks: np.ndarray) -> tuple[tuple[np.ndarray, ...], int]:
        """The class's tree in pre-order (see :func:`pipeline.prove.tree_build.tree_from_paths`)
        and its sum bound."""
        self.use_order(masks)
        total, _ = self.builder.bounds(np.ascontiguousarray(masks, dtype=np.uint64), -(1 << 62))
        return self.builder.preordered(), total

    def root_bounds(self, masks: np.ndarray) -> tuple[int, int]:
        """(tree bound, sum bound) of the class."""
        self.use_order(masks)
        total, root = self.builder.bounds(np.ascontiguousarray(masks, dtype=np.uint64), -(1 << 62))
        return root, total

    def tree_bound(self, masks: np.ndarray, forced: np.ndarray | None = None) -> int:
        """The tree bound of the class (with ``forced[cell] >= 0`` cells fixed)."""
        tree, _ = self.build(masks)
        if forced is None:
            forced = np.full(self.geo.n_cells, -1, np.int64)
        is_choice, label, points, first, nxt = tree
        scratch = np.empty(len(is_choice), np.int64)
        return int(eval_tree(is_choice, label, points, first, nxt, forced, scratch))

    def prove(self, masks: np.ndarray) -> ClassOutcome:
        masks = np.ascontiguousarray(masks, dtype=np.uint64)
        self.use_order(masks)
        out = ClassOutcome(root_bound=0)
        out.root_bound = self._prove(masks, out)
        return out

    def release(self) -> None:
        """Give back the builder's arrays (see :data:`RELEASE_BYTES`); after each chunk."""
        self.builder.release()

    def _split(self, masks: np.ndarray, out: ClassOutcome) -> int:
        """A class with too many paths for one tree: each sub-class of its first split cell is
        proved on its own (every board of the class is in exactly one); the class's bound is
        the largest of theirs."""
        out.nodes += 1
        cell = next(int(c) for c in self.order if bin(int(masks[c])).count("1") > 1)
        bound = 0
        for f in mask_faces(int(masks[cell])):
            sub = masks.copy()
            sub[cell] = np.uint64(1) << np.uint64(f)
            bound = max(bound, self._prove(sub, out))
        return bound

    def _prove(self, masks: np.ndarray, out: ClassOutcome, derived: tuple[Any, ...] | None = None) -> int:
        """Bound the (sub-)class ``masks`` and search it; the bound is returned, boards found
        and branch nodes go to ``out``. The sum bound comes with the build (the max bound's walk
        would cost as much and rarely beats the tree, so it is not computed). ``derived``: (its
        parent class's sorted paths and masks, the cell forced, its letter) when its paths
        are read off its parent's (:meth:`TreeBuilder.forced_bounds`)."""
        sizes = [bin(int(m)).count("1") for m in masks]
        if derived is None or derived[0] is None:
            budget = self.max_paths if max(sizes) > 1 else None  # one board's paths always fit
            try:
                total, root = self.builder.bounds(masks, self.threshold, budget)
            except PathBudgetExceeded:
                return self._split(masks, out)
        else:
            paths, parent_masks, cell, letter = derived
            total, root = self.builder.forced_bounds(paths, parent_masks, cell, letter, self.threshold)
        self.tree_nodes = self.builder.n_nodes
        bound = min(total, root)
        if bound < self.threshold:
            return bound
        cells = [int(c) for c in self.order if sizes[c] > 1]
        boards = int(np.prod([sizes[c] for c in cells]))
        if self.builder.n_nodes > self.rebuild_nodes and boards > self.enumerate_max:
            # a big tree: rebuild one per letter of the next split cell (each sub-class's tree
            # merges the paths the forced letter made alike, words de-duplicated) rather than lift it
            out.nodes += 1
            paths = self.builder.sorted_paths() if self.derive else None
            for f in mask_faces(int(masks[cells[0]])):
                sub = masks.copy()
                sub[cells[0]] = np.uint64(1) << np.uint64(f)
                self._prove(sub, out, (paths, masks, cells[0], f))
            return bound
        faces = np.zeros((max(len(cells), 1), 64), np.int64)
        for lvl, c in enumerate(cells):
            fs = mask_faces(int(masks[c]))
            faces[lvl, : len(fs)] = fs
        left = np.array(
            [int(np.prod([sizes[c] for c in cells[i:]])) for i in range(len(cells) + 1)], np.int64
        )
        leaf_max = 1 if self.builder.n_nodes >= self.single_nodes else self.enumerate_max
        # pending CHOICE nodes: no more than the tree has (a lifted tree has no more than its parent)
        n_entries = int(np.count_nonzero(self.builder.arena()[0][: self.builder.n_nodes, TAG] < 0)) + 1
        while True:
            (node,) = self.builder.arena()
            status, nodes, leaves = tree_branch(
                node,
                self.builder.n_nodes,
                self.rank,
                np.array(cells, np.int64),
                faces,
                np.array([sizes[c] for c in cells], np.int64),
                left,
                self.threshold,
                leaf_max,
                self.lift_above,
                max(len(cells) - self.lift_keep, 0),
                n_entries,
                self._leaves,
            )
            if status == 0:
                break
            if status == FULL_ARENA:
                self.builder.grow_arena()
            elif status == FULL_ENTRIES:
                n_entries *= 2
            elif status == OVERFLOW:
                raise InternalError("tree bound: a lifted node's points overflow its record")
            else:
                raise InternalError(f"tree branch: unknown status {status}")
        out.nodes += int(nodes)
        if leaves.shape[0] > self._leaves.shape[0]:  # the branching grew the table: keep as much
            self._leaves = np.empty((2 * leaves.shape[0], self.geo.n_cells + 1), np.int64)
        forced = leaves[:, : self.geo.n_cells]
        subs = np.where(forced >= 0, np.uint64(1) << np.maximum(forced, 0).astype(np.uint64), masks[None, :])
        self._enumerate_all(subs, out)
        return bound


#: Provers by name, for the job's switch.
PROVERS: dict[str, type[ClassProver]] = {"sumax": ClassProver, "tree": TreeProver}
