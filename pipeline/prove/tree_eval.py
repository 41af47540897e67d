"""Evaluating the orderly tree of a board class, and branch and bound on it (numba kernels; see
:mod:`pipeline.prove.tree`). The tree is in pre-order (:func:`pipeline.prove.tree_build.preorder`),
so a subtree is a contiguous index range and a forced evaluation skips the letters not chosen.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(nogil=True, cache=True, inline="always")
def fold_into_parent(i, is_choice, parent, val):
    """Node i's value is final: a SUM parent adds it, a CHOICE parent keeps the best."""
    p = parent[i]
    if is_choice[p]:
        if val[i] > val[p]:
            val[p] = val[i]
    else:
        val[p] += val[i]


@njit(nogil=True, cache=True, inline="always")
def _fold_up(is_choice, parent, live, n_live, val):
    """Fold the values of the ``live`` nodes (pre-order) into their parents, last first;
    returns the root's value."""
    for j in range(n_live - 1, 0, -1):
        fold_into_parent(live[j], is_choice, parent, val)
    return val[0]


@njit(nogil=True, cache=True)
def eval_tree(is_choice, label, points, parent, end, forced, val, live):
    """The bound with the cells ``forced[cell] >= 0`` fixed to that letter. ``val`` and
    ``live`` (int64 [n_nodes]) are the caller's scratch.

    :func:`eval_level` at level 0 (every node recomputed): one forward pass lists the nodes
    outside the subtrees of letters not chosen (skipped by their ``end``), one backward pass over
    them folds every node into its parent (children follow their parent in pre-order, so a node
    is final when reached).
    """
    no_levels = np.zeros(0, np.int64)  # level 0 reads no level bits
    return eval_level(is_choice, label, points, parent, end, no_levels, forced, 0, val.reshape(1, -1), live)


@njit(nogil=True, cache=True)
def level_bits(is_choice, label, parent, cells, n_cells):
    """int64 [n_nodes]: bit l set when ``cells[l]`` has a choice node in the node's subtree."""
    n_nodes = is_choice.shape[0]
    level_of = np.full(n_cells, -1, np.int64)
    for lvl in range(cells.shape[0]):
        level_of[cells[lvl]] = lvl
    lv = np.zeros(n_nodes, np.int64)
    for i in range(n_nodes - 1, -1, -1):
        if is_choice[i] and level_of[label[i]] >= 0:
            lv[i] |= np.int64(1) << level_of[label[i]]
        if i > 0:
            lv[parent[i]] |= lv[i]
    return lv


@njit(nogil=True, cache=True)
def eval_level(is_choice, label, points, parent, end, lv, forced, level, val, live):
    """The bound at B&B level ``level`` (the first ``level`` split cells forced), into
    ``val[level]``. Only nodes whose subtree holds a choice of the cell forced last are
    recomputed; any other live node keeps the value of the deepest earlier level that
    recomputed it (its subtree's choices are forced the same there): ``lv[i]`` bit l-1 is set
    when the cell forced at level l has a choice node in i's subtree."""
    n_nodes = is_choice.shape[0]
    out = val[level]
    n_live = 0
    i = 0
    bit = np.int64(1) << np.int64(level - 1) if level > 0 else np.int64(0)
    below = bit - 1 if level > 0 else np.int64(0)
    while i < n_nodes:
        if i > 0 and is_choice[i] == 0:
            f = forced[label[parent[i]]]
            if f >= 0 and f != label[i]:
                i = end[i]
                continue
        if level > 0 and lv[i] & bit == 0:
            m = lv[i] & below
            src = 0
            while m != 0:
                m >>= 1
                src += 1
            out[i] = val[src, i]
            live[n_live] = i
            n_live += 1
            i = end[i]
            continue
        out[i] = points[i]
        live[n_live] = i
        n_live += 1
        i += 1
    return _fold_up(is_choice, parent, live, n_live, out)


@njit(nogil=True, cache=True)
def tree_branch(
    is_choice, label, points, parent, end, cells, faces, n_faces, left, threshold, enumerate_max, n_cells
):
    """Branch and bound inside one class on its tree. ``cells`` are the class's cells with
    several letters in split order, ``faces[l, :n_faces[l]]`` the letters of ``cells[l]``,
    ``left[l]`` the boards left once ``cells[:l]`` are forced. Returns (root bound, branch
    nodes, leaves int64 [m, n_cells]: the forced letter per cell, -1 = free, of every
    sub-class of at most ``enumerate_max`` boards whose bound reaches ``threshold``)."""
    n_nodes = is_choice.shape[0]
    n_lv = cells.shape[0]
    lv = level_bits(is_choice, label, parent, cells, n_cells)
    val = np.empty((n_lv + 1, n_nodes), np.int64)
    live = np.empty(n_nodes, np.int64)
    forced = np.full(n_cells, -1, np.int64)
    leaves = np.empty((16, n_cells), np.int64)
    n_leaves = 0
    root = eval_level(is_choice, label, points, parent, end, lv, forced, 0, val, live)
    if root < threshold:
        return root, 0, leaves[:0].copy()
    nodes = 1
    if left[0] <= enumerate_max:
        leaves[0] = forced
        return root, nodes, leaves[:1].copy()
    idx = np.zeros(n_lv, np.int64)
    lvl = 0
    while lvl >= 0:
        c = cells[lvl]
        if idx[lvl] == n_faces[lvl]:
            forced[c] = -1
            lvl -= 1
            continue
        forced[c] = faces[lvl, idx[lvl]]
        idx[lvl] += 1
        if eval_level(is_choice, label, points, parent, end, lv, forced, lvl + 1, val, live) < threshold:
            continue
        nodes += 1
        if left[lvl + 1] <= enumerate_max:
            if n_leaves == leaves.shape[0]:
                grown = np.empty((2 * n_leaves, n_cells), np.int64)
                grown[:n_leaves] = leaves
                leaves = grown
            leaves[n_leaves] = forced
            n_leaves += 1
        else:
            lvl += 1
            idx[lvl] = 0
    return root, nodes, leaves[:n_leaves].copy()
