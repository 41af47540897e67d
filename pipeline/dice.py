"""Dice sets and board generators.

Named dice sets come from ``pipeline/data/dice_sets.json`` (pinned by a test to the project's
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

import hashlib
import json
import math
import os
import re
import stat
import tomllib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from importlib import resources
from typing import Any

import numpy as np

from pipeline.boards import BLANK, MAX_CELLS, QU, Board, format_shape, is_face_char, normalise_text
from pipeline.errors import BoggleError, ConfigError, quote
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


def _normalise_face(face: str) -> str:  # a face of the packaged sets and Tanglet packs
    return BLANK if face == "" else normalise_text(face)


@lru_cache(maxsize=1)
def _dice_json() -> dict[str, dict[str, Any]]:
    text = resources.files("pipeline").joinpath("data/dice_sets.json").read_text(encoding="utf-8")
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


def generator_alphabet(source: str | DiceSet, rows: int | None = None, cols: int | None = None) -> Alphabet:
    """The faces a generator can show (``rows``/``cols`` pick a Tanglet pack's dice)."""
    if isinstance(source, DiceSet):
        return Alphabet.from_faces(source.faces)
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
    source: str | DiceSet,
    alphabet: Alphabet,
    rng: np.random.Generator,
    count: int,
    rows: int = 4,
    cols: int = 4,
) -> np.ndarray:
    """``count`` boards from a dice set (a name, a file, or the set itself), ``uniform`` or
    ``english``: int8 [count, rows*cols]."""
    if source == "uniform":
        return roll_letters(alphabet, rng, count, rows * cols)
    if source == "english":
        return roll_letters(alphabet, rng, count, rows * cols, ENGLISH_FREQUENCIES)
    dice = source if isinstance(source, DiceSet) else load_dice_set(source, rows, cols)
    if (dice.rows, dice.cols) != (rows, cols):
        raise BoggleError(f"dice set {source!r} is for {dice.rows}x{dice.cols} boards, not {rows}x{cols}")
    return roll_dice(dice, alphabet, rng, count)


# ---------------------------------------------------------------- dice files

DICE_FILE_SUFFIXES = (".txt", ".json", ".toml")
BLANK_TOKEN = "_"  # a blank face in a dice file
# a dice file of 10,000 dice (100x100) of six faces is about 130 kB: anything near this is no dice
# file (a word list, a binary), refused before it is read whole
MAX_DICE_FILE_BYTES = 1 << 20
# a die written as one run of letters (``aaeegn``) is one face: said so rather than rolled
_RUN_TOGETHER = 4
_SEPARATORS = re.compile(r"[\s,]+")


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


def read_dice_file(path: str, rows: int | None = None, cols: int | None = None) -> DiceSet:
    """The dice of a file (text, ``.json`` or ``.toml``), for ``rows`` x ``cols`` boards or,
    when not given, the square board the dice fill (a JSON/TOML ``size`` says it too).

    Raises ConfigError ``FILE:LINE: problem`` (exit 2): a missing or unreadable file, a face
    that is not letters, an empty die, dice with different numbers of faces, or a die count
    that does not fill the board.

    >>> read_dice_file("my.txt").dice[0]  # doctest: +SKIP
    ('a', 'a', 'e', 'e', 'g', 'n')
    """
    text = _read_text(path)
    suffix = os.path.splitext(path)[1].lower()
    if suffix in (".json", ".toml"):
        entries, size = _structured_dice(text, path, suffix)
    else:
        entries, size = _text_dice(text, path), None
    if not entries:
        raise ConfigError(
            "no dice in the file (one die a line, faces separated by spaces or commas)", source=path
        )
    width = len(entries[0][1])
    for n, (line, faces) in enumerate(entries, 1):
        if len(faces) != width:
            raise ConfigError(
                f"die {n} has {len(faces)} faces, die 1 has {width}: every die needs the same number "
                "(a roll picks a face of each die uniformly)",
                source=path,
                line=line,
            )
    rows, cols = _fit_shape(entries, size, rows, cols, path)
    dice = tuple(faces for _, faces in entries)
    return DiceSet(path, rows, cols, dice, 3 if rows * cols <= 16 else 4, os.path.basename(path), file=path)


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


def format_dice_text(dice: DiceSet) -> str:
    """The set in the text format of a dice file (one die a line, blank ``_``): what
    :func:`read_dice_file` reads back as the same dice (same sha256)."""
    shape = format_shape(dice.rows, dice.cols)
    title = " ".join((dice.title or dice.name).split())  # one comment line, whatever the file name holds
    head = f"# {title}: {len(dice.dice)} dice for {shape}, sha256 {dice.sha256}\n"
    return head + "".join(" ".join(f or BLANK_TOKEN for f in die) + "\n" for die in dice.dice)


def _read_text(path: str) -> str:
    real = os.path.expanduser(path)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        raise ConfigError("dice file not found", source=path) from None
    except OSError as exc:
        raise ConfigError(f"cannot read the dice file ({exc.strerror})", source=path) from None
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError("not a regular file (a dice file is text, .json or .toml)", source=path)
    try:
        with open(real, "rb") as fh:
            data = fh.read(MAX_DICE_FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read the dice file ({exc.strerror})", source=path) from None
    if len(data) > MAX_DICE_FILE_BYTES:
        raise ConfigError(f"larger than {MAX_DICE_FILE_BYTES:,} bytes: not a dice file", source=path)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError("not UTF-8 text", source=path, line=line) from None


def _face(token: Any, die: int, path: str, line: int | None, *, empty_is_blank: bool) -> str:
    """One face of a file, normalised (``Qu`` -> ``qu``); ``_`` is a blank."""
    if not isinstance(token, str):
        raise ConfigError(f"die {die}: face {token!r} is not a string of letters", source=path, line=line)
    if token == BLANK_TOKEN or (empty_is_blank and token == ""):
        return BLANK
    norm = normalise_text(token.strip())
    if not norm or not all(is_face_char(ch) for ch in norm):
        raise ConfigError(
            f"die {die}: face {quote(token)} is not letters (a blank face is written {BLANK_TOKEN})",
            source=path,
            line=line,
        )
    return norm


def _die(
    tokens: list[Any], die: int, path: str, line: int | None, *, empty_is_blank: bool
) -> tuple[str, ...]:
    if not tokens:
        raise ConfigError(f"die {die} is empty (no faces)", source=path, line=line)
    faces = tuple(_face(t, die, path, line, empty_is_blank=empty_is_blank) for t in tokens)
    if len(faces) == 1 and len(faces[0]) >= _RUN_TOGETHER:
        raise ConfigError(
            f"die {die} is one face {faces[0]!r}; separate the faces with spaces or commas "
            f"({' '.join(faces[0])})",
            source=path,
            line=line,
        )
    return faces


def _text_dice(text: str, path: str) -> list[tuple[int | None, tuple[str, ...]]]:
    out: list[tuple[int | None, tuple[str, ...]]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        body = raw.split("#", 1)[0].strip()
        if not body:
            continue
        tokens = [t for t in _SEPARATORS.split(body) if t]
        out.append((number, _die(tokens, len(out) + 1, path, number, empty_is_blank=False)))
    return out


def _structured_dice(
    text: str, path: str, suffix: str
) -> tuple[list[tuple[int | None, tuple[str, ...]]], int | None]:
    """The dice of a JSON (``{"size": 4, "dice": [...]}``) or TOML (``dice = [...]``) file."""
    kind = suffix[1:].upper()
    try:
        doc = json.loads(text) if suffix == ".json" else tomllib.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"not valid JSON: {exc.msg}", source=path, line=exc.lineno) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", source=path) from None
    example = (
        '{"size": 4, "dice": [["a", "a", "e", "e", "g", "n"], ...]}'
        if kind == "JSON"
        else ('dice = [["a", "a", "e", "e", "g", "n"], ...]')
    )
    if not isinstance(doc, dict) or "dice" not in doc:
        raise ConfigError(f'a {kind} dice file holds a list of dice under "dice": {example}', source=path)
    dice, size = doc["dice"], doc.get("size")
    if not isinstance(dice, list) or not all(isinstance(d, list) for d in dice):
        raise ConfigError(f'"dice" must be a list of dice, each a list of faces: {example}', source=path)
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
        raise ConfigError(
            f'"size" must be a whole number >= 1 (the board is size x size), got {size!r}', source=path
        )
    lines: list[int | None] = list(_die_lines(text, comments=kind == "TOML"))
    if len(lines) != len(dice):  # a layout the scan does not follow: name the die, not a line
        lines = [None] * len(dice)
    out = [
        (line, _die(d, n, path, line, empty_is_blank=True))
        for n, (line, d) in enumerate(zip(lines, dice, strict=True), 1)
    ]
    return out, size


def _die_lines(text: str, *, comments: bool) -> list[int]:
    """The line of each ``[`` that opens at bracket depth 2 (a die of ``[[...], ...]``),
    strings (and TOML comments) skipped."""
    out: list[int] = []
    depth, line, i, quote_char = 0, 1, 0, ""
    while i < len(text):
        ch = text[i]
        if ch == "\n":
            line += 1
        if quote_char:
            if ch == "\\" and quote_char == '"':
                i += 1
            elif ch == quote_char:
                quote_char = ""
        elif ch in "\"'":
            quote_char = ch
        elif ch == "#" and comments:
            while i + 1 < len(text) and text[i + 1] != "\n":
                i += 1
        elif ch == "[":
            depth += 1
            if depth == 2:
                out.append(line)
        elif ch == "]":
            depth -= 1
        i += 1
    return out


def _fit_shape(
    entries: list[tuple[int | None, tuple[str, ...]]],
    size: int | None,
    rows: int | None,
    cols: int | None,
    path: str,
) -> tuple[int, int]:
    """The board the dice fill: ``rows`` x ``cols`` when given, else ``size`` x ``size``, else
    the square of the die count; one die a cell."""
    n = len(entries)
    last = entries[-1][0]
    if rows is None or cols is None:
        if size is not None:
            rows = cols = size
        else:
            side = math.isqrt(n)
            if side * side != n:
                raise ConfigError(
                    f"{n} dice fill no square board; give the shape (--shape or [boards] shape, R x C = {n})",
                    source=path,
                    line=last,
                )
            rows = cols = side
    cells = rows * cols
    if cells > MAX_CELLS:
        raise ConfigError(
            f"a {format_shape(rows, cols)} board has {cells:,} cells; at most {MAX_CELLS:,}", source=path
        )
    if n != cells:
        line = entries[cells][0] if n > cells else last
        raise ConfigError(
            f"{n} dice for a {format_shape(rows, cols)} board: it needs {cells} (one die a cell)",
            source=path,
            line=line,
        )
    if size is not None and (rows, cols) != (size, size):
        raise ConfigError(f'"size" = {size} says {size}x{size}, not {format_shape(rows, cols)}', source=path)
    return rows, cols
