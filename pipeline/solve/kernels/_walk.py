"""The numba trie walks: array in, array out, no Python objects, no I/O.

The trie walks of one board and their helpers, for the batch driver
(:func:`pipeline.solve.kernels._drive.solve_batch`, one output contract: see
:func:`pipeline.solve.solve_arrays`). They read the trie as packed 16-byte node records
(:func:`pipeline.lexicon.trie.pack_nodes`, flattened: ``nodes[2n]`` is node n's child mask,
``nodes[2n + 1]`` its first child (low 32 bits) and word id (high 32 bits, all ones for none)):

* ``walk_small``: standard rule on boards of at most 64 cells. Cell sets are uint64 bit
  masks. Per board, each cell gets a row of "lanes", one per board cell near it, holding the
  face bit of that cell when it is a non-blank neighbour (else 0): a step then finds the
  neighbours whose face the trie node has a child for with one vector test of the node's
  child mask against the row (:func:`lane_test`; the bits of the result are the cells), so the
  DFS never tries a neighbour that leads nowhere and never loops over neighbours or faces.
  Found words are only appended to a buffer during the walk (no branch, no look-up); the
  caller counts each once afterwards.
* ``walk_large``: standard rule on any board (neighbour lists, a byte array of used cells).
* ``walk_revisit`` (:mod:`pipeline.solve.kernels._revisit`): cells may be revisited (each step
  still moves); it shares this module's helpers.

All three use an explicit stack (no recursion) and a per-word "last seen" stamp to count each
word once per board. The kernels trust their input: face codes must be -1 (blank) or below the
trie's alphabet size (<= 64), which the wrapper checks.
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


@intrinsic
def lane_test(typingctx, lanes, start, mask):  # type: ignore[no-untyped-def]
    """Bit j set when ``lanes.flat[start + j] & mask`` is not 0, for the :data:`LANES` lanes
    from ``start``: one vector AND, compare and mask move where the CPU has them (LLVM lowers
    it for the machine: on x86-64 with AVX-512 and uint32 lanes, ``vptestmd`` + ``kmovw``).
    The caller keeps the lanes read inside ``lanes``."""
    width = lanes.dtype.bitwidth
    sig = types.uint64(lanes, types.uint64, types.uint64)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        import llvmlite.ir as llir  # here: the ahead-of-time mode never imports llvmlite

        lane_t = llir.IntType(width)
        vec_t = llir.VectorType(lane_t, LANES)
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        row = builder.load(
            builder.bitcast(builder.gep(data, [args[1]]), vec_t.as_pointer()), align=width // 8
        )
        undef = llir.Constant(vec_t, llir.Undefined)
        one = builder.insert_element(
            undef, builder.trunc(args[2], lane_t), llir.Constant(llir.IntType(32), 0)
        )
        spread = builder.shuffle_vector(
            one, undef, llir.Constant(llir.VectorType(llir.IntType(32), LANES), [0] * LANES)
        )
        hit = builder.icmp_unsigned("!=", builder.and_(row, spread), llir.Constant(vec_t, 0))
        return builder.zext(builder.bitcast(hit, llir.IntType(LANES)), llir.IntType(64))

    return sig, codegen


@intrinsic
def prefetch(typingctx, arr, index):  # type: ignore[no-untyped-def]
    """Ask the CPU to bring ``arr[index]``'s cache line in (LLVM's ``llvm.prefetch``: a hint,
    never a fault, whatever the index)."""
    sig = types.void(arr, types.uint64)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        import llvmlite.ir as llir  # here: the ahead-of-time mode never imports llvmlite

        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        byte_ptr = llir.IntType(8).as_pointer()
        i32 = llir.IntType(32)
        fn = builder.module.declare_intrinsic(
            "llvm.prefetch", fnty=llir.FunctionType(llir.VoidType(), [byte_ptr, i32, i32, i32])
        )
        # read, keep in every cache level, data
        where = builder.bitcast(builder.gep(data, [args[1]]), byte_ptr)
        builder.call(fn, [where, llir.Constant(i32, 0), llir.Constant(i32, 3), llir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


#: lanes one :func:`lane_test` reads (cells of a board's row of lanes, see :func:`lane_layout`)
LANES = 16
NO_WORD = np.uint64(0xFFFFFFFF)  # the high half of a node record when no word ends there
LOW32 = np.uint64(0xFFFFFFFF)  # the low half of a packed record: its first child


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
def lane_layout(nbr_list, deg):  # type: ignore[no-untyped-def]
    """Where each cell's lanes are, for the small walk. A board of at most :data:`LANES`
    cells gives each cell one test's worth of lanes, lane j showing cell j (``chunks`` 0). A
    bigger one gives each cell ``chunks`` tests' worth covering the cells from ``start[c]`` on,
    which hold all its neighbours (on a grid, from one row above it to one row below: one test
    for boards up to 6 columns wide). Returns (chunks, start, slot, cell): for each (cell,
    neighbour) pair, the lane ``slot`` (an index into the flat lanes) that shows ``cell``."""
    n = len(deg)
    span = 1
    for c in range(n):
        lo, hi = c, c
        for k in range(deg[c]):
            lo = min(lo, nbr_list[c, k])
            hi = max(hi, nbr_list[c, k])
        span = max(span, hi - lo + 1)
    chunks = 0 if n <= LANES else (span + LANES - 1) // LANES
    width = max(chunks, 1) * LANES
    start = np.zeros(n, np.int64)
    n_pairs = 0
    for c in range(n):
        if chunks > 0:
            lo = c
            for k in range(deg[c]):
                lo = min(lo, nbr_list[c, k])
            # a window that would end past the last cell starts lower: every lane read is a
            # cell below 64, so the shifts in walk_small stay below 64
            start[c] = min(lo, max(n - width, 0))
        n_pairs += deg[c]
    slot = np.empty(n_pairs, np.int64)
    cell = np.empty(n_pairs, np.int64)
    e = 0
    for c in range(n):
        for k in range(deg[c]):
            slot[e] = c * width + nbr_list[c, k] - start[c]
            cell[e] = nbr_list[c, k]
            e += 1
    return chunks, start, slot, cell


@njit(nogil=True, cache=True, inline="always")
def fill_lanes(faces, lanes, slot, cell):  # type: ignore[no-untyped-def]
    """One board's lanes (flat; see :func:`lane_layout`): the face bit of each neighbour, 0
    for a blank; a lane that is no cell's neighbour stays 0 from the allocation."""
    for e in range(len(slot)):
        # unsigned indices: no negative-index wrap-around code
        f = faces[np.uint64(cell[e])]
        lanes[np.uint64(slot[e])] = ONE << np.uint64(f) if f >= 0 else ZERO


@njit(nogil=True, cache=True, inline="always")
def count_hits(hits, n_hits, nodes, seen, stamp, word_points, word_len, record, ids, n_ids):  # type: ignore[no-untyped-def]
    """Count the words ending at the nodes ``hits[:n_hits]`` (in the order found; their ids
    from the 16-byte records ``nodes``) not seen before on this board (``stamp``): returns
    (points, words, longest, n_ids), their ids appended to ``ids`` from ``n_ids`` on when
    ``record`` (the caller makes room first). ``hits`` is left holding the word ids."""
    pts = 0
    n_found = 0
    longest_len = 0
    # random look-ups in big tables: all of them under way before the first use
    for k in range(n_hits):
        w = nodes[TWO * np.uint64(hits[k]) + ONE] >> np.uint64(32)
        hits[k] = w
        prefetch(seen, w)
        prefetch(word_points, w)
    # count_word's logic written out: calling it here (inlined) made the 4x4 solve 22% slower
    # (make bench-vs-cpp, 3 pairs: 263k against 339k boards/s, 2026-12-06)
    for k in range(n_hits):
        w = hits[k]
        if seen[w] != stamp:
            seen[w] = stamp
            pts += word_points[w]
            n_found += 1
            if word_len[w] > longest_len:
                longest_len = word_len[w]
            if record:
                ids[n_ids] = w
                n_ids += 1
    return pts, n_found, longest_len, n_ids


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
def walk_small(faces, records, face_bits, lanes, start, hits, st, depth, live):  # type: ignore[no-untyped-def]
    """Walk one board of <= 64 cells on from stack level ``depth`` (the caller puts the root
    with every usable first cell at level 0): appends the node of every word found, once per
    path, to ``hits`` and returns (hits, live, depth): ``live`` gains the cells of found words,
    and ``depth`` is -1 when the walk is done, else the level to resume from (``hits`` was
    nearly full: the caller counts them, see :func:`count_hits`, and calls again).

    It reads the trie as 8-byte records (:func:`pipeline.solve.small_records`, ``face_bits`` the width of
    their child mask): half the bytes of the 16-byte ones, so more of the trie stays in the
    CPU's caches.

    ``lanes`` (see :func:`lane_layout`) is (cells, :data:`LANES`) for a board of at most
    :data:`LANES` cells, else (cells, chunks, :data:`LANES`): numba compiles this walk once
    for each, and the test on ``lanes.ndim`` below is a constant in each, so the small
    boards' walk has no shift and no loop in its step. Its lanes are uint32 when every face
    bit fits, else uint64."""
    st_used, st_mask, st_first, st_todo = st
    row_len = np.uint64(lanes.size // max(lanes.shape[0], 1))
    chunks = np.int64(row_len) // LANES
    n = np.uint64(len(faces))
    # a check at every pop suffices: between two pops, at most n + 1 levels of at most n steps
    limit = np.uint64(len(hits)) - min(np.uint64(len(hits)), n * (n + ONE))
    n_hits = ZERO
    kid_bits = np.uint64(63) - face_bits
    mask_of = (ONE << face_bits) - ONE
    first_of = (ONE << kid_bits) - ONE
    # unsigned indices: numba adds no negative-index wrap-around (measured ~5% faster)
    d = np.uint64(depth)
    while True:
        todo = st_todo[d]
        if todo == ZERO:
            if d == ZERO or n_hits > limit:
                break
            d -= ONE
            continue
        bit = todo & (~todo + ONE)
        st_todo[d] = todo ^ bit
        cell = ctz(bit)
        fb = np.uint64(faces[cell])
        # every cell in st_todo shows a face the node has a child for: no test needed
        child = st_first[d] + popcount(st_mask[d] & ((ONE << fb) - ONE))
        record = records[child]
        # the node's children: the next step reads one of them if the lane test below finds
        # a cell to go on to, ~15 cycles from now; start fetching their first 16 now (about
        # 15% faster on random 4x4 boards)
        kids = (record >> face_bits) & first_of
        prefetch(records, kids)
        prefetch(records, kids + np.uint64(8))
        path = st_used[d] | bit
        # no branch on "is a word" (a coin toss for the predictor): the node is always
        # written, and kept by counting it
        is_word = record >> np.uint64(63)
        hits[n_hits] = child
        n_hits += is_word
        live |= path & (ZERO - is_word)
        child_mask = record & mask_of
        if lanes.ndim == 2:
            cells = lane_test(lanes, cell * np.uint64(LANES), child_mask)
        else:
            row = cell * row_len
            first = np.uint64(start[cell])
            cells = lane_test(lanes, row, child_mask) << first
            for k in range(1, chunks):
                at = np.uint64(k * LANES)
                cells |= lane_test(lanes, row + at, child_mask) << (first + at)
        cells &= ~path
        if cells != ZERO:
            d += ONE
            st_used[d] = path
            st_mask[d] = child_mask
            st_first[d] = kids
            st_todo[d] = cells
    done = d == ZERO and st_todo[d] == ZERO
    return np.int64(n_hits), live, -1 if done else np.int64(d)


@njit(nogil=True, cache=True, inline="always")
def count_word(w, seen, stamp, word_points, word_len, collect, ids, pts, n_found, longest_len, n_ids):  # type: ignore[no-untyped-def]
    """Count word ``w`` unless this board (``stamp``) found it already: returns the running
    (points, words, longest, n_ids), its id put in ``ids`` when ``collect`` (past the end of
    ``ids`` only counted, so the caller can make room and walk the board again)."""
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
    return pts, n_found, longest_len, n_ids


@njit(nogil=True, cache=True, inline="always")
def enter(st_cell, st_at, st_next, used, d, cell, at):  # type: ignore[no-untyped-def]
    """Frame ``d`` of a depth-first walk over the neighbour lists: ``cell``, marked used,
    reached with ``at`` (a trie node, a row of a table), its neighbours to try from the first
    (see :func:`next_neighbour`)."""
    st_cell[d] = cell
    st_at[d] = at
    st_next[d] = 0
    used[cell] = 1


@njit(nogil=True, cache=True, inline="always")
def next_neighbour(st_next, used, nbr_list, deg, d, here):  # type: ignore[no-untyped-def]
    """The neighbour of frame ``d``'s cell ``here`` to try next, or -1 when none is left: the
    cell is then no longer used, and the caller goes back a frame."""
    k = st_next[d]
    if k >= deg[here]:
        used[here] = 0
        return -1
    st_next[d] = k + 1
    return nbr_list[here, k]


@njit(nogil=True, cache=True)
def walk_large(faces, nbr_list, deg, nodes, word_points, word_len, collect, seen, stamp, ids, n_ids, scratch):  # type: ignore[no-untyped-def]
    """Every word of one board of any size, as :func:`walk_small` (same return, same reason
    for never reassigning ``ids``). ``scratch``: the stack (per depth the cell, its trie node
    and the next of its neighbours to try), a byte per cell for the cells on it, one that gets
    a 1 for each cell a found word uses (``live``), and the faces each cell's non-blank
    neighbours show."""
    st_cell, st_node, st_next, used, live, nbr_faces = scratch
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
            pts, n_found, longest_len, n_ids = count_word(
                w, seen, stamp, word_points, word_len, collect, ids, pts, n_found, longest_len, n_ids
            )
        if nodes[2 * node0] & nbr_faces[start] == ZERO:
            continue
        depth = 0
        enter(st_cell, st_node, st_next, used, 0, start, node0)
        while depth >= 0:
            cell = next_neighbour(st_next, used, nbr_list, deg, depth, st_cell[depth])
            if cell < 0:
                depth -= 1
                continue
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
                pts, n_found, longest_len, n_ids = count_word(
                    w, seen, stamp, word_points, word_len, collect, ids, pts, n_found, longest_len, n_ids
                )
            if nodes[2 * child] & nbr_faces[cell] != ZERO:
                depth += 1
                enter(st_cell, st_node, st_next, used, depth, cell, child)
    return pts, n_found, longest_len, n_ids if n_ids <= len(ids) else -1
