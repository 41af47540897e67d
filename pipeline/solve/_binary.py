"""Board-driven backtracking over a sorted word list, asking "word? prefix?" by binary search.

The DFS walks paths of cells and keeps, for the text spelled so far, the range ``[lo, hi)`` of
the sorted word list whose words start with it. Extending the text by a face is two binary
searches inside the parent's range (the first word whose prefix is ``>=`` the new text and the
first whose prefix is ``>``), comparing only the new letters, since every word in the range
already shares the old ones. An empty range prunes the branch; the text is a word when the
range's first word has exactly its length (a word sorts before its extensions); a branch stops
when the range holds nothing but that word.

Under the revisit rule the walk may return to a cell (each step still moves), so paths are no
longer bounded by the board; instead each state (cell, text) is searched once: a memo maps it
(as cell, ``lo`` and text length, which name the text) to whether it leads to a word, and that
flag, settled on the way back up, marks the cells some spelling walk uses.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pipeline.boards import Board
from pipeline.jit import Dict, njit, types
from pipeline.lexicon import CompiledLexicon
from pipeline.solve import BatchResult, BoardResult, solve_boards
from pipeline.solve._letters import add_word, record_board, solve_table_batch
from pipeline.solve.kernels import new_outputs


@njit(nogil=True, cache=True, inline="always")
def _prefix_cmp(flat, offsets, w, text, m0, m1):
    """Compare word ``w`` cut to ``m1`` letters with ``text[:m1]``, given their first ``m0``
    letters are equal: -1, 0 or 1."""
    start = offsets[w]
    length = offsets[w + 1] - start
    for t in range(m0, m1):
        if t >= length:
            return -1
        a = flat[start + t]
        b = text[t]
        if a < b:
            return -1
        if a > b:
            return 1
    return 0


@njit(nogil=True, cache=True)
def _narrow(flat, offsets, lo, hi, text, m0, m1):
    """The sub-range of ``[lo, hi)`` whose words start with ``text[:m1]`` (bisect left/right)."""
    a = lo
    z = hi
    while a < z:
        mid = (a + z) >> 1
        if _prefix_cmp(flat, offsets, mid, text, m0, m1) < 0:
            a = mid + 1
        else:
            z = mid
    first = a
    z = hi
    while a < z:
        mid = (a + z) >> 1
        if _prefix_cmp(flat, offsets, mid, text, m0, m1) <= 0:
            a = mid + 1
        else:
            z = mid
    return first, a


@njit(nogil=True, cache=True)
def _solve_binary(boards, table, revisit, collect):
    face_letters, face_len, nbr_list, deg = boards
    flat, offsets, word_points, word_len, max_len = table
    n_boards, n, _ = face_letters.shape
    n_words = len(offsets) - 1
    outs = new_outputs(n_boards, n, n_words, collect, 0)
    score, found_count, longest, dead, out_offsets, ids, seen = outs[:7]
    n_ids = 0
    text = np.zeros(max_len + 1, np.int32)
    # a path has at most n cells, a walk at most max_len (each cell adds a letter)
    cap = max_len + 2 if revisit else min(n, max_len) + 2
    st_cell = np.empty(cap, np.int64)
    st_k = np.empty(cap, np.int64)
    st_m = np.empty(cap, np.int64)
    st_lo = np.empty(cap, np.int64)
    st_hi = np.empty(cap, np.int64)
    st_good = np.zeros(cap, np.bool_)
    used = np.zeros(n, np.uint8)
    live = np.zeros(n, np.uint8)
    key_m = np.int64(max_len + 1)

    for b in range(n_boards):
        letters = face_letters[b]
        flen = face_len[b]
        memo = Dict.empty(key_type=types.int64, value_type=types.boolean)
        for c in range(n):
            live[c] = 0
        sc = 0
        nw = 0
        lg = 0
        for s in range(n):
            f = flen[s]
            if f == 0 or f > max_len:
                continue
            for t in range(f):
                text[t] = letters[s, t]
            lo, hi = _narrow(flat, offsets, 0, n_words, text, 0, f)
            if lo == hi:
                continue
            is_word = offsets[lo + 1] - offsets[lo] == f
            if is_word:
                live[s] = 1
                if seen[lo] != b:
                    seen[lo] = b
                    sc, nw, lg, ids, n_ids = add_word(
                        lo, word_points, word_len, sc, nw, lg, collect, ids, n_ids
                    )
            if hi - lo == 1 and is_word:
                continue
            d = 0
            st_cell[0] = s
            st_k[0] = 0
            st_m[0] = f
            st_lo[0] = lo
            st_hi[0] = hi
            st_good[0] = is_word
            if not revisit:
                used[s] = 1
            while d >= 0:
                c = st_cell[d]
                k = st_k[d]
                if k >= deg[c]:
                    if revisit:
                        good = st_good[d]
                        memo[(st_lo[d] * key_m + st_m[d]) * n + c] = good
                        if good:
                            live[c] = 1
                            if d > 0:
                                st_good[d - 1] = True
                    else:
                        used[c] = 0
                    d -= 1
                    continue
                st_k[d] = k + 1
                nb = nbr_list[c, k]
                f = flen[nb]
                if f == 0 or used[nb] == 1:
                    continue
                m = st_m[d]
                m2 = m + f
                if m2 > max_len:
                    continue
                for t in range(f):
                    text[m + t] = letters[nb, t]
                lo, hi = _narrow(flat, offsets, st_lo[d], st_hi[d], text, m, m2)
                if lo == hi:
                    continue
                key = np.int64(0)
                if revisit:
                    key = (lo * key_m + m2) * n + nb
                    if key in memo:
                        if memo[key]:
                            st_good[d] = True
                        continue
                is_word = offsets[lo + 1] - offsets[lo] == m2
                if is_word:
                    if seen[lo] != b:
                        seen[lo] = b
                        sc, nw, lg, ids, n_ids = add_word(
                            lo, word_points, word_len, sc, nw, lg, collect, ids, n_ids
                        )
                    if revisit:
                        st_good[d] = True
                    else:
                        for t in range(d + 1):
                            live[st_cell[t]] = 1
                    live[nb] = 1
                if hi - lo == 1 and is_word:
                    if revisit:
                        memo[key] = True
                    continue
                d += 1
                st_cell[d] = nb
                st_k[d] = 0
                st_m[d] = m2
                st_lo[d] = lo
                st_hi[d] = hi
                st_good[d] = is_word
                if not revisit:
                    used[nb] = 1
        record_board((score, found_count, longest, dead, out_offsets), b, sc, nw, lg, n_ids, flen, live)
    return score, found_count, longest, dead, out_offsets, ids[:n_ids].copy()


def solve_binary_batch(
    boards: Sequence[Board], lexicon: CompiledLexicon, *, collect: bool = True
) -> BatchResult:
    """Solve boards of one shape by binary-search backtracking (rules from ``lexicon.rules``)."""
    return solve_table_batch(_solve_binary, boards, lexicon, collect=collect)


def solve_binary(boards: Sequence[Board], lexicon: CompiledLexicon) -> list[BoardResult]:
    """Solve boards of any shapes by binary-search backtracking; results in input order."""
    return solve_boards(boards, lexicon, solve_binary_batch)
