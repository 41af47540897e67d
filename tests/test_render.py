"""The pieces the thin CLI calls: pipeline.cli.render's lines, the one rules resolver, prepare_solve,
the one BrokenPipe handling and --summary-json's record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer

from pipeline.boards import parse_compact
from pipeline.cli import render
from pipeline.cli._outcome import run_summary_json
from pipeline.errors import BoardError, RulesError
from pipeline.rules import resolve_rules
from pipeline.solve._algorithms import prepare_solve, read_boards
from tests.conftest import REPO


@pytest.mark.parametrize(
    ("name", "shape", "expected"),
    [
        (None, None, "boggle"),
        (None, (5, 5), "big"),
        (None, (6, 6), "superbig"),
        (None, (3, 7), "boggle"),
        ("boggle", (5, 5), "boggle"),
    ],
)
def test_resolve_rules_names_the_shapes_preset_unless_named(
    name: str | None, shape: tuple[int, int] | None, expected: str
) -> None:
    assert resolve_rules(name, shape).name == expected


def test_resolve_rules_applies_overrides_and_rejects_unknown_names() -> None:
    rules = resolve_rules(None, (5, 5), min_length=6, revisit=True)
    assert (rules.name, rules.min_length, rules.revisit) == ("big", 6, True)
    with pytest.raises(RulesError, match="unknown rules 'nope'"):
        resolve_rules("nope")


def test_read_boards_names_the_bad_argument_and_wants_some_board(tmp_path: Path) -> None:
    with pytest.raises(BoardError, match="board argument 2"):
        read_boards(["abcdefghijklmnop", "abc"], None, None)
    with pytest.raises(Exception, match="no boards given"):
        read_boards([], None, None)
    f = tmp_path / "boards.txt"
    f.write_text("abcdefghijklmnop\n")
    assert len(read_boards(["ponmlkjihgfedcba"], f, None)) == 2


def test_prepare_solve_and_the_solve_lines(tmp_path: Path) -> None:
    words = tmp_path / "words.txt"
    words.write_text("sat\nsea\neats\nzzz\n")
    job = prepare_solve(["seatxxxxxxxxxxxx"], dictionary=str(words), algorithm="dp")
    assert (job.rules.name, job.kernel_module) == ("boggle", "_dp")
    (res,) = job.results()
    text = render.solve_text(res)
    assert text[0] == "Board seatxxxxxxxxxxxx (4x4)"
    assert text[-3:] == [f"Found {res.n_words} words", f"Total score: {res.score}", ""]
    # s-e-a-t along the top row: "sea" is there; "sat" and "eats" need cells that are not adjacent
    assert text[1:4] == ["s e a t\nx x x x\nx x x x\nx x x x", "", "sea 1"]
    assert (res.n_words, res.score) == (1, 1)
    line = json.loads(render.solve_json(res, job.rules.name))
    assert line["rules"] == "boggle" and line["words"] == res.words and line["score"] == res.score


@dataclass
class Summary:
    status: str = "complete"
    run_dir: Path = Path("/r")
    boards: int = 12000
    chunks: int = 3
    chunks_reused: int = 1
    boards_solved: int = 8000
    elapsed_s: float = 2.5
    solve_s: float = 2.0
    boards_per_s: float = 4000.0
    rejected: int = 2
    input_rows: int = 12002
    rejects_file: Path = Path("/r/_rejects.jsonl")


def test_run_lines() -> None:
    s = Summary()
    assert (
        render.run_summary(s)
        == "/r: 12,000 boards in 3 parts, 1 chunk reused; 8,000 solved in 2.0 s (4,000 boards/s), "
        "2.5 s in all"
    )
    assert render.run_summary(Summary(status="already complete")) == (
        "/r: already complete (12,000 boards); nothing to do"
    )
    assert render.run_rejected(s) == "2 of 12,002 input rows rejected: see /r/_rejects.jsonl"
    assert render.run_outcome(s)["boards_solved"] == 8000
    one = Summary(chunks=1, chunks_reused=0, boards=10, boards_solved=10)
    assert render.run_summary(one).startswith("/r: 10 boards in 1 part; ")  # not "1 parts"


def test_summary_json_records_how_the_block_ended(tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    with pytest.raises(typer.Exit), run_summary_json(path, None) as outcome:
        outcome.update(status="complete", boards=5)
        raise typer.Exit(3)
    data = json.loads(path.read_text())
    assert (data["status"], data["exit_code"], data["boards"]) == ("complete", 3, 5)
    with pytest.raises(KeyboardInterrupt), run_summary_json(path, "out"):
        raise KeyboardInterrupt
    data = json.loads(path.read_text())
    assert (data["status"], data["exit_code"]) == ("interrupted", 130)
    assert data["run_dir"] == str(Path("out").absolute())


@dataclass
class Board:
    score: int
    board: object
    n_words: int
    restart: int


@dataclass
class Restart:
    restart: int
    best_score: int
    iterations: int
    seconds: float
    stopped_by: str
    target_s: float | None


@dataclass
class Result:
    boards: list[Board]
    restarts: list[Restart]
    out: str

    @property
    def best(self) -> Board:
        return self.boards[0]


def test_optimize_lines() -> None:
    b = parse_compact("perslatgsineters")
    res = Result([Board(3625, b, 1045, 0)], [Restart(0, 3625, 1200, 3.25, "target", 2.5)], "runs/o")
    assert render.optimize_restarts(res) == [
        "restart 0: best 3625 in 1,200 iterations, 3.2 s (target, target after 2.5 s)"
    ]
    assert render.optimize_boards(res) == ["3625\tperslatgsineters\t1045 words\trestart 0", "wrote runs/o"]
    assert render.optimize_best(res) == "BEST perslatgsineters 3625"


@pytest.mark.parametrize("args", [["generate", "--count", "200000"], ["queens", "9", "--show"]])
def test_a_reader_that_leaves_early_is_no_error(args: list[str]) -> None:
    """`boggle ... | head -1`: exit 0 and nothing on stderr (one BrokenPipe handling for all)."""
    cmd = f"set -o pipefail; {sys.executable} -m pipeline.cli {' '.join(args)} | head -n 1"
    proc = subprocess.run(["bash", "-c", cmd], cwd=REPO, capture_output=True, text=True, env=os.environ)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert len(proc.stdout.splitlines()) == 1
