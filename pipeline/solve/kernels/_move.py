"""Numba kernels for the search moves (``pipeline.best.optimize``): every move from a board with its
score, and the whole annealing loop in machine code. They score with
:mod:`pipeline.solve.kernels._score`.

A board in the search is a die per cell (``die``) and the face index shown on it (``fidx``);
its faces are ``table[die, fidx]``. Free letters are n identical dice with every face, so the
same moves serve both: re-roll one die (another face of the die on that cell) and swap two
dice (with the faces they show).
"""

from __future__ import annotations

import numpy as np

from pipeline.jit import njit
from pipeline.solve.kernels._score import cell_scores, score_one

REROLL = 0
SWAP = 1


@njit(nogil=True, cache=True)
def _faces_of(die, fidx, table, board):
    for c in range(len(die)):
        board[c] = table[die[c], fidx[c]]


@njit(nogil=True, cache=True, inline="always")
def _add_move(moves, k, kind, a, b, score):
    """Move ``k`` of ``moves`` (kind, a, b, score; see :func:`neighbourhood`); returns k + 1."""
    kinds, ma, mb, scores = moves
    kinds[k] = kind
    ma[k] = a
    mb[k] = b
    scores[k] = score
    return k + 1


@njit(nogil=True, cache=True, inline="always")
def _accepted(new, cur, temp):
    """The Metropolis rule: a move from a board scoring ``cur`` to one scoring ``new`` is taken
    when it loses nothing, else with probability exp((new - cur) / temp) (a draw only then)."""
    delta = new - cur
    return delta >= 0 or np.random.random() < np.exp(delta / temp)


@njit(nogil=True, cache=True)
def neighbourhood(
    die,
    fidx,
    table,
    n_opts,
    use_wild,
    n_faces,
    trie,
    work,
    wild_work,
):
    """Every neighbour of a board and its score: re-roll one die to a face it does not show
    (one move per distinct face), swap two dice showing different faces.

    Returns (kind int8 [m], a int16 [m], b int16 [m], score int64 [m]); a re-roll is
    (REROLL, cell, face index on the die), a swap (SWAP, cell, cell). With ``use_wild`` each
    cell's re-rolls are scored by one wildcard walk (:func:`cell_scores`).
    """
    n = len(die)
    board = np.empty(n, np.int8)
    _faces_of(die, fidx, table, board)
    cap = n * table.shape[1] + n * (n - 1) // 2
    moves = (
        np.empty(cap, np.int8),  # kind
        np.empty(cap, np.int16),  # a
        np.empty(cap, np.int16),  # b
        np.empty(cap, np.int64),  # the board's score
    )
    k = 0
    seen_face = np.zeros(max(n_faces + 1, 1), np.bool_)
    for c in range(n):
        d = die[c]
        cur = board[c]
        for g in range(len(seen_face)):
            seen_face[g] = False
        wild = np.empty(0, np.int64)
        if use_wild:
            wild = cell_scores(
                board,
                c,
                n_faces,
                trie,
                work,
                wild_work,
            )
        for j in range(n_opts[d]):
            f = table[d, j]
            if f == cur or seen_face[f + 1]:
                continue
            seen_face[f + 1] = True
            if use_wild and f >= 0:
                sc = wild[f]
            else:
                board[c] = f
                sc = score_one(board, trie, work)
                board[c] = cur
            k = _add_move(moves, k, REROLL, c, j, sc)
    for i in range(n):
        for j in range(i + 1, n):
            fi = board[i]
            fj = board[j]
            if fi == fj:
                continue
            board[i] = fj
            board[j] = fi
            sc = score_one(board, trie, work)
            board[i] = fi
            board[j] = fj
            k = _add_move(moves, k, SWAP, i, j, sc)
    kind, ma, mb, score = moves
    return kind[:k].copy(), ma[:k].copy(), mb[:k].copy(), score[:k].copy()


@njit(nogil=True, cache=True)
def anneal(
    die,
    fidx,
    cur,
    best_die,
    best_fidx,
    best,
    table,
    n_opts,
    step0,
    n_steps,
    cycle,
    t_start,
    t_end,
    swap_p,
    seed,
    trie,
    work,
):
    """``n_steps`` moves of simulated annealing from the state (die, fidx) scoring ``cur``,
    updated in place, as are (best_die, best_fidx). The temperature at step s of the cycle is
    t_start * (t_end / t_start) ** (s / cycle) (geometric cooling), s = (step0 + i) % cycle.

    Returns (current score, best score, accepted moves). Uses numba's generator, seeded here,
    so a call is reproducible from ``seed``.
    """
    np.random.seed(seed)
    n = len(die)
    board = np.empty(n, np.int8)
    _faces_of(die, fidx, table, board)
    ratio = t_end / t_start
    accepted = 0
    for i in range(n_steps):
        s = (step0 + i) % cycle
        temp = t_start * ratio ** (s / cycle)
        if np.random.random() < swap_p:
            a = np.random.randint(0, n)
            b = np.random.randint(0, n)
            if a == b or board[a] == board[b]:
                continue
            board[a], board[b] = board[b], board[a]
            new = score_one(board, trie, work)
            if _accepted(new, cur, temp):
                die[a], die[b] = die[b], die[a]
                fidx[a], fidx[b] = fidx[b], fidx[a]
                cur = new
                accepted += 1
            else:
                board[a], board[b] = board[b], board[a]
                continue
        else:
            c = np.random.randint(0, n)
            d = die[c]
            if n_opts[d] < 2:
                continue
            j = np.random.randint(0, n_opts[d] - 1)
            if j >= fidx[c]:
                j += 1
            f = table[d, j]
            old = board[c]
            if f == old:
                continue
            board[c] = f
            new = score_one(board, trie, work)
            if _accepted(new, cur, temp):
                fidx[c] = j
                cur = new
                accepted += 1
            else:
                board[c] = old
                continue
        if cur > best:
            best = cur
            best_die[:] = die
            best_fidx[:] = fidx
    return cur, best, accepted
