"""The numba passes of the streaming trie build (see :func:`pipeline.lexicon.trie.build_trie`).

Kept apart from the rest of :mod:`pipeline.lexicon.trie` (only ``_build`` imports it, inside the
functions that compile) so that loading a compiled lexicon from the cache, which is
all a run's main process does, never imports numba.
"""

from __future__ import annotations

import numpy as np

from pipeline.jit import njit


@njit(nogil=True, cache=True)
def common_prefix(tokens, starts, r):
    """Length of the common prefix of rows r-1 and r (0 for the first row)."""
    if r == 0:
        return 0
    a, prev = starts[r], starts[r - 1]
    n = min(starts[r + 1] - a, a - prev)
    k = 0
    while k < n and tokens[a + k] == tokens[prev + k]:
        k += 1
    return k


@njit(nogil=True, cache=True)
def count_nodes(tokens, starts):
    """Nodes of the trie of the rows (root included), or -1 when the rows are not strictly
    increasing (a prefix before its extensions)."""
    total = 1
    for r in range(len(starts) - 1):
        k = common_prefix(tokens, starts, r)
        length = starts[r + 1] - starts[r]
        if r > 0:
            prev_len = starts[r] - starts[r - 1]
            if k == length or (k < prev_len and tokens[starts[r] + k] < tokens[starts[r - 1] + k]):
                return -1
        total += length - k
    return total


@njit(nogil=True, cache=True)
def preorder_nodes(tokens, starts, row_word, n_nodes, max_len):
    """The sorted rows' trie in depth-first pre-order: a row adds the nodes beyond its common
    prefix with the row above. Returns (parent, face, depth, word id) per node."""
    parent = np.empty(n_nodes, np.int32)
    face = np.empty(n_nodes, np.int8)
    depth = np.empty(n_nodes, np.int16)
    word = np.full(n_nodes, -1, np.int32)
    parent[0] = -1
    face[0] = -1
    depth[0] = 0
    on_path = np.zeros(max_len + 1, np.int64)  # on_path[d]: the current row's node at depth d
    next_node = 1
    for r in range(len(starts) - 1):
        a = starts[r]
        length = starts[r + 1] - a
        for k in range(common_prefix(tokens, starts, r), length):
            parent[next_node] = on_path[k]
            face[next_node] = tokens[a + k]
            depth[next_node] = k + 1
            on_path[k + 1] = next_node
            next_node += 1
        word[on_path[length]] = row_word[r]
    return parent, face, depth, word


@njit(nogil=True, cache=True)
def breadth_first(parent, face, depth, word, max_depth):
    """Renumber pre-order nodes breadth-first (stable by depth, so siblings stay contiguous and
    in face order); returns the packed node records (see pack_nodes), node_face, node_depth."""
    n = len(parent)
    start = np.zeros(max_depth + 2, np.int64)
    for i in range(n):
        start[depth[i] + 1] += 1
    for d in range(1, max_depth + 2):
        start[d] += start[d - 1]
    new_of = np.empty(n, np.int32)
    for i in range(n):
        new_of[i] = start[depth[i]]
        start[depth[i]] += 1
    low32 = np.uint64(0xFFFFFFFF)
    nodes = np.zeros((n, 2), np.uint64)
    node_face = np.empty(n, np.int8)
    node_depth = np.empty(n, np.int16)
    for i in range(n):
        j = new_of[i]
        nodes[j, 1] |= (np.uint64(np.int64(word[i])) & low32) << np.uint64(32)
        node_face[j] = face[i]
        node_depth[j] = depth[i]
        if i > 0:
            p = new_of[parent[i]]
            nodes[p, 0] |= np.uint64(1) << np.uint64(face[i])
            if nodes[p, 1] & low32 == 0:
                # pre-order meets a node's children smallest face first, so the first one
                # seen is the first child (0, the root, is nobody's child: it means unset)
                nodes[p, 1] |= np.uint64(j)
    return nodes, node_face, node_depth


@njit(nogil=True, cache=True)
def row_less(tok_a, a0, a1, tok_b, b0, b1):
    """Row tok_a[a0:a1] sorts before tok_b[b0:b1] (a prefix before its extensions)."""
    n = min(a1 - a0, b1 - b0)
    for k in range(n):
        if tok_a[a0 + k] != tok_b[b0 + k]:
            return tok_a[a0 + k] < tok_b[b0 + k]
    return a1 - a0 < b1 - b0


@njit(nogil=True, cache=True)
def merge_rows(tok_a, start_a, word_a, tok_b, start_b, word_b):
    """Merge two sorted row sets into one (flat tokens, row starts, word per row)."""
    n_a, n_b = len(start_a) - 1, len(start_b) - 1
    tokens = np.empty(len(tok_a) + len(tok_b), np.int8)
    starts = np.zeros(n_a + n_b + 1, np.int64)
    words = np.empty(n_a + n_b, np.int64)
    i = j = 0
    at = 0
    for r in range(n_a + n_b):
        take_a = j >= n_b or (
            i < n_a and row_less(tok_a, start_a[i], start_a[i + 1], tok_b, start_b[j], start_b[j + 1])
        )
        if take_a:
            lo, hi = start_a[i], start_a[i + 1]
            tokens[at : at + hi - lo] = tok_a[lo:hi]
            words[r] = word_a[i]
            i += 1
        else:
            lo, hi = start_b[j], start_b[j + 1]
            tokens[at : at + hi - lo] = tok_b[lo:hi]
            words[r] = word_b[j]
            j += 1
        at += hi - lo
        starts[r + 1] = at
    return tokens, starts, words
