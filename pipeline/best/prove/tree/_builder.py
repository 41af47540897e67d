"""Class trees and their paths, built in arrays kept across classes (:class:`TreeBuilder`; the
kernels are :mod:`pipeline.best.prove.tree._build`'s and :mod:`pipeline.best.prove.tree._dedup`'s, the
prover that drives them :class:`pipeline.best.prove.tree.TreeProver`)."""

from __future__ import annotations

import numpy as np

from pipeline.best.prove._bounds import PackedTrie, ProveTrie, packed_trie
from pipeline.best.prove.tree._build import (
    FULL_NODES,
    FULL_PATHS,
    HUGE_PAGES,
    POINTS_OVERFLOW,
    VAL,
    collect_paths,
    field_bits,
    huge_pages,
    radix_sort,
    tree_from_paths,
    unpack_records,
    walk_state,
)
from pipeline.best.prove.tree._dedup import (
    FORCED_FLAG,
    derive_paths,
    drop_redundant,
    tree_value,
    zobrist_table,
)
from pipeline.boards import Geometry
from pipeline.errors import InternalError

#: The most paths a class tree is built from (48 bytes each while it is built: about 1.6 GB).
#: A class with more is split on its first split cell and each sub-class proved on its own
#: (its bound is then the largest of theirs): a 3x4 Hebrew class of two 10-letter buckets grew
#: its path arrays past 2**27 and the OOM killer took the worker at 13 GB.
MAX_PATHS = 1 << 25

#: Paths a builder's arrays hold from the start.
PATHS_KEPT = 1 << 15
#: How much the path arrays grow when a walk fills them (the walk then goes on where it stopped).
GROW = 8
#: Tree nodes the build's arrays get per path before the build, the rest room for lifting (13846:
#: 10.7M nodes of 4.3M paths; at 3 its lifting grew the arrays, 200 MB more at the peak).
NODES_PER_PATH = 4

#: After a chunk whose classes may have used more than this many bytes of the builder's arrays
#: (48 a path, 16 a tree node), they are allocated afresh (:meth:`TreeBuilder.release`): an idle
#: thread holds no more. Not after each class: fresh arrays fault in page by page (done after
#: each, 100 classes of the 3x4 corner recipe spent 6.7 of their 51.6 CPU s in the kernel).
RELEASE_BYTES = 16 << 20


class PathBudgetExceeded(Exception):
    """A class has more paths than the builder may hold (see :data:`MAX_PATHS`)."""


class TreeBuilder:
    """Builds class trees with :mod:`pipeline.best.prove.tree._build` (paths collected, sorted, read
    into a tree in pre-order), and sub-classes' paths from their parent's
    (:mod:`pipeline.best.prove.tree._dedup`), keeping its arrays across classes (grown as needed).
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
        n_words = max(trie.n_words, 1)
        self.word_seen = np.zeros(n_words, np.int64)
        self.stamp = np.zeros(n_words, np.int64)
        self._tag = 0
        self._stamp_tag = 0
        self._paths = self._path_arrays(PATHS_KEPT)
        self._walk = walk_state(geo.n_cells)
        self._tree = self._tree_arrays(1 << 16)
        self.n_nodes = 0
        self.n_paths = 0  # the last class's paths, sorted once its tree is built
        self._touched = 0  # bytes of the arrays used since the last release, at least
        # drop_redundant's scratch: a hash set of keys
        self._zob = zobrist_table()
        self._table = np.empty((1 << 10, 2), np.int64)

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
        """Node records (see :func:`pipeline.best.prove.tree._build.tree_from_paths`)."""
        return np.empty((cap, 4), np.int32)

    def arena(self) -> tuple[np.ndarray]:
        """The node records at full length: the last tree built, then room for lifted nodes
        (a 1-tuple: :func:`tree_branch`'s first argument)."""
        return (self._tree,)

    def grow_arena(self) -> None:
        """Half as much room again beyond the last tree built (the tree is kept); not double:
        the heavy 4x4 class 156513's lifting needed 13% more than its 78M-node tree, and
        doubling its records to 2.5 GB made most of its peak memory."""
        grown = self._tree_arrays(self._tree.shape[0] + max(self._tree.shape[0] // 2, 1 << 16))
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
        self._table = np.empty((1 << 10, 2), np.int64)
        self.n_nodes = self.n_paths = self._touched = 0

    def drop_spare(self) -> None:
        """Give back the radix sort's spare arrays (24 bytes a path, at their largest): a heavy
        class keeps its sorted paths while it is split, and the next walk gets new ones."""
        keys, wids, _, _ = self._paths
        self._paths = (keys, wids, np.empty((0, 2), np.uint64), np.empty(0, np.int64))

    def collect(self, masks: np.ndarray, max_paths: int | None = None) -> tuple[int, int]:
        """Walk the class ``masks`` and sort its paths (:meth:`paths` has them): (paths, sum
        bound). Raises :class:`PathBudgetExceeded` rather than hold more than ``max_paths``."""
        geo = self.geo
        self._tag += 1
        self._walk[2][0] = 0  # a new walk
        while True:
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
                self._walk,
            )
            if n_paths != FULL_PATHS:
                if max_paths is not None and n_paths > max_paths:
                    raise PathBudgetExceeded
                break
            if max_paths is not None and keys.shape[0] >= max_paths:
                raise PathBudgetExceeded
            # the walk goes on where it stopped, its paths so far copied into arrays 8x longer
            grown = GROW * keys.shape[0]
            cap = min(grown, max_paths) if max_paths is not None else grown
            more = (np.empty((cap, 2), np.uint64), np.empty(cap, np.int64))
            more[0][: keys.shape[0]] = keys
            more[1][: keys.shape[0]] = wids
            self._paths = (*more, np.empty((0, 2), np.uint64), np.empty(0, np.int64))
        if tk.shape[0] < n_paths:  # given back by drop_spare
            tk, tv = np.empty((keys.shape[0], 2), np.uint64), np.empty(keys.shape[0], np.int64)
            self._paths = (keys, wids, tk, tv)
        radix_sort(keys, wids, n_paths, tk, tv, *self.key_bits)
        self.n_nodes = 0
        self.n_paths = int(n_paths)
        self._touched = max(self._touched, int(n_paths) * 48)
        return int(n_paths), int(total)

    def paths(self) -> tuple[np.ndarray, np.ndarray]:
        """The last class's sorted paths (keys, word ids), as the builder's own arrays (views)."""
        return self._paths[0], self._paths[1]

    def bounds(self, masks: np.ndarray, threshold: int, max_paths: int | None = None) -> tuple[int, int]:
        """(sum bound, tree bound) of the class; the tree is not built when the sum bound is
        already below ``threshold`` (the tree bound is then reported as the sum bound).
        Raises :class:`PathBudgetExceeded` rather than hold more than ``max_paths`` paths."""
        n_paths, total = self.collect(masks, max_paths)
        if total < threshold:
            return total, total
        return total, self.build(self._paths[0], self._paths[1], n_paths)

    def derive(
        self,
        parent: tuple[np.ndarray, np.ndarray],
        n: int,
        cell: int,
        letter: int,
        out: tuple[np.ndarray, np.ndarray],
        dedup: bool,
    ) -> tuple[int, int]:
        """The sorted paths of the sub-class with ``cell`` forced to ``letter``, read off the
        first ``n`` of its parent's sorted paths ``parent`` into ``out`` (room for ``n``), the
        paths it makes redundant dropped when ``dedup`` (the deduping force,
        :mod:`pipeline.best.prove.tree._dedup`): (paths, sum bound). ``cell`` must be the parent's
        first cell in split order with several letters (its key field the most significant one
        in use)."""
        p = self.geo.n_cells - 1 - int(self.rank[cell])
        self._tag += 1
        n_paths, total = derive_paths(
            parent[0],
            parent[1],
            n,
            0 if p >= self.fields else 1,
            (p % self.fields) * self.bits,
            p,
            letter,
            self.bits,
            self.word_pts,
            out[0],
            out[1],
            self.word_seen,
            self._tag,
            FORCED_FLAG if dedup else np.int64(0),
        )
        if dedup:
            while True:
                n_left = drop_redundant(
                    out[0], out[1], n_paths, self.bits, self.fields, self._zob, letter, self._table
                )
                if n_left >= 0:
                    break
                self._table = np.empty((-1 - n_left, 2), np.int64)
                self._touched = max(self._touched, self._table.nbytes)
            n_paths = n_left
        return int(n_paths), int(total)

    def forced_bounds(
        self, parent: tuple[np.ndarray, np.ndarray], masks: np.ndarray, cell: int, letter: int, threshold: int
    ) -> tuple[int, int]:
        """:meth:`bounds` of the sub-class of a class whose sorted paths are ``parent`` (from
        :meth:`sorted_paths`) and masks ``masks`` with ``cell`` forced to ``letter``: the same
        bounds and tree as :meth:`bounds` of the sub-class, without walking the board again or
        sorting (:meth:`derive`, nothing dropped). ``cell`` must be the parent's first cell in
        split order with several letters, else a ValueError."""
        before = self.order[: int(self.rank[cell])]
        if bin(int(masks[cell])).count("1") < 2 or any(bin(int(masks[c])).count("1") > 1 for c in before):
            raise ValueError(f"cell {cell} is not the class's first split cell with several letters")
        n = parent[0].shape[0]
        if self._paths[0].shape[0] < n:
            self._paths = self._path_arrays(n)
        n_paths, total = self.derive(parent, n, cell, letter, (self._paths[0], self._paths[1]), False)
        self.n_nodes = 0
        self.n_paths = n_paths
        if total < threshold:
            return total, total
        return total, self.build(self._paths[0], self._paths[1], n_paths)

    def sorted_paths(self) -> tuple[np.ndarray, np.ndarray]:
        """Copies of the last class's sorted paths (keys, word ids), for :meth:`forced_bounds`."""
        return self._paths[0][: self.n_paths].copy(), self._paths[1][: self.n_paths].copy()

    def value(self, keys: np.ndarray, wids: np.ndarray, n_paths: int) -> int:
        """The value of the tree of the sorted paths ``keys, wids`` (the first ``n_paths``), the
        tree not built (:func:`pipeline.best.prove.tree._dedup.tree_value`)."""
        value, used = tree_value(
            keys,
            wids,
            n_paths,
            self.geo.n_cells,
            self.bits,
            self.fields,
            self.word_pts,
            self.stamp,
            self._stamp_tag,
        )
        self._stamp_tag += int(used) + 1
        return int(value)

    def build(self, keys: np.ndarray, wids: np.ndarray, n_paths: int) -> int:
        """The tree of the sorted paths ``keys, wids`` (the first ``n_paths``) in this builder's
        node records (:meth:`arena`); returns its value."""
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
        self._touched = max(self._touched, int(n_paths) * 16 * NODES_PER_PATH)
        return int(self._tree[0, VAL])

    def preordered(self) -> tuple[np.ndarray, ...]:
        """The last tree built, in pre-order, as :func:`eval_tree` takes it (:func:`unpack_records`)."""
        return unpack_records(self._tree[: self.n_nodes])
