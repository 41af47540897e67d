"""The search space: canonical forms under symmetry, moves that keep dice boards rollable."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.best.optimize import OptimizeConfig, optimize
from pipeline.best.optimize._anneal import AnnealState
from pipeline.best.optimize._run import prepare
from pipeline.best.optimize._scorer import Scorer
from pipeline.best.optimize._space import (
    apply_move,
    canonical_key,
    dice_space,
    free_space,
    key_faces,
    shape_symmetries,
)
from pipeline.boards import Board, canonical, symmetries

face_strategy = st.sampled_from(["a", "e", "qu", "s", "t", "", "th"])


@given(st.lists(face_strategy, min_size=16, max_size=16))
@settings(max_examples=100, deadline=None)
def test_all_symmetries_share_one_canonical_key(faces: list[str]) -> None:
    from pipeline.lexicon.trie import Alphabet

    alphabet = Alphabet.from_faces(["a", "e", "qu", "s", "t", "th"])
    board = Board(4, 4, tuple(faces))
    perms = shape_symmetries(4, 4)
    assert len(perms) == 8
    keys = {canonical_key(alphabet.encode(s.faces), perms)[0] for s in symmetries(board)}
    assert len(keys) == 1
    # and the key is pipeline.boards.canonical's board
    key = keys.pop()
    names = alphabet.faces
    assert tuple("" if f < 0 else names[f] for f in key_faces(key)) == canonical(board).faces


def test_rectangles_use_the_four_shape_preserving_symmetries() -> None:
    perms = shape_symmetries(3, 5)
    assert len(perms) == 4
    faces = np.arange(15, dtype=np.int8)
    images = {canonical_key(faces[p], perms)[0] for p in perms}
    assert len(images) == 1


@given(seed=st.integers(0, 2**32 - 1), picks=st.lists(st.integers(0, 10**6), min_size=1, max_size=25))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_dice_moves_never_make_an_unrollable_board(small_dict: str, seed: int, picks: list[int]) -> None:
    from pipeline.boards import load_dice_set

    _, lexicon, _, space, tables = prepare(OptimizeConfig(small_dict, dice="new"))
    dice = load_dice_set("new")
    scorer = Scorer(tables)
    die, fidx = space.random_state(np.random.default_rng(seed))
    names = lexicon.alphabet.faces

    def rollable(d: np.ndarray, f: np.ndarray) -> bool:
        board = Board(4, 4, tuple(names[x] for x in space.faces(d, f)))
        return sorted(d.tolist()) == list(range(16)) and dice.can_roll(board)

    assert rollable(die, fidx)
    for pick in picks:
        kind, a, b, _ = scorer.neighbourhood(space, die, fidx)
        m = pick % len(kind)
        die, fidx = apply_move(die, fidx, int(kind[m]), int(a[m]), int(b[m]))
        assert rollable(die, fidx)
    # annealing moves too
    state = AnnealState.start(die, fidx, scorer.score(space.faces(die, fidx)))
    cfg = OptimizeConfig(small_dict, t_start=50, t_end=1, cycle=300)
    state.advance(scorer, space, 0, 300, cfg, seed % 2**31)
    assert rollable(state.die, state.fidx) and rollable(state.best_die, state.best_fidx)
    assert scorer.score(space.faces(state.die, state.fidx)) == state.score
    assert scorer.score(space.faces(state.best_die, state.best_fidx)) == state.best_score >= state.score


def test_dice_search_reports_rollable_boards(small_dict: str) -> None:
    from pipeline.boards import load_dice_set

    res = optimize(
        OptimizeConfig(small_dict, dice="new", strategy="hill", restarts=2, iterations=4, pool_size=8)
    )
    dice = load_dice_set("new")
    assert res.boards and all(dice.can_roll(b.board) for b in res.boards)


def test_free_and_dice_spaces() -> None:
    from pipeline.boards import load_dice_set
    from pipeline.lexicon.trie import Alphabet

    space = free_space(2, 3, 26)
    assert space.table.shape == (6, 26) and (space.n_opts == 26).all()
    alphabet = Alphabet.english()
    dspace = dice_space(4, 4, load_dice_set("new"), alphabet)
    assert (dspace.n_opts == 6).all()
    assert alphabet.faces[dspace.table[0, 0]] == load_dice_set("new").dice[0][0]
