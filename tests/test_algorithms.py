"""trie, dp and binary give identical results, and the reference solver's, on any board.

Random boards of every shape up to 6x6 with single- and multi-letter faces (qu, th, in, er) and
blanks, random small word lists (many of them walks on the board, so there is something to
find), all rule presets with varied minimum lengths, with and without revisits.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from pipeline.boards import BLANK, Board, generate_boards, geometry, parse_compact
from pipeline.cli import app
from pipeline.errors import BoardError, ConfigError
from pipeline.lexicon import DropReport, Lexicon, compile_lexicon, compile_words
from pipeline.lexicon.trie import Alphabet
from pipeline.rules import Rules, get_rules
from pipeline.solve import BoardResult
from pipeline.solve._algorithms import ALGORITHMS, solve_with
from pipeline.solve._dp import solve_dp
from pipeline.solve._letters import build_word_table, word_table
from pipeline.solve._reference import ReferenceSolver

FACES = ["a", "e", "i", "n", "r", "s", "t", "h", "o", "qu", "th", "in", "er", BLANK]
LETTERS = "aeinrstho"


def lexicon_for(words: list[str], rules: Rules, board_faces: set[str]):  # type: ignore[no-untyped-def]
    words = sorted(set(words))
    lex = Lexicon("test", "<test>", "0" * 64, words, DropReport(len(words)))
    alphabet = Alphabet.compact_for(words).union(board_faces)
    return compile_words(lex, alphabet, rules)


def random_walk_word(board: Board, rng: random.Random, revisit: bool, max_steps: int = 4) -> str:
    geo = geometry(board.rows, board.cols)
    cells = [c for c, f in enumerate(board.faces) if f != BLANK]
    if not cells:
        return "".join(rng.choice(LETTERS) for _ in range(rng.randint(1, 5)))
    cell = rng.choice(cells)
    path = [cell]
    for _ in range(rng.randint(0, max_steps)):
        nbrs = [nb for nb in geo.neighbours(cell) if board.faces[nb] != BLANK and (revisit or nb not in path)]
        if not nbrs:
            break
        cell = rng.choice(nbrs)
        path.append(cell)
    return "".join(board.faces[c] for c in path)


def summary(res: BoardResult) -> tuple[list[str], list[int], int, int, int]:
    return res.words, res.points, res.score, res.longest, res.dead_cells


def assert_all_agree(boards: list[Board], words: list[str], rules: Rules) -> None:
    lexicon = lexicon_for(words, rules, {f for b in boards for f in b.faces if f != BLANK})
    ref = ReferenceSolver(words, rules)
    results = {alg: solve_with(alg, boards, lexicon) for alg in ALGORITHMS}
    results["dp-per-word"] = solve_dp(boards, lexicon, share_prefixes=False)
    for i, board in enumerate(boards):
        want = ref.solve(board)
        expected = (
            sorted(want.words),
            [rules.points(len(w)) for w in sorted(want.words)],
            want.score,
            want.longest,
            want.dead_cells,
        )
        for alg, res in results.items():
            assert res[i].board == board
            assert summary(res[i]) == expected, (alg, board, rules.key())


@st.composite
def cases(
    draw: st.DrawFn, revisit: bool | None = None, max_steps: int = 4
) -> tuple[list[Board], list[str], Rules]:
    rows = draw(st.integers(1, 6))
    cols = draw(st.integers(1, 6))
    preset = draw(st.sampled_from(["boggle", "big", "superbig"]))
    if revisit is None:
        revisit = draw(st.booleans())
    rules = get_rules(preset, min_length=draw(st.integers(1, 4)), revisit=revisit)
    face_pool = draw(st.lists(st.sampled_from(FACES), min_size=1, max_size=6, unique=True))
    boards = [
        Board(
            rows,
            cols,
            tuple(draw(st.lists(st.sampled_from(face_pool), min_size=rows * cols, max_size=rows * cols))),
        )
        for _ in range(draw(st.integers(1, 2)))
    ]
    rng = random.Random(draw(st.integers(0, 2**32)))
    words = [
        random_walk_word(rng.choice(boards), rng, revisit or rng.random() < 0.3, max_steps) for _ in range(25)
    ]
    words += draw(st.lists(st.text(LETTERS + "q", min_size=1, max_size=6), max_size=10))
    return boards, words, rules


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_algorithms_agree_with_reference_on_random_boards(case: tuple[list[Board], list[str], Rules]) -> None:
    # Walks of at most 5 cells: under the standard rule every solver but dp enumerates paths,
    # which explodes for long words on repetitive boards (a board of one face).
    boards, words, rules = case
    assert_all_agree(boards, words, rules)


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(revisit=True, max_steps=14))
def test_algorithms_agree_on_long_revisiting_words(case: tuple[list[Board], list[str], Rules]) -> None:
    # Under the revisit rule every solver is polynomial (states, not paths), so long words are fine.
    boards, words, rules = case
    assert_all_agree(boards, words, rules)


@pytest.mark.parametrize("revisit", [False, True])
def test_hand_checked_revisit_board(revisit: bool) -> None:
    # "tat" needs to come back to the t cell: a word only under the revisit rule
    board = parse_compact("tax.", (2, 2))
    rules = get_rules("boggle", revisit=revisit)
    lexicon = lexicon_for(["tat", "tax", "axat", "xat"], rules, {"t", "a", "x"})
    for alg in ALGORITHMS:
        (res,) = solve_with(alg, [board], lexicon)
        assert res.words == (["axat", "tat", "tax", "xat"] if revisit else ["tax", "xat"]), alg


def test_golden_board_all_algorithms(enable_lexicon) -> None:  # type: ignore[no-untyped-def]
    for alg in ALGORITHMS:
        (res,) = solve_with(alg, [parse_compact("perslatgsineters")], enable_lexicon)
        assert (res.score, res.n_words, res.dead_cells) == (3625, 1045, 0), alg
        assert "repaints" in res.words


@pytest.mark.slow
def test_enable2k_dice_boards_agree(enable2k_path: str) -> None:
    """Real lexicon, real dice: 4x4 new dice, 5x5 big1979, 6x6 superbig (qu/th/in... and
    blanks); the three algorithms return identical results, and the reference agrees."""
    rng = np.random.default_rng(7)
    for dice, size, count in (("new", 4, 40), ("big1979", 5, 10), ("superbig", 6, 6)):
        rules = get_rules({4: "boggle", 5: "big", 6: "superbig"}[size])
        from pipeline.boards import generator_alphabet

        alphabet = Alphabet.english().union(generator_alphabet(dice, size, size).faces)
        lexicon = compile_lexicon(enable2k_path, alphabet, rules)
        codes = generate_boards(dice, alphabet, rng, count, size, size)
        boards = [
            Board(size, size, tuple(alphabet.faces[i] if i >= 0 else BLANK for i in row)) for row in codes
        ]
        results = {alg: [summary(r) for r in solve_with(alg, boards, lexicon)] for alg in ALGORITHMS}
        assert results["dp"] == results["trie"] and results["binary"] == results["trie"], dice
        ref = ReferenceSolver(lexicon.words, rules)
        for board, got in list(zip(boards, results["trie"], strict=True))[:3]:
            want = ref.solve(board)
            assert (sorted(want.words), want.score, want.dead_cells) == (got[0], got[2], got[4])


def test_enable2k_revisit_rule_agrees(enable2k_path: str) -> None:
    rules = get_rules("boggle", revisit=True)
    lexicon = compile_lexicon(enable2k_path, Alphabet.english(), rules)
    boards = [parse_compact(b) for b in ("perslatgsineters", "qiet", "eeeeeeeeeeeeeeee", "aaab.cdefghsrste")]
    results = {alg: [summary(r) for r in solve_with(alg, boards, lexicon)] for alg in ALGORITHMS}
    assert results["dp"] == results["trie"] == results["binary"]
    ref = ReferenceSolver(lexicon.words, rules)
    for board, got in zip(boards, results["trie"], strict=True):
        want = ref.solve(board)
        assert (sorted(want.words), want.score, want.dead_cells) == (got[0], got[2], got[4])


@pytest.mark.slow
def test_big_board_small_list_agree() -> None:
    rng = random.Random(3)
    board = Board(100, 100, tuple(rng.choice("etaoinshrdlu") for _ in range(10_000)))
    words = sorted({random_walk_word(board, rng, False) for _ in range(40)} | {"zzz", "quiet", "hello"})
    rules = get_rules("boggle", min_length=2)
    lexicon = lexicon_for(words, rules, set(board.faces))
    results = {alg: summary(solve_with(alg, [board], lexicon)[0]) for alg in ALGORITHMS}
    assert results["dp"] == results["trie"] == results["binary"]
    want = ReferenceSolver(words, rules).solve(board)
    assert results["trie"][0] == sorted(want.words) and results["trie"][4] == want.dead_cells


def test_mixed_shapes_keep_input_order(enable_lexicon) -> None:  # type: ignore[no-untyped-def]
    boards = [parse_compact("catsx", (1, 5)), parse_compact("perslatgsineters"), parse_compact("qiet")]
    for alg in ALGORITHMS:
        res = solve_with(alg, boards, enable_lexicon)
        assert [r.board for r in res] == boards
        assert res[0].words == ["cat", "cats"] and res[1].score == 3625 and "quite" in res[2].words


def test_no_boards(enable_lexicon) -> None:  # type: ignore[no-untyped-def]
    from pipeline.solve._binary import solve_binary_batch
    from pipeline.solve._dp import solve_dp_batch

    for alg in ALGORITHMS:
        assert solve_with(alg, [], enable_lexicon) == []
    for batch in (solve_dp_batch([], enable_lexicon), solve_binary_batch([], enable_lexicon)):
        assert len(batch) == 0 and batch.offsets.tolist() == [0] and len(batch.sorted_ids()) == 0


def test_unknown_algorithm_and_unknown_face(enable_lexicon) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match="unknown algorithm 'astar'"):
        solve_with("astar", [parse_compact("abcd")], enable_lexicon)
    board = Board(1, 2, ("th", "e"))  # "th" is not a face of the English alphabet
    for alg in ALGORITHMS:
        with pytest.raises(BoardError, match="'th'"):
            solve_with(alg, [board], enable_lexicon)


def common_prefix(a: str, b: str) -> int:
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    return k


def test_word_table_reuses_and_rejects_unsorted(enable_lexicon) -> None:  # type: ignore[no-untyped-def]
    table = word_table(enable_lexicon)
    assert word_table(enable_lexicon) is table
    assert table.n_words == enable_lexicon.n_words and table.max_len == 28
    i = enable_lexicon.words.index("aardvark")
    w = table.flat[table.offsets[i] : table.offsets[i + 1]]
    assert "".join(map(chr, w)) == "aardvark"
    words = enable_lexicon.words
    for j in (i, i + 1, len(words) - 1):
        assert table.lcp[j] == common_prefix(words[j - 1], words[j])
    assert build_word_table(["ab", "abc", "b"]).lcp.tolist() == [0, 2, 0]
    with pytest.raises(ValueError, match="not sorted"):
        build_word_table(["b", "a"])
    with pytest.raises(ValueError, match="not sorted"):
        build_word_table(["a", "a"])


def test_cli_solve_algorithm_option(enable2k_path: str) -> None:
    runner = CliRunner()
    outputs = []
    for alg in ALGORITHMS:
        res = runner.invoke(app, ["solve", "perslatgsineters", "-d", enable2k_path, "--algorithm", alg])
        assert res.exit_code == 0, res.output
        assert "Total score: 3625" in res.stdout
        outputs.append(res.stdout)
    assert outputs[0] == outputs[1] == outputs[2]
    bad = runner.invoke(app, ["solve", "abcd", "-d", enable2k_path, "--algorithm", "astar"])
    assert bad.exit_code == 2 and "'astar' is not one of" in bad.output
