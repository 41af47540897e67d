"""Building the orderly tree of a board class (numba kernels; see :mod:`pipeline.best.prove.tree`).

The prover's trie is packed as 16-byte records (``rec[2n]`` node n's child mask, ``rec[2n + 1]``
its first child in the low 32 bits and its word id + 1 in the high 32 bits; a word's points
are read by its id), so a step of the walk touches one record. The tree is then
built in three passes rather than by inserting each word into a growing tree:

1. :func:`collect_paths` walks every path a board of the class can spell and records, for each
   word found, its key and its word id. The key has one field per cell in split-rank order,
   rank 0 most significant: the cell's letter + 1, or 0 when the path does not use the cell. It
   is two uint64 words (``fields`` fields a word, the low word holding the last ones), so a
   class of up to ``2 * fields`` cells fits (24 cells for 26 faces: 4x4 but not 5x5). The word
   id's int64 has in its high 32 bits which fields are used (bit p for field p, counted from
   the least significant). The id, not the trie node, so that reading the sorted paths
   touches only word-indexed arrays (the points and the de-duplicating stamps): the trie
   node's record, read at random, cost the tree's pass about a fifth of its time.
2. :func:`radix_sort` sorts the keys. Paths that share their first j (cell, letter) pairs in
   split order share the key's leading fields, so they are contiguous, as in a sorted word list.
3. :func:`tree_from_paths` reads the sorted paths once, like building a trie from sorted words,
   and writes the tree straight in pre-order with first-child / next-sibling links (the layout
   :mod:`pipeline.best.prove.tree._eval` evaluates and lifts), folding each node's value into its
   parent when the node is closed, so the unforced bound comes for free. Equal keys are one
   SUM node; a word is counted there once.
"""

from __future__ import annotations

import importlib

import numpy as np

from pipeline.best.prove._bounds import enter_cell, trie_child
from pipeline.jit import intrinsic, njit, types
from pipeline.solve.kernels import ctz, popcount

#: Statuses when the caller's path or node arrays are too small (it grows them and retries).
FULL_PATHS, FULL_NODES = -1, -2
#: :func:`tree_from_paths`'s status when a node's points do not fit its tag (:data:`MAX_POINTS`).
POINTS_OVERFLOW = -3

#: The columns of a node record (int32 [nodes, 4], see :func:`tree_from_paths`): the first
#: child, the next sibling, the value, and a tag: ``-1 - cell`` for a CHOICE node,
#: ``points << LETTER_BITS | letter`` for a SUM node.
FIRST, NEXT, VAL, TAG = 0, 1, 2, 3
#: A SUM node's tag: its points shifted by this many bits over its letter.
LETTER_BITS = 6
#: The most points a SUM node's tag holds (a lifted node's are its merged nodes' summed).
MAX_POINTS = (1 << (31 - LETTER_BITS)) - 1


#: Whether numpy may ask the kernel for transparent huge pages (``madvise``) for its big arrays.
#: It does by default; where the kernel compacts memory to serve them (``defrag`` = madvise, as
#: on the 2-core machine), that cost 2.5-3 s of system CPU on the heavy 3x4 corner classes
#: 13846 + 16762 (3.1-3.5 s against 0.6 s without; user CPU the same), so a builder turns it
#: off for its process (:func:`huge_pages`, called by :class:`pipeline.best.prove.tree._builder.TreeBuilder`).
HUGE_PAGES = False


def huge_pages(enabled: bool) -> None:
    """Let numpy ``madvise`` its big arrays for transparent huge pages, or not, for the whole
    process (numpy's own switch, as ``NUMPY_MADVISE_HUGEPAGE``; nothing where numpy has none)."""
    for name in ("numpy._core.multiarray", "numpy.core.multiarray"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        setter = getattr(module, "_set_madvise_hugepage", None)
        if setter is not None:
            setter(enabled)
            return


@intrinsic
def clz(typingctx, x):
    """Leading zero bits of a uint64 (64 for 0)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        import llvmlite.ir as llir  # here: the ahead-of-time mode never imports llvmlite

        return builder.ctlz(args[0], llir.Constant(llir.IntType(1), 0))

    return sig, codegen


def field_bits(n_faces: int) -> int:
    """Bits of one key field (values 0..n_faces)."""
    return int(n_faces).bit_length()


def max_cells(n_faces: int) -> int:
    """The most cells a class key holds with this many faces."""
    return 2 * (64 // field_bits(n_faces))


def walk_state(n_cells: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The state :func:`collect_paths` keeps when its arrays fill, to go on from there: its
    stack (int64 [4, cells] and uint64 [cells]) and the rest (int64 [9]; [0] is 1 while a walk
    is to be resumed)."""
    return np.zeros((4, n_cells), np.int64), np.zeros(n_cells, np.uint64), np.zeros(9, np.int64)


@njit(nogil=True, cache=True)
def collect_paths(masks, rank, nbr_list, deg, rec, word_pts, bits, fields, keys, wids, word_seen, tag, state):
    """Every (key, word id | used fields << 32) of a word some board of the class spells
    along some path, into ``keys`` (uint64 [cap, 2]: high word, low word) and ``wids``;
    returns (paths, sum bound: each spellable word once, via ``word_seen``). Paths is
    ``FULL_PATHS`` when the arrays are full: the walk's ``state`` (:func:`walk_state`) then
    holds where it stopped, and a call with the same arguments but longer arrays, the paths
    so far copied into them, goes on from there (the heavy 4x4 class 156513 has 20.6M paths:
    walking again from the start each time the arrays grew cost most of a walk)."""
    n = masks.shape[0]
    one = np.uint64(1)
    zero = np.uint64(0)
    cap = keys.shape[0]
    fmask = (one << np.uint64(bits)) - one
    # cell -> its field: position p (from the least significant), key word, shift in the word
    fbit = np.empty(n, np.int64)
    word = np.empty(n, np.int64)
    shift = np.empty(n, np.uint64)
    for c in range(n):
        p = n - 1 - rank[c]
        # a cell with one letter offers no choice: it gets no field, so paths that differ only
        # there meet at one node (a word still counts once per node: sound, and tighter)
        fbit[c] = np.int64(1) << p if popcount(masks[c]) > 1 else 0
        word[c] = 0 if p >= fields else 1
        shift[c] = np.uint64((p % fields) * bits)
    stack, st_rem, reg = state
    st_cell, st_node, st_child, st_k = stack[0], stack[1], stack[2], stack[3]
    key = np.zeros(2, np.uint64)
    resume = reg[0] == 1
    if resume:  # where the last call stopped: at a path it had no room for
        d, used = reg[1], np.uint64(reg[2])
        key[0], key[1], occ = np.uint64(reg[3]), np.uint64(reg[4]), reg[5]
        start0, n_paths, total_sum = reg[6], reg[7], reg[8]
    else:
        d, used, occ, start0, n_paths, total_sum = 0, zero, np.int64(0), 0, 0, np.int64(0)
    reg[0] = 0
    for start in range(start0, n):
        if not resume:
            if masks[start] & rec[0] == zero:
                continue
            d = 0
            enter_cell(st_cell, st_node, st_rem, st_child, 0, start, 0, masks[start] & rec[0])
            used = one << np.uint64(start)
        while True:
            if resume:  # the path it stopped at: its word is counted, the path not yet kept
                resume = False
                w = np.int64(rec[2 * st_child[d] + 1] >> np.uint64(32)) - 1
                keys[n_paths, 0] = key[0]
                keys[n_paths, 1] = key[1]
                wids[n_paths] = w | (occ << 32)
                n_paths += 1
            elif st_child[d] < 0:
                rem = st_rem[d]
                c = st_cell[d]
                if rem == zero:
                    used ^= one << np.uint64(c)
                    key[word[c]] &= ~(fmask << shift[c])
                    occ &= ~fbit[c]
                    d -= 1
                    if d < 0:
                        break
                    continue
                low = rem & (~rem + one)
                st_rem[d] = rem ^ low
                child = trie_child(rec, st_node[d], low)
                st_child[d] = child
                st_k[d] = 0
                if fbit[c] != 0:
                    key[word[c]] = (key[word[c]] & ~(fmask << shift[c])) | ((ctz(low) + one) << shift[c])
                    occ |= fbit[c]
                w = np.int64(rec[2 * child + 1] >> np.uint64(32)) - 1
                if w >= 0:
                    if word_seen[w] != tag:
                        word_seen[w] = tag
                        total_sum += word_pts[w]
                    if n_paths == cap:
                        reg[0], reg[1], reg[2] = 1, d, np.int64(used)
                        reg[3], reg[4], reg[5] = np.int64(key[0]), np.int64(key[1]), occ
                        reg[6], reg[7], reg[8] = start, n_paths, total_sum
                        return FULL_PATHS, total_sum
                    keys[n_paths, 0] = key[0]
                    keys[n_paths, 1] = key[1]
                    wids[n_paths] = w | (occ << 32)
                    n_paths += 1
            c = st_cell[d]
            kid_mask = rec[2 * st_child[d]]
            pushed = False
            k = st_k[d]
            while k < deg[c]:
                nb = nbr_list[c, k]
                k += 1
                if (used >> np.uint64(nb)) & one == zero:
                    m = masks[nb] & kid_mask
                    if m != zero:
                        st_k[d] = k
                        d += 1
                        enter_cell(st_cell, st_node, st_rem, st_child, d, nb, st_child[d - 1], m)
                        used |= one << np.uint64(nb)
                        pushed = True
                        break
            if not pushed:
                st_child[d] = -1
    return n_paths, total_sum


#: Bits of a radix sort digit: 10 (1,024 buckets) sorts 3x4 keys (60 bits) in 6 passes, not
#: 8 as bytes did; with one key word moved, 0.84 of the byte sort's time on the 16M paths of
#: 20 3x4 corner classes (best of 7).
DIGIT_BITS = 10


@njit(nogil=True, cache=True)
def radix_sort(keys, vals, n, tmp_keys, tmp_vals, bits_low, bits_high):
    """Sort ``keys[:n]`` (uint64 pairs: high, low; below ``2**bits_high`` and ``2**bits_low``)
    with ``vals[:n]`` alongside: LSD radix, :data:`DIGIT_BITS` a pass, the low word first; a
    pass is skipped when every key has the same digit. Keys whose high word is unused
    (``bits_high`` 0, so 0 in every key: 3x4 and smaller) move only their low word."""
    digit = np.uint64((1 << DIGIT_BITS) - 1)
    count = np.empty((1 << DIGIT_BITS) + 1, np.int64)
    both = bits_high > 0
    src_k, src_v, dst_k, dst_v = keys, vals, tmp_keys, tmp_vals
    in_tmp = False
    for col, n_bits in ((1, bits_low), (0, bits_high)):
        for sh in range(0, n_bits, DIGIT_BITS):
            s = np.uint64(sh)
            count[:] = 0
            for i in range(n):
                count[np.int64((src_k[i, col] >> s) & digit) + 1] += 1
            if count.max() == n:
                continue
            for b in range(1 << DIGIT_BITS):
                count[b + 1] += count[b]
            for i in range(n):
                b = np.int64((src_k[i, col] >> s) & digit)
                j = count[b]
                count[b] = j + 1
                if both:
                    dst_k[j, 0] = src_k[i, 0]
                dst_k[j, 1] = src_k[i, 1]
                dst_v[j] = src_v[i]
            src_k, src_v, dst_k, dst_v = dst_k, dst_v, src_k, src_v
            in_tmp = not in_tmp
    if in_tmp:
        if both:
            keys[:n] = tmp_keys[:n]
        else:
            keys[:n, 1] = tmp_keys[:n, 1]
        vals[:n] = tmp_vals[:n]


@njit(nogil=True, cache=True, inline="always")
def _open(x, choice, lab, par, node):
    """Node x, a CHOICE node of cell ``lab`` or a SUM node of letter ``lab``, under ``par``
    (its parent in FIRST until the links are made)."""
    node[x, TAG] = -1 - lab if choice else lab & 63
    node[x, FIRST] = par
    node[x, VAL] = 0


@njit(nogil=True, cache=True, inline="always")
def _close(x, node, n_nodes):
    """Node x's subtree is complete: record its end (in NEXT until the links are made) and fold
    its value into its parent (a SUM parent adds it, a CHOICE parent keeps the best)."""
    node[x, NEXT] = n_nodes
    p = node[x, FIRST]
    if node[p, TAG] < 0:
        if node[x, VAL] > node[p, VAL]:
            node[p, VAL] = node[x, VAL]
    else:
        node[p, VAL] += node[x, VAL]


@njit(nogil=True, cache=True, inline="always")
def parting(keys, i, t, prev_hi, prev_lo, prev_occ, bits, fields):
    """Path ``i`` of the sorted paths (``t``: its word id and used fields) against the last key
    before it (``prev_hi``, ``prev_lo``, its used fields ``prev_occ``; all 0 before the first
    path: the empty path, at the root): (its key's two words, its used fields, its pairs, the
    highest field where the two keys differ, and the open nodes of the tree it keeps: the root
    and two per pair above that field, one more when both use that field's cell, whose CHOICE
    node is then shared). The field and the nodes kept are -1 when the key is the same."""
    hi = keys[i, 0]
    lo = keys[i, 1]
    if hi == prev_hi and lo == prev_lo:
        return hi, lo, prev_occ, np.int64(popcount(np.uint64(prev_occ))), np.int64(-1), np.int64(-1)
    occ = t >> 32
    m = np.int64(popcount(np.uint64(occ)))
    if hi != prev_hi:
        fpos = fields + (63 - np.int64(clz(hi ^ prev_hi))) // bits
    else:
        fpos = (63 - np.int64(clz(lo ^ prev_lo))) // bits
    keep = 2 * np.int64(popcount(np.uint64(occ >> (fpos + 1))))
    if (occ >> fpos) & 1 and (prev_occ >> fpos) & 1:
        keep += 1  # the same cell with another letter: the CHOICE node is shared
    return hi, lo, occ, m, np.int64(fpos), keep


@njit(nogil=True, cache=True)
def tree_from_paths(
    keys,
    wids,
    n_paths,
    order,
    bits,
    fields,
    word_pts,
    stamp,
    tag0,
    node,
):
    """The orderly tree of the sorted paths, numbered in pre-order, one record per node in
    ``node`` (int32 [cap, 4]; columns :data:`FIRST`, :data:`NEXT`, :data:`VAL`, :data:`TAG`):
    the first child (-1 for none), the next sibling (-1 for none), the node's unforced value,
    and its tag (a CHOICE node's cell, a SUM node's points and letter), so a step of the
    branching reads one cache line per node. ``word_pts`` (int32 [words]) are the words'
    points; ``stamp`` (int64 [words]) de-duplicates a word at a node with run tags from
    ``tag0`` on. Returns (node count, ``FULL_NODES`` or
    ``POINTS_OVERFLOW``; tags used).

    The pass writes each node's parent into FIRST and one past its subtree into NEXT
    (cheap while paths stream in), then one backward pass turns them into the links: node x's
    first child is x + 1 when its subtree is longer than x, its next sibling is the end of its
    subtree when that is inside its parent's (parents precede children, so a parent's end is
    still there when its children are turned).

    Field p (from the least significant) is split rank ``n - 1 - p``. The highest field where
    a key differs from the one before gives the first pair where the two paths part: the
    nodes of the earlier path below it are closed, the new path's are opened.
    """
    n = order.shape[0]
    one = np.uint64(1)
    fmask = (one << np.uint64(bits)) - one
    cap = node.shape[0]
    # the open nodes by tree depth: 0 the root, 2j + 1 the CHOICE of pair j, 2j + 2 its SUM
    stack = np.empty(2 * n + 1, np.int64)
    _open(0, 0, -1, -1, node)
    stack[0] = 0
    n_nodes = 1
    prev_hi = np.uint64(0)  # the empty path: no real path has key 0
    prev_lo = np.uint64(0)
    prev_occ = np.int64(0)
    prev_m = 0
    run = tag0 + 1  # the tag of the paths at the root (key 0), which sort first
    for i in range(n_paths):
        t = wids[i]
        hi, lo, occ, m, fpos, keep = parting(keys, i, t, prev_hi, prev_lo, prev_occ, bits, fields)
        if keep >= 0:
            run += 1
            if n_nodes + 2 * m > cap:
                return FULL_NODES, run - tag0
            for depth in range(2 * prev_m, keep, -1):
                _close(stack[depth], node, n_nodes)
            rem = np.uint64(occ & ((np.int64(2) << fpos) - 1))
            depth = keep + 1
            while rem != 0:
                p = 63 - np.int64(clz(rem))
                rem ^= one << np.uint64(p)
                if depth % 2 == 1:
                    _open(n_nodes, 1, order[n - 1 - p], stack[depth - 1], node)
                    stack[depth] = n_nodes
                    n_nodes += 1
                    depth += 1
                kw = hi if p >= fields else lo
                letter = np.int64((kw >> np.uint64((p % fields) * bits)) & fmask) - 1
                _open(n_nodes, 0, letter, stack[depth - 1], node)
                stack[depth] = n_nodes
                n_nodes += 1
                depth += 1
            prev_hi = hi
            prev_lo = lo
            prev_occ = occ
            prev_m = m
        w = t & np.int64(0xFFFFFFFF)
        if stamp[w] != run:
            stamp[w] = run
            x = stack[2 * m]
            pts = word_pts[w]
            if (node[x, TAG] >> LETTER_BITS) + pts > MAX_POINTS:
                return POINTS_OVERFLOW, run - tag0
            node[x, TAG] += pts << LETTER_BITS
            node[x, VAL] += pts
    for depth in range(2 * prev_m, 0, -1):
        _close(stack[depth], node, n_nodes)
    node[0, NEXT] = n_nodes
    for x in range(n_nodes - 1, -1, -1):
        e = node[x, NEXT]
        sibling = e if x > 0 and e < node[node[x, FIRST], NEXT] else -1
        node[x, FIRST] = x + 1 if e > x + 1 else -1
        node[x, NEXT] = sibling
    return n_nodes, run - tag0 + 1


def unpack_records(node: np.ndarray) -> tuple[np.ndarray, ...]:
    """Node records (a pre-order tree from :func:`tree_from_paths`) as separate arrays:
    (is_choice, label, points, first, nxt), int8, int8 (the root's label -1), int32 x 3."""
    tag = node[:, TAG]
    choice = tag < 0
    label = np.where(choice, -1 - tag, tag & 63).astype(np.int8)
    label[:1] = -1
    points = np.where(choice, 0, tag >> LETTER_BITS).astype(np.int32)
    return choice.astype(np.int8), label, points, node[:, FIRST].copy(), node[:, NEXT].copy()
