"""The batch loop every trie walk shares, written once (numba).

A walk (the trie kernels of :mod:`pipeline.solve.kernel` and
:mod:`pipeline.solve.revisit_kernel`) is a :class:`typing.NamedTuple` of its inputs and work
arrays, registered with :func:`walk_kind` as three steps on board ``b``: prepare it, walk it,
count its dead cells. :func:`drive` runs the boards through them and fills the output contract
of :func:`pipeline.solve.solve_arrays`: per board the points, distinct words, longest word,
dead cells, the found word ids (CSR), and optionally a tally per length bin.

The steps are picked by the walk's type when :func:`drive` is compiled (numba ``overload``),
so each walk gets its own machine code with the steps inlined, and numba's cache keeps it: a
walk passed as a function argument, or captured by a closure, is typed by its address and would
compile again in every process.

A walk records each distinct word once per board (``seen[w] != stamp``, then ``seen[w] =
stamp``), adding its points, counting it, keeping the longest length and, with ``record``,
storing its id while ``ids`` has room (counting on past the end). The walks write these lines
out by hand: as a helper, even inlined, they measured 5-30% slower in the hot loops (numba
counting references on the helper's array arguments). ``ids`` is never reassigned inside a walk
(a growable buffer in the hot loop made numba count references on every step, about 25% of the
time): a walk that ran out of room returns -1 for its end, and the driver grows the buffer and
walks the board again with a new stamp.

The alternative solvers (:mod:`pipeline.solve.binary`, :mod:`pipeline.solve.dp`) share the
Python harness :func:`pipeline.solve.letters.solve_letters` but keep their own batch loops: as
walks of this driver they measured 1.1-2x slower.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit
from numba.extending import overload

_STEPS: dict[type, tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]] = {}


def walk_kind(cls: type, prepare: Any, walk: Any, finish: Any) -> None:
    """Register the steps of walk ``cls`` (njit functions):

    * ``prepare(ws, b)``: per-board set-up before the first walk of board ``b``;
    * ``walk(ws, b, word_points, word_len, record, seen, stamp, ids, n_ids)`` -> (points,
      words, longest, end): every word of board b recorded as above, end -1 when ``ids``
      ran out of room;
    * ``finish(ws, b)`` -> the board's dead cells (non-blank cells no found word uses).
    """
    _STEPS[cls] = (prepare, walk, finish)


def prepare_board(ws, b):
    """The walk's ``prepare`` step (dispatched on the walk's type in compiled code)."""
    raise NotImplementedError("only callable from numba-compiled code")


def walk_board(ws, b, word_points, word_len, record, seen, stamp, ids, n_ids):
    """The walk's ``walk`` step (dispatched on the walk's type in compiled code)."""
    raise NotImplementedError("only callable from numba-compiled code")


def finish_board(ws, b):
    """The walk's ``finish`` step (dispatched on the walk's type in compiled code)."""
    raise NotImplementedError("only callable from numba-compiled code")


@overload(prepare_board, inline="always")
def _prepare_step(ws, b):
    step = _STEPS[ws.instance_class][0]
    return lambda ws, b: step(ws, b)


@overload(walk_board, inline="always")
def _walk_step(ws, b, word_points, word_len, record, seen, stamp, ids, n_ids):
    step = _STEPS[ws.instance_class][1]
    return lambda ws, b, word_points, word_len, record, seen, stamp, ids, n_ids: step(
        ws, b, word_points, word_len, record, seen, stamp, ids, n_ids
    )


@overload(finish_board, inline="always")
def _finish_step(ws, b):
    step = _STEPS[ws.instance_class][2]
    return lambda ws, b: step(ws, b)


@njit(nogil=True, cache=True)
def no_prepare(ws, b):
    """The ``prepare`` step of a walk that needs no per-board set-up."""


@njit(nogil=True, cache=True)
def new_outputs(n_boards, n_cells, n_words, collect, n_bins):
    """The per-board result arrays, the word-id buffer, the per-word "last seen" stamps and
    the tally arrays (longest word id, words and points per length bin; ``n_bins`` columns)."""
    score = np.zeros(n_boards, np.int32)
    board_words = np.zeros(n_boards, np.int32)
    longest = np.zeros(n_boards, np.int16)
    dead = np.zeros(n_boards, np.int32)
    offsets = np.zeros(n_boards + 1, np.int64)
    # room for the usual word count (random 4x4: ~35 a board; big boards: a few per cell); a
    # tally without collection only ever holds one board's ids
    ids = np.empty(max(1024, (n_boards if collect else 1) * max(64, 4 * n_cells)), np.int32)
    seen = np.full(n_words, -1, np.int32)
    longest_id = np.full(n_boards if n_bins > 0 else 0, -1, np.int32)
    counts = np.zeros((n_boards if n_bins > 0 else 0, n_bins), np.int32)
    points = np.zeros((n_boards if n_bins > 0 else 0, n_bins), np.int32)
    return score, board_words, longest, dead, offsets, ids, seen, longest_id, counts, points


@njit(nogil=True, cache=True)
def tally_board(ids, start, end, word_len, word_points, lo, counts, points):
    """Add the words ``ids[start:end]`` of one board to its per-length rows ``counts`` and
    ``points`` (bins ``lo, lo+1, ...``, the last bin for everything longer) and return the
    longest word's id (ties: the smallest id, which is the alphabetically first word; -1 if
    none). The order of the ids does not matter."""
    top = len(counts) - 1
    best_len = -1
    best = -1
    for k in range(start, end):
        w = ids[k]
        length = int(word_len[w])
        if length > best_len or (length == best_len and w < best):
            best_len = length
            best = w
        j = min(max(length - lo, 0), top)
        counts[j] += 1
        points[j] += word_points[w]
    return best


@njit(nogil=True, cache=True)
def end_board(b, ids, start, end, collect, lo, n_bins, word_len, word_points, longest_id, counts, points):
    """Board ``b``'s ids ``ids[start:end]`` are recorded: tally them when there are bins
    (:func:`tally_board`) and return where the next board's ids start (``start`` again when
    the ids are not kept)."""
    if n_bins > 0:
        longest_id[b] = tally_board(ids, start, end, word_len, word_points, lo, counts[b], points[b])
        if not collect:
            return start
    return end


@njit(nogil=True, cache=True)
def grow(ids, needed):
    cap = len(ids)
    while cap < needed:
        cap *= 2
    out = np.empty(cap, dtype=np.int32)
    out[: len(ids)] = ids
    return out


@njit(nogil=True, cache=True)
def drive(ws, n_boards, n_cells, word_points, word_len, collect, lo, n_bins):
    """Every board ``0..n_boards-1`` of walk ``ws`` (see :func:`walk_kind`) -> (score, words,
    longest, dead, offsets, ids, longest_id, counts, points). With ``collect`` false no ids are
    kept (offsets all zero); ``n_bins`` > 0 tallies each board's words per length bin (``lo,
    lo+1, ...``, the last bin for everything longer)."""
    outs = new_outputs(n_boards, n_cells, len(word_points), collect, n_bins)
    score, board_words, longest, dead, offsets, ids, seen, longest_id, counts, points = outs
    record = collect or n_bins > 0  # a tally reads the board's ids, then drops them
    n_ids = 0
    stamp = -1
    for b in range(n_boards):
        prepare_board(ws, b)
        while True:
            stamp += 1
            pts, n_found, longest_len, end = walk_board(
                ws, b, word_points, word_len, record, seen, stamp, ids, n_ids
            )
            if end >= 0:
                break
            ids = grow(ids, n_ids + n_found)
        n_ids = end_board(
            b, ids, n_ids, end, collect, lo, n_bins, word_len, word_points, longest_id, counts, points
        )
        score[b] = pts
        board_words[b] = n_found
        longest[b] = longest_len
        dead[b] = finish_board(ws, b)
        offsets[b + 1] = n_ids
    return score, board_words, longest, dead, offsets, ids[:n_ids].copy(), longest_id, counts, points
