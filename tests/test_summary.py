"""The word summary the run store writes: both of its sorting strategies, and the unsorted
summary of a run without word lists, against numpy; the kernel's own tally (``bins=``) against
the summary of the collected ids, on every kernel."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.boards import parse_compact
from pipeline.lexicon import CompiledLexicon, DropReport, Lexicon, compile_words, load_lexicon
from pipeline.lexicon.trie import Alphabet
from pipeline.rules import get_rules
from pipeline.solve import solve_arrays
from pipeline.solve._summary import summarise_result, summarise_words
from tests.conftest import ENABLE2K


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
        # the batch's dictionary: its distinct ids ascending, and an index per sorted id
        assert got.dict_ids is not None and got.dict_index is not None
        assert np.array_equal(got.dict_ids, np.unique(ids))
        assert np.array_equal(got.dict_ids[got.dict_index], got.word_ids)


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


# ------------------------------------------------------------------ the kernel's own tally

TALLY_RULES = {
    "boggle": get_rules("boggle"),
    "min1": get_rules("boggle", min_length=1),
    "min5": get_rules("boggle", min_length=5),
    "big": get_rules("big"),
    "revisit": get_rules("boggle", revisit=True),
}


@cache
def tally_lexicon(rule_key: str) -> CompiledLexicon:
    words = [w for w in load_lexicon(ENABLE2K).words if len(w) <= 12]
    lex = Lexicon("test", "test", "0", words, DropReport(len(words)))
    return compile_words(lex, Alphabet.compact_for(words), TALLY_RULES[rule_key])


def check_tally(boards: np.ndarray, rows: int, cols: int, lex: CompiledLexicon) -> None:
    """The kernel's tally, with and without collecting ids, equals the summary of the ids."""
    lo, n_bins = 3 if lex.rules.min_length >= 3 else lex.rules.min_length, 5
    plain = solve_arrays(boards, rows, cols, lex)
    want = summarise_words(plain.offsets, plain.word_ids, lex, lo, n_bins)
    for collect in (True, False):
        res = solve_arrays(boards, rows, cols, lex, collect=collect, bins=(lo, n_bins))
        assert res.bins == (lo, n_bins)
        assert np.array_equal(res.score, plain.score) and np.array_equal(res.n_words, plain.n_words)
        assert np.array_equal(res.dead_cells, plain.dead_cells)
        if collect:
            assert np.array_equal(res.offsets, plain.offsets) and np.array_equal(res.word_ids, plain.word_ids)
        else:
            assert res.offsets[-1] == 0 and len(res.word_ids) == 0
        got = summarise_result(res, lex, lo, n_bins, sort=collect)
        assert np.array_equal(got.longest_id, want.longest_id)
        assert np.array_equal(got.counts, want.counts) and np.array_equal(got.points, want.points)
        if collect:
            assert np.array_equal(got.word_ids, want.word_ids)
        # the figures add up to the kernel's own per-board totals
        assert np.array_equal(got.counts.sum(axis=1), plain.n_words)
        assert np.array_equal(got.points.sum(axis=1), plain.score)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(1, 10),
    st.integers(1, 10),
    st.integers(1, 8),
    st.sampled_from(sorted(TALLY_RULES)),
    st.integers(0, 2**32 - 1),
)
def test_kernel_tally_equals_the_summary_of_the_ids(
    rows: int, cols: int, n: int, rule_key: str, seed: int
) -> None:
    # every kernel (<= 64 cells, more, revisit) and several minimum lengths (the first bin moves)
    lex = tally_lexicon(rule_key)
    rng = np.random.default_rng(seed)
    boards = rng.integers(-1, len(lex.alphabet), size=(n, rows * cols)).astype(np.int8)
    check_tally(boards, rows, cols, lex)


@pytest.mark.parametrize(
    ("shape", "rule_key"), [((4, 4), "boggle"), ((4, 4), "revisit"), ((10, 10), "boggle")]
)
def test_tally_without_ids_survives_a_board_with_more_than_1024_words(
    shape: tuple[int, int], rule_key: str
) -> None:
    # without collection the id buffer holds one board (1024 ids at first): a richer board
    # grows it; the boards after it must be tallied from their own ids only
    rows, cols = shape
    lex = tally_lexicon(rule_key)
    rich = lex.alphabet.encode(parse_compact(("perslatgsineters" * 7)[: rows * cols], shape).faces)
    batch = np.random.default_rng(5).integers(0, len(lex.alphabet), size=(30, rows * cols)).astype(np.int8)
    batch[3] = batch[20] = rich
    assert solve_arrays(rich[None, :], rows, cols, lex).offsets[-1] > 1024
    check_tally(batch, rows, cols, lex)
