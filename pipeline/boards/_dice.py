"""A dice set (:class:`DiceSet`): the dice for an R x C board with normalised faces, its SHA-256
and the record a run keeps of it (:func:`dice_from_record` gives the set back), and whether a
word's faces can show on one roll (one die a cell).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from pipeline.boards._board import Board, format_shape
from pipeline.errors import BoggleError
from pipeline.lexicon.trie import BLANK, Alphabet


@dataclass(frozen=True)
class DiceSet:
    """A named set of dice for an R x C board; faces are normalised (``qu``, ``""`` blank)."""

    name: str
    rows: int
    cols: int
    dice: tuple[tuple[str, ...], ...]
    min_length: int = 3
    title: str = ""
    file: str | None = None  # the dice file as given (``--dice my.txt``); None: a built-in set

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

    @property
    def sha256(self) -> str:
        """SHA-256 of the normalised faces, die by die in order, as compact JSON
        (``[["a","a","e","e","g","n"],...]``, blank ``""``): the same dice give the same hash
        whatever file format, case, separators or comments they were written with."""
        text = json.dumps([list(d) for d in self.dice], ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    @property
    def label(self) -> str:
        """How reports name the set: ``new dice``, or ``mydice.txt dice (sha256 1a2b3c4d)``."""
        if self.file is None:
            return f"{self.name} dice"
        return f"{os.path.basename(self.file)} dice (sha256 {self.sha256[:8]})"

    def record(self) -> dict[str, Any]:
        """The set as a run records it (:func:`dice_from_record` gives it back)."""
        return {
            "name": self.name,
            "title": self.title,
            "file": self.file,
            "shape": format_shape(self.rows, self.cols),
            "faces": [list(d) for d in self.dice],
            "sha256": self.sha256,
        }

    def face_counts(self) -> Counter[str]:
        """How many faces of the whole set show each face (blank ``""``)."""
        return Counter(f for die in self.dice for f in die)

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


def dice_from_record(record: Any) -> DiceSet:
    """The dice set a run recorded (:meth:`DiceSet.record`); a BoggleError when the record is
    not one or its faces do not give its hash."""
    try:
        rows, cols = (int(x) for x in str(record["shape"]).split("x"))
        dice = tuple(tuple(str(f) for f in die) for die in record["faces"])
        out = DiceSet(
            str(record["name"]),
            rows,
            cols,
            dice,
            3 if rows * cols <= 16 else 4,
            str(record.get("title") or record["name"]),
            file=record.get("file"),
        )
        sha = str(record["sha256"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise BoggleError(f"the recorded dice set is not readable ({type(exc).__name__}: {exc})") from None
    if out.sha256 != sha:
        raise BoggleError(f"the recorded dice of {out.name!r} do not give their recorded sha256")
    return out
