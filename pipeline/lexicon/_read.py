"""Reading a word list's bytes safely: a file read under the size cap, then streamed a checked
chunk at a time (gzip members decompressed with a bounded output, line length, line count, NUL
bytes and UTF-8 checked), so a hostile input is refused before memory grows with it.
"""

from __future__ import annotations

import os
import re
import stat
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn, Protocol

import numpy as np

from pipeline.errors import LexiconError
from pipeline.lexicon._limits import MAX_BYTES_ENV, MAX_LINE_BYTES, MAX_LINES_ENV, LexiconLimits, byte_size


class RawList(Protocol):
    """What reading needs of a word source: its bytes, where they came from, its limits."""

    @property
    def raw(self) -> bytes: ...
    @property
    def path(self) -> Path: ...
    @property
    def limits(self) -> LexiconLimits: ...


_READ_CHUNK = 2**20  # decompressed bytes examined per step


def read_capped(path: Path, spec: str, limits: LexiconLimits) -> bytes:
    """The file's bytes; refused before reading when it is not a regular file (/dev/zero, a
    pipe: no size to check, possibly endless) or is over the size limit."""
    try:
        # O_NONBLOCK: opening a FIFO would otherwise wait for a writer before we can refuse it
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with open(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise LexiconError(
                    "not a regular file (a device, pipe or socket); pass a word-list file", source=spec
                )
            if st.st_size > limits.max_bytes:
                raise LexiconError(_over_bytes(st.st_size, limits), source=spec)
            raw = fh.read(limits.max_bytes + 1)  # + 1: a file that grew since fstat is caught too
    except OSError as exc:
        raise LexiconError(f"cannot read dictionary: {exc.strerror or exc}", source=spec) from None
    if len(raw) > limits.max_bytes:
        raise LexiconError(_over_bytes(len(raw), limits), source=spec)
    return raw


def _over_bytes(n: int, limits: LexiconLimits, what: str = "the file is") -> str:
    return (
        f"{what} {byte_size(n)}, over the limit of {byte_size(limits.max_bytes)} for a word list "
        f"(set {MAX_BYTES_ENV} to raise it)"
    )


_GZIP_MAGIC = b"\x1f\x8b"


def _byte_chunks(src: RawList) -> Iterator[bytes]:
    """The word list's bytes a chunk at a time, decompressed if gzip (never all at once): each
    decompress call is told the most it may return, so a bomb yields 1 MB at a time."""
    raw = src.raw
    if raw[:2] != _GZIP_MAGIC:
        for at in range(0, len(raw), _READ_CHUNK):
            yield raw[at : at + _READ_CHUNK]
        return
    bad = "not a valid gzip file (corrupt or truncated)"
    view = memoryview(raw)
    pos = 0
    while True:  # one gzip member per round: `cat a.gz b.gz` is a valid gzip file
        inflate = zlib.decompressobj(wbits=31)  # 31: gzip header and trailer, CRC checked
        pending: bytes | memoryview = b""
        while not inflate.eof:
            if not pending:
                if pos >= len(raw):
                    raise LexiconError(bad, source=str(src.path))
                pending, pos = view[pos : pos + _FEED], pos + _FEED
            try:
                block = inflate.decompress(pending, _READ_CHUNK)
            except zlib.error:
                raise LexiconError(bad, source=str(src.path)) from None
            pending = inflate.unconsumed_tail
            if block:
                yield block
        pos = min(pos, len(raw)) - len(inflate.unused_data) - len(pending)  # back to the member's end
        more = _NOT_ZERO.search(raw, pos)  # zero padding after the last member is allowed, as gzip does
        if more is None:
            return
        pos = more.start()
        if raw[pos : pos + 2] != _GZIP_MAGIC:
            raise LexiconError("not a valid gzip file (trailing data after the end)", source=str(src.path))


_FEED = 2**16  # compressed bytes handed to the decompressor at a time
_NOT_ZERO = re.compile(rb"[^\x00]")


def _checked_chunks(src: RawList) -> Iterator[tuple[bytes, int]]:
    """(bytes, number of its first line) in chunks that end at a line break (or the end of the
    file), each checked against the limits before it is passed on: total size, lines, line
    length, NUL bytes. UTF-8 is checked by the caller, which decodes."""
    source, limits = str(src.path), src.limits
    gz = src.raw[:2] == _GZIP_MAGIC
    carry = b""  # the unfinished last line of the previous chunk
    total = 0
    line = 1  # number of the first line in carry + block
    for block in _byte_chunks(src):
        total += len(block)
        data = carry + block
        if total > limits.max_bytes:
            what = "the text decompresses to more than" if gz else "the text is more than"
            over = len(data) - (total - limits.max_bytes)  # where in data the limit is crossed
            where = line + data.count(b"\n", 0, over)
            raise LexiconError(_over_bytes(limits.max_bytes, limits, what), source=source, line=where)
        nul = data.find(b"\x00")
        if nul >= 0:
            where = line + data.count(b"\n", 0, nul)
            raise LexiconError("binary data (NUL byte), expected a text word list", source=source, line=where)
        cut = data.rfind(b"\n") + 1
        done, carry = data[:cut], data[cut:]
        breaks = np.flatnonzero(np.frombuffer(done, dtype=np.uint8) == 10)
        lengths = np.diff(breaks, prepend=-1) - 1
        if len(lengths) and lengths.max() > MAX_LINE_BYTES:
            _too_long(source, line + int(np.argmax(lengths > MAX_LINE_BYTES)))
        if len(carry) > MAX_LINE_BYTES:
            _too_long(source, line + len(breaks), carry)
        if line - 1 + len(breaks) > limits.max_lines:
            _too_many_lines(source, limits)
        if done:
            yield done, line
        line += len(breaks)
    if carry:
        if line > limits.max_lines:
            _too_many_lines(source, limits)
        if line == 1 and b"\r" in carry.strip():
            _too_long(source, line, carry)  # no "\n" at all, and more than one line
        yield carry, line


def _too_long(source: str, line: int, text: bytes = b"") -> NoReturn:
    if b"\r" in text.strip():
        why = "lines end in a bare carriage return (classic Mac); expected \\n or \\r\\n line ends"
    else:
        why = f"a line longer than {MAX_LINE_BYTES:,} bytes; a word list holds one word a line"
    raise LexiconError(why, source=source, line=line)


def _too_many_lines(source: str, limits: LexiconLimits) -> NoReturn:
    raise LexiconError(
        f"more than {limits.max_lines:,} lines, over the limit for a word list "
        f"(set {MAX_LINES_ENV} to raise it)",
        source=source,
        line=limits.max_lines + 1,
    )


def _decode(data: bytes, first: bool, source: str, line: int) -> str:
    try:
        return data.decode("utf-8-sig" if first else "utf-8")  # a byte-order mark only opens a file
    except UnicodeDecodeError as exc:
        at = line + data.count(b"\n", 0, exc.start)
        raise LexiconError("not UTF-8 text, expected a word list", source=source, line=at) from None


_RETAIN_BYTES = 64 * 2**20  # a list up to this size is decompressed once, not twice


def check_all(src: RawList) -> list[tuple[bytes, int]] | None:
    """Check the whole word list against the limits, keeping nothing but (up to
    ``_RETAIN_BYTES``) the checked chunks, so a bomb or a binary file is refused having cost a
    chunk of memory, not the words parsed so far. Returns the chunks, or None when the list was
    too big to keep (it is then streamed again)."""
    kept: list[tuple[bytes, int]] | None = []
    size = 0
    for data, line in _checked_chunks(src):
        if not data.isascii():
            _decode(data, line == 1, str(src.path), line)
        if kept is not None:
            size += len(data)
            kept.append((data, line))
            if size > _RETAIN_BYTES:
                kept = None
    return kept


def texts(src: RawList, checked: list[tuple[bytes, int]] | None) -> Iterator[str]:
    """The checked word list's text, a chunk (ending at a line break) at a time."""
    for data, line in checked if checked is not None else _checked_chunks(src):
        yield _decode(data, line == 1, str(src.path), line)
