"""The search space and its moves.

A state is a die per cell and the face it shows: free letters are n identical dice with every
face of the alphabet, a dice set is itself, so every dice-constrained board is rollable by
construction. Two moves: re-roll one die (another face of the die on that cell) and swap two
dice. Boards are compared in canonical form under the symmetries of their shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.boards import Board, symmetry_maps
from pipeline.errors import ConfigError
from pipeline.solve.kernels import REROLL


@dataclass(frozen=True)
class SearchSpace:
    """The dice of the search: ``table[d, j]`` is face j of die d (int8 alphabet index, -1
    blank), ``n_opts[d]`` how many faces die d has. Free letters: one identical die per cell."""

    rows: int
    cols: int
    table: np.ndarray  # int8 [n_dice, max_faces]
    n_opts: np.ndarray  # int64 [n_dice]
    free: bool
    n_faces: int  # size of the alphabet
    dice_name: str | None = None

    @property
    def n_cells(self) -> int:
        return self.rows * self.cols

    def faces(self, die: np.ndarray, fidx: np.ndarray) -> np.ndarray:
        return self.table[die, fidx]

    def random_state(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """A uniformly random board: dice shuffled over the cells, one face each."""
        n = self.n_cells
        die = np.arange(n, dtype=np.int64) if self.free else rng.permutation(n).astype(np.int64)
        fidx = (rng.random(n) * self.n_opts[die]).astype(np.int64)
        return die, fidx

    def board(self, faces: np.ndarray, alphabet: Any) -> Board:
        """Face indices (-1 blank) as a :class:`~pipeline.boards.Board`."""
        names = alphabet.faces
        return Board(self.rows, self.cols, tuple("" if f < 0 else names[f] for f in faces))


def free_space(rows: int, cols: int, n_faces: int) -> SearchSpace:
    n = rows * cols
    table = np.tile(np.arange(n_faces, dtype=np.int8), (n, 1))
    return SearchSpace(rows, cols, table, np.full(n, n_faces, np.int64), True, n_faces)


def dice_space(rows: int, cols: int, dice: Any, alphabet: Any) -> SearchSpace:
    """The search space of a :class:`pipeline.boards.DiceSet` (its dice must fill the board)."""
    if len(dice.dice) != rows * cols:
        raise ConfigError(
            f"dice set {dice.name!r} has {len(dice.dice)} dice, a {rows}x{cols} board has {rows * cols} cells"
        )
    width = max(len(d) for d in dice.dice)
    table = np.full((len(dice.dice), width), -1, np.int8)
    n_opts = np.zeros(len(dice.dice), np.int64)
    for d, die in enumerate(dice.dice):
        codes = alphabet.encode(die, where=f"dice set {dice.name}")
        table[d, : len(codes)] = codes
        n_opts[d] = len(codes)
    return SearchSpace(rows, cols, table, n_opts, False, len(alphabet), dice.name)


def apply_move(die: np.ndarray, fidx: np.ndarray, kind: int, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    """A new state: re-roll (kind REROLL) puts face index ``b`` of its die on cell ``a``; swap
    (kind SWAP) exchanges the dice of cells ``a`` and ``b`` with the faces they show."""
    die, fidx = die.copy(), fidx.copy()
    if kind == REROLL:
        fidx[a] = b
    else:
        die[a], die[b] = die[b], die[a]
        fidx[a], fidx[b] = fidx[b], fidx[a]
    return die, fidx


def shape_symmetries(rows: int, cols: int) -> np.ndarray:
    """The cell permutations that map the board onto itself (8 for squares, 4 otherwise)."""
    perms = [p for r, c, p in symmetry_maps(rows, cols) if (r, c) == (rows, cols)]
    return np.array(perms, dtype=np.int64)


def canonical_key(faces: np.ndarray, perms: np.ndarray) -> tuple[bytes, int]:
    """The smallest of the board's symmetric images as bytes (face index + 1, so a blank sorts
    first, as :func:`pipeline.boards.canonical` orders faces) and the permutation giving it."""
    images = (faces[perms] + 1).astype(np.uint8)
    keys = [row.tobytes() for row in images]
    best = min(range(len(keys)), key=keys.__getitem__)
    return keys[best], best


def key_faces(key: bytes) -> np.ndarray:
    return np.frombuffer(key, dtype=np.uint8).astype(np.int8) - 1
