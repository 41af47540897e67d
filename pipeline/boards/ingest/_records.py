"""The records of an input file, before parsing: a CSV column, a Parquet column, or text whose
notation (compact, grid, algs4) is found from its first board line, each record with its source
and line, and with the problem already known (an overlong line, bad UTF-8, a broken header).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import os
import stat
import zlib
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any

from pipeline.boards.ingest._files import (
    InputDigest,
    binary_stream,
    bounded_lines,
    file_identity,
    file_kind,
    hash_rest,
    local_input,
    not_regular,
    open_regular,
    read_source,
)
from pipeline.errors import QUOTE_LIMIT, BoardError, BoggleError
from pipeline.io import MAX_LINE_BYTES

MAX_GRID_LINES = 1024
PARQUET_BATCH = 65_536


@dataclass(frozen=True)
class Record:
    """One input record before parsing. ``problem`` is set when the reader already knows the
    record is bad (not UTF-8, a broken algs4 header...)."""

    source: str
    line: int
    raw: str
    notation: str  # "compact" | "grid" | "algs4"
    problem: str | None = None


def check_input(path: str, column: str = "board") -> None:
    """Fail early (BoggleError, exit 2) on a file that cannot be ingested at all: missing,
    not a regular file (a device such as /dev/zero, a FIFO, a socket), not Parquet, or without
    the board column. Nothing beyond a CSV header or the Parquet footer is read."""
    try:
        st = os.stat(local_input(path))
    except FileNotFoundError:
        raise BoggleError("input file not found", source=path) from None
    if not stat.S_ISREG(st.st_mode):
        raise BoggleError(not_regular(st.st_mode), source=path)
    kind = file_kind(path)
    if kind == "parquet":
        with open(local_input(path), "rb") as fh:
            _parquet_column(fh, path, column)
    elif kind == "csv":
        with read_source(path, None) as reader, _gzip_errors(path):
            header = next(csv.reader(_csv_lines(binary_stream(reader, path), [])), None)
        _check_header(path, header, column)


def _check_header(path: str, header: list[str] | None, column: str) -> list[str]:
    if not header:
        raise BoardError("empty CSV file (expected a header row)", source=path)
    if column not in header:
        raise BoardError(
            f"no {column!r} column (columns: {', '.join(header)}); set [boards] column",
            source=path,
            line=1,
        )
    return header


def _too_long(length: int) -> str:
    return f"line longer than {MAX_LINE_BYTES:,} bytes ({length:,} bytes); not read"


def _has_surrogates(text: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in text)


def _parquet_column(source: Any, path: str, column: str) -> Any:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(source)
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


def read_records(
    path: str, column: str = "board", digests: MutableMapping[str, InputDigest] | None = None
) -> Iterator[Record]:
    """Stream the records of one input file; once it is read to the end, ``digests[path]``
    holds the size and SHA-256 of the bytes read (see :func:`check_unchanged`)."""
    kind = file_kind(path)
    if kind == "parquet":
        yield from _parquet_records(path, column, digests)
        return
    with read_source(path, digests) as reader, _gzip_errors(path):
        fh = binary_stream(reader, path)
        if kind == "csv":
            yield from _csv_records(path, fh, column)
        else:
            yield from _text_records(path, fh, column)


def _csv_lines(fh: IO[bytes], too_long: list[tuple[int, bytes, int]]) -> Iterator[str]:
    """The decoded lines the csv module reads. An overlong line is noted in ``too_long`` (its
    line number, start and length) and read as an empty line, so it never reaches the parser."""
    for i, (line, length) in enumerate(bounded_lines(fh), start=1):
        if i == 1 and line.startswith(b"\xef\xbb\xbf"):
            line = line[3:]
        if length > MAX_LINE_BYTES:
            too_long.append((i, line, length))
            yield "\n"
        else:
            # surrogateescape: a bad byte only spoils its own record (reported), not the file
            yield line.decode("utf-8", "surrogateescape")


def _csv_records(path: str, fh: IO[bytes], column: str) -> Iterator[Record]:
    too_long: list[tuple[int, bytes, int]] = []

    def overlong() -> Iterator[Record]:
        for lineno, start, length in too_long:
            shown = _printable(start[:QUOTE_LIMIT].decode("utf-8", "surrogateescape"))
            yield Record(path, lineno, f"{shown}... ({length:,} bytes)", "compact", _too_long(length))
        too_long.clear()

    reader = csv.reader(_csv_lines(fh, too_long))
    try:
        first = next(reader, None)
        if too_long:
            raise BoardError(f"header {_too_long(too_long[0][2])}", source=path, line=1)
        header = _check_header(path, first, column)
        col = header.index(column)
        start = reader.line_num + 1
        for row in reader:
            yield from overlong()
            line, start = start, reader.line_num + 1
            if not row:
                continue
            raw = row[col] if col < len(row) else ""
            problem = None
            if row == header:  # files joined with `cat`, each with its header
                problem = "a repeated header row, not a board"
            elif len(row) != len(header):
                problem = f"row has {len(row)} fields, the header has {len(header)}"
            elif _has_surrogates(raw):
                problem = "not UTF-8 text"
            yield Record(path, line, _printable(raw), "compact", problem)
        yield from overlong()
    except csv.Error as exc:
        raise BoardError(f"not valid CSV ({exc})", source=path, line=reader.line_num) from None


def _parquet_records(
    path: str, column: str, digests: MutableMapping[str, InputDigest] | None
) -> Iterator[Record]:
    # Parquet is read by random access, not as a stream: the file is hashed through the handle
    # pyarrow then reads, so both see one inode; a write in place meanwhile changes its mtime,
    # which check_unchanged compares.
    raw, st = open_regular(path)
    with raw:
        size, sha = hash_rest(raw, hashlib.sha256())
        raw.seek(0)
        pf = _parquet_column(raw, path, column)
        row = 0
        for batch in pf.iter_batches(batch_size=PARQUET_BATCH, columns=[column]):
            for value in batch.column(0).to_pylist():
                row += 1
                if value is None:
                    yield Record(path, row, "", "compact", "missing board (null)")
                elif len(value) > MAX_LINE_BYTES:
                    yield Record(path, row, value[:QUOTE_LIMIT], "compact", _too_long(len(value)))
                else:
                    yield Record(path, row, value, "compact")
        if digests is not None:
            digests[path] = InputDigest(path, size, sha.hexdigest(), file_identity(st))


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


def _is_header(tokens: list[str]) -> bool:
    return len(tokens) == 2 and all(t.isdigit() for t in tokens)


def _text_records(path: str, fh: IO[bytes], column: str = "board") -> Iterator[Record]:
    text_file = _TextFile(path, column)
    for lineno, (line, length) in enumerate(bounded_lines(fh), start=1):
        raw = line.rstrip(b"\r\n")
        if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if length > MAX_LINE_BYTES:
            if not raw.lstrip().startswith(b"#"):  # a long comment is still a comment
                yield from text_file.overlong(lineno, raw, length)
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            yield from text_file.not_utf8(lineno, raw)
            continue
        yield from text_file.line(lineno, text)
    yield from text_file.flush()


class _TextFile:
    """A text input being read: its notation (found from the first board line) and the grid or
    algs4 board whose lines are being gathered, with what is already known to be wrong with it."""

    def __init__(self, path: str, column: str = "board") -> None:
        self.path = path
        self.column = column  # a line holding just the column's name is a header, not a board
        self.notation: str | None = None
        self.block: list[str] = []  # the lines of the grid or algs4 board being read
        self.block_start = 0
        self.block_size = 0  # characters in block, capped like a line
        self.block_problem: str | None = None
        self.algs_need = 0  # faces the algs4 header announced
        self.algs_have = 0

    def flush(self) -> Iterator[Record]:
        problem = self.block_problem
        if self.notation == "algs4" and problem is None and self.algs_have != self.algs_need:
            problem = f"expected {self.algs_need} faces after the header, found {self.algs_have}"
        if self.block:
            yield Record(self.path, self.block_start, "\n".join(self.block), self.notation or "grid", problem)
        self.block, self.block_problem, self.algs_have, self.block_size = [], None, 0, 0

    def add(self, text: str) -> None:
        self.block_size += len(text) + 1
        if self.block_size > MAX_LINE_BYTES:
            self.block_problem = self.block_problem or f"board text longer than {MAX_LINE_BYTES:,} characters"
        else:
            self.block.append(text)

    def overlong(self, lineno: int, raw: bytes, length: int) -> Iterator[Record]:
        """A line over MAX_LINE_BYTES: it spoils the board being read, or is a reject itself."""
        if self.block:
            self.block_problem = self.block_problem or f"line {lineno}: {_too_long(length)}"
            return
        shown = _printable(raw[:QUOTE_LIMIT].decode("utf-8", "surrogateescape"))
        notation = self.notation or "compact"
        yield Record(self.path, lineno, f"{shown}... ({length:,} bytes)", notation, _too_long(length))

    def not_utf8(self, lineno: int, raw: bytes) -> Iterator[Record]:
        shown = _printable(raw.decode("utf-8", "surrogateescape"))
        if self.block:  # the board being read is spoilt
            self.add(shown)
            self.block_problem = self.block_problem or f"line {lineno}: not UTF-8 text"
        else:
            yield Record(self.path, lineno, shown, self.notation or "compact", "not UTF-8 text")

    def line(self, lineno: int, text: str) -> Iterator[Record]:
        """A decoded line: a board (compact), part of one (grid, algs4), or a break between them."""
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            if self.notation == "grid":
                yield from self.flush()
            return
        tokens = stripped.split()
        if self.notation is None:
            self.notation = "algs4" if _is_header(tokens) else "grid" if len(tokens) > 1 else "compact"
        if self.notation == "compact":
            header = stripped.casefold() == self.column.casefold()
            problem = f"a header row ({stripped!r}, the board column's name), not a board" if header else None
            yield Record(self.path, lineno, stripped, "compact", problem)
        elif self.notation == "grid":
            self.grid_line(lineno, text)
        else:
            yield from self.algs4_line(lineno, stripped, tokens)

    def grid_line(self, lineno: int, text: str) -> None:
        if not self.block:
            self.block_start = lineno
        if len(self.block) >= MAX_GRID_LINES:
            self.block_problem = f"grid board longer than {MAX_GRID_LINES} lines"
        else:
            self.add(text.rstrip())

    def algs4_line(self, lineno: int, stripped: str, tokens: list[str]) -> Iterator[Record]:
        """algs4: a header, then rows*cols faces over any lines."""
        if _is_header(tokens):
            yield from self.flush()
            self.block, self.block_start, self.block_size = [stripped], lineno, len(stripped)
            self.algs_need = int(tokens[0]) * int(tokens[1])
        elif not self.block:
            yield Record(self.path, lineno, stripped, "algs4", "expected a 'ROWS COLS' header line")
        else:
            self.add(stripped)
            self.algs_have += len(tokens)
            if self.algs_have >= self.algs_need:
                yield from self.flush()
