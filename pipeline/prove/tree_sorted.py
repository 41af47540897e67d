"""The orderly tree built from sorted word paths (numba kernels; see :mod:`pipeline.prove.tree`).

Used when a path fits one 64-bit key: ``n_cells * field_bits <= 64``, ``field_bits`` the bits
of ``n_faces + 1`` (every 3x3 and 3x4 class with the English alphabet, 3x3 with up to 63 faces).
Three passes instead of one insertion per word (:func:`pipeline.prove.tree_build.build_tree`,
the general builder):

1. :func:`collect_paths` walks every path a board of the class can spell and records, for each
   word found, its key (one field per cell in split-rank order, rank 0 most significant: the
   cell's letter + 1, or 0 when the path does not use the cell) and its trie node.
2. :func:`radix_sort` sorts the keys. Paths that share their first j (cell, letter) pairs in
   split order share the key's leading fields, so they are contiguous, as in a sorted word list.
3. :func:`tree_from_paths` reads the sorted paths once, like building a trie from sorted words,
   and writes the tree straight in pre-order (the layout :mod:`pipeline.prove.tree_eval`
   evaluates), folding each node's value into its parent when the node is closed, so the
   unforced bound comes for free. Equal keys are one SUM node; a word is counted there once.
"""

from __future__ import annotations

import llvmlite.ir as llir
import numpy as np
from numba import njit, types
from numba.extending import intrinsic

from pipeline.prove.tree_build import FULL_NODES, trie_child
from pipeline.solve.kernel import ctz, popcount

#: :func:`collect_paths` status when the path arrays are too small.
FULL_PATHS = -4


@intrinsic
def clz(typingctx, x):
    """Leading zero bits of a uint64 (64 for 0)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.ctlz(args[0], llir.Constant(llir.IntType(1), 0))

    return sig, codegen


def field_bits(n_faces: int) -> int:
    """Bits of one key field (values 0..n_faces)."""
    return int(n_faces).bit_length()


def fits_one_key(n_cells: int, n_faces: int) -> bool:
    return n_cells * field_bits(n_faces) <= 64


@njit(nogil=True, cache=True)
def collect_paths(masks, rank, nbr_list, deg, rec, info, bits, keys, tnodes, word_seen, tag):
    """Every (key, trie node) of a word some board of the class spells along some path, into
    ``keys``/``tnodes``; returns (paths, sum bound: each spellable word once, via ``word_seen``).
    Paths is ``FULL_PATHS`` when the arrays are too small (the caller grows them and retries)."""
    n = masks.shape[0]
    one = np.uint64(1)
    zero = np.uint64(0)
    cap = keys.shape[0]
    fmask = (one << np.uint64(bits)) - one
    shift = np.empty(n, np.uint64)
    for c in range(n):
        shift[c] = np.uint64((n - 1 - rank[c]) * bits)
    n_paths = 0
    total_sum = np.int64(0)
    st_cell = np.empty(n, np.int64)
    st_node = np.empty(n, np.int64)
    st_child = np.empty(n, np.int64)
    st_k = np.empty(n, np.int64)
    st_rem = np.empty(n, np.uint64)
    key = zero
    for start in range(n):
        if masks[start] & rec[0] == zero:
            continue
        d = 0
        st_cell[0] = start
        st_node[0] = 0
        st_rem[0] = masks[start] & rec[0]
        st_child[0] = -1
        used = one << np.uint64(start)
        while True:
            if st_child[d] < 0:
                rem = st_rem[d]
                c = st_cell[d]
                if rem == zero:
                    used ^= one << np.uint64(c)
                    key &= ~(fmask << shift[c])
                    d -= 1
                    if d < 0:
                        break
                    continue
                low = rem & (~rem + one)
                st_rem[d] = rem ^ low
                child = trie_child(rec, st_node[d], low)
                st_child[d] = child
                st_k[d] = 0
                key = (key & ~(fmask << shift[c])) | ((ctz(low) + one) << shift[c])
                w = np.int64(rec[2 * child + 1] >> np.uint64(32)) - 1
                if w >= 0:
                    if word_seen[w] != tag:
                        word_seen[w] = tag
                        total_sum += info[child] >> 1
                    if n_paths == cap:
                        return FULL_PATHS, total_sum
                    keys[n_paths] = key
                    tnodes[n_paths] = child
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
                        st_node[d + 1] = st_child[d]
                        d += 1
                        st_cell[d] = nb
                        st_rem[d] = m
                        st_child[d] = -1
                        used |= one << np.uint64(nb)
                        pushed = True
                        break
            if not pushed:
                st_child[d] = -1
    return n_paths, total_sum


@njit(nogil=True, cache=True)
def radix_sort(keys, vals, n, tmp_keys, tmp_vals, n_bits):
    """Sort ``keys[:n]`` (uint64, below ``2**n_bits``) with ``vals[:n]`` alongside: LSD radix,
    8 bits a pass, a pass skipped when every key has the same digit."""
    count = np.empty(257, np.int64)
    src_k, src_v, dst_k, dst_v = keys, vals, tmp_keys, tmp_vals
    in_tmp = False
    for shift in range(0, n_bits, 8):
        s = np.uint64(shift)
        count[:] = 0
        for i in range(n):
            count[np.int64((src_k[i] >> s) & np.uint64(255)) + 1] += 1
        if count.max() == n:
            continue
        for b in range(256):
            count[b + 1] += count[b]
        for i in range(n):
            b = np.int64((src_k[i] >> s) & np.uint64(255))
            j = count[b]
            count[b] = j + 1
            dst_k[j] = src_k[i]
            dst_v[j] = src_v[i]
        src_k, src_v, dst_k, dst_v = dst_k, dst_v, src_k, src_v
        in_tmp = not in_tmp
    if in_tmp:
        keys[:n] = tmp_keys[:n]
        vals[:n] = tmp_vals[:n]


@njit(nogil=True, cache=True, inline="always")
def _open(x, choice, lab, par, is_choice, label, points, parent, val):
    is_choice[x] = choice
    label[x] = lab
    points[x] = 0
    parent[x] = par
    val[x] = 0


@njit(nogil=True, cache=True, inline="always")
def _close(x, parent, is_choice, val, end, n_nodes):
    """Node x's subtree is complete: record its end and fold its value into its parent."""
    end[x] = n_nodes
    p = parent[x]
    if is_choice[p]:
        if val[x] > val[p]:
            val[p] = val[x]
    else:
        val[p] += val[x]


@njit(nogil=True, cache=True, inline="always")
def _top_field(x, bits):
    """Position (from the least significant) of the highest field of ``x`` (non-zero) that
    holds a set bit."""
    return (np.int64(63) - np.int64(clz(x))) // bits


@njit(nogil=True, cache=True)
def tree_from_paths(
    keys, tnodes, n_paths, order, bits, rec, info, stamp, tag0,
    is_choice, label, points, parent, end, val,
):  # fmt: skip
    """The orderly tree of the sorted paths, in pre-order (``is_choice``, ``label``,
    ``points``, ``parent``, ``end`` as :func:`pipeline.prove.tree_build.preorder` gives, and
    ``val``: each node's unforced value). ``stamp`` (int64 [words]) de-duplicates a word at a
    node with run tags from ``tag0`` on. Returns (node count or ``FULL_NODES``, tags used).

    A key's field at position p (from the least significant) is split rank ``n - 1 - p``. The
    highest bit where a key differs from the one before gives the first pair where the two
    paths part: the nodes of the earlier path below it are closed, the new path's are opened.
    """
    n = order.shape[0]
    one = np.uint64(1)
    zero = np.uint64(0)
    fmask = (one << np.uint64(bits)) - one
    lsb = zero  # the lowest bit of every field
    for p in range(n):
        lsb |= one << np.uint64(p * bits)
    cap = is_choice.shape[0]
    # the open nodes by tree depth: 0 the root, 2j + 1 the CHOICE of pair j, 2j + 2 its SUM
    stack = np.empty(2 * n + 1, np.int64)
    is_choice[0] = 0
    label[0] = -1
    points[0] = 0
    parent[0] = -1
    val[0] = 0
    stack[0] = 0
    n_nodes = 1
    prev_key = zero  # the empty path: no real path has key 0
    prev_occ = zero
    prev_m = 0
    m = 0
    run = tag0
    for i in range(n_paths):
        key = keys[i]
        if key != prev_key:
            run += 1
            # one bit per used field, at the field's lowest bit
            spread = key
            for s in range(1, bits):
                spread |= key >> np.uint64(s)
            occ = spread & lsb
            m = np.int64(popcount(occ))
            if n_nodes + 2 * m > cap:
                return FULL_NODES, run - tag0
            fpos = _top_field(key ^ prev_key, bits)
            above = (fpos + 1) * bits
            j = np.int64(popcount(occ >> np.uint64(above))) if above < 64 else np.int64(0)
            keep = 2 * j
            fbit = one << np.uint64(fpos * bits)
            if occ & fbit != zero and prev_occ & fbit != zero:
                keep += 1  # the same cell with another letter: the CHOICE node is shared
            for depth in range(2 * prev_m, keep, -1):
                _close(stack[depth], parent, is_choice, val, end, n_nodes)
            rem = occ & ((fbit << one) - one)
            depth = keep + 1
            while rem != zero:
                p = _top_field(rem, bits)
                rem ^= one << np.uint64(p * bits)
                if depth % 2 == 1:
                    x = n_nodes
                    n_nodes += 1
                    _open(x, 1, order[n - 1 - p], stack[depth - 1], is_choice, label, points, parent, val)
                    stack[depth] = x
                    depth += 1
                x = n_nodes
                n_nodes += 1
                letter = np.int64((key >> np.uint64(p * bits)) & fmask) - 1
                _open(x, 0, letter, stack[depth - 1], is_choice, label, points, parent, val)
                stack[depth] = x
                depth += 1
            prev_key = key
            prev_occ = occ
            prev_m = m
        t = tnodes[i]
        w = np.int64(rec[2 * t + 1] >> np.uint64(32)) - 1
        if stamp[w] != run:
            stamp[w] = run
            x = stack[2 * m]
            pts = info[t] >> 1
            points[x] += pts
            val[x] += pts
    for depth in range(2 * prev_m, 0, -1):
        _close(stack[depth], parent, is_choice, val, end, n_nodes)
    end[0] = n_nodes
    return n_nodes, run - tag0 + 1
