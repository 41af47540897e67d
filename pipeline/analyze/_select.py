"""Boards to serve: the boards of finished runs that pass word-count, score, dead-cell and
word-frequency filters, written as one pool file (Parquet or CSV) for a game to draw from.

>>> f = Filters(bands=(PRESETS["tanglet-medium"],), no_dead_cells=True)
>>> res = select_boards(["runs/default"], "pool.parquet", f)  # doctest: +SKIP
>>> res.written, [(r.label, r.selected) for r in res.runs]  # doctest: +SKIP

Runs are opened through the verified reader (:func:`pipeline.analyze._runs.load_run`: every part
checked against the manifest, a damaged run refused with exit 4) and read one part at a time,
so a run of millions of boards never sits in memory; only the selected rows are kept. The pool
holds the runs in the order given and each run's boards in ``board_id`` order, so the same
runs and filters give a byte-identical file.

The filters apply in a fixed order (:meth:`Filters.steps`: the word-count bands, the score, dead
cells, common words, the obscure share), and each run counts the boards left after each one
(:attr:`RunPool.steps`), so a designer sees which filter costs the pool its boards: the last
step is every filter.

"Common" and "obscure" words are the report's own definition
(:func:`pipeline.analyze._words.common_mask`: wordfreq Zipf frequency >= 3.6 in the run's
language, :data:`~pipeline.analyze._words.COMMON_ZIPF`). A *dead cell* is a non-blank cell on no
path of any word found on the board (no spelling of a found word uses it; a blank cell is never
dead): the run's ``dead_cells`` column, counted by the solver.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pipeline.analyze._inference import Interval, wilson
from pipeline.analyze._pool import POOL_COLUMNS as POOL_COLUMNS
from pipeline.analyze._pool import check_out, out_format, pool_ref, pool_rows, pool_schema, write_pool
from pipeline.analyze._pool import grid_strings as grid_strings
from pipeline.analyze._runs import RunError, RunInfo, load_runs
from pipeline.config import WORD_BANDS, read_range
from pipeline.errors import BoggleError

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from pipeline.analyze._gather import Gathered
    from pipeline.store import PartRef

PER = 100_000  # "a run of PER boards yields about K"


@dataclass(frozen=True)
class Band:
    """An inclusive range of a board's word count (``lo``/``hi`` None: open)."""

    name: str
    lo: int | None
    hi: int | None

    def contains(self, values: np.ndarray) -> np.ndarray:
        mask = np.ones(len(values), dtype=bool)
        if self.lo is not None:
            mask &= values >= self.lo
        if self.hi is not None:
            mask &= values <= self.hi
        return mask

    def text(self) -> str:
        return f"{'' if self.lo is None else self.lo}..{'' if self.hi is None else self.hi}"


# Tanglet's word-count bands for 4x4 boards (the game's easy, medium and hard settings; the
# numbers are pipeline.config.WORD_BANDS, which expectations name too)
PRESETS: dict[str, Band] = {name: Band(name, lo, hi) for name, (lo, hi) in WORD_BANDS.items()}

_RANGE = re.compile(r"^\s*(-?\d+)?\s*\.\.\s*(-?\d+)?\s*$")


def parse_range(text: str, option: str) -> tuple[int | None, int | None]:
    """``"200..250"`` as (200, 250); ``"200.."`` and ``"..250"`` leave a side open. A
    BoggleError (exit 2) naming ``option`` for anything else.

    >>> parse_range("200..250", "--words")
    (200, 250)
    """
    expected = "A..B (whole numbers, e.g. 200..250; A.. or ..B: open)"
    return read_range(text, f"{option} {text!r}", expected, error=BoggleError, pattern=_RANGE)


def preset(name: str) -> Band:
    try:
        return PRESETS[name]
    except KeyError:
        raise BoggleError(f"--preset {name!r}: expected one of {', '.join(PRESETS)}") from None


@dataclass(frozen=True)
class Filters:
    """What a board must pass to enter the pool. ``bands``: word-count bands (a board in any of
    them passes; none: no word-count filter), the others must all hold."""

    bands: tuple[Band, ...] = ()
    score: tuple[int | None, int | None] | None = None
    no_dead_cells: bool = False
    min_common_words: int | None = None
    max_obscure: float | None = None
    limit: int | None = None

    def __post_init__(self) -> None:
        if self.min_common_words is not None and self.min_common_words < 0:
            raise BoggleError(f"--min-common-words {self.min_common_words}: must be 0 or more")
        if self.max_obscure is not None and not 0.0 <= self.max_obscure <= 1.0:
            raise BoggleError(f"--max-obscure {self.max_obscure:g}: a share of the words, from 0 to 1")
        if self.limit is not None and self.limit < 0:
            raise BoggleError(f"--limit {self.limit}: must be 0 or more")

    @property
    def needs_words(self) -> list[str]:
        """The filters that read each board's word list (named as the CLI's options)."""
        return [
            name
            for name, v in (
                ("--min-common-words", self.min_common_words),
                ("--max-obscure", self.max_obscure),
            )
            if v is not None
        ]

    def steps(self) -> list[tuple[str, str]]:
        """The filters given, in the order they are applied, as (key, label): the key names the
        filter in ``--summary-json``, the label is what ``boggle select`` prints.

        >>> Filters(bands=(Band("words 100..160", 100, 160),), no_dead_cells=True).steps()
        [('words', 'words 100..160'), ('dead_cells', 'no dead cells')]
        """
        out = []
        if self.bands:
            if len(self.bands) == 1:
                out.append(("words", _band_label(self.bands[0])))
            else:
                short = [
                    b.name if b.name == f"words {b.text()}" else f"{b.name} {b.text()}" for b in self.bands
                ]
                out.append(("words", f"words in a band ({', '.join(short)})"))
        if self.score is not None:
            out.append(("score", f"score {Band('score', *self.score).text()}"))
        if self.no_dead_cells:
            out.append(("dead_cells", "no dead cells"))
        if self.min_common_words is not None:
            out.append(("common_words", f"at least {self.min_common_words:,} common words"))
        if self.max_obscure is not None:
            out.append(("obscure_share", f"at most {self.max_obscure:.0%} obscure words"))
        return out

    def describe(self) -> dict[str, Any]:
        return {
            "bands": [{"name": b.name, "words": b.text()} for b in self.bands],
            "score": None if self.score is None else Band("score", *self.score).text(),
            "no_dead_cells": self.no_dead_cells,
            "min_common_words": self.min_common_words,
            "max_obscure": self.max_obscure,
            "limit": self.limit,
        }


def _band_label(b: Band) -> str:
    """``words 100..160`` for ``--words``, ``tanglet-medium (200..250 words)`` for a preset."""
    text = b.text()
    return b.name if b.name == f"words {text}" else f"{b.name} ({text} words)"


# The pool file's columns (documented in docs/reference/formats.md from here)
_READ = [
    "board_id",
    "board",
    "rows",
    "cols",
    "source",
    "run_id",
    "seed",
    "lexicon_hash",
    "score",
    "n_words",
    "dead_cells",
]


@dataclass
class BandCount:
    """Boards of one run in one band that pass every other filter, out of the run's boards."""

    band: str
    selected: int
    share: Interval


@dataclass
class StepCount:
    """The boards of one run left after a filter and every filter before it (in
    :meth:`Filters.steps` order), out of the run's boards."""

    key: str
    label: str
    kept: int
    share: Interval


@dataclass
class RunPool:
    """One run's part of the pool (before ``limit``). ``steps``: the boards left after each
    filter in the order applied (the last one: every filter, ``selected``); ``bands``: the
    boards that pass every filter, per band."""

    label: str
    path: Path
    run_id: str | None
    boards: int
    selected: int
    share: Interval
    bands: list[BandCount] = field(default_factory=list)
    steps: list[StepCount] = field(default_factory=list)


@dataclass
class SelectResult:
    """What :func:`select_boards` wrote: the pool file (a path, or an object's URL), its rows,
    and each run's counts."""

    out: PartRef
    written: int
    runs: list[RunPool]
    filters: Filters
    per: int = PER

    @property
    def selected(self) -> int:
        return sum(r.selected for r in self.runs)


def common_counts(words: pa.Array | pa.ChunkedArray, language: str, cache: dict[str, bool]) -> np.ndarray:
    """Per board (a list of words each): how many of its words are common
    (:func:`~pipeline.analyze._words.common_mask`). Each distinct word is looked up once
    (``cache`` keeps the answers across parts); the lists are counted through their offsets."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from pipeline.analyze._words import common_mask, zipf

    arr = words.combine_chunks() if isinstance(words, pa.ChunkedArray) else words
    offsets = np.asarray(arr.offsets, dtype=np.int64)
    values = arr.values
    if not pa.types.is_dictionary(values.type):
        values = pc.dictionary_encode(values)
    vocab = values.dictionary.to_pylist()
    missing = [w for w in vocab if w not in cache]
    if missing:
        freq = zipf(missing, language)
        flags = common_mask(np.array([freq[w] for w in missing], dtype=np.float64))
        cache.update(zip(missing, (bool(f) for f in flags), strict=True))
    common = np.array([cache[w] for w in vocab], dtype=np.int64)
    per_item = common[np.asarray(values.indices, dtype=np.int64)] if len(values) else np.zeros(0, np.int64)
    cum = np.concatenate([[0], np.cumsum(per_item)])
    return cum[offsets[1:]] - cum[offsets[:-1]]


@dataclass
class _Tally:
    boards: int = 0
    selected: int = 0
    bands: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    steps: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # left after each step


def _select_part(
    part: Path, filters: Filters, language: str, cache: dict[str, bool], tally: _Tally, keep_rows: bool
) -> pa.Table | None:
    """Count one part's qualifying boards into ``tally``; their pool rows (or None)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = set(pq.read_schema(part).names)
    wanted = [c for c in _READ if c in names]
    if "words" in names and (filters.needs_words or keep_rows):
        wanted.append("words")
    table = pq.read_table(part, columns=wanted)
    table = table.take(pa.array(np.argsort(table.column("board_id").to_numpy(), kind="stable")))
    n_words = table.column("n_words").to_numpy().astype(np.int64)
    band = np.full(table.num_rows, -1, dtype=np.int64)
    for k, b in enumerate(filters.bands):
        band[(band < 0) & b.contains(n_words)] = k
    keep = np.ones(table.num_rows, dtype=bool)
    for i, mask in enumerate(_step_masks(table, n_words, band, filters, language, cache)):
        keep &= mask
        tally.steps[i] += int(keep.sum())
    if filters.bands:
        tally.bands += np.bincount(band[keep], minlength=len(filters.bands))
    tally.boards += table.num_rows
    tally.selected += int(keep.sum())
    if not keep_rows or not keep.any():
        return None
    rows = np.flatnonzero(keep)
    labels = [filters.bands[k].name for k in band[rows]] if filters.bands else None
    return pool_rows(table, rows, labels)


def _step_masks(
    table: pa.Table,
    n_words: np.ndarray,
    band: np.ndarray,
    filters: Filters,
    language: str,
    cache: dict[str, bool],
) -> Iterator[np.ndarray]:
    """Which boards of a part pass each filter on its own, in :meth:`Filters.steps` order
    (``band``: the first band holding each board, -1 for none)."""
    if filters.bands:
        yield band >= 0
    if filters.score is not None:
        yield Band("score", *filters.score).contains(table.column("score").to_numpy())
    if filters.no_dead_cells:
        yield table.column("dead_cells").to_numpy() == 0
    if filters.needs_words:
        common = common_counts(table.column("words"), language, cache)
        if filters.min_common_words is not None:
            yield common >= filters.min_common_words
        if filters.max_obscure is not None:
            # a board without words has no share of obscure words: nothing to serve
            yield (n_words > 0) & ((n_words - common) <= filters.max_obscure * n_words)


def check_runs(runs: Sequence[RunInfo], filters: Filters) -> dict[str, str]:
    """Each run's wordfreq language; a RunError (exit 2) for a run the word filters cannot read:
    no word lists, or a language wordfreq has no table for."""
    from pipeline.analyze._words import has_frequencies, language_of

    languages = {}
    needs = " and ".join(filters.needs_words)
    for run in runs:
        lang = language_of(run.lexicon.get("name"))
        languages[run.label] = lang
        if not needs:
            continue
        if not run.has_words:
            raise RunError(f"{run.path}: a run without word lists (--no-words); {needs} need them")
        if not has_frequencies(lang):
            raise RunError(
                f"{run.path}: no word frequencies for its language {lang!r} (wordfreq); {needs} need them"
            )
    return languages


def select_boards(
    run_dirs: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    filters: Filters,
    *,
    per: int = PER,
) -> SelectResult:
    """Write the boards of ``run_dirs`` that pass ``filters`` to ``out`` (``.parquet`` or
    ``.csv``, atomically; a path, or the URL of an object in a store), in run order then
    ``board_id`` order, at most ``filters.limit`` of them; count each run's qualifying boards
    (per band) with 95% Wilson intervals on the share.

    Raises a BoggleError (exit 2) for a bad file name or a run the filters cannot read, a
    DamagedRunError (exit 4) for a run whose parts differ from its manifest.
    """
    import pyarrow as pa

    from pipeline.store import run_id_of

    fmt = out_format(out)
    check_out(run_dirs, out)
    runs = load_runs(run_dirs)
    languages = check_runs(runs, filters)
    limit = filters.limit
    tables: list[pa.Table] = []
    kept = 0
    pools = []
    caches: dict[str, dict[str, bool]] = {}  # per language: word -> common
    for run in runs:
        cache = caches.setdefault(languages[run.label], {})
        steps = filters.steps()
        tally = _Tally(bands=np.zeros(len(filters.bands), np.int64), steps=np.zeros(len(steps), np.int64))
        for part in run.parts:
            table = _select_part(
                part, filters, languages[run.label], cache, tally, keep_rows=limit is None or kept < limit
            )
            if table is not None:
                if limit is not None:
                    table = table.slice(0, limit - kept)
                tables.append(table)
                kept += table.num_rows
        identity = run.manifest.get("identity")
        pools.append(
            RunPool(
                run.label,
                run.path,
                run_id_of(identity) if isinstance(identity, dict) else None,
                tally.boards,
                tally.selected,
                wilson(tally.selected, tally.boards),
                [
                    BandCount(b.name, int(k), wilson(int(k), tally.boards))
                    for b, k in zip(filters.bands, tally.bands, strict=True)
                ],
                [
                    StepCount(key, label, int(k), wilson(int(k), tally.boards))
                    for (key, label), k in zip(steps, tally.steps, strict=True)
                ],
            )
        )
    pool = pa.concat_tables(tables) if tables else pool_schema().empty_table()
    meta = {"filters": filters.describe(), "runs": [{"label": p.label, "run_id": p.run_id} for p in pools]}
    write_pool(pool, out, fmt, meta)
    return SelectResult(pool_ref(out), pool.num_rows, pools, filters, per)


BAND_COLUMNS = [
    "run",
    "band",
    "words",
    "boards",
    "in_band",
    "share",
    "share_low",
    "share_high",
    "per_100k",
    "per_100k_low",
    "per_100k_high",
]


def band_shares(
    gathered: Sequence[Gathered], bands: Sequence[Band] = tuple(PRESETS.values())
) -> pd.DataFrame:
    """For the report: per run, the boards in each word-count band (Tanglet's by default),
    their share with its 95% Wilson interval, and the yield of a run of 100,000 boards."""
    import pandas as pd

    if not bands:
        return pd.DataFrame(columns=BAND_COLUMNS)
    rows = []
    for g in gathered:
        v, c = g.stats.value_counts("n_words")
        n = int(c.sum())
        for b in bands:
            lo = -(2**31) if b.lo is None else int(b.lo)
            hi = 2**31 if b.hi is None else int(b.hi)
            k = int(c[(v >= lo) & (v <= hi)].sum())
            iv = wilson(k, n)
            rows.append(
                {
                    "run": g.run.label,
                    "band": b.name,
                    "words": b.text(),
                    "boards": n,
                    "in_band": k,
                    "share": iv.estimate,
                    "share_low": iv.low,
                    "share_high": iv.high,
                    "per_100k": iv.estimate * PER,
                    "per_100k_low": iv.low * PER,
                    "per_100k_high": iv.high * PER,
                }
            )
    return pd.DataFrame(rows, columns=BAND_COLUMNS)
