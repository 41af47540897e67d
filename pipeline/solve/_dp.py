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

import numpy as np

from pipeline.boards import Board
from pipeline.jit import njit
from pipeline.lexicon import CompiledLexicon
from pipeline.solve import BatchResult, BoardResult, solve_boards
from pipeline.solve._letters import add_word, record_board, solve_table_batch
from pipeline.solve.kernels import enter, new_outputs, next_neighbour


@njit(nogil=True, cache=True, inline="always")
def _face_matches(letters, cell, f, flat, pos):
    for t in range(f):  # noqa: SIM110 (a plain loop is what numba compiles best)
        if letters[cell, t] != flat[pos + t]:
            return False
    return True


@njit(nogil=True, cache=True)
def _solve_dp(boards, table, revisit, collect, lcp, share_prefixes):
    face_letters, face_len, nbr_list, deg = boards
    flat, offsets, word_points, word_len, max_len = table
    n_boards, n, _ = face_letters.shape
    n_words = len(offsets) - 1
    outs = new_outputs(n_boards, n, n_words, collect, 0)
    score, found_count, longest, dead, out_offsets, ids = outs[:6]
    n_ids = 0

    rows = max_len + 1
    # reach[p, c] <=> mark[p, c] == row_tok[p]; a fresh token empties a row in O(1)
    mark = np.zeros((rows, n), np.int64)
    row_tok = np.full(rows, -1, np.int64)
    front = np.empty((rows, n), np.int32)  # the cells of row p, front[p, :count[p]]
    count = np.zeros(rows, np.int64)
    back = np.zeros((rows, n), np.int64)  # == back_tok: state leads on to the word's end
    support = np.zeros(n, np.int64)  # == back_tok: cell of such a state
    used = np.zeros(n, np.uint8)
    live = np.zeros(n, np.uint8)
    bt_cell = np.empty(n + 1, np.int64)
    bt_pos = np.empty(n + 1, np.int64)
    bt_k = np.empty(n + 1, np.int64)
    has_len = np.zeros(face_letters.shape[2] + 1, np.bool_)
    token = np.int64(0)
    back_tok = np.int64(0)

    for b in range(n_boards):
        letters = face_letters[b]
        flen = face_len[b]
        has_len[:] = False
        maxf = 0
        for c in range(n):
            live[c] = 0
            has_len[flen[c]] = True
            if flen[c] > maxf:
                maxf = flen[c]
        sc = 0
        nw = 0
        lg = 0
        valid = 0  # rows 1..valid hold the current word's prefix
        i = 0
        while i < n_words:
            start = offsets[i]
            length = offsets[i + 1] - start
            p = min(valid, lcp[i]) if share_prefixes else 0
            dead_at = 0
            while p < length:
                p += 1
                token += 1
                row_tok[p] = token
                cnt = 0
                for f in range(1, min(maxf, p) + 1):
                    if not has_len[f]:
                        continue
                    q = p - f
                    if q == 0:
                        for c in range(n):
                            if (
                                flen[c] == f
                                and mark[p, c] != token
                                and _face_matches(letters, c, f, flat, start)
                            ):
                                mark[p, c] = token
                                front[p, cnt] = c
                                cnt += 1
                        continue
                    for k0 in range(count[q]):
                        s = front[q, k0]
                        for k in range(deg[s]):
                            c = nbr_list[s, k]
                            if (
                                flen[c] == f
                                and mark[p, c] != token
                                and _face_matches(letters, c, f, flat, start + q)
                            ):
                                mark[p, c] = token
                                front[p, cnt] = c
                                cnt += 1
                count[p] = cnt
                if p >= maxf:
                    # rows p-maxf+1..p all empty: no later row can fill (a face spans <= maxf)
                    empty = True
                    for q in range(p - maxf + 1, p + 1):
                        if count[q] > 0:
                            empty = False
                            break
                    if empty:
                        dead_at = p
                        break
            valid = p
            if dead_at > 0:
                i += 1
                if share_prefixes:
                    while i < n_words and lcp[i] >= dead_at:
                        i += 1
                continue
            if count[length] == 0:
                i += 1
                continue

            # states that lead on to the end: walk the table backwards from row L
            back_tok += 1
            for k0 in range(count[length]):
                back[length, front[length, k0]] = back_tok
            for p2 in range(length, 0, -1):
                for k0 in range(count[p2]):
                    c = front[p2, k0]
                    if back[p2, c] != back_tok:
                        continue
                    support[c] = back_tok
                    q = p2 - flen[c]
                    if q == 0:
                        continue
                    for k in range(deg[c]):
                        nb = nbr_list[c, k]
                        if mark[q, nb] == row_tok[q]:
                            back[q, nb] = back_tok

            is_word = revisit
            if revisit:
                for c in range(n):
                    if support[c] == back_tok:
                        live[c] = 1
            else:
                need = 0  # support cells not yet known to be live
                for c in range(n):
                    if support[c] == back_tok and live[c] == 0:
                        need += 1
                for k0 in range(count[length]):
                    if is_word and need == 0:
                        break
                    d = 0
                    enter(bt_cell, bt_pos, bt_k, used, 0, front[length, k0], length)
                    while d >= 0:
                        c = bt_cell[d]
                        q = bt_pos[d] - flen[c]
                        if q == 0:
                            is_word = True
                            for t in range(d + 1):
                                cc = bt_cell[t]
                                if live[cc] == 0:
                                    live[cc] = 1
                                    need -= 1
                            if need == 0:
                                for t in range(d + 1):
                                    used[bt_cell[t]] = 0
                                break
                            used[c] = 0
                            d -= 1
                            continue
                        nb = next_neighbour(bt_k, used, nbr_list, deg, d, c)
                        if nb < 0:
                            d -= 1
                            continue
                        if used[nb] == 1 or mark[q, nb] != row_tok[q]:
                            continue
                        d += 1
                        enter(bt_cell, bt_pos, bt_k, used, d, nb, q)
            if is_word:
                sc, nw, lg, ids, n_ids = add_word(i, word_points, word_len, sc, nw, lg, collect, ids, n_ids)
            i += 1
        record_board((score, found_count, longest, dead, out_offsets), b, sc, nw, lg, n_ids, flen, live)
    return score, found_count, longest, dead, out_offsets, ids[:n_ids].copy()


def solve_dp_batch(
    boards: Sequence[Board],
    lexicon: CompiledLexicon,
    *,
    share_prefixes: bool = True,
    collect: bool = True,
) -> BatchResult:
    """Solve boards of one shape with the word-driven DP (rules from ``lexicon.rules``)."""
    return solve_table_batch(_solve_dp, boards, lexicon, collect=collect, lcp=True, extra=(share_prefixes,))


def solve_dp(
    boards: Sequence[Board], lexicon: CompiledLexicon, *, share_prefixes: bool = True
) -> list[BoardResult]:
    """Solve boards of any shapes with the word-driven DP; results in input order."""

    def batch(bs: Sequence[Board], lex: CompiledLexicon) -> BatchResult:
        return solve_dp_batch(bs, lex, share_prefixes=share_prefixes)

    return solve_boards(boards, lexicon, batch)
