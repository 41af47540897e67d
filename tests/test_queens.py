"""N-queens through the robot traversal, checked against brute force over permutations."""

from __future__ import annotations

import itertools

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.errors import BoggleError
from pipeline.solve._queens import format_queens, solve_queens, tables_for

KNOWN = {1: 1, 2: 0, 3: 0, 4: 2, 5: 10, 6: 4, 7: 40, 8: 92, 9: 352, 10: 724}


def brute_force(n: int) -> list[tuple[int, ...]]:
    """Every permutation is a placement with one queen per row and column; keep those with one
    queen per diagonal."""
    return [
        p
        for p in itertools.permutations(range(n))
        if len({r + c for r, c in enumerate(p)}) == n and len({r - c for r, c in enumerate(p)}) == n
    ]


@pytest.mark.parametrize("n", [*range(1, 10), pytest.param(10, marks=pytest.mark.slow)])
def test_counts_match_brute_force_and_known_values(n: int) -> None:
    result = solve_queens(n, collect=True)
    assert result.count == KNOWN[n]
    assert sorted(result.solutions) == brute_force(n)  # n = 10: 3.6 million permutations, ~3 s


@pytest.mark.parametrize("n", [4, 5, 6])
def test_tables_at_every_step_match_the_placement(n: int) -> None:
    result = solve_queens(n, trace=True)
    assert result.steps[0].command == "root" and result.steps[0].depth == 0
    commands = [s.command for s in result.steps[1:]]
    assert set(commands) <= {"down", "right", "up"}
    # every node but the root is entered by one down or right
    assert commands.count("down") + commands.count("right") == result.nodes - 1
    depth = 0
    for step in result.steps:
        depth += {"root": 0, "down": 1, "up": -1, "right": 0}[step.command]
        assert step.depth == depth == len(step.cols)
        assert (step.col_used, step.diag_sum, step.diag_diff) == tables_for(n, step.cols)
        # the tables are only ever set by non-attacking queens
        assert sum(step.col_used) == sum(step.diag_sum) == sum(step.diag_diff) == depth
    assert result.steps[-1].depth == 0 and not any(result.steps[-1].col_used)  # back at the root


def test_format_and_errors() -> None:
    lines = format_queens(solve_queens(4, collect=True), show=True)
    assert lines[0] == "4-queens: 2 solutions (17 search-tree nodes)"
    assert ". Q . ." in lines and "columns   1111" in lines and "diag r+c  .11.11." in lines
    assert format_queens(solve_queens(1)) == ["1-queens: 1 solution (2 search-tree nodes)"]
    with pytest.raises(BoggleError, match="at least 1"):
        solve_queens(0)


def test_cli_queens() -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["queens", "8"])
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("8-queens: 92 solutions")
    res = runner.invoke(app, ["queens", "5", "--show"])
    assert res.exit_code == 0 and res.stdout.count("solution ") == 10
    res = runner.invoke(app, ["queens", "0"])
    assert res.exit_code == 2
