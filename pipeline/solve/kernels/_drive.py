"""The batch driver around the three trie walks: one loop over the boards for every rule and
board size (see :func:`pipeline.solve.solve_arrays` for the output contract).

Per board it prepares what the walk needs, walks, tallies the board's words and writes its
row. The small walk hands back the words it found, once per path, in a buffer of about
``hit_room`` (resuming when the buffer fills), and this loop counts each word once; the other
walks count as they go and walk a board once more with a new stamp and a bigger id buffer when
theirs ran out. The walk is chosen per board by ``variant`` (:data:`SMALL`, :data:`LARGE`,
:data:`REVISIT`), a branch that costs nothing next to a walk; the walks themselves stay
separate compiled functions, so each keeps the code numba gives it alone (writing them as
helpers of one shared walk measured about 11% slower on the 4x4 kernel)."""

from __future__ import annotations

import numpy as np

from pipeline.jit import njit
from pipeline.solve.kernels._revisit import walk_revisit
from pipeline.solve.kernels._walk import (
    LANES,
    ONE,
    ZERO,
    count_dead,
    count_hits,
    end_board,
    fill_lanes,
    grow,
    lane_layout,
    new_outputs,
    popcount,
    walk_large,
    walk_small,
)

#: ``variant``: the standard rule on boards of at most 64 cells (cell sets as bit masks), on
#: boards of any size (neighbour lists), and the revisit rule.
SMALL, LARGE, REVISIT = 0, 1, 2
#: word ids the small walk hands back at a time (a random 4x4 board has ~45 with repeats)
HIT_ROOM = 4096


@njit(nogil=True, cache=True)
def solve_batch(
    variant,
    boards,
    nbr_mask,
    nbr_list,
    deg,
    nodes,
    word_points,
    word_len,
    max_depth,
    collect,
    lo,
    n_bins,
    records,
    face_bits,
    hit_room,
):  # type: ignore[no-untyped-def]
    """Every board's words with the walk of ``variant``; the outputs of
    :func:`pipeline.solve.kernels._walk.new_outputs` less the stamps, the ids cut to length.
    The small walk reads ``records``, the trie's 8-byte records with child masks of
    ``face_bits`` bits (:func:`pipeline.solve.small_records`; the other walks read ``nodes``),
    and hands back found words ``hit_room`` at a time (:data:`HIT_ROOM`)."""
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
        np.empty(d_small, np.uint64),  # the cells of the path to it
        np.empty(d_small, np.uint64),  # its trie node's child mask
        np.empty(d_small, np.uint64),  # its first child
        np.empty(d_small, np.uint64),  # the cells still to try from it
    )
    # the small walk's lanes (see lane_layout): uint32 when every face bit fits
    narrow = face_bits <= 32
    chunks, lane_start, lane_slot, lane_cell = lane_layout(nbr_list, deg)
    per_cell = max(chunks, 1) * LANES
    n_lanes = n * per_cell if small else per_cell
    lanes32 = np.zeros(n_lanes if narrow else per_cell, np.uint32)
    lanes64 = np.zeros(per_cell if narrow else n_lanes, np.uint64)
    # the walks take them shaped: (cells, LANES) for boards of at most LANES cells, else
    # (cells, chunks, LANES), a compiled walk each (the other shapes get one cell's worth)
    rows = n if small and chunks == 0 else 1
    windows = n if small and chunks > 0 else 1
    per_window = max(chunks, 1) * LANES
    rows32 = lanes32[: (rows if narrow else 1) * LANES].reshape((-1, LANES))
    rows64 = lanes64[: (1 if narrow else rows) * LANES].reshape((-1, LANES))
    windows32 = lanes32[: (windows if narrow else 1) * per_window].reshape((-1, max(chunks, 1), LANES))
    windows64 = lanes64[: (1 if narrow else windows) * per_window].reshape((-1, max(chunks, 1), LANES))
    # hit_room, plus what the walk can add between two of its checks (see walk_small)
    hits = np.empty(max(hit_room, 1) + n * (n + 1) if small else 1, np.uint32)
    nbr_faces = np.empty(n, np.uint64)  # the faces each cell's non-blank neighbours show (large)
    d_large = depth_cap if large else 1
    live = np.zeros(n, np.uint8)  # a byte per cell some found word uses (large, revisit)
    st_large = (
        np.empty(d_large, np.int64),  # the cell
        np.empty(d_large, np.int64),  # its trie node
        np.empty(d_large, np.int64),  # the index in the cell's neighbour list to try next
        np.zeros(n, np.uint8),  # the cells in use
        live,
        nbr_faces,
    )
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
        if small:
            stamp += 1
            nonblank = ZERO
            first_cells = ZERO
            for c in range(n):
                if faces[c] >= 0:
                    nonblank |= ONE << np.uint64(c)
                    if (root_mask >> np.uint64(faces[c])) & ONE != ZERO:
                        first_cells |= ONE << np.uint64(c)
            if narrow:
                fill_lanes(faces, lanes32, lane_slot, lane_cell)
            else:
                fill_lanes(faces, lanes64, lane_slot, lane_cell)
            st_small[0][0] = ZERO
            st_small[1][0] = root_mask
            st_small[2][0] = (records[0] >> np.uint64(face_bits)) & ((ONE << np.uint64(63 - face_bits)) - ONE)
            st_small[3][0] = first_cells
            live_mask = ZERO
            depth = 0
            start = n_ids
            pts, n_found, longest_len = 0, 0, 0
            while depth >= 0:
                if chunks == 0 and narrow:
                    n_hits, live_mask, depth = walk_small(
                        faces,
                        records,
                        np.uint64(face_bits),
                        rows32,
                        lane_start,
                        hits,
                        st_small,
                        depth,
                        live_mask,
                    )
                elif chunks == 0:
                    n_hits, live_mask, depth = walk_small(
                        faces,
                        records,
                        np.uint64(face_bits),
                        rows64,
                        lane_start,
                        hits,
                        st_small,
                        depth,
                        live_mask,
                    )
                elif narrow:
                    n_hits, live_mask, depth = walk_small(
                        faces,
                        records,
                        np.uint64(face_bits),
                        windows32,
                        lane_start,
                        hits,
                        st_small,
                        depth,
                        live_mask,
                    )
                else:
                    n_hits, live_mask, depth = walk_small(
                        faces,
                        records,
                        np.uint64(face_bits),
                        windows64,
                        lane_start,
                        hits,
                        st_small,
                        depth,
                        live_mask,
                    )
                if record and n_ids + n_hits > len(ids):
                    ids = grow(ids, n_ids + n_hits)
                more_pts, more_found, more_longest, n_ids = count_hits(
                    hits, n_hits, nodes, seen, stamp, word_points, word_len, record, ids, n_ids
                )
                pts += more_pts
                n_found += more_found
                longest_len = max(longest_len, more_longest)
            n_ids = end_board(
                b, ids, start, n_ids, collect, lo, n_bins, word_len, word_points, longest_id, counts, points
            )
            dead[b] = np.int32(popcount(nonblank & ~live_mask))
        else:
            if large:
                for c in range(n):
                    seen_faces = ZERO
                    for k in range(deg[c]):
                        g = faces[nbr_list[c, k]]
                        if g >= 0:
                            seen_faces |= ONE << np.uint64(g)
                    nbr_faces[c] = seen_faces
            while True:
                stamp += 1
                # the arguments both walks take, before their own scratch
                args = (faces, nbr_list, deg, nodes, word_points, word_len, record, seen, stamp, ids, n_ids)
                if large:
                    live[:] = 0
                    pts, n_found, longest_len, end = walk_large(*args, st_large)
                else:
                    pts, n_found, longest_len, end, token = walk_revisit(*args, rev, token)
                if end >= 0:
                    break
                ids = grow(ids, n_ids + n_found)
            n_ids = end_board(
                b, ids, n_ids, end, collect, lo, n_bins, word_len, word_points, longest_id, counts, points
            )
            dead[b] = count_dead(faces, live)
        score[b] = pts
        board_words[b] = n_found
        longest[b] = longest_len
        offsets[b + 1] = n_ids
    return score, board_words, longest, dead, offsets, ids[:n_ids].copy(), longest_id, counts, points
