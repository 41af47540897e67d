"""A designer's own dice from a file (text, JSON or TOML; the format is in docs/guides/dice.md):
read under a size cap, every face checked, the board shape found from the die count, each
problem one ``FILE:LINE: problem`` error; and a set written back as text.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
import tomllib
from typing import Any

from pipeline.boards._board import MAX_CELLS, format_shape
from pipeline.boards._dice import DiceSet
from pipeline.errors import ConfigError, quote
from pipeline.lexicon.trie import BLANK, is_face_char, normalise_text

# ---------------------------------------------------------------- dice files

DICE_FILE_SUFFIXES = (".txt", ".json", ".toml")
DIE_BLANK_TOKEN = "_"  # a blank face in a dice file
# a dice file of 10,000 dice (100x100) of six faces is about 130 kB: anything near this is no dice
# file (a word list, a binary), refused before it is read whole
MAX_DICE_FILE_BYTES = 1 << 20
# a die written as one run of letters (``aaeegn``) is one face: said so rather than rolled
_RUN_TOGETHER = 4
_SEPARATORS = re.compile(r"[\s,]+")


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


def format_dice_text(dice: DiceSet) -> str:
    """The set in the text format of a dice file (one die a line, blank ``_``): what
    :func:`read_dice_file` reads back as the same dice (same sha256)."""
    shape = format_shape(dice.rows, dice.cols)
    title = " ".join((dice.title or dice.name).split())  # one comment line, whatever the file name holds
    head = f"# {title}: {len(dice.dice)} dice for {shape}, sha256 {dice.sha256}\n"
    return head + "".join(" ".join(f or DIE_BLANK_TOKEN for f in die) + "\n" for die in dice.dice)


def _read_text(path: str) -> str:
    """The text of a dice file: a local file (refused unless it is a regular file: a FIFO
    would block, a device never end) or an object of a store (``s3://...``), under
    MAX_DICE_FILE_BYTES."""
    from pipeline.errors import BoggleError
    from pipeline.urls import is_url, local_path, read_url_bytes

    try:
        local = local_path(path) if is_url(path) else path  # a file:// URL is a local file
        if local is not None:
            data = _read_local(local)
        else:
            data = read_url_bytes(path, MAX_DICE_FILE_BYTES, "dice file")
    except ConfigError:
        raise
    except BoggleError as exc:
        if exc.exit_code != ConfigError.exit_code:
            raise  # a store that cannot be reached: exit 5
        raise ConfigError(exc.message, source=path) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError("not UTF-8 text", source=path, line=line) from None


def _read_local(path: str) -> bytes:
    real = os.path.expanduser(path)
    not_regular = "not a regular file (a dice file is text, .json or .toml)"
    try:
        # O_NONBLOCK: a FIFO must be refused, not waited on for a writer
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise ConfigError("dice file not found", source=path) from None
    except OSError as exc:
        why = not_regular if exc.errno == errno.EISDIR else f"cannot read the dice file ({exc.strerror})"
        raise ConfigError(why, source=path) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(not_regular, source=path)
        if st.st_size > MAX_DICE_FILE_BYTES:
            raise ConfigError(f"larger than {MAX_DICE_FILE_BYTES:,} bytes: not a dice file", source=path)
        os.set_blocking(fd, True)
        chunks, left = [], MAX_DICE_FILE_BYTES + 1
        while left > 0 and (block := os.read(fd, left)):
            chunks.append(block)
            left -= len(block)
    except OSError as exc:
        raise ConfigError(f"cannot read the dice file ({exc.strerror})", source=path) from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > MAX_DICE_FILE_BYTES:
        raise ConfigError(f"larger than {MAX_DICE_FILE_BYTES:,} bytes: not a dice file", source=path)
    return data


def _face(token: Any, die: int, path: str, line: int | None, *, empty_is_blank: bool) -> str:
    """One face of a file, normalised (``Qu`` -> ``qu``); ``_`` is a blank."""
    if not isinstance(token, str):
        raise ConfigError(f"die {die}: face {token!r} is not a string of letters", source=path, line=line)
    if token == DIE_BLANK_TOKEN or (empty_is_blank and token == ""):
        return BLANK
    norm = normalise_text(token.strip())
    if not norm or not all(is_face_char(ch) for ch in norm):
        raise ConfigError(
            f"die {die}: face {quote(token)} is not letters (a blank face is written {DIE_BLANK_TOKEN})",
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
    except RecursionError:  # thousands of nested brackets: no dice file
        raise ConfigError(f"not valid {kind}: arrays or tables nested too deeply", source=path) from None
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
