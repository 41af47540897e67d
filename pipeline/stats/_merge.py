"""Merging part statistics into a run's (:class:`RunStats`): every count and sum adds up
exactly, whatever the order of the parts, so a run's statistics do not depend on how it was
split, resumed or spread over workers.

Memory stays flat in the number of parts: each part is added and dropped; what grows is only
what the run has distinct (faces, score values, words of its vocabulary, the top boards kept).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pipeline.errors import DamagedRunError
from pipeline.stats._part import LEXICON_VOCAB, VALUE_COLUMNS, BadCounts, PartStats, StatsSpec


def _grow(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    if a.shape == shape:
        return a
    out = np.zeros(shape, a.dtype)
    out[tuple(slice(0, s) for s in a.shape)] = a
    return out


#: The memory the dense counts of a run's sources may take together (a source's array is 8
#: bytes a word of the vocabulary: 1.4 MB for ENABLE2K, so 47 sources).
DENSE_BYTES = 64 << 20


def _add_into(dense: np.ndarray, keys: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``dense`` with ``counts`` added at ``keys`` (grown by half or more for keys past it)."""
    if len(keys) == 0:
        return dense
    top = int(keys.max()) + 1
    if top > len(dense):  # names of the parts' own, past the vocabulary
        dense = _grow(dense, (max(top, len(dense) + len(dense) // 2),))
    np.add.at(dense, keys, counts)
    return dense


class KeyCounts:
    """Counts per source of keys that are words: ids of the run's vocabulary (shared, never
    copied), or strings of a part's own (mapped to the vocabulary, or to names of their own
    after it when it lacks them). A source's counts are kept sparse (sorted keys and their
    sums), compacted as parts come; once a source has found more than an eighth of the
    vocabulary they become a dense array indexed by key (each part adds its counts in place,
    no sorting), for as many sources as :data:`DENSE_BYTES` holds."""

    #: pending keys of a source that trigger its first compaction
    compact_at = 1 << 18
    #: the fewest keys a vocabulary is taken to have (a dense source has found an eighth)
    dense_floor = 1024

    def __init__(self, vocabulary: Sequence[str] | None):
        self.base: Sequence[str] = vocabulary if vocabulary is not None else ()
        self.has_vocabulary = vocabulary is not None
        self.extra: list[str] = []  # names beyond the vocabulary, from parts of their own
        self._index: dict[str, int] | None = None
        self._dense: dict[str, np.ndarray] = {}  # source -> count by key
        self._dense_max = max(1, DENSE_BYTES // (8 * max(len(self.base), self.dense_floor)))
        self._done: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # source -> compacted
        self._pending: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
        self._pending_n: dict[str, int] = {}

    def name(self, key: int) -> str:
        base = len(self.base)
        return self.base[key] if key < base else self.extra[key - base]

    def _keys_of(self, part: PartStats, keys: np.ndarray) -> np.ndarray:
        if part.vocab == LEXICON_VOCAB:
            if not self.has_vocabulary:
                raise DamagedRunError(f"part {part.chunk}: word ids without the run's vocabulary")
            if int(keys.max()) >= len(self.base):
                raise DamagedRunError(f"part {part.chunk}: a word id outside the run's vocabulary")
            return keys
        assert part.words is not None
        if self._index is None:
            self._index = {w: i for i, w in enumerate(self.base)}
        index = self._index
        local = np.empty(len(part.words), np.int64)
        for i, w in enumerate(part.words):
            j = index.get(w)
            if j is None:
                j = index[w] = len(self.base) + len(self.extra)
                self.extra.append(w)
            local[i] = j
        return local[keys]

    def add(self, triples: np.ndarray, sources: Sequence[str], part: PartStats) -> None:
        """Add a part's (source, key, count) ``triples``."""
        if not triples.shape[1]:
            return
        keys = self._keys_of(part, triples[1])
        for s in np.unique(triples[0]).tolist():
            take = triples[0] == s
            name = sources[s]
            dense = self._dense.get(name)
            if dense is not None:
                self._dense[name] = _add_into(dense, keys[take], triples[2][take])
                continue
            self._pending.setdefault(name, []).append((keys[take], triples[2][take]))
            self._pending_n[name] = self._pending_n.get(name, 0) + int(take.sum())
            # compacted when the pending keys outgrow what is held 8 times over: a run's keys
            # stop growing at its vocabulary's size, so compacting at 1x would sort that many
            # keys every few parts (1M boards: 50 sorts, 1.1 s); 8x is a few sorts a run for
            # at most 8 x 16 bytes a key held
            held = len(self._done.get(name, (np.zeros(0),))[0])
            if self._pending_n[name] > max(self.compact_at, 8 * held):
                self._compact(name)
                self._maybe_dense(name)

    def _maybe_dense(self, source: str) -> None:
        """Count ``source`` in a slot per key from now on if it has found more than an eighth
        of the vocabulary (a big run: sorting its keys again costs more than the slots) and
        the budget has room; a small run stays sparse (200 runs of 200 boards: 5 MB each
        otherwise)."""
        uniq, sums = self._done[source]
        if len(self._dense) >= self._dense_max or 8 * len(uniq) <= max(len(self.base), self.dense_floor):
            return
        dense = np.zeros(max(len(self.base), int(uniq[-1]) + 1), np.int64)
        dense[uniq] = sums
        self._dense[source] = dense
        del self._done[source]

    def _compact(self, source: str) -> tuple[np.ndarray, np.ndarray]:
        dense = self._dense.get(source)
        if dense is not None:
            keys = np.flatnonzero(dense)
            return keys, dense[keys]
        pieces = self._pending.pop(source, [])
        self._pending_n.pop(source, None)
        done = self._done.get(source)
        if done is not None:
            pieces.insert(0, done)
        if not pieces:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        keys = np.concatenate([k for k, _ in pieces])
        counts = np.concatenate([c for _, c in pieces])
        uniq, inv = np.unique(keys, return_inverse=True)
        sums = np.zeros(len(uniq), np.int64)
        np.add.at(sums, inv, counts)
        self._done[source] = (uniq, sums)
        return uniq, sums

    def sources(self) -> list[str]:
        return sorted(set(self._done) | set(self._pending) | set(self._dense))

    def items(self, source: str | None = None, most: int | None = None) -> tuple[list[str], np.ndarray]:
        """(keys, counts) present for ``source`` (None: every source pooled), keys ascending
        (the vocabulary's order, then names of the parts' own); with ``most``, only the keys
        counted at least as often as the ``most``-th most counted (ties all kept)."""
        if source is None:
            sparse = [self._compact(s) for s in self.sources() if s not in self._dense]
            tops = [len(d) for d in self._dense.values()] + [int(k.max()) + 1 for k, _ in sparse if len(k)]
            pooled = np.zeros(max(tops, default=0), np.int64)
            for d in self._dense.values():
                pooled[: len(d)] += d
            for k, c in sparse:
                np.add.at(pooled, k, c)
            uniq = np.flatnonzero(pooled)
            sums = pooled[uniq]
        elif source in self._done or source in self._pending or source in self._dense:
            uniq, sums = self._compact(source)
        else:
            return [], np.zeros(0, np.int64)
        keep = sums != 0
        if most is not None and int(keep.sum()) > most:
            keep &= sums >= np.partition(sums[keep], -most)[-most]
        uniq, sums = uniq[keep], sums[keep]
        return [self.name(int(k)) for k in uniq.tolist()], sums


@dataclass
class RunStats:
    """A run's statistics: the sum of its parts' (see :class:`~pipeline.stats.PartStats` for
    what each holds). Faces and sources are kept in the order first met; :meth:`faces_sorted`
    and :meth:`sources` give them sorted."""

    spec: StatsSpec
    vocabulary: Sequence[str] | None = None
    tag: str | None = None
    boards: int = 0
    parts: int = 0
    bins: list[str] | None = None
    face_list: list[str] = field(default_factory=list)
    shapes: set[tuple[int, int] | None] = field(default_factory=set)
    values: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)  # column -> source -> counts
    length_words: dict[str, np.ndarray] = field(default_factory=dict)
    length_points: dict[str, np.ndarray] = field(default_factory=dict)
    presence: dict[str, np.ndarray] = field(default_factory=dict)  # source -> [3, K]
    xtx: dict[str, np.ndarray] = field(default_factory=dict)  # source -> [K, K]
    xty: dict[str, np.ndarray] = field(default_factory=dict)
    pos_xtx: np.ndarray | None = None  # [3, K, 3, K]
    pos_xty: np.ndarray | None = None  # [3, K]
    bad: int = 0
    factors: dict[str, list[int]] = field(default_factory=dict)
    dice: tuple[tuple[str, ...], ...] | None = None
    dice_mixed: bool = False
    die: np.ndarray | None = None  # [3, D, M]: boards, score sum, bad
    words: KeyCounts | None = None
    longest: KeyCounts | None = None
    has_word_lists: bool = True
    top: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    bad_stale: bool = False
    top_stale: bool = False

    def __post_init__(self) -> None:
        self.words = KeyCounts(self.vocabulary)
        self.longest = KeyCounts(self.vocabulary)

    # ---------------------------------------------------------------- adding

    def _faces(self, faces: Sequence[str]) -> np.ndarray:
        known = {f: i for i, f in enumerate(self.face_list)}
        out = np.empty(len(faces), np.int64)
        for i, f in enumerate(faces):
            j = known.get(f)
            if j is None:
                j = known[f] = len(self.face_list)
                self.face_list.append(f)
            out[i] = j
        return out

    def add(self, part: PartStats) -> None:
        """Add one part's statistics (a DamagedRunError if it belongs to another run)."""
        if self.tag is None:
            self.tag = part.tag
        elif part.tag != self.tag:
            raise DamagedRunError(f"part {part.chunk}: statistics of another run")
        # statistics recorded for another bad-board definition, or with fewer top boards than
        # wanted: the analysis recounts those (stale) from the parts in its second pass
        self.bad_stale = self.bad_stale or part.spec.bad != self.spec.bad
        self.top_stale = self.top_stale or part.spec.top < self.spec.top
        if self.bins is None:
            self.bins = list(part.bins)
        elif part.bins != self.bins:
            raise DamagedRunError(f"part {part.chunk}: other length columns than the run's")
        self.boards += part.boards
        self.parts += 1
        self.shapes.add(part.shape)
        src = part.sources
        fmap = self._faces(part.faces)
        k = len(self.face_list)
        for c in VALUE_COLUMNS:
            per = self.values.setdefault(c, {})
            trip = part.values[c]
            for s in np.unique(trip[0]).tolist():
                take = trip[0] == s
                vals, cnt = trip[1][take], trip[2][take]
                if len(vals) and int(vals.min()) < 0:
                    raise DamagedRunError(f"part {part.chunk}: a negative {c}")
                acc = per.get(src[s], np.zeros(0, np.int64))
                acc = _grow(acc, (max(len(acc), int(vals.max()) + 1 if len(vals) else 0),))
                np.add.at(acc, vals, cnt)
                per[src[s]] = acc
        for s, name in enumerate(src):
            self.length_words[name] = self.length_words.get(name, 0) + part.length_words[s]
            self.length_points[name] = self.length_points.get(name, 0) + part.length_points[s]
            pres = _grow(self.presence.get(name, np.zeros((3, 0), np.int64)), (3, k))
            for j, arr in enumerate((part.face_n, part.face_s, part.face_q)):
                np.add.at(pres[j], fmap, arr[s])
            self.presence[name] = pres
            if part.xtx is not None and part.xty is not None:
                m = _grow(self.xtx.get(name, np.zeros((0, 0), np.int64)), (k, k))
                m[np.ix_(fmap, fmap)] += part.xtx[s]
                self.xtx[name] = m
                v = _grow(self.xty.get(name, np.zeros(0, np.int64)), (k,))
                v[fmap] += part.xty[s]
                self.xty[name] = v
        if part.pos_xtx is not None and part.pos_xty is not None:
            kp = len(part.faces)
            self.pos_xtx = _grow(
                self.pos_xtx if self.pos_xtx is not None else np.zeros((3, 0, 3, 0), np.int64), (3, k, 3, k)
            )
            self.pos_xty = _grow(
                self.pos_xty if self.pos_xty is not None else np.zeros((3, 0), np.int64), (3, k)
            )
            px = part.pos_xtx.reshape(3, kp, 3, kp)
            for a in range(3):
                self.pos_xty[a, fmap] += part.pos_xty[a * kp : (a + 1) * kp]
                for b in range(3):
                    block = self.pos_xtx[a, :, b, :]
                    block[np.ix_(fmap, fmap)] += px[a, :, b, :]
        self._add_dice(part)
        self.add_bad(BadCounts(part.bad, part.factors, part.factor_has, part.factor_bad, part.die_bad))
        assert self.words is not None and self.longest is not None
        if part.word_counts is None:
            self.has_word_lists = False
        else:
            self.words.add(part.word_counts, src, part)
        self.longest.add(part.longest, src, part)
        self.add_top(part.top, part.sources)

    def add_bad(self, counts: BadCounts) -> None:
        """Add a part's bad boards and drivers' counts."""
        self.bad += counts.bad
        for name, has, bad in zip(counts.factors, counts.has.tolist(), counts.bad_with.tolist(), strict=True):
            acc = self.factors.setdefault(name, [0, 0])
            acc[0] += has
            acc[1] += bad
        if self.die is not None and counts.die_bad is not None and counts.die_bad.shape == self.die[2].shape:
            self.die[2] += counts.die_bad

    def reset_bad(self) -> None:
        """Forget the bad boards' counts (before a recount with the analysis's definition)."""
        self.bad = 0
        self.factors = {}
        if self.die is not None:
            self.die[2] = 0

    def _add_dice(self, part: PartStats) -> None:
        if part.dice is None or part.die_n is None or part.die_s is None:
            self.dice_mixed = self.dice_mixed or self.dice is not None
            self.dice = None
            self.die = None
            return
        zero = np.zeros_like(part.die_n)
        if self.parts == 1:
            self.dice = part.dice
            self.die = np.stack([part.die_n, part.die_s, zero])  # bad: added by add_bad
        elif self.dice != part.dice or self.die is None:
            self.dice_mixed = True
            self.dice = None
            self.die = None
        else:
            self.die += np.stack([part.die_n, part.die_s, zero])

    def add_top(self, rows: Sequence[dict[str, Any]], sources: Sequence[str]) -> None:
        """Add a part's best boards (each row's ``source``: an index into ``sources``)."""
        k = self.spec.top
        for rec in rows:
            rec = dict(rec)
            name = sources[int(rec.pop("source"))]
            self.top.setdefault(name, []).append(rec)
        for best in self.top.values():
            best.sort(key=lambda r: (-int(r["score"]), int(r["board_id"])))
            del best[k:]

    # ---------------------------------------------------------------- reading

    def sources(self) -> list[str]:
        return sorted(self.values.get("score", {}))

    def faces_sorted(self) -> tuple[list[str], np.ndarray]:
        """The faces sorted and, for each, its index in the merged arrays."""
        order = sorted(range(len(self.face_list)), key=lambda i: self.face_list[i])
        return [self.face_list[i] for i in order], np.array(order, np.int64)

    @property
    def shape(self) -> tuple[int, int] | None:
        """The boards' one shape, None when they have several (no cell-level statistics)."""
        if len(self.shapes) != 1:
            return None
        return next(iter(self.shapes))

    def value_counts(self, column: str, source: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(values, counts) of a column for one source (None: all sources)."""
        per = self.values.get(column, {})
        arrays = [per[source]] if source is not None else list(per.values())
        total = np.zeros(max((len(a) for a in arrays), default=0), np.int64)
        for a in arrays:
            total[: len(a)] += a
        nz = np.flatnonzero(total)
        return nz.astype(np.int64), total[nz]


def merge(parts: Iterable[PartStats], spec: StatsSpec, vocabulary: Sequence[str] | None = None) -> RunStats:
    """The run's statistics from its parts' (each added, then dropped)."""
    run = RunStats(spec, vocabulary)
    for part in parts:
        run.add(part)
    return run
