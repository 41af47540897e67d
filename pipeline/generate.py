"""Seeded, chunked board generation.

Chunk ``k`` of a run rolls its boards with ``numpy.random.default_rng(children[k])`` where
``children = numpy.random.SeedSequence(seed).spawn(n_chunks)``, so the boards depend only on
(dice, shape, count, chunk_size, seed): never on the number of workers, the backend, the order
chunks finish in, or whether a run was resumed. A child's stream depends only on (seed, k), so a
larger ``count`` with the same seed and chunk size starts with the same boards.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from pipeline.boards import compact_strings, parse_shape
from pipeline.dice import GENERATORS, dice_set_names, generate_boards, generator_alphabet, load_dice_set
from pipeline.errors import BoggleError, ConfigError
from pipeline.tanglet import TANGLET_PREFIX
from pipeline.trie import Alphabet

DEFAULT_CHUNK_SIZE = 10_000


def generator_shape(dice: str, shape: str | None, where: str | None) -> tuple[int, int]:
    """The board shape for a generator: the dice set's, or ``shape`` (default 4x4) for the
    letter generators and Tanglet packs. ``where`` names the config file in errors."""
    wanted = parse_shape(shape) if shape else None
    if dice in GENERATORS:
        return wanted or (4, 4)
    if dice.startswith(TANGLET_PREFIX):
        rows, cols = wanted or (4, 4)
        d = load_dice_set(dice, rows, cols)
        return d.rows, d.cols
    if dice not in dice_set_names():
        choices = ", ".join([*dice_set_names(), *GENERATORS, "tanglet:<lang>"])
        raise ConfigError(f"[boards] dice: unknown dice set {dice!r}; choose one of {choices}", source=where)
    d = load_dice_set(dice)
    if wanted is not None and wanted != (d.rows, d.cols):
        raise ConfigError(
            f"[boards] shape: dice set {dice!r} rolls {d.rows}x{d.cols} boards, not {wanted[0]}x{wanted[1]}",
            source=where,
        )
    return d.rows, d.cols


@dataclass(frozen=True)
class GenerateChunk:
    """One chunk of generated boards: ``count`` boards with ids ``start .. start+count-1``."""

    chunk: int
    start: int
    count: int


def chunk_plan(count: int, chunk_size: int) -> list[GenerateChunk]:
    """Split ``count`` boards into chunks of ``chunk_size`` (the last may be smaller)."""
    if count < 0 or chunk_size < 1:
        raise BoggleError(f"count must be >= 0 and chunk_size >= 1, got {count} and {chunk_size}")
    return [
        GenerateChunk(k, start, min(chunk_size, count - start))
        for k, start in enumerate(range(0, count, chunk_size))
    ]


def chunk_seeds(seed: int, n_chunks: int) -> list[np.random.SeedSequence]:
    """One independent seed sequence per chunk."""
    return np.random.SeedSequence(seed).spawn(n_chunks)


def chunk_seed(seed: int, chunk: int) -> np.random.SeedSequence:
    """``chunk_seeds(seed, n)[chunk]`` for any n > chunk, without spawning the others."""
    return np.random.SeedSequence(seed, spawn_key=(chunk,))


def generate_chunk(
    dice: str, alphabet: Alphabet, seed: int, chunk: GenerateChunk, rows: int, cols: int
) -> np.ndarray:
    """The boards of one chunk: int8 [chunk.count, rows*cols] encoded for ``alphabet``."""
    rng = np.random.default_rng(chunk_seed(seed, chunk.chunk))
    return generate_boards(dice, alphabet, rng, chunk.count, rows, cols)


def iter_generated(
    dice: str,
    count: int,
    seed: int,
    rows: int,
    cols: int,
    chunk_size: int,
    alphabet: Alphabet | None = None,
) -> Iterator[tuple[GenerateChunk, np.ndarray]]:
    """Every chunk of a generated run in order, with its encoded boards."""
    alphabet = alphabet or generator_alphabet(dice, rows, cols)
    for ch in chunk_plan(count, chunk_size):
        yield ch, generate_chunk(dice, alphabet, seed, ch, rows, cols)


def generate_compact(
    dice: str,
    count: int,
    seed: int,
    shape: tuple[int, int] | None = None,
    chunk_size: int | None = None,
) -> Iterator[str]:
    """The boards a ``boggle run`` with the same dice, count, seed, shape and chunk size
    generates, in compact notation, as blocks of newline-terminated lines (one block a chunk).

    >>> "".join(generate_compact("new", 2, seed=1))  # doctest: +SKIP
    'ncuoerizeriutdaj\\n...'
    """
    rows, cols = generator_shape(dice, f"{shape[0]}x{shape[1]}" if shape else None, None)
    alphabet = generator_alphabet(dice, rows, cols)
    size = chunk_size or DEFAULT_CHUNK_SIZE
    for _, boards in iter_generated(dice, count, seed, rows, cols, size, alphabet):
        lines = compact_strings(boards, alphabet.faces).to_pylist()
        yield "".join(f"{line}\n" for line in lines)
