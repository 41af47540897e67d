"""Sub-class trees from their parent's sorted paths, without the paths a board never needs: the
deduping force (numba kernels; see :mod:`pipeline.best.prove.tree` for where it is used).

Once a cell is forced to a letter it offers no choice and drops out of the paths' keys, so two
paths of one word can come to differ only in that one of them has a pair the other lacks. Take
P1 and P2, paths of the same word in a sub-class, with P1's (cell, letter) pairs a subset of
P2's. A board of the sub-class that agrees with P2's pairs agrees with P1's (the forced cells
agree with both), so it spells the word along P1 too; the word counts once however many paths
spell it, so P2 adds nothing to any board's score and can go. The tree built without such
paths still bounds every board of the sub-class, and it is smaller and tighter: on the 4x4
class 156513 (T = 3625) two cells forced took a sub-class from 26,295 to 21,290 and its tree
from 11.6M to 8.0M nodes.

Which paths a forcing makes redundant: let the parent's paths be free of such pairs, and force
its first split cell c to the letter L. A path that does not use c and one that uses (c, L)
keep their pairs but c's; two paths that both use (c, L), or both miss c, relate as they did in
the parent. So the only new case is P1 using (c, L) and P2 missing c, with P1's other pairs a
subset of P2's (P2 has at least one pair more). :func:`drop_redundant` checks the commonest
form, P1's other pairs being P2's pairs but one, which on that class found all but 0.1-0.5% of
the bound's reduction that a check of every subset found (and of that form only the one pair
with the forced letter, see there); a path it misses only costs some tightness. A path is only
ever dropped for one that stays (one that uses (c, L), which this forcing never drops), so no
word loses its last path.

The field's C++ prover applies the same idea ("deduping force", hybrid-boggle issue #187) by
building a tree of the duplicates and subtracting it from the forced tree; here the sub-class's
tree is built afresh from its paths, which :func:`derive_paths` reads off the parent's sorted
paths in one merge, so no walk of the board and no sort.
"""

from __future__ import annotations

import numpy as np

from pipeline.best.prove.tree._build import parting
from pipeline.jit import njit
from pipeline.solve.kernels import ctz

#: A path's flag in its word id's int64 (above the used fields, which take bits 32 to 55): it
#: used the cell just forced (:func:`derive_paths`), for :func:`drop_redundant`, which clears it.
FORCED_FLAG = np.int64(1) << np.int64(62)
#: Another flag bit, set by :func:`drop_redundant` on the paths it drops before it compacts.
DROP_FLAG = np.int64(1) << np.int64(61)
LOW32 = np.int64(0xFFFFFFFF)


def zobrist_table() -> np.ndarray:
    """uint64 [64 fields, 64 values]: random words whose XOR over a key's (field, value) pairs
    is its hash (:func:`drop_redundant`), so a key with one field cleared hashes by one XOR."""
    rng = np.random.default_rng(20261206)
    return rng.integers(0, 1 << 63, size=(64, 64), dtype=np.uint64) * np.uint64(2) + np.uint64(1)


@njit(nogil=True, cache=True, inline="always")
def _key_less(a_hi, a_lo, b_hi, b_lo):
    return a_hi < b_hi or (a_hi == b_hi and a_lo <= b_lo)


@njit(nogil=True, cache=True, inline="always")
def _first_field_at_least(keys, n, key_word, sh, fmask, value):
    """The first path whose field (in ``key_word`` at ``sh``) is >= ``value``: binary search,
    the field being the most significant one in use, so non-decreasing along sorted keys."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if (keys[mid, key_word] >> sh) & fmask < value:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(nogil=True, cache=True)
def derive_paths(
    keys,
    wids,
    n_paths,
    key_word,
    shift,
    p,
    letter,
    bits,
    word_pts,
    out_keys,
    out_wids,
    word_seen,
    tag,
    flag,
):
    """The sorted paths of a sub-class, read off its parent's sorted paths instead of walked
    again: the cell of field ``p`` (in key word ``key_word`` at ``shift``) is forced to
    ``letter``; its field must be the most significant one any path uses (every cell before
    it in split order has one letter). A path of the sub-class is a parent's path that does
    not use the cell (field 0: the first run of the sorted paths) or uses it with that letter
    (a later run); the cell then has one letter, so it loses its field and its bit in the
    used-fields mask, as :func:`pipeline.best.prove.tree._build.collect_paths` would give it; the
    paths of the later run get ``flag`` (0, or :data:`FORCED_FLAG` for
    :func:`drop_redundant`). Clearing a field all paths of a run share keeps the run sorted, so
    one merge of the two runs sorts the sub-class's paths. Returns (paths, sum bound: each word
    once, via ``word_seen`` and ``tag``)."""
    one = np.uint64(1)
    fmask = (one << np.uint64(bits)) - one
    sh = np.uint64(shift)
    want = np.uint64(letter + 1)
    clear_key = ~(fmask << sh)
    clear_occ = ~(np.int64(1) << (p + 32))
    total = np.int64(0)
    a_end = _first_field_at_least(keys, n_paths, key_word, sh, fmask, one)
    j = _first_field_at_least(keys, n_paths, key_word, sh, fmask, want)
    b_end = _first_field_at_least(keys, n_paths, key_word, sh, fmask, want + one)
    i = 0
    n_out = 0
    while i < a_end or j < b_end:
        take_i = j >= b_end
        if not take_i and i < a_end:
            b_hi = keys[j, 0] & clear_key if key_word == 0 else keys[j, 0]
            b_lo = keys[j, 1] & clear_key if key_word == 1 else keys[j, 1]
            take_i = _key_less(keys[i, 0], keys[i, 1], b_hi, b_lo)
        if take_i:
            out_keys[n_out, 0] = keys[i, 0]
            out_keys[n_out, 1] = keys[i, 1]
            t = wids[i]
            i += 1
        else:
            out_keys[n_out, 0] = keys[j, 0]
            out_keys[n_out, 1] = keys[j, 1]
            out_keys[n_out, key_word] &= clear_key
            t = (wids[j] & clear_occ) | flag
            j += 1
        out_wids[n_out] = t
        n_out += 1
        w = t & LOW32
        if word_seen[w] != tag:
            word_seen[w] = tag
            total += word_pts[w]
    return n_out, total


@njit(nogil=True, cache=True, inline="always")
def _word_hash(t):
    """A path's word's hash (its id's, mixed), the start of its key's (:func:`_key_hash`)."""
    h = (np.uint64(t & LOW32) + np.uint64(0x9E3779B97F4A7C15)) * np.uint64(0xBF58476D1CE4E5B9)
    return h ^ (h >> np.uint64(29))


@njit(nogil=True, cache=True, inline="always")
def _key_hash(k_hi, k_lo, t, shifts, fields, fmask, zob):
    """A path's hash: its word's, XOR the Zobrist word of each used field's (position, value)."""
    h = _word_hash(t)
    occ = np.uint64((t >> 32) & np.int64(0xFFFFFF))
    while occ != 0:
        p = np.int64(ctz(occ))
        occ &= occ - np.uint64(1)
        h ^= zob[p, ((k_hi if p >= fields else k_lo) >> shifts[p]) & fmask]
    return h


#: Look-ups :func:`drop_redundant` makes at a time: a random read of its hash set, bigger than
#: the cache, costs 200-350 ns alone and 13-22 ns among a few dozen independent ones (measured
#: on the 2-core machine); so each batch reads its rows first, then uses them.
BATCH = 32


@njit(nogil=True, cache=True)
def drop_redundant(keys, wids, n, bits, fields, zob, letter, table):
    """Drop, from a sub-class's sorted paths just derived with :data:`FORCED_FLAG` on those
    that used the forced cell (forced to ``letter``), each path missing that cell whose pairs
    but one are exactly the other pairs of a flagged path of the same word, the one pair having
    the forced letter (see the module doc); keeps the order, clears the flags, returns the
    paths left, or ``-1 - rows`` when ``table`` (int64 [rows, 2]) is too small (the caller
    grows it and calls again: nothing changed).

    The flagged paths' keys go into a hash set (Zobrist hashes, :func:`_key_hash`: a key with
    one field cleared hashes by one XOR of its own), and each other path is looked up once per
    pair with the forced letter; a hash that matches is checked against the flagged path's
    word and key, so a collision never drops a path. Why only pairs with the forced letter: a
    path's letters are its word's, so when the flagged path's forced cells are the other's and
    the forced cell, the pair the other has more has the forced letter; other cases are rare,
    and a path kept only costs some tightness. The set's rows are read :data:`BATCH` at a time
    before they are used."""
    fmask = (np.uint64(1) << np.uint64(bits)) - np.uint64(1)
    want = np.uint64(letter + 1)
    shifts = np.empty(64, np.uint64)
    for q in range(64):
        shifts[q] = np.uint64((q % fields) * bits)
    n_flagged = 0
    for i in range(n):
        if wids[i] & FORCED_FLAG:
            n_flagged += 1
    if n_flagged == 0:
        return n
    size = np.int64(1024)
    while size < 2 * n_flagged:
        size *= 2
    if size > table.shape[0]:
        return -1 - size
    mask = size - 1
    table[:size, 0] = 0
    # a row: the hash (odd, so never 0), and the flagged path's index | its word << 32
    b_h = np.empty(BATCH, np.int64)
    b_i = np.empty(BATCH, np.int64)
    b_hi = np.empty(BATCH, np.uint64)
    b_lo = np.empty(BATCH, np.uint64)
    b_s = np.empty(BATCH, np.int64)
    touched = np.int64(0)
    k = 0
    for i in range(n + 1):
        if i < n:
            t = wids[i]
            if not t & FORCED_FLAG:
                continue
            b_h[k] = np.int64(_key_hash(keys[i, 0], keys[i, 1], t, shifts, fields, fmask, zob) | np.uint64(1))
            b_i[k] = i
            k += 1
            if k < BATCH:
                continue
        for q in range(k):  # the rows first, independent reads
            touched ^= table[(b_h[q] >> 20) & mask, 0]
        for q in range(k):
            h, j = b_h[q], b_i[q]
            e = j | ((wids[j] & LOW32) << 32)
            s = (h >> 20) & mask
            while table[s, 0] != 0:
                if table[s, 0] == h and (table[s, 1] >> 32) == (e >> 32):
                    d = table[s, 1] & LOW32
                    if keys[d, 0] == keys[j, 0] and keys[d, 1] == keys[j, 1]:
                        break  # the same word and key again (paths over the same pairs): once
                s = (s + 1) & mask
            if table[s, 0] == 0:
                table[s, 0] = h
                table[s, 1] = e
        k = 0
    # the other paths with a pair of the forced letter: a look-up per such pair
    for i in range(n + 1):
        if i < n:
            t = wids[i]
            if t & FORCED_FLAG:
                continue
            k_hi, k_lo = keys[i, 0], keys[i, 1]
            occ = np.uint64((t >> 32) & np.int64(0xFFFFFF))
            full = np.uint64(0)
            hashed = False
            while occ != 0 and k < BATCH:
                p = np.int64(ctz(occ))
                occ &= occ - np.uint64(1)
                sh = shifts[p]
                if ((k_hi if p >= fields else k_lo) >> sh) & fmask != want:
                    continue
                if not hashed:
                    full = _key_hash(k_hi, k_lo, t, shifts, fields, fmask, zob)
                    hashed = True
                b_h[k] = np.int64((full ^ zob[p, want]) | np.uint64(1))
                b_i[k] = i
                b_hi[k] = k_hi & ~(fmask << sh) if p >= fields else k_hi
                b_lo[k] = k_lo & ~(fmask << sh) if p < fields else k_lo
                k += 1
            if k < BATCH - 8:  # room for the next path's look-ups (a pair left out: kept)
                continue
        for q in range(k):
            touched ^= table[(b_h[q] >> 20) & mask, 0]
        for q in range(k):  # the row whose hash and word match, if any (then its key, below)
            h, w = b_h[q], wids[b_i[q]] & LOW32
            s = (h >> 20) & mask
            b_s[q] = -1
            while table[s, 0] != 0:
                if table[s, 0] == h and (table[s, 1] >> 32) == w:
                    b_s[q] = s
                    touched ^= keys[table[s, 1] & LOW32, 0]
                    break
                s = (s + 1) & mask
        for q in range(k):
            s = b_s[q]
            while s >= 0:
                d = table[s, 1] & LOW32
                if keys[d, 0] == b_hi[q] and keys[d, 1] == b_lo[q]:
                    wids[b_i[q]] |= DROP_FLAG
                    break
                # another key of the same hash and word (a collision): the rest of the run
                s = (s + 1) & mask
                while table[s, 0] != 0 and not (
                    table[s, 0] == b_h[q] and (table[s, 1] >> 32) == (wids[b_i[q]] & LOW32)
                ):
                    s = (s + 1) & mask
                if table[s, 0] == 0:
                    s = -1
        k = 0
    out = 0
    for i in range(n):
        t = wids[i]
        if t & DROP_FLAG:
            continue
        keys[out, 0] = keys[i, 0]
        keys[out, 1] = keys[i, 1]
        wids[out] = t & ~FORCED_FLAG
        out += 1
    return out + (touched & 0)


@njit(nogil=True, cache=True)
def tree_value(keys, wids, n_paths, n_cells, bits, fields, word_pts, stamp, tag0):
    """The value of the root of the tree :func:`pipeline.best.prove.tree._build.tree_from_paths`
    builds from these sorted paths, without building it: the same pass over the paths with only
    the open nodes' values kept (a stack as deep as the longest path), so a class too heavy to
    keep its whole tree learns its bound in a few bytes. Returns (value, stamp tags used)."""
    # the open nodes' values by depth: 0 the root, 2j + 1 the CHOICE of pair j, 2j + 2 its SUM
    acc = np.zeros(2 * n_cells + 1, np.int64)
    prev_hi = np.uint64(0)
    prev_lo = np.uint64(0)
    prev_occ = np.int64(0)
    prev_m = np.int64(0)
    run = tag0 + 1
    for i in range(n_paths):
        t = wids[i]
        hi, lo, occ, m, _, keep = parting(keys, i, t, prev_hi, prev_lo, prev_occ, bits, fields)
        if keep >= 0:
            run += 1
            for depth in range(2 * prev_m, keep, -1):
                v = acc[depth]
                if depth % 2 == 0:  # a SUM node closed into its CHOICE parent: the best
                    if v > acc[depth - 1]:
                        acc[depth - 1] = v
                else:
                    acc[depth - 1] += v
            for depth in range(keep + 1, 2 * m + 1):
                acc[depth] = 0
            prev_hi = hi
            prev_lo = lo
            prev_occ = occ
            prev_m = m
        w = t & LOW32
        if stamp[w] != run:
            stamp[w] = run
            acc[2 * m] += word_pts[w]
    for depth in range(2 * prev_m, 0, -1):
        v = acc[depth]
        if depth % 2 == 0:
            if v > acc[depth - 1]:
                acc[depth - 1] = v
        else:
            acc[depth - 1] += v
    return acc[0], run - tag0 + 1
