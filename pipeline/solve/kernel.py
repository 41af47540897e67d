"""The numba batch kernel: array in, array out, no Python objects, no I/O.

Three variants share one output contract (see :func:`pipeline.solve.solve_arrays`) and read the
trie as packed 16-byte node records (:func:`pipeline.trie.pack_nodes`, flattened: ``nodes[2n]``
is node n's child mask, ``nodes[2n + 1]`` its first child (low 32 bits) and word id (high 32
bits, all ones for none)):

* ``solve_small``: standard rule on boards of at most 64 cells. Cell sets are uint64 bit
  masks. Per board, each cell gets a table "neighbours showing face f"; a step then takes only
  the neighbours whose face the trie node has a child for (the OR of a few table entries),
  so the DFS never tries a neighbour that leads nowhere. Depth 0 of the explicit stack is the
  trie's root with every usable cell to try.
* ``solve_large``: standard rule on any board (neighbour lists, a byte array of used cells).
* ``solve_revisit`` (:mod:`pipeline.solve.revisit_kernel`): cells may be revisited (each step
  still moves); it shares this module's helpers.

All three use an explicit stack (no recursion) and a per-word "last seen" stamp (the board's
index) to count each word once per board. The kernels trust their input: face codes must be
-1 (blank) or below the trie's alphabet size (< 64), which the wrapper checks.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import llvmlite.ir as llir
import numpy as np
from numba import njit, types
from numba.extending import intrinsic

from pipeline.solve.driver import drive, walk_kind

ONE = np.uint64(1)
TWO = np.uint64(2)
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


NO_WORD = np.uint64(0xFFFFFFFF)  # the high half of a node record when no word ends there
LOW32 = np.uint64(0xFFFFFFFF)
FACE_STRIDE = 64  # faces per cell in the "neighbours showing face f" table (MAX_FACES)


@njit(nogil=True, cache=True, inline="always")
def child_index(nodes, node, face):  # type: ignore[no-untyped-def]
    """Index of node's child for ``face``, or -1."""
    child_mask = nodes[2 * node]
    fb = np.uint64(face)
    if (child_mask >> fb) & ONE == ZERO:
        return -1
    first = np.int64(nodes[2 * node + 1] & LOW32)
    return first + np.int64(popcount(child_mask & ((ONE << fb) - ONE)))


@njit(nogil=True, cache=True, inline="always")
def node_word(nodes, node):  # type: ignore[no-untyped-def]
    """The id of the word ending at node, or -1."""
    w = nodes[2 * node + 1] >> np.uint64(32)
    return np.int64(-1) if w == NO_WORD else np.int64(w)


@njit(nogil=True, cache=True)
def count_dead(faces, live):  # type: ignore[no-untyped-def]
    """Non-blank cells that no found word uses (``live`` is a byte per cell)."""
    n_dead = 0
    for c in range(len(faces)):
        if faces[c] >= 0 and live[c] == 0:
            n_dead += 1
    return n_dead


@njit(nogil=True, cache=True)
def _index_neighbours(faces, nbr_mask, nbr_faces, near):  # type: ignore[no-untyped-def]
    """Per cell c of a board of <= 64 cells: ``nbr_faces[c]``, the faces its non-blank
    neighbours show, and ``near[c * FACE_STRIDE + f]``, the mask of those neighbours showing
    face f (the caller clears it with :func:`_clear_neighbours`). Returns the non-blank cells."""
    n = len(faces)
    nonblank = ZERO
    for c in range(n):
        if faces[c] >= 0:
            nonblank |= ONE << np.uint64(c)
    for c in range(n):
        todo = nbr_mask[c] & nonblank
        seen_faces = ZERO
        while todo != ZERO:
            k = np.int64(ctz(todo))
            todo &= todo - ONE
            f = np.int64(faces[k])
            seen_faces |= ONE << np.uint64(f)
            near[c * FACE_STRIDE + f] |= ONE << np.uint64(k)
        nbr_faces[c] = seen_faces
    return nonblank


@njit(nogil=True, cache=True)
def _clear_neighbours(faces, nbr_mask, near):  # type: ignore[no-untyped-def]
    # only the entries _index_neighbours set: clearing the whole table costs more per board
    for c in range(len(faces)):
        todo = nbr_mask[c]
        while todo != ZERO:
            k = np.int64(ctz(todo))
            todo &= todo - ONE
            if faces[k] >= 0:
                near[c * FACE_STRIDE + np.int64(faces[k])] = ZERO


@njit(nogil=True, cache=True, inline="always")
def _next_cells(near, nbr_faces, cell, child_mask, used):  # type: ignore[no-untyped-def]
    """The unused neighbours of ``cell`` showing a face in ``child_mask``."""
    wanted = child_mask & nbr_faces[cell]
    cells = ZERO
    base = cell * np.uint64(FACE_STRIDE)
    while wanted != ZERO:
        cells |= near[base + ctz(wanted)]
        wanted &= wanted - ONE
    return cells & ~used


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


class SmallWalk(NamedTuple):
    """The standard rule on boards of <= 64 cells (see :func:`solve_small`). ``board``: the
    current board's first cells (cells whose face starts a word), non-blank cells and live
    cells, as masks."""

    boards: Any
    nbr_mask: Any
    nodes: Any
    st: Any
    nbr_faces: Any
    near: Any
    board: Any


@njit(nogil=True, cache=True, inline="always")
def _prepare_small(ws, b):  # type: ignore[no-untyped-def]
    faces = ws.boards[b]
    root_mask = ws.nodes[0]
    first_cells = ZERO
    for c in range(len(faces)):
        if faces[c] >= 0 and (root_mask >> np.uint64(faces[c])) & ONE != ZERO:
            first_cells |= ONE << np.uint64(c)
    ws.board[0] = first_cells
    ws.board[1] = _index_neighbours(faces, ws.nbr_mask, ws.nbr_faces, ws.near)


@njit(nogil=True, cache=True)
def _walk_small(ws, b, word_points, word_len, collect, seen, stamp, ids, n_ids):  # type: ignore[no-untyped-def]
    """Every word of one board of <= 64 cells, as the driver's walk step (the live cells to
    ``ws.board[2]``)."""
    faces = ws.boards[b]
    nodes = ws.nodes
    near = ws.near
    nbr_faces = ws.nbr_faces
    st_cell, st_mask, st_first, st_todo = ws.st
    live = ZERO  # cells some found word uses
    pts = 0
    n_found = 0
    longest_len = 0
    # unsigned indices: numba adds no negative-index wrap-around (measured ~5% faster)
    depth = ZERO
    st_mask[0] = nodes[0]
    st_first[0] = np.int64(nodes[1] & LOW32)
    st_todo[0] = ws.board[0]
    used = ZERO  # the cells of the current path
    while True:
        todo = st_todo[depth]
        if todo == ZERO:
            if depth == ZERO:
                break
            used ^= ONE << np.uint64(st_cell[depth])
            depth -= ONE
            continue
        bit = todo & (~todo + ONE)
        st_todo[depth] = todo ^ bit
        cell = ctz(bit)
        parent_mask = st_mask[depth]
        fb = np.uint64(faces[cell])
        # every cell in st_todo shows a face the node has a child for: no test needed
        child = np.uint64(st_first[depth]) + popcount(parent_mask & ((ONE << fb) - ONE))
        info = nodes[TWO * child + ONE]
        path = used | bit
        w_hi = info >> np.uint64(32)
        if w_hi != NO_WORD:
            live |= path
            # add_word by hand (here and in the other trie walks): as a helper, even with
            # inline="always", it measured 10-30% slower in this loop
            w = np.int64(w_hi)
            if seen[w] != stamp:
                seen[w] = stamp
                pts += word_points[w]
                n_found += 1
                if word_len[w] > longest_len:
                    longest_len = word_len[w]
                if collect:
                    if n_ids < len(ids):
                        ids[n_ids] = w
                    n_ids += 1
        child_mask = nodes[TWO * child]
        next_cells = _next_cells(near, nbr_faces, cell, child_mask, path)
        if next_cells != ZERO:
            depth += ONE
            used = path
            st_cell[depth] = cell
            st_mask[depth] = child_mask
            st_first[depth] = np.int64(info & LOW32)
            st_todo[depth] = next_cells
    ws.board[2] = live
    return pts, n_found, longest_len, n_ids if n_ids <= len(ids) else -1


@njit(nogil=True, cache=True, inline="always")
def _finish_small(ws, b):  # type: ignore[no-untyped-def]
    _clear_neighbours(ws.boards[b], ws.nbr_mask, ws.near)
    return np.int32(popcount(ws.board[1] & ~ws.board[2]))


walk_kind(SmallWalk, _prepare_small, _walk_small, _finish_small)


@njit(nogil=True, cache=True)
def solve_small(boards, nbr_mask, nodes, word_points, word_len, max_depth, collect, lo, n_bins):  # type: ignore[no-untyped-def]
    n_boards, n = boards.shape
    depth_cap = min(max_depth, n) + 1
    # per depth: the cell it stands on, its trie node's child mask and first child, and the
    # cells still to try from it (depth 0 is the root, standing on no cell)
    st = (
        np.empty(depth_cap, np.int64),
        np.empty(depth_cap, np.uint64),
        np.empty(depth_cap, np.int64),
        np.empty(depth_cap, np.uint64),
    )
    nbr_faces = np.empty(n, np.uint64)
    near = np.zeros(n * FACE_STRIDE, np.uint64)
    ws = SmallWalk(boards, nbr_mask, nodes, st, nbr_faces, near, np.zeros(3, np.uint64))
    return drive(ws, n_boards, n, word_points, word_len, collect, lo, n_bins)


class LargeWalk(NamedTuple):
    """The standard rule on boards of any size (see :func:`solve_large`)."""

    boards: Any
    nbr_list: Any
    deg: Any
    nodes: Any
    st: Any
    used: Any
    live: Any
    nbr_faces: Any


@njit(nogil=True, cache=True, inline="always")
def _prepare_large(ws, b):  # type: ignore[no-untyped-def]
    faces = ws.boards[b]
    for c in range(len(faces)):
        seen_faces = ZERO
        for k in range(ws.deg[c]):
            g = faces[ws.nbr_list[c, k]]
            if g >= 0:
                seen_faces |= ONE << np.uint64(g)
        ws.nbr_faces[c] = seen_faces


@njit(nogil=True, cache=True)
def _walk_large(ws, b, word_points, word_len, collect, seen, stamp, ids, n_ids):  # type: ignore[no-untyped-def]
    """Every word of one board of any size, as the driver's walk step (``ws.live`` gets a 1
    for each cell a found word uses).

    One function on purpose (radon D): with the paths from a start cell and the word recording
    as inlined helpers it measured about 5% slower."""
    faces = ws.boards[b]
    nbr_list = ws.nbr_list
    deg = ws.deg
    nodes = ws.nodes
    nbr_faces = ws.nbr_faces
    used = ws.used
    live = ws.live
    st = ws.st
    live[:] = 0
    st_cell, st_node, st_next = st
    n = len(faces)
    pts = 0
    n_found = 0
    longest_len = 0
    for start in range(n):
        if faces[start] < 0:
            continue
        node0 = child_index(nodes, 0, faces[start])
        if node0 < 0:
            continue
        w = node_word(nodes, node0)
        if w >= 0:
            live[start] = 1
            if seen[w] != stamp:  # add_word by hand: see the docstring
                seen[w] = stamp
                pts += word_points[w]
                n_found += 1
                if word_len[w] > longest_len:
                    longest_len = word_len[w]
                if collect:
                    if n_ids < len(ids):
                        ids[n_ids] = w
                    n_ids += 1
        if nodes[2 * node0] & nbr_faces[start] == ZERO:
            continue
        depth = 0
        st_cell[0] = start
        st_node[0] = node0
        st_next[0] = 0
        used[start] = 1
        while depth >= 0:
            here = st_cell[depth]
            k = st_next[depth]
            if k >= deg[here]:
                used[here] = 0
                depth -= 1
                continue
            st_next[depth] = k + 1
            cell = nbr_list[here, k]
            if used[cell] or faces[cell] < 0:
                continue
            child = child_index(nodes, st_node[depth], faces[cell])
            if child < 0:
                continue
            w = node_word(nodes, child)
            if w >= 0:
                for i in range(depth + 1):
                    live[st_cell[i]] = 1
                live[cell] = 1
                if seen[w] != stamp:  # add_word by hand: see the docstring
                    seen[w] = stamp
                    pts += word_points[w]
                    n_found += 1
                    if word_len[w] > longest_len:
                        longest_len = word_len[w]
                    if collect:
                        if n_ids < len(ids):
                            ids[n_ids] = w
                        n_ids += 1
            if nodes[2 * child] & nbr_faces[cell] != ZERO:
                depth += 1
                st_cell[depth] = cell
                st_node[depth] = child
                st_next[depth] = 0
                used[cell] = 1
    return pts, n_found, longest_len, n_ids if n_ids <= len(ids) else -1


@njit(nogil=True, cache=True, inline="always")
def _finish_large(ws, b):  # type: ignore[no-untyped-def]
    return count_dead(ws.boards[b], ws.live)


walk_kind(LargeWalk, _prepare_large, _walk_large, _finish_large)


@njit(nogil=True, cache=True)
def solve_large(boards, nbr_list, deg, nodes, word_points, word_len, max_depth, collect, lo, n_bins):  # type: ignore[no-untyped-def]
    n_boards, n = boards.shape
    depth_cap = min(max_depth, n) + 1
    # per depth: the cell, its trie node, and the index in the cell's neighbour list to try next
    st = (np.empty(depth_cap, np.int64), np.empty(depth_cap, np.int64), np.empty(depth_cap, np.int64))
    used = np.zeros(n, np.uint8)
    live = np.zeros(n, np.uint8)
    nbr_faces = np.empty(n, np.uint64)
    ws = LargeWalk(boards, nbr_list, deg, nodes, st, used, live, nbr_faces)
    return drive(ws, n_boards, n, word_points, word_len, collect, lo, n_bins)
