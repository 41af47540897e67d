"""Dice sets and board generators.

Named dice sets come from ``pipeline/data/dice_sets.json`` (pinned by a test to the project's
cross-checked copy). Rolling a board: shuffle the dice over the cells, then pick a face of each
die uniformly. Other generators: ``uniform`` (letters a-z, q = Qu) and ``english`` (letters drawn
with English letter frequencies, q = Qu), and ``tanglet:<lang>`` (a Tanglet pack's dice: the
first 16 for 4x4, the next 25 for 5x5).

Generators return encoded boards (int8 [n, cells], indices into an :class:`Alphabet`), so a
million boards cost 16 MB and no Python objects.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from importlib import resources
from typing import Any

import numpy as np

from pipeline.boards import BLANK, QU, Board, normalise_text
from pipeline.errors import BoggleError
from pipeline.tanglet import TANGLET_PREFIX, tanglet_pack
from pipeline.trie import Alphabet

GENERATORS = ("uniform", "english")

# Relative frequency of letters in English text (per 100,000 letters), the table from
# Lewand, "Cryptological Mathematics" (2000). Only ratios matter.
ENGLISH_FREQUENCIES = {
    "a": 8167,
    "b": 1492,
    "c": 2782,
    "d": 4253,
    "e": 12702,
    "f": 2228,
    "g": 2015,
    "h": 6094,
    "i": 6966,
    "j": 153,
    "k": 772,
    "l": 4025,
    "m": 2406,
    "n": 6749,
    "o": 7507,
    "p": 1929,
    "q": 95,
    "r": 5987,
    "s": 6327,
    "t": 9056,
    "u": 2758,
    "v": 978,
    "w": 2360,
    "x": 150,
    "y": 1974,
    "z": 74,
}


@dataclass(frozen=True)
class DiceSet:
    """A named set of dice for an R x C board; faces are normalised (``qu``, ``""`` blank)."""

    name: str
    rows: int
    cols: int
    dice: tuple[tuple[str, ...], ...]
    min_length: int = 3
    title: str = ""

    @cached_property
    def _dice_of(self) -> dict[str, tuple[int, ...]]:
        """The dice (indices) that carry each face."""
        found: dict[str, list[int]] = {}
        for d, die in enumerate(self.dice):
            for f in set(die):  # blank too: a board shows blank cells
                found.setdefault(f, []).append(d)
        return {f: tuple(ds) for f, ds in found.items()}

    @property
    def faces(self) -> set[str]:
        return {f for die in self.dice for f in die if f != BLANK}

    def face_table(self, alphabet: Alphabet) -> np.ndarray:
        """int8 [n_dice, 6] of face indices (blank = -1)."""
        return np.stack([alphabet.encode(die, where=f"dice set {self.name}") for die in self.dice])

    def can_roll(self, board: Board) -> bool:
        """Whether some assignment of dice to cells shows exactly this board (a matching)."""
        return board.n_cells == len(self.dice) and self.can_show(board.faces)

    def can_show(self, faces: Sequence[str]) -> bool:
        """Whether distinct dice, one for each of ``faces``, can show them all at once (a
        matching of faces to dice): a board's cells, or the cells of a word's path. ``zuz`` is
        not playable with the new dice, which carry one Z.

        >>> load_dice_set("new").can_show(["z", "u", "z"])
        False
        """
        if len(faces) > len(self.dice):
            return False
        dice_of = self._dice_of
        options = [dice_of.get(f, ()) for f in faces]
        # distinct faces, each on at least len(faces) dice: a matching exists (Hall's condition),
        # the common case, decided without a search
        if len(set(faces)) == len(faces) and all(len(o) >= len(faces) for o in options):
            return True
        match: dict[int, int] = {}  # die -> index in faces

        def assign(cell: int, seen: set[int]) -> bool:
            for d in options[cell]:
                if d in seen:
                    continue
                seen.add(d)
                if d not in match or assign(match[d], seen):
                    match[d] = cell
                    return True
            return False

        return all(assign(cell, set()) for cell in range(len(faces)))


def _normalise_face(face: str) -> str:
    return BLANK if face == "" else normalise_text(face)


@lru_cache(maxsize=1)
def _dice_json() -> dict[str, dict[str, Any]]:
    text = resources.files("pipeline").joinpath("data/dice_sets.json").read_text(encoding="utf-8")
    data: dict[str, dict[str, Any]] = json.loads(text)
    return data


def dice_set_names() -> list[str]:
    return list(_dice_json())


def load_dice_set(name: str, rows: int | None = None, cols: int | None = None) -> DiceSet:
    """A named dice set (``new``, ``classic``...) or ``tanglet:<lang>`` (16 dice for 4x4,
    25 for 5x5, chosen by ``rows``/``cols``; 4x4 by default)."""
    if name.startswith(TANGLET_PREFIX):
        return _tanglet_dice(name, rows or 4, cols or rows or 4)
    data = _dice_json()
    if name not in data:
        choices = ", ".join([*data, *GENERATORS, "tanglet:<lang>"])
        raise BoggleError(f"unknown dice set {name!r}; choose one of {choices}")
    entry = data[name]
    size = int(entry["size"])
    if (rows, cols) not in ((None, None), (size, size)):
        raise BoggleError(f"dice set {name!r} is for {size}x{size} boards, not {rows}x{cols}")
    dice = tuple(tuple(_normalise_face(f) for f in die) for die in entry["dice"])
    min_length = int(entry["default_min_word_length"])
    return DiceSet(name, size, size, dice, min_length, str(entry["name"]))


def _tanglet_dice(name: str, rows: int, cols: int) -> DiceSet:
    lang = name.split(":", 1)[1]
    text = (tanglet_pack(lang) / "dice").read_text(encoding="utf-8")
    groups: list[list[tuple[str, ...]]] = [[]]
    for line in text.splitlines():
        if not line.strip():
            groups.append([])
            continue
        groups[-1].append(tuple(_normalise_face(f.strip()) for f in line.split(",")))
    groups = [g for g in groups if g]
    for g in groups:
        if len(g) == rows * cols:
            return DiceSet(name, rows, cols, tuple(g), 3 if rows * cols <= 16 else 4, name)
    sizes = ", ".join(str(len(g)) for g in groups)
    raise BoggleError(f"{name}: no set of {rows * cols} dice for {rows}x{cols} (the pack has {sizes})")


def generator_alphabet(source: str, rows: int | None = None, cols: int | None = None) -> Alphabet:
    """The faces a generator can show (``rows``/``cols`` pick a Tanglet pack's dice)."""
    if source in GENERATORS:
        return Alphabet.english()
    return Alphabet.from_faces(load_dice_set(source, rows, cols).faces)


def roll_dice_layout(dice: DiceSet, rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The draws behind :func:`roll_dice`: ``order[b, cell]`` is the die on that cell and
    ``face[b, cell]`` which of its faces shows (analysis reconstructs both from the seed)."""
    n = len(dice.dice)
    order = np.argsort(rng.random((count, n)), axis=1)
    face = rng.integers(0, max(len(d) for d in dice.dice), size=(count, n))
    return order, face


def roll_dice(dice: DiceSet, alphabet: Alphabet, rng: np.random.Generator, count: int) -> np.ndarray:
    """Roll ``count`` boards: shuffle the dice over the cells, then one face of each uniformly."""
    table = dice.face_table(alphabet)
    order, face = roll_dice_layout(dice, rng, count)
    return table[order, face]


def roll_letters(
    alphabet: Alphabet,
    rng: np.random.Generator,
    count: int,
    cells: int,
    weights: dict[str, int] | None = None,
) -> np.ndarray:
    """Boards of independent letters (q shows as Qu), uniform or with ``weights``."""
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    codes = np.array([alphabet.index[QU if ch == "q" else ch] for ch in letters], dtype=np.int8)
    if weights is None:
        pick = rng.integers(0, len(letters), size=(count, cells))
    else:
        p = np.array([weights[ch] for ch in letters], dtype=np.float64)
        pick = rng.choice(len(letters), size=(count, cells), p=p / p.sum())
    return codes[pick]


def generate_boards(
    source: str,
    alphabet: Alphabet,
    rng: np.random.Generator,
    count: int,
    rows: int = 4,
    cols: int = 4,
) -> np.ndarray:
    """``count`` boards from a dice set, ``uniform`` or ``english``: int8 [count, rows*cols]."""
    if source == "uniform":
        return roll_letters(alphabet, rng, count, rows * cols)
    if source == "english":
        return roll_letters(alphabet, rng, count, rows * cols, ENGLISH_FREQUENCIES)
    dice = load_dice_set(source, rows, cols)
    if (dice.rows, dice.cols) != (rows, cols):
        raise BoggleError(f"dice set {source!r} is for {dice.rows}x{dice.cols} boards, not {rows}x{cols}")
    return roll_dice(dice, alphabet, rng, count)
