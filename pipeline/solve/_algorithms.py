"""Three solving algorithms behind one interface: ``solve_with(algorithm, boards, lexicon)``.

* ``trie``: the trie-pruned DFS kernel (:func:`pipeline.solve.solve_boards`, the default);
* ``dp``: word-driven dynamic programming (:mod:`pipeline.solve._dp`): for each lexicon word, a
  reachability table over (prefix length, cell) filters candidates, and backtracking confirms
  them; sorted order lets consecutive words share the rows of their common prefix;
* ``binary``: board-driven backtracking that asks the sorted word list "is this a word / a
  prefix?" by binary search (:mod:`pipeline.solve._binary`).

All three return the same :class:`~pipeline.solve.BoardResult` (words, points, score, longest
word, dead cells) for the same boards, lexicon and rules; the tests hold them to that against
the reference solver. The word-driven and binary-search solvers work on letters (code points),
the trie kernel on face indices; a face string is matched against the letters it shows, so
multi-letter faces (``qu``, ``th``) and blanks mean the same thing to all three.

What ``dp`` and ``binary`` share lives in :mod:`pipeline.solve._letters`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.boards import Board
from pipeline.errors import BoggleError, ConfigError
from pipeline.lexicon import CompiledLexicon
from pipeline.rules import Rules
from pipeline.solve import BatchSolver, BoardResult, solve_boards

ALGORITHMS = ("trie", "dp", "binary")


def _batch_solver(algorithm: str) -> BatchSolver:
    if algorithm == "dp":
        from pipeline.solve._dp import solve_dp_batch

        return solve_dp_batch
    if algorithm == "binary":
        from pipeline.solve._binary import solve_binary_batch

        return solve_binary_batch
    raise ConfigError(f"unknown algorithm {algorithm!r}; choose one of {', '.join(ALGORITHMS)}")


def solve_with(algorithm: str, boards: Sequence[Board], lexicon: CompiledLexicon) -> list[BoardResult]:
    """Solve ``boards`` with the named algorithm (``trie``, ``dp`` or ``binary``).

    All three give identical results; they differ only in speed (see
    ``python -m benchmarks.perf_algorithms``). An unknown name is a ConfigError.

    >>> solve_with("dp", [parse_compact("perslatgsineters")], lexicon)[0].score  # doctest: +SKIP
    3625
    """
    if algorithm == "trie":
        return solve_boards(boards, lexicon)
    return solve_boards(boards, lexicon, _batch_solver(algorithm))


def read_boards(boards: Sequence[str], file: Path | None, shape: str | None) -> list[Board]:
    """Compact ``boards`` (an error names the argument's position), then the boards of ``file``
    (compact lines, grid text or algs4; ``-`` for stdin). No boards at all is a BoggleError."""
    from pipeline.boards import parse_board_text, parse_compact, parse_shape
    from pipeline.io import read_text_input

    shp = parse_shape(shape) if shape else None
    out = []
    for i, text in enumerate(boards, start=1):
        try:
            out.append(parse_compact(text, shp))
        except BoggleError as exc:
            raise type(exc)(f"board argument {i}: {exc.message}") from None
    if file is not None:
        text, source = read_text_input(file, "board")
        out.extend(parse_board_text(text, source=source, shape=shp))
    if not out:
        raise BoggleError("no boards given: pass BOARD arguments or --file PATH")
    return out


@dataclass(frozen=True)
class SolveJob:
    """Boards with the rules and lexicon they are solved under (``boggle solve``)."""

    boards: list[Board]
    rules: Rules
    lexicon: CompiledLexicon
    algorithm: str = "trie"

    @property
    def kernel_module(self) -> str:
        """The module whose compiled kernels this job runs (see ``kernel_needs_compile``)."""
        return "_drive" if self.algorithm == "trie" else f"_{self.algorithm}"

    def results(self) -> list[BoardResult]:
        return solve_with(self.algorithm, self.boards, self.lexicon)


def prepare_solve(
    boards: Sequence[str],
    file: Path | None = None,
    *,
    shape: str | None = None,
    dictionary: str | None = None,
    rules: str | None = None,
    min_length: int | None = None,
    revisit: bool | None = None,
    algorithm: str = "trie",
) -> SolveJob:
    """Read the boards, resolve the rules (the first board's shape picks the default preset) and
    compile the lexicon for the boards' faces; ``dictionary`` defaults as
    :func:`pipeline.lexicon.default_dictionary`."""
    from pipeline.boards import faces_of
    from pipeline.lexicon import compile_for_boards, default_dictionary
    from pipeline.rules import resolve_rules

    parsed = read_boards(boards, file, shape)
    first = (parsed[0].rows, parsed[0].cols)
    rule_set = resolve_rules(rules, first, min_length=min_length, revisit=revisit)
    lexicon = compile_for_boards(dictionary or default_dictionary(), rule_set, faces_of(parsed))
    return SolveJob(parsed, rule_set, lexicon, algorithm)
