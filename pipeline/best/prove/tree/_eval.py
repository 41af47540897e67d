"""Evaluating the orderly tree of a board class, lifting its cells, and branch and bound on it
(numba kernels; see :mod:`pipeline.best.prove.tree`).

The tree lives in node records (int32 [nodes, 4], see
:func:`pipeline.best.prove.tree._build.tree_from_paths`): the first child (-1 for none), the next
sibling (-1 for none), the value (a SUM node's points plus its children's values, a CHOICE
node's best child) and a tag (``-1 - cell`` for a CHOICE node, ``points << LETTER_BITS |
letter`` for a SUM node). A SUM node's children are CHOICE nodes in reverse split
order of their cells (a path's key has a field per cell, the first cell in split order most
significant, 0 when the path misses the cell, so paths that miss a cell sort before those that
take it); a CHOICE node's are SUM nodes by increasing letter. The build numbers nodes in
pre-order; the records have room beyond the tree for the nodes that lifting makes, which share
the tree's subtrees. :func:`eval_tree`, the reference the tests check the branching against,
takes the tree as arrays (:meth:`pipeline.best.prove.tree._builder.TreeBuilder.preordered`).
"""

from __future__ import annotations

import numpy as np

from pipeline.best.prove.tree._build import FIRST, LETTER_BITS, MAX_POINTS, NEXT, TAG, VAL
from pipeline.jit import njit

#: :func:`tree_branch`'s statuses when the tree's arrays have no room left for lifted nodes and
#: when the pending CHOICE nodes overflow ``n_entries`` (the caller grows them and calls again).
FULL_ARENA, FULL_ENTRIES = -3, -4
#: :func:`tree_branch`'s status when a lifted SUM node's points do not fit its tag
#: (:data:`MAX_POINTS`).
OVERFLOW = -5


@njit(nogil=True, cache=True)
def eval_tree(is_choice, label, points, first, nxt, forced, val):
    """The bound with the cells ``forced[cell] >= 0`` fixed to that letter, by a full pass over
    the built tree (children after their parent): the reference of :func:`tree_branch`'s
    incremental bound. ``val`` (int64 [n_nodes]) is the caller's scratch."""
    for x in range(is_choice.shape[0] - 1, -1, -1):
        y = first[x]
        if is_choice[x]:
            f = forced[label[x]]
            best = 0
            while y >= 0:
                if (f < 0 or label[y] == f) and val[y] > best:
                    best = val[y]
                y = nxt[y]
            val[x] = best
        else:
            v = np.int64(points[x])
            while y >= 0:
                v += val[y]
                y = nxt[y]
            val[x] = v
    return val[0]


@njit(nogil=True, cache=True)
def lift_frames(n_cells):
    """The scratch :func:`lift_cell` needs for a board of ``n_cells`` cells: per depth of the
    merge, for each ancestor of the node being merged, the node made, the two lists' cursors,
    the last child linked, the value so far and the two merged nodes' values."""
    return np.empty((7, 2 * n_cells + 2), np.int64)


@njit(nogil=True, cache=True, inline="always")
def _key(node, i, z_choice, rank):
    """(tag, merge key) of list entry ``i`` under a CHOICE node (its letter) or a SUM node
    (minus its cell's split rank, so the list's order is increasing); a huge key past the end."""
    if i < 0:
        return np.int64(0), np.int64(1) << 62
    t = np.int64(node[i, TAG])
    if z_choice:
        return t, t & 63
    return t, -rank[-1 - t]


@njit(nogil=True, cache=True)
def lift_cell(node, top, root, cell, letter, rank, frames):
    """The tree of the sub-class with ``cell`` forced to ``letter``, where ``cell`` is the first
    cell in split order that ``root``'s tree still offers (its CHOICE node, if any, is the
    root's last child X): the root without X merged with X's SUM child for the letter (none
    when the letter spells nothing there). Merging two SUM nodes adds their points and merges
    their children; two CHOICE nodes of one cell merge their SUM children letter by letter; a
    child on one side only is shared, and a list's tail left on one side only is linked, not
    copied. Nodes are made from ``top`` on; ``rank[cell]`` is the cell's place in the split
    order and ``frames`` the caller's scratch (:func:`lift_frames`). Returns (new root,
    new top), the root itself when it has no CHOICE node for the cell, (-1, top) when the
    arrays are full, or (-2, top) when a merged node's points overflow its tag.

    Sound and tighter than forcing: a board of the sub-class takes the same letters in both
    merged trees, so its value in the merge is the sum of its values in the two; taking the
    best letter once for both (a max of sums) instead of in each (a sum of maxes) can only
    lower the bound. A word may count twice at a merged node (once per side): still sound."""
    x = node[root, FIRST]
    while x >= 0 and node[x, NEXT] >= 0:
        x = node[x, NEXT]
    if x < 0 or node[x, TAG] != -1 - cell:
        return root, top
    s = node[x, FIRST]
    while s >= 0 and (node[s, TAG] & 63) < letter:
        s = node[s, NEXT]
    if s >= 0 and (node[s, TAG] & 63) != letter:
        s = -1
    cap = node.shape[0]
    if top >= cap:
        return -1, top
    z = top
    top += 1
    tag = np.int64(node[root, TAG])
    if s >= 0:
        tag += (node[s, TAG] >> LETTER_BITS) << LETTER_BITS
    if tag >> LETTER_BITS > MAX_POINTS:
        return -2, top
    node[z, TAG] = tag
    node[z, FIRST] = -1
    node[z, NEXT] = -1
    # the node being merged and its state are locals; ``frames`` holds its ancestors' (lift_frames)
    fz, fa, fb, flast, facc = frames[0], frames[1], frames[2], frames[3], frames[4]
    fva, fvb = frames[5], frames[6]
    d = 0
    z_choice = False
    ia = node[root, FIRST]
    ib = node[s, FIRST] if s >= 0 else -1
    last = -1
    va = np.int64(node[root, VAL]) - node[x, VAL]  # the root without X
    vb = np.int64(node[s, VAL]) if s >= 0 else np.int64(0)
    # A merged SUM node's value starts as the two sides' values added (their points and every
    # child's value): a child on one side only, copied or in a tail, changes nothing, and a
    # merged pair changes it by its merged value less the pair's two values, so no tail is
    # walked. A merged CHOICE node's is the best child, at most the larger side's value.
    acc = va + vb
    if ia == x:
        ia = -1  # the root's list without X (its last child)
    ta, ka = _key(node, ia, z_choice, rank)
    tb, kb = _key(node, ib, z_choice, rank)
    while True:
        if (ia < 0 or ib < 0) and not (d == 0 and ia >= 0):
            # one list left (or none): link its tail as it is (not the root's, which holds X)
            tail = ia if ia >= 0 else ib
            if tail >= 0:
                if last >= 0:
                    node[last, NEXT] = tail
                else:
                    node[z, FIRST] = tail
                if z_choice:
                    # the tail's best, unless the best so far already reaches its side's value
                    most = va if ia >= 0 else vb
                    while tail >= 0 and acc < most:
                        v = np.int64(node[tail, VAL])
                        if v > acc:
                            acc = v
                        tail = node[tail, NEXT]
            node[z, VAL] = acc
            if d == 0:
                return z, top
            # back to the parent: link the node made, and add its value to the parent's
            child, v, cva, cvb = z, acc, va, vb
            d -= 1
            z, ia, ib, last, acc, va, vb = fz[d], fa[d], fb[d], flast[d], facc[d], fva[d], fvb[d]
            if d == 0 and ia == x:
                ia = -1  # the root's list without X (its last child)
            z_choice = node[z, TAG] < 0
            if last >= 0:
                node[last, NEXT] = child
            else:
                node[z, FIRST] = child
            last = child
            if z_choice:
                if v > acc:
                    acc = v
            else:
                acc += v - cva - cvb
            ta, ka = _key(node, ia, z_choice, rank)
            tb, kb = _key(node, ib, z_choice, rank)
            continue
        if ka != kb:
            # one side's child alone: a copy of its header (its subtree shared)
            if ka < kb:
                src = ia
                ia = node[ia, NEXT]
                if d == 0 and ia == x:
                    ia = -1  # the root's list without X (its last child)
                ta, ka = _key(node, ia, z_choice, rank)
            else:
                src = ib
                ib = node[ib, NEXT]
                tb, kb = _key(node, ib, z_choice, rank)
            if top >= cap:
                return -1, top
            y = top
            top += 1
            node[y, FIRST] = node[src, FIRST]
            node[y, NEXT] = -1
            v = np.int64(node[src, VAL])
            node[y, VAL] = v
            node[y, TAG] = node[src, TAG]
            if last >= 0:
                node[last, NEXT] = y
            else:
                node[z, FIRST] = y
            last = y
            if z_choice and v > acc:
                acc = v
            continue
        # the same cell (or letter) on both sides: merge the two, the node's state kept
        if top >= cap:
            return -1, top
        y = top
        top += 1
        if z_choice:
            tag = ta + ((tb >> LETTER_BITS) << LETTER_BITS)  # a SUM node: the points added
            if tag >> LETTER_BITS > MAX_POINTS:
                return -2, top
        else:
            tag = ta
        node[y, TAG] = tag
        node[y, FIRST] = -1
        node[y, NEXT] = -1
        fz[d], fa[d], fb[d], flast[d], facc[d], fva[d], fvb[d] = (
            z,
            node[ia, NEXT],
            node[ib, NEXT],
            last,
            acc,
            va,
            vb,
        )
        d += 1
        z = y
        z_choice = tag < 0
        va = np.int64(node[ia, VAL])
        vb = np.int64(node[ib, VAL])
        ia = node[ia, FIRST]
        ib = node[ib, FIRST]
        last = -1
        acc = va + vb if tag >= 0 else np.int64(0)
        ta, ka = _key(node, ia, z_choice, rank)
        tb, kb = _key(node, ib, z_choice, rank)


@njit(nogil=True, cache=True, inline="always")
def _push_children(x, node, e_node, e_next, head, cell_sum, n_e):
    """Push node x's CHOICE children on their cells' pending lists (entries from ``n_e`` on);
    returns (entries used, the children's values summed), or (-1, 0) when ``e_node`` is full."""
    added = np.int64(0)
    y = node[x, FIRST]
    while y >= 0:
        if n_e == e_node.shape[0]:
            return -1, np.int64(0)
        c = -1 - node[y, TAG]
        v = node[y, VAL]
        e_node[n_e] = y
        e_next[n_e] = head[c]
        head[c] = n_e
        cell_sum[c] += v
        added += v
        n_e += 1
        y = node[y, NEXT]
    return n_e, added


@njit(nogil=True, cache=True)
def _orderly(node, root, level0, split, threshold, enumerate_max, forced, scratch, leaves, count):
    """Branch and bound of the sub-class whose tree is ``root`` (``cells[:level0]`` forced),
    forcing the remaining cells one by one on that tree (the stacks of the field's orderly
    bound). In an orderly tree a CHOICE node of a cell sits only below SUM nodes of cells
    earlier in the split order, so once ``cells[:l]`` are forced the live tree is the SUM nodes
    reached (their points summed into ``base``) and, pending under them, CHOICE nodes of later
    cells, kept on one list per cell with the sum of their unforced values. The bound is
    ``base`` plus the pending sums, equal to the full evaluation of the tree with those cells
    forced (:func:`eval_tree`). Forcing the next cell to a letter visits only that cell's
    pending CHOICE nodes: on entering a level, one walk over them adds up their SUM children's
    values per letter (``letter_sum[level, letter]``), which gives every letter's bound at once
    (most letters fail there, having pushed nothing: on the 4x4 class 1159739, 12.1M of 13.8M
    letters tried, whose pushes were 488M entries before); for a letter that passes and is not
    a leaf, each SUM child for it (a cursor per node walks its letters once over all letters)
    adds its points and pushes its own CHOICE children; the pushes are undone (a log) before
    the next letter, so a step costs what it touches, not the tree.
    ``split`` is :func:`tree_branch`'s (cells, faces, n_faces, left) and ``scratch`` its
    arrays for this pass (the pending entries, the per-cell list heads and sums, the per-level
    state and letter sums). Leaves go to ``leaves`` (:func:`_leaf`); returns (the sub-classes
    that passed, or -1 when the entries are too few; the leaves table, perhaps a new one)."""
    cells, faces, n_faces, left = split
    entries, head, cell_sum, levels, letter_sum = scratch
    e_node, e_next, cursor = entries[0], entries[1], entries[2]
    idx, mark, base, pend_at = levels[0], levels[1], levels[2], levels[3]
    head[:] = -1
    cell_sum[:] = 0
    n_e, _ = _push_children(root, node, e_node, e_next, head, cell_sum, 0)
    if n_e < 0:
        return -1, leaves
    nodes = 0
    lvl = level0
    idx[lvl] = 0
    mark[lvl] = n_e
    base[lvl] = node[root, TAG] >> LETTER_BITS
    pend_at[lvl] = node[root, VAL] - base[lvl]
    while lvl >= level0:
        c = cells[lvl]
        while n_e > mark[lvl]:
            n_e -= 1
            y = e_node[n_e]
            cc = -1 - node[y, TAG]
            head[cc] = e_next[n_e]
            cell_sum[cc] -= node[y, VAL]
        if idx[lvl] == n_faces[lvl]:
            forced[c] = -1
            lvl -= 1
            continue
        tot = letter_sum[lvl]
        if idx[lvl] == 0:
            # every letter's bound first, from its SUM nodes' values (the cell's pending list
            # does not change while its letters are tried: the pushes are of later cells)
            for k in range(n_faces[lvl]):
                tot[faces[lvl, k]] = 0
            e = head[c]
            while e >= 0:
                s = node[e_node[e], FIRST]
                cursor[e] = s
                while s >= 0:
                    tot[node[s, TAG] & 63] += node[s, VAL]
                    s = node[s, NEXT]
                e = e_next[e]
        f = faces[lvl, idx[lvl]]
        idx[lvl] += 1
        forced[c] = f
        pts = base[lvl]
        pend = pend_at[lvl] - cell_sum[c]
        bound = pts + pend + tot[f]  # most letters fail here, having pushed nothing
        if bound < threshold:
            continue
        nodes += 1
        if left[lvl + 1] <= enumerate_max:  # a leaf: its bound is all it needs
            leaves = _leaf(leaves, count, forced, bound)
            continue
        e = head[c]
        while e >= 0:
            s = cursor[e]
            while s >= 0 and (node[s, TAG] & 63) < f:
                s = node[s, NEXT]
            cursor[e] = s
            if s >= 0 and (node[s, TAG] & 63) == f:
                pts += node[s, TAG] >> LETTER_BITS
                n_e, added = _push_children(s, node, e_node, e_next, head, cell_sum, n_e)
                if n_e < 0:
                    return -1, leaves
                pend += added
            e = e_next[e]
        lvl += 1
        idx[lvl] = 0
        mark[lvl] = n_e
        base[lvl] = pts
        pend_at[lvl] = pend
    return nodes, leaves


@njit(nogil=True, cache=True)
def _leaf(table, count, forced, bound):
    """Record a leaf in ``table`` (int64 [cap, cells + 1]: the forced letters, the bound last;
    ``count`` int64 [1] the rows used) and return the table: a full one is replaced by one
    twice as long (the branching goes on, never run again)."""
    k = count[0]
    if k == table.shape[0]:
        grown = np.empty((max(2 * k, 16), table.shape[1]), table.dtype)
        grown[:k] = table[:k]
        table = grown
    n = forced.shape[0]
    table[k, :n] = forced
    table[k, n] = bound
    count[0] = k + 1
    return table


@njit(nogil=True, cache=True)
def tree_branch(
    node,
    n_nodes,
    rank,
    cells,
    faces,
    n_faces,
    left,
    threshold,
    enumerate_max,
    lift_above,
    lift_levels,
    n_entries,
    leaves,
):
    """Branch and bound inside one class on its tree (node records ``[0, n_nodes)`` of
    :func:`pipeline.best.prove.tree._build.tree_from_paths`, the room beyond them used for lifted
    nodes), forcing ``cells`` (the class's cells with several letters, in split order) one by
    one. ``faces[l, :n_faces[l]]``
    are the letters of ``cells[l]`` (increasing), ``left[l]`` the boards left once
    ``cells[:l]`` are forced, ``rank[cell]`` the cell's place in the split order.

    While a sub-class's bound is above ``lift_above`` and fewer than ``lift_levels`` cells are
    forced, the next cell is lifted (:func:`lift_cell`: one merged tree per letter, tighter);
    below it, the remaining cells are forced on that tree (:func:`_orderly`). Returns (status,
    branch nodes, leaves): status 0, :data:`FULL_ARENA` or :data:`FULL_ENTRIES` when the node
    records or ``n_entries`` (pending CHOICE nodes) are too small, or :data:`OVERFLOW` when a
    lifted node's points overflow its tag; leaves are the sub-classes of at most
    ``enumerate_max`` boards whose bound reaches ``threshold``: the forced letter per cell
    (-1 = free), then the bound, in ``leaves`` (int64 [cap, cells + 1]) or, when it filled
    up, a longer table that replaced it as the branching went on."""
    n_cells = rank.shape[0]
    n_lv = cells.shape[0]
    forced = np.full(n_cells, -1, np.int64)
    count = np.zeros(1, np.int64)
    if node[0, VAL] < threshold:
        return 0, 0, leaves[:0]
    if left[0] <= enumerate_max:
        leaves = _leaf(leaves, count, forced, node[0, VAL])
        return 0, 1, leaves[:1]
    split = (cells, faces, n_faces, left)
    scratch = (  # _orderly's
        np.empty((3, n_entries), np.int32),
        np.empty(n_cells, np.int64),
        np.empty(n_cells, np.int64),
        np.zeros((4, n_lv + 1), np.int64),
        np.zeros((n_lv + 1, 1 << LETTER_BITS), np.int64),
    )
    frames = lift_frames(n_cells)
    lv_root = np.zeros(n_lv + 1, np.int64)
    lv_idx = np.zeros(n_lv + 1, np.int64)
    lv_top = np.zeros(n_lv + 1, np.int64)
    nodes = 1
    top = n_nodes
    lvl = 0
    entering = True
    while lvl >= 0:
        r = lv_root[lvl]
        if entering:
            entering = False
            if node[r, VAL] <= lift_above or lvl >= lift_levels:
                got, leaves = _orderly(
                    node, r, lvl, split, threshold, enumerate_max, forced, scratch, leaves, count
                )
                if got < 0:
                    return FULL_ENTRIES, nodes, leaves[:0]
                nodes += got
                lvl -= 1
                continue
            lv_idx[lvl] = 0
            lv_top[lvl] = top
        top = lv_top[lvl]
        if lv_idx[lvl] == n_faces[lvl]:
            forced[cells[lvl]] = -1
            lvl -= 1
            continue
        f = faces[lvl, lv_idx[lvl]]
        lv_idx[lvl] += 1
        forced[cells[lvl]] = f
        sub, top = lift_cell(node, top, r, cells[lvl], f, rank, frames)
        if sub < 0:
            return FULL_ARENA if sub == -1 else OVERFLOW, nodes, leaves[:0]
        if node[sub, VAL] < threshold:
            continue
        nodes += 1
        if left[lvl + 1] <= enumerate_max:
            leaves = _leaf(leaves, count, forced, node[sub, VAL])
        else:
            lvl += 1
            lv_root[lvl] = sub
            entering = True
    return 0, nodes, leaves[: count[0]]
