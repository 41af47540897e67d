"""The reference solver: plain Python, obviously correct, the oracle for every test.

It never looks at the trie: it walks paths of cells, concatenating face strings, and prunes
with the set of all prefixes of the lexicon's words. So it checks the kernel, the trie builder
and the tokenizer all at once.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from pipeline.boards import BLANK, Board, geometry
from pipeline.rules import Rules


class WordCount:
    """A result's ``n_words``: how many ``words`` it holds (a mixin of the results that list them)."""

    words: Collection[str]

    @property
    def n_words(self) -> int:
        return len(self.words)


@dataclass(frozen=True)
class ReferenceResult(WordCount):
    words: frozenset[str]
    score: int
    dead_cells: int
    longest: int


class ReferenceSolver:
    """Finds every word of ``words`` on a board under ``rules``.

    >>> ReferenceSolver(["tea", "eat"], rules).solve(board).words  # doctest: +SKIP
    """

    def __init__(self, words: Iterable[str], rules: Rules):
        self.rules = rules
        self.words = {w for w in words if len(w) >= rules.min_length}
        self.prefixes = {w[:i] for w in self.words for i in range(1, len(w) + 1)}

    def solve(self, board: Board) -> ReferenceResult:
        geo = geometry(board.rows, board.cols)
        faces = board.faces
        found: set[str] = set()
        live: set[int] = set()
        prefixes = self.prefixes
        if self.rules.revisit:
            self._solve_revisit(board, found, live)
        else:
            for start in range(board.n_cells):
                if faces[start] == BLANK or faces[start] not in prefixes:
                    continue
                # explicit stack of (path, text)
                stack: list[tuple[tuple[int, ...], str]] = [((start,), faces[start])]
                while stack:
                    path, text = stack.pop()
                    if text in self.words:
                        found.add(text)
                        live.update(path)
                    for nb in geo.neighbours(path[-1]):
                        if nb in path or faces[nb] == BLANK:
                            continue
                        nxt = text + faces[nb]
                        if nxt in prefixes:
                            stack.append(((*path, nb), nxt))
        score = sum(self.rules.points(len(w)) for w in found)
        dead = sum(1 for c in range(board.n_cells) if faces[c] != BLANK and c not in live)
        longest = max((len(w) for w in found), default=0)
        return ReferenceResult(frozenset(found), score, dead, longest)

    def _solve_revisit(self, board: Board, found: set[str], live: set[int]) -> None:
        """Walks may revisit cells (each step moves to a neighbour). States are
        (cell, text); a cell is live when some walk through it spells a word."""
        geo = geometry(board.rows, board.cols)
        faces = board.faces
        prefixes = self.prefixes
        # forward: every reachable (cell, text) state, with its successors
        succ: dict[tuple[int, str], list[tuple[int, str]]] = {}
        todo = [(c, faces[c]) for c in range(board.n_cells) if faces[c] != BLANK and faces[c] in prefixes]
        seen = set(todo)
        while todo:
            state = todo.pop()
            cell, text = state
            nexts = []
            for nb in geo.neighbours(cell):
                if faces[nb] == BLANK:
                    continue
                nxt = (nb, text + faces[nb])
                if nxt[1] in prefixes:
                    nexts.append(nxt)
                    if nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
            succ[state] = nexts
        # backward: a state is good when its text is a word or a successor is good
        good: set[tuple[int, str]] = {s for s in seen if s[1] in self.words}
        for s in good:
            found.add(s[1])
        by_len = sorted(seen, key=lambda s: -len(s[1]))
        for s in by_len:  # successors have longer texts, so they are settled first
            if s not in good and any(t in good for t in succ[s]):
                good.add(s)
        live.update(c for c, _ in good)
