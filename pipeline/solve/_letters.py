"""What the word-driven (``dp``) and binary-search (``binary``) solvers share: the lexicon as a
flat array of code points in sorted order (:class:`WordTable`) and boards as per-cell
code-point rows. Both solvers work on letters, so a face string is matched against the letters
it shows (``qu``, ``th``, blanks mean the same as for the trie kernel).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.boards import BLANK, Board, geometry
from pipeline.jit import njit
from pipeline.lexicon import CompiledLexicon
from pipeline.solve import BatchResult, encode_boards
from pipeline.solve.kernels import grow


@dataclass(frozen=True)
class WordTable:
    """The lexicon's words as code points, in the lexicon's (sorted) order.

    ``flat[offsets[i]:offsets[i + 1]]`` is word ``i``; ``lcp[i]`` is the length of the prefix
    word ``i`` shares with word ``i - 1`` (0 for the first word).
    """

    flat: np.ndarray  # int32 [total letters]
    offsets: np.ndarray  # int64 [n_words + 1]
    lcp: np.ndarray  # int32 [n_words]
    max_len: int

    @property
    def n_words(self) -> int:
        return len(self.offsets) - 1


@njit(nogil=True, cache=True)
def _common_prefixes(flat, offsets):
    """lcp with the previous word, and the index of the first word out of order (-1 if none)."""
    n = len(offsets) - 1
    lcp = np.zeros(n, np.int32)
    bad = -1
    for i in range(1, n):
        a, b = offsets[i - 1], offsets[i]
        la, lb = b - a, offsets[i + 1] - b
        k = 0
        while k < la and k < lb and flat[a + k] == flat[b + k]:
            k += 1
        lcp[i] = k
        # in order: the previous word is a proper prefix, or differs by a smaller letter
        if bad < 0 and not ((k == la and k < lb) or (k < la and k < lb and flat[a + k] < flat[b + k])):
            bad = i
    return lcp, bad


def build_word_table(words: list[str]) -> WordTable:
    lens = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
    offsets = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    flat = np.frombuffer("".join(words).encode("utf-32-le"), dtype=np.uint32).astype(np.int32)
    lcp, bad = _common_prefixes(flat, offsets)
    if bad >= 0:
        # binary search and prefix sharing both rely on code-point order
        raise ValueError(f"lexicon words are not sorted and unique at {words[bad - 1]!r}, {words[bad]!r}")
    return WordTable(flat, offsets, lcp, int(lens.max(initial=0)))


_TABLES: dict[int, tuple[weakref.ref[CompiledLexicon], WordTable]] = {}


def word_table(lexicon: CompiledLexicon) -> WordTable:
    """The :class:`WordTable` of a compiled lexicon, built once per lexicon object."""
    key = id(lexicon)
    hit = _TABLES.get(key)
    if hit is not None and hit[0]() is lexicon:
        return hit[1]
    table = build_word_table(lexicon.words)

    def forget(_ref: weakref.ref[CompiledLexicon]) -> None:
        _TABLES.pop(key, None)

    _TABLES[key] = (weakref.ref(lexicon, forget), table)
    return table


def encode_face_letters(boards: Sequence[Board], lexicon: CompiledLexicon) -> tuple[np.ndarray, np.ndarray]:
    """Boards of one shape -> (letters int32 [n, cells, max face length], face length int32
    [n, cells]); a blank has length 0. A face outside the lexicon's alphabet is a BoardError,
    as it is for the trie kernel (so all algorithms accept the same boards)."""
    alphabet = lexicon.alphabet
    index = alphabet.index
    if any(f not in index for f in {f for b in boards for f in b.faces if f != BLANK}):
        encode_boards(boards, lexicon)  # raises the trie kernel's BoardError for the bad face
    n_cells = boards[0].n_cells if boards else 0
    codes = np.array([[index.get(f, -1) for f in b.faces] for b in boards], dtype=np.int64)
    codes = codes.reshape(len(boards), n_cells)
    faces = alphabet.faces
    maxf = max((len(f) for f in faces), default=1)
    # one row per alphabet face, and a last all-zero row that the blank's -1 selects
    table = np.zeros((len(faces) + 1, maxf), dtype=np.int32)
    table_len = np.zeros(len(faces) + 1, dtype=np.int32)
    for i, face in enumerate(faces):
        table[i, : len(face)] = [ord(ch) for ch in face]
        table_len[i] = len(face)
    return table[codes], table_len[codes]


@njit(nogil=True, cache=True, inline="always")
def add_word(w, word_points, word_len, sc, nw, lg, collect, ids, n_ids):
    """Word ``w`` found on the board: the running (score, words, longest, ids, n_ids), its id
    appended when ``collect`` (``ids`` grown when full)."""
    sc += word_points[w]
    nw += 1
    if word_len[w] > lg:
        lg = word_len[w]
    if collect:
        if n_ids >= len(ids):
            ids = grow(ids, n_ids + 1)
        ids[n_ids] = w
        n_ids += 1
    return sc, nw, lg, ids, n_ids


@njit(nogil=True, cache=True, inline="always")
def record_board(outputs, b, sc, nw, lg, n_ids, flen, live):
    """Board ``b``'s figures into the word-table kernels' outputs (score, words, longest,
    dead cells, id offsets); a dead cell shows a face (``flen`` > 0) that no found word uses."""
    score, found_count, longest, dead, out_offsets = outputs
    n_dead = 0
    for c in range(len(live)):  # the board's cells
        if flen[c] > 0 and live[c] == 0:
            n_dead += 1
    score[b] = sc
    found_count[b] = nw
    longest[b] = lg
    dead[b] = n_dead
    out_offsets[b + 1] = n_ids


def empty_batch() -> BatchResult:
    """The result of solving no boards."""
    none = np.zeros(0, np.int32)
    return BatchResult(
        none, none.copy(), none.astype(np.int16), none.copy(), np.zeros(1, np.int64), none.copy()
    )


def solve_table_batch(
    kernel: Any,
    boards: Sequence[Board],
    lexicon: CompiledLexicon,
    *,
    collect: bool = True,
    lcp: bool = False,
    extra: tuple[Any, ...] = (),
) -> BatchResult:
    """The harness of the solvers over the sorted word table (:mod:`pipeline.solve._binary`,
    :mod:`pipeline.solve._dp`): boards of one shape in, the kernel's batch result out (rules
    from ``lexicon.rules``). The kernel takes the boards (face letters and lengths, neighbour
    lists and degrees), the table (words, offsets, word points and lengths, the longest word),
    the revisit rule and ``collect``; then the table's common-prefix lengths when ``lcp``, then
    ``extra``."""
    if not boards:
        return empty_batch()
    rows, cols = boards[0].shape
    letters, lengths = encode_face_letters(boards, lexicon)
    table = word_table(lexicon)
    geo = geometry(rows, cols)
    out = kernel(
        (letters, lengths, geo.nbr_list, geo.deg),
        (table.flat, table.offsets, lexicon.word_points, lexicon.trie.word_len, table.max_len),
        lexicon.rules.revisit,
        collect,
        *((table.lcp,) if lcp else ()),
        *extra,
    )
    return BatchResult(*out)
