"""The plain-Python twin of the orderly-tree bound of :mod:`pipeline.best.prove.tree`, for the tests:
nested dicts and a set per node for the de-duplication, no numba, no arrays to size."""

from __future__ import annotations

from pipeline.best.prove._bounds import ProveTrie

__all__ = ["tree_bound_reference"]


def tree_bound_reference(
    masks: list[int],
    neighbours: list[list[int]],
    trie: ProveTrie,
    order: list[int],
    forced: dict[int, int] | None = None,
) -> int:
    """Plain-Python twin of the tree bound (for tests): nested dicts, a set per node for the
    de-duplication."""
    children = trie.children.tolist()
    node_word = trie.node_word.tolist()
    node_points = trie.node_points.tolist()
    rank = {c: i for i, c in enumerate(order)}
    forced = forced or {}
    # a SUM node: [points, {cell: {letter: SUM node}}, words counted here]
    root: list = [0, {}, set()]

    def insert(path: list[tuple[int, int]], word: int, pts: int) -> None:
        node = root
        for cell, face in sorted((p for p in path if masks[p[0]].bit_count() > 1), key=lambda p: rank[p[0]]):
            node = node[1].setdefault(cell, {}).setdefault(face, [0, {}, set()])
        if word not in node[2]:
            node[2].add(word)
            node[0] += pts

    def walk(cell: int, tnode: int, path: list[tuple[int, int]]) -> None:
        for f in range(len(children[tnode])):
            child = children[tnode][f]
            if not masks[cell] >> f & 1 or child < 0:
                continue
            here = [*path, (cell, f)]
            if node_word[child] >= 0:
                insert(here, node_word[child], node_points[child])
            used = {c for c, _ in here}
            for nb in neighbours[cell]:
                if nb not in used:
                    walk(nb, child, here)

    for c in range(len(masks)):
        walk(c, 0, [])

    def value(node: list) -> int:
        total = node[0]
        for cell, letters in node[1].items():
            if cell in forced:
                total += value(letters[forced[cell]]) if forced[cell] in letters else 0
            else:
                total += max(value(s) for s in letters.values())
        return total

    return value(root)
