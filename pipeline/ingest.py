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
import os
import stat
import zlib
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
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
from pipeline.errors import QUOTE_LIMIT, BoardError, BoggleError, InternalError
from pipeline.io import INFLATE_FLOOR, MAX_INFLATE_RATIO, MAX_LINE_BYTES, describe_mode
from pipeline.trie import Alphabet

# MAX_LINE_BYTES, MAX_INFLATE_RATIO and INFLATE_FLOOR (pipeline.io) bound every text input
MAX_GRID_LINES = 1024
PARQUET_BATCH = 65_536
HASH_BLOCK = 1 << 20
# A chunk's records are held together until parsed: chunk_size x MAX_LINE_BYTES could reach
# gigabytes, so a chunk holding more board text than this is refused (lower chunk_size).
MAX_CHUNK_TEXT = 256 << 20


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


_DOWNLOADED: dict[str, str] = {}


def local_input(path: str) -> str:
    """The local file to read for the input ``path``: itself, or for a URL (``s3://...``) a
    copy downloaded once per process, so the bytes fingerprinted are the bytes parsed (the
    board ``source`` column still names the URL)."""
    from pipeline.urls import download, is_url

    if not is_url(path):
        return path
    if path not in _DOWNLOADED:
        import atexit
        import shutil
        import tempfile

        folder = tempfile.mkdtemp(prefix="boggle-input-")
        atexit.register(shutil.rmtree, folder, True)
        dest = Path(folder) / (path.rstrip("/").rsplit("/", 1)[-1] or "input")
        download(path, dest)
        _DOWNLOADED[path] = str(dest)
    return _DOWNLOADED[path]


def check_input(path: str, column: str = "board") -> None:
    """Fail early (BoggleError, exit 2) on a file that cannot be ingested at all: missing,
    not a regular file (a device such as /dev/zero, a FIFO, a socket), not Parquet, or without
    the board column. Nothing beyond a CSV header or the Parquet footer is read."""
    try:
        st = os.stat(local_input(path))
    except FileNotFoundError:
        raise BoggleError("input file not found", source=path) from None
    if not stat.S_ISREG(st.st_mode):
        raise BoggleError(_not_regular(st.st_mode), source=path)
    kind = file_kind(path)
    if kind == "parquet":
        with open(local_input(path), "rb") as fh:
            _parquet_column(fh, path, column)
    elif kind == "csv":
        with _read_source(path, None) as reader, _gzip_errors(path):
            header = next(csv.reader(_csv_lines(_binary_stream(reader, path), [])), None)
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


def _not_regular(mode: int) -> str:
    return f"not a regular file ({describe_mode(mode)}); ingest reads regular files only"


def fingerprint(path: str) -> dict[str, Any]:
    """Size and SHA-256 of an input file, taken before the run reads it (recorded so a resumed
    run can tell it is unchanged; :func:`check_unchanged` compares it with what was read)."""
    raw, _ = _open_regular(path)
    with raw:
        size, sha = _hash_rest(raw, hashlib.sha256())
    return {"file": path, "bytes": size, "sha256": sha.hexdigest()}


@dataclass(frozen=True)
class InputDigest:
    """What an ingest read of one input: the size and SHA-256 of the bytes the parser consumed
    through one open handle, and (device, inode, size, mtime_ns) of the file when it was opened."""

    file: str
    bytes: int
    sha256: str
    opened: tuple[int, int, int, int]


def check_unchanged(inputs: Sequence[Mapping[str, Any]], digests: Mapping[str, InputDigest]) -> None:
    """Refuse (BoggleError, exit 2) a run whose input changed while it ran: the bytes read must
    hash to the fingerprint taken at the start (``inputs``, from :func:`fingerprint`), and the
    path must still name the file that was opened, with its size and mtime. Call it after the
    last chunk and before anything is certified."""
    for fp in inputs:
        path = fp["file"]
        got = digests.get(path)
        if got is None:
            raise InternalError(f"input {path} was not read to its end before the run was finished")
        try:
            now: tuple[int, int, int, int] | None = _identity(os.stat(local_input(path)))
        except FileNotFoundError:
            now = None
        if got.sha256 != fp["sha256"] or got.bytes != fp["bytes"] or now != got.opened:
            what = "removed" if now is None else "replaced or modified"
            raise BoggleError(
                f"input file {what} while the run read it (its size, mtime or SHA-256 no longer "
                "match those taken at the start); nothing was certified: re-run once it stays put "
                "(with --overwrite if its content changed)",
                source=path,
            )


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _open_regular(path: str) -> tuple[IO[bytes], os.stat_result]:
    """Open ``path`` unbuffered and refuse it unless it is a regular file: /dev/zero never ends
    and a FIFO can change under a second reading, so neither can be fingerprinted."""
    # O_NONBLOCK: opening a FIFO must not wait for a writer before it can be refused
    fd = os.open(local_input(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise BoggleError(_not_regular(st.st_mode), source=path)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=0), st
    except BaseException:
        os.close(fd)
        raise


def _hash_rest(fh: IO[bytes], sha: Any) -> tuple[int, Any]:
    size = 0
    while block := fh.read(HASH_BLOCK):
        sha.update(block)
        size += len(block)
    return size, sha


class _HashingReader(io.RawIOBase):
    """Hashes every byte read through it, so the digest is that of the bytes the parser got."""

    def __init__(self, raw: IO[bytes]):
        self._raw = raw
        self.sha = hashlib.sha256()
        self.size = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self._raw.readinto(buffer)  # type: ignore[attr-defined]
        if n:
            self.sha.update(memoryview(buffer)[:n])
            self.size += n
        return n or 0

    def fileno(self) -> int:
        return self._raw.fileno()

    def drain(self) -> None:
        """Hash what the parser left unread (a gzip trailer), so the digest covers the file."""
        n, _ = _hash_rest(self._raw, self.sha)
        self.size += n


@contextmanager
def _read_source(path: str, digests: MutableMapping[str, InputDigest] | None) -> Iterator[_HashingReader]:
    """One input opened once; when the block reads it to the end, ``digests[path]`` records what
    was read (a block left early records nothing)."""
    raw, st = _open_regular(path)
    try:
        reader = _HashingReader(raw)
        yield reader
        reader.drain()
        if digests is not None:
            digests[path] = InputDigest(path, reader.size, reader.sha.hexdigest(), _identity(st))
    finally:
        raw.close()


class _InflateCap(io.RawIOBase):
    """Decompressed bytes of a gzip input, refused past ``cap`` (a decompression bomb)."""

    def __init__(self, inner: Any, cap: int, path: str):
        self._inner = inner
        self._cap = cap
        self._path = path
        self.out = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self._inner.readinto(buffer)
        self.out += n or 0
        if self.out > self._cap:
            raise BoardError(
                f"gzip input inflates to more than {self._cap:,} bytes ({MAX_INFLATE_RATIO}x its "
                "size); refused as a likely decompression bomb",
                source=self._path,
            )
        return n or 0


def _binary_stream(reader: _HashingReader, path: str) -> IO[bytes]:
    """The input's bytes, gunzipped as they are read when it starts with the gzip magic."""
    buffered = io.BufferedReader(reader, HASH_BLOCK)
    if buffered.peek(2)[:2] != b"\x1f\x8b":
        return buffered
    size = os.fstat(reader.fileno()).st_size
    cap = max(INFLATE_FLOOR, MAX_INFLATE_RATIO * size)
    gz = gzip.GzipFile(fileobj=buffered, mode="rb")
    return io.BufferedReader(_InflateCap(gz, cap, path), HASH_BLOCK)


def _bounded_lines(fh: IO[bytes]) -> Iterator[tuple[bytes, int]]:
    """(line, length) with the line end kept; a line longer than MAX_LINE_BYTES comes as its
    first MAX_LINE_BYTES bytes and its whole length, the rest read past in blocks, never held."""
    while line := fh.readline(MAX_LINE_BYTES + 1):
        if len(line) <= MAX_LINE_BYTES or line.endswith(b"\n"):
            yield line, len(line)
            continue
        length = len(line)
        while more := fh.readline(HASH_BLOCK):
            length += len(more)
            if more.endswith(b"\n"):
                break
        yield line[:MAX_LINE_BYTES], length


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
    with _read_source(path, digests) as reader, _gzip_errors(path):
        fh = _binary_stream(reader, path)
        if kind == "csv":
            yield from _csv_records(path, fh, column)
        else:
            yield from _text_records(path, fh)


def _csv_lines(fh: IO[bytes], too_long: list[tuple[int, bytes, int]]) -> Iterator[str]:
    """The decoded lines the csv module reads. An overlong line is noted in ``too_long`` (its
    line number, start and length) and read as an empty line, so it never reaches the parser."""
    for i, (line, length) in enumerate(_bounded_lines(fh), start=1):
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
            if len(row) != len(header):
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
    raw, st = _open_regular(path)
    with raw:
        size, sha = _hash_rest(raw, hashlib.sha256())
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
            digests[path] = InputDigest(path, size, sha.hexdigest(), _identity(st))


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


def _text_records(path: str, fh: IO[bytes]) -> Iterator[Record]:
    notation: str | None = None
    block: list[str] = []  # the lines of the grid or algs4 board being read
    block_start = 0
    block_size = 0  # characters in block, capped like a line
    block_problem: str | None = None
    algs_need = 0  # faces the algs4 header announced
    algs_have = 0

    def flush() -> Iterator[Record]:
        nonlocal block, block_problem, algs_have, block_size
        problem = block_problem
        if notation == "algs4" and problem is None and algs_have != algs_need:
            problem = f"expected {algs_need} faces after the header, found {algs_have}"
        if block:
            yield Record(path, block_start, "\n".join(block), notation or "grid", problem)
        block, block_problem, algs_have, block_size = [], None, 0, 0

    def add(text: str) -> None:
        nonlocal block_size, block_problem
        block_size += len(text) + 1
        if block_size > MAX_LINE_BYTES:
            block_problem = block_problem or f"board text longer than {MAX_LINE_BYTES:,} characters"
        else:
            block.append(text)

    for lineno, (line, length) in enumerate(_bounded_lines(fh), start=1):
        raw = line.rstrip(b"\r\n")
        if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if length > MAX_LINE_BYTES:
            if raw.lstrip().startswith(b"#"):
                continue  # a long comment is still a comment
            shown = _printable(raw[:QUOTE_LIMIT].decode("utf-8", "surrogateescape"))
            if block:
                block_problem = block_problem or f"line {lineno}: {_too_long(length)}"
            else:
                yield Record(
                    path, lineno, f"{shown}... ({length:,} bytes)", notation or "compact", _too_long(length)
                )
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            shown = _printable(raw.decode("utf-8", "surrogateescape"))
            if block:  # the board being read is spoilt
                add(shown)
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
                add(text.rstrip())
        elif _is_header(tokens):  # algs4: a header, then rows*cols faces over any lines
            yield from flush()
            block, block_start, block_size = [stripped], lineno, len(stripped)
            algs_need = int(tokens[0]) * int(tokens[1])
        elif not block:
            yield Record(path, lineno, stripped, "algs4", "expected a 'ROWS COLS' header line")
        else:
            add(stripped)
            algs_have += len(tokens)
            if algs_have >= algs_need:
                yield from flush()
    yield from flush()


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
            board = parse_compact(rec.raw, self.shape)
        check_cells(*board.shape, what="board")
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
