"""N-queens by the robot traversal of :mod:`pipeline.solve._search_tree`.

A node at depth ``d`` has queens on rows ``0..d-1`` (``cols[r]`` is the column of row ``r``'s
queen), no two attacking. Three occupancy tables make "is (row, col) safe?" one look-up each,
so every command is O(1) apart from the scan for the next safe column:

* ``col_used[c]``: a queen stands in column ``c``;
* ``diag_sum[r + c]``: a queen stands on that down-left diagonal (2N-1 of them);
* ``diag_diff[r - c + N - 1]``: a queen stands on that down-right diagonal.

``down`` puts a queen on the first safe column of the next row, ``right`` moves the last queen
to the next safe column of its row, ``up`` lifts it; ``work`` counts a full board. Moving a queen
along its own row never conflicts with itself (another column means other diagonals too), so
``can_right`` needs no undo.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.errors import BoggleError
from pipeline.solve._search_tree import WalkStats, traverse

#: The largest board: the count of 27 queens took a cluster a year; beyond, an N is a typo.
MAX_QUEENS = 32


@dataclass(frozen=True)
class QueensStep:
    """One command and the tables after it (for ``trace=True``)."""

    command: str  # root, down, right or up
    depth: int  # queens on the board after the command
    cols: tuple[int, ...]  # column of the queen on each occupied row
    col_used: tuple[bool, ...]
    diag_sum: tuple[bool, ...]
    diag_diff: tuple[bool, ...]


@dataclass(frozen=True)
class QueensResult:
    n: int
    count: int
    solutions: list[tuple[int, ...]]  # solutions[i][r] = column of row r's queen (if collected)
    steps: list[QueensStep]  # every command with the tables (if traced)
    nodes: int  # search-tree nodes visited


@dataclass
class QueensRobot:
    """The N-queens search tree as a robot for :func:`pipeline.solve._search_tree.traverse`."""

    n: int
    collect: bool = False
    trace: bool = False
    cols: list[int] = field(default_factory=list)
    col_used: list[bool] = field(init=False)
    diag_sum: list[bool] = field(init=False)
    diag_diff: list[bool] = field(init=False)
    count: int = 0
    solutions: list[tuple[int, ...]] = field(default_factory=list)
    steps: list[QueensStep] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.col_used = [False] * self.n
        self.diag_sum = [False] * (2 * self.n - 1)
        self.diag_diff = [False] * (2 * self.n - 1)

    def safe(self, row: int, col: int) -> bool:
        return not (self.col_used[col] or self.diag_sum[row + col] or self.diag_diff[row - col + self.n - 1])

    def _set(self, row: int, col: int, value: bool) -> None:
        self.col_used[col] = value
        self.diag_sum[row + col] = value
        self.diag_diff[row - col + self.n - 1] = value

    def _first_safe(self, row: int, after: int) -> int:
        for c in range(after + 1, self.n):
            if self.safe(row, c):
                return c
        return -1

    def record(self, command: str) -> None:
        if self.trace:
            self.steps.append(
                QueensStep(
                    command,
                    len(self.cols),
                    tuple(self.cols),
                    tuple(self.col_used),
                    tuple(self.diag_sum),
                    tuple(self.diag_diff),
                )
            )

    def can_down(self) -> bool:
        row = len(self.cols)
        return row < self.n and self._first_safe(row, -1) >= 0

    def down(self) -> None:
        row = len(self.cols)
        col = self._first_safe(row, -1)
        self.cols.append(col)
        self._set(row, col, True)
        self.record("down")

    def can_right(self) -> bool:
        row = len(self.cols) - 1
        return row >= 0 and self._first_safe(row, self.cols[row]) >= 0

    def right(self) -> None:
        row = len(self.cols) - 1
        col = self._first_safe(row, self.cols[row])
        self._set(row, self.cols[row], False)
        self.cols[row] = col
        self._set(row, col, True)
        self.record("right")

    def up(self) -> None:
        row = len(self.cols) - 1
        self._set(row, self.cols.pop(), False)
        self.record("up")

    def work(self) -> None:
        if len(self.cols) == self.n:
            self.count += 1
            if self.collect:
                self.solutions.append(tuple(self.cols))


def solve_queens(n: int, *, collect: bool = False, trace: bool = False) -> QueensResult:
    """Count the ways to place ``n`` non-attacking queens on an ``n x n`` board.

    ``collect`` keeps every solution; ``trace`` keeps every command with the occupancy tables
    after it (a long list beyond n = 8).

    >>> solve_queens(8).count
    92
    """
    if n < 1:
        raise BoggleError(f"N must be at least 1, got {n}")
    if n > MAX_QUEENS:
        raise BoggleError(
            f"N: at most {MAX_QUEENS} (the search's time grows about n! with the board), got {n:,}"
        )
    robot = QueensRobot(n, collect=collect, trace=trace)
    robot.record("root")
    stats: WalkStats = traverse(robot)
    return QueensResult(n, robot.count, robot.solutions, robot.steps, stats.nodes)


def tables_for(n: int, cols: tuple[int, ...]) -> tuple[tuple[bool, ...], tuple[bool, ...], tuple[bool, ...]]:
    """The (column, diagonal-sum, diagonal-difference) occupancy tables of a placement."""
    col_used = [False] * n
    diag_sum = [False] * (2 * n - 1)
    diag_diff = [False] * (2 * n - 1)
    for r, c in enumerate(cols):
        col_used[c] = True
        diag_sum[r + c] = True
        diag_diff[r - c + n - 1] = True
    return tuple(col_used), tuple(diag_sum), tuple(diag_diff)


def _bits(table: tuple[bool, ...]) -> str:
    return "".join("1" if x else "." for x in table)


def format_queens(result: QueensResult, *, show: bool = False) -> list[str]:
    """Text lines for the CLI: the count, then (``show``) each placement as a grid with its
    occupancy tables."""
    plural = "" if result.count == 1 else "s"
    lines = [f"{result.n}-queens: {result.count} solution{plural} ({result.nodes} search-tree nodes)"]
    if not show:
        return lines
    for i, sol in enumerate(result.solutions, start=1):
        lines.append("")
        lines.append(f"solution {i}: columns {' '.join(str(c + 1) for c in sol)}")
        for c in sol:
            lines.append(" ".join("Q" if k == c else "." for k in range(result.n)))
        col_used, diag_sum, diag_diff = tables_for(result.n, sol)
        lines.append(f"columns   {_bits(col_used)}")
        lines.append(f"diag r+c  {_bits(diag_sum)}")
        lines.append(f"diag r-c  {_bits(diag_diff)}")
    return lines


def queens_report(n: int, *, show: bool = False) -> list[str]:
    """Solve N-queens and return the CLI's lines (the ``boggle queens`` entry point)."""
    return format_queens(solve_queens(n, collect=show), show=show)
