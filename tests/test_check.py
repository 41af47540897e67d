"""Word-check queries (standard and revisit rules), the contest format, and `boggle check`."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from pipeline.boards import BLANK, Board, parse_compact
from pipeline.cli import app
from pipeline.errors import BoardError, BoggleError
from pipeline.rules import get_rules
from pipeline.solve import solve_boards
from pipeline.solve._check import (
    ContestCase,
    answer_contest,
    can_spell,
    check_words,
    format_contest,
    parse_contest,
    run_check,
)
from pipeline.solve._reference import ReferenceSolver
from tests.conftest import REPO

# AlgoSpot's BOGGLE sample (its rule lets a path come back to a cell, each step moving); the
# expected answers are the ones the problem statement gives.
ALGOSPOT = """1
URLPM
XPRET
GIAET
XTNZY
XOQRS
6
PRETTY
GIRL
REPEAT
KARA
PANDORA
GIAZAPX
"""


def test_algospot_sample_under_both_rules() -> None:
    cases = parse_contest(ALGOSPOT)
    assert answer_contest(cases, revisit=True) == [
        ("PRETTY", True),
        ("GIRL", True),
        ("REPEAT", True),
        ("KARA", False),
        ("PANDORA", False),
        ("GIAZAPX", True),
    ]
    # REPEAT needs the E at (1,3) twice and GIAZAPX the A at (2,2) twice: the standard rule says no
    assert answer_contest(cases, revisit=False) == [
        ("PRETTY", True),
        ("GIRL", True),
        ("REPEAT", False),
        ("KARA", False),
        ("PANDORA", False),
        ("GIAZAPX", False),
    ]


@pytest.mark.parametrize(
    ("board", "shape", "word", "standard", "revisit"),
    [
        ("aba", (1, 3), "abab", False, True),  # back to the middle b
        ("ab", (1, 2), "aba", False, True),
        ("a", (1, 1), "aa", False, False),  # a step must move: no staying on a cell
        ("aa", (1, 2), "aaa", False, True),
        ("abcd", (2, 2), "abdc", True, True),  # diagonals count
        ("a.b", (1, 3), "ab", False, False),  # a blank blocks
        ("qite", (2, 2), "quite", True, True),  # the Qu cell gives two letters
        ("qite", (2, 2), "qite", False, False),  # ...and never a bare q
        ("[th]e[th]e", (2, 2), "thethe", True, True),
        ("[th]ex", (1, 3), "thethe", False, True),
        ("[th]eh", (1, 3), "the", True, True),  # spelled th + e
        ("teh", (1, 3), "the", False, False),  # t and h are not neighbours
        ("TEA", (1, 3), "tea", True, True),  # case-insensitive
        ("aaaa", (2, 2), "aaaaa", False, True),  # more letters than cells
        ("aaaa", (2, 2), "aaaa", True, True),
    ],
)
def test_hand_checked_words(
    board: str, shape: tuple[int, int], word: str, standard: bool, revisit: bool
) -> None:
    b = parse_compact(board, shape)
    assert can_spell(b, word) is standard
    assert can_spell(b, word, revisit=True) is revisit


def test_long_word_on_big_board_is_fast() -> None:
    # 10,000 identical cells: path search without the memo table would be hopeless for a "no"
    board = Board(100, 100, ("a",) * 10_000)
    t0 = time.perf_counter()
    assert can_spell(board, "a" * 300 + "b", revisit=True) is False
    assert can_spell(board, "a" * 300 + "b") is False
    assert can_spell(board, "a" * 300, revisit=True) is True
    assert can_spell(board, "a" * 300) is True
    assert time.perf_counter() - t0 < 60  # a hang guard, not a benchmark


FACES = ["a", "e", "r", "t", "s", "qu", "th", "er", BLANK]


@st.composite
def boards_and_words(draw: st.DrawFn) -> tuple[Board, list[str]]:
    rows, cols = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    pool = draw(st.lists(st.sampled_from(FACES), min_size=1, max_size=5, unique=True))
    faces = draw(st.lists(st.sampled_from(pool), min_size=rows * cols, max_size=rows * cols))
    words = draw(st.lists(st.text("aerstquh", min_size=1, max_size=7), min_size=1, max_size=30))
    return Board(rows, cols, tuple(faces)), words


@settings(max_examples=200, deadline=None)
@given(boards_and_words(), st.booleans())
def test_check_agrees_with_the_reference_solver(case: tuple[Board, list[str]], revisit: bool) -> None:
    board, words = case
    found = ReferenceSolver(words, get_rules("boggle", min_length=1, revisit=revisit)).solve(board).words
    for w, ok in check_words(board, words, revisit=revisit):
        assert ok == (w in found), (w, board)


def test_check_agrees_with_solve_on_enable2k(enable_lexicon, enable_words: list[str]) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(5)
    boards = [parse_compact("perslatgsineters")] + [
        parse_compact("".join(rng.choice("abcdefghijklmnoprstuvwyqeeaio") for _ in range(16)))
        for _ in range(4)
    ]
    for board, res in zip(boards, solve_boards(boards, enable_lexicon), strict=True):
        found = set(res.words)
        assert all(can_spell(board, w) for w in found)
        sample = rng.sample([w for w in enable_words if len(w) >= 3], 3000)
        for w in sample:
            assert can_spell(board, w) == (w in found), (w, board)


# ---------------------------------------------------------------- contest format

LETTERS = st.sampled_from(list("ABCDEQXYZÉÑΩЖ"))


@st.composite
def contest_cases(draw: st.DrawFn) -> list[ContestCase]:
    out = []
    for _ in range(draw(st.integers(0, 3))):
        rows, cols = draw(st.integers(1, 5)), draw(st.integers(1, 5))
        faces = tuple(c.lower() for c in draw(st.lists(LETTERS, min_size=rows * cols, max_size=rows * cols)))
        words = tuple(draw(st.lists(st.text("ABCQXYZabc", min_size=1, max_size=8), max_size=5)))
        out.append(ContestCase(Board(rows, cols, faces), words))
    return out


@settings(max_examples=200, deadline=None)
@given(contest_cases())
def test_contest_format_round_trips(cases: list[ContestCase]) -> None:
    text = format_contest(cases)
    assert parse_contest(text) == cases
    assert format_contest(parse_contest(text)) == text


def test_contest_parse_format_parse_keeps_plain_q_and_blank_lines() -> None:
    text = "2\n\nqu\nab\n2\nQUA\nbaq\n\nZ\n0\n"
    cases = parse_contest(text)
    assert cases[0].board == Board(2, 2, ("q", "u", "a", "b"))  # Q is just Q here
    assert cases[0].words == ("QUA", "baq") and cases[1].words == ()
    assert parse_contest(format_contest(cases)) == cases
    assert format_contest(cases) == "2\nQU\nAB\n2\nQUA\nbaq\nZ\n0\n"
    assert answer_contest(cases) == [("QUA", True), ("baq", True)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty input"),
        ("x\n", "<contest>:1: expected the number of test cases"),
        ("1\nAB\nCDE\n1\nAB\n", "<contest>:3: board row has 3 letters"),
        ("1\nA1\n1\nA\n", "<contest>:2: column 2: '1' is not a letter"),
        ("1\nAB\nCD\n2\nAB\n", "<contest>:5: unexpected end of input"),
        ("1\nAB\n1\nAB CD\n", "<contest>:4: expected one word a line"),
        ("1\nAB\n1\nAB\nextra\n", "<contest>:5: unexpected 'extra' after the 1 test case"),
        ("1\n3\n", "<contest>:2: test case 1: no board lines"),
        ("2\nAB\n1\nAB\n", "<contest>:4: test case 2: input ends before its word count"),
    ],
)
def test_contest_errors_name_the_line(text: str, message: str) -> None:
    with pytest.raises(BoardError) as exc:
        parse_contest(text)
    assert message in exc.value.one_line()


def test_format_contest_rejects_multi_letter_faces_and_blanks() -> None:
    for faces in (("qu", "a"), ("", "a")):
        with pytest.raises(BoardError, match="contest format"):
            format_contest([ContestCase(Board(1, 2, faces), ("a",))])


# ---------------------------------------------------------------- CLI


def test_run_check_argument_errors() -> None:
    with pytest.raises(BoggleError, match="nothing to check"):
        run_check([])
    with pytest.raises(BoggleError, match="no words given"):
        run_check(["abcd"])
    with pytest.raises(BoggleError, match="give no BOARD"):
        run_check(["abcd", "ab"], contest="-")
    with pytest.raises(BoardError, match="not a square number"):
        run_check(["abc", "ab"])


def test_cli_check_board_and_words() -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["check", "perslatgsineters", "pertinent", "TSAR", "xyz"])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines() == ["pertinent NO", "TSAR YES", "xyz NO"]
    res = runner.invoke(app, ["check", "perslatgsineters", "pertinent", "--revisit"])
    assert res.stdout.splitlines() == ["pertinent YES"]
    res = runner.invoke(app, ["check", "ab.ba", "abba", "--shape", "1x5"])
    assert res.exit_code == 0 and res.stdout.splitlines() == ["abba NO"]


def test_cli_check_contest_file_and_stdin(tmp_path: Path) -> None:
    runner = CliRunner()
    path = tmp_path / "in.txt"
    path.write_text(ALGOSPOT, encoding="utf-8")
    res = runner.invoke(app, ["check", "--contest", str(path), "--revisit"])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines() == [
        "PRETTY YES",
        "GIRL YES",
        "REPEAT YES",
        "KARA NO",
        "PANDORA NO",
        "GIAZAPX YES",
    ]
    res = runner.invoke(app, ["check", "--contest", "-"], input=ALGOSPOT)
    assert res.exit_code == 0 and res.stdout.splitlines()[2] == "REPEAT NO"


def test_cli_check_errors_are_one_line_exit_2(tmp_path: Path) -> None:
    runner = CliRunner()
    bad = tmp_path / "bad.txt"
    bad.write_text("1\nAB\nC\n1\nA\n", encoding="utf-8")
    for args, message in (
        (["check", "--contest", str(bad)], f"error: {bad}:3: board row has 1 letters"),
        (["check", "--contest", str(tmp_path / "missing")], "contest file not found"),
        (["check", "ab!d", "a"], "unknown face '!'"),
        (["check"], "nothing to check"),
    ):
        res = runner.invoke(app, args)
        assert res.exit_code == 2, (args, res.output)
        assert message in res.output and len(res.output.strip().splitlines()) == 1, res.output


@pytest.mark.integration
def test_huge_board_and_long_word_under_a_memory_limit() -> None:
    """A 300x300 board and 5,000-letter words (one spelled along a path without reuse, one
    random) in a process capped at 1.5 GB of address space; the cells x letters table took 4 GB."""
    code = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20))
import numpy as np
from pipeline.boards import Board
from pipeline.solve._check import can_spell
rng = np.random.default_rng(1)
letters = rng.choice(list("abcdefghijklmnoprstuvwy"), 300 * 300)
board = Board(300, 300, tuple(letters))
path = [r * 300 + (c if r % 2 == 0 else 299 - c) for r in range(300) for c in range(300)][:5000]
snake = "".join(letters[i] for i in path)
noise = "".join(rng.choice(list("abcdefghijklmnoprstuvwy"), 5000))
print(can_spell(board, snake), can_spell(board, snake, revisit=True),
      can_spell(board, noise), can_spell(board, noise, revisit=True),
      can_spell(board, snake[:-1] + "z"))
"""
    env = {**os.environ, "PYTHONPATH": str(REPO), "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["True", "True", "False", "False", "False"]
