"""Solving boards: the public wrapper around the numba kernel.

``solve_arrays`` takes a batch of encoded boards of one shape and returns a :class:`BatchResult`
(per board: score, distinct words, longest word length, dead cells, and the found word ids as
CSR offsets + ids). ``solve_boards`` does the same for :class:`~pipeline.boards.Board` objects
of any shapes and gives one :class:`BoardResult` each.

Beside the batch solver, the seeds' classic puzzles, which ask of one word or one walk what the
kernels ask of every word: can a word be spelled on a board (``_check``: :func:`run_check`, the
contest's word-check queries), and the robot's search-tree walk (``_search_tree``) that the
kernels' explicit-stack search is an instance of, with N-queens as its second instance
(``_queens``: :func:`queens_report`). Only the CLI uses them.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pipeline import settings
from pipeline.boards import Board, geometry
from pipeline.errors import BoardError
from pipeline.lexicon import CompiledLexicon
from pipeline.lexicon.trie import Trie
from pipeline.solve._reference import WordCount

if TYPE_CHECKING:
    from pipeline.solve._algorithms import prepare_solve
    from pipeline.solve._check import run_check
    from pipeline.solve._queens import MAX_QUEENS, queens_report
    from pipeline.solve._summary import summarise_result, summarise_words

#: exported names whose modules build on this one (and the summary on the kernels): imported
#: when first used, so that importing the package compiles and loads no kernel
_LATER = {
    "prepare_solve": "_algorithms",
    "summarise_result": "_summary",
    "summarise_words": "_summary",
    "run_check": "_check",
    "queens_report": "_queens",
    "MAX_QUEENS": "_queens",
}

__all__ = [
    "MAX_QUEENS",
    "BatchResult",
    "BatchSolver",
    "BoardResult",
    "WordCount",
    "encode_boards",
    "kernel_needs_compile",
    "prepare_solve",
    "queens_report",
    "run_check",
    "small_records",
    "solve_arrays",
    "solve_boards",
    "summarise_result",
    "summarise_words",
]


@dataclass
class BatchResult:
    score: np.ndarray  # int32 [n]
    n_words: np.ndarray  # int32 [n]
    longest: np.ndarray  # int16 [n], letters of the longest word found
    dead_cells: np.ndarray  # int32 [n], non-blank cells no found word uses
    offsets: np.ndarray  # int64 [n + 1]
    word_ids: np.ndarray  # int32 [offsets[-1]], in discovery order within a board
    # With a tally (``solve_arrays(..., bins=...)``), else None: the longest word's id (ties:
    # alphabetically first; -1: none) and words / points per length bin
    longest_id: np.ndarray | None = None  # int32 [n]
    len_counts: np.ndarray | None = None  # int32 [n, n_bins]
    len_points: np.ndarray | None = None  # int32 [n, n_bins]
    bins: tuple[int, int] | None = None  # the (lo, n_bins) of the tally

    def __len__(self) -> int:
        return len(self.score)

    def ids_of(self, i: int) -> np.ndarray:
        return self.word_ids[self.offsets[i] : self.offsets[i + 1]]

    def sorted_ids(self) -> np.ndarray:
        """Word ids sorted within each board (ids follow the lexicon's sorted order)."""
        if len(self.word_ids) == 0:
            return self.word_ids
        board = np.repeat(np.arange(len(self.score)), np.diff(self.offsets))
        return self.word_ids[np.lexsort((self.word_ids, board))]


@dataclass(frozen=True)
class BoardResult(WordCount):
    board: Board
    words: list[str]  # sorted
    points: list[int]  # per word
    score: int
    longest: int
    dead_cells: int


def solve_arrays(
    boards: np.ndarray,
    rows: int,
    cols: int,
    lexicon: CompiledLexicon,
    *,
    collect: bool = True,
    bins: tuple[int, int] | None = None,
) -> BatchResult:
    """Solve a batch of encoded boards (int8 [n_boards, rows*cols], blank = -1).

    With ``collect=False`` the word ids are not gathered (offsets are all zero). ``bins`` =
    ``(lo, n_bins)`` also tallies, per board as it is solved, the longest word's id and the
    words and points per length bin (``lo, lo+1, ...``, the last bin for everything longer):
    what a run's table needs, without a pass over the collected ids afterwards (or, with
    ``collect=False``, without collecting them at all).
    """
    from pipeline.solve import kernels

    boards = np.ascontiguousarray(boards, dtype=np.int8)
    if bins is not None and bins[1] < 1:
        raise ValueError(f"bins needs at least one length bin, got {bins}")
    if boards.ndim != 2 or boards.shape[1] != rows * cols:
        raise ValueError(f"boards must have shape (n, {rows * cols}), got {boards.shape}")
    check_codes(boards, lexicon)
    trie = lexicon.trie
    geo = geometry(rows, cols)
    common = (
        trie.nodes.reshape(-1),
        lexicon.word_points,
        trie.word_len,
        max(trie.max_depth, 1),
        collect,
        *(bins or (0, 0)),
    )
    face_bits = len(lexicon.alphabet)
    records = small_records(trie, face_bits) if rows * cols <= 64 and not lexicon.rules.revisit else None
    # boards of <= 64 cells whose trie has no 8-byte records (an alphabet of 40-64 faces and a
    # very big trie) take the walk of any size
    variant = kernels.SMALL if records is not None else kernels.LARGE
    if lexicon.rules.revisit:
        variant = kernels.REVISIT
    if records is None:
        records = np.zeros(1, np.uint64)
    out = kernels.solve_batch(
        variant, boards, geo.nbr_mask, geo.nbr_list, geo.deg, *common, records, face_bits, kernels.HIT_ROOM
    )
    score, n_words, longest, dead, offsets, ids, longest_id, counts, points = out
    if not bins:
        return BatchResult(score, n_words, longest, dead, offsets, ids)
    return BatchResult(score, n_words, longest, dead, offsets, ids, longest_id, counts, points, bins)


#: each trie's 8-byte records (:func:`small_records`), while the trie lives
_RECORDS: dict[int, tuple[weakref.ref[Trie], np.ndarray | None]] = {}


def small_records(trie: Trie, face_bits: int) -> np.ndarray | None:
    """The trie's nodes as the 8-byte records the small walk reads
    (:func:`pipeline.solve.kernels._walk.walk_small`): uint64 [n_nodes], the child mask in the low
    ``face_bits`` bits, the first child above them, bit 63 set when a word ends at the node
    (its id stays in the 16-byte record). None when they do not fit: ``face_bits`` plus the
    bits of the node count over 63 (or 2**32 nodes and more). Made once per trie (a few ms
    for ENABLE2K; 8 bytes a node while the trie lives)."""
    key = id(trie)
    held = _RECORDS.get(key)
    if held is not None and held[0]() is trie:
        return held[1]
    records = None
    # the walk's hit buffer holds node numbers as uint32
    if face_bits + max(trie.n_nodes, 1).bit_length() <= 63 and trie.n_nodes < 2**32:
        records = trie.mask | (trie.first_child.astype(np.uint64) << np.uint64(face_bits))
        records |= (trie.word_id >= 0).astype(np.uint64) << np.uint64(63)
    _RECORDS[key] = (weakref.ref(trie, lambda _: _RECORDS.pop(key, None)), records)
    return records


def check_codes(boards: np.ndarray, lexicon: CompiledLexicon) -> None:
    """The kernels trust their input: every code must be a face of the lexicon's alphabet or
    -1 (blank), else a BoardError naming the first bad board and cell."""
    if boards.size == 0:
        return
    n_faces = len(lexicon.alphabet)
    if int(boards.min()) >= -1 and int(boards.max()) < n_faces:
        return
    board, cell = np.argwhere((boards < -1) | (boards >= n_faces))[0]
    raise BoardError(
        f"board {int(board) + 1}: face code {int(boards[board, cell])} (cell {int(cell) + 1}) is "
        f"outside the alphabet of {n_faces} faces {lexicon.alphabet.describe()}"
    )


def encode_boards(boards: Sequence[Board], lexicon: CompiledLexicon) -> np.ndarray:
    """Boards of one shape -> int8 [n, cells]; a face outside the alphabet is a BoardError."""
    alphabet = lexicon.alphabet
    out = np.empty((len(boards), boards[0].n_cells if boards else 0), dtype=np.int8)
    for i, b in enumerate(boards):
        try:
            out[i] = alphabet.encode(b.faces)
        except BoardError as exc:
            # name the board only on failure: formatting a 100x100 board costs more than solving it
            raise BoardError(exc.message.replace("board:", f"board {b}:", 1)) from None
    return out


BatchSolver = Callable[[Sequence[Board], CompiledLexicon], BatchResult]


def solve_trie_batch(boards: Sequence[Board], lexicon: CompiledLexicon) -> BatchResult:
    """Boards of one shape through the trie kernel."""
    rows, cols = boards[0].shape
    return solve_arrays(encode_boards(boards, lexicon), rows, cols, lexicon)


def solve_boards(
    boards: Sequence[Board], lexicon: CompiledLexicon, solve_batch: BatchSolver = solve_trie_batch
) -> list[BoardResult]:
    """Solve boards of any shapes, one shape at a time with ``solve_batch`` (boards of one
    shape -> :class:`BatchResult`; the trie kernel by default). Results come in input order."""
    results: list[BoardResult | None] = [None] * len(boards)
    by_shape: dict[tuple[int, int], list[int]] = {}
    for i, b in enumerate(boards):
        by_shape.setdefault(b.shape, []).append(i)
    words = lexicon.words
    for idx in by_shape.values():
        batch = solve_batch([boards[i] for i in idx], lexicon)
        ids = batch.sorted_ids()
        for k, i in enumerate(idx):
            mine = ids[batch.offsets[k] : batch.offsets[k + 1]]
            results[i] = BoardResult(
                boards[i],
                [words[j] for j in mine],
                [int(lexicon.word_points[j]) for j in mine],
                int(batch.score[k]),
                int(batch.longest[k]),
                int(batch.dead_cells[k]),
            )
    return [r for r in results if r is not None]


def kernel_cache_dirs() -> list[Path]:
    """Where numba keeps the kernel's machine code: ``__pycache__`` beside the module, or
    ``$NUMBA_CACHE_DIR``."""
    roots = [Path(__file__).parent / "__pycache__", Path(__file__).parent / "kernels" / "__pycache__"]
    if (numba_dir := settings.get().numba_cache_dir) is not None:
        roots.append(numba_dir)
    return roots


def kernel_needs_compile(roots: Sequence[Path] | None = None, module: str = "_drive") -> bool:
    """True when numba has no cached machine code yet for the kernels of ``module`` (a module
    of this package or its kernels: ``_drive`` (the trie walks), ``_dp``, ``_binary``,
    ``_summary``); the first run on a machine compiles them, which takes several seconds. A
    name that is no such module is a bug (its cache would never be found): InternalError."""
    here = Path(__file__).parent
    if not any((folder / f"{module}.py").is_file() for folder in (here, here / "kernels")):
        from pipeline.errors import InternalError

        raise InternalError(f"kernel_needs_compile: no module {module!r} in pipeline.solve")
    dirs = kernel_cache_dirs() if roots is None else roots
    return not any(any(d.rglob(f"{module}.*.nbi")) for d in dirs if d.is_dir())


def __getattr__(name: str) -> object:
    if name not in _LATER:
        raise AttributeError(f"module 'pipeline.solve' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"pipeline.solve.{_LATER[name]}"), name)
