"""Three solving algorithms behind one interface: ``solve_with(algorithm, boards, lexicon)``.

* ``trie``: the trie-pruned DFS kernel (:func:`pipeline.solve.solve_boards`, the default);
* ``dp``: word-driven dynamic programming (:mod:`pipeline.solve.dp`): for each lexicon word, a
  reachability table over (prefix length, cell) filters candidates, and backtracking confirms
  them; sorted order lets consecutive words share the rows of their common prefix;
* ``binary``: board-driven backtracking that asks the sorted word list "is this a word / a
  prefix?" by binary search (:mod:`pipeline.solve.binary`).

All three return the same :class:`~pipeline.solve.BoardResult` (words, points, score, longest
word, dead cells) for the same boards, lexicon and rules; the tests hold them to that against
the reference solver. The word-driven and binary-search solvers work on letters (code points),
the trie kernel on face indices; a face string is matched against the letters it shows, so
multi-letter faces (``qu``, ``th``) and blanks mean the same thing to all three.

This module also holds what ``dp`` and ``binary`` share: the lexicon as a flat array of code
points in sorted order (:class:`WordTable`) and boards as per-cell code-point rows.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from pipeline.boards import BLANK, Board
from pipeline.errors import ConfigError
from pipeline.lexicon import CompiledLexicon
from pipeline.solve import BatchResult, BatchSolver, BoardResult, encode_boards, solve_boards

ALGORITHMS = ("trie", "dp", "binary")


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


def _build_word_table(words: list[str]) -> WordTable:
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
    table = _build_word_table(lexicon.words)

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


def empty_batch() -> BatchResult:
    """The result of solving no boards."""
    none = np.zeros(0, np.int32)
    return BatchResult(
        none, none.copy(), none.astype(np.int16), none.copy(), np.zeros(1, np.int64), none.copy()
    )


def _batch_solver(algorithm: str) -> BatchSolver:
    if algorithm == "dp":
        from pipeline.solve.dp import solve_dp_batch

        return solve_dp_batch
    if algorithm == "binary":
        from pipeline.solve.binary import solve_binary_batch

        return solve_binary_batch
    raise ConfigError(f"unknown algorithm {algorithm!r}; choose one of {', '.join(ALGORITHMS)}")


def solve_with(algorithm: str, boards: Sequence[Board], lexicon: CompiledLexicon) -> list[BoardResult]:
    """Solve ``boards`` with the named algorithm (``trie``, ``dp`` or ``binary``).

    All three give identical results; they differ only in speed (see
    ``python -m pipeline.perf_algorithms``). An unknown name is a ConfigError.

    >>> solve_with("dp", [parse_compact("perslatgsineters")], lexicon)[0].score  # doctest: +SKIP
    3625
    """
    if algorithm == "trie":
        return solve_boards(boards, lexicon)
    return solve_boards(boards, lexicon, _batch_solver(algorithm))
