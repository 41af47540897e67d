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
from typing import Any, NamedTuple

import numpy as np
from numba import njit, types
from numba.typed import Dict

from pipeline.boards import Board
from pipeline.lexicon import CompiledLexicon
from pipeline.solve import BatchResult, BoardResult, solve_boards
from pipeline.solve.driver import add_word, drive, no_prepare, walk_kind, walk_result
from pipeline.solve.letters import finish_letters, solve_letters


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


class BinaryWalk(NamedTuple):
    """Binary-search backtracking (see :func:`_solve_binary`): the boards as face letters, the
    geometry, the word table, the rule, and the work arrays. Per depth of the DFS: the cell, the
    next neighbour to try, the text length, the word range ``[lo, hi)`` and whether the state
    leads to a word (revisit rule)."""

    face_letters: Any
    face_len: Any
    nbr_list: Any
    deg: Any
    flat: Any
    offsets: Any
    max_len: int
    revisit: bool
    text: Any
    st: Any
    used: Any
    live: Any


@njit(nogil=True, cache=True, inline="always")
def _memo_key(ws, lo, m, cell):
    """The state (cell, text) as one integer: the text is named by its range start and length."""
    return (lo * (ws.max_len + 1) + m) * len(ws.live) + cell


@njit(nogil=True, cache=True, inline="always")
def _leave(ws, d, memo):
    """Depth d is done: free its cell, or (revisit) settle whether its state leads to a word."""
    st_cell, _, st_m, st_lo, _, st_good = ws.st
    c = st_cell[d]
    if not ws.revisit:
        ws.used[c] = 0
        return
    good = st_good[d]
    memo[_memo_key(ws, st_lo[d], st_m[d], c)] = good
    if good:
        ws.live[c] = 1
        if d > 0:
            st_good[d - 1] = True


@njit(nogil=True, cache=True, inline="always")
def _push(ws, d, cell, m, lo, hi, good):
    st_cell, st_k, st_m, st_lo, st_hi, st_good = ws.st
    st_cell[d] = cell
    st_k[d] = 0
    st_m[d] = m
    st_lo[d] = lo
    st_hi[d] = hi
    st_good[d] = good
    if not ws.revisit:
        ws.used[cell] = 1


@njit(nogil=True, cache=True, inline="always")
def _mark_word(ws, d, nb):
    """The text ending at neighbour ``nb`` of depth d is a word: its cells are live."""
    if ws.revisit:
        ws.st[5][d] = True
    else:
        for t in range(d + 1):
            ws.live[ws.st[0][t]] = 1
    ws.live[nb] = 1


@njit(nogil=True, cache=True)
def _paths_from(ws, letters, flen, memo, found, word_points, word_len, collect, seen, stamp, ids):
    """The DFS from the state at depth 0 (see :func:`_walk_binary`)."""
    st_cell, st_k, st_m, st_lo, st_hi, st_good = ws.st
    flat, offsets, text = ws.flat, ws.offsets, ws.text
    d = 0
    while d >= 0:
        c = st_cell[d]
        k = st_k[d]
        if k >= ws.deg[c]:
            _leave(ws, d, memo)
            d -= 1
            continue
        st_k[d] = k + 1
        nb = ws.nbr_list[c, k]
        f = flen[nb]
        m = st_m[d]
        if f == 0 or ws.used[nb] == 1 or m + f > ws.max_len:
            continue
        for t in range(f):
            text[m + t] = letters[nb, t]
        lo, hi = _narrow(flat, offsets, st_lo[d], st_hi[d], text, m, m + f)
        if lo == hi:
            continue
        key = _memo_key(ws, lo, m + f, nb)
        if ws.revisit and key in memo:
            if memo[key]:
                st_good[d] = True
            continue
        is_word = offsets[lo + 1] - offsets[lo] == m + f
        if is_word:
            found = add_word(lo, found, seen, stamp, word_points, word_len, collect, ids)
            _mark_word(ws, d, nb)
            if hi - lo == 1:  # nothing but the word: no longer text starts with it
                if ws.revisit:
                    memo[key] = True
                continue
        d += 1
        _push(ws, d, nb, m + f, lo, hi, is_word)
    return found


@njit(nogil=True, cache=True)
def _walk_binary(ws, b, word_points, word_len, collect, seen, stamp, ids, n_ids):
    """Every word of board ``b``, as the driver's walk step: a DFS from each cell."""
    letters = ws.face_letters[b]
    flen = ws.face_len[b]
    flat, offsets, text, live = ws.flat, ws.offsets, ws.text, ws.live
    memo = Dict.empty(key_type=types.int64, value_type=types.boolean)
    live[:] = 0
    found = (0, 0, 0, n_ids)
    for s in range(len(flen)):
        f = flen[s]
        if f == 0 or f > ws.max_len:
            continue
        for t in range(f):
            text[t] = letters[s, t]
        lo, hi = _narrow(flat, offsets, 0, len(offsets) - 1, text, 0, f)
        if lo == hi:
            continue
        is_word = offsets[lo + 1] - offsets[lo] == f
        if is_word:
            live[s] = 1
            found = add_word(lo, found, seen, stamp, word_points, word_len, collect, ids)
            if hi - lo == 1:
                continue
        _push(ws, 0, s, f, lo, hi, is_word)
        found = _paths_from(ws, letters, flen, memo, found, word_points, word_len, collect, seen, stamp, ids)
    return walk_result(found, ids)


walk_kind(BinaryWalk, no_prepare, _walk_binary, finish_letters)


@njit(nogil=True, cache=True)
def _solve_binary(boards, table, word_points, word_len, revisit, collect):
    face_letters, face_len, nbr_list, deg = boards
    flat, offsets, _, max_len = table  # no prefix sharing here
    n = face_letters.shape[1]
    # a path has at most n cells, a walk at most max_len (each cell adds a letter)
    cap = max_len + 2 if revisit else min(n, max_len) + 2
    st = (
        np.empty(cap, np.int64),
        np.empty(cap, np.int64),
        np.empty(cap, np.int64),
        np.empty(cap, np.int64),
        np.empty(cap, np.int64),
        np.zeros(cap, np.bool_),
    )
    text = np.zeros(max_len + 1, np.int32)
    used = np.zeros(n, np.uint8)
    live = np.zeros(n, np.uint8)
    ws = BinaryWalk(
        face_letters, face_len, nbr_list, deg, flat, offsets, max_len, revisit, text, st, used, live
    )
    return drive(ws, face_letters.shape[0], n, word_points, word_len, collect, 0, 0)


def solve_binary_batch(
    boards: Sequence[Board], lexicon: CompiledLexicon, *, collect: bool = True
) -> BatchResult:
    """Solve boards of one shape by binary-search backtracking (rules from ``lexicon.rules``)."""
    return solve_letters(boards, lexicon, _solve_binary, collect)


def solve_binary(boards: Sequence[Board], lexicon: CompiledLexicon) -> list[BoardResult]:
    """Solve boards of any shapes by binary-search backtracking; results in input order."""
    return solve_boards(boards, lexicon, solve_binary_batch)
