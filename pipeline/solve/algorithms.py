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

What ``dp`` and ``binary`` share lives in :mod:`pipeline.solve.letters`.
"""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.boards import Board
from pipeline.errors import ConfigError
from pipeline.lexicon import CompiledLexicon
from pipeline.solve import BatchSolver, BoardResult, solve_boards

ALGORITHMS = ("trie", "dp", "binary")


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
    ``python -m pipeline.benches.perf_algorithms``). An unknown name is a ConfigError.

    >>> solve_with("dp", [parse_compact("perslatgsineters")], lexicon)[0].score  # doctest: +SKIP
    3625
    """
    if algorithm == "trie":
        return solve_boards(boards, lexicon)
    return solve_boards(boards, lexicon, _batch_solver(algorithm))
