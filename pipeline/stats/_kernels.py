"""The statistics' loops over boards, as numba kernels (array in, array out; see
:mod:`pipeline.jit`). Counting a board's cell pairs one at a time is several times faster than
the equivalent numpy bincounts over every pair of every board, and needs no memory per board."""

from __future__ import annotations

import numpy as np

from pipeline.jit import njit


@njit(nogil=True, cache=True, inline="always")
def _first_sight(stamp, c, board, skip):
    """Whether face ``c`` is counted for the board numbered ``board``: not the ``skip`` face
    and not seen on the board before (``stamp[c]`` then marks it seen)."""
    if c == skip or stamp[c] == board + 1:
        return False
    stamp[c] = board + 1
    return True


@njit(nogil=True, cache=True)
def face_presence(codes, score, group, n_faces, n_groups, skip):
    """Per group and face: the boards showing the face at least once, their score sum and sum
    of squares (int64). ``skip``: a face code not counted (the blank), -1 for none."""
    n, cells = codes.shape
    with_n = np.zeros((n_groups, n_faces), np.int64)
    with_s = np.zeros((n_groups, n_faces), np.int64)
    with_q = np.zeros((n_groups, n_faces), np.int64)
    stamp = np.zeros(n_faces, np.int64)
    for b in range(n):
        g = group[b]
        y = np.int64(score[b])
        for i in range(cells):
            c = codes[b, i]
            if _first_sight(stamp, c, b, skip):
                with_n[g, c] += 1
                with_s[g, c] += y
                with_q[g, c] += y * y
    return with_n, with_s, with_q


@njit(nogil=True, cache=True)
def gram(cols, y, group, width, n_groups):
    """``X'X`` and ``X'y`` per group of the count design whose row for a board counts its cells
    in each column (``cols[b, cell]``: the cell's column), without building X (int64, exact)."""
    n, cells = cols.shape
    xtx = np.zeros((n_groups, width, width), np.int64)
    xty = np.zeros((n_groups, width), np.int64)
    for b in range(n):
        g = group[b]
        yb = np.int64(y[b])
        for i in range(cells):
            ci = cols[b, i]
            xty[g, ci] += yb
            xtx[g, ci, ci] += 1
            for j in range(i + 1, cells):
                cj = cols[b, j]
                xtx[g, ci, cj] += 1
                xtx[g, cj, ci] += 1
    return xtx, xty


@njit(nogil=True, cache=True)
def meat(cols, y, group, coef, width, n_groups):
    """The HC1 meat ``X' diag(e^2) X`` per group of the count design, and the residual sum of
    squares, for the residuals ``e = y - X coef[group]`` of a fitted model."""
    n, cells = cols.shape
    out = np.zeros((n_groups, width, width), np.float64)
    rss = np.zeros(n_groups, np.float64)
    for b in range(n):
        g = group[b]
        pred = 0.0
        for i in range(cells):
            pred += coef[g, cols[b, i]]
        r = y[b] - pred
        r2 = r * r
        rss[g] += r2
        for i in range(cells):
            ci = cols[b, i]
            out[g, ci, ci] += r2
            for j in range(i + 1, cells):
                cj = cols[b, j]
                out[g, ci, cj] += r2
                out[g, cj, ci] += r2
    return out, rss


@njit(nogil=True, cache=True)
def face_cross(codes, a, b, n_faces, skip):
    """Per face, over the boards showing it: the count and the sums of ``a``, ``b``, ``a*a``,
    ``b*b`` and ``a*b`` (int64; [6, K]): the paired face effects' sufficient statistics."""
    n, cells = codes.shape
    out = np.zeros((6, n_faces), np.int64)
    stamp = np.zeros(n_faces, np.int64)
    for i in range(n):
        x = np.int64(a[i])
        y = np.int64(b[i])
        for j in range(cells):
            c = codes[i, j]
            if _first_sight(stamp, c, i, skip):
                out[0, c] += 1
                out[1, c] += x
                out[2, c] += y
                out[3, c] += x * x
                out[4, c] += y * y
                out[5, c] += x * y
    return out
