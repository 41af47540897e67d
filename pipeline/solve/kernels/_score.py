"""Numba kernels for the board search (``pipeline.best.optimize``): score only, no word lists.

The batch solver (:mod:`pipeline.solve.kernels._walk`) allocates its work arrays per call (a
"seen" stamp per lexicon word, output buffers), which is right for large batches and wrong for
a search that scores one board, or one cell's 26 variants, at a time. These kernels take their
scratch space from the caller (:class:`Scratch`), return only a weighted score, and run the
whole annealing loop in machine code.

Standard rule (each cell used once per word), boards of at most 64 cells (cell sets are uint64
masks). The score of a board is the sum of ``weights[w]`` over the distinct words ``w`` on it,
so one kernel serves every objective: points, number of words, points over a subset.

``_cell_scores`` scores all faces of one cell in a single depth-first walk: the cell is a
wildcard, the walk branches on every face the trie allows when it steps on it, and each word
records which faces of the wildcard spell it (a bit mask; all bits if a path avoids the cell).
The paths that avoid the cell are then walked once instead of once per face.
"""

from __future__ import annotations

import numpy as np

from pipeline.jit import njit
from pipeline.solve.kernels._walk import ALL, ONE, ZERO, ctz, popcount, prepare_masks


class Scratch:
    """Work arrays one process reuses across kernel calls (not thread-safe: one per thread)."""

    def __init__(self, n_words: int, n_cells: int, depth: int):
        self.seen = np.zeros(n_words, np.int64)  # last stamp that counted each word
        self.face_mask = np.zeros(n_words, np.uint64)  # wildcard faces that spell each word
        self.found = np.empty(max(n_words, 1), np.int32)  # words counted by _cell_scores
        self.stamp = np.zeros(1, np.int64)  # the last stamp used; grows by one per board
        cap = min(depth, n_cells) + 1
        self.st_cell = np.empty(cap, np.int64)
        self.st_node = np.empty(cap, np.int64)
        self.st_avail = np.empty(cap, np.uint64)
        self.st_face = np.empty(cap, np.int64)
        self.st_wrem = np.empty(cap, np.uint64)
        self.open_nbrs = np.empty(n_cells, np.uint64)
        self.nbr_faces = np.empty(n_cells, np.uint64)

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The work arrays every kernel takes (its ``work`` argument)."""
        return (
            self.seen,
            self.stamp,
            self.st_cell,
            self.st_node,
            self.st_avail,
            self.open_nbrs,
            self.nbr_faces,
        )

    def wild_arrays(self) -> tuple[np.ndarray, ...]:
        """The extra work arrays of the wildcard walk (its ``wild_work`` argument)."""
        return (self.face_mask, self.found, self.st_face, self.st_wrem)


@njit(nogil=True, cache=True)
def score_one(
    fa,
    trie,
    work,
):
    """Weighted score of one encoded board (int8 [cells], blank = -1); ``trie``: the
    neighbour masks and the trie's arrays (:meth:`pipeline.best.optimize._scorer.Scorer.trie_args`),
    ``work``: :meth:`Scratch.arrays`."""
    nbr_mask, mask, first_child, word_id, weights = trie
    seen, stamp, st_cell, st_node, st_avail, open_nbrs, nbr_faces = work
    n = len(fa)
    stamp[0] += 1
    tag = stamp[0]
    prepare_masks(fa, nbr_mask, open_nbrs, nbr_faces, -1)
    sc = 0
    for s in range(n):
        f0 = fa[s]
        if f0 < 0:
            continue
        m0 = mask[0]
        fb0 = np.uint64(f0)
        if (m0 >> fb0) & ONE == ZERO:
            continue
        node0 = np.int64(first_child[0]) + np.int64(popcount(m0 & ((ONE << fb0) - ONE)))
        w = word_id[node0]
        if w >= 0 and seen[w] != tag:
            seen[w] = tag
            sc += weights[w]
        if mask[node0] & nbr_faces[s] == ZERO:
            continue
        d = 0
        st_cell[0] = s
        st_node[0] = node0
        st_avail[0] = open_nbrs[s]
        used = ONE << np.uint64(s)
        while d >= 0:
            a = st_avail[d]
            if a == ZERO:
                used ^= ONE << np.uint64(st_cell[d])
                d -= 1
                continue
            low = a & (~a + ONE)
            st_avail[d] = a ^ low
            c = np.int64(ctz(low))
            nd = st_node[d]
            m = mask[nd]
            fb = np.uint64(fa[c])
            if (m >> fb) & ONE == ZERO:
                continue
            child = np.int64(first_child[nd]) + np.int64(popcount(m & ((ONE << fb) - ONE)))
            w = word_id[child]
            if w >= 0 and seen[w] != tag:
                seen[w] = tag
                sc += weights[w]
            if mask[child] & nbr_faces[c] != ZERO:
                d += 1
                used |= low
                st_cell[d] = c
                st_node[d] = child
                st_avail[d] = open_nbrs[c] & ~used
    return sc


@njit(nogil=True, cache=True)
def score_batch(
    boards,
    trie,
    work,
):
    """Weighted scores of encoded boards (int8 [n_boards, cells]) -> int64 [n_boards]."""
    out = np.empty(boards.shape[0], np.int64)
    for b in range(boards.shape[0]):
        out[b] = score_one(
            boards[b],
            trie,
            work,
        )
    return out


@njit(nogil=True, cache=True)
def _record(w, fmask, tag, seen, face_mask, found, n_found):
    if seen[w] != tag:
        seen[w] = tag
        face_mask[w] = ZERO
        found[n_found] = w
        n_found += 1
    face_mask[w] |= fmask
    return n_found


@njit(nogil=True, cache=True)
def cell_scores(
    fa,
    wild,
    n_faces,
    trie,
    work,
    wild_work,
):
    """Scores of the board with cell ``wild`` showing each face 0..n_faces-1 -> int64 [n_faces].

    Per depth d of the walk: ``st_face[d]`` is the face the path gave the wildcard (-1: the path
    has not used it) and ``st_wrem[d]`` the faces still to try when stepping from d onto it
    (``trie`` and ``work`` as :func:`score_one`; ``wild_work``: :meth:`Scratch.wild_arrays`).
    """
    nbr_mask, mask, first_child, word_id, weights = trie
    seen, stamp, st_cell, st_node, st_avail, open_nbrs, nbr_faces = work
    face_mask, found, st_face, st_wrem = wild_work
    n = len(fa)
    stamp[0] += 1
    tag = stamp[0]
    prepare_masks(fa, nbr_mask, open_nbrs, nbr_faces, wild)
    n_found = 0
    wbit = ONE << np.uint64(wild)
    root_m = mask[0]
    for s in range(n):
        if fa[s] < 0 and s != wild:
            continue
        opts = root_m if s == wild else (ONE << np.uint64(fa[s])) & root_m
        while opts != ZERO:
            lowf = opts & (~opts + ONE)
            opts ^= lowf
            node0 = np.int64(first_child[0]) + np.int64(popcount(root_m & (lowf - ONE)))
            face0 = np.int64(ctz(lowf)) if s == wild else -1
            w = word_id[node0]
            if w >= 0:
                n_found = _record(w, ALL if face0 < 0 else lowf, tag, seen, face_mask, found, n_found)
            if mask[node0] & nbr_faces[s] == ZERO:
                continue
            d = 0
            st_cell[0] = s
            st_node[0] = node0
            st_avail[0] = open_nbrs[s]
            st_face[0] = face0
            st_wrem[0] = ZERO
            used = ONE << np.uint64(s)
            while d >= 0:
                nd = st_node[d]
                m = mask[nd]
                wr = st_wrem[d]
                if wr != ZERO:
                    # the next face for the wildcard, stepping from depth d
                    lf = wr & (~wr + ONE)
                    st_wrem[d] = wr ^ lf
                    child = np.int64(first_child[nd]) + np.int64(popcount(m & (lf - ONE)))
                    w = word_id[child]
                    if w >= 0:
                        n_found = _record(w, lf, tag, seen, face_mask, found, n_found)
                    if mask[child] & nbr_faces[wild] != ZERO:
                        used |= wbit
                        d += 1
                        st_cell[d] = wild
                        st_node[d] = child
                        st_avail[d] = open_nbrs[wild] & ~used
                        st_face[d] = np.int64(ctz(lf))
                        st_wrem[d] = ZERO
                    continue
                a = st_avail[d]
                if a == ZERO:
                    used ^= ONE << np.uint64(st_cell[d])
                    d -= 1
                    continue
                low = a & (~a + ONE)
                st_avail[d] = a ^ low
                if low == wbit:
                    st_wrem[d] = m
                    continue
                c = np.int64(ctz(low))
                fb = np.uint64(fa[c])
                if (m >> fb) & ONE == ZERO:
                    continue
                child = np.int64(first_child[nd]) + np.int64(popcount(m & ((ONE << fb) - ONE)))
                face = st_face[d]
                w = word_id[child]
                if w >= 0:
                    n_found = _record(
                        w, ALL if face < 0 else ONE << np.uint64(face), tag, seen, face_mask, found, n_found
                    )
                if mask[child] & nbr_faces[c] != ZERO:
                    used |= low
                    d += 1
                    st_cell[d] = c
                    st_node[d] = child
                    st_avail[d] = open_nbrs[c] & ~used
                    st_face[d] = face
                    st_wrem[d] = ZERO
    out = np.zeros(n_faces, np.int64)
    for i in range(n_found):
        w = found[i]
        fm = face_mask[w]
        pts = weights[w]
        if fm == ALL:
            for g in range(n_faces):
                out[g] += pts
        else:
            while fm != ZERO:
                lf = fm & (~fm + ONE)
                fm ^= lf
                g = np.int64(ctz(lf))
                if g < n_faces:
                    out[g] += pts
    return out
