"""Seeded, chunked board generation: the chunk plan, each chunk's seed and boards, and the
boards printed in compact notation (``boggle generate``).

Chunk ``k`` of a run rolls its boards with ``numpy.random.default_rng(children[k])`` where
``children = numpy.random.SeedSequence(seed).spawn(n_chunks)``, so the boards depend only on
(dice, shape, count, chunk_size, seed, placement policy): never on the number of workers, the
backend, the order chunks finish in, or whether a run was resumed. A child's stream depends
only on (seed, k), so a larger ``count`` with the same seed and chunk size starts with the same
boards. Without a placement policy nothing is drawn beyond the dice's permutation and faces
(:func:`pipeline.boards.roll_dice_layout`), so those runs roll what they always rolled.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np

from pipeline.boards._board import compact_strings, format_shape
from pipeline.boards._dice import DiceSet
from pipeline.boards._place import Placement, check_placement, parse_placement
from pipeline.boards._roll import (
    GENERATORS,
    dice_set_for,
    generate_boards,
    generator_alphabet,
    generator_shape,
    load_dice_set,
    roll_dice_layout,
)
from pipeline.errors import BoggleError, ConfigError, InternalError
from pipeline.lexicon.trie import Alphabet

DEFAULT_CHUNK_SIZE = 10_000
# A chunk is solved in one worker's memory: a 4x4 board and its word ids take about 1 kB while it
# is solved, so 1,000,000 boards a chunk is about 1 GB a worker (10,000,000 was about 20 GB).
MAX_CHUNK_SIZE = 1_000_000
# Larger boards hold more bytes and find more words: a chunk is capped at the cells of
# MAX_CHUNK_SIZE 4x4 boards (a 100x100 run takes chunks of at most 1,600 boards).
MAX_CHUNK_CELLS = 16 * MAX_CHUNK_SIZE
# A run has at most pipeline.store.MAX_PART chunks (pipeline.config checks they agree): with
# the chunk size, this caps what a run may ask for, refused in one line before anything is
# allocated or any directory made.
MAX_CHUNKS = 999_999
MAX_COUNT = MAX_CHUNKS * MAX_CHUNK_SIZE  # 999,999,000,000: far below int64 board ids


@dataclass(frozen=True)
class GenerateChunk:
    """One chunk of generated boards: ``count`` boards with ids ``start .. start+count-1``."""

    chunk: int
    start: int
    count: int


class ChunkPlan(Sequence[GenerateChunk]):
    """The chunks of ``count`` boards in chunks of ``chunk_size``, made as they are asked for:
    ``boggle generate`` prints its first boards at once for any count, and nothing holds one
    object per chunk of a huge run."""

    def __init__(self, count: int, chunk_size: int):
        self.boards = count  # not ``count``: Sequence.count is a method
        self.chunk_size = chunk_size

    def __len__(self) -> int:
        return -(-self.boards // self.chunk_size)

    @overload
    def __getitem__(self, k: int) -> GenerateChunk: ...
    @overload
    def __getitem__(self, k: slice) -> Sequence[GenerateChunk]: ...
    def __getitem__(self, k: int | slice) -> GenerateChunk | Sequence[GenerateChunk]:
        if isinstance(k, slice):
            return [self[i] for i in range(len(self))[k]]
        n = len(self)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError(k)
        start = k * self.chunk_size
        return GenerateChunk(k, start, min(self.chunk_size, self.boards - start))

    def __iter__(self) -> Iterator[GenerateChunk]:
        for k in range(len(self)):
            yield self[k]

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, ChunkPlan):
            same = (self.boards, self.chunk_size) == (other.boards, other.chunk_size)
            return same or len(self) == len(other) == 0
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ChunkPlan(count={self.boards}, chunk_size={self.chunk_size})"


def chunk_plan(count: int, chunk_size: int) -> ChunkPlan:
    """Split ``count`` boards into chunks of ``chunk_size`` (the last may be smaller), lazily."""
    if count < 0 or chunk_size < 1:
        # callers check the user's values first: reaching this is a bug
        raise InternalError(f"count must be >= 0 and chunk_size >= 1, got {count} and {chunk_size}")
    return ChunkPlan(count, chunk_size)


def check_chunk_cells(chunk_size: int, rows: int, cols: int, where: str | None = None) -> None:
    """ConfigError when a chunk of ``chunk_size`` boards of this shape exceeds MAX_CHUNK_CELLS."""
    cells = rows * cols
    if chunk_size * cells > MAX_CHUNK_CELLS:
        raise ConfigError(
            f"[boards] chunk_size: {chunk_size:,} boards of {format_shape(rows, cols)} are "
            f"{chunk_size * cells:,} cells a chunk, more than {MAX_CHUNK_CELLS:,}; set chunk_size "
            f"to at most {max(1, MAX_CHUNK_CELLS // cells):,}",
            source=where,
        )


def chunk_seeds(seed: int, n_chunks: int) -> list[np.random.SeedSequence]:
    """One independent seed sequence per chunk."""
    return np.random.SeedSequence(seed).spawn(n_chunks)


def chunk_seed(seed: int, chunk: int) -> np.random.SeedSequence:
    """``chunk_seeds(seed, n)[chunk]`` for any n > chunk, without spawning the others."""
    return np.random.SeedSequence(seed, spawn_key=(chunk,))


def as_placement(placement: str | Placement | None) -> Placement | None:
    """A placement policy as given (its text, as a config records it, or parsed)."""
    return parse_placement(placement) if isinstance(placement, str) else placement


def chunk_dice_layout(
    dice: DiceSet, seed: int, chunk: int, count: int, placement: str | Placement | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The die on each cell and the side it shows, ``(order, side)``, of the ``count`` boards of
    chunk ``chunk``: the draws of its stream, with the placement policy applied. The worker
    rolls its chunk with it, and the analysis re-rolls a chunk with it."""
    rng = np.random.default_rng(chunk_seed(seed, chunk))
    return roll_dice_layout(dice, rng, count, as_placement(placement))


def generate_chunk(
    dice: str | DiceSet,
    alphabet: Alphabet,
    seed: int,
    chunk: GenerateChunk,
    rows: int,
    cols: int,
    placement: str | Placement | None = None,
) -> tuple[np.ndarray, tuple[DiceSet, np.ndarray, np.ndarray] | None]:
    """The boards of one chunk, int8 [chunk.count, rows*cols] encoded for ``alphabet``, with the
    dice behind them: the set, the die on each cell and the side each shows, as placed (None for
    the letter generators, which roll no dice). A worker records the dice so the analysis need
    not re-roll the chunk."""
    if isinstance(dice, str) and dice in GENERATORS:
        rng = np.random.default_rng(chunk_seed(seed, chunk.chunk))
        boards = generate_boards(dice, alphabet, rng, chunk.count, rows, cols, as_placement(placement))
        return boards, None
    d = dice_set_for(dice, rows, cols)
    order, side = chunk_dice_layout(d, seed, chunk.chunk, chunk.count, placement)
    return d.face_table(alphabet)[order, side], (d, order, side)


def iter_generated(
    dice: str,
    count: int,
    seed: int,
    rows: int,
    cols: int,
    chunk_size: int,
    alphabet: Alphabet | None = None,
    placement: str | Placement | None = None,
) -> Iterator[tuple[GenerateChunk, np.ndarray]]:
    """Every chunk of a generated run in order, with its encoded boards."""
    alphabet = alphabet or generator_alphabet(dice, rows, cols)
    policy = as_placement(placement)
    for ch in chunk_plan(count, chunk_size):
        yield ch, generate_chunk(dice, alphabet, seed, ch, rows, cols, policy)[0]


def generate_compact(
    dice: str,
    count: int,
    seed: int,
    shape: tuple[int, int] | None = None,
    chunk_size: int | None = None,
    placement: str | None = None,
) -> Iterator[str]:
    """The boards a ``boggle run`` with the same dice, count, seed, shape, chunk size and
    placement policy generates, in compact notation, as blocks of newline-terminated lines
    (one block a chunk).

    >>> "".join(generate_compact("new", 2, seed=1))  # doctest: +SKIP
    'ncuoerizeriutdaj\\n...'

    The limits of a run apply (count, chunk size, cells), checked before anything is made.
    """
    if count > MAX_COUNT:
        raise ConfigError(f"count: at most {MAX_COUNT:,}, got {count:,}")
    size = chunk_size or DEFAULT_CHUNK_SIZE
    if size > MAX_CHUNK_SIZE:
        raise ConfigError(f"chunk_size: at most {MAX_CHUNK_SIZE:,}, got {size:,}")
    rows, cols = generator_shape(dice, f"{shape[0]}x{shape[1]}" if shape else None, None)
    check_chunk_cells(size, rows, cols)
    alphabet = generator_alphabet(dice, rows, cols)
    policy = None
    if placement is not None:
        policy = parse_placement(placement)
        if dice in GENERATORS:
            raise BoggleError(f"placement {policy.text!r}: the {dice} generator rolls no dice to place")
        check_placement(policy, load_dice_set(dice, rows, cols))
    for _, boards in iter_generated(dice, count, seed, rows, cols, size, alphabet, policy):
        lines = compact_strings(boards, alphabet.faces).to_pylist()
        yield "".join(f"{line}\n" for line in lines)
