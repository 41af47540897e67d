"""The orderly-tree bound of a board class and branch and bound inside the class (``TreeProver``).

The sum and max bounds of :mod:`pipeline.best.prove._bounds` are loose on strong classes, so the
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

A heavy (sub-)class, its bound above :data:`DEDUP_RATIO` x T and at least
:data:`DEDUP_PATHS` paths, is first split by the deduping force
(:mod:`pipeline.best.prove.tree._dedup`): one sub-class per letter of its next cell, each with its
paths read off its parent's sorted paths, the paths the forced letter makes redundant dropped,
and its own tree built; its tree, not the class's, is then branched on (a class split so never
builds its whole tree: its bound comes from the paths). Branching on a tree works in two ways
(:func:`pipeline.best.prove.tree._eval.tree_branch`): while a sub-class's bound is above
:data:`LIFT_RATIO` x T, the next cell of the split order is lifted (one merged tree per letter:
the forced letter's subtree merged into the rest, a max of sums instead of a sum of maxes, so
tighter); below it, the remaining cells are forced on that tree one by one with per-cell stacks
of pending CHOICE nodes, so a step costs only the forced cell's nodes. Sub-classes of at most
``enumerate_max`` boards (single boards in a class of :data:`SINGLE_NODES` tree nodes or more,
or one the deduping force split) are scored exactly by the solver's kernel, all the leaves of
a class's branching in a few calls (:meth:`pipeline.best.prove._search.ClassProver._enumerate_all`),
so every board reported is scored exactly. The walk also yields the sum bound (each spellable
word once), which can beat the tree bound on weak classes (the tree counts a word once per set
of pairs); the root bound is the smaller. A class of one board has no pairs: its tree bound is
its exact score. Neither the sum nor the max bound is an upper limit of the tree bound in
general.

Lifting above 1.7 x T and the deduping force above 5 x T are measured in
docs/methods/prover.md.

The tree lives in one array of 16-byte node records (numba kernels, ``nogil``, cached):
:class:`pipeline.best.prove.tree._builder.TreeBuilder` builds it with :mod:`pipeline.best.prove.tree._build`'s
kernels in pre-order with first-child / next-sibling
links, :mod:`pipeline.best.prove.tree._eval` lifts (new nodes after the tree, sharing its subtrees,
freed level by level) and bounds it.
:func:`pipeline.best.prove.tree._reference.tree_bound_reference` is the plain-Python twin the tests
check it against.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.best.prove._search import ClassOutcome, ClassProver, mask_faces, split_order
from pipeline.best.prove.tree._build import TAG
from pipeline.best.prove.tree._builder import MAX_PATHS, PathBudgetExceeded, TreeBuilder
from pipeline.best.prove.tree._eval import FULL_ARENA, FULL_ENTRIES, OVERFLOW, eval_tree, tree_branch
from pipeline.errors import InternalError

#: A (sub-)class whose bound is above this many times the threshold, with at least
#: :data:`DEDUP_PATHS` paths, is split on its next cell by the deduping force: each sub-class's
#: paths read off its parent's, those made redundant by the forced letter dropped, and its tree
#: built afresh (:mod:`pipeline.best.prove.tree._dedup`), rather than lifted. Its bounds are tighter
#: and its trees smaller than the lifted ones, but a rebuild costs more than a lift: the field
#: found it a loss on light classes and gates it by the bound too. 0 splits every class so.
DEDUP_RATIO = 5.0
#: The fewest paths a (sub-)class must have to be split by the deduping force (fewer: lifted).
DEDUP_PATHS = 1 << 18
#: A (sub-)class the deduping force may split learns its bound without building its tree when
#: it has this many paths or more (the tree would take 60 bytes a path, 1.2 GB on the 4x4 class
#: 156513; the value alone costs about half a build); with fewer the tree is built, its value
#: decides, and it is thrown away if the class is split after all.
VALUE_PATHS = 1 << 23

#: A (sub-)class whose bound is above this many times the threshold has its next cell lifted
#: (:func:`pipeline.best.prove.tree._eval.tree_branch`: one merged tree per letter, a tighter bound
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


# ---------------------------------------------------------------- prover


@dataclass(eq=False, repr=False)
class TreeProver(ClassProver):
    """:class:`pipeline.best.prove._search.ClassProver` with the orderly-tree bound: its own
    :meth:`prove`; the exact scoring of small sub-classes is inherited. Its settings follow the
    base class's: ``fields``: see :class:`TreeBuilder`; ``lift_ratio``, ``lift_keep``,
    ``single_nodes``, ``max_paths``, ``dedup_ratio``, ``dedup_paths``: see
    :data:`LIFT_RATIO`, :data:`LIFT_KEEP`, :data:`SINGLE_NODES`,
    :data:`pipeline.best.prove.tree._builder.MAX_PATHS`, :data:`DEDUP_RATIO` and :data:`DEDUP_PATHS`
    (a negative ratio: never)."""

    fields: int | None = None
    lift_ratio: float = LIFT_RATIO
    lift_keep: int = LIFT_KEEP
    single_nodes: int = SINGLE_NODES
    max_paths: int = MAX_PATHS
    dedup_ratio: float = DEDUP_RATIO
    dedup_paths: int = DEDUP_PATHS

    def __post_init__(self) -> None:
        super().__post_init__()
        geo, threshold = self.geo, self.threshold
        self.rank = np.empty(geo.n_cells, np.int64)
        self.rank[self.order] = np.arange(geo.n_cells)
        self.tree_nodes = 0  # size of the last tree built (for benchmarks)
        self.builder = TreeBuilder(geo, self.rank, self.order, self.trie, self.fields)
        self.lift_above = int(self.lift_ratio * threshold) if self.lift_ratio > 0 else 1 << 62
        self.dedup_above = int(self.dedup_ratio * threshold) if self.dedup_ratio >= 0 else 1 << 62
        self._leaves = np.empty((1024, geo.n_cells + 1), np.int64)  # tree_branch's leaves table
        self._levels: list[tuple[np.ndarray, np.ndarray]] = []  # the deduping force's paths by depth

    def use_order(self, masks: np.ndarray) -> None:
        """Split the class ``masks`` in its own :func:`split_order` (keys, lifting, forcing)."""
        order = split_order(self.geo, masks)
        self.order = self.builder.order = order
        self.rank[order] = np.arange(self.geo.n_cells)  # the builder's rank is this array

    def build(self, masks: np.ndarray) -> tuple[tuple[np.ndarray, ...], int]:
        """The class's tree in pre-order (see :func:`pipeline.best.prove.tree._build.tree_from_paths`)
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
        """Give back the builder's arrays (see :data:`pipeline.best.prove.tree._builder.RELEASE_BYTES`) and
        the deduping force's; after each chunk."""
        self.builder.release()
        self._levels = []

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

    def _prove(self, masks: np.ndarray, out: ClassOutcome) -> int:
        """Bound the class ``masks`` and search it; the bound is returned, boards found and
        branch nodes go to ``out``. The sum bound comes with the walk (the max bound's walk would
        cost as much and rarely beats the tree, so it is not computed)."""
        sizes = [bin(int(m)).count("1") for m in masks]
        budget = self.max_paths if max(sizes) > 1 else None  # one board's paths always fit
        try:
            n_paths, total = self.builder.collect(masks, budget)
        except PathBudgetExceeded:
            return self._split(masks, out)
        if total < self.threshold:
            return total
        return self._search(masks, out, self.builder.paths(), n_paths, total, 0, False)

    def _search(
        self,
        masks: np.ndarray,
        out: ClassOutcome,
        paths: tuple[np.ndarray, np.ndarray],
        n_paths: int,
        total: int,
        depth: int,
        heavy: bool,
    ) -> int:
        """Bound the (sub-)class ``masks`` whose sorted paths are the first ``n_paths`` of
        ``paths`` (sum bound ``total``), and search it: split by the deduping force while its
        bound is above :data:`DEDUP_RATIO` x T (``depth`` cells forced so; ``heavy``: a class
        split so, bounded down to single boards), else on its tree (lifting and forcing)."""
        sizes = [bin(int(m)).count("1") for m in masks]
        cells = [int(c) for c in self.order if sizes[c] > 1]
        b = self.builder
        may_split = total > self.dedup_above and n_paths >= self.dedup_paths and len(cells) > 1
        if may_split and n_paths >= VALUE_PATHS:
            bound = min(total, b.value(paths[0], paths[1], n_paths))  # no tree: maybe 1 GB
        else:
            bound = min(total, b.build(paths[0], paths[1], n_paths))
            self.tree_nodes = b.n_nodes
        if bound < self.threshold:
            return bound
        if may_split and bound > self.dedup_above:
            out.nodes += 1  # a branch node, as tree_branch counts its root
            self._dedup_split(masks, out, paths, n_paths, depth, cells[0])
            return bound
        if may_split and n_paths >= VALUE_PATHS:
            b.build(paths[0], paths[1], n_paths)
            self.tree_nodes = b.n_nodes
        faces = np.zeros((max(len(cells), 1), 64), np.int64)
        for lvl, c in enumerate(cells):
            fs = mask_faces(int(masks[c]))
            faces[lvl, : len(fs)] = fs
        left = np.array(
            [int(np.prod([sizes[c] for c in cells[i:]])) for i in range(len(cells) + 1)], np.int64
        )
        leaf_max = 1 if heavy or b.n_nodes >= self.single_nodes else self.enumerate_max
        # pending CHOICE nodes: no more than the tree has (a lifted tree has no more than its parent)
        n_entries = int(np.count_nonzero(b.arena()[0][: b.n_nodes, TAG] < 0)) + 1
        while True:
            (node,) = b.arena()
            status, nodes, leaves = tree_branch(
                node,
                b.n_nodes,
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
                b.grow_arena()
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

    def _dedup_split(
        self,
        masks: np.ndarray,
        out: ClassOutcome,
        paths: tuple[np.ndarray, np.ndarray],
        n_paths: int,
        depth: int,
        cell: int,
    ) -> None:
        """The deduping force: each letter's sub-class of ``cell`` (the next split cell) gets
        its paths read off ``paths`` with those the letter makes redundant dropped, into this
        depth's arrays, and is searched on its own (:meth:`_search`)."""
        if depth == 0:
            self.builder.drop_spare()  # the class's paths stay, the sort's spare is not needed
        while len(self._levels) <= depth:
            self._levels.append((np.empty((0, 2), np.uint64), np.empty(0, np.int64)))
        if self._levels[depth][1].shape[0] < n_paths:
            self._levels[depth] = (np.empty((n_paths, 2), np.uint64), np.empty(n_paths, np.int64))
        child = self._levels[depth]
        for f in mask_faces(int(masks[cell])):
            sub = masks.copy()
            sub[cell] = np.uint64(1) << np.uint64(f)
            n_sub, total = self.builder.derive(paths, n_paths, cell, f, child, True)
            if total >= self.threshold:
                self._search(sub, out, child, n_sub, total, depth + 1, True)


#: Provers by name, for the job's switch.
PROVERS: dict[str, type[ClassProver]] = {"sumax": ClassProver, "tree": TreeProver}
