"""The word-driven solver: dynamic programming over (prefix length, cell) for each lexicon word.

For a word ``w`` of ``L`` letters the table's row ``p`` holds the cells where a walk spelling
``w[:p]`` can end: cell ``c`` with face ``g`` (``|g|`` letters) is in row ``p`` when ``g`` equals
``w[p-|g|:p]`` and either ``p == |g|`` (the walk starts at ``c``) or a neighbour of ``c`` is in
row ``p - |g|``. The word is a candidate when row ``L`` is not empty.

* Under the revisit rule (cells may repeat, each step moves) the table is exact: row ``L``
  non-empty means the word is on the board, and the cells of the states that both start a walk
  and reach the end are the cells some spelling walk uses.
* Under the standard rule the table over-accepts (a walk may reuse a cell), so a candidate is
  confirmed by backtracking from its end cells towards the start, only through states the table
  marked and never reusing a cell. To count dead cells exactly, the backtracking goes on past the
  first path until every cell of the word's table support is known to be live.

Sorted order is what makes it fast: row ``p`` depends only on ``w[:p]``, so a word keeps the
rows it shares with the previous word (``lcp``), and once the last ``max face length`` rows are
all empty every later row is too, so every following word that shares that prefix is skipped at
once. ``share_prefixes=False`` gives the textbook per-word DP (each word from row 1, stopping at
its first dead row), kept for the benchmark.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from pipeline.boards import Board
from pipeline.lexicon import CompiledLexicon
from pipeline.solve import BatchResult, BoardResult, solve_boards
from pipeline.solve.driver import add_word, drive, walk_kind, walk_result
from pipeline.solve.letters import finish_letters, solve_letters


@njit(nogil=True, cache=True, inline="always")
def _face_matches(letters, cell, f, flat, pos):
    for t in range(f):  # noqa: SIM110 (a plain loop is what numba compiles best)
        if letters[cell, t] != flat[pos + t]:
            return False
    return True


class DpWalk(NamedTuple):
    """The word-driven DP (see :func:`_solve_dp`): the boards as face letters, the geometry, the
    word table, the rule and the work arrays. ``reach[p, c]`` (cell c is in row p) is
    ``mark[p, c] == row_tok[p]``, so a fresh token empties a row at once; ``front[p, :count[p]]``
    lists row p's cells; ``back[p, c] == tok[1]``: the state leads on to the word's end, and
    ``support[c] == tok[1]``: cell c has such a state. ``tok`` holds the row token, the back
    token and the board's longest face."""

    face_letters: Any
    face_len: Any
    nbr_list: Any
    deg: Any
    flat: Any
    offsets: Any
    lcp: Any
    revisit: bool
    share_prefixes: bool
    mark: Any
    row_tok: Any
    front: Any
    count: Any
    back: Any
    support: Any
    used: Any
    live: Any
    bt: Any
    has_len: Any
    tok: Any


@njit(nogil=True, cache=True)
def _prepare_dp(ws, b):
    flen = ws.face_len[b]
    ws.has_len[:] = False
    maxf = 0
    for c in range(len(flen)):
        ws.has_len[flen[c]] = True
        maxf = max(maxf, flen[c])
    ws.tok[2] = maxf


@njit(nogil=True, cache=True, inline="always")
def _add_cell(ws, p, c, cnt, token):
    ws.mark[p, c] = token
    ws.front[p, cnt] = c
    return cnt + 1


@njit(nogil=True, cache=True)
def _fill_row(ws, letters, flen, start, p):
    """Row p of the word starting at ``flat[start]``: cells whose face ends the prefix
    ``w[:p]`` and starts it (p == |face|) or follows a cell of row ``p - |face|``."""
    token = ws.tok[0] + 1
    ws.tok[0] = token
    ws.row_tok[p] = token
    cnt = 0
    for f in range(1, min(ws.tok[2], p) + 1):
        if not ws.has_len[f]:
            continue
        q = p - f
        if q == 0:
            for c in range(len(flen)):
                if flen[c] == f and ws.mark[p, c] != token and _face_matches(letters, c, f, ws.flat, start):
                    cnt = _add_cell(ws, p, c, cnt, token)
            continue
        for k0 in range(ws.count[q]):
            s = ws.front[q, k0]
            for k in range(ws.deg[s]):
                c = ws.nbr_list[s, k]
                if (
                    flen[c] == f
                    and ws.mark[p, c] != token
                    and _face_matches(letters, c, f, ws.flat, start + q)
                ):
                    cnt = _add_cell(ws, p, c, cnt, token)
    ws.count[p] = cnt


@njit(nogil=True, cache=True)
def _fill_rows(ws, letters, flen, start, p, length):
    """Rows p+1..length of the word starting at ``flat[start]`` (rows 1..p hold its prefix).
    Returns (the last row filled, the row where the table died or 0)."""
    maxf = ws.tok[2]
    while p < length:
        p += 1
        _fill_row(ws, letters, flen, start, p)
        if p >= maxf:
            # rows p-maxf+1..p all empty: no later row can fill (a face spans <= maxf)
            empty = True
            for q in range(p - maxf + 1, p + 1):
                if ws.count[q] > 0:
                    empty = False
                    break
            if empty:
                return p, p
    return p, 0


@njit(nogil=True, cache=True)
def _mark_support(ws, flen, length):
    """Walk the table back from row ``length``: the states that lead on to the word's end, and
    their cells (``support``). Returns the back token that marks them."""
    back_tok = ws.tok[1] + 1
    ws.tok[1] = back_tok
    for k0 in range(ws.count[length]):
        ws.back[length, ws.front[length, k0]] = back_tok
    for p in range(length, 0, -1):
        for k0 in range(ws.count[p]):
            c = ws.front[p, k0]
            if ws.back[p, c] != back_tok:
                continue
            ws.support[c] = back_tok
            q = p - flen[c]
            if q == 0:
                continue
            for k in range(ws.deg[c]):
                nb = ws.nbr_list[c, k]
                if ws.mark[q, nb] == ws.row_tok[q]:
                    ws.back[q, nb] = back_tok
    return back_tok


@njit(nogil=True, cache=True)
def _confirm(ws, flen, length, need):
    """Standard rule: backtrack from the end cells of row ``length`` towards the start, through
    marked states, never reusing a cell. True when a path exists; goes on until the ``need``
    support cells not yet live are all known live (then every path's cells are marked)."""
    bt_cell, bt_pos, bt_k = ws.bt
    used, live = ws.used, ws.live
    is_word = False
    for k0 in range(ws.count[length]):
        if is_word and need == 0:
            break
        e = ws.front[length, k0]
        d = 0
        bt_cell[0] = e
        bt_pos[0] = length
        bt_k[0] = 0
        used[e] = 1
        while d >= 0:
            c = bt_cell[d]
            q = bt_pos[d] - flen[c]
            if q == 0:
                is_word = True
                for t in range(d + 1):
                    if live[bt_cell[t]] == 0:
                        live[bt_cell[t]] = 1
                        need -= 1
                if need == 0:
                    for t in range(d + 1):
                        used[bt_cell[t]] = 0
                    break
                used[c] = 0
                d -= 1
                continue
            k = bt_k[d]
            if k >= ws.deg[c]:
                used[c] = 0
                d -= 1
                continue
            bt_k[d] = k + 1
            nb = ws.nbr_list[c, k]
            if used[nb] == 1 or ws.mark[q, nb] != ws.row_tok[q]:
                continue
            d += 1
            bt_cell[d] = nb
            bt_pos[d] = q
            bt_k[d] = 0
            used[nb] = 1
    return is_word


@njit(nogil=True, cache=True)
def _on_board(ws, flen, length):
    """Row ``length`` is not empty: is the word on the board? Marks the cells its walks use."""
    back_tok = _mark_support(ws, flen, length)
    need = 0  # support cells not yet known to be live
    for c in range(len(flen)):
        if ws.support[c] == back_tok and ws.live[c] == 0:
            if ws.revisit:  # the table is exact: every support cell is on a spelling walk
                ws.live[c] = 1
            else:
                need += 1
    return ws.revisit or _confirm(ws, flen, length, need)


@njit(nogil=True, cache=True)
def _walk_dp(ws, b, word_points, word_len, collect, seen, stamp, ids, n_ids):
    """Every word of board ``b``, as the driver's walk step: the lexicon in sorted order."""
    letters = ws.face_letters[b]
    flen = ws.face_len[b]
    offsets, lcp = ws.offsets, ws.lcp
    n_words = len(offsets) - 1
    ws.live[:] = 0
    found = (0, 0, 0, n_ids)
    valid = 0  # rows 1..valid hold the current word's prefix
    i = 0
    while i < n_words:
        start = offsets[i]
        length = offsets[i + 1] - start
        p = min(valid, lcp[i]) if ws.share_prefixes else 0
        valid, dead_at = _fill_rows(ws, letters, flen, start, p, length)
        if dead_at > 0:
            i += 1
            while ws.share_prefixes and i < n_words and lcp[i] >= dead_at:
                i += 1
            continue
        if ws.count[length] > 0 and _on_board(ws, flen, length):
            found = add_word(i, found, seen, stamp, word_points, word_len, collect, ids)
        i += 1
    return walk_result(found, ids)


walk_kind(DpWalk, _prepare_dp, _walk_dp, finish_letters)


@njit(nogil=True, cache=True)
def _solve_dp(boards, table, word_points, word_len, revisit, share_prefixes, collect):
    face_letters, face_len, nbr_list, deg = boards
    flat, offsets, lcp, max_len = table
    n = face_letters.shape[1]
    rows = max_len + 1
    bt = (np.empty(n + 1, np.int64), np.empty(n + 1, np.int64), np.empty(n + 1, np.int64))
    ws = DpWalk(
        face_letters,
        face_len,
        nbr_list,
        deg,
        flat,
        offsets,
        lcp,
        revisit,
        share_prefixes,
        np.zeros((rows, n), np.int64),
        np.full(rows, -1, np.int64),
        np.empty((rows, n), np.int32),
        np.zeros(rows, np.int64),
        np.zeros((rows, n), np.int64),
        np.zeros(n, np.int64),
        np.zeros(n, np.uint8),
        np.zeros(n, np.uint8),
        bt,
        np.zeros(face_letters.shape[2] + 1, np.bool_),
        np.zeros(3, np.int64),
    )
    return drive(ws, face_letters.shape[0], n, word_points, word_len, collect, 0, 0)


def solve_dp_batch(
    boards: Sequence[Board],
    lexicon: CompiledLexicon,
    *,
    share_prefixes: bool = True,
    collect: bool = True,
) -> BatchResult:
    """Solve boards of one shape with the word-driven DP (rules from ``lexicon.rules``)."""
    return solve_letters(boards, lexicon, _solve_dp, share_prefixes, collect)


def solve_dp(
    boards: Sequence[Board], lexicon: CompiledLexicon, *, share_prefixes: bool = True
) -> list[BoardResult]:
    """Solve boards of any shapes with the word-driven DP; results in input order."""

    def batch(bs: Sequence[Board], lex: CompiledLexicon) -> BatchResult:
        return solve_dp_batch(bs, lex, share_prefixes=share_prefixes)

    return solve_boards(boards, lexicon, batch)
