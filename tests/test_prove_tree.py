"""The orderly-tree bound is sound, matches its Python twin, counts a word once per cell set,
and the tree prover finds exactly the boards the sum/max prover and brute force find."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pipeline.best.prove.tree._builder as builder_module
from pipeline.best.prove._bounds import build_prove_trie, class_bounds, packed_trie
from pipeline.best.prove._classes import bucket_masks, canonical_class_ids, class_digits, parse_buckets
from pipeline.best.prove._search import ClassProver, split_order
from pipeline.best.prove.tree import PROVERS, TreeProver
from pipeline.best.prove.tree._build import FIRST, LETTER_BITS, NEXT, TAG, VAL, max_cells, radix_sort
from pipeline.best.prove.tree._dedup import FORCED_FLAG, derive_paths
from pipeline.best.prove.tree._eval import eval_tree, lift_cell, lift_frames, tree_branch
from pipeline.best.prove.tree._reference import tree_bound_reference
from pipeline.boards import Board, canonical, format_compact, geometry
from pipeline.solve import solve_arrays

#: Whether class keys are spread over both 64-bit words (fewer fields a word than the default,
#: as 4x4 boards need with 26 faces) or kept in one.
SPLITS = (False, True)


def _fields(n_cells: int, split: bool) -> int | None:
    return (n_cells + 1) // 2 if split else None


def _scores(lex, rows: int, cols: int, boards: np.ndarray) -> np.ndarray:
    return solve_arrays(boards, rows, cols, lex, collect=False).score


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_tree_bound_is_sound_and_matches_its_twin(
    tiny, draw_class, class_boards, data: st.DataObject
) -> None:
    rows, cols, masks = draw_class(data)
    n = rows * cols
    geo = geometry(rows, cols)
    trie = build_prove_trie(tiny, n)
    fields = _fields(n, data.draw(st.sampled_from(SPLITS)))
    prover = TreeProver(geo, tiny, trie, threshold=1, fields=fields)
    arr = np.array(masks, dtype=np.uint64)
    boards = class_boards(masks)
    scores = _scores(tiny, rows, cols, boards)
    bound = prover.tree_bound(arr)
    neighbours = [geo.neighbours(c) for c in range(n)]
    order = [int(c) for c in prover.order]
    assert bound >= int(scores.max())
    assert bound == tree_bound_reference(masks, neighbours, trie, order)
    assert prover.root_bounds(arr)[0] == bound
    # neither sum nor max bounds the tree bound in general (hypothesis found tree 15 > max 14 on
    # a 3x3 class: the sorted cell order splits a walk's joint choice into independent ones), so
    # the prover's root bound is the tree's or the sum bound (which the build computes too)
    s, _ = class_bounds(
        arr,
        geo.nbr_list,
        geo.deg,
        trie.children,
        trie.node_word,
        trie.node_points,
        trie.kids,
        np.zeros(tiny.n_words, np.int64),
        np.zeros(1, np.int64),
    )
    assert prover.build(arr)[1] == int(s)
    assert prover.prove(arr).root_bound == min(bound, int(s))
    # forcing the first split cells to letters bounds the sub-class that agrees with them
    k = data.draw(st.integers(1, n))
    forced = np.full(n, -1, np.int64)
    keep = np.ones(len(boards), dtype=bool)
    for c in order[:k]:
        f = data.draw(st.sampled_from([f for f in range(5) if masks[c] >> f & 1]))
        forced[c] = f
        keep &= boards[:, c] == f
    sub = prover.tree_bound(arr, forced)
    assert sub >= int(scores[keep].max())
    assert sub == tree_bound_reference(masks, neighbours, trie, order, {c: int(forced[c]) for c in order[:k]})
    # the branch and bound's bound of every sub-class with the first j split cells forced (its
    # leaves when enumerate_max is the boards left at level j, threshold 0): forcing the cells
    # on the tree (never lifting) equals the full evaluation; lifting every cell (merged trees)
    # is as tight or tighter and still bounds every board of the sub-class
    tree, _ = prover.build(arr)
    cells = [c for c in order if masks[c].bit_count() > 1]
    faces = np.zeros((max(len(cells), 1), 64), np.int64)
    for lvl, c in enumerate(cells):
        fs = [f for f in range(64) if masks[c] >> f & 1]
        faces[lvl, : len(fs)] = fs
    sizes = [masks[c].bit_count() for c in cells]
    left = np.array([int(np.prod(sizes[i:])) for i in range(len(cells) + 1)], np.int64)
    j = data.draw(st.integers(0, len(cells)))
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n)

    def branch(threshold: int, lift_above: int) -> np.ndarray:
        """The leaves of the branch and bound down to level j (its status asserted 0)."""
        status, _, leaves = tree_branch(
            *prover.builder.arena(),
            prover.builder.n_nodes,
            rank,
            np.array(cells, np.int64),
            faces,
            np.array(sizes, np.int64),
            left,
            threshold,
            int(left[j]),
            lift_above,
            len(cells),
            len(tree[0]),
            np.empty((int(np.prod(sizes[:j])), n + 1), np.int64),
        )
        assert status == 0
        return leaves

    got = {}
    for lift_above in (1 << 62, 0):
        leaves = branch(0, lift_above)
        got[lift_above] = {tuple(row[:n]): int(row[n]) for row in leaves.tolist()}
        assert len(got[lift_above]) == len(leaves) == int(np.prod(sizes[:j]))
    assert (
        set(got[0])
        == set(got[1 << 62])
        == {
            tuple(int(fs[cells.index(c)]) if c in cells[:j] else -1 for c in range(n))
            for fs in itertools.product(*([f for f in range(64) if masks[c] >> f & 1] for c in cells))
        }
    )
    # with a threshold, forcing prunes a letter on its bound before it pushes anything: the
    # leaves left are exactly those whose bound reaches it (a forced bound never rises)
    t = data.draw(st.integers(0, max(got[1 << 62].values()) + 1))
    leaves = branch(t, 1 << 62)
    assert {tuple(row[:n]): int(row[n]) for row in leaves.tolist()} == {
        leaf: b for leaf, b in got[1 << 62].items() if b >= t
    }
    scratch = np.empty(len(tree[0]), np.int64)
    for leaf, forced_bound in got[1 << 62].items():
        assert forced_bound == eval_tree(*tree, np.array(leaf, np.int64), scratch)
        inside = np.all((boards == np.array(leaf)) | (np.array(leaf) < 0), axis=1)
        assert forced_bound >= got[0][leaf] >= int(scores[inside].max())


class _Records:
    """A Python reading of the tree's node records (FIRST, NEXT, VAL, TAG) that recomputes
    every value from the children, never trusting a stored one: the reference of lifting."""

    def __init__(self, node: np.ndarray):
        self.node = node

    def kids(self, x: int) -> list[int]:
        out, y = [], int(self.node[x, FIRST])
        while y >= 0:
            out.append(y)
            y = int(self.node[y, NEXT])
        return out

    def is_choice(self, x: int) -> bool:
        return int(self.node[x, TAG]) < 0

    def key(self, x: int) -> int:
        tag = int(self.node[x, TAG])
        return -1 - tag if tag < 0 else tag & 63

    def pts(self, x: int) -> int:
        return 0 if self.is_choice(x) else int(self.node[x, TAG]) >> LETTER_BITS

    def value(self, x: int) -> int:
        vals = [self.value(y) for y in self.kids(x)]
        return max(vals, default=0) if self.is_choice(x) else self.pts(x) + sum(vals)

    def merged(self, a: list[int], b: list[int], choice: bool) -> int:
        """The value of merging two nodes' children lists (CHOICE children of two SUM nodes,
        or SUM children of two CHOICE nodes of one cell)."""
        ka, kb = {self.key(x): x for x in a}, {self.key(x): x for x in b}
        vals = []
        for k in ka.keys() | kb.keys():
            if k in ka and k in kb:
                x, y = ka[k], kb[k]
                inner = self.merged(self.kids(x), self.kids(y), self.is_choice(x))
                vals.append(inner + self.pts(x) + self.pts(y))
            else:
                vals.append(self.value(ka.get(k, kb.get(k, -1))))
        return max(vals, default=0) if choice else sum(vals)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_lifted_tree_is_the_merge_and_every_value_in_it_holds(
    tiny, draw_class, data: st.DataObject
) -> None:
    """Lifting the first split cell (and then the next, on the lifted tree) gives, for each
    letter, the merge of the root without that cell's CHOICE node with the letter's SUM node:
    its root's value is the reference merge's, and every node reachable from it holds the value
    its children give (points plus their sum, or their best)."""
    rows, cols, masks = draw_class(data)
    n = rows * cols
    geo = geometry(rows, cols)
    prover = TreeProver(geo, tiny, build_prove_trie(tiny, n), threshold=1)
    arr = np.array(masks, dtype=np.uint64)
    prover.build(arr)
    (node,) = prover.builder.arena()
    order = [int(c) for c in prover.order]
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n)
    cells = [c for c in order if masks[c].bit_count() > 1][:2]
    frames = lift_frames(n)
    rec = _Records(node)
    top = prover.builder.n_nodes
    roots = [0]
    for c in cells:
        made = []
        for r in roots:
            kids = rec.kids(r)
            x = kids[-1] if kids and rec.is_choice(kids[-1]) and rec.key(kids[-1]) == c else None
            for f in (f for f in range(64) if masks[c] >> f & 1):
                sub, top = lift_cell(node, top, r, c, f, rank, frames)
                if sub == -1:
                    return  # the arena's room ran out: nothing to check
                assert sub >= 0
                if x is None:
                    assert sub == r  # no CHOICE node for the cell: the root itself
                    continue
                s = next((y for y in rec.kids(x) if rec.key(y) == f), None)
                want = rec.merged(kids[:-1], rec.kids(s) if s is not None else [], choice=False)
                want += rec.pts(r) + (rec.pts(s) if s is not None else 0)
                assert int(node[sub, VAL]) == want
                seen, stack = set(), [sub]
                while stack:
                    y = stack.pop()
                    if y not in seen:
                        seen.add(y)
                        assert int(node[y, VAL]) == rec.value(y)
                        stack.extend(rec.kids(y))
                made.append(sub)
        roots = made or roots


def test_tree_bound_is_sound_and_tighter_on_the_class_of_the_optimum(enable_lexicon) -> None:
    geo = geometry(3, 3)
    trie = build_prove_trie(enable_lexicon, 9)
    buckets = parse_buckets("bdfgjqvwxz aeiou lnrsy chkmpt", enable_lexicon.alphabet)
    # the class of streaedlp (545, the 3x3 optimum)
    masks = bucket_masks(buckets)[np.array([2, 3, 2, 1, 1, 1, 0, 2, 3])]
    tree = TreeProver(geo, enable_lexicon, trie, 500)
    cheap = ClassProver(geo, enable_lexicon, trie, 500)
    assert 545 <= tree.tree_bound(masks) < cheap.bound(masks) / 2
    out = TreeProver(geo, enable_lexicon, trie, 545).prove(masks)
    found = {"".join(enable_lexicon.alphabet.faces[f] for f in b): s for b, s in out.found}
    assert found == {"streaedlp": 545}


def _cell_set_score(lex, geo, board: np.ndarray) -> int:
    """Points of every (word, cell set) a board spells: what the tree bound of a one-board
    class must equal (a word counts once per cell set, not once per path)."""
    words = {w: p for w, p in zip(lex.words, lex.word_points.tolist(), strict=True)}
    faces = [lex.alphabet.faces[f] for f in board]
    found: set[tuple[str, frozenset[int]]] = set()

    def walk(cell: int, prefix: str, used: tuple[int, ...]) -> None:
        word = prefix + faces[cell]
        if len(word) > 2 * geo.n_cells:
            return
        here = (*used, cell)
        if word in words:
            found.add((word, frozenset(here)))
        for nb in geo.neighbours(cell):
            if nb not in here:
                walk(nb, word, here)

    for c in range(geo.n_cells):
        walk(c, "", ())
    return sum(words[w] for w, _ in found)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(board=st.lists(st.integers(0, 4), min_size=9, max_size=9), split=st.sampled_from(SPLITS))
def test_tree_bound_of_one_board_is_exact_and_a_forced_board_counts_words_per_cell_set(
    tiny, board: list[int], split: bool
) -> None:
    geo = geometry(3, 3)
    prover = TreeProver(geo, tiny, build_prove_trie(tiny, 9), threshold=1, fields=_fields(9, split))
    b = np.array(board, np.int8)
    exact = int(_scores(tiny, 3, 3, b[None, :])[0])
    # a class of one board: no cell offers a choice, every word meets at the root once
    assert prover.tree_bound(np.array([1 << f for f in board], dtype=np.uint64)) == exact
    # the board forced inside a class where every cell has a second letter: once per cell set
    two = np.array([(1 << f) | (1 << ((f + 1) % 5)) for f in board], dtype=np.uint64)
    forced = b.astype(np.int64)
    assert prover.tree_bound(two, forced) == _cell_set_score(tiny, geo, b) >= exact


def _found(outcome) -> dict[bytes, int]:
    return {bytes(b.astype(np.int8)): s for b, s in outcome.found}


# how the prover splits: forcing cells on one tree; the deduping force on every sub-class (its
# paths derived, the redundant ones dropped, its tree rebuilt) down to one cell left, or above
# 1.5 x T and lifting below; lifting every cell; lifting every cell but the last two, then
# forcing; lifting while the bound is above 1.2 x T, then forcing; the default down to single
# boards before scoring, as every class or as a heavy class (its tree over the size that bounds
# down to single boards)
MODES = {
    "force": {"lift_ratio": 0},
    "dedup": {"dedup_ratio": 0, "dedup_paths": 0},
    "dedup-lift": {"dedup_ratio": 1.5, "dedup_paths": 0, "lift_ratio": 1e-9},
    "lift": {"lift_ratio": 1e-9},
    "keep": {"lift_ratio": 1e-9, "lift_keep": 2},
    "heavy": {"single_nodes": 0},
    "ratio": {"lift_ratio": 1.2},
    "single": {"enumerate_max": 1},
    "budget": {"max_paths": 4},
}


# the "ratio" and "single" split modes are slow checks (force and rebuild, which they combine, stay)
@pytest.mark.parametrize(
    "mode", [pytest.param(m, marks=pytest.mark.slow) if m in ("ratio", "single") else m for m in MODES]
)
@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize(
    ("rows", "cols", "spec", "threshold"),
    [
        (2, 2, "ae rst", 4),
        (2, 2, "a e r s t", 6),
        (2, 3, "ae rst", 20),
        (2, 3, "aerst", 26),
        (2, 3, "a e rst", 30),
    ],
)
def test_tree_prover_finds_what_sumax_and_brute_force_find(
    tiny, class_boards, rows: int, cols: int, spec: str, threshold: int, split: bool, mode: str
) -> None:
    n = rows * cols
    geo = geometry(rows, cols)
    trie = build_prove_trie(tiny, n)
    buckets = parse_buckets(spec, tiny.alphabet)
    masks_of = bucket_masks(buckets)
    ids = canonical_class_ids(rows, cols, len(buckets))
    tree = TreeProver(geo, tiny, trie, threshold, fields=_fields(n, split), **MODES[mode])  # type: ignore[arg-type]
    sumax = PROVERS["sumax"](geo, tiny, trie, threshold)
    found_tree: dict[str, int] = {}
    for d in class_digits(ids, len(buckets), n):
        masks = masks_of[d]
        t, s = tree.prove(masks), sumax.prove(masks)
        assert _found(t) == _found(s)
        assert t.root_bound >= max([sc for _, sc in t.found], default=0)
        boards = class_boards([int(m) for m in masks])
        scores = _scores(tiny, rows, cols, boards)
        assert _found(t) == {
            bytes(b): int(sc) for b, sc in zip(boards, scores, strict=True) if sc >= threshold
        }
        for b, sc in t.found:
            found_tree[
                format_compact(canonical(Board(rows, cols, tuple(tiny.alphabet.faces[f] for f in b))))
            ] = sc
    # the canonical classes cover every board: the union is brute force over the whole shape
    every = np.array(list(itertools.product(range(len(tiny.alphabet)), repeat=n)), np.int8)
    scores = _scores(tiny, rows, cols, every)
    expected = {
        format_compact(canonical(Board(rows, cols, tuple(tiny.alphabet.faces[f] for f in b)))): int(sc)
        for b, sc in zip(every[scores >= threshold], scores[scores >= threshold], strict=True)
    }
    assert len(expected) > 0 and found_tree == expected


def test_tree_prover_eliminates_a_class_below_the_threshold(tiny) -> None:
    geo = geometry(2, 2)
    trie = build_prove_trie(tiny, 4)
    masks = np.array([0b11111] * 4, dtype=np.uint64)
    prover = TreeProver(geo, tiny, trie, threshold=10_000)
    out = prover.prove(masks)
    assert out.status == "eliminated" and out.boards_scored == 0 and out.found == []
    assert out.root_bound < 10_000


def test_branching_grows_its_arrays_and_finds_the_same(tiny, monkeypatch: pytest.MonkeyPatch) -> None:
    # lifting every cell into arrays with no room beyond the tree, and a one-row leaves table:
    # the prover grows them (the arena: calls again), and finds what a roomy one finds
    monkeypatch.setattr(builder_module, "NODES_PER_PATH", 0)  # the build's arrays not sized ahead
    geo = geometry(3, 3)
    trie = build_prove_trie(tiny, 9)
    masks_of = bucket_masks(parse_buckets("ae rst", tiny.alphabet))
    roomy = TreeProver(geo, tiny, trie, 30, enumerate_max=1, lift_ratio=1e-9)
    cramped = TreeProver(geo, tiny, trie, 30, enumerate_max=1, lift_ratio=1e-9)
    b = cramped.builder
    grown: list[int] = []
    grow = b.grow_arena
    b.grow_arena = lambda: (grown.append(b._tree.shape[0]), grow())[1]  # type: ignore[method-assign]
    grown_leaves = 0
    for d in class_digits(canonical_class_ids(3, 3, 2)[::8], 2, 9):
        masks = masks_of[d]
        cramped._leaves = np.empty((1, 10), np.int64)
        b._tree = b._tree_arrays(4)  # the build grows them to about the tree's size
        want, got = roomy.prove(masks), cramped.prove(masks)
        assert _found(got) == _found(want) and got.nodes == want.nodes
        grown_leaves += cramped._leaves.shape[0] > 1
    assert grown and grown_leaves


def test_a_class_over_the_path_budget_is_split_and_finds_the_same(tiny) -> None:
    # the budget splits classes on their first split cell, recursively, until each sub-class's
    # paths fit: the same boards found, the bound still above each, and no tree of more paths
    geo = geometry(3, 3)
    trie = build_prove_trie(tiny, 9)
    masks_of = bucket_masks(parse_buckets("ae rst", tiny.alphabet))
    roomy = TreeProver(geo, tiny, trie, 30)
    tight = TreeProver(geo, tiny, trie, 30, max_paths=64)
    largest: list[int] = []
    collect = tight.builder.collect

    def watched(masks: np.ndarray, max_paths: int | None = None) -> tuple[int, int]:
        got = collect(masks, max_paths)
        if max_paths is not None:  # None: a single board, whose paths are never split
            largest.append(tight.builder.n_paths)
        return got

    tight.builder.collect = watched  # type: ignore[method-assign]
    splits = 0
    for d in class_digits(canonical_class_ids(3, 3, 2)[::4], 2, 9):
        masks = masks_of[d]
        want, got = roomy.prove(masks), tight.prove(masks)
        assert _found(got) == _found(want)
        assert got.root_bound >= max([sc for _, sc in got.found], default=0)
        splits += got.nodes > want.nodes
    assert splits > 0 and max(largest) <= 64


@pytest.mark.parametrize("split", SPLITS)
def test_the_tree_builder_grows_its_arrays(tiny, split: bool) -> None:
    geo = geometry(2, 3)
    trie = build_prove_trie(tiny, 6)
    masks = np.array([0b11111] * 6, dtype=np.uint64)
    roomy = TreeProver(geo, tiny, trie, threshold=1, fields=_fields(6, split))
    cramped = TreeProver(geo, tiny, trie, threshold=1, fields=_fields(6, split))
    b = cramped.builder
    b._paths, b._tree = b._path_arrays(2), b._tree_arrays(4)
    assert cramped.tree_bound(masks) == roomy.tree_bound(masks)
    assert min(a.shape[0] for a in (*b._paths, b._tree)) > 4
    assert len(cramped.build(masks)[0][0]) == len(roomy.build(masks)[0][0]) > 4


@pytest.mark.slow  # ENABLE2K, 4x4
def test_class_keys_hold_up_to_two_words_of_fields(enable_lexicon) -> None:
    # 26 faces: 5 bits a field, 12 fields a word, so 4x4 fits (over both words) and 5x5 does not
    assert max_cells(26) == 24 and max_cells(5) == 42 and max_cells(63) == 20
    geo = geometry(4, 4)
    prover = TreeProver(geo, enable_lexicon, build_prove_trie(enable_lexicon, 16), 1)
    assert prover.builder.fields == 12 and prover.builder.key_bits == (60, 20)
    # a 4x4 board forced in a class with two letters a cell: each word once per cell set
    board = np.array([enable_lexicon.alphabet.index[f] for f in "serspatglinesers"], np.int8)
    two = np.array([(1 << f) | (1 << ((f + 1) % 26)) for f in board.tolist()], dtype=np.uint64)
    bound = prover.tree_bound(two, board.astype(np.int64))
    assert bound == _cell_set_score(enable_lexicon, geo, board) > 3625
    with pytest.raises(ValueError, match="at most 24 cells"):
        TreeProver(geometry(5, 5), enable_lexicon, build_prove_trie(enable_lexicon, 25), 1)


def _derived_equals_rebuilt(prover: TreeProver, masks: np.ndarray) -> int:
    """Force the class's first split cell to each of its letters: the sub-class's tree read off
    the parent's sorted paths equals the one built by walking the sub-class; returns how many
    sub-classes had a tree to compare."""
    b = prover.builder
    b.bounds(masks, -(1 << 62))
    parent = b.sorted_paths()
    assert np.all(np.diff(parent[0][:, 0].astype(np.float64)) >= 0)  # sorted on the high word
    cell = next(int(c) for c in prover.order if bin(int(masks[c])).count("1") > 1)
    compared = 0
    for f in range(64):
        if not int(masks[cell]) >> f & 1:
            continue
        sub = masks.copy()
        sub[cell] = np.uint64(1) << np.uint64(f)
        for threshold in (-(1 << 62), 1 << 40):  # built, and stopped at the sum bound
            derived = b.forced_bounds(parent, masks, cell, f, threshold)
            d_tree, d_paths = [a.copy() for a in b.preordered()], b.sorted_paths()
            rebuilt = b.bounds(sub, threshold)
            assert derived == rebuilt
            for x, y in zip(d_tree, b.preordered(), strict=True):
                assert np.array_equal(x, y)
            r_paths = b.sorted_paths()
            assert np.array_equal(d_paths[0], r_paths[0])
            # equal keys may hold their paths in another order (a word counts once per key)
            d_sort = np.lexsort((d_paths[1], d_paths[0][:, 1], d_paths[0][:, 0]))
            r_sort = np.lexsort((r_paths[1], r_paths[0][:, 1], r_paths[0][:, 0]))
            assert np.array_equal(d_paths[1][d_sort], r_paths[1][r_sort])
            compared += b.n_nodes > 0
    later = next(int(c) for c in prover.order[::-1] if bin(int(masks[c])).count("1") > 1)
    if later != cell:  # only the first split cell may be forced this way
        with pytest.raises(ValueError, match="not the class's first split cell"):
            b.forced_bounds(parent, masks, later, 0, 0)
    return compared


# keys of two 64-bit words are a slow check; one word stays in the default run
@pytest.mark.parametrize("split", [pytest.param(s, marks=pytest.mark.slow) if s else s for s in SPLITS])
def test_a_sub_class_tree_from_the_parent_paths_equals_a_rebuilt_one(
    tiny, enable_lexicon, split: bool
) -> None:
    rng = np.random.default_rng(5)
    compared = 0
    for lex, rows, cols in ((tiny, 2, 3), (tiny, 3, 3), (enable_lexicon, 3, 3), (enable_lexicon, 3, 4)):
        n = rows * cols
        k = len(lex.alphabet)
        prover = TreeProver(geometry(rows, cols), lex, build_prove_trie(lex, n), 1, fields=_fields(n, split))
        for _ in range(4):
            # random buckets per cell: a few letters each, some cells a single letter
            masks = np.zeros(n, np.uint64)
            for c in range(n):
                for f in rng.choice(k, size=int(rng.integers(1, min(k, 6) + 1)), replace=False):
                    masks[c] |= np.uint64(1) << np.uint64(f)
            if all(bin(int(m)).count("1") == 1 for m in masks):
                continue
            compared += _derived_equals_rebuilt(prover, masks)
    assert compared > 20


def _pairs(key: np.ndarray, occ: int, fields: int, bits: int) -> frozenset[tuple[int, int]]:
    """A path's (field, value) pairs from its key and used-fields mask."""
    out = []
    for p in range(64):
        if occ >> p & 1:
            word = int(key[0]) if p >= fields else int(key[1])
            out.append((p, (word >> ((p % fields) * bits)) & ((1 << bits) - 1)))
    return frozenset(out)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_deduping_force_drops_only_paths_another_path_covers(
    tiny, draw_class, class_boards, data: st.DataObject
) -> None:
    """Force the split cells one after another, each sub-class's paths read off the last one's
    with the redundant ones dropped (:meth:`TreeBuilder.derive`): what is dropped is what the
    plain-Python rule drops (a path missing the forced cell whose pairs but one, that one of
    the forced letter, are a path of the same word that used the forced cell), each dropped
    path has a kept one of its word over a strict subset of its pairs, the tree is no looser
    than without the drops and still bounds every board of the sub-class."""
    rows, cols, masks = draw_class(data)
    n = rows * cols
    geo = geometry(rows, cols)
    trie = build_prove_trie(tiny, n)
    prover = TreeProver(geo, tiny, trie, threshold=1, fields=_fields(n, data.draw(st.sampled_from(SPLITS))))
    arr = np.array(masks, dtype=np.uint64)
    prover.use_order(arr)
    b = prover.builder
    n_paths, _ = b.collect(arr)
    keys, wids = (a[:n_paths].copy() for a in b.paths())
    boards = class_boards(masks)
    scores = _scores(tiny, rows, cols, boards)
    keep = np.ones(len(boards), dtype=bool)
    cells = [int(c) for c in prover.order if masks[c].bit_count() > 1]
    for cell in cells[: data.draw(st.integers(1, max(len(cells) - 1, 1)))]:
        letter = data.draw(st.sampled_from([f for f in range(5) if masks[cell] >> f & 1]))
        keep &= boards[:, cell] == letter
        plain = (np.empty((len(wids), 2), np.uint64), np.empty(len(wids), np.int64))
        m, total = b.derive((keys, wids), len(wids), cell, letter, plain, False)
        deduped = (np.empty((len(wids), 2), np.uint64), np.empty(len(wids), np.int64))
        k, total_d = b.derive((keys, wids), len(wids), cell, letter, deduped, True)
        assert total_d == total  # no word loses its last path
        # the plain-Python rule, on the paths derived with the forced run's flag
        flagged = (np.empty((len(wids), 2), np.uint64), np.empty(len(wids), np.int64))
        p = n - 1 - int(prover.rank[cell])
        f_n, _ = derive_paths(
            keys, wids, len(wids), 0 if p >= b.fields else 1, (p % b.fields) * b.bits, p, letter,
            b.bits, b.word_pts, *flagged, np.zeros(tiny.n_words, np.int64), 1, FORCED_FLAG,
        )  # fmt: skip
        assert f_n == m
        tagged = [
            (
                int(t) & 0xFFFFFFFF,
                _pairs(key, (int(t) >> 32) & 0xFFFFFF, b.fields, b.bits),
                bool(int(t) >> 62),
            )
            for key, t in zip(flagged[0][:m], flagged[1][:m], strict=True)
        ]
        forced_run = {(w, pairs) for w, pairs, from_run in tagged if from_run}
        expected = [
            (w, pairs)
            for w, pairs, from_run in tagged
            if from_run or not any((w, pairs - {pv}) in forced_run for pv in pairs if pv[1] == letter + 1)
        ]
        paths = [(w, pairs) for w, pairs, _ in tagged]
        got = [
            (
                int(deduped[1][i]) & 0xFFFFFFFF,
                _pairs(deduped[0][i], int(deduped[1][i]) >> 32, b.fields, b.bits),
            )
            for i in range(k)
        ]
        assert sorted(got, key=repr) == sorted(expected, key=repr)
        assert all(int(t) >> 61 == 0 for t in deduped[1][:k])  # flags cleared
        kept = set(got)
        for w, pairs in set(paths) - kept:
            assert any(kw == w and kp < pairs for kw, kp in kept)
        # the trees: no looser than without the drops, and sound
        plain_value = b.build(plain[0], plain[1], m)
        value = b.build(deduped[0], deduped[1], k)
        assert int(scores[keep].max()) <= value <= plain_value
        assert b.value(deduped[0], deduped[1], k) == value  # the tree's value without the tree
        keys, wids = deduped[0][:k].copy(), deduped[1][:k].copy()


def test_the_packed_trie_gives_each_word_its_points_by_id(enable_lexicon) -> None:
    """The paths carry word ids, and the build reads a word's points by its id: every word the
    trie ends has its own points there, the lexicon's."""
    trie = build_prove_trie(enable_lexicon, 12)
    packed = packed_trie(trie)
    ends = trie.node_word >= 0
    assert packed.word_pts.shape == (trie.n_words,)
    assert np.array_equal(packed.word_pts[trie.node_word[ends]], trie.node_points[ends])
    assert np.array_equal(
        packed.word_pts[trie.node_word[ends]], enable_lexicon.word_points[trie.node_word[ends]]
    )
    # "quiz" (4 letters, Qu one face) 1 point, "quizzes" (7 letters) 5 under the default scoring
    by_word = {enable_lexicon.words[w]: int(packed.word_pts[w]) for w in trie.node_word[ends]}
    assert by_word["quiz"] == 1 and by_word["quizzes"] == 5


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    bits=st.sampled_from([(60, 0), (20, 0), (60, 60), (60, 15), (0, 0)]),
    n=st.integers(0, 300),
)
def test_the_radix_sort_orders_keys_stably_with_their_values(data, bits: tuple[int, int], n: int) -> None:
    """The paths' sort (both key words, or the low one alone as on 3x4): the keys in order,
    each value still with its key, equal keys in their first order (as a stable sort)."""
    bits_low, bits_high = bits
    draw = st.lists(st.integers(0, 7), min_size=n, max_size=n)  # few values: many equal keys

    def word(n_bits: int) -> np.ndarray:  # keys below 2**n_bits, in every digit's range
        raw = np.array(data.draw(draw), np.uint64) << np.uint64(max(n_bits - 3, 0))
        raw |= np.arange(n, dtype=np.uint64) % np.uint64(3)
        return raw & np.uint64((1 << n_bits) - 1)

    low, high = word(bits_low), word(bits_high)
    keys = np.stack([high, low], axis=1).astype(np.uint64)
    vals = np.arange(n, dtype=np.int64) * 7
    want = np.lexsort((low, high))  # stable: equal keys keep their order
    k, v = keys.copy(), vals.copy()
    radix_sort(k, v, n, np.empty_like(k), np.empty_like(v), bits_low, bits_high)
    assert np.array_equal(k, keys[want])
    assert np.array_equal(v, vals[want])


def test_a_class_is_split_by_degree_then_fewest_letters(tiny) -> None:
    geo = geometry(3, 4)
    # without a class: most neighbours first (2 inner cells, 6 edge cells, 4 corners), then
    # nearer the centre first
    plain = split_order(geo)
    assert plain.tolist() == [5, 6, 1, 2, 9, 10, 4, 7, 0, 3, 8, 11]
    masks = np.full(12, 0b111, np.uint64)  # 3 letters a cell
    masks[[6, 9]] = 0b1  # one letter: first of its degree
    masks[[1, 11]] = 0b11111  # five letters: last of its degree
    got = split_order(geo, masks)
    assert got.tolist() == [6, 5, 9, 2, 10, 4, 7, 1, 0, 3, 8, 11]
    assert [int(geo.deg[c]) for c in got] == sorted((int(d) for d in geo.deg), reverse=True)
    # the tree prover proves a class in its own order and bounds it as the reference does in that order
    prover = TreeProver(geo, tiny, build_prove_trie(tiny, 12), threshold=1)
    small = np.where(masks == 0b111, np.uint64(0b11), masks & np.uint64(0b11))
    bound = prover.tree_bound(small)
    assert prover.order.tolist() == split_order(geo, small).tolist() != plain.tolist()
    neighbours = [geo.neighbours(c) for c in range(12)]
    order = [int(c) for c in prover.order]
    assert bound == tree_bound_reference([int(m) for m in small], neighbours, prover.trie, order)
