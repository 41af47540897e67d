"""The numba batch kernel: array in, array out, no Python objects, no I/O.

Three variants share one output contract (see :func:`pipeline.solve.solve_arrays`):

* ``_solve_small``: standard rule on boards of at most 64 cells. Cell sets are uint64 bit
  masks; the DFS keeps, per depth, the cell, the trie node and the mask of neighbours still to
  try. A child node is only pushed when one of its letters shows on a neighbouring cell.
* ``_solve_large``: standard rule on any board (neighbour lists, a byte array of used cells).
* ``_solve_revisit``: cells may be revisited (each step still moves). The trie is walked
  depth-first with, per depth, the set of cells where the prefix can end (a frontier); on the
  way back up, the cells that lead to a completed word are marked live.

All three use an explicit stack (no recursion) and a per-word "last seen" stamp (the board's
index) to count each word once per board.
"""

from __future__ import annotations

import llvmlite.ir as llir
import numpy as np
from numba import njit, types
from numba.extending import intrinsic

ONE = np.uint64(1)
ZERO = np.uint64(0)
ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


@intrinsic
def popcount(typingctx, x):  # type: ignore[no-untyped-def]
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.ctpop(args[0])

    return sig, codegen


@intrinsic
def ctz(typingctx, x):  # type: ignore[no-untyped-def]
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.cttz(args[0], llir.Constant(llir.IntType(1), 1))

    return sig, codegen


@njit(nogil=True, cache=True, inline="always")
def _child(mask, first_child, node, f):  # type: ignore[no-untyped-def]
    """Index of node's child for face f, or -1."""
    m = mask[node]
    fb = np.uint64(f)
    if (m >> fb) & ONE == ZERO:
        return -1
    return np.int64(first_child[node]) + np.int64(popcount(m & ((ONE << fb) - ONE)))


@njit(nogil=True, cache=True)
def prepare_masks(fa, nbr_mask, open_nbrs, nbr_faces, wild):
    """Per cell of a board of <= 64 cells: the mask of its non-blank neighbours and the mask of
    the faces they show (a wildcard cell ``wild`` >= 0 shows every face). Returns the mask of
    non-blank cells."""
    n = len(fa)
    nonblank = ZERO
    for c in range(n):
        if fa[c] >= 0 or c == wild:
            nonblank |= ONE << np.uint64(c)
    for c in range(n):
        m = nbr_mask[c] & nonblank
        open_nbrs[c] = m
        fm = ZERO
        while m != ZERO:
            low = m & (~m + ONE)
            k = np.int64(ctz(low))
            fm |= ALL if k == wild else ONE << np.uint64(fa[k])
            m ^= low
        nbr_faces[c] = fm
    return nonblank


@njit(nogil=True, cache=True)
def grow(ids, needed):  # type: ignore[no-untyped-def]
    cap = len(ids)
    while cap < needed:
        cap *= 2
    out = np.empty(cap, dtype=np.int32)
    out[: len(ids)] = ids
    return out


@njit(nogil=True, cache=True)
def _solve_small(
    boards,
    nbr_mask,
    mask,
    first_child,
    word_id,
    word_points,
    word_len,  # type: ignore[no-untyped-def]
    max_depth,
    collect,
):
    n_boards, n = boards.shape
    score = np.zeros(n_boards, np.int32)
    n_words = np.zeros(n_boards, np.int32)
    longest = np.zeros(n_boards, np.int16)
    dead = np.zeros(n_boards, np.int16)
    offsets = np.zeros(n_boards + 1, np.int64)
    ids = np.empty(max(1024, n_boards * 64), np.int32)
    n_ids = 0
    seen = np.full(len(word_points), -1, np.int32)
    depth_cap = min(max_depth, n) + 1
    st_cell = np.empty(depth_cap, np.int64)
    st_node = np.empty(depth_cap, np.int64)
    st_avail = np.empty(depth_cap, np.uint64)
    open_nbrs = np.empty(n, np.uint64)
    nbr_faces = np.empty(n, np.uint64)

    for b in range(n_boards):
        fa = boards[b]
        nonblank = prepare_masks(fa, nbr_mask, open_nbrs, nbr_faces, -1)
        live = ZERO
        sc = 0
        nw = 0
        lg = 0
        for s in range(n):
            f0 = fa[s]
            if f0 < 0:
                continue
            node0 = _child(mask, first_child, 0, f0)
            if node0 < 0:
                continue
            sbit = ONE << np.uint64(s)
            w = word_id[node0]
            if w >= 0:
                live |= sbit
                if seen[w] != b:
                    seen[w] = b
                    sc += word_points[w]
                    nw += 1
                    if word_len[w] > lg:
                        lg = word_len[w]
                    if collect:
                        if n_ids >= len(ids):
                            ids = grow(ids, n_ids + 1)
                        ids[n_ids] = w
                        n_ids += 1
            if mask[node0] & nbr_faces[s] == ZERO:
                continue
            d = 0
            st_cell[0] = s
            st_node[0] = node0
            st_avail[0] = open_nbrs[s]
            used = sbit
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
                if w >= 0:
                    live |= used | low
                    if seen[w] != b:
                        seen[w] = b
                        sc += word_points[w]
                        nw += 1
                        if word_len[w] > lg:
                            lg = word_len[w]
                        if collect:
                            if n_ids >= len(ids):
                                ids = grow(ids, n_ids + 1)
                            ids[n_ids] = w
                            n_ids += 1
                if mask[child] & nbr_faces[c] != ZERO:
                    d += 1
                    used |= low
                    st_cell[d] = c
                    st_node[d] = child
                    st_avail[d] = open_nbrs[c] & ~used
        score[b] = sc
        n_words[b] = nw
        longest[b] = lg
        dead[b] = np.int16(popcount(nonblank & ~live))
        offsets[b + 1] = n_ids
    return score, n_words, longest, dead, offsets, ids[:n_ids].copy()


@njit(nogil=True, cache=True)
def _solve_large(
    boards,
    nbr_list,
    deg,
    mask,
    first_child,
    word_id,
    word_points,
    word_len,  # type: ignore[no-untyped-def]
    max_depth,
    collect,
):
    n_boards, n = boards.shape
    score = np.zeros(n_boards, np.int32)
    n_words = np.zeros(n_boards, np.int32)
    longest = np.zeros(n_boards, np.int16)
    dead = np.zeros(n_boards, np.int32)
    offsets = np.zeros(n_boards + 1, np.int64)
    ids = np.empty(max(1024, n_boards * 64), np.int32)
    n_ids = 0
    seen = np.full(len(word_points), -1, np.int32)
    depth_cap = min(max_depth, n) + 1
    st_cell = np.empty(depth_cap, np.int64)
    st_node = np.empty(depth_cap, np.int64)
    st_k = np.empty(depth_cap, np.int64)
    used = np.zeros(n, np.uint8)
    live = np.zeros(n, np.uint8)
    nbr_faces = np.empty(n, np.uint64)

    for b in range(n_boards):
        fa = boards[b]
        for c in range(n):
            live[c] = 0
            fm = ZERO
            for k in range(deg[c]):
                g = fa[nbr_list[c, k]]
                if g >= 0:
                    fm |= ONE << np.uint64(g)
            nbr_faces[c] = fm
        sc = 0
        nw = 0
        lg = 0
        for s in range(n):
            f0 = fa[s]
            if f0 < 0:
                continue
            node0 = _child(mask, first_child, 0, f0)
            if node0 < 0:
                continue
            w = word_id[node0]
            if w >= 0:
                live[s] = 1
                if seen[w] != b:
                    seen[w] = b
                    sc += word_points[w]
                    nw += 1
                    if word_len[w] > lg:
                        lg = word_len[w]
                    if collect:
                        if n_ids >= len(ids):
                            ids = grow(ids, n_ids + 1)
                        ids[n_ids] = w
                        n_ids += 1
            if mask[node0] & nbr_faces[s] == ZERO:
                continue
            d = 0
            st_cell[0] = s
            st_node[0] = node0
            st_k[0] = 0
            used[s] = 1
            while d >= 0:
                c0 = st_cell[d]
                k = st_k[d]
                if k >= deg[c0]:
                    used[c0] = 0
                    d -= 1
                    continue
                st_k[d] = k + 1
                c = nbr_list[c0, k]
                if used[c] or fa[c] < 0:
                    continue
                child = _child(mask, first_child, st_node[d], fa[c])
                if child < 0:
                    continue
                w = word_id[child]
                if w >= 0:
                    for i in range(d + 1):
                        live[st_cell[i]] = 1
                    live[c] = 1
                    if seen[w] != b:
                        seen[w] = b
                        sc += word_points[w]
                        nw += 1
                        if word_len[w] > lg:
                            lg = word_len[w]
                        if collect:
                            if n_ids >= len(ids):
                                ids = grow(ids, n_ids + 1)
                            ids[n_ids] = w
                            n_ids += 1
                if mask[child] & nbr_faces[c] != ZERO:
                    d += 1
                    st_cell[d] = c
                    st_node[d] = child
                    st_k[d] = 0
                    used[c] = 1
        n_dead = 0
        for c in range(n):
            if fa[c] >= 0 and live[c] == 0:
                n_dead += 1
        score[b] = sc
        n_words[b] = nw
        longest[b] = lg
        dead[b] = n_dead
        offsets[b + 1] = n_ids
    return score, n_words, longest, dead, offsets, ids[:n_ids].copy()


@njit(nogil=True, cache=True)
def _solve_revisit(
    boards,
    nbr_list,
    deg,
    mask,
    first_child,
    word_id,
    word_points,
    word_len,  # type: ignore[no-untyped-def]
    max_depth,
    collect,
):
    n_boards, n = boards.shape
    score = np.zeros(n_boards, np.int32)
    n_words = np.zeros(n_boards, np.int32)
    longest = np.zeros(n_boards, np.int16)
    dead = np.zeros(n_boards, np.int32)
    offsets = np.zeros(n_boards + 1, np.int64)
    ids = np.empty(max(1024, n_boards * 64), np.int32)
    n_ids = 0
    seen = np.full(len(word_points), -1, np.int32)
    depth_cap = max_depth + 1
    frontier = np.empty((depth_cap, n), np.int32)  # cells where the prefix can end
    f_count = np.zeros(depth_cap, np.int64)
    f_mark = np.zeros((depth_cap, n), np.int64)  # == f_tok[d]: cell is in frontier d
    b_mark = np.zeros((depth_cap, n), np.int64)  # == f_tok[d]: cell leads to a word
    f_tok = np.zeros(depth_cap, np.int64)
    has_back = np.zeros(depth_cap, np.bool_)
    st_node = np.empty(depth_cap, np.int64)
    remaining = np.empty(depth_cap, np.uint64)
    live = np.zeros(n, np.uint8)
    token = np.int64(0)

    for b in range(n_boards):
        fa = boards[b]
        board_faces = ZERO
        for c in range(n):
            live[c] = 0
            if fa[c] >= 0:
                board_faces |= ONE << np.uint64(fa[c])
        sc = 0
        nw = 0
        lg = 0
        d = -1
        root_rem = mask[0] & board_faces
        while True:
            if d < 0:
                if root_rem == ZERO:
                    break
                low = root_rem & (~root_rem + ONE)
                root_rem ^= low
                g = np.int64(ctz(low))
                child = _child(mask, first_child, 0, g)
                token += 1
                cnt = 0
                for c in range(n):
                    if fa[c] == g:
                        f_mark[0, c] = token
                        frontier[0, cnt] = c
                        cnt += 1
                d = 0
            else:
                rem = remaining[d]
                if rem == ZERO:
                    # leaving depth d: cells of frontier d-1 next to a live cell of d are live
                    if has_back[d] and d > 0:
                        for i in range(f_count[d - 1]):
                            c = frontier[d - 1, i]
                            if b_mark[d - 1, c] == f_tok[d - 1]:
                                continue
                            for k in range(deg[c]):
                                if b_mark[d, nbr_list[c, k]] == f_tok[d]:
                                    b_mark[d - 1, c] = f_tok[d - 1]
                                    live[c] = 1
                                    has_back[d - 1] = True
                                    break
                    d -= 1
                    continue
                low = rem & (~rem + ONE)
                remaining[d] = rem ^ low
                g = np.int64(ctz(low))
                child = _child(mask, first_child, st_node[d], g)
                token += 1
                cnt = 0
                for i in range(f_count[d]):
                    c = frontier[d, i]
                    for k in range(deg[c]):
                        nb = nbr_list[c, k]
                        if fa[nb] == g and f_mark[d + 1, nb] != token:
                            f_mark[d + 1, nb] = token
                            frontier[d + 1, cnt] = nb
                            cnt += 1
                if cnt == 0:
                    continue
                d += 1
            # entering depth d at node `child` with `cnt` frontier cells
            f_tok[d] = token
            f_count[d] = cnt
            st_node[d] = child
            has_back[d] = False
            w = word_id[child]
            if w >= 0:
                has_back[d] = True
                for i in range(cnt):
                    c = frontier[d, i]
                    b_mark[d, c] = token
                    live[c] = 1
                if seen[w] != b:
                    seen[w] = b
                    sc += word_points[w]
                    nw += 1
                    if word_len[w] > lg:
                        lg = word_len[w]
                    if collect:
                        if n_ids >= len(ids):
                            ids = grow(ids, n_ids + 1)
                        ids[n_ids] = w
                        n_ids += 1
            remaining[d] = mask[child] & board_faces if d + 1 < depth_cap else ZERO
        n_dead = 0
        for c in range(n):
            if fa[c] >= 0 and live[c] == 0:
                n_dead += 1
        score[b] = sc
        n_words[b] = nw
        longest[b] = lg
        dead[b] = n_dead
        offsets[b + 1] = n_ids
    return score, n_words, longest, dead, offsets, ids[:n_ids].copy()
