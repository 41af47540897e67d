"""The word summary the run store writes: both of its sorting strategies, and the unsorted
summary of a run without word lists, against numpy."""

from __future__ import annotations

import numpy as np

from pipeline.lexicon import CompiledLexicon
from pipeline.solve import solve_arrays
from pipeline.solve.summary import summarise_words


def _expected(offsets: np.ndarray, ids: np.ndarray, lex: CompiledLexicon, lo: int, n_bins: int) -> tuple:
    n = len(offsets) - 1
    out, longest = [], np.full(n, -1)
    counts, points = np.zeros((n, n_bins), int), np.zeros((n, n_bins), int)
    for b in range(n):
        mine = sorted(int(w) for w in ids[offsets[b] : offsets[b + 1]])
        out += mine
        if mine:
            lengths = [int(lex.trie.word_len[w]) for w in mine]
            longest[b] = mine[lengths.index(max(lengths))]
        for w, length in zip(mine, [int(lex.trie.word_len[w]) for w in mine], strict=True):
            j = min(max(length - lo, 0), n_bins - 1)
            counts[b, j] += 1
            points[b, j] += int(lex.word_points[w])
    return np.array(out, dtype=np.int32), longest, counts, points


def test_both_sort_strategies_match_a_plain_sort(enable_lexicon: CompiledLexicon) -> None:
    rng = np.random.default_rng(3)
    boards = rng.integers(0, len(enable_lexicon.alphabet), size=(3000, 16)).astype(np.int8)
    boards[:5] = -1  # boards without words
    res = solve_arrays(boards, 4, 4, enable_lexicon)
    # the whole batch holds more ids than a quarter of the lexicon: the counting sort; its first
    # 20 boards hold far fewer: the per-board sort
    assert res.offsets[-1] * 4 >= enable_lexicon.n_words > res.offsets[20] * 4
    for n in (len(res), 20):
        offsets = res.offsets[: n + 1]
        ids = res.word_ids[: offsets[-1]]
        got = summarise_words(offsets, ids, enable_lexicon, 3, 7)
        want = _expected(offsets, ids, enable_lexicon, 3, 7)
        assert np.array_equal(got.word_ids, want[0])
        assert np.array_equal(got.longest_id, want[1])
        assert np.array_equal(got.counts, want[2]) and np.array_equal(got.points, want[3])
        assert got.counts[:5].sum() == 0 and (got.longest_id[:5] == -1).all()


def test_unsorted_summary_has_the_same_figures(enable_lexicon: CompiledLexicon) -> None:
    rng = np.random.default_rng(4)
    boards = rng.integers(0, len(enable_lexicon.alphabet), size=(2000, 16)).astype(np.int8)
    res = solve_arrays(boards, 4, 4, enable_lexicon)
    # the kernel's order is not alphabetical, so the tie-break on the longest word is exercised
    assert any(
        list(res.word_ids[s:e]) != sorted(res.word_ids[s:e])
        for s, e in zip(res.offsets[:-1], res.offsets[1:], strict=True)
    )
    got = summarise_words(res.offsets, res.word_ids, enable_lexicon, 3, 7, sort=False)
    want = _expected(res.offsets, res.word_ids, enable_lexicon, 3, 7)
    assert np.array_equal(got.word_ids, res.word_ids)  # left in the kernel's order
    assert np.array_equal(got.longest_id, want[1])
    assert np.array_equal(got.counts, want[2]) and np.array_equal(got.points, want[3])
