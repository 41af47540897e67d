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

The tree lives in flat arrays (numba kernels, ``nogil``, cached) laid out in pre-order, so a
subtree is a contiguous index range and a forced evaluation skips the letters not chosen; the
branch and bound (:func:`tree_branch`) recomputes at each level only the subtrees that hold a
choice of the cell just forced.
:func:`tree_bound_reference` is the plain-Python twin used by the tests.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pipeline.boards import Geometry
from pipeline.lexicon import CompiledLexicon
from pipeline.prove.bounds import ProveTrie
from pipeline.prove.search import ENUMERATE_MAX, ClassOutcome, ClassProver, split_order

#: Fibonacci hashing multiplier (odd, fits int64; products wrap).
HASH_MUL = 0x1E3779B97F4A7C15


# ---------------------------------------------------------------- numba kernels: build


@njit(nogil=True, cache=True)
def _hash_slot(keys, key):
    """Slot of ``key`` in the open-addressing table ``keys`` (-1 = empty): its own or the
    empty slot where it belongs."""
    mask = np.uint64(keys.shape[0] - 1)
    x = np.uint64(key) * np.uint64(HASH_MUL)
    h = np.int64((x ^ (x >> np.uint64(29))) & mask)
    while keys[h] != -1 and keys[h] != key:
        h = (h + 1) & np.int64(mask)
    return h


@njit(nogil=True, cache=True)
def _popcount(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(nogil=True, cache=True)
def compact_trie(children, node_word, node_points, kids, repeats):
    """The prover's dense trie renumbered breadth first so a node's children are consecutive:
    child of face f = ``base[node] + popcount(kids[node] & (bit f - 1))``. About a tenth of
    the dense table's memory, which keeps the build's walk in cache. Returns (base int64,
    node_word, node_points, kids, repeats) in the new numbering."""
    n_nodes, n_faces = children.shape
    new_id = np.full(n_nodes, -1, np.int64)
    queue = np.empty(n_nodes, np.int64)
    queue[0] = 0
    new_id[0] = 0
    n_queued = 1
    base = np.zeros(n_nodes, np.int64)
    for head in range(n_nodes):
        if head >= n_queued:
            break
        node = queue[head]
        base[head] = n_queued
        for f in range(n_faces):
            c = children[node, f]
            if c >= 0:
                new_id[c] = n_queued
                queue[n_queued] = c
                n_queued += 1
    o_word = np.empty(n_queued, node_word.dtype)
    o_points = np.empty(n_queued, node_points.dtype)
    o_kids = np.empty(n_queued, kids.dtype)
    o_rep = np.empty(n_queued, repeats.dtype)
    for i in range(n_queued):
        old = queue[i]
        o_word[i] = node_word[old]
        o_points[i] = node_points[old]
        o_kids[i] = kids[old]
        o_rep[i] = repeats[old]
    return base[:n_queued].copy(), o_word, o_points, o_kids, o_rep


@njit(nogil=True, cache=True)
def repeated_faces(children):
    """int8 [trie nodes]: 1 when the node's face sequence repeats a face (a child's index is
    above its parent's, so one pass in index order sees every parent first)."""
    n_nodes, n_faces = children.shape
    used = np.zeros(n_nodes, np.uint64)
    rep = np.zeros(n_nodes, np.int8)
    for node in range(n_nodes):
        for f in range(n_faces):
            c = children[node, f]
            if c >= 0:
                bit = np.uint64(1) << np.uint64(f)
                used[c] = used[node] | bit
                rep[c] = rep[node] | (1 if used[node] & bit else 0)
    return rep


@njit(nogil=True, cache=True)
def _find_child(first, sib, label, node, want):
    c = first[node]
    while c >= 0:
        if label[c] == want:
            return c
        c = sib[c]
    return -1


@njit(nogil=True, cache=True)
def build_tree(
    masks, rank, order, nbr_list, deg, base, node_word, node_points, kids, n_words, repeats,
    is_choice, label, points, first, sib, last, seen, word_seen, tag,
):  # fmt: skip
    """Build the orderly tree of the class ``masks`` (uint64 [cells]), cells sorted by ``rank``,
    into the caller's arrays (reused across classes: a node is initialised when created);
    ``order`` is the cells by rank. The
    trie is the compact one of :func:`compact_trie` (``base``, ``kids``, ...).

    Node 0 is the root SUM node; a CHOICE node's label is its cell, a SUM node's its letter
    (face index); children are ``first``/``sib`` lists (``last`` keeps insertion order).
    ``seen`` is the (node, word) hash set; only words with a repeated face (``repeats[trie
    node]``) need it, as a word of distinct faces has one path over a given cell set and letters.
    Returns (node count, sum bound: each spellable word once, via ``word_seen[word] == tag``);
    the count is -1 when the node arrays are too small, -2 when the hash set is over half full
    (the caller grows them and retries).
    Kept apart from the pre-order relayout and free of reallocation, which slowed this loop.
    """
    n = masks.shape[0]
    one = np.uint64(1)
    zero = np.uint64(0)
    cap = is_choice.shape[0]
    half = seen.shape[0] // 2
    seen[:] = -1
    is_choice[0] = 0
    label[0] = -1
    points[0] = 0
    first[0] = -1
    sib[0] = -1
    last[0] = -1
    n_nodes = 1
    n_seen = 0
    total_sum = np.int64(0)
    st_cell = np.empty(n, np.int64)
    st_node = np.empty(n, np.int64)
    st_child = np.empty(n, np.int64)
    st_k = np.empty(n, np.int64)
    st_rem = np.empty(n, np.uint64)
    # The path's pairs sorted by the split order are the set bits of ``urank`` (cells by rank)
    # with ``face_at``; ``nod[i]`` is the SUM node after sorted pairs 0..i, up to date for the
    # first ``gvalid`` pairs. A pair entering, changing or leaving at sorted position j leaves
    # the nodes before j valid, so consecutive insertions share their sorted prefix.
    nod = np.empty(n, np.int64)
    face_at = np.empty(n, np.int64)
    gvalid = 0
    for start in range(n):
        if masks[start] & kids[0] == zero:
            continue
        d = 0
        st_cell[0] = start
        st_node[0] = 0
        st_rem[0] = masks[start] & kids[0]
        st_child[0] = -1
        used = one << np.uint64(start)
        urank = one << np.uint64(rank[start])
        while True:
            if st_child[d] < 0:
                rem = st_rem[d]
                if rem == zero:
                    c = st_cell[d]
                    used ^= one << np.uint64(c)
                    rbit = one << np.uint64(rank[c])
                    urank ^= rbit
                    gvalid = min(gvalid, _popcount(urank & (rbit - one)))
                    d -= 1
                    if d < 0:
                        break
                    continue
                low = rem & (~rem + one)
                st_rem[d] = rem ^ low
                f = 0
                while (low >> np.uint64(f)) != one:
                    f += 1
                child = base[st_node[d]] + _popcount(kids[st_node[d]] & (low - one))
                st_child[d] = child
                st_k[d] = 0
                c = st_cell[d]
                face_at[c] = f
                rbit = one << np.uint64(rank[c])
                gvalid = min(gvalid, _popcount(urank & (rbit - one)))
                w = node_word[child]
                if w >= 0:
                    if word_seen[w] != tag:
                        word_seen[w] = tag
                        total_sum += node_points[child]
                    if n_nodes + 2 * (d + 1) > cap:
                        return -1, total_sum
                    node = 0 if gvalid == 0 else nod[gvalid - 1]
                    bits = urank
                    for _ in range(gvalid):
                        bits &= bits - one
                    for i in range(gvalid, d + 1):
                        low_r = bits & (~bits + one)
                        bits ^= low_r
                        cell = order[_popcount(low_r - one)]
                        face = face_at[cell]
                        for level in range(2):
                            want = cell if level == 0 else face
                            nxt = _find_child(first, sib, label, node, want)
                            if nxt < 0:
                                nxt = n_nodes
                                n_nodes += 1
                                is_choice[nxt] = 1 - level
                                label[nxt] = want
                                points[nxt] = 0
                                first[nxt] = -1
                                sib[nxt] = -1
                                last[nxt] = -1
                                if last[node] < 0:
                                    first[node] = nxt
                                else:
                                    sib[last[node]] = nxt
                                last[node] = nxt
                            node = nxt
                        nod[i] = node
                    gvalid = d + 1
                    if repeats[child] == 0:
                        points[node] += node_points[child]
                    else:
                        key = np.int64(node) * n_words + w
                        slot = _hash_slot(seen, key)
                        if seen[slot] == -1:
                            seen[slot] = key
                            n_seen += 1
                            points[node] += node_points[child]
                            if n_seen > half:
                                return -2, total_sum
            c = st_cell[d]
            child = st_child[d]
            pushed = False
            k = st_k[d]
            while k < deg[c]:
                nb = nbr_list[c, k]
                k += 1
                if (used >> np.uint64(nb)) & one == zero and masks[nb] & kids[child] != zero:
                    st_k[d] = k
                    d += 1
                    st_cell[d] = nb
                    st_node[d] = child
                    st_rem[d] = masks[nb] & kids[child]
                    st_child[d] = -1
                    used |= one << np.uint64(nb)
                    urank |= one << np.uint64(rank[nb])
                    pushed = True
                    break
            if not pushed:
                st_child[d] = -1
    return n_nodes, total_sum


@njit(nogil=True, cache=True)
def _preorder(n_nodes, is_choice, label, points, first, sib):
    """Relayout the first-child/next-sibling tree in pre-order: ``(is_choice int8, label
    int32, points int32, parent int32, end int32)``, ``end[i]`` one past i's subtree."""
    o_choice = np.empty(n_nodes, np.int8)
    o_label = np.empty(n_nodes, np.int32)
    o_points = np.empty(n_nodes, np.int32)
    o_parent = np.empty(n_nodes, np.int32)
    o_end = np.empty(n_nodes, np.int32)
    # stack of (old node, new index of its parent); a node's end is known when the next node
    # outside its subtree is placed, so open nodes are kept on a second stack
    todo = np.empty(n_nodes, np.int64)
    todo_parent = np.empty(n_nodes, np.int64)
    open_new = np.empty(n_nodes, np.int64)
    n_open = 0
    top = 0
    todo[0] = 0
    todo_parent[0] = -1
    top = 1
    pos = 0
    while top > 0:
        top -= 1
        old = todo[top]
        par = todo_parent[top]
        # close the open nodes that are not ancestors of this one
        while n_open > 0 and open_new[n_open - 1] != par:
            o_end[open_new[n_open - 1]] = pos
            n_open -= 1
        o_choice[pos] = is_choice[old]
        o_label[pos] = label[old]
        o_points[pos] = points[old]
        o_parent[pos] = par
        open_new[n_open] = pos
        n_open += 1
        # push children in reverse so the first child comes out first
        c = first[old]
        k = 0
        while c >= 0:
            k += 1
            c = sib[c]
        c = first[old]
        i = top + k - 1
        while c >= 0:
            todo[i] = c
            todo_parent[i] = pos
            i -= 1
            c = sib[c]
        top += k
        pos += 1
    while n_open > 0:
        o_end[open_new[n_open - 1]] = pos
        n_open -= 1
    return o_choice, o_label, o_points, o_parent, o_end


@njit(nogil=True, cache=True)
def root_value(n_nodes, is_choice, points, first, sib):
    """The unforced bound straight from the build's arrays: a child is created after its
    parent, so one pass from the last node back sees every node's children first."""
    val = np.empty(n_nodes, np.int64)
    for i in range(n_nodes - 1, -1, -1):
        v = np.int64(points[i])
        c = first[i]
        if is_choice[i]:
            v = np.int64(0)
            while c >= 0:
                if val[c] > v:
                    v = val[c]
                c = sib[c]
        else:
            while c >= 0:
                v += val[c]
                c = sib[c]
        val[i] = v
    return val[0]


# ---------------------------------------------------------------- numba kernels: evaluate


@njit(nogil=True, cache=True, inline="always")
def _fold_up(is_choice, parent, live, n_live, val):
    """Fold the values of the ``live`` nodes (pre-order) into their parents, last first: a SUM
    node adds its children, a CHOICE node keeps the best; returns the root's value."""
    for j in range(n_live - 1, 0, -1):
        i = live[j]
        p = parent[i]
        if is_choice[p]:
            if val[i] > val[p]:
                val[p] = val[i]
        else:
            val[p] += val[i]
    return val[0]


@njit(nogil=True, cache=True)
def eval_tree(is_choice, label, points, parent, end, forced, val, live):
    """The bound with the cells ``forced[cell] >= 0`` fixed to that letter. ``val`` and
    ``live`` (int64 [n_nodes]) are the caller's scratch.

    One forward pass lists the nodes outside the subtrees of letters not chosen (skipped by
    their ``end``), one backward pass over them folds every node into its parent (children
    follow their parent in pre-order, so a node is final when reached).
    """
    n_nodes = is_choice.shape[0]
    n_live = 0
    i = 0
    while i < n_nodes:
        if is_choice[i] == 0 and i > 0:
            f = forced[label[parent[i]]]
            if f >= 0 and f != label[i]:
                i = end[i]
                continue
            val[i] = points[i]
        else:
            val[i] = points[i]
        live[n_live] = i
        n_live += 1
        i += 1
    return _fold_up(is_choice, parent, live, n_live, val)


@njit(nogil=True, cache=True)
def level_bits(is_choice, label, parent, cells, n_cells):
    """int64 [n_nodes]: bit l set when ``cells[l]`` has a choice node in the node's subtree."""
    n_nodes = is_choice.shape[0]
    level_of = np.full(n_cells, -1, np.int64)
    for lvl in range(cells.shape[0]):
        level_of[cells[lvl]] = lvl
    lv = np.zeros(n_nodes, np.int64)
    for i in range(n_nodes - 1, -1, -1):
        if is_choice[i] and level_of[label[i]] >= 0:
            lv[i] |= np.int64(1) << level_of[label[i]]
        if i > 0:
            lv[parent[i]] |= lv[i]
    return lv


@njit(nogil=True, cache=True)
def eval_level(is_choice, label, points, parent, end, lv, forced, level, val, live):
    """The bound at B&B level ``level`` (the first ``level`` split cells forced), into
    ``val[level]``. Only nodes whose subtree holds a choice of the cell forced last are
    recomputed; any other live node keeps the value of the deepest earlier level that
    recomputed it (its subtree's choices are forced the same there): ``lv[i]`` bit l-1 is set
    when the cell forced at level l has a choice node in i's subtree."""
    n_nodes = is_choice.shape[0]
    out = val[level]
    n_live = 0
    i = 0
    bit = np.int64(1) << np.int64(level - 1) if level > 0 else np.int64(0)
    below = bit - 1 if level > 0 else np.int64(0)
    while i < n_nodes:
        if i > 0 and is_choice[i] == 0:
            f = forced[label[parent[i]]]
            if f >= 0 and f != label[i]:
                i = end[i]
                continue
        if level > 0 and lv[i] & bit == 0:
            m = lv[i] & below
            src = 0
            while m != 0:
                m >>= 1
                src += 1
            out[i] = val[src, i]
            live[n_live] = i
            n_live += 1
            i = end[i]
            continue
        out[i] = points[i]
        live[n_live] = i
        n_live += 1
        i += 1
    return _fold_up(is_choice, parent, live, n_live, out)


@njit(nogil=True, cache=True)
def tree_branch(
    is_choice, label, points, parent, end, cells, faces, n_faces, left, threshold, enumerate_max, n_cells
):
    """Branch and bound inside one class on its tree. ``cells`` are the class's cells with
    several letters in split order, ``faces[l, :n_faces[l]]`` the letters of ``cells[l]``,
    ``left[l]`` the boards left once ``cells[:l]`` are forced. Returns (root bound, branch
    nodes, leaves int64 [m, n_cells]: the forced letter per cell, -1 = free, of every
    sub-class of at most ``enumerate_max`` boards whose bound reaches ``threshold``)."""
    n_nodes = is_choice.shape[0]
    n_lv = cells.shape[0]
    lv = level_bits(is_choice, label, parent, cells, n_cells)
    val = np.empty((n_lv + 1, n_nodes), np.int64)
    live = np.empty(n_nodes, np.int64)
    forced = np.full(n_cells, -1, np.int64)
    leaves = np.empty((16, n_cells), np.int64)
    n_leaves = 0
    root = eval_level(is_choice, label, points, parent, end, lv, forced, 0, val, live)
    if root < threshold:
        return root, 0, leaves[:0].copy()
    nodes = 1
    if left[0] <= enumerate_max:
        leaves[0] = forced
        return root, nodes, leaves[:1].copy()
    idx = np.zeros(n_lv, np.int64)
    lvl = 0
    while lvl >= 0:
        c = cells[lvl]
        if idx[lvl] == n_faces[lvl]:
            forced[c] = -1
            lvl -= 1
            continue
        forced[c] = faces[lvl, idx[lvl]]
        idx[lvl] += 1
        if eval_level(is_choice, label, points, parent, end, lv, forced, lvl + 1, val, live) < threshold:
            continue
        nodes += 1
        if left[lvl + 1] <= enumerate_max:
            if n_leaves == leaves.shape[0]:
                grown = np.empty((2 * n_leaves, n_cells), np.int64)
                grown[:n_leaves] = leaves
                leaves = grown
            leaves[n_leaves] = forced
            n_leaves += 1
        else:
            lvl += 1
            idx[lvl] = 0
    return root, nodes, leaves[:n_leaves].copy()


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
    ):
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
        self.compact = compact_trie(
            trie.children, trie.node_word, trie.node_points, trie.kids, repeated_faces(trie.children)
        )
        self.word_seen = np.zeros(max(trie.n_words, 1), np.int64)
        self._tag = 0
        # build scratch: is_choice, label, points, first, sib, last, (node, word) hash set
        cap = 1 << 16
        self._scratch: tuple[np.ndarray, ...] = (
            np.zeros(cap, np.int8), *(np.zeros(cap, np.int32) for _ in range(5)), np.empty(cap, np.int64),
        )  # fmt: skip

    def build(self, masks: np.ndarray) -> tuple[tuple[np.ndarray, ...], int]:
        """The class's tree in pre-order (see :func:`_preorder`) and its sum bound."""
        n, total = self._build(masks)
        is_choice, label, points, first, sib, _, _ = self._scratch
        return _preorder(n, is_choice, label, points, first, sib), total

    def root_bounds(self, masks: np.ndarray) -> tuple[int, int]:
        """(tree bound, sum bound) of the class, without the pre-order relayout."""
        n, total = self._build(masks)
        is_choice, _, points, first, sib, _, _ = self._scratch
        return int(root_value(n, is_choice, points, first, sib)), total

    def _build(self, masks: np.ndarray) -> tuple[int, int]:
        """Build into the scratch arrays (grown until they fit); (node count, sum bound)."""
        t = self.trie
        masks = np.ascontiguousarray(masks, dtype=np.uint64)
        while True:
            s = self._scratch
            is_choice, label, points, first, sib, last, seen = s
            base, node_word, node_points, kids, repeats = self.compact
            self._tag += 1
            n, total = build_tree(
                masks, self.rank, self.order, self.geo.nbr_list, self.geo.deg, base, node_word,
                node_points, kids, max(t.n_words, 1), repeats, is_choice, label, points,
                first, sib, last, seen, self.word_seen, self._tag,
            )  # fmt: skip
            if n >= 0:
                return int(n), int(total)
            self._scratch = self._grow(s, nodes=n == -1)

    @staticmethod
    def _grow(s: tuple[np.ndarray, ...], nodes: bool) -> tuple[np.ndarray, ...]:
        if nodes:
            cap = 2 * s[0].shape[0]
            return (
                np.zeros(cap, np.int8), *(np.zeros(cap, np.int32) for _ in range(5)), s[6],
            )  # fmt: skip
        return (*s[:6], np.empty(2 * s[6].shape[0], np.int64))

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
        n, total = self._build(masks)
        is_choice, label, points, first, sib, _, _ = self._scratch
        self.tree_nodes = n
        if total < self.threshold:
            return ClassOutcome(root_bound=total)
        root = int(root_value(n, is_choice, points, first, sib))
        if root < self.threshold:
            return ClassOutcome(root_bound=root)
        tree = _preorder(n, is_choice, label, points, first, sib)
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
