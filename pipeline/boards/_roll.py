"""Rolling boards: the named dice sets and generators a ``--dice`` value names (and the board
shape it implies), rolling a set of dice onto boards, and letters drawn uniformly or with English
frequencies.

Named dice sets come from ``pipeline/boards/dice_sets.json`` (pinned by a test to the project's
cross-checked copy). Rolling a board: shuffle the dice over the cells, then pick a face of each
die uniformly. Other generators: ``uniform`` (letters a-z, q = Qu) and ``english`` (letters drawn
with English letter frequencies, q = Qu), and ``tanglet:<lang>`` (a Tanglet pack's dice: the
first 16 for 4x4, the next 25 for 5x5).

A designer's own dice come from a file (:func:`read_dice_file`; the format is in
docs/guides/dice.md): text, one die a line (``a a e e g n`` or ``H,I,M,N,Qu,U``, ``_`` a blank
face, ``#`` comments), or JSON (``{"size": 4, "dice": [[...], ...]}``, an entry of
``dice_sets.json``) or TOML (``dice = [[...], ...]``), chosen by the extension. Where ``--dice``
takes a name or a file, :func:`is_dice_file` tells them apart. A run records the faces and
their SHA-256 (:meth:`DiceSet.record`), so its dice are rebuilt without the file.

Generators return encoded boards (int8 [n, cells], indices into an :class:`Alphabet`), so a
million boards cost 16 MB and no Python objects.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from pipeline.boards._board import check_cells, parse_shape
from pipeline.boards._dice import DiceSet
from pipeline.boards._dice_files import DICE_FILE_SUFFIXES, read_dice_file
from pipeline.boards._place import Placement, place_dice
from pipeline.errors import BoggleError, ConfigError
from pipeline.lexicon import TANGLET_PREFIX, tanglet_pack
from pipeline.lexicon.trie import BLANK, QU, Alphabet, normalise_text

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


def _normalise_face(face: str) -> str:  # a face of the packaged sets and Tanglet packs
    return BLANK if face == "" else normalise_text(face)


@lru_cache(maxsize=1)
def _dice_json() -> dict[str, dict[str, Any]]:
    text = resources.files("pipeline.boards").joinpath("dice_sets.json").read_text(encoding="utf-8")
    data: dict[str, dict[str, Any]] = json.loads(text)
    return data


def dice_set_names() -> list[str]:
    return list(_dice_json())


def load_dice_set(name: str, rows: int | None = None, cols: int | None = None) -> DiceSet:
    """A named dice set (``new``, ``classic``...), ``tanglet:<lang>`` (16 dice for 4x4,
    25 for 5x5, chosen by ``rows``/``cols``; 4x4 by default) or a dice file
    (:func:`is_dice_file`, read by :func:`read_dice_file`)."""
    if is_dice_file(name):
        return read_dice_file(name, rows, cols)
    if name.startswith(TANGLET_PREFIX):
        return _tanglet_dice(name, rows or 4, cols or rows or 4)
    data = _dice_json()
    if name not in data:
        choices = ", ".join([*data, *GENERATORS, "tanglet:<lang>"])
        raise BoggleError(f"unknown dice set {name!r}; choose one of {choices}, or a dice file (a path)")
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


def generator_shape(dice: str, shape: str | None, where: str | None) -> tuple[int, int]:
    """The board shape for a generator: the dice set's, or ``shape`` (default 4x4) for the
    letter generators and Tanglet packs. ``where`` names the config file in errors; a shape of
    more than MAX_CELLS cells is refused."""
    wanted = parse_shape(shape) if shape else None
    if wanted is not None:
        try:
            check_cells(*wanted)
        except BoggleError as exc:
            raise ConfigError(f"[boards] shape: {exc.message}", source=where) from None
    if dice in GENERATORS:
        return wanted or (4, 4)
    if is_dice_file(dice):  # its own FILE:LINE errors; the shape: --shape, else the dice's square
        d = read_dice_file(dice, *(wanted or (None, None)))
        return d.rows, d.cols
    if dice.startswith(TANGLET_PREFIX):
        rows, cols = wanted or (4, 4)
        d = load_dice_set(dice, rows, cols)
        return d.rows, d.cols
    if dice not in dice_set_names():
        choices = ", ".join([*dice_set_names(), *GENERATORS, "tanglet:<lang>"])
        raise ConfigError(
            f"[boards] dice: unknown dice set {dice!r}; choose one of {choices}, or a dice file "
            "(a path: it contains / or ends in .txt, .json or .toml)",
            source=where,
        )
    d = load_dice_set(dice)
    if wanted is not None and wanted != (d.rows, d.cols):
        raise ConfigError(
            f"[boards] shape: dice set {dice!r} rolls {d.rows}x{d.cols} boards, not {wanted[0]}x{wanted[1]}",
            source=where,
        )
    return d.rows, d.cols


def generator_alphabet(source: str | DiceSet, rows: int | None = None, cols: int | None = None) -> Alphabet:
    """The faces a generator can show (``rows``/``cols`` pick a Tanglet pack's dice)."""
    if isinstance(source, DiceSet):
        return Alphabet.from_faces(source.faces)
    if source in GENERATORS:
        return Alphabet.english()
    return Alphabet.from_faces(load_dice_set(source, rows, cols).faces)


def roll_dice_layout(
    dice: DiceSet, rng: np.random.Generator, count: int, placement: Placement | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The draws behind :func:`roll_dice`: ``order[b, cell]`` is the die on that cell and
    ``face[b, cell]`` which of its faces shows (analysis reconstructs both from the seed).
    With a ``placement`` policy, the layout after it (:func:`pipeline.boards.place_dice`: the
    same draws first, then one more per cell; without one nothing more is drawn)."""
    n = len(dice.dice)
    order = np.argsort(rng.random((count, n)), axis=1)
    face = rng.integers(0, max(len(d) for d in dice.dice), size=(count, n))
    if placement is not None:
        return place_dice(placement, dice, order, face, rng)
    return order, face


def roll_dice(
    dice: DiceSet,
    alphabet: Alphabet,
    rng: np.random.Generator,
    count: int,
    placement: Placement | None = None,
) -> np.ndarray:
    """Roll ``count`` boards: shuffle the dice over the cells, then one face of each uniformly
    (then, with a ``placement`` policy, move what it says)."""
    table = dice.face_table(alphabet)
    order, face = roll_dice_layout(dice, rng, count, placement)
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
    source: str | DiceSet,
    alphabet: Alphabet,
    rng: np.random.Generator,
    count: int,
    rows: int = 4,
    cols: int = 4,
    placement: Placement | None = None,
) -> np.ndarray:
    """``count`` boards from a dice set (a name, a file, or the set itself), ``uniform`` or
    ``english``: int8 [count, rows*cols]. ``placement``: a policy for the dice (a letter
    generator, which rolls none, refuses one)."""
    if placement is not None and isinstance(source, str) and source in GENERATORS:
        raise BoggleError(f"placement {placement.text!r}: the {source} generator rolls no dice to place")
    if source == "uniform":
        return roll_letters(alphabet, rng, count, rows * cols)
    if source == "english":
        return roll_letters(alphabet, rng, count, rows * cols, ENGLISH_FREQUENCIES)
    return roll_dice(dice_set_for(source, rows, cols), alphabet, rng, count, placement)


def dice_set_for(source: str | DiceSet, rows: int, cols: int) -> DiceSet:
    """A dice set (a name, a file, or the set itself) for ``rows`` x ``cols`` boards; one for
    another shape is an error naming both."""
    dice = source if isinstance(source, DiceSet) else load_dice_set(source, rows, cols)
    if (dice.rows, dice.cols) != (rows, cols):
        raise BoggleError(f"dice set {source!r} is for {dice.rows}x{dice.cols} boards, not {rows}x{cols}")
    return dice


def is_dice_file(spec: str) -> bool:
    """Whether ``--dice``/``[boards] dice`` names a dice file rather than a built-in set: a
    value that contains ``/`` or ends in ``.txt``, ``.json`` or ``.toml`` is a file; else a
    built-in name (a dice set, ``uniform``, ``english``, ``tanglet:<lang>``) is the set, even
    where a file of that name exists; else any existing file is one."""
    if "/" in spec or spec.lower().endswith(DICE_FILE_SUFFIXES):
        return True
    if spec in GENERATORS or spec.startswith(TANGLET_PREFIX) or spec in _dice_json():
        return False
    return os.path.isfile(os.path.expanduser(spec))
