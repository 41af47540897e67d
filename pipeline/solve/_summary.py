"""Per-board word summaries for the run store: sorted word ids, the longest word, and word
counts / points by length, from a :class:`~pipeline.solve.BatchResult`.

The kernel tallies the longest word and the per-length figures as it solves each board
(``solve_arrays(..., bins=...)``); :func:`summarise_result` then only sorts the ids where the
word lists are kept. :func:`summarise_words` computes the same from collected ids alone.

It lives in the solve layer so that the store (and every reader that imports it) stays free of
numba, whose import alone costs about 60 MB and a second per process.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.jit import njit
from pipeline.lexicon import CompiledLexicon
from pipeline.solve import BatchResult
from pipeline.solve.kernels import tally_board


@dataclass
class WordSummary:
    word_ids: np.ndarray  # int32 [offsets[-1]], sorted within each board (= alphabetical) if sorted
    longest_id: np.ndarray  # int32 [n], the longest word (ties: alphabetically first); -1: none
    counts: np.ndarray  # int32 [n, n_bins], words per length bin
    points: np.ndarray  # int32 [n, n_bins], points per length bin
    # When sorted: the batch's distinct word ids, ascending (a dictionary of the batch's words in
    # alphabetical order), and each of ``word_ids`` as an index into it
    dict_ids: np.ndarray | None = None  # int32 [distinct words]
    dict_index: np.ndarray | None = None  # int32 [offsets[-1]]


@njit(nogil=True, cache=True)
def _sort_ids(offsets, ids, n_words):
    """Each board's word ids sorted (= alphabetical order), the batch's distinct ids in
    ascending order, and each sorted id's index among them."""
    n = len(offsets) - 1
    total = len(ids)
    out = np.empty(total, np.int32)
    index = np.empty(total, np.int32)
    if n_words <= 4 * total:
        # A counting sort of the whole batch by word id, then one stable pass that deals each id
        # back to its board: 2.5x faster than sorting ~100 ids per board one board at a time.
        # The buckets that are not empty are the distinct ids, in order.
        end = np.zeros(n_words + 1, np.int32)
        for k in range(total):
            end[ids[k] + 1] += 1
        local = np.empty(n_words, np.int32)
        distinct = np.empty(n_words, np.int32)
        m = 0
        for w in range(n_words):
            if end[w + 1] > 0:
                local[w] = m
                distinct[m] = w
                m += 1
            end[w + 1] += end[w]
        board_by_id = np.empty(total, np.int32)
        for b in range(n):
            for k in range(offsets[b], offsets[b + 1]):
                w = ids[k]
                board_by_id[end[w]] = b
                end[w] += 1
        nxt = offsets[:-1].copy()
        k = 0
        for w in range(n_words):
            while k < end[w]:
                b = board_by_id[k]
                out[nxt[b]] = w
                index[nxt[b]] = local[w]
                nxt[b] += 1
                k += 1
        return out, index, distinct[:m].copy()
    # a lexicon much larger than the batch: zeroing its buckets would cost more than sorting
    out[:] = ids
    for b in range(n):
        s = offsets[b]
        e = offsets[b + 1]
        if e - s > 1:
            out[s:e].sort()
    distinct = np.unique(out).astype(np.int32)
    index[:] = np.searchsorted(distinct, out)
    return out, index, distinct


@njit(nogil=True, cache=True)
def _tally(offsets, ids, word_len, word_points, lo, n_bins):
    n = len(offsets) - 1
    longest_id = np.full(n, -1, np.int32)
    counts = np.zeros((n, n_bins), np.int32)
    points = np.zeros((n, n_bins), np.int32)
    for b in range(n):
        longest_id[b] = tally_board(
            ids, offsets[b], offsets[b + 1], word_len, word_points, lo, counts[b], points[b]
        )
    return longest_id, counts, points


def _summary(
    offsets: np.ndarray,
    word_ids: np.ndarray,
    tally: tuple[np.ndarray, np.ndarray, np.ndarray],
    lexicon: CompiledLexicon,
    sort: bool,
) -> WordSummary:
    """The summary of a tally (longest id, counts, points) and its ids, sorted with their
    dictionary when ``sort``."""
    if not sort:
        return WordSummary(word_ids, *tally)
    ids, index, distinct = _sort_ids(offsets, word_ids, len(lexicon.word_points))
    return WordSummary(ids, *tally, dict_ids=distinct, dict_index=index)


def summarise_words(
    offsets: np.ndarray,
    word_ids: np.ndarray,
    lexicon: CompiledLexicon,
    lo: int,
    n_bins: int,
    sort: bool = True,
) -> WordSummary:
    """Summarise a batch's found words (CSR ``offsets`` int64 [n+1] and ``word_ids``) into
    length bins ``lo, lo+1, ..., lo+n_bins-2`` and a last bin for everything longer. Without
    ``sort`` (a run without word lists) the returned ids keep the kernel's order; the other
    figures are the same."""
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    word_ids = np.ascontiguousarray(word_ids, dtype=np.int32)
    tally = _tally(offsets, word_ids, lexicon.trie.word_len, lexicon.word_points, lo, n_bins)
    return _summary(offsets, word_ids, tally, lexicon, sort)


def summarise_result(
    result: BatchResult, lexicon: CompiledLexicon, lo: int, n_bins: int, sort: bool
) -> WordSummary:
    """:func:`summarise_words` for a result: the kernel's tally when it made one for these
    bins (then only the ids are sorted, when ``sort``), else computed from the ids."""
    if result.bins != (lo, n_bins) or result.longest_id is None:
        return summarise_words(result.offsets, result.word_ids, lexicon, lo, n_bins, sort)
    assert result.len_counts is not None and result.len_points is not None
    tally = (result.longest_id, result.len_counts, result.len_points)
    offsets = np.ascontiguousarray(result.offsets, dtype=np.int64)
    return _summary(offsets, np.ascontiguousarray(result.word_ids, dtype=np.int32), tally, lexicon, sort)
