"""One part's statistics: everything the report needs from its boards, as sums and counts that
add up exactly across parts and runs (:mod:`pipeline.stats._merge`).

:func:`part_stats` computes them from the part's Arrow table: in the worker that solved the
chunk (with the word ids the kernel found and the dice layout the generator rolled), or, for a
part written before statistics were recorded, in the analysis from the part file itself (word
strings instead of ids, the layout re-rolled from the seed). Both count the same things.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pipeline.stats._define import (
    BLANK_FACE,
    DEAD_CELL,
    MAX_VOWELS,
    POSITIONS,
    QU,
    WHERE,
    BadDefinition,
    decode_column,
    position_classes,
    rare_face,
    vowel_face,
)

STATS_VERSION = 1
#: The distributions kept as exact value counts (per source), by column.
VALUE_COLUMNS = ("score", "n_words", "dead_cells", "max_word_len")
DEFAULT_TOP = 20
#: Vocabulary of a part's word keys: the run's lexicon (ids of its ``_vocabulary`` side file),
#: or the part's own list of strings (``PartStats.words``), for parts whose ids are not known.
LEXICON_VOCAB = "lexicon"
LOCAL_VOCAB = "local"


@dataclass(frozen=True)
class StatsSpec:
    """What the statistics depend on besides the boards: the bad-board definition of the
    drivers' counts and how many top boards are kept per source."""

    bad: BadDefinition = field(default_factory=BadDefinition)
    top: int = DEFAULT_TOP

    def to_dict(self) -> dict[str, Any]:
        return {"bad_words": self.bad.words, "bad_score": self.bad.score, "top": self.top}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> StatsSpec:
        return cls(BadDefinition(d.get("bad_words"), d.get("bad_score")), int(d["top"]))

    def serves(self, wanted: StatsSpec) -> bool:
        """Whether statistics computed for this spec answer ``wanted`` (the same bad boards,
        at least as many top boards)."""
        return self.bad == wanted.bad and self.top >= wanted.top


@dataclass(frozen=True)
class DiceLayout:
    """Which die (``die[b, cell]``) and which of its sides (``side[b, cell]``) each board shows."""

    dice: tuple[tuple[str, ...], ...]
    die: np.ndarray
    side: np.ndarray


@dataclass(frozen=True)
class WordIds:
    """What the kernel found, as ids of a vocabulary of ``size`` words plus ``""`` at index
    ``size``: each board's longest word (-1: none; in the table's row order) and, when the
    words were collected, the ids of every word found on each source's boards (any order:
    only their counts are kept)."""

    longest: np.ndarray
    size: int
    found: tuple[tuple[str, np.ndarray], ...] | None = None


@dataclass
class PartStats:
    """One part's statistics (see the module's description). Arrays are int64 counts and sums
    unless noted; ``S`` sources, ``K`` faces, ``B`` length bins."""

    tag: str  # the part's boggle.config: binds the statistics to their run
    chunk: int
    boards: int
    spec: StatsSpec
    sources: list[str]
    faces: list[str]  # face labels, sorted; the blank as BLANK_FACE
    shape: tuple[int, int] | None  # None: boards of several shapes (no cell-level statistics)
    bins: list[str]
    vocab: str  # LEXICON_VOCAB or LOCAL_VOCAB
    words: list[str] | None  # the part's own vocabulary (LOCAL_VOCAB)
    values: dict[str, np.ndarray]  # column -> [3, m]: source, value, count
    length_words: np.ndarray  # [S, B]
    length_points: np.ndarray  # [S, B]
    face_n: np.ndarray  # [S, K] boards showing the face
    face_s: np.ndarray  # [S, K] their score sum
    face_q: np.ndarray  # [S, K] their sum of squared scores
    xtx: np.ndarray | None  # [S, K, K] the face model's X'X (cell counts per face)
    xty: np.ndarray | None  # [S, K]
    pos_xtx: np.ndarray | None  # [3K, 3K] the (face, position class) model over all sources
    pos_xty: np.ndarray | None  # [3K]
    bad: int  # bad boards (spec.bad), all sources
    factors: list[str]  # "kind\tfactor" of each driver, in the report's order
    factor_has: np.ndarray  # [F] boards with the factor
    factor_bad: np.ndarray  # [F] bad boards with it
    dice: tuple[tuple[str, ...], ...] | None  # the dice of a dice run (per-die counts below)
    die_n: np.ndarray | None  # [D, M] boards on which die d shows side m
    die_s: np.ndarray | None  # [D, M] their score sum
    die_bad: np.ndarray | None  # [D, M] the bad ones
    word_counts: np.ndarray | None  # [3, m]: source, word key, boards finding it (None: no lists)
    longest: np.ndarray  # [3, m]: source, longest word's key, boards
    top: list[dict[str, Any]]  # the spec.top best boards of each source (score desc, board_id)


def source_codes(table: Any) -> tuple[list[str], np.ndarray]:
    import pyarrow as pa
    import pyarrow.compute as pc

    col = table.column("source").combine_chunks()
    if not pa.types.is_dictionary(col.type):
        col = pc.dictionary_encode(col)
    idx = col.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    names = [str(x) for x in col.dictionary.to_pylist()]
    used = np.flatnonzero(np.bincount(idx, minlength=len(names))) if len(idx) else np.zeros(0, np.int64)
    # keep only the sources present, in name order (parts of one run agree on it)
    kept = sorted(((names[i], i) for i in used), key=lambda t: t[0])
    remap = np.zeros(max(len(names), 1), np.int64)
    for new, (_, old) in enumerate(kept):
        remap[old] = new
    return [name for name, _ in kept], remap[idx] if len(idx) else idx


def length_bins_of(columns: Sequence[str]) -> list[str]:
    """The length bins a part's columns hold (``words_len_<b>`` with ``points_len_<b>``),
    shortest first: a run's minimum word length decides its first bin."""
    import re

    found = {m.group(1) for c in columns if (m := re.fullmatch(r"words_len_(\d+|9plus)", c))}
    found &= {m.group(1) for c in columns if (m := re.fullmatch(r"points_len_(\d+|9plus)", c))}
    return sorted((b for b in found if b.isdigit()), key=int) + (["9plus"] if "9plus" in found else [])


def _ints(table: Any, name: str) -> np.ndarray:
    return table.column(name).to_numpy().astype(np.int64)


def value_counts(group: np.ndarray, values: np.ndarray) -> np.ndarray:
    """[3, m] (group, value, count) of every (group, value) pair present, sorted."""
    if not len(values):
        return np.zeros((3, 0), np.int64)
    lo = int(values.min())
    span = int(values.max()) - lo + 1
    key = group * span + (values - lo)
    n_keys = (int(group.max()) + 1) * span
    if n_keys <= 4 * len(values) + 1024:
        counts = np.bincount(key, minlength=n_keys)
        nz = np.flatnonzero(counts)
        uniq, cnt = nz, counts[nz]
    else:
        uniq, cnt = np.unique(key, return_counts=True)
    return np.stack([uniq // span, uniq % span + lo, cnt]).astype(np.int64)


def _group_sums(group: np.ndarray, n_groups: int, values: np.ndarray) -> np.ndarray:
    if n_groups == 1:
        return np.array([values.sum()], np.int64)
    out = np.zeros(n_groups, np.int64)
    np.add.at(out, group, values)
    return out


def _keys_counts(group: np.ndarray, keys: np.ndarray, size: int) -> np.ndarray:
    """[3, m] (group, key, count) of keys in [0, size)."""
    if not len(keys):
        return np.zeros((3, 0), np.int64)
    n_groups = int(group.max()) + 1
    if n_groups == 1:
        counts = np.bincount(keys, minlength=size)
        nz = np.flatnonzero(counts)
        return np.stack([np.zeros(len(nz), np.int64), nz, counts[nz]]).astype(np.int64)
    uniq, cnt = np.unique(group * size + keys, return_counts=True)
    return np.stack([uniq // size, uniq % size, cnt]).astype(np.int64)


def _found_counts(found: Sequence[tuple[str, np.ndarray]], sources: Sequence[str], size: int) -> np.ndarray:
    """[3, m] (source, word id, boards) from each source's word ids: one bincount a source, on
    the ids as the kernel gave them (no copy of the chunk's words)."""
    totals: dict[str, np.ndarray] = {}
    for name, ids in found:
        got = np.bincount(ids, minlength=size)
        totals[name] = totals[name] + got if name in totals else got
    pieces = []
    for s, name in enumerate(sources):
        if name in totals:
            nz = np.flatnonzero(totals[name])
            pieces.append(np.stack([np.full(len(nz), s, np.int64), nz, totals[name][nz]]))
    return np.concatenate(pieces, axis=1).astype(np.int64) if pieces else np.zeros((3, 0), np.int64)


def _word_keys(table: Any, group: np.ndarray, ids: WordIds | None, sources: Sequence[str]) -> tuple[Any, ...]:
    """(vocab, local words, word_counts, longest) of the part."""
    import pyarrow as pa
    import pyarrow.compute as pc

    has_words = "words" in table.column_names
    if ids is not None and (ids.found is not None or not has_words):
        longest = np.where(ids.longest >= 0, ids.longest, ids.size).astype(np.int64)
        counts = None
        if has_words and ids.found is not None:
            counts = _found_counts(ids.found, sources, ids.size + 1)
        return LEXICON_VOCAB, None, counts, _keys_counts(group, longest, ids.size + 1)
    lw = table.column("longest_word").combine_chunks()
    pieces = [lw.cast(pa.string()) if pa.types.is_dictionary(lw.type) else lw]
    flat_n = 0
    parent = None
    if has_words:
        wl = table.column("words").combine_chunks()
        flat = wl.flatten()
        if pa.types.is_dictionary(flat.type):
            flat = flat.cast(pa.string())
        parent = pc.list_parent_indices(wl).to_numpy(zero_copy_only=False).astype(np.int64)
        flat_n = len(flat)
        pieces.insert(0, flat)
    both = pa.concat_arrays([p.cast(pa.string()) for p in pieces])
    enc = pc.dictionary_encode(both)
    codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    words = [str(w) for w in enc.dictionary.to_pylist()]
    size = len(words)
    counts = None
    if has_words and parent is not None:
        counts = _keys_counts(group[parent], codes[:flat_n], size)
    return LOCAL_VOCAB, words, counts, _keys_counts(group, codes[flat_n:], size)


def top_boards(table: Any, group: np.ndarray, n_groups: int, k: int) -> list[dict[str, Any]]:
    score = _ints(table, "score")
    board_id = _ints(table, "board_id")
    order = np.lexsort((board_id, -score))
    picked: list[int] = []
    for g in range(n_groups):
        picked.extend(order[group[order] == g][:k].tolist())
    if not picked:
        return []
    cols = ["board_id", "board", "rows", "cols", "score", "n_words", "longest_word", "dead_cells"]
    rows = table.select(cols).take(picked).to_pylist()
    words: list[Any] = [None] * len(picked)
    if "words" in table.column_names:
        words = [" ".join(w) for w in table.column("words").take(picked).to_pylist()]
    for rec, g, w in zip(rows, group[picked].tolist(), words, strict=True):
        rec["source"] = g
        rec["words"] = w
    return rows


def _factor_counts(
    faces: Sequence[str], codes: np.ndarray, rows: int, cols: int, bad: np.ndarray
) -> tuple[list[str], list[int], list[int]]:
    """The face, interaction and position drivers (see :mod:`pipeline.analyze._bad`) of
    single-shape boards."""
    from pipeline.boards import geometry

    vowel = np.array([vowel_face(f) for f in faces])[codes]
    rare = np.array([rare_face(f) for f in faces])[codes]
    qu = np.array([f == QU for f in faces])[codes]
    # a vowel on a neighbouring cell of each cell (the 8 around it): what a Qu needs
    nbr = geometry(rows, cols).nbr_list
    near_vowel = np.zeros_like(vowel)
    for cell in range(rows * cols):
        around = nbr[cell][nbr[cell] >= 0]
        if len(around):
            near_vowel[:, cell] = vowel[:, around].any(axis=1)
    flags = [
        (f"board\tat most {MAX_VOWELS} vowels", vowel.sum(axis=1) <= MAX_VOWELS),
        ("board\ta Qu face", qu.any(axis=1)),
        ("board\ta rare letter (j k q x z)", rare.any(axis=1)),
        ("interaction\ttwo Qu faces", qu.sum(axis=1) >= 2),
        ("interaction\ttwo rare letters", rare.sum(axis=1) >= 2),
        ("interaction\ta Qu with no vowel next to it", (qu & ~near_vowel).any(axis=1)),
    ]
    classes = position_classes(rows, cols)
    for what, where in (("a rare letter", rare), ("Qu", qu)):
        for k in sorted(set(classes.tolist())):
            has = where[:, classes == k].any(axis=1)
            flags.append((f"position\t{what} {WHERE[POSITIONS[k]]}", has))
    names = [name for name, _ in flags]
    return names, [int(h.sum()) for _, h in flags], [int((h & bad).sum()) for _, h in flags]


def part_stats(
    table: Any,
    *,
    tag: str,
    chunk: int,
    bins: Sequence[str],
    spec: StatsSpec | None = None,
    ids: WordIds | None = None,
    layout: DiceLayout | None = None,
) -> PartStats:
    """The statistics of one part (``table``: its boards, as the run writes them; ``bins``: the
    length bins of its ``words_len_*`` columns). ``ids``: the word ids the kernel found (else
    the words are read from the table); ``layout``: the dice each board was rolled with."""
    from pipeline.stats._kernels import face_presence, gram

    spec = spec or StatsSpec()
    n = table.num_rows
    sources, group = source_codes(table)
    n_src = max(1, len(sources))
    score, n_words = _ints(table, "score"), _ints(table, "n_words")
    dead = _ints(table, "dead_cells")
    values = {c: value_counts(group, _ints(table, c)) for c in VALUE_COLUMNS}
    lw = np.stack([_group_sums(group, n_src, _ints(table, f"words_len_{b}")) for b in bins], axis=1).reshape(
        n_src, len(bins)
    )
    lp = np.stack([_group_sums(group, n_src, _ints(table, f"points_len_{b}")) for b in bins], axis=1).reshape(
        n_src, len(bins)
    )
    bad = spec.bad.mask(n_words, score)
    r = table.column("rows").to_numpy().astype(np.int64) if n else np.zeros(0, np.int64)
    c = table.column("cols").to_numpy().astype(np.int64) if n else np.zeros(0, np.int64)
    shapes = sorted(set(zip(r.tolist(), c.tolist(), strict=True)))
    shape = shapes[0] if len(shapes) == 1 else None
    xtx = xty = pos_xtx = pos_xty = None
    die_n = die_s = None
    dice = None
    codes = None
    if shape is not None:
        faces, codes = decode_column(table.column("board"), *shape)
        k = len(faces)
        blank = faces.index(BLANK_FACE) if BLANK_FACE in faces else -1
        codes64 = codes.astype(np.int64)
        face_n, face_s, face_q = face_presence(codes64, score, group, k, n_src, blank)
        xtx, xty = gram(codes64, score, group, k, n_src)
        classes = position_classes(*shape).astype(np.int64)
        one = np.zeros(n, np.int64)
        pos_xtx3, pos_xty2 = gram(codes64 + classes[None, :] * k, score, one, 3 * k, 1)
        pos_xtx, pos_xty = pos_xtx3[0], pos_xty2[0]
        if layout is not None:
            dice = layout.dice
            die_n, die_s = die_sums(layout, score)
    else:
        faces, face_n, face_s, face_q = _mixed_presence(table, r, c, score, group, n_src)
    counted = bad_counts(bad, dead, faces, codes, shape, layout)
    vocab, words, counts, longest = _word_keys(table, group, ids, sources)
    return PartStats(
        tag=tag,
        chunk=chunk,
        boards=n,
        spec=spec,
        sources=sources,
        faces=list(faces),
        shape=shape,
        bins=list(bins),
        vocab=vocab,
        words=words,
        values=values,
        length_words=lw,
        length_points=lp,
        face_n=face_n,
        face_s=face_s,
        face_q=face_q,
        xtx=xtx,
        xty=xty,
        pos_xtx=pos_xtx,
        pos_xty=pos_xty,
        bad=counted.bad,
        factors=counted.factors,
        factor_has=counted.has,
        factor_bad=counted.bad_with,
        dice=dice,
        die_n=die_n,
        die_s=die_s,
        die_bad=counted.die_bad,
        word_counts=counts,
        longest=longest,
        top=top_boards(table, group, n_src, spec.top),
    )


def die_sums(layout: DiceLayout, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """[D, M] boards on which die d shows side m, and their score sum."""
    m = max(len(d) for d in layout.dice)
    size = len(layout.dice) * m
    key = (layout.die.astype(np.int64) * m + layout.side.astype(np.int64)).ravel()
    n = np.bincount(key, minlength=size).astype(np.int64)
    s = np.zeros(size, np.int64)
    np.add.at(s, key, np.repeat(score, layout.die.shape[1]))
    return n.reshape(len(layout.dice), m), s.reshape(len(layout.dice), m)


@dataclass
class BadCounts:
    """The bad boards of a part and, per driver, the boards with it and the bad ones among them."""

    bad: int
    factors: list[str]
    has: np.ndarray
    bad_with: np.ndarray
    die_bad: np.ndarray | None  # [D, M] bad boards on which die d shows side m


def bad_counts(
    bad: np.ndarray,
    dead: np.ndarray,
    faces: Sequence[str],
    codes: np.ndarray | None,
    shape: tuple[int, int] | None,
    layout: DiceLayout | None,
) -> BadCounts:
    """The drivers' counts for the bad boards ``bad`` (a mask): a dead cell for every part; the
    face, position and per-die drivers where the boards have one shape (``codes``)."""
    factors = [DEAD_CELL]
    has_n, bad_n = [int((dead >= 1).sum())], [int((dead >= 1)[bad].sum())]
    die_bad = None
    if shape is not None and codes is not None:
        names, h, b = _factor_counts(faces, codes, *shape, bad)
        factors += names
        has_n += h
        bad_n += b
        if layout is not None:
            m = max(len(d) for d in layout.dice)
            key = (layout.die.astype(np.int64) * m + layout.side.astype(np.int64))[bad].ravel()
            die_bad = np.bincount(key, minlength=len(layout.dice) * m).astype(np.int64)
            die_bad = die_bad.reshape(len(layout.dice), m)
    return BadCounts(int(bad.sum()), factors, np.array(has_n, np.int64), np.array(bad_n, np.int64), die_bad)


def _mixed_presence(
    table: Any, r: np.ndarray, c: np.ndarray, score: np.ndarray, group: np.ndarray, n_src: int
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Face presence of boards of several shapes: each shape decoded on its own, then the
    faces put on one list."""
    from pipeline.stats._kernels import face_presence

    per_shape = []
    for rows, cols in sorted(set(zip(r.tolist(), c.tolist(), strict=True))):
        take = np.flatnonzero((r == rows) & (c == cols))
        faces, codes = decode_column(table.column("board").take(take), rows, cols)
        blank = faces.index(BLANK_FACE) if BLANK_FACE in faces else -1
        got = face_presence(codes.astype(np.int64), score[take], group[take], len(faces), n_src, blank)
        per_shape.append((faces, got))
    every = sorted({f for faces, _ in per_shape for f in faces})
    index = {f: i for i, f in enumerate(every)}
    out = [np.zeros((n_src, len(every)), np.int64) for _ in range(3)]
    for faces, got in per_shape:
        cols_ = [index[f] for f in faces]
        for acc, part in zip(out, got, strict=True):
            acc[:, cols_] += part
    return every, out[0], out[1], out[2]
