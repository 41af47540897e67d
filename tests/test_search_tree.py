"""The robot traversal: visit order on explicit trees, early stop, and the board search run
through it (the kernel's DFS in the robot's terms) against the reference solver."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.boards import BLANK, Board, parse_compact
from pipeline.rules import get_rules
from pipeline.solve import solve_boards
from pipeline.solve._reference import ReferenceSolver
from pipeline.solve._search_tree import BoardPathRobot, find_words_by_traversal, traverse

Tree = tuple[str, list["Tree"]]


@dataclass
class ExplicitTreeRobot:
    """A robot over a tree held in memory: its position is the list of child indices."""

    root: Tree
    stop_at: str | None = None
    position: list[int] = field(default_factory=list)
    visited: list[str] = field(default_factory=list)
    moves: list[str] = field(default_factory=list)

    def node(self, position: list[int] | None = None) -> Tree:
        node = self.root
        for i in self.position if position is None else position:
            node = node[1][i]
        return node

    def can_down(self) -> bool:
        return bool(self.node()[1])

    def down(self) -> None:
        self.position.append(0)
        self.moves.append("down")

    def can_right(self) -> bool:
        return len(self.node(self.position[:-1])[1]) > self.position[-1] + 1

    def right(self) -> None:
        self.position[-1] += 1
        self.moves.append("right")

    def up(self) -> None:
        self.position.pop()
        self.moves.append("up")

    def work(self) -> bool:
        self.visited.append(self.node()[0])
        return self.node()[0] == self.stop_at


def preorder(tree: Tree) -> list[str]:
    out = [tree[0]]
    for child in tree[1]:
        out.extend(preorder(child))
    return out


@st.composite
def trees(draw: st.DrawFn, depth: int = 0, prefix: str = "r") -> Tree:
    n = 0 if depth >= 4 else draw(st.integers(0, 3))
    return (prefix, [draw(trees(depth + 1, f"{prefix}.{i}")) for i in range(n)])


def test_small_tree_moves() -> None:
    tree: Tree = ("a", [("b", [("d", [])]), ("c", [])])
    robot = ExplicitTreeRobot(tree)
    stats = traverse(robot)
    assert robot.visited == ["a", "b", "d", "c"]
    assert robot.moves == ["down", "down", "up", "right", "up"]  # climbs back to the root
    assert (stats.nodes, stats.max_depth, stats.stopped) == (4, 2, False)


@settings(max_examples=200, deadline=None)
@given(trees())
def test_traversal_is_preorder_and_returns_to_the_root_depth(tree: Tree) -> None:
    robot = ExplicitTreeRobot(tree)
    stats = traverse(robot)
    assert robot.visited == preorder(tree)
    assert stats.nodes == len(robot.visited) and not stats.stopped
    assert robot.moves.count("down") == robot.moves.count("up") + len(robot.position)


@settings(max_examples=100, deadline=None)
@given(trees(), st.data())
def test_work_can_stop_the_walk(tree: Tree, data: st.DataObject) -> None:
    order = preorder(tree)
    target = data.draw(st.sampled_from(order))
    robot = ExplicitTreeRobot(tree, stop_at=target)
    stats = traverse(robot)
    assert stats.stopped and robot.visited == order[: order.index(target) + 1]


def test_board_search_through_the_traversal_golden(enable_lexicon, enable_words: list[str]) -> None:  # type: ignore[no-untyped-def]
    board = parse_compact("perslatgsineters")
    found, live = find_words_by_traversal(board, [w for w in enable_words if len(w) <= 16], min_length=3)
    assert len(found) == 1045
    assert sum(get_rules("boggle").points(len(w)) for w in found) == 3625
    (kernel,) = solve_boards([board], enable_lexicon)
    assert sorted(found) == kernel.words and board.n_cells - len(live) == kernel.dead_cells


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(0, 2**32))
def test_board_search_through_the_traversal_matches_the_reference(rows: int, cols: int, seed: int) -> None:
    rng = random.Random(seed)
    faces = tuple(rng.choice(["a", "e", "t", "s", "qu", "th", BLANK]) for _ in range(rows * cols))
    board = Board(rows, cols, faces)
    words = [
        "".join(rng.choice(["a", "e", "t", "s", "qu", "th"]) for _ in range(rng.randint(1, 5)))
        for _ in range(40)
    ]
    rules = get_rules("boggle", min_length=2)
    want = ReferenceSolver(words, rules).solve(board)
    found, live = find_words_by_traversal(board, words, min_length=2)
    assert found == set(want.words)
    assert sum(1 for c, f in enumerate(faces) if f != BLANK and c not in live) == want.dead_cells


def test_board_robot_commands_follow_the_kernel_scheme() -> None:
    # On "ab/cd" with the word "abd": down to a (cell 0), down to b (1), down to d (3), ...
    board = parse_compact("abcd")
    robot = BoardPathRobot.for_words(board, ["abd"])
    assert robot.can_down() and not robot.can_right()
    robot.down()
    assert robot.path == [0] and robot.texts == ["a"]
    robot.down()
    robot.down()
    assert robot.path == [0, 1, 3] and robot.texts[-1] == "abd"
    robot.work()
    assert robot.found == {"abd"} and robot.live == {0, 1, 3}
    assert not robot.can_down() and not robot.can_right()
    robot.up()
    assert robot.path == [0, 1]
