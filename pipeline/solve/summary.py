"""Per-board word summaries for the run store: sorted word ids, the longest word, and word
counts / points by length, computed with numba from a :class:`~pipeline.solve.BatchResult`.

It lives in the solve layer so that the store (and every reader that imports it) stays free of
numba, whose import alone costs about 60 MB and a second per process.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from pipeline.lexicon import CompiledLexicon


@dataclass
class WordSummary:
    word_ids: np.ndarray  # int32 [offsets[-1]], sorted within each board (= alphabetical) if sorted
    longest_id: np.ndarray  # int32 [n], the longest word (ties: alphabetically first); -1: none
    counts: np.ndarray  # int32 [n, n_bins], words per length bin
    points: np.ndarray  # int32 [n, n_bins], points per length bin


@njit(nogil=True, cache=True)
def _summarise(offsets, ids, word_len, word_points, lo, n_bins, sort):
    """Sort each board's word ids (when ``sort``: only the word lists need the order); per
    board, the longest word's id (ties: smallest id, which is the alphabetically first word) and
    word counts / points per length bin."""
    n = len(offsets) - 1
    total = len(ids)
    n_words = len(word_len)
    out = np.empty(total, np.int32)
    if not sort:
        out[:] = ids
    elif n_words <= 4 * total:
        # A counting sort of the whole batch by word id, then one stable pass that deals each id
        # back to its board: 2.5x faster than sorting ~100 ids per board one board at a time.
        end = np.zeros(n_words + 1, np.int32)
        for k in range(total):
            end[ids[k] + 1] += 1
        for w in range(n_words):
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
                nxt[b] += 1
                k += 1
    else:
        # a lexicon much larger than the batch: zeroing its buckets would cost more than sorting
        out[:] = ids
        for b in range(n):
            s = offsets[b]
            e = offsets[b + 1]
            if e - s > 1:
                out[s:e].sort()
    longest_id = np.full(n, -1, np.int32)
    counts = np.zeros((n, n_bins), np.int32)
    points = np.zeros((n, n_bins), np.int32)
    top = n_bins - 1
    for b in range(n):
        best_len = -1
        best = -1
        for k in range(offsets[b], offsets[b + 1]):
            w = out[k]
            length = int(word_len[w])
            if length > best_len or (length == best_len and w < best):
                best_len = length
                best = w
            j = min(max(length - lo, 0), top)
            counts[b, j] += 1
            points[b, j] += word_points[w]
        longest_id[b] = best
    return out, longest_id, counts, points


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
    out = _summarise(
        np.ascontiguousarray(offsets, dtype=np.int64),
        np.ascontiguousarray(word_ids, dtype=np.int32),
        lexicon.trie.word_len,
        lexicon.word_points,
        lo,
        n_bins,
        sort,
    )
    return WordSummary(*out)
