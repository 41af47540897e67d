"""Boards: a grid of face strings, its shape and its notations.

A face is a non-empty string of letters (``a``, ``qu``, ``th``, ``·l``) or ``""`` for a blank
(blocked) cell. Faces are stored case-folded and NFC-normalised.

Notations (format -> parse round-trips exactly):

* **compact**: row-major; a face of one letter is that letter, a face of several letters is
  written in brackets (``[qu]``, ``[th]``, ``[in]``), a blank is ``.``, and a plain Q is
  ``[q]``. Every board string the package writes (``solve``, the Parquet ``board`` column,
  ``select``, ``generate``) is in this form. Read, an inline ``q`` is also the Qu cell: the
  field's 16-letter notation (``perslatgsineters``, ``q`` for Qu) is accepted as it is, and so
  are runs of schema 5, which wrote Qu as ``q``. The shape is inferred for square boards, given
  as ``RxC`` otherwise. Example: ``pers[qu]atgsineters``.
* **grid**: one row a line, faces separated by spaces, ``.`` for a blank. Faces are literal.
* **algs4**: first line ``ROWS COLS``, then ROWS x COLS tokens; ``Qu`` and ``Q`` are the Qu cell.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.errors import BoardError, quote
from pipeline.lexicon.trie import BLANK, QU, is_face_char, normalise_text

# The most cells a board of a batch run (generated or ingested) may have: 100x100, the largest
# board the benches solve. A run allocates rows x cols bytes a board before solving any, so
# without a cap a typo like 100000x100000 fails deep inside numpy instead of in one line.
MAX_CELLS = 10_000
BLANK_TOKEN = "."


def check_face(face: str, where: str) -> str:
    """Return the normalised face or raise a BoardError naming ``where``."""
    if face in (BLANK, BLANK_TOKEN):
        return BLANK
    norm = normalise_text(face)
    bad = [ch for ch in norm if not is_face_char(ch)]
    if bad:
        raise BoardError(f"{where}: unknown face {quote(face)} (faces are letters; '.' is a blank)")
    return norm


@dataclass(frozen=True)
class Board:
    """An R x C grid of faces, row-major."""

    rows: int
    cols: int
    faces: tuple[str, ...]

    def __post_init__(self) -> None:
        if self.rows < 1 or self.cols < 1:
            raise BoardError(f"board shape {self.rows}x{self.cols}: rows and cols must be >= 1")
        if len(self.faces) != self.rows * self.cols:
            raise BoardError(
                f"board has {len(self.faces)} faces, expected {self.rows * self.cols} "
                f"for shape {self.rows}x{self.cols}"
            )

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.cols)

    @property
    def n_cells(self) -> int:
        return self.rows * self.cols

    def face(self, r: int, c: int) -> str:
        return self.faces[r * self.cols + c]

    def grid(self) -> list[list[str]]:
        return [list(self.faces[r * self.cols : (r + 1) * self.cols]) for r in range(self.rows)]

    def __str__(self) -> str:
        return format_compact(self)


# ---------------------------------------------------------------- shapes


def parse_shape(text: str) -> tuple[int, int]:
    """Parse ``RxC`` (also ``R x C``, ``RXC``) into (rows, cols)."""
    parts = text.lower().replace(" ", "").split("x")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise BoardError(f"shape {text!r}: expected RxC, e.g. 4x4 or 3x5")
    rows, cols = int(parts[0]), int(parts[1])
    if rows < 1 or cols < 1:
        raise BoardError(f"shape {text!r}: rows and cols must be >= 1")
    return rows, cols


def format_shape(rows: int, cols: int) -> str:
    return f"{rows}x{cols}"


def check_cells(rows: int, cols: int, what: str = "") -> None:
    """BoardError unless a ``rows`` x ``cols`` board fits a batch run (MAX_CELLS); ``what``
    starts the message (``"board"``)."""
    if rows * cols > MAX_CELLS:
        shape = f"{what} {format_shape(rows, cols)}".strip()
        raise BoardError(f"{shape} has {rows * cols:,} cells; at most {MAX_CELLS:,} (100x100)")


# ---------------------------------------------------------------- compact


def _compact_tokens(text: str) -> Iterator[tuple[int, str]]:
    """Yield (position, raw face) for a compact string, handling bracketed faces."""
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "[":
            end = text.find("]", i + 1)
            if end < 0:
                raise BoardError(f"position {i + 1}: '[' without a closing ']'")
            inner = text[i + 1 : end]
            if not inner:
                raise BoardError(f"position {i + 1}: empty face '[]'")
            yield i + 1, inner
            i = end + 1
        else:
            yield i + 1, (QU if ch in ("q", "Q") else ch)
            i += 1


def parse_compact(text: str, shape: tuple[int, int] | None = None) -> Board:
    """Parse a compact board string.

    >>> parse_compact("qaaa").faces
    ('qu', 'a', 'a', 'a')
    """
    stripped = unicodedata.normalize("NFC", text.strip())
    if not stripped:
        raise BoardError("empty board")
    faces: list[str] = []
    for pos, raw in _compact_tokens(stripped):
        if raw == BLANK_TOKEN:
            faces.append(BLANK)
        else:
            face = check_face(raw, f"position {pos}")
            if face == BLANK:
                raise BoardError(f"position {pos}: empty face")
            faces.append(face)
    n = len(faces)
    if shape is None:
        side = math.isqrt(n)
        if side * side != n:
            raise BoardError(
                f"board {quote(stripped)} has {n} faces, not a square number; give the shape as RxC"
            )
        shape = (side, side)
    rows, cols = shape
    if rows * cols != n:
        raise BoardError(f"board {quote(stripped)} has {n} faces, expected {rows * cols} for {rows}x{cols}")
    return Board(rows, cols, tuple(faces))


def _compact_face(face: str) -> str:
    if face == BLANK:
        return BLANK_TOKEN
    # one letter inline; several (qu too) or a plain q (an inline q reads as Qu) in brackets
    if len(face) == 1 and face not in ("q", "[", "]", BLANK_TOKEN):
        return face
    return f"[{face}]"


def format_compact(board: Board) -> str:
    """The compact string (without the shape)."""
    return "".join(_compact_face(f) for f in board.faces)


# ---------------------------------------------------------------- grid text


def parse_grid(text: str, *, source: str | None = None, first_line: int = 1) -> Board:
    """Parse grid text: one row a line, faces separated by whitespace, '.' for a blank."""
    rows: list[list[str]] = []
    width = None
    for offset, line in enumerate(text.splitlines()):
        if not line.strip():
            continue
        lineno = first_line + offset
        row = []
        for k, tok in enumerate(line.split(), start=1):
            try:
                row.append(check_face(tok, f"line {lineno}, token {k}"))
            except BoardError as exc:
                raise BoardError(exc.message, source=source) from None
        if width is None:
            width = len(row)
        elif len(row) != width:
            raise BoardError(
                f"line {lineno}: expected {width} faces like the first row, found {len(row)}",
                source=source,
            )
        rows.append(row)
    if not rows or width is None:
        raise BoardError("empty board", source=source)
    return Board(len(rows), width, tuple(f for row in rows for f in row))


def format_grid(board: Board) -> str:
    return "\n".join(" ".join(f if f != BLANK else BLANK_TOKEN for f in row) for row in board.grid())


# ---------------------------------------------------------------- algs4


def parse_algs4(text: str, *, source: str | None = None) -> Board:
    """Parse the algs4 board format: ``ROWS COLS`` then the tokens; ``Qu``/``Q`` = Qu."""
    lines = text.splitlines()
    header_idx = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if header_idx is None:
        raise BoardError("empty board file", source=source)
    header = lines[header_idx].split()
    if len(header) != 2 or not all(h.isdigit() for h in header):
        raise BoardError(
            f"line {header_idx + 1}: expected 'ROWS COLS', found {quote(lines[header_idx].strip())}",
            source=source,
        )
    rows, cols = int(header[0]), int(header[1])
    if rows < 1 or cols < 1:
        raise BoardError(f"line {header_idx + 1}: rows and cols must be >= 1", source=source)
    faces: list[str] = []
    for i in range(header_idx + 1, len(lines)):
        for k, tok in enumerate(lines[i].split(), start=1):
            if len(faces) == rows * cols:
                raise BoardError(
                    f"line {i + 1}, token {k}: {quote(tok)} after the {rows * cols} faces of a "
                    f"{rows}x{cols} board",
                    source=source,
                )
            low = tok.casefold()
            try:
                faces.append(QU if low in ("q", "qu") else check_face(tok, f"line {i + 1}, token {k}"))
            except BoardError as exc:
                raise BoardError(exc.message, source=source) from None
    if len(faces) != rows * cols:
        raise BoardError(
            f"expected {rows * cols} faces for a {rows}x{cols} board, found {len(faces)}",
            source=source,
        )
    return Board(rows, cols, tuple(faces))


def format_algs4(board: Board) -> str:
    """The algs4 format. Faces are upper-cased (``Qu`` for the Qu cell); blanks are '.'."""
    if "q" in board.faces:
        raise BoardError("a plain Q face cannot be written in the algs4 format (Q means Qu there)")

    def tok(f: str) -> str:
        return BLANK_TOKEN if f == BLANK else f[:1].upper() + f[1:]

    body = "\n".join(" ".join(tok(f) for f in row) for row in board.grid())
    return f"{board.rows} {board.cols}\n{body}"


# ---------------------------------------------------------------- files


def parse_board_text(
    text: str, *, source: str | None = None, shape: tuple[int, int] | None = None
) -> list[Board]:
    """Parse a text holding boards in any notation, detected from the content.

    * first non-empty line ``ROWS COLS`` -> one algs4 board;
    * lines with spaces -> grid boards, separated by blank lines;
    * otherwise one compact board a line.
    """
    lines = text.splitlines()
    nonempty = [(i, ln) for i, ln in enumerate(lines, start=1) if ln.strip()]
    if not nonempty:
        raise BoardError("no boards found", source=source)
    first = nonempty[0][1].split()
    if len(first) == 2 and all(t.isdigit() for t in first):
        return [parse_algs4(text, source=source)]
    if any(len(ln.split()) > 1 for _, ln in nonempty):
        boards = []
        block: list[str] = []
        start = 1
        for i, ln in enumerate([*lines, ""], start=1):
            if ln.strip():
                if not block:
                    start = i
                block.append(ln)
            elif block:
                boards.append(parse_grid("\n".join(block), source=source, first_line=start))
                block = []
        return boards
    out = []
    for i, ln in nonempty:
        try:
            out.append(parse_compact(ln, shape))
        except BoardError as exc:
            raise BoardError(exc.message, source=source, line=i) from None
    return out


def faces_of(boards: Iterable[Board]) -> set[str]:
    return {f for b in boards for f in b.faces if f != BLANK}


def compact_strings(boards: np.ndarray, faces: Sequence[str]) -> Any:
    """Encoded boards (int8 [n, cells], blank -1) -> an Arrow string array in compact notation."""
    import pyarrow as pa

    tokens = [format_compact(Board(1, 1, (f,))) for f in faces]
    n, cells = boards.shape
    blank = format_compact(Board(1, 1, (BLANK,)))
    table = [t.encode("utf-8") for t in (blank, *tokens)]  # index 0 is the blank (-1 + 1)
    index = boards.astype(np.int16) + 1
    # straight from buffers: pa.array() on numpy input imports pandas (~25 MB a worker)
    if all(len(t) == 1 for t in table):
        lut = np.frombuffer(b"".join(table), dtype=np.uint8)
        codes = np.ascontiguousarray(lut[index])
        offsets = np.arange(n + 1, dtype=np.int32) * cells
        return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(codes)])
    # tokens of several bytes ([qu], a non-ASCII letter): each cell's bytes from a padded table
    width = max(len(t) for t in table)
    padded = np.zeros((len(table), width), dtype=np.uint8)
    lengths = np.array([len(t) for t in table], dtype=np.int64)
    for i, t in enumerate(table):
        padded[i, : len(t)] = np.frombuffer(t, dtype=np.uint8)
    cell_bytes = padded[index]  # [n, cells, width]
    keep = np.arange(width) < lengths[index][..., None]
    data = np.ascontiguousarray(cell_bytes[keep])
    # int32 offsets: a chunk holds far less than 2 GB of board text (its cells are capped)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(lengths[index].sum(axis=1), out=offsets[1:])
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
