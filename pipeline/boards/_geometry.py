"""The neighbour geometry of an R x C grid and the 8 symmetries of its rectangle: one table,
shared by the kernels and the reference solver, and the canonical board of a symmetry class.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from pipeline.boards._board import Board


@dataclass(frozen=True)
class Geometry:
    """Neighbour tables for an R x C grid, shared by the kernel and the reference solver.

    ``nbr_list[c, :deg[c]]`` are the neighbours of cell ``c``; ``nbr_mask[c]`` is the same as a
    bit mask (only for boards of at most 64 cells, else all zeros).
    """

    rows: int
    cols: int
    nbr_list: np.ndarray  # int32 [n, 8], -1 padded
    deg: np.ndarray  # int32 [n]
    nbr_mask: np.ndarray  # uint64 [n]

    @property
    def n_cells(self) -> int:
        return self.rows * self.cols

    def neighbours(self, cell: int) -> list[int]:
        return [int(x) for x in self.nbr_list[cell, : self.deg[cell]]]


@lru_cache(maxsize=64)
def geometry(rows: int, cols: int) -> Geometry:
    n = rows * cols
    nbr_list = np.full((n, 8), -1, dtype=np.int32)
    deg = np.zeros(n, dtype=np.int32)
    nbr_mask = np.zeros(n, dtype=np.uint64)
    for r in range(rows):
        for c in range(cols):
            cell = r * cols + c
            k = 0
            m = 0
            for dr in (-1, 0, 1):
                for dc in (-1, 0, 1):
                    if dr == 0 and dc == 0:
                        continue
                    rr, cc = r + dr, c + dc
                    if 0 <= rr < rows and 0 <= cc < cols:
                        nb = rr * cols + cc
                        nbr_list[cell, k] = nb
                        k += 1
                        if n <= 64:
                            m |= 1 << nb
            deg[cell] = k
            nbr_mask[cell] = np.uint64(m)
    for arr in (nbr_list, deg, nbr_mask):
        arr.setflags(write=False)
    return Geometry(rows, cols, nbr_list, deg, nbr_mask)


# ---------------------------------------------------------------- symmetries


def symmetry_maps(rows: int, cols: int) -> list[tuple[int, int, np.ndarray]]:
    """The 8 symmetries of the rectangle as (new_rows, new_cols, perm).

    ``new_faces[i] = faces[perm[i]]``. Transposing symmetries swap rows and cols.
    """
    idx = np.arange(rows * cols).reshape(rows, cols)
    out = []
    for t in range(2):
        g = idx.T if t else idx
        for k in range(4):
            h = np.rot90(g, k)
            out.append((h.shape[0], h.shape[1], h.reshape(-1).copy()))
    # the rotations of the grid and of its transpose are the 8 elements of the dihedral group
    return out


def symmetries(board: Board) -> list[Board]:
    """The board under each of the 8 symmetries of its rectangle (rotations and mirrors)."""
    out = []
    for r, c, perm in symmetry_maps(board.rows, board.cols):
        out.append(Board(r, c, tuple(board.faces[i] for i in perm)))
    return out


def canonical(board: Board) -> Board:
    """The representative of the board's symmetry class (smallest (shape, faces))."""
    return min(symmetries(board), key=lambda b: (b.rows, b.cols, b.faces))
