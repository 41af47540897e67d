"""The numba trie walks: array in, array out, no Python objects, no I/O.

The trie walks of one board and their helpers, for the batch driver
(:func:`pipeline.solve.drive.solve_batch`, one output contract: see
:func:`pipeline.solve.solve_arrays`). They read the trie as packed 16-byte node records
(:func:`pipeline.trie.pack_nodes`, flattened: ``nodes[2n]`` is node n's child mask,
``nodes[2n + 1]`` its first child (low 32 bits) and word id (high 32 bits, all ones for none)):

* ``walk_small``: standard rule on boards of at most 64 cells. Cell sets are uint64 bit
  masks. Per board, each cell gets a table "neighbours showing face f"; a step then takes only
  the neighbours whose face the trie node has a child for (the OR of a few table entries),
  so the DFS never tries a neighbour that leads nowhere. Depth 0 of the explicit stack is the
  trie's root with every usable cell to try.
* ``walk_large``: standard rule on any board (neighbour lists, a byte array of used cells).
* ``walk_revisit`` (:mod:`pipeline.solve.revisit_kernel`): cells may be revisited (each step
  still moves); it shares this module's helpers.

All three use an explicit stack (no recursion) and a per-word "last seen" stamp (the board's
index) to count each word once per board. The kernels trust their input: face codes must be
-1 (blank) or below the trie's alphabet size (< 64), which the wrapper checks.
"""

from __future__ import annotations

import numpy as np

from pipeline.jit import intrinsic, njit, types

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
        import llvmlite.ir as llir  # here: the ahead-of-time mode never imports llvmlite

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
def new_outputs(n_boards, n_cells, n_words, collect, n_bins):  # type: ignore[no-untyped-def]
    """The per-board result arrays, the word-id buffer, the per-word "last seen" stamps and
    the tally arrays (longest word id, words and points per length bin; ``n_bins`` columns)."""
    score = np.zeros(n_boards, np.int32)
    board_words = np.zeros(n_boards, np.int32)
    longest = np.zeros(n_boards, np.int16)
    dead = np.zeros(n_boards, np.int32)
    offsets = np.zeros(n_boards + 1, np.int64)
    # room for the usual word count (random 4x4: ~35 a board; big boards: a few per cell); a
    # tally without collection only ever holds one board's ids
    ids = np.empty(max(1024, (n_boards if collect else 1) * max(64, 4 * n_cells)), np.int32)
    seen = np.full(n_words, -1, np.int32)
    longest_id = np.full(n_boards if n_bins > 0 else 0, -1, np.int32)
    counts = np.zeros((n_boards if n_bins > 0 else 0, n_bins), np.int32)
    points = np.zeros((n_boards if n_bins > 0 else 0, n_bins), np.int32)
    return score, board_words, longest, dead, offsets, ids, seen, longest_id, counts, points


@njit(nogil=True, cache=True)
def tally_board(ids, start, end, word_len, word_points, lo, counts, points):  # type: ignore[no-untyped-def]
    """Add the words ``ids[start:end]`` of one board to its per-length rows ``counts`` and
    ``points`` (bins ``lo, lo+1, ...``, the last bin for everything longer) and return the
    longest word's id (ties: the smallest id, which is the alphabetically first word; -1 if
    none). The order of the ids does not matter."""
    top = len(counts) - 1
    best_len = -1
    best = -1
    for k in range(start, end):
        w = ids[k]
        length = int(word_len[w])
        if length > best_len or (length == best_len and w < best):
            best_len = length
            best = w
        j = min(max(length - lo, 0), top)
        counts[j] += 1
        points[j] += word_points[w]
    return best


@njit(nogil=True, cache=True)
def end_board(b, ids, start, end, collect, lo, n_bins, word_len, word_points, longest_id, counts, points):  # type: ignore[no-untyped-def]
    """Board ``b``'s ids ``ids[start:end]`` are recorded: tally them when there are bins
    (:func:`tally_board`) and return where the next board's ids start (``start`` again when
    the ids are not kept)."""
    if n_bins > 0:
        longest_id[b] = tally_board(ids, start, end, word_len, word_points, lo, counts[b], points[b])
        if not collect:
            return start
    return end


@njit(nogil=True, cache=True)
def count_dead(faces, live):  # type: ignore[no-untyped-def]
    """Non-blank cells that no found word uses (``live`` is a byte per cell)."""
    n_dead = 0
    for c in range(len(faces)):
        if faces[c] >= 0 and live[c] == 0:
            n_dead += 1
    return n_dead


@njit(nogil=True, cache=True)
def index_neighbours(faces, nbr_mask, nbr_faces, near):  # type: ignore[no-untyped-def]
    """Per cell c of a board of <= 64 cells: ``nbr_faces[c]``, the faces its non-blank
    neighbours show, and ``near[c * FACE_STRIDE + f]``, the mask of those neighbours showing
    face f (the caller clears it with :func:`clear_neighbours`). Returns the non-blank cells."""
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
def clear_neighbours(faces, nbr_mask, near):  # type: ignore[no-untyped-def]
    # only the entries index_neighbours set: clearing the whole table costs more per board
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


@njit(nogil=True, cache=True)
def grow(ids, needed):  # type: ignore[no-untyped-def]
    cap = len(ids)
    while cap < needed:
        cap *= 2
    out = np.empty(cap, dtype=np.int32)
    out[: len(ids)] = ids
    return out


@njit(nogil=True, cache=True)
def walk_small(
    faces, nodes, first_cells, nbr_faces, near, word_points, word_len, collect, seen, stamp, ids, n_ids, st
):  # type: ignore[no-untyped-def]
    """Every word of one board of <= 64 cells: (points, words, longest, live cells, n_ids), the
    found ids appended to ``ids`` from ``n_ids`` on; n_ids is -1 when ``ids`` ran out of room
    (the walk still finishes, so the caller knows how much room the board needs, grows ``ids``
    and walks the board once more with a new stamp). ``ids`` is never reassigned here: a
    growable buffer in this loop made numba count references on every step (about 25% of the
    time)."""
    st_cell, st_mask, st_first, st_todo = st
    live = ZERO  # cells some found word uses
    pts = 0
    n_found = 0
    longest_len = 0
    # unsigned indices: numba adds no negative-index wrap-around (measured ~5% faster)
    depth = ZERO
    st_mask[0] = nodes[0]
    st_first[0] = np.int64(nodes[1] & LOW32)
    st_todo[0] = first_cells
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
            # Word recording stays inline (here and in the other kernels): as a helper
            # function it measured about 10% slower.
            w = np.int64(w_hi)
            live |= path
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
    return pts, n_found, longest_len, live, n_ids if n_ids <= len(ids) else -1


@njit(nogil=True, cache=True)
def walk_large(
    faces,
    nbr_list,
    deg,
    nodes,
    nbr_faces,
    word_points,
    word_len,
    collect,
    seen,
    stamp,
    ids,
    n_ids,
    st,
    used,
    live,
):  # type: ignore[no-untyped-def]
    """Every word of one board of any size, as :func:`walk_small` (same return, same reason
    for never reassigning ``ids``); ``live`` gets a 1 for each cell a found word uses."""
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
            if seen[w] != stamp:  # inline: see walk_small
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
                if seen[w] != stamp:  # inline: see walk_small
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
