from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.boards import (
    BLANK,
    QU,
    Board,
    canonical,
    format_algs4,
    format_compact,
    format_grid,
    geometry,
    parse_algs4,
    parse_board_text,
    parse_compact,
    parse_grid,
    parse_shape,
    symmetries,
)
from pipeline.errors import BoardError

FACES = ["a", "b", "e", "s", "t", QU, "q", "th", "in", "ą", "ł", "ж", "·l", BLANK]


@st.composite
def boards(draw: st.DrawFn, faces: list[str] = FACES, max_side: int = 6) -> Board:
    rows = draw(st.integers(1, max_side))
    cols = draw(st.integers(1, max_side))
    cells = draw(st.lists(st.sampled_from(faces), min_size=rows * cols, max_size=rows * cols))
    return Board(rows, cols, tuple(cells))


def test_compact_q_is_qu_and_shape_is_inferred() -> None:
    b = parse_compact("qaaabbbbccccdddd")
    assert (b.rows, b.cols) == (4, 4)
    assert b.faces[0] == "qu"
    assert b.faces[1:4] == ("a", "a", "a")


def test_compact_brackets_blanks_and_case() -> None:
    b = parse_compact("A[Th].[q]", (2, 2))
    assert b.faces == ("a", "th", "", "q")
    assert format_compact(b) == "a[th].[q]"


def test_compact_non_square_needs_shape() -> None:
    with pytest.raises(BoardError, match="not a square number"):
        parse_compact("abcdef")
    assert parse_compact("abcdef", (2, 3)).shape == (2, 3)
    with pytest.raises(BoardError, match="expected 6 for 3x2"):
        parse_compact("abcde", (3, 2))


@pytest.mark.parametrize(
    "text, problem", [("ab1d", "position 3"), ("ab d", "position 3"), ("a[b", "without a closing")]
)
def test_compact_errors_name_the_position(text: str, problem: str) -> None:
    with pytest.raises(BoardError, match=problem):
        parse_compact(text)


def test_grid_text_and_errors() -> None:
    b = parse_grid("a b\nqu .\n")
    assert b.faces == ("a", "b", "qu", "")
    with pytest.raises(BoardError, match="line 2: expected 2 faces"):
        parse_grid("a b\nc d e")
    with pytest.raises(BoardError, match="line 1, token 2"):
        parse_grid("a 7\nc d")


def test_algs4_q_and_qu_both_mean_qu() -> None:
    b = parse_algs4("2 3\nQ U A\nQu B C\n")
    assert b.faces == ("qu", "u", "a", "qu", "b", "c")
    assert format_algs4(b) == "2 3\nQu U A\nQu B C"
    with pytest.raises(BoardError, match="expected 4 faces for a 2x2 board, found 3"):
        parse_algs4("2 2\nA B C")
    with pytest.raises(BoardError, match="line 1: expected 'ROWS COLS'"):
        parse_algs4("2 x\nA B C D")


def test_parse_board_text_detects_notation() -> None:
    assert len(parse_board_text("abcd\nefgh\n\nijkl\n")) == 3
    grids = parse_board_text("a b\nc d\n\ne f\ng h\n")
    assert [b.faces for b in grids] == [("a", "b", "c", "d"), ("e", "f", "g", "h")]
    assert parse_board_text("2 2\nQ A\nB C\n")[0].faces == ("qu", "a", "b", "c")
    with pytest.raises(BoardError) as exc:
        parse_board_text("abcd\nab9d\n", source="f.txt")
    assert exc.value.one_line().startswith("f.txt:2: ")


@given(boards())
def test_compact_round_trip(board: Board) -> None:
    assert parse_compact(format_compact(board), board.shape) == board


@given(boards())
def test_grid_round_trip(board: Board) -> None:
    assert parse_grid(format_grid(board)) == board


@given(boards(faces=[f for f in FACES if f != "q"]))
def test_algs4_round_trip(board: Board) -> None:
    assert parse_algs4(format_algs4(board)) == board


def test_shape_parsing() -> None:
    assert parse_shape("3x5") == (3, 5)
    assert parse_shape("4 X 4") == (4, 4)
    with pytest.raises(BoardError):
        parse_shape("4by4")


def test_geometry_neighbour_counts() -> None:
    g = geometry(4, 4)
    assert g.deg.tolist() == [3, 5, 5, 3, 5, 8, 8, 5, 5, 8, 8, 5, 3, 5, 5, 3]
    assert sorted(g.neighbours(0)) == [1, 4, 5]
    assert int(g.nbr_mask[5]) == sum(1 << c for c in (0, 1, 2, 4, 6, 8, 9, 10))
    assert geometry(1, 1).deg.tolist() == [0]
    assert geometry(1, 3).deg.tolist() == [1, 2, 1]
    big = geometry(100, 100)
    assert big.deg.sum() == 8 * 98 * 98 + 5 * 4 * 98 + 3 * 4
    assert int(big.nbr_mask.max()) == 0  # masks only exist for <= 64 cells


@given(boards(max_side=5))
def test_eight_symmetries_share_one_canonical_form(board: Board) -> None:
    syms = symmetries(board)
    assert len(syms) == 8
    assert len({canonical(s) for s in syms}) == 1
    assert sorted(syms[0].faces) == sorted(board.faces)


def test_square_symmetries_are_distinct_for_an_asymmetric_board() -> None:
    b = parse_compact("abcdefghi")
    assert len({s.faces for s in symmetries(b)}) == 8
