"""The numba kernel for the revisit rule (cells may be revisited; each step still moves): the
trie is walked depth-first with, per depth, the set of cells where the prefix can end (a
frontier); on the way back up, the cells that lead to a completed word are marked live. Same
output contract and node records as :mod:`pipeline.solve.kernels._walk`, whose helpers it shares.
"""

from __future__ import annotations

import numpy as np

from pipeline.jit import njit
from pipeline.solve.kernels._walk import (
    ONE,
    ZERO,
    child_index,
    count_word,
    ctz,
    node_word,
)


@njit(nogil=True, cache=True)
def walk_revisit(
    faces, nbr_list, deg, nodes, word_points, word_len, collect, seen, stamp, ids, n_ids, scratch, token
):  # type: ignore[no-untyped-def]
    """Every word of one board under the revisit rule, as :func:`walk_small` (the same return
    but the token counter last, for the same reason ``ids`` is never reassigned)."""
    frontier, f_count, f_mark, b_mark, f_tok, has_back, st_node, faces_left, live = scratch
    n = len(faces)
    depth_cap = len(f_count)
    board_faces = ZERO
    for c in range(n):
        live[c] = 0
        if faces[c] >= 0:
            board_faces |= ONE << np.uint64(faces[c])
    pts = 0
    n_found = 0
    longest_len = 0
    d = -1
    root_left = nodes[0] & board_faces
    while True:
        if d < 0:
            if root_left == ZERO:
                break
            bit = root_left & (~root_left + ONE)
            root_left ^= bit
            g = np.int64(ctz(bit))
            child = child_index(nodes, 0, g)
            token += 1
            cnt = 0
            for c in range(n):
                if faces[c] == g:
                    f_mark[0, c] = token
                    frontier[0, cnt] = c
                    cnt += 1
            d = 0
        else:
            left = faces_left[d]
            if left == ZERO:
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
            bit = left & (~left + ONE)
            faces_left[d] = left ^ bit
            g = np.int64(ctz(bit))
            child = child_index(nodes, st_node[d], g)
            token += 1
            cnt = 0
            for i in range(f_count[d]):
                c = frontier[d, i]
                for k in range(deg[c]):
                    nb = nbr_list[c, k]
                    if faces[nb] == g and f_mark[d + 1, nb] != token:
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
        w = node_word(nodes, child)
        if w >= 0:
            has_back[d] = True
            for i in range(cnt):
                c = frontier[d, i]
                b_mark[d, c] = token
                live[c] = 1
            pts, n_found, longest_len, n_ids = count_word(
                w, seen, stamp, word_points, word_len, collect, ids, pts, n_found, longest_len, n_ids
            )
        faces_left[d] = nodes[2 * child] & board_faces if d + 1 < depth_cap else ZERO
    return pts, n_found, longest_len, n_ids if n_ids <= len(ids) else -1, token
