"""Records in chunks, parsed into boards (:class:`BoardParser`) or rejects (:class:`Reject`), and
the rejects file's header."""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Iterator, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from pipeline.boards import (
    MAX_CELLS,
    Board,
    check_cells,
    format_shape,
    parse_algs4,
    parse_compact,
    parse_grid,
)
from pipeline.boards.ingest._files import InputDigest
from pipeline.boards.ingest._records import Record, read_records
from pipeline.errors import QUOTE_LIMIT, BoardError, BoggleError
from pipeline.lexicon.trie import Alphabet

# MAX_LINE_BYTES, MAX_INFLATE_RATIO and INFLATE_FLOOR (pipeline.io) bound every text input
# A chunk's records are held together until parsed: chunk_size x MAX_LINE_BYTES could reach
# gigabytes, so a chunk holding more board text than this is refused (lower chunk_size).
MAX_CHUNK_TEXT = 256 << 20
# why a board of another shape is a reject, and how to keep it
SHAPE_HINT = " (the run's shape; [boards] mixed_shapes = true keeps every shape)"


@dataclass(frozen=True)
class Reject:
    source: str
    line: int
    raw: str
    reason: str

    def row(self) -> list[str]:
        return [self.source, str(self.line), self.raw, self.reason]


@dataclass
class BoardGroup:
    """Valid boards of one shape from a chunk: ``index`` is each board's position among the
    chunk's valid boards (so board_id = first id of the chunk + index)."""

    rows: int
    cols: int
    boards: np.ndarray  # int8 [k, rows*cols]
    index: np.ndarray  # int64 [k]
    source: np.ndarray  # int32 [k], into IngestChunk.sources


@dataclass
class IngestChunk:
    chunk: int
    n_input: int
    groups: list[BoardGroup] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    rejects: list[Reject] = field(default_factory=list)

    @property
    def n_valid(self) -> int:
        return sum(len(g.index) for g in self.groups)


# ---------------------------------------------------------------- files


# Control characters (C0 but the newline that joins a grid's lines, DEL, C1) and the backslash
# are written as Python escapes in a rejects row, so a raw ESC or NUL from an input never reaches
# a terminal or a log, and ``\x1b`` in the file always means the byte, never the four characters
_ESCAPES = {c: f"\\x{c:02x}" for c in [*range(0x20), *range(0x7F, 0xA0)] if c != 0x0A}
_ESCAPES.update({ord("\\"): "\\\\", ord("\r"): "\\r", ord("\t"): "\\t"})


def escape_controls(text: str) -> str:
    r"""``text`` with control characters but newlines as escapes (``\x1b``, ``\t``...) and ``\``
    as ``\\``.

    >>> escape_controls("ab\x1b[2Jc\\d")
    'ab\\x1b[2Jc\\\\d'
    """
    return text.translate(_ESCAPES)


def _clip(raw: str) -> str:
    """The raw text a rejects row keeps: enough to find the record (its line is recorded too),
    never a whole 10 MB line, and no control characters (escaped)."""
    if len(raw) > QUOTE_LIMIT:
        return f"{escape_controls(raw[:QUOTE_LIMIT])}... ({len(raw):,} characters)"
    return escape_controls(raw)


def iter_records(
    files: Sequence[str], column: str = "board", digests: MutableMapping[str, InputDigest] | None = None
) -> Iterator[Record]:
    for path in files:
        yield from read_records(path, column, digests)


def iter_chunks(records: Iterable[Record], chunk_size: int) -> Iterator[list[Record]]:
    """Group records into lists of ``chunk_size`` (the last may be shorter; never empty). A
    chunk holding more than MAX_CHUNK_TEXT characters of board text is refused (BoardError)."""
    block: list[Record] = []
    text = 0
    for rec in records:
        block.append(rec)
        text += len(rec.raw)
        if text > MAX_CHUNK_TEXT:
            raise BoardError(
                f"a chunk of {len(block):,} records reaches more than {MAX_CHUNK_TEXT >> 20} MiB of board "
                "text; lower [boards] chunk_size",
                source=rec.source,
                line=rec.line,
            )
        if len(block) >= chunk_size:
            yield block
            block = []
            text = 0
    if block:
        yield block


# ---------------------------------------------------------------- parsing


class BoardParser:
    """Parse records into boards encoded for ``alphabet``; bad records become rejects.

    Compact rows of plain letters take a vectorised path (a byte lookup table); everything
    else goes through :mod:`pipeline.boards` parsers, which also word the reasons.
    """

    def __init__(self, alphabet: Alphabet, shape: tuple[int, int] | None = None):
        self.alphabet = alphabet
        self.shape = shape
        lut = np.full(256, -2, dtype=np.int16)  # -2: not on the fast path
        for ch in range(256):
            c = chr(ch)
            if c == ".":
                lut[ch] = -1
            elif c.isascii() and c.isalpha():
                face = "qu" if c.lower() == "q" else c.lower()
                if face in alphabet.index:
                    lut[ch] = alphabet.index[face]
        self._lut = lut

    def _fast_shape(self, n: int) -> tuple[int, int] | None:
        if self.shape is not None:
            return self.shape if self.shape[0] * self.shape[1] == n else None
        side = math.isqrt(n)
        return (side, side) if side * side == n and 0 < n <= MAX_CELLS else None

    def _slow(self, rec: Record) -> tuple[Board, np.ndarray]:
        if rec.notation == "grid":
            board = parse_grid(rec.raw, source=rec.source, first_line=rec.line)
        elif rec.notation == "algs4":
            board = parse_algs4(rec.raw, source=rec.source)
        else:
            try:
                board = parse_compact(rec.raw, self.shape)
            except BoardError as exc:
                if self.shape is None or "expected" not in exc.message:
                    raise
                raise BoardError(f"{exc.message}{SHAPE_HINT}") from None
        check_cells(*board.shape, what="board")
        if self.shape is not None and board.shape != self.shape:
            raise BoardError(
                f"board is {format_shape(*board.shape)}, expected {format_shape(*self.shape)}{SHAPE_HINT}"
            )
        index = self.alphabet.index
        for k, face in enumerate(board.faces):
            if face and face not in index:
                raise BoardError(
                    f"face {face!r} (cell {k + 1}) is not in the run's alphabet "
                    f"{self.alphabet.describe()}; add it to [boards] faces"
                )
        return board, self.alphabet.encode(board.faces)

    def parse(self, chunk: int, records: Sequence[Record]) -> IngestChunk:
        """Parse one chunk of records (in order) into shape groups and rejects."""
        out = IngestChunk(chunk, len(records))
        source_ids: dict[str, int] = {}
        # per record: (shape, codes) for a valid board, or None
        parsed: list[tuple[tuple[int, int], np.ndarray] | None] = [None] * len(records)
        fast: dict[int, list[int]] = {}
        for i, rec in enumerate(records):
            if rec.problem is None and rec.notation == "compact":
                raw = rec.raw.strip()
                if raw.isascii() and self._fast_shape(len(raw)) is not None:
                    fast.setdefault(len(raw), []).append(i)
        for n, idx in fast.items():
            blob = "".join(records[i].raw.strip() for i in idx).encode("ascii")
            codes = self._lut[np.frombuffer(blob, dtype=np.uint8)].reshape(len(idx), n)
            ok = (codes >= -1).all(axis=1)
            shape = self._fast_shape(n)
            assert shape is not None
            for k in np.flatnonzero(ok):
                parsed[idx[k]] = (shape, codes[k].astype(np.int8))
        for i, rec in enumerate(records):
            if parsed[i] is not None:
                continue
            reason = rec.problem
            if reason is None:
                try:
                    board, codes = self._slow(rec)
                    parsed[i] = (board.shape, codes)
                    continue
                except BoggleError as exc:
                    reason = exc.message
            out.rejects.append(Reject(rec.source, rec.line, _clip(rec.raw), reason))
        groups: dict[tuple[int, int], list[tuple[int, np.ndarray, int]]] = {}
        valid = 0
        for rec, item in zip(records, parsed, strict=True):
            if item is None:
                continue
            sid = source_ids.setdefault(rec.source, len(source_ids))
            groups.setdefault(item[0], []).append((valid, item[1], sid))
            valid += 1
        out.sources = list(source_ids)
        for (rows, cols), items in groups.items():
            out.groups.append(
                BoardGroup(
                    rows,
                    cols,
                    np.stack([c for _, c, _ in items]).astype(np.int8),
                    np.array([v for v, _, _ in items], dtype=np.int64),
                    np.array([s for _, _, s in items], dtype=np.int32),
                )
            )
        return out


def iter_ingest_chunks(
    files: Sequence[str],
    alphabet: Alphabet,
    chunk_size: int,
    *,
    shape: tuple[int, int] | None = None,
    column: str = "board",
    digests: MutableMapping[str, InputDigest] | None = None,
) -> Iterator[IngestChunk]:
    """Every chunk of an ingest run, parsed, in input order. Each input read to its end is
    recorded in ``digests`` (path -> :class:`InputDigest`), for :func:`check_unchanged`."""
    parser = BoardParser(alphabet, shape)
    for k, block in enumerate(iter_chunks(iter_records(files, column, digests), chunk_size)):
        yield parser.parse(k, block)


REJECT_FIELDS = ("source", "line", "raw", "reason")  # the columns of a run's rejects file


def write_rejects_header(fh: IO[str]) -> Any:
    """A csv writer on ``fh`` with the rejects header written."""
    writer = csv.writer(fh)
    writer.writerow(REJECT_FIELDS)
    return writer
