"""What the statistics count: each board's faces cell by cell, the cells' position classes, and
what makes a board bad (:class:`BadDefinition`) with the factors that may drive it.

These definitions are shared by the worker that solves a chunk (which records the statistics
with its part) and by the analysis (which merges them, and computes them for parts written
before statistics were recorded), so both count the same things.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pipeline.errors import BoggleError

BLANK_FACE = "(blank)"
POSITIONS = ("corner", "edge", "inner")
VOWELS = frozenset("aeiou")
RARE_LETTERS = frozenset("jkqxz")
QU = "qu"
MAX_VOWELS = 3
DEFAULT_BAD_WORDS = 50
DEAD_CELL = "board\ta dead cell"  # the driver every board has an answer to, whatever its shape
WHERE = {"corner": "on a corner", "edge": "on an edge", "inner": "on an inner cell"}


@dataclass(frozen=True)
class BadDefinition:
    """A board is bad when it has fewer than ``words`` words or fewer than ``score`` points
    (a criterion that is None is not used; at least one must be set).

    >>> BadDefinition().describe()
    'fewer than 50 words'
    """

    words: int | None = DEFAULT_BAD_WORDS
    score: int | None = None

    def __post_init__(self) -> None:
        if self.words is None and self.score is None:
            raise BoggleError("a bad board needs a definition: --bad-words N or --bad-score N")
        for name, v in (("--bad-words", self.words), ("--bad-score", self.score)):
            if v is not None and v < 1:
                raise BoggleError(f"{name} {v}: must be 1 or more (boards under it are bad)")

    @classmethod
    def from_options(cls, words: int | None, score: int | None) -> BadDefinition:
        """The CLI's ``--bad-words``/``--bad-score``: neither gives the default, ``--bad-score``
        alone replaces the word count, both together mean either."""
        if words is None and score is None:
            return cls()
        return cls(words, score)

    def describe(self) -> str:
        parts = []
        if self.words is not None:
            parts.append(f"fewer than {self.words:,} words")
        if self.score is not None:
            parts.append(f"fewer than {self.score:,} points")
        return " or ".join(parts)

    def mask(self, n_words: np.ndarray, score: np.ndarray) -> np.ndarray:
        bad = np.zeros(len(n_words), dtype=bool)
        if self.words is not None:
            bad |= np.asarray(n_words) < self.words
        if self.score is not None:
            bad |= np.asarray(score) < self.score
        return bad


def vowel_face(face: str) -> bool:
    """Whether a cell showing ``face`` counts as a vowel (Qu does not: its u only follows its q)."""
    return face != QU and face != BLANK_FACE and any(ch in VOWELS for ch in face)


def rare_face(face: str) -> bool:
    """Whether ``face`` holds a rare letter (j, k, q, x or z; Qu included)."""
    return face != BLANK_FACE and any(ch in RARE_LETTERS for ch in face)


def position_classes(rows: int, cols: int) -> np.ndarray:
    """Per cell (row-major) 0 = corner, 1 = edge (border, not a corner), 2 = inner."""
    r, c = np.divmod(np.arange(rows * cols), cols)
    border_r = (r == 0) | (r == rows - 1)
    border_c = (c == 0) | (c == cols - 1)
    return np.where(border_r & border_c, 0, np.where(border_r | border_c, 1, 2)).astype(np.int8)


def _char_face(ch: str) -> str:
    if ch == ".":
        return BLANK_FACE
    return "qu" if ch in ("q", "Q") else ch.lower()


def decode_boards(boards: Sequence[str], rows: int, cols: int) -> tuple[list[str], np.ndarray]:
    """Face list (sorted) and int16 codes [n, cells] of compact boards of one shape.

    Plain ASCII boards (one character a cell but the Qu cell's ``[qu]``, or ``q`` in a run of
    schema 5: the dice sets' usual case) are decoded as one byte buffer; boards with other
    bracketed or non-ASCII faces go through ``parse_compact``.
    """
    cells = rows * cols
    n = len(boards)
    # the Qu cell is [qu] (schema 6) or q (schema 5): one byte either way, as _char_face reads it
    joined = "".join(boards).replace("[qu]", "q")
    data = joined.encode("utf-8", errors="replace")
    if len(data) == n * cells and "[" not in joined:
        arr = np.frombuffer(data, dtype=np.uint8).reshape(n, cells) if n else np.zeros((0, cells), np.uint8)
        return _decode_bytes(arr)
    from pipeline.boards import BLANK, parse_compact

    parsed = [parse_compact(b, (rows, cols)).faces for b in boards]
    faces = sorted({BLANK_FACE if f == BLANK else f for p in parsed for f in p})
    index = {f: i for i, f in enumerate(faces)}
    codes = np.array(
        [[index[BLANK_FACE if f == BLANK else f] for f in p] for p in parsed], dtype=np.int16
    ).reshape(n, cells)
    return faces, codes


def _decode_bytes(arr: np.ndarray) -> tuple[list[str], np.ndarray]:
    present = np.flatnonzero(np.bincount(arr.ravel(), minlength=256))
    faces = sorted({_char_face(chr(b)) for b in present})
    index = {f: i for i, f in enumerate(faces)}
    lut = np.zeros(256, dtype=np.int16)
    for b in present:
        lut[b] = index[_char_face(chr(b))]
    return faces, lut[arr]


def decode_column(board: object, rows: int, cols: int) -> tuple[list[str], np.ndarray]:
    """:func:`decode_boards` of an Arrow string array, straight from its buffers where every
    board is ``rows * cols`` ASCII characters once its Qu cells are one (no Python string per
    board)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = board.combine_chunks() if isinstance(board, pa.ChunkedArray) else board
    assert isinstance(arr, pa.Array)
    cells = rows * cols
    n = len(arr)
    if arr.null_count == 0 and pa.types.is_string(arr.type) and n:
        # the Qu cell is [qu] (schema 6) or q (schema 5): one byte either way
        arr = pc.replace_substring(arr, "[qu]", "q")
        lengths = pc.binary_length(arr)
        if pc.all(pc.equal(lengths, cells)).as_py():
            offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32, count=n + 1, offset=arr.offset * 4)
            data = np.frombuffer(arr.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
            if not np.any(data >= 0x80) and not np.any(data == ord("[")):
                return _decode_bytes(data.reshape(n, cells))
    return decode_boards(arr.to_pylist(), rows, cols)
