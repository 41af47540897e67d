"""Ingest: stream boards from files, in chunks, with every bad row kept as a reject.

Inputs, chosen by file name:

* ``*.csv``: a header row and a column of compact boards (``[boards] column``, default
  ``board``); the line is the line the record starts on.
* ``*.parquet`` / ``*.pq``: a string column of compact boards; the "line" is the row number.
* anything else is text (gzip is read transparently), its notation detected from the first
  board line: ``ROWS COLS`` starts algs4 boards (several may follow each other), a line of
  several faces starts grid boards (separated by blank lines), otherwise one compact board a
  line. Blank lines and lines starting with ``#`` are not records.

Each record becomes a board or a :class:`Reject` (source file, line, raw text, reason): a row
that does not parse, has the wrong shape, or shows a face outside the run's alphabet. Valid and
rejected records add up to the records read. Files are read line by line and handed on a chunk
at a time, so memory does not grow with the input.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import math
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from pipeline.boards import Board, format_shape, parse_algs4, parse_compact, parse_grid
from pipeline.errors import QUOTE_LIMIT, BoardError, BoggleError
from pipeline.trie import Alphabet

MAX_GRID_LINES = 1024
PARQUET_BATCH = 65_536
HASH_BLOCK = 1 << 20


@dataclass(frozen=True)
class Record:
    """One input record before parsing. ``problem`` is set when the reader already knows the
    record is bad (not UTF-8, a broken algs4 header...)."""

    source: str
    line: int
    raw: str
    notation: str  # "compact" | "grid" | "algs4"
    problem: str | None = None


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


def file_kind(path: str) -> str:
    """``csv``, ``parquet`` or ``text``, from the file name."""
    name = path.lower()
    if name.endswith(".csv"):
        return "csv"
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    return "text"


def check_input(path: str, column: str = "board") -> None:
    """Fail early (BoggleError, exit 2) on a file that cannot be ingested at all: missing,
    unreadable, not Parquet, or without the board column."""
    p = Path(path)
    if not p.is_file():
        raise BoggleError("input file not found" if not p.exists() else "not a file", source=path)
    kind = file_kind(path)
    if kind == "parquet":
        _parquet_column(path, column)
    elif kind == "csv":
        with _gzip_errors(path), _open_text(path) as fh:
            header = next(csv.reader(fh), None)
        if header is None:
            raise BoardError("empty CSV file (expected a header row)", source=path)
        if column not in header:
            raise BoardError(
                f"no {column!r} column (columns: {', '.join(header)}); set [boards] column",
                source=path,
                line=1,
            )


def fingerprint(path: str) -> dict[str, Any]:
    """Size and SHA-256 of an input file (recorded so a resumed run can tell it is unchanged)."""
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while block := fh.read(HASH_BLOCK):
            h.update(block)
            size += len(block)
    return {"file": path, "bytes": size, "sha256": h.hexdigest()}


def _open_binary(path: str) -> IO[bytes]:
    with open(path, "rb") as probe:
        gz = probe.read(2) == b"\x1f\x8b"
    fh: Any = gzip.open(path, "rb") if gz else open(path, "rb")  # noqa: SIM115 (returned)
    return fh


def _open_text(path: str) -> IO[str]:
    # surrogateescape: a bad byte only spoils its own record (reported), not the whole file
    return io.TextIOWrapper(_open_binary(path), encoding="utf-8-sig", errors="surrogateescape", newline="")


def _has_surrogates(text: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in text)


def _parquet_column(path: str, column: str) -> Any:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise BoardError(f"not a readable Parquet file ({exc})", source=path) from None
    schema = pf.schema_arrow
    if column not in schema.names:
        raise BoardError(
            f"no {column!r} column (columns: {', '.join(schema.names)}); set [boards] column", source=path
        )
    typ = schema.field(column).type
    if pa.types.is_dictionary(typ):
        typ = typ.value_type
    if not (pa.types.is_string(typ) or pa.types.is_large_string(typ)):
        raise BoardError(f"column {column!r} is {typ}, expected strings (compact boards)", source=path)
    return pf


# ---------------------------------------------------------------- readers


def read_records(path: str, column: str = "board") -> Iterator[Record]:
    """Stream the records of one input file."""
    kind = file_kind(path)
    with _gzip_errors(path):
        if kind == "csv":
            yield from _csv_records(path, column)
        elif kind == "parquet":
            yield from _parquet_records(path, column)
        else:
            yield from _text_records(path)


def _csv_records(path: str, column: str) -> Iterator[Record]:
    with _open_text(path) as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None or column not in header:
            check_input(path, column)  # raises the precise error
            return
        col = header.index(column)
        start = reader.line_num + 1
        for row in reader:
            line, start = start, reader.line_num + 1
            if not row:
                continue
            raw = row[col] if col < len(row) else ""
            problem = None
            if len(row) != len(header):
                problem = f"row has {len(row)} fields, the header has {len(header)}"
            elif _has_surrogates(raw):
                problem = "not UTF-8 text"
            yield Record(path, line, _printable(raw), "compact", problem)


def _parquet_records(path: str, column: str) -> Iterator[Record]:
    pf = _parquet_column(path, column)
    row = 0
    for batch in pf.iter_batches(batch_size=PARQUET_BATCH, columns=[column]):
        for value in batch.column(0).to_pylist():
            row += 1
            if value is None:
                yield Record(path, row, "", "compact", "missing board (null)")
            else:
                yield Record(path, row, value, "compact")


def _clip(raw: str) -> str:
    """The raw text a rejects row keeps: enough to find the record (its line is recorded too),
    never a whole 10 MB line."""
    return raw if len(raw) <= QUOTE_LIMIT else f"{raw[:QUOTE_LIMIT]}... ({len(raw):,} characters)"


@contextmanager
def _gzip_errors(path: str) -> Iterator[None]:
    """A corrupt or truncated gzip input is one BoardError naming the file (zlib, gzip and
    EOFError otherwise surface as tracebacks, or as click's bare "Aborted!")."""
    try:
        yield
    except (gzip.BadGzipFile, zlib.error, EOFError) as exc:
        what = str(exc).splitlines()[0][:80] if str(exc) else type(exc).__name__
        raise BoardError(f"corrupt or truncated gzip input ({what})", source=path) from None


def _printable(text: str) -> str:
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _text_lines(path: str) -> Iterator[tuple[int, str | None, bytes]]:
    """(line number, decoded line or None if it is not UTF-8, raw bytes) without line ends."""
    with _open_binary(path) as fh:
        for i, raw in enumerate(fh, start=1):
            raw = raw.rstrip(b"\r\n")
            if i == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                yield i, raw.decode("utf-8"), raw
            except UnicodeDecodeError:
                yield i, None, raw


def _is_header(tokens: list[str]) -> bool:
    return len(tokens) == 2 and all(t.isdigit() for t in tokens)


def _text_records(path: str) -> Iterator[Record]:
    notation: str | None = None
    block: list[str] = []  # the lines of the grid or algs4 board being read
    block_start = 0
    block_problem: str | None = None
    algs_need = 0  # faces the algs4 header announced
    algs_have = 0

    def flush() -> Iterator[Record]:
        nonlocal block, block_problem, algs_have
        problem = block_problem
        if notation == "algs4" and problem is None and algs_have != algs_need:
            problem = f"expected {algs_need} faces after the header, found {algs_have}"
        if block:
            yield Record(path, block_start, "\n".join(block), notation or "grid", problem)
        block, block_problem, algs_have = [], None, 0

    for lineno, text, raw in _text_lines(path):
        if text is None:
            shown = _printable(raw.decode("utf-8", "surrogateescape"))
            if block:  # the board being read is spoilt
                block.append(shown)
                block_problem = block_problem or f"line {lineno}: not UTF-8 text"
            else:
                yield Record(path, lineno, shown, notation or "compact", "not UTF-8 text")
            continue
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            if notation == "grid":
                yield from flush()
            continue
        tokens = stripped.split()
        if notation is None:
            notation = "algs4" if _is_header(tokens) else "grid" if len(tokens) > 1 else "compact"
        if notation == "compact":
            yield Record(path, lineno, stripped, "compact")
        elif notation == "grid":
            if not block:
                block_start = lineno
            if len(block) >= MAX_GRID_LINES:
                block_problem = f"grid board longer than {MAX_GRID_LINES} lines"
            else:
                block.append(text.rstrip())
        elif _is_header(tokens):  # algs4: a header, then rows*cols faces over any lines
            yield from flush()
            block, block_start = [stripped], lineno
            algs_need = int(tokens[0]) * int(tokens[1])
        elif not block:
            yield Record(path, lineno, stripped, "algs4", "expected a 'ROWS COLS' header line")
        else:
            block.append(stripped)
            algs_have += len(tokens)
            if algs_have >= algs_need:
                yield from flush()
    yield from flush()


def iter_records(files: Sequence[str], column: str = "board") -> Iterator[Record]:
    for path in files:
        yield from read_records(path, column)


def iter_chunks(records: Iterable[Record], chunk_size: int) -> Iterator[list[Record]]:
    """Group records into lists of ``chunk_size`` (the last may be shorter; never empty)."""
    block: list[Record] = []
    for rec in records:
        block.append(rec)
        if len(block) >= chunk_size:
            yield block
            block = []
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
        return (side, side) if side * side == n and n > 0 else None

    def _slow(self, rec: Record) -> tuple[Board, np.ndarray]:
        if rec.notation == "grid":
            board = parse_grid(rec.raw, source=rec.source, first_line=rec.line)
        elif rec.notation == "algs4":
            board = parse_algs4(rec.raw, source=rec.source)
        else:
            board = parse_compact(rec.raw, self.shape)
        if self.shape is not None and board.shape != self.shape:
            raise BoardError(
                f"board is {format_shape(*board.shape)}, expected {format_shape(*self.shape)} "
                "([boards] shape)"
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
) -> Iterator[IngestChunk]:
    """Every chunk of an ingest run, parsed, in input order."""
    parser = BoardParser(alphabet, shape)
    for k, block in enumerate(iter_chunks(iter_records(files, column), chunk_size)):
        yield parser.parse(k, block)


REJECT_FIELDS = ("source", "line", "raw", "reason")  # the columns of a run's rejects file


def write_rejects_header(fh: IO[str]) -> Any:
    """A csv writer on ``fh`` with the rejects header written."""
    writer = csv.writer(fh)
    writer.writerow(REJECT_FIELDS)
    return writer
