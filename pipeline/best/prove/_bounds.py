"""Upper bounds on the best score of a board class, as numba kernels with plain-Python twins.

A class gives each cell a set of faces (``masks[cell]``: bit f set = face f allowed). Two
sound bounds, computed by one depth-first walk over the cells and a dense trie:

* ``sum``: the points of every word some board of the class can spell, each word once (no
  board holds a word the class cannot spell, and a board counts a word once).
* ``max``: at each cell visit, the best face choice for the rest of the path, words not
  de-duplicated. A board's score is at most the points summed over its paths (a word counts
  once however many paths spell it), and the best choice per visit is at least the board's
  fixed choice, so the walk's value bounds every board.

The class bound is ``min(sum, max)``. The walk's trie is the prover's own dense table
(``children[node, face]``) built from the compiled lexicon's words, so it does not depend on
the solver's trie layout.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.best.prove._classes import next_digits
from pipeline.jit import njit
from pipeline.lexicon import CompiledLexicon
from pipeline.solve.kernels import LOW32, popcount


@njit(nogil=True, cache=True)
def pack_trie(children, node_word):
    """The prover's dense trie renumbered breadth first (a node's children consecutive) as
    packed records: returns rec (uint64 [2 * nodes]): ``rec[2n]`` node n's child mask, ``rec[2n + 1]``
    its first child in the low 32 bits and its word id + 1 in the high 32 bits. About a tenth of
    the dense table's memory, which keeps the tree build's walk in cache."""
    n_nodes, n_faces = children.shape
    queue = np.empty(n_nodes, np.int64)
    queue[0] = 0
    n_queued = 1
    rec = np.zeros(2 * n_nodes, np.uint64)
    for head in range(n_nodes):
        if head >= n_queued:
            break
        node = queue[head]
        mask = np.uint64(0)
        first = n_queued
        for f in range(n_faces):
            c = children[node, f]
            if c >= 0:
                mask |= np.uint64(1) << np.uint64(f)
                queue[n_queued] = c
                n_queued += 1
        rec[2 * head] = mask
        rec[2 * head + 1] = np.uint64(first) | (np.uint64(node_word[node] + 1) << np.uint64(32))
    return rec[: 2 * n_queued].copy()


@njit(nogil=True, cache=True, inline="always")
def trie_child(rec, parent, low):
    """The packed trie's child of ``parent`` for the face bit ``low`` (which it must have)."""
    first = np.int64(rec[2 * parent + 1] & LOW32)
    return first + np.int64(popcount(rec[2 * parent] & (low - np.uint64(1))))


@njit(nogil=True, cache=True, inline="always")
def enter_cell(st_cell, st_node, st_rem, st_child, d, cell, node, rem):
    """Frame ``d`` of a walk over a class's cells (:func:`pipeline.best.prove.tree._build.collect_paths`,
    :func:`class_bounds`): a visit of ``cell`` from trie node ``node``,
    the faces ``rem`` to try there, none tried yet."""
    st_cell[d] = cell
    st_node[d] = node
    st_rem[d] = rem
    st_child[d] = -1


@dataclass(frozen=True)
class ProveTrie:
    """Dense trie of the words a shape can hold: ``children[node, face]`` (-1 = none),
    ``node_word[node]`` (word id ending here or -1), ``node_points[node]`` (its points)."""

    children: np.ndarray  # int32 [n_nodes, n_faces]
    node_word: np.ndarray  # int32 [n_nodes]
    node_points: np.ndarray  # int32 [n_nodes]
    kids: np.ndarray  # uint64 [n_nodes]: bit f set iff children[node, f] >= 0
    n_words: int
    word_points: np.ndarray  # int32 [n_words]: the lexicon's points by word id (shared)

    @property
    def n_nodes(self) -> int:
        return int(self.children.shape[0])


@dataclass(frozen=True)
class PackedTrie:
    """The prover's trie as the tree bound reads it: the dense trie's nodes renumbered breadth
    first as packed records (:func:`pipeline.best.prove._bounds.pack_trie`; ``rec`` uint64
    [2 * nodes]), about a tenth of the dense table, which a process proving with the tree
    bound then need not keep."""

    rec: np.ndarray
    n_faces: int
    n_words: int
    #: int32 [n_words]: a word's points by its id, which the paths carry (a random read of
    #: the word's trie record per path cost the tree's pass from the sorted paths about a
    #: fifth of its time)
    word_pts: np.ndarray


def packed_trie(trie: ProveTrie) -> PackedTrie:
    """The dense trie as the tree bound reads it (see :class:`PackedTrie`)."""
    rec = pack_trie(trie.children, trie.node_word)
    word_pts = trie.word_points if trie.n_words else np.zeros(1, np.int32)
    return PackedTrie(rec, int(trie.children.shape[1]), trie.n_words, word_pts)


def build_prove_trie(lexicon: CompiledLexicon, max_cells: int) -> ProveTrie:
    """The dense trie of the lexicon's spellings of at most ``max_cells`` faces, read off the
    compiled lexicon's trie (which holds every spelling of every word): a node is kept when
    some spelling of at most ``max_cells`` faces ends in its subtree (a board cannot reach the
    others, and walks would only waste time in them). Array operations on the trie's nodes
    (children follow their parent there), so the peak memory is a few times the result's."""
    t = lexicon.trie
    n_faces = len(lexicon.alphabet)
    mask = t.mask
    first = t.first_child.astype(np.int64)
    n = t.n_nodes
    counts = np.bitwise_count(mask).astype(np.int64)
    parent = np.zeros(n, np.int64)
    offsets = np.cumsum(counts) - counts
    parent[np.repeat(first, counts) + np.arange(int(counts.sum())) - np.repeat(offsets, counts)] = np.repeat(
        np.arange(n, dtype=np.int64), counts
    )
    depth = t.node_depth.astype(np.int64)
    word = t.word_id
    useful = (word >= 0) & (depth <= max_cells)
    # a node is useful when a useful node is below it: fold each depth into the one above
    for d in range(int(depth.max(initial=0)), 0, -1):
        at = np.flatnonzero(useful & (depth == d))
        useful[parent[at]] = True
    useful[0] = True
    new_id = np.cumsum(useful) - 1
    kept = np.flatnonzero(useful)
    children = np.full((len(kept), n_faces), -1, np.int32)
    kids = np.zeros(len(kept), np.uint64)
    kept_mask, kept_first = mask[kept], first[kept]
    rank = np.zeros(len(kept), np.int64)  # a kept node's children seen so far, face by face
    for f in range(n_faces):
        bit = np.uint64(1) << np.uint64(f)
        has = kept_mask & bit != 0
        child = kept_first + rank
        ok = has & useful[np.where(has, child, 0)]
        children[ok, f] = new_id[child[ok]]
        kids[ok] |= bit
        rank += has
    words = word[kept].astype(np.int32)
    pts = np.where(words >= 0, lexicon.word_points[np.maximum(words, 0)], 0).astype(np.int32)
    return ProveTrie(children, words, pts, kids, lexicon.n_words, lexicon.word_points)


# ---------------------------------------------------------------- numba kernels


@njit(nogil=True, cache=True)
def class_bounds(masks, nbr_list, deg, children, node_word, node_points, kids, seen, stamp):
    """(sum bound, max bound) of the class ``masks`` (uint64 [cells]). ``seen`` (int64
    [n_words]) and ``stamp`` (int64 [1]) are the caller's scratch, reused across calls."""
    stamp[0] += 1
    stack = np.empty((6, masks.shape[0]), np.int64)
    rem = np.empty(masks.shape[0], np.uint64)
    return _bounds(masks, nbr_list, deg, children, node_word, node_points, kids, seen, stamp[0], stack, rem)


@njit(nogil=True, cache=True)
def _bounds(masks, nbr_list, deg, children, node_word, node_points, kids, seen, tag, stack, st_rem):
    """The walk behind :func:`class_bounds`, with the caller's stack (``stack`` int64 [6,
    cells], ``st_rem`` uint64 [cells]) and stamp ``tag``.

    An explicit stack instead of recursion: numba's on-disk cache cannot hold recursive
    functions. Frame d is a visit of cell ``st_cell[d]`` from trie node ``st_node[d]``; it tries
    the faces left in ``st_rem[d]``, and for the current face (trie node ``st_child[d]``) sums
    its points and the values of the unused neighbours (``st_k[d]``: next neighbour to try).
    """
    n = masks.shape[0]
    one = np.uint64(1)
    zero = np.uint64(0)
    st_cell = stack[0]
    st_node = stack[1]
    st_child = stack[2]
    st_k = stack[3]
    st_v = stack[4]
    st_best = stack[5]
    total_sum = np.int64(0)
    total_max = np.int64(0)
    for start in range(n):
        if masks[start] & kids[0] == zero:
            continue
        d = 0
        enter_cell(st_cell, st_node, st_rem, st_child, 0, start, 0, masks[start] & kids[0])
        st_best[0] = 0
        used = one << np.uint64(start)
        while True:
            if st_child[d] < 0:
                rem = st_rem[d]
                if rem == zero:
                    r = st_best[d]
                    used ^= one << np.uint64(st_cell[d])
                    d -= 1
                    if d < 0:
                        total_max += r
                        break
                    st_v[d] += r
                    continue
                low = rem & (~rem + one)
                st_rem[d] = rem ^ low
                f = 0
                while (low >> np.uint64(f)) != one:
                    f += 1
                child = children[st_node[d], f]
                st_child[d] = child
                st_v[d] = node_points[child]
                st_k[d] = 0
                w = node_word[child]
                if w >= 0 and seen[w] != tag:
                    seen[w] = tag
                    total_sum += node_points[child]
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
                    enter_cell(st_cell, st_node, st_rem, st_child, d, nb, child, masks[nb] & kids[child])
                    st_best[d] = 0
                    used |= one << np.uint64(nb)
                    pushed = True
                    break
            if not pushed:
                if st_v[d] > st_best[d]:
                    st_best[d] = st_v[d]
                st_child[d] = -1
    return total_sum, total_max


@njit(nogil=True, cache=True)
def class_sizes(masks):
    """The number of boards of each class ``masks`` (uint64 [k, cells]): int64 [k]."""
    k, n = masks.shape
    sizes = np.ones(k, np.int64)
    for i in range(k):
        for c in range(n):
            sizes[i] *= np.int64(popcount(masks[i, c]))  # a numba intrinsic
    return sizes


@njit(nogil=True, cache=True)
def class_boards(masks, out):
    """Write the boards of the classes ``masks`` (uint64 [k, cells]) into ``out`` (int8
    [>= their board count, cells]), class by class, each in mixed-radix order with the last cell
    fastest; returns how many were written (-1, writing nothing, when ``out`` is too short)."""
    k, n = masks.shape
    one = np.uint64(1)
    if class_sizes(masks).sum() > out.shape[0]:
        return -1
    faces = np.zeros((n, 64), np.int8)
    n_faces = np.zeros(n, np.int64)
    digit = np.zeros(n, np.int64)
    row = 0
    for i in range(k):
        size = 1
        for c in range(n):
            m = masks[i, c]
            n_faces[c] = 0
            f = 0
            while m != np.uint64(0):
                if m & one:
                    faces[c, n_faces[c]] = f
                    n_faces[c] += 1
                m = m >> one
                f += 1
            size *= n_faces[c]
            digit[c] = 0
        for _ in range(size):
            for c in range(n):
                out[row, c] = faces[c, digit[c]]
            row += 1
            next_digits(digit, n_faces)
    return row


# ---------------------------------------------------------------- reference twin


def class_bounds_reference(masks: list[int], neighbours: list[list[int]], trie: ProveTrie) -> tuple[int, int]:
    """Plain-Python twin of :func:`class_bounds` (for tests): (sum bound, max bound)."""
    children = trie.children.tolist()
    node_word = trie.node_word.tolist()
    node_points = trie.node_points.tolist()
    found: set[int] = set()

    def walk(cell: int, node: int, used: frozenset[int]) -> int:
        here = used | {cell}
        best = 0
        for f in range(len(children[node])):
            if not masks[cell] >> f & 1:
                continue
            child = children[node][f]
            if child < 0:
                continue
            if node_word[child] >= 0:
                found.add(child)
            v = node_points[child] + sum(walk(nb, child, here) for nb in neighbours[cell] if nb not in here)
            best = max(best, v)
        return best

    total = sum(walk(c, 0, frozenset()) for c in range(len(masks)))
    by_word = {node_word[n]: node_points[n] for n in found}
    return sum(by_word.values()), total
