"""Word-check queries: can this word be spelled on this board?

Two rules (docs/rules.md, "Boards and paths"): the standard one (each cell at most once per
word) and the revisit one (cells may repeat, but every step moves to one of the up to 8
neighbours).

Both settle each (cell, position in the word) pair at most once, one vectorised step per
position, so a long word on a 100x100 board costs at most cells x letters x 8 steps. Memory
is O(cells x widest face) under the revisit rule and at most cells x letters / 8 bytes under
the standard one (a 300x300 board and a 5,000-letter word once took 4 GB; now about 50 MB):

* Revisit rule: walk the word forwards keeping, for the next few positions only, the cells
  where a walk spelling the prefix can end. Exact; memory O(cells x widest face).
* Standard rule: ``ok[pos]``, the cells from which a walk (reuse allowed) spells ``word[pos:]``,
  cell ``c`` (face ``g``) qualifying when ``g`` equals ``word[pos:pos+|g|]`` and either the word
  ends there or a neighbour of ``c`` is in ``ok[pos+|g|]``, is filled from the end of the word
  backwards and stored compactly (the qualifying cells' ids, or a bitset when that is smaller:
  at most cells x letters / 8 bytes, next to nothing once the word stops fitting). It ignores
  reuse, so it only prunes: a backtracking search from the cells of ``ok[0]`` moves only to
  unused cells the table allows, and answers at the first path.

The classic contest input (AlgoSpot's BOGGLE) is parsed and written here too: the first line is
the number of test cases; each case is the board as lines of letters (one letter a cell, ``Q`` is
just Q), then the number of words, then one word a line. Answers are ``WORD YES`` / ``WORD NO``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from pipeline.boards import (
    BLANK,
    Board,
    geometry,
    is_face_char,
    normalise_text,
    parse_compact,
    parse_shape,
)
from pipeline.errors import BoardError, BoggleError, quote
from pipeline.io import read_text_input

# ---------------------------------------------------------------- queries


def _face_cells(board: Board) -> dict[str, np.ndarray]:
    """The cells showing each face (blanks never match)."""
    faces = np.array(board.faces, dtype=object)
    return {f: np.flatnonzero(faces == f).astype(np.int32) for f in set(board.faces) if f != BLANK}


def _with_neighbour_in(
    cells: np.ndarray, targets: np.ndarray, nbr_list: np.ndarray, mark: np.ndarray
) -> np.ndarray:
    """The entries of ``cells`` with a neighbour in ``targets``. ``mark`` is a zeroed bool
    scratch array of n + 1 entries (the last one is what the -1 padding of ``nbr_list`` reads);
    it is zeroed again on return, so one array serves every step."""
    mark[targets] = True
    hit = cells[mark[nbr_list[cells]].any(axis=1)]
    mark[targets] = False
    return hit


class _Cells:
    """A set of cells stored the smaller way: sorted int32 ids when few, a bitset (cells / 8
    bytes) when many, so a whole table of them never exceeds cells x letters / 8 bytes."""

    __slots__ = ("_bits", "_ids", "_lookup", "_n", "size")

    def __init__(self, ids: np.ndarray, n: int):
        self._n = n
        self.size = len(ids)
        self._lookup: set[int] | None = None
        if 4 * len(ids) > n // 8 + 1:
            dense = np.zeros(n, dtype=bool)
            dense[ids] = True
            self._bits: np.ndarray | None = np.packbits(dense)
            self._ids: np.ndarray | None = None
        else:
            self._bits, self._ids = None, ids

    def ids(self) -> np.ndarray:
        if self._ids is not None:
            return self._ids
        assert self._bits is not None
        return np.flatnonzero(np.unpackbits(self._bits, count=self._n)).astype(np.int32)

    def __contains__(self, cell: int) -> bool:
        if self._bits is not None:
            return bool((self._bits[cell >> 3] >> (7 - (cell & 7))) & 1)
        if self._lookup is None:  # built when the search first asks
            self._lookup = set(self.ids().tolist())
        return cell in self._lookup


def _ok_sets(board: Board, word: str) -> list[_Cells]:
    """``ok[pos]``: the cells (sorted int32) from which a walk (revisits allowed) spells
    ``word[pos:]``, filled from the end of the word backwards. Only cells that qualify are
    stored, so memory follows the states that can lie on such a walk (a long word that stops
    fitting the board early costs next to nothing) instead of cells x letters; each step uses
    one scratch array of ``cells`` entries."""
    geo = geometry(board.rows, board.cols)
    cells_of = _face_cells(board)
    length = len(word)
    n = board.n_cells
    empty = _Cells(np.zeros(0, np.int32), n)
    ok: list[_Cells] = [empty] * (length + 1)
    mark = np.zeros(n + 1, dtype=bool)
    for pos in range(length - 1, -1, -1):
        found = []
        for face, cells in cells_of.items():
            if not word.startswith(face, pos):
                continue
            nxt = pos + len(face)
            if nxt == length:
                found.append(cells)
            elif ok[nxt].size:
                found.append(_with_neighbour_in(cells, ok[nxt].ids(), geo.nbr_list, mark))
        if found:
            ok[pos] = _Cells(np.unique(np.concatenate(found)) if len(found) > 1 else found[0], n)
    return ok


def _spelled_with_revisits(board: Board, word: str) -> bool:
    """Exact answer under the revisit rule, walking the word forwards: ``ends[pos]`` is the set
    of cells where a walk spelling ``word[:pos]`` can end. Only the positions a face can still
    reach are kept (the next ``widest`` ones), so memory is O(cells x widest face), whatever
    the word's length."""
    geo = geometry(board.rows, board.cols)
    cells_of = _face_cells(board)
    length = len(word)
    mark = np.zeros(board.n_cells + 1, dtype=bool)
    ends: dict[int, np.ndarray] = {}
    for face, cells in cells_of.items():
        if word.startswith(face, 0):
            ends[len(face)] = np.union1d(ends.get(len(face), cells), cells)
    for pos in range(1, length):
        here = ends.pop(pos, None)
        if here is None or not len(here):
            continue
        for face, cells in cells_of.items():
            if word.startswith(face, pos):
                step = _with_neighbour_in(cells, here, geo.nbr_list, mark)
                if len(step):
                    nxt = pos + len(face)
                    ends[nxt] = np.union1d(ends[nxt], step) if nxt in ends else step
    return length in ends and bool(len(ends[length]))


def _path_without_reuse(board: Board, word: str, ok: list[_Cells]) -> bool:
    """Backtracking (explicit stack) through the cells ``ok`` allows, never reusing a cell."""
    geo = geometry(board.rows, board.cols)
    faces = board.faces
    length = len(word)
    free = sum(1 for f in faces if f != BLANK)
    widest = max(len(f) for f in faces)
    for start in ok[0].ids().tolist():
        # frame: (cell, position after its face, neighbours still to try)
        stack = [(start, len(faces[start]), iter(geo.neighbours(start)))]
        used = {start}
        while stack:
            cell, pos, todo = stack[-1]
            if pos == length:
                return True
            nb = next(todo, None)
            if nb is None:
                stack.pop()
                used.discard(cell)
                continue
            if nb in used or nb not in ok[pos]:
                continue
            if (length - pos + widest - 1) // widest > free - len(used):
                continue  # too few unused cells left for the rest of the word
            used.add(nb)
            stack.append((nb, pos + len(faces[nb]), iter(geo.neighbours(nb))))
    return False


def can_spell(board: Board, word: str, *, revisit: bool = False) -> bool:
    """Whether ``word`` (letters, case-insensitive) can be spelled on ``board``.

    >>> can_spell(parse_compact("abcd"), "abdc")  # doctest: +SKIP
    True
    """
    word = normalise_text(word.strip())
    if not word:
        return False
    if revisit:
        return _spelled_with_revisits(board, word)
    ok = _ok_sets(board, word)
    return ok[0].size > 0 and _path_without_reuse(board, word, ok)


def check_words(board: Board, words: Iterable[str], *, revisit: bool = False) -> list[tuple[str, bool]]:
    """``(word as given, answer)`` for each word."""
    return [(w, can_spell(board, w, revisit=revisit)) for w in words]


def format_answers(answers: Iterable[tuple[str, bool]]) -> list[str]:
    """``WORD YES`` / ``WORD NO`` lines."""
    return [f"{w} {'YES' if ok else 'NO'}" for w, ok in answers]


def check_board_words(
    board_text: str, words: Sequence[str], *, shape: tuple[int, int] | None = None, revisit: bool = False
) -> list[tuple[str, bool]]:
    """Check words against a compact board (``q`` = Qu, ``.`` blank, ``[th]`` a multi-letter
    face); the ``boggle check BOARD WORD...`` entry point."""
    if not words:
        raise BoggleError("no words given: pass the board, then one or more words")
    try:
        board = parse_compact(board_text, shape)
    except BoardError as exc:
        raise BoardError(f"board {quote(board_text)}: {exc.message}") from None
    return check_words(board, words, revisit=revisit)


# ---------------------------------------------------------------- contest format


@dataclass(frozen=True)
class ContestCase:
    board: Board
    words: tuple[str, ...]


def _count(line: str) -> int | None:
    s = line.strip()
    return int(s) if s.isascii() and s.isdigit() else None


def parse_contest(text: str, *, source: str = "<contest>") -> list[ContestCase]:
    """Parse the contest input. Blank lines are ignored; every error names its line.

    Board lines hold one letter a cell (letters are plain: ``Q`` is a Q, not Qu) and all have
    the same length; the first line that is a number after them is the word count.
    """
    lines = [(i, ln.strip()) for i, ln in enumerate(text.splitlines(), start=1) if ln.strip()]
    if not lines:
        raise BoardError("empty input, expected the number of test cases", source=source)
    pos = 0

    def take() -> tuple[int, str]:
        nonlocal pos
        if pos >= len(lines):
            last = lines[-1][0] if lines else 1
            raise BoardError("unexpected end of input", source=source, line=last)
        item = lines[pos]
        pos += 1
        return item

    lineno, first = take()
    n_cases = _count(first)
    if n_cases is None:
        raise BoardError(
            f"expected the number of test cases, found {quote(first)}", source=source, line=lineno
        )
    cases: list[ContestCase] = []
    for case_no in range(1, n_cases + 1):
        rows: list[tuple[str, ...]] = []
        while True:
            if pos >= len(lines):
                raise BoardError(
                    f"test case {case_no}: input ends before its word count",
                    source=source,
                    line=lines[-1][0],
                )
            lineno, line = lines[pos]
            if _count(line) is not None:
                break
            pos += 1
            row = []
            for k, ch in enumerate(line, start=1):
                face = normalise_text(ch)
                if not is_face_char(ch) or len(face) != 1:
                    raise BoardError(
                        f"column {k}: {ch!r} is not a letter (board lines hold one letter a cell)",
                        source=source,
                        line=lineno,
                    )
                row.append(face)
            if rows and len(row) != len(rows[0]):
                raise BoardError(
                    f"board row has {len(row)} letters, the first row has {len(rows[0])}",
                    source=source,
                    line=lineno,
                )
            rows.append(tuple(row))
        if not rows:
            raise BoardError(
                f"test case {case_no}: no board lines before the word count", source=source, line=lineno
            )
        lineno, line = take()
        n_words = int(line)  # the loop above stopped on a line of digits
        words = []
        for _ in range(n_words):
            lineno, word = take()
            if len(word.split()) != 1:
                raise BoardError(f"expected one word a line, found {quote(word)}", source=source, line=lineno)
            words.append(word)
        board = Board(len(rows), len(rows[0]), tuple(f for row in rows for f in row))
        cases.append(ContestCase(board, tuple(words)))
    if pos < len(lines):
        lineno, line = lines[pos]
        raise BoardError(
            f"unexpected {quote(line)} after the {n_cases} test case(s) the first line announced",
            source=source,
            line=lineno,
        )
    return cases


def _contest_letter(face: str) -> str:
    if len(face) != 1 or face == BLANK:
        raise BoardError(
            f"face {face!r} cannot be written in the contest format (one letter a cell, no blanks)"
        )
    up = face.upper()
    # upper-case where it reads back as the same letter (not for e.g. a final sigma)
    return up if len(up) == 1 and normalise_text(up) == face else face


def format_contest(cases: Sequence[ContestCase]) -> str:
    """Write cases in the contest format (letters upper-cased); inverse of :func:`parse_contest`."""
    out = [str(len(cases))]
    for case in cases:
        for row in case.board.grid():
            out.append("".join(_contest_letter(f) for f in row))
        out.append(str(len(case.words)))
        for w in case.words:
            if len(w.split()) != 1:
                raise BoggleError(f"word {w!r} cannot be written in the contest format (one word a line)")
            out.append(w)
    return "\n".join(out) + "\n"


def answer_contest(cases: Iterable[ContestCase], *, revisit: bool = False) -> list[tuple[str, bool]]:
    """Every case's answers, in order."""
    return [a for case in cases for a in check_words(case.board, case.words, revisit=revisit)]


def check_contest(spec: str, *, revisit: bool = False) -> list[tuple[str, bool]]:
    """Answer a contest input read from a file path, or from standard input when ``spec`` is
    ``-``; the ``boggle check --contest`` entry point."""
    text, source = read_text_input(spec, "contest")
    return answer_contest(parse_contest(text, source=source), revisit=revisit)


def run_check(
    board_and_words: Sequence[str],
    *,
    contest: str | None = None,
    shape: str | None = None,
    revisit: bool = False,
) -> list[str]:
    """The ``boggle check`` entry point: answer ``BOARD WORD...`` or a contest input (a file, or
    ``-`` for standard input) as ``WORD YES`` / ``WORD NO`` lines."""
    if contest is not None:
        if board_and_words:
            raise BoggleError(
                "--contest reads boards and words from its input; give no BOARD or WORD arguments"
            )
        if shape is not None:
            raise BoggleError("--shape applies to a BOARD argument; contest boards give their own shape")
        return format_answers(check_contest(contest, revisit=revisit))
    if not board_and_words:
        raise BoggleError("nothing to check: pass BOARD WORD... or --contest FILE")
    shp = parse_shape(shape) if shape is not None else None
    board, *words = board_and_words
    return format_answers(check_board_words(board, words, shape=shp, revisit=revisit))
