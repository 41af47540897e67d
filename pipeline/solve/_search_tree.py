"""The iterative search-tree traversal: a robot walking a tree with three commands.

The robot stands on a node of a search tree it never holds in memory. It obeys three commands,
each with a test saying whether it may be given:

* ``down``: go to the node's first child (``can_down``: the node has a child);
* ``right``: go to the next sibling (``can_right``: the node has one);
* ``up``: go back to the parent (always allowed below the root);

and does its ``work`` on arriving at each node (record a solution, count, stop early). The
walk below visits every node once, in pre-order, with no recursion and no stack beyond what the
robot keeps for its own position, so it serves any backtracking problem: the robot's state *is*
the explicit stack.

    work at the root
    loop:
        if can_down: down, work, continue
        climb: until depth 0 (done) or can_right: up
        right, work

How the board solver's explicit-stack DFS is this same walk (``solve_large`` in
:mod:`pipeline.solve.kernels._walk`; ``solve_small`` is the same with bit masks):

* the robot's position is the kernel's stack: ``st_cell[0..d]`` (the path), ``st_node[d]``
  (the trie node of the text spelled so far) and ``used`` (the cells on the path);
* the children of a node are the unused, non-blank neighbours of ``st_cell[d]`` whose face
  leads to a trie child; ``st_k[d]`` is the cursor over them. ``can_down`` (a first child) and
  ``can_right`` (a next sibling) are both the scan ``k = st_k[d]; st_k[d] = k + 1`` that skips
  neighbours failing the test;
* ``down`` is the push ``d += 1; st_cell[d] = c; st_node[d] = child; st_k[d] = 0; used[c] = 1``;
* ``up`` is the pop ``used[st_cell[d]] = 0; d -= 1`` once ``st_k[d] >= deg``;
* ``right`` is an ``up`` followed by the parent's scan finding its next child and pushing it:
  the kernel never moves sideways in place, it returns to the parent and resumes its cursor;
* ``work`` is the check on arriving at a child, ``word_id[child] >= 0``: record the word (once
  per board) and mark the path's cells live. The kernel does it before the push and skips the
  push when no neighbour's face can extend the text, so a leaf's down/work/up is one step.

:class:`BoardPathRobot` is that search written as a robot for :func:`traverse`; the tests run it
and get the reference solver's words. :mod:`pipeline.solve._queens` drives N-queens with the same walk.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from pipeline.boards import BLANK, Board, geometry


class Robot(Protocol):
    """A position in a search tree, moved by the traversal."""

    def can_down(self) -> bool: ...

    def down(self) -> None: ...

    def can_right(self) -> bool: ...

    def right(self) -> None: ...

    def up(self) -> None: ...

    def work(self) -> bool | None:
        """Called on arriving at each node; a true result stops the walk."""
        ...


@dataclass(frozen=True)
class WalkStats:
    nodes: int  # nodes visited (work calls), the root included
    max_depth: int
    stopped: bool  # work asked to stop before the tree was exhausted


def traverse(robot: Robot) -> WalkStats:
    """Walk the whole tree below the robot's current node (the root), in pre-order, calling
    ``work`` at every node. Non-recursive: depth is only a counter."""
    depth = 0
    max_depth = 0
    nodes = 1
    if robot.work():
        return WalkStats(nodes, max_depth, True)
    while True:
        if robot.can_down():
            robot.down()
            depth += 1
            max_depth = max(max_depth, depth)
        else:
            while True:
                if depth == 0:
                    return WalkStats(nodes, max_depth, False)
                if robot.can_right():
                    robot.right()
                    break
                robot.up()
                depth -= 1
        nodes += 1
        if robot.work():
            return WalkStats(nodes, max_depth, True)


@dataclass
class BoardPathRobot:
    """Board search as a robot: a node is a path of cells whose text is a prefix of some word.

    The root is the empty path; its children are the start cells. Standard rule only (each cell
    once), so it is the kernel's DFS above in the robot's terms.
    """

    board: Board
    words: frozenset[str]
    prefixes: frozenset[str]
    path: list[int] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # texts[d] = text of path[:d+1]
    found: set[str] = field(default_factory=set)
    live: set[int] = field(default_factory=set)

    @classmethod
    def for_words(cls, board: Board, words: Iterable[str], min_length: int = 1) -> BoardPathRobot:
        kept = frozenset(w for w in words if len(w) >= min_length)
        prefixes = frozenset(w[:i] for w in kept for i in range(1, len(w) + 1))
        return cls(board, kept, prefixes)

    def _options(self, depth: int) -> list[int]:
        """The children of the node at ``depth`` (its path is ``path[:depth]``), in order."""
        if depth == 0:
            return list(range(self.board.n_cells))
        return geometry(self.board.rows, self.board.cols).neighbours(self.path[depth - 1])

    def _next_child(self, depth: int, after: int | None) -> int | None:
        """The first valid child of the node at ``depth`` after cell ``after`` in its order."""
        faces = self.board.faces
        opts = self._options(depth)
        start = 0 if after is None else opts.index(after) + 1
        base = self.texts[depth - 1] if depth > 0 else ""
        on_path = set(self.path[:depth])
        for c in opts[start:]:
            if c in on_path or faces[c] == BLANK:
                continue
            if base + faces[c] in self.prefixes:
                return c
        return None

    def _enter(self, cell: int) -> None:
        base = self.texts[-1] if self.texts else ""
        self.path.append(cell)
        self.texts.append(base + self.board.faces[cell])

    def can_down(self) -> bool:
        return self._next_child(len(self.path), None) is not None

    def down(self) -> None:
        cell = self._next_child(len(self.path), None)
        if cell is None:
            raise RuntimeError("down without a child (can_down was false)")
        self._enter(cell)

    def can_right(self) -> bool:
        d = len(self.path)
        return d > 0 and self._next_child(d - 1, self.path[-1]) is not None

    def right(self) -> None:
        d = len(self.path)
        cell = self._next_child(d - 1, self.path[-1]) if d > 0 else None
        if cell is None:
            raise RuntimeError("right without a sibling (can_right was false)")
        self.up()
        self._enter(cell)

    def up(self) -> None:
        self.path.pop()
        self.texts.pop()

    def work(self) -> None:
        if self.texts and self.texts[-1] in self.words:
            self.found.add(self.texts[-1])
            self.live.update(self.path)


def find_words_by_traversal(
    board: Board, words: Iterable[str], min_length: int = 1
) -> tuple[set[str], set[int]]:
    """The words of ``words`` on ``board`` (standard rule) and the cells they use, found by
    :func:`traverse` with a :class:`BoardPathRobot`. Plain Python; for tests and teaching."""
    robot = BoardPathRobot.for_words(board, words, min_length)
    traverse(robot)
    return robot.found, robot.live
