"""The batch driver around the three trie walks: one loop over the boards for every rule and
board size (see :func:`pipeline.solve.solve_arrays` for the output contract).

Per board it prepares what the walk needs, walks (once more with a new stamp and a bigger id
buffer when the buffer ran out), tallies the board's words and writes its row. The walk is
chosen per board by ``variant`` (:data:`SMALL`, :data:`LARGE`, :data:`REVISIT`), a branch that
costs nothing next to a walk; the walks themselves stay separate compiled functions, so each
keeps the code numba gives it alone (writing them as helpers of one shared walk measured about
11% slower on the 4x4 kernel).
"""

from __future__ import annotations

import numpy as np

from pipeline.jit import njit
from pipeline.solve.kernel import (
    FACE_STRIDE,
    ONE,
    ZERO,
    clear_neighbours,
    count_dead,
    end_board,
    grow,
    index_neighbours,
    new_outputs,
    popcount,
    walk_large,
    walk_small,
)
from pipeline.solve.revisit_kernel import walk_revisit

#: ``variant``: the standard rule on boards of at most 64 cells (cell sets as bit masks), on
#: boards of any size (neighbour lists), and the revisit rule.
SMALL, LARGE, REVISIT = 0, 1, 2


@njit(nogil=True, cache=True)
def solve_batch(
    variant, boards, nbr_mask, nbr_list, deg, nodes, word_points, word_len, max_depth, collect, lo, n_bins
):  # type: ignore[no-untyped-def]
    """Every board's words with the walk of ``variant``; the outputs of
    :func:`pipeline.solve.kernel.new_outputs` less the stamps, the ids cut to length."""
    n_boards, n = boards.shape
    outs = new_outputs(n_boards, n, len(word_points), collect, n_bins)
    score, board_words, longest, dead, offsets, ids, seen, longest_id, counts, points = outs
    record = collect or n_bins > 0  # a tally reads the board's ids, then drops them
    n_ids = 0
    stamp = -1
    small, large, revisit = variant == SMALL, variant == LARGE, variant == REVISIT
    depth_cap = (max_depth if revisit else min(max_depth, n)) + 1
    # what each walk keeps per depth (sized 1 for the walks not taken)
    d_small = depth_cap if small else 1
    st_small = (
        np.empty(d_small, np.int64),  # the cell it stands on
        np.empty(d_small, np.uint64),  # its trie node's child mask
        np.empty(d_small, np.int64),  # its first child
        np.empty(d_small, np.uint64),  # the cells still to try from it
    )
    nbr_faces = np.empty(n, np.uint64)  # the faces each cell's non-blank neighbours show
    near = np.zeros(n * FACE_STRIDE if small else 1, np.uint64)
    d_large = depth_cap if large else 1
    # the cell, its trie node, and the index in the cell's neighbour list to try next
    st_large = (np.empty(d_large, np.int64), np.empty(d_large, np.int64), np.empty(d_large, np.int64))
    used = np.zeros(n, np.uint8)
    live = np.zeros(n, np.uint8)  # a byte per cell some found word uses (large, revisit)
    d_rev = depth_cap if revisit else 1
    n_rev = n if revisit else 1
    rev = (
        np.empty((d_rev, n_rev), np.int32),  # frontier: cells where the prefix can end
        np.zeros(d_rev, np.int64),  # frontier sizes
        np.zeros((d_rev, n_rev), np.int64),  # == f_tok[d]: cell is in frontier d
        np.zeros((d_rev, n_rev), np.int64),  # == f_tok[d]: cell leads to a word
        np.zeros(d_rev, np.int64),  # f_tok
        np.zeros(d_rev, np.bool_),  # has_back
        np.empty(d_rev, np.int64),  # the trie node at each depth
        np.empty(d_rev, np.uint64),  # child faces of that node still to try
        live,
    )
    token = np.int64(0)
    root_mask = nodes[0]

    for b in range(n_boards):
        faces = boards[b]
        nonblank = ZERO
        first_cells = ZERO
        if small:
            nonblank = index_neighbours(faces, nbr_mask, nbr_faces, near)
            for c in range(n):
                if faces[c] >= 0 and (root_mask >> np.uint64(faces[c])) & ONE != ZERO:
                    first_cells |= ONE << np.uint64(c)
        elif large:
            for c in range(n):
                seen_faces = ZERO
                for k in range(deg[c]):
                    g = faces[nbr_list[c, k]]
                    if g >= 0:
                        seen_faces |= ONE << np.uint64(g)
                nbr_faces[c] = seen_faces
        live_mask = ZERO
        while True:
            stamp += 1
            if small:
                pts, n_found, longest_len, live_mask, end = walk_small(
                    faces,
                    nodes,
                    first_cells,
                    nbr_faces,
                    near,
                    word_points,
                    word_len,
                    record,
                    seen,
                    stamp,
                    ids,
                    n_ids,
                    st_small,
                )
            elif large:
                live[:] = 0
                pts, n_found, longest_len, end = walk_large(
                    faces,
                    nbr_list,
                    deg,
                    nodes,
                    nbr_faces,
                    word_points,
                    word_len,
                    record,
                    seen,
                    stamp,
                    ids,
                    n_ids,
                    st_large,
                    used,
                    live,
                )
            else:
                pts, n_found, longest_len, end, token = walk_revisit(
                    faces,
                    nbr_list,
                    deg,
                    nodes,
                    word_points,
                    word_len,
                    record,
                    seen,
                    stamp,
                    ids,
                    n_ids,
                    rev,
                    token,
                )
            if end >= 0:
                break
            ids = grow(ids, n_ids + n_found)
        n_ids = end_board(
            b, ids, n_ids, end, collect, lo, n_bins, word_len, word_points, longest_id, counts, points
        )
        if small:
            clear_neighbours(faces, nbr_mask, near)
            dead[b] = np.int32(popcount(nonblank & ~live_mask))
        else:
            dead[b] = count_dead(faces, live)
        score[b] = pts
        board_words[b] = n_found
        longest[b] = longest_len
        offsets[b + 1] = n_ids
    return score, board_words, longest, dead, offsets, ids[:n_ids].copy(), longest_id, counts, points
