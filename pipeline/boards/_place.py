"""Placing the dice by a stated policy: some faces (or dice) only on some cell positions (such
as ``"qu: corner, edge"``: Qu never on an inner cell).

A roll draws the dice's permutation over the cells, then a face index for each cell
(:func:`pipeline.boards.roll_dice_layout`). A policy is applied after those draws and never
changes them: on each board, every cell whose die shows a face the policy names (or holds a die
it names) and lies where the policy does not allow trades places, die and face together, with
a cell the policy allows that holds nothing it names, chosen at random (one more uniform draw
per cell, from the same stream, after the others). So

* the boards of a run without a policy are exactly what they were (nothing more is drawn);
* a board of a run with one differs from the same draws without it only where something had to
  move: a what-if of a placement change is paired like one of a dice change;
* with one subject (one die can show it, as the Qu of most sets), where it lands is uniform over
  the allowed cells and the rest of the board uniform given that: exactly the rolls that meet
  the policy, each as likely as before.

The positions are the report's (:func:`pipeline.stats.position_classes`): a *corner* is on
two borders, an *edge* on one, an *inner* cell on none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from pipeline.boards._dice import DiceSet
from pipeline.errors import BoggleError
from pipeline.lexicon.trie import normalise_text

POSITIONS = ("corner", "edge", "inner")
SYNTAX = "FACES: POSITIONS, e.g. 'qu: corner, edge' or 'qu, die 7: not inner'"
_DIE = re.compile(r"^die\s*(\d+)$")


@dataclass(frozen=True)
class Placement:
    """Where the named faces and dice may lie. ``faces``: normalised faces; ``dice``: dice
    numbered from 1, as the report numbers them; ``allowed``: positions, in POSITIONS order."""

    faces: tuple[str, ...]
    dice: tuple[int, ...]
    allowed: tuple[str, ...]

    @property
    def text(self) -> str:
        """The canonical spelling: the one a run records, whatever was written.

        >>> parse_placement("Qu: NOT inner").text
        'qu: corner, edge'
        """
        subjects = [*self.faces, *(f"die {d}" for d in self.dice)]
        return f"{', '.join(subjects)}: {', '.join(self.allowed)}"


def parse_placement(text: str) -> Placement:
    """``"qu: corner, edge"`` (the faces and dice named may lie on those positions only) or
    ``"qu: not inner"`` (anywhere but there). A BoggleError (exit 2) for anything else."""
    subjects, sep, where = text.partition(":")
    if not sep or not subjects.strip() or not where.strip():
        raise BoggleError(f"placement {text!r}: expected {SYNTAX}")
    words = where.replace(",", " ").lower().split()
    negate = words[:1] == ["not"]
    if negate:
        words = words[1:]
    unknown = [w for w in words if w not in POSITIONS]
    if unknown or not words:
        raise BoggleError(
            f"placement {text!r}: positions are {', '.join(POSITIONS)} (or 'not' and some of them), "
            f"not {' '.join(unknown) or 'nothing'}"
        )
    allowed = tuple(p for p in POSITIONS if (p in words) != negate)
    if not allowed:
        raise BoggleError(f"placement {text!r}: allows no position at all")
    faces: list[str] = []
    dice: list[int] = []
    for raw in subjects.split(","):
        item = " ".join(raw.lower().split())
        if m := _DIE.match(item):
            if int(m.group(1)) < 1:
                raise BoggleError(f"placement {text!r}: dice are numbered from 1")
            dice.append(int(m.group(1)))
        elif item and " " not in item:
            faces.append(normalise_text(item))
        else:
            raise BoggleError(f"placement {text!r}: {raw.strip()!r} is neither a face nor 'die N'")
    return Placement(tuple(sorted(set(faces))), tuple(sorted(set(dice))), allowed)


def position_codes(rows: int, cols: int) -> np.ndarray:
    """Per cell (row-major) the index into POSITIONS: 0 corner, 1 edge, 2 inner."""
    r, c = np.divmod(np.arange(rows * cols), cols)
    border_r = (r == 0) | (r == rows - 1)
    border_c = (c == 0) | (c == cols - 1)
    return np.where(border_r & border_c, 0, np.where(border_r | border_c, 1, 2)).astype(np.int8)


def _subject_table(p: Placement, dice: DiceSet) -> np.ndarray:
    """bool [n_dice, faces]: whether die d showing its face k is named by the policy."""
    width = max(len(d) for d in dice.dice)
    table = np.zeros((len(dice.dice), width), dtype=bool)
    for d, die in enumerate(dice.dice):
        for k, face in enumerate(die):
            table[d, k] = (d + 1) in p.dice or face in p.faces
    return table


def check_placement(p: Placement, dice: DiceSet) -> None:
    """A BoggleError (exit 2) for a policy these dice cannot follow: a die number past the set, a
    face no die has, or more dice that may show what it names than the cells it allows."""
    n = len(dice.dice)
    past = [d for d in p.dice if d > n]
    if past:
        raise BoggleError(f"placement {p.text!r}: no die {past[0]}; the set has {n} dice, numbered 1-{n}")
    missing = [f for f in p.faces if f not in dice.faces]
    if missing:
        raise BoggleError(f"placement {p.text!r}: no die has the face {missing[0]!r}")
    subjects = int(_subject_table(p, dice).any(axis=1).sum())
    cells = int(np.isin(position_codes(dice.rows, dice.cols), [POSITIONS.index(a) for a in p.allowed]).sum())
    if subjects > cells:
        raise BoggleError(
            f"placement {p.text!r}: {subjects} dice may show what it names, and a "
            f"{dice.rows}x{dice.cols} board has only {cells} such cells"
        )


def place_dice(
    p: Placement, dice: DiceSet, order: np.ndarray, face: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """The layout ``(order, face)`` with the policy applied (module docstring): new arrays, the
    draws left as they are. One uniform draw per cell is taken from ``rng``."""
    count, cells = order.shape
    priority = rng.random((count, cells))  # drawn for every board, so the stream stays aligned
    named = _subject_table(p, dice)[order, face]
    allowed = np.isin(position_codes(dice.rows, dice.cols), [POSITIONS.index(a) for a in p.allowed])
    wrong = named & ~allowed
    order, face = order.copy(), face.copy()
    if not wrong.any():
        return order, face
    free = ~named & allowed
    # the free allowed cells of each board in a random order: the k-th misplaced cell (in cell
    # order) trades places with the k-th of them
    targets = np.argsort(np.where(free, priority, 2.0), axis=1, kind="stable")
    rank = np.cumsum(wrong, axis=1) - 1
    b, c = np.nonzero(wrong)
    t = targets[b, rank[b, c]]
    if not free[b, t].all():  # check_placement rules this out
        raise BoggleError(f"placement {p.text!r}: a board has more to move than cells to take it")
    order[b, c], order[b, t] = order[b, t], order[b, c]
    face[b, c], face[b, t] = face[b, t], face[b, c]
    return order, face
