"""Building the orderly tree of a board class (numba kernels; see :mod:`pipeline.prove.tree`).

The build walks every path a board of the class can spell over the prover's trie, packed as
16-byte records (``rec[2n]`` node n's child mask, ``rec[2n + 1]`` its first child in the low 32
bits and its word id + 1 in the high 32 bits; ``info[n]`` = points * 2 + "the spelling repeats a
face"), so one step touches one record. Each word found is inserted as its (cell, letter) pairs
sorted by split rank. Children are found through slot blocks instead of sibling scans: a SUM
node reached after the cell of rank r gets, on its first child, one slot per later rank; a
CHOICE node of cell c gets one slot per letter of ``masks[c]`` (indexed by the letter's rank in
the mask). The first-child/next-sibling lists are kept for the evaluation and the pre-order
relayout (:func:`preorder`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pipeline.solve.kernel import ctz, popcount

#: Fibonacci hashing multiplier (odd, fits int64; products wrap).
HASH_MUL = 0x1E3779B97F4A7C15
LOW32 = np.uint64(0xFFFFFFFF)
#: Node-array statuses of :func:`build_tree` (the caller grows that array and retries).
FULL_NODES, FULL_SEEN, FULL_SLOTS = -1, -2, -3


@njit(nogil=True, cache=True)
def _hash_slot(keys, key):
    """Slot of ``key`` in the open-addressing table ``keys`` (-1 = empty): its own or the
    empty slot where it belongs."""
    mask = np.uint64(keys.shape[0] - 1)
    x = np.uint64(key) * np.uint64(HASH_MUL)
    h = np.int64((x ^ (x >> np.uint64(29))) & mask)
    while keys[h] != -1 and keys[h] != key:
        h = (h + 1) & np.int64(mask)
    return h


@njit(nogil=True, cache=True)
def pack_trie(children, node_word, node_points):
    """The prover's dense trie renumbered breadth first (a node's children consecutive) as
    packed records: returns (rec uint64 [2 * nodes], info int32 [nodes]); see the module doc.
    About a tenth of the dense table's memory, which keeps the build's walk in cache."""
    n_nodes, n_faces = children.shape
    # repeats: the node's face sequence repeats a face (a child's index is above its parent's,
    # so one pass in index order sees every parent first)
    used = np.zeros(n_nodes, np.uint64)
    rep = np.zeros(n_nodes, np.int32)
    for node in range(n_nodes):
        for f in range(n_faces):
            c = children[node, f]
            if c >= 0:
                bit = np.uint64(1) << np.uint64(f)
                used[c] = used[node] | bit
                rep[c] = rep[node] | (1 if used[node] & bit else 0)
    queue = np.empty(n_nodes, np.int64)
    queue[0] = 0
    n_queued = 1
    rec = np.zeros(2 * n_nodes, np.uint64)
    info = np.zeros(n_nodes, np.int32)
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
        info[head] = node_points[node] * 2 + rep[node]
    return rec[: 2 * n_queued].copy(), info[:n_queued].copy()


@njit(nogil=True, cache=True, inline="always")
def trie_child(rec, parent, low):
    """The packed trie's child of ``parent`` for the face bit ``low`` (which it must have)."""
    first = np.int64(rec[2 * parent + 1] & LOW32)
    return first + np.int64(popcount(rec[2 * parent] & (low - np.uint64(1))))


@njit(nogil=True, cache=True, inline="always")
def _new_node(n_nodes, choice, lab, is_choice, label, points, first, sib, last, blk):
    is_choice[n_nodes] = choice
    label[n_nodes] = lab
    points[n_nodes] = 0
    first[n_nodes] = -1
    sib[n_nodes] = -1
    last[n_nodes] = -1
    blk[n_nodes] = -1


@njit(nogil=True, cache=True, inline="always")
def _link(parent, child, first, sib, last):
    if last[parent] < 0:
        first[parent] = child
    else:
        sib[last[parent]] = child
    last[parent] = child


@njit(nogil=True, cache=True, inline="always")
def _new_block(slot, n_slots, size):
    for s in range(n_slots, n_slots + size):
        slot[s] = -1
    return n_slots + size


@njit(nogil=True, cache=True)
def build_tree(
    masks, rank, order, nbr_list, deg, rec, info, n_words,
    is_choice, label, points, first, sib, last, blk, slot, seen, word_seen, tag,
):  # fmt: skip
    """Build the orderly tree of the class ``masks`` (uint64 [cells]), cells sorted by ``rank``,
    into the caller's arrays (reused across classes: a node is initialised when created);
    ``order`` is the cells by rank, ``rec``/``info`` the packed trie of :func:`pack_trie`.

    Node 0 is the root SUM node; a CHOICE node's label is its cell, a SUM node's its letter
    (face index); children are ``first``/``sib`` lists (``last`` keeps insertion order) and are
    looked up through ``blk[node]``, the node's slot block in ``slot`` (see the module doc).
    ``seen`` is the (node, word) hash set; only words with a repeated face need it, as a word
    of distinct faces has one path over a given cell set and letters.
    Returns (node count, sum bound: each spellable word once, via ``word_seen[word] == tag``);
    the count is ``FULL_NODES``, ``FULL_SEEN`` or ``FULL_SLOTS`` when that array is too small
    (the caller grows it and retries).
    """
    n = masks.shape[0]
    one = np.uint64(1)
    zero = np.uint64(0)
    cap = is_choice.shape[0]
    slot_cap = slot.shape[0]
    half = seen.shape[0] // 2
    seen[:] = -1
    _new_node(0, 0, -1, is_choice, label, points, first, sib, last, blk)
    n_nodes = 1
    n_slots = 0
    n_seen = 0
    total_sum = np.int64(0)
    st_cell = np.empty(n, np.int64)
    st_node = np.empty(n, np.int64)
    st_child = np.empty(n, np.int64)
    st_k = np.empty(n, np.int64)
    st_rem = np.empty(n, np.uint64)
    # The path's pairs sorted by the split order are the set bits of ``urank`` (cells by rank)
    # with ``face_at``; ``nod[i]`` is the SUM node after sorted pairs 0..i (reached after rank
    # ``nod_rank[i]``), up to date for the first ``gvalid`` pairs. A pair entering, changing or
    # leaving at sorted position j leaves the nodes before j valid, so consecutive insertions
    # share their sorted prefix.
    nod = np.empty(n, np.int64)
    nod_rank = np.empty(n, np.int64)
    face_at = np.empty(n, np.int64)
    gvalid = 0
    # slots one insertion can need at most: per pair a SUM block (< n) and a CHOICE block
    per_pair = n + 64
    for start in range(n):
        if masks[start] & rec[0] == zero:
            continue
        d = 0
        st_cell[0] = start
        st_node[0] = 0
        st_rem[0] = masks[start] & rec[0]
        st_child[0] = -1
        used = one << np.uint64(start)
        urank = one << np.uint64(rank[start])
        while True:
            if st_child[d] < 0:
                rem = st_rem[d]
                c = st_cell[d]
                rbit = one << np.uint64(rank[c])
                if rem == zero:
                    used ^= one << np.uint64(c)
                    urank ^= rbit
                    gvalid = min(gvalid, np.int64(popcount(urank & (rbit - one))))
                    d -= 1
                    if d < 0:
                        break
                    continue
                low = rem & (~rem + one)
                st_rem[d] = rem ^ low
                child = trie_child(rec, st_node[d], low)
                st_child[d] = child
                st_k[d] = 0
                face_at[c] = np.int64(ctz(low))
                gvalid = min(gvalid, np.int64(popcount(urank & (rbit - one))))
                w = np.int64(rec[2 * child + 1] >> np.uint64(32)) - 1
                if w >= 0:
                    inf = info[child]
                    pts = inf >> 1
                    if word_seen[w] != tag:
                        word_seen[w] = tag
                        total_sum += pts
                    if n_nodes + 2 * (d + 1) > cap:
                        return FULL_NODES, total_sum
                    if n_slots + (d + 1) * per_pair > slot_cap:
                        return FULL_SLOTS, total_sum
                    if gvalid == 0:
                        node = 0
                        prev = -1
                    else:
                        node = nod[gvalid - 1]
                        prev = nod_rank[gvalid - 1]
                    bits = urank
                    for _ in range(gvalid):
                        bits &= bits - one
                    for i in range(gvalid, d + 1):
                        low_r = bits & (~bits + one)
                        bits ^= low_r
                        r = np.int64(ctz(low_r))
                        cell = order[r]
                        # the SUM node's CHOICE child for ``cell``
                        b = blk[node]
                        if b < 0:
                            b = n_slots
                            n_slots = _new_block(slot, n_slots, n - 1 - prev)
                            blk[node] = b
                        s = b + r - prev - 1
                        ch = slot[s]
                        if ch < 0:
                            ch = n_nodes
                            n_nodes += 1
                            _new_node(ch, 1, cell, is_choice, label, points, first, sib, last, blk)
                            blk[ch] = n_slots
                            n_slots = _new_block(slot, n_slots, np.int64(popcount(masks[cell])))
                            _link(node, ch, first, sib, last)
                            slot[s] = ch
                        # the CHOICE node's SUM child for the cell's letter
                        face = face_at[cell]
                        s = blk[ch] + np.int64(popcount(masks[cell] & ((one << np.uint64(face)) - one)))
                        nxt = slot[s]
                        if nxt < 0:
                            nxt = n_nodes
                            n_nodes += 1
                            _new_node(nxt, 0, face, is_choice, label, points, first, sib, last, blk)
                            _link(ch, nxt, first, sib, last)
                            slot[s] = nxt
                        node = nxt
                        prev = r
                        nod[i] = node
                        nod_rank[i] = r
                    gvalid = d + 1
                    if inf & 1 == 0:
                        points[node] += pts
                    else:
                        key = np.int64(node) * n_words + w
                        hs = _hash_slot(seen, key)
                        if seen[hs] == -1:
                            seen[hs] = key
                            n_seen += 1
                            points[node] += pts
                            if n_seen > half:
                                return FULL_SEEN, total_sum
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
                        st_node[d + 1] = st_child[d]
                        d += 1
                        st_cell[d] = nb
                        st_rem[d] = m
                        st_child[d] = -1
                        used |= one << np.uint64(nb)
                        urank |= one << np.uint64(rank[nb])
                        pushed = True
                        break
            if not pushed:
                st_child[d] = -1
    return n_nodes, total_sum


@njit(nogil=True, cache=True)
def preorder(n_nodes, is_choice, label, points, first, sib):
    """Relayout the first-child/next-sibling tree in pre-order: ``(is_choice int8, label
    int32, points int32, parent int32, end int32)``, ``end[i]`` one past i's subtree."""
    o_choice = np.empty(n_nodes, np.int8)
    o_label = np.empty(n_nodes, np.int32)
    o_points = np.empty(n_nodes, np.int32)
    o_parent = np.empty(n_nodes, np.int32)
    o_end = np.empty(n_nodes, np.int32)
    # stack of (old node, new index of its parent); a node's end is known when the next node
    # outside its subtree is placed, so open nodes are kept on a second stack
    todo = np.empty(n_nodes, np.int64)
    todo_parent = np.empty(n_nodes, np.int64)
    open_new = np.empty(n_nodes, np.int64)
    n_open = 0
    top = 0
    todo[0] = 0
    todo_parent[0] = -1
    top = 1
    pos = 0
    while top > 0:
        top -= 1
        old = todo[top]
        par = todo_parent[top]
        # close the open nodes that are not ancestors of this one
        while n_open > 0 and open_new[n_open - 1] != par:
            o_end[open_new[n_open - 1]] = pos
            n_open -= 1
        o_choice[pos] = is_choice[old]
        o_label[pos] = label[old]
        o_points[pos] = points[old]
        o_parent[pos] = par
        open_new[n_open] = pos
        n_open += 1
        # push children in reverse so the first child comes out first
        c = first[old]
        k = 0
        while c >= 0:
            k += 1
            c = sib[c]
        c = first[old]
        i = top + k - 1
        while c >= 0:
            todo[i] = c
            todo_parent[i] = pos
            i -= 1
            c = sib[c]
        top += k
        pos += 1
    while n_open > 0:
        o_end[open_new[n_open - 1]] = pos
        n_open -= 1
    return o_choice, o_label, o_points, o_parent, o_end


@njit(nogil=True, cache=True)
def root_value(n_nodes, is_choice, points, first, sib):
    """The unforced bound straight from the build's arrays: a child is created after its
    parent, so one pass from the last node back sees every node's children first."""
    val = np.empty(n_nodes, np.int64)
    for i in range(n_nodes - 1, -1, -1):
        v = np.int64(points[i])
        c = first[i]
        if is_choice[i]:
            v = np.int64(0)
            while c >= 0:
                if val[c] > v:
                    v = val[c]
                c = sib[c]
        else:
            while c >= 0:
                v += val[c]
                c = sib[c]
        val[i] = v
    return val[0]
