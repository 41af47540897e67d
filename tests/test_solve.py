"""The kernel against golden values and against the plain reference solver."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.boards import Board, parse_compact, symmetries
from pipeline.lexicon import CompiledLexicon, DropReport, Lexicon, compile_words
from pipeline.lexicon.trie import Alphabet
from pipeline.rules import Rules, get_rules
from pipeline.solve import solve_arrays, solve_boards
from pipeline.solve._reference import ReferenceSolver
from tests.conftest import ENABLE2K


def lexicon_of(words: list[str], rules: Rules, faces: list[str] | None = None) -> CompiledLexicon:
    lex = Lexicon("test", "test", "0", sorted(set(words)), DropReport(len(set(words))))
    alphabet = Alphabet.from_faces(faces) if faces else Alphabet.compact_for(lex.words)
    return compile_words(lex, alphabet, rules)


def solve_one(board: Board, lexicon: CompiledLexicon):  # type: ignore[no-untyped-def]
    return solve_boards([board], lexicon)[0]


# ------------------------------------------------------------------ golden values


def test_perslatgsineters_scores_3625_from_1045_words(enable_lexicon: CompiledLexicon) -> None:
    res = solve_one(parse_compact("perslatgsineters"), enable_lexicon)
    assert res.score == 3625
    assert res.n_words == 1045
    assert res.words == sorted(res.words) and len(set(res.words)) == 1045
    assert res.dead_cells == 0


def test_qu_cell_counts_two_letters(enable_lexicon: CompiledLexicon) -> None:
    # qu i / e t: quite = qu-i-t-e is 5 letters (2 points) on 4 cells
    res = solve_one(parse_compact("qiet"), enable_lexicon)
    pts = dict(zip(res.words, res.points, strict=True))
    assert pts["quite"] == 2 and pts["quiet"] == 2 and pts["quit"] == 1
    assert "qat" not in pts and "tie" in pts
    ref = ReferenceSolver(enable_lexicon.words, enable_lexicon.rules).solve(parse_compact("qiet"))
    assert set(res.words) == ref.words and res.score == ref.score


def test_word_with_two_paths_counts_once() -> None:
    lex = lexicon_of(["baa", "abba", "bab"], get_rules("boggle"))
    # a a / b b: every cell touches every other, so baa, abba and bab each have several paths
    res = solve_one(parse_compact("aabb"), lex)
    assert res.words == ["abba", "baa", "bab"]
    assert res.score == 3


def test_one_by_one_and_one_by_n() -> None:
    rules1 = get_rules("boggle", min_length=1)
    lex = lexicon_of(["a", "at", "cat", "act", "tac"], rules1, list(Alphabet.english().faces))
    assert solve_one(parse_compact("a"), lex).words == ["a"]
    assert solve_one(parse_compact("z"), lex).words == []
    assert solve_one(parse_compact("z"), lex).dead_cells == 1
    res = solve_one(parse_compact("cat", (1, 3)), lex)
    assert res.words == ["a", "at", "cat", "tac"]  # act needs c next to t
    three = lexicon_of(["cat", "act", "tac"], get_rules("boggle"))
    assert solve_one(parse_compact("cat", (1, 3)), three).words == ["cat", "tac"]
    assert solve_one(parse_compact("cat", (3, 1)), three).words == ["cat", "tac"]


def test_blank_faces_block_paths() -> None:
    lex = lexicon_of(["cat", "tac", "at"], get_rules("boggle", min_length=2))
    res = solve_one(parse_compact("ca.t", (1, 4)), lex)
    assert res.words == []
    assert res.dead_cells == 3  # the blank is not a dead cell
    res = solve_one(parse_compact(".act", (2, 2)), lex)
    assert res.words == ["at", "cat", "tac"]


def test_non_ascii_lexicon_and_board() -> None:
    lex = lexicon_of(["łąka", "kał", "żuk"], get_rules("boggle"))
    res = solve_one(parse_compact("łąak"), lex)
    assert res.words == ["kał", "łąka"]
    assert res.score == 2


def test_multi_letter_faces() -> None:
    words = ["the", "then", "thin", "hint", "tin"]
    lex = lexicon_of(words, get_rules("boggle"), ["e", "h", "i", "in", "n", "t", "th"])
    board = Board(2, 2, ("th", "e", "in", "n"))
    res = solve_one(board, lex)
    assert res.words == ["the", "then", "thin"]
    assert res.longest == 4


def test_non_square_board_matches_reference(enable_lexicon: CompiledLexicon) -> None:
    board = parse_compact("seratplnigsetaers", (1, 17))
    ref = ReferenceSolver(enable_lexicon.words, enable_lexicon.rules).solve(board)
    res = solve_one(board, enable_lexicon)
    assert set(res.words) == ref.words and res.score == ref.score
    board = parse_compact("perslatgsinetersabc", (1, 19))
    assert (
        solve_one(board, enable_lexicon).score
        == ReferenceSolver(enable_lexicon.words, enable_lexicon.rules).solve(board).score
    )


def test_100x100_board_matches_reference(enable_words: list[str]) -> None:
    rng = np.random.default_rng(7)
    words = [enable_words[i] for i in rng.choice(len(enable_words), 3000, replace=False)]
    rules = get_rules("boggle")
    lex = lexicon_of(words, rules, list(Alphabet.english().faces))
    faces = Alphabet.english().faces
    board = Board(100, 100, tuple(faces[i] for i in rng.integers(0, len(faces), 10_000)))
    res = solve_one(board, lex)
    ref = ReferenceSolver(lex.words, rules).solve(board)
    assert set(res.words) == ref.words
    assert (res.score, res.dead_cells, res.longest) == (ref.score, ref.dead_cells, ref.longest)
    assert res.n_words > 200


def test_collect_false_gives_the_same_figures(enable_lexicon: CompiledLexicon) -> None:
    rng = np.random.default_rng(3)
    boards = rng.integers(0, 26, size=(500, 16)).astype(np.int8)
    a = solve_arrays(boards, 4, 4, enable_lexicon)
    b = solve_arrays(boards, 4, 4, enable_lexicon, collect=False)
    assert np.array_equal(a.score, b.score) and np.array_equal(a.n_words, b.n_words)
    assert np.array_equal(np.diff(a.offsets), a.n_words)
    assert b.offsets[-1] == 0


# ------------------------------------------------------------------ kernel == reference

POOL = ["a", "e", "i", "o", "n", "r", "s", "t", "qu", "th", "in", "er", ""]
POOL_LETTERS = set("aeionrstquh")


@cache
def pool_words() -> tuple[str, ...]:
    from pipeline.lexicon import load_lexicon

    words = [w for w in load_lexicon(ENABLE2K).words if set(w) <= POOL_LETTERS and len(w) <= 9]
    return tuple(words[::3])


RULE_CHOICES = {
    "boggle": get_rules("boggle"),
    "big": get_rules("big"),
    "superbig": get_rules("superbig"),
    "min1": get_rules("boggle", min_length=1),
    "revisit": get_rules("boggle", revisit=True),
    "revisit-big": get_rules("big", revisit=True),
}


@cache
def pool_setup(rule_key: str) -> tuple[CompiledLexicon, ReferenceSolver]:
    rules = RULE_CHOICES[rule_key]
    words = list(pool_words())
    lex = lexicon_of(words, rules, [f for f in POOL if f])
    return lex, ReferenceSolver(words, rules)


@st.composite
def pool_boards(draw: st.DrawFn, max_rows: int = 6, max_cols: int = 6) -> Board:
    rows = draw(st.integers(1, max_rows))
    cols = draw(st.integers(1, max_cols))
    faces = draw(st.lists(st.sampled_from(POOL), min_size=rows * cols, max_size=rows * cols))
    return Board(rows, cols, tuple(faces))


def check_against_reference(board: Board, rule_key: str) -> None:
    lex, ref_solver = pool_setup(rule_key)
    res = solve_one(board, lex)
    ref = ref_solver.solve(board)
    assert set(res.words) == ref.words
    assert res.n_words == len(ref.words)
    assert res.score == ref.score
    assert res.dead_cells == ref.dead_cells
    assert res.longest == ref.longest


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pool_boards(), st.sampled_from(sorted(RULE_CHOICES)))
def test_kernel_equals_reference_on_random_boards(board: Board, rule_key: str) -> None:
    check_against_reference(board, rule_key)


# most random shapes up to 10x10 have at most 64 cells, so the filter drops many draws
@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
@given(
    pool_boards(max_rows=10, max_cols=10).filter(lambda b: b.n_cells > 64),
    st.sampled_from(["boggle", "revisit"]),
)
def test_kernel_equals_reference_on_boards_over_64_cells(board: Board, rule_key: str) -> None:
    check_against_reference(board, rule_key)


# the small walk's other layouts: rows of more than one test of lanes (boards of 17-64 cells
# 7+ columns wide), and 64-bit lanes (alphabets of more than 32 faces)
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
@given(
    pool_boards(max_rows=8, max_cols=32).filter(lambda b: b.n_cells <= 64 and b.cols >= 7),
    st.sampled_from(["boggle", "big", "min1"]),
)
def test_kernel_equals_reference_on_wide_boards_up_to_64_cells(board: Board, rule_key: str) -> None:
    check_against_reference(board, rule_key)


#: faces no pool word uses, so that the alphabet has more than 32
PADDING = [f"x{i}" for i in range(24)]


@cache
def wide_setup(rule_key: str) -> tuple[CompiledLexicon, ReferenceSolver]:
    rules = RULE_CHOICES[rule_key]
    words = list(pool_words())
    lex = lexicon_of(words, rules, [f for f in POOL if f] + PADDING)
    assert len(lex.alphabet) > 32
    return lex, ReferenceSolver(words, rules)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pool_boards(max_rows=8, max_cols=8), st.sampled_from(["boggle", "min1", "revisit"]))
def test_kernel_equals_reference_with_more_than_32_faces(board: Board, rule_key: str) -> None:
    lex, ref_solver = wide_setup(rule_key)
    res = solve_one(board, lex)
    ref = ref_solver.solve(board)
    assert set(res.words) == ref.words and res.score == ref.score
    assert res.dead_cells == ref.dead_cells and res.longest == ref.longest


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.sampled_from([(4, 4), (3, 3), (5, 5), (4, 9)]))
def test_the_small_walk_resumes_when_its_hit_buffer_fills(seed: int, shape: tuple[int, int]) -> None:
    # with the least room the walk hands its hits back at nearly every pop and resumes: every
    # output (the ids in the order found included) must be those of the roomy default
    from pipeline.boards import geometry
    from pipeline.solve import kernels, small_records

    lex, _ = pool_setup("boggle")
    rows, cols = shape
    boards = (
        np.random.default_rng(seed).integers(0, len(lex.alphabet), size=(30, rows * cols)).astype(np.int8)
    )
    geo = geometry(rows, cols)
    records = small_records(lex.trie, len(lex.alphabet))
    args = (lex.trie.nodes.reshape(-1), lex.word_points, lex.trie.word_len, lex.trie.max_depth, True, 3, 4)
    args += (records, len(lex.alphabet))
    roomy = kernels.solve_batch(
        kernels.SMALL, boards, geo.nbr_mask, geo.nbr_list, geo.deg, *args, kernels.HIT_ROOM
    )
    tight = kernels.solve_batch(kernels.SMALL, boards, geo.nbr_mask, geo.nbr_list, geo.deg, *args, 1)
    for a, b in zip(roomy, tight, strict=True):
        assert np.array_equal(a, b)


#: with these many more faces the trie's 8-byte records do not fit: boards of <= 64 cells
#: take the walk of any size
HUGE_PADDING = [f"x{i}" for i in range(51)]


@cache
def huge_setup() -> tuple[CompiledLexicon, ReferenceSolver]:
    from pipeline.solve import small_records

    rules = RULE_CHOICES["boggle"]
    words = list(pool_words())
    lex = lexicon_of(words, rules, [f for f in POOL if f] + HUGE_PADDING)
    assert small_records(lex.trie, len(lex.alphabet)) is None
    return lex, ReferenceSolver(words, rules)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pool_boards(max_rows=6, max_cols=6))
def test_kernel_equals_reference_when_the_small_records_do_not_fit(board: Board) -> None:
    lex, ref_solver = huge_setup()
    res = solve_one(board, lex)
    ref = ref_solver.solve(board)
    assert set(res.words) == ref.words and res.score == ref.score
    assert res.dead_cells == ref.dead_cells and res.longest == ref.longest


def test_small_records_hold_the_trie() -> None:
    from pipeline.solve import small_records

    lex, _ = pool_setup("boggle")
    k = len(lex.alphabet)
    records = small_records(lex.trie, k)
    assert records is not None and records is small_records(lex.trie, k)  # made once
    assert np.array_equal(records & np.uint64((1 << k) - 1), lex.trie.mask)
    first = (records >> np.uint64(k)) & np.uint64((1 << (63 - k)) - 1)
    assert np.array_equal(first, lex.trie.first_child.astype(np.uint64))
    assert np.array_equal(records >> np.uint64(63) == 1, lex.trie.word_id >= 0)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["classic", "new", "big1979", "superbig"]))
def test_kernel_equals_reference_on_dice_rolls(enable_words: list[str], seed: int, dice: str) -> None:
    from pipeline.boards import generate_boards, generator_alphabet, load_dice_set

    ds = load_dice_set(dice)
    rules = get_rules({4: "boggle", 5: "big", 6: "superbig"}[ds.rows])
    alphabet = generator_alphabet(dice)
    lex = _dice_lexicon(alphabet, rules.name)
    encoded = generate_boards(dice, alphabet, np.random.default_rng(seed), 1, ds.rows, ds.cols)
    board = Board(ds.rows, ds.cols, tuple(alphabet.faces[i] if i >= 0 else "" for i in encoded[0]))
    res = solve_one(board, lex)
    ref = _reference(rules.name).solve(board)
    assert set(res.words) == ref.words and res.score == ref.score and res.dead_cells == ref.dead_cells


@cache
def _dice_lexicon(alphabet: Alphabet, rules_name: str) -> CompiledLexicon:
    from pipeline.lexicon import load_lexicon

    return compile_words(load_lexicon(ENABLE2K), alphabet, get_rules(rules_name))


@cache
def _reference(rules_name: str) -> ReferenceSolver:
    from pipeline.lexicon import load_lexicon

    return ReferenceSolver(load_lexicon(ENABLE2K).words, get_rules(rules_name))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([(4, 4), (3, 5), (2, 6)]))
def test_score_is_invariant_under_the_8_symmetries(
    enable_lexicon: CompiledLexicon, seed: int, shape: tuple[int, int]
) -> None:
    rng = np.random.default_rng(seed)
    faces = enable_lexicon.alphabet.faces
    board = Board(*shape, tuple(faces[i] for i in rng.integers(0, len(faces), shape[0] * shape[1])))
    results = solve_boards(symmetries(board), enable_lexicon)
    assert len({(r.score, tuple(r.words), r.dead_cells) for r in results}) == 1


# ------------------------------------------------------------------ the wrapper's checks


@pytest.mark.parametrize("bad", [26, 64, 127, -2, -128])
def test_a_face_code_outside_the_alphabet_is_a_board_error(enable_lexicon: CompiledLexicon, bad: int) -> None:
    from pipeline.errors import BoardError

    boards = np.zeros((3, 16), dtype=np.int8)
    boards[2, 5] = bad
    with pytest.raises(
        BoardError, match=rf"board 3: face code {bad} \(cell 6\) is outside the alphabet of 26"
    ):
        solve_arrays(boards, 4, 4, enable_lexicon)


@pytest.mark.parametrize(("shape", "revisit"), [((4, 4), False), ((4, 4), True), ((10, 10), False)])
def test_word_ids_survive_the_id_buffer_filling_up(
    enable_words: list[str], shape: tuple[int, int], revisit: bool
) -> None:
    # one rich board overflows the first id buffer (1024 ids): the kernel grows it and walks
    # the board again; the ids must equal those found in a batch with room to spare
    rows, cols = shape
    lex = lexicon_of(enable_words, get_rules("boggle", revisit=revisit))
    letters = ("perslatgsineters" * 7)[: rows * cols]
    rich = lex.alphabet.encode(parse_compact(letters, shape).faces)
    batch = np.random.default_rng(5).integers(0, 26, size=(40, rows * cols)).astype(np.int8)
    batch[17] = rich
    alone = solve_arrays(rich[None, :], rows, cols, lex)
    together = solve_arrays(batch, rows, cols, lex)
    assert alone.offsets[-1] > 1024
    assert np.array_equal(np.sort(alone.ids_of(0)), np.sort(together.ids_of(17)))
    assert len(set(alone.ids_of(0).tolist())) == alone.n_words[0] == together.n_words[17]
    assert alone.score[0] == together.score[17] and alone.dead_cells[0] == together.dead_cells[17]
