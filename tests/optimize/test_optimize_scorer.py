"""The search kernels against the batch solver and the reference solver."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from pipeline.best.optimize import OptimizeConfig
from pipeline.best.optimize._objectives import make_objective
from pipeline.best.optimize._run import prepare
from pipeline.best.optimize._scorer import Scorer, Tables
from pipeline.best.optimize._space import apply_move
from pipeline.boards import Board, parse_compact
from pipeline.solve import encode_boards, solve_arrays
from pipeline.solve._reference import ReferenceSolver

BEST_4X4 = "perslatgsineters"  # docs/rules.md: 3625 points, 1045 words with ENABLE2K


def test_kernel_scores_the_known_best_board(enable2k_path: str) -> None:
    _, lexicon, _, _, tables = prepare(OptimizeConfig(enable2k_path))
    board = encode_boards([parse_compact(BEST_4X4)], lexicon)[0]
    assert Scorer(tables).score(board) == 3625
    words = make_objective(lexicon, "words")
    assert Scorer(Tables.of(words, 4, 4)).score(board) == 1045


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 5)])
def test_score_kernels_match_batch_solver(
    enable2k_path: str, shape: tuple[int, int], random_boards: Callable[..., np.ndarray]
) -> None:
    rows, cols = shape
    _, lexicon, _, _, tables = prepare(OptimizeConfig(enable2k_path, shape=f"{rows}x{cols}"))
    rng = np.random.default_rng(7)
    boards = random_boards(rng, len(lexicon.alphabet), 200, rows * cols)
    best = encode_boards([parse_compact(BEST_4X4)], lexicon)[0]
    if shape == (4, 4):
        boards[:20] = best  # high-scoring boards exercise long words
        boards[1:20, rng.integers(0, 16, 19)] = rng.integers(0, 26, 19)
    want = solve_arrays(boards, rows, cols, lexicon, collect=False).score
    scorer = Scorer(tables)
    assert scorer.score_many(boards).tolist() == want.tolist()
    # the wildcard walk gives each cell's every face at once
    for b in boards[:12]:
        for cell in range(0, rows * cols, 3):
            variants = np.repeat(b[None], len(lexicon.alphabet), 0)
            variants[:, cell] = np.arange(len(lexicon.alphabet))
            want_cell = solve_arrays(variants, rows, cols, lexicon, collect=False).score
            got = _cell_scores(scorer, b, cell, len(lexicon.alphabet))
            assert got.tolist() == want_cell.tolist()


def _cell_scores(scorer: Scorer, board: np.ndarray, cell: int, n_faces: int) -> np.ndarray:
    return scorer.cell_scores(board, cell, n_faces)


@pytest.mark.parametrize("dice", [None, "new"])
def test_neighbourhood_scores_every_move(enable2k_path: str, dice: str | None) -> None:
    _, lexicon, _, space, tables = prepare(OptimizeConfig(enable2k_path, dice=dice))
    scorer = Scorer(tables)
    rng = np.random.default_rng(3)
    for _ in range(3):
        die, fidx = space.random_state(rng)
        kind, a, b, score = scorer.neighbourhood(space, die, fidx)
        faces = space.faces(die, fidx)
        boards = np.stack(
            [
                space.faces(*apply_move(die, fidx, int(k), int(x), int(y)))
                for k, x, y in zip(kind, a, b, strict=True)
            ]
        )
        # every neighbour differs from the board, and none is listed twice
        assert (boards != faces).any(axis=1).all()
        assert len({r.tobytes() for r in boards}) == len(boards)
        want = solve_arrays(boards, 4, 4, lexicon, collect=False).score
        assert score.tolist() == want.tolist()
        n_swaps = sum(1 for i in range(16) for j in range(i + 1, 16) if faces[i] != faces[j])
        assert (kind == 1).sum() == n_swaps
        if dice is None:
            assert (kind == 0).sum() == 16 * (len(lexicon.alphabet) - 1)


def test_score_kernel_matches_reference_solver(small, random_boards: Callable[..., np.ndarray]) -> None:  # type: ignore[no-untyped-def]
    _, lexicon, _, _, tables = small
    ref = ReferenceSolver(lexicon.words, lexicon.rules)
    rng = np.random.default_rng(11)
    faces = lexicon.alphabet.faces
    scorer = Scorer(tables)
    for row in random_boards(rng, len(faces), 30, 16):
        board = Board(4, 4, tuple("" if f < 0 else faces[f] for f in row))
        assert scorer.score(row) == ref.solve(board).score
