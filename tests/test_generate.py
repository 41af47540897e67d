"""Seeded chunked generation: boards depend only on (dice, shape, count, chunk size, seed)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.boards import (
    chunk_plan,
    chunk_seed,
    chunk_seeds,
    generate_boards,
    generate_chunk,
    generate_compact,
    generator_alphabet,
    iter_generated,
    load_dice_set,
    parse_compact,
)
from pipeline.errors import BoggleError


def test_chunk_plan_covers_every_board_once() -> None:
    plan = chunk_plan(10, 4)
    assert [(c.chunk, c.start, c.count) for c in plan] == [(0, 0, 4), (1, 4, 4), (2, 8, 2)]
    assert chunk_plan(8, 4)[-1].count == 4 and len(chunk_plan(8, 4)) == 2
    assert chunk_plan(0, 4) == []
    with pytest.raises(BoggleError):
        chunk_plan(5, 0)


def test_chunk_seed_is_the_spawned_child() -> None:
    children = chunk_seeds(42, 5)
    for k, child in enumerate(children):
        mine = chunk_seed(42, k)
        assert mine.spawn_key == child.spawn_key == (k,)
        assert np.array_equal(mine.generate_state(4), child.generate_state(4))


def test_chunk_boards_use_the_chunk_seed_with_generate_boards() -> None:
    alphabet = generator_alphabet("new")
    plan = chunk_plan(30, 10)
    got, layout = generate_chunk("new", alphabet, 7, plan[1], 4, 4)
    rng = np.random.default_rng(np.random.SeedSequence(7).spawn(3)[1])
    assert np.array_equal(got, generate_boards("new", alphabet, rng, 10, 4, 4))
    # the dice behind them: every cell's die and side, the same draws as the boards
    assert layout is not None
    dice, order, side = layout
    assert order.shape == side.shape == (10, 16)
    assert np.array_equal(dice.face_table(alphabet)[order, side], got)
    # a letter generator rolls no dice
    boards, none = generate_chunk("uniform", generator_alphabet("uniform"), 7, plan[1], 4, 4)
    assert none is None and boards.shape == (10, 16)


def test_boards_do_not_depend_on_order_or_count() -> None:
    alphabet = generator_alphabet("classic")
    forward = dict(iter_generated("classic", 50, 3, 4, 4, 10, alphabet))
    plan = chunk_plan(50, 10)
    backward = {c: generate_chunk("classic", alphabet, 3, c, 4, 4)[0] for c in reversed(plan)}
    for c in plan:
        assert np.array_equal(forward[c], backward[c])
    # more boards with the same seed and chunk size: the first chunks are the same
    longer = dict(iter_generated("classic", 80, 3, 4, 4, 10, alphabet))
    for c in plan:
        assert np.array_equal(forward[c], longer[c])
    # another seed gives other boards
    other = generate_chunk("classic", alphabet, 4, plan[0], 4, 4)[0]
    assert not np.array_equal(other, forward[plan[0]])


def test_generate_compact_prints_rollable_boards() -> None:
    lines = "".join(generate_compact("new", 25, seed=9, chunk_size=10)).splitlines()
    assert len(lines) == 25
    dice = load_dice_set("new")
    assert all(dice.can_roll(parse_compact(line)) for line in lines)
    assert lines == "".join(generate_compact("new", 25, seed=9, chunk_size=10)).splitlines()
    assert lines != "".join(generate_compact("new", 25, seed=10, chunk_size=10)).splitlines()


def test_generate_compact_shapes() -> None:
    lines = "".join(generate_compact("uniform", 5, seed=1, shape=(3, 5))).splitlines()
    assert all(parse_compact(line, (3, 5)).shape == (3, 5) for line in lines)
    big = "".join(generate_compact("big1979", 3, seed=1)).splitlines()
    assert all(parse_compact(line).shape == (5, 5) for line in big)
