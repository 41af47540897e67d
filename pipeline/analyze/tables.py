"""Every table of an analysis: the aggregates of :mod:`pipeline.analyze.stats` plus the
board-level ones a designer asks for (adjusted face effects, cell positions, dice, comparisons
with 95% intervals, paired runs)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pipeline.analyze.bad import BadDefinition, bad_tables
from pipeline.analyze.cells import cell_tables
from pipeline.analyze.compare import comparisons, face_comparisons, run_rows
from pipeline.analyze.faces import face_order
from pipeline.analyze.headline import headline
from pipeline.analyze.paired import paired
from pipeline.analyze.plots import MAX_RUNS_DRAWN
from pipeline.analyze.select import band_shares
from pipeline.analyze.stats import Tables, compute_tables
from pipeline.analyze.trend import trend_table
from pipeline.analyze.words import run_languages

if TYPE_CHECKING:
    from pipeline.analyze.gather import Gathered


def compute_all(
    gathered: Sequence[Gathered],
    *,
    top: int = 20,
    top_words: int = 50,
    bins: int = 60,
    bad: BadDefinition | None = None,
    n_jobs: int | None = None,
) -> Tables:
    """:func:`~pipeline.analyze.stats.compute_tables` for the gathered runs (in order), then
    the board-level tables, the bad boards (``bad``: their definition, default fewer than 50
    words; the statistics were gathered for it) and the Tanglet word-count bands."""
    langs = run_languages({g.run.label: g.run.lexicon.get("name") for g in gathered})
    tables = compute_tables(gathered, top=top, top_words=top_words, bins=bins, languages=langs)
    cells = cell_tables(gathered)
    fe = tables.face_effects
    if not cells.adjusted.empty:
        adj = cells.adjusted[["run", "source", "face", "adj_effect", "adj_low", "adj_high"]]
        fe = fe.merge(adj, on=["run", "source", "face"], how="left", sort=False)
    order = {f: i for i, f in enumerate(face_order(fe))}
    fe["face_order"] = fe["face"].map(order)
    tables.face_effects = fe
    tables.face_positions = cells.positions
    tables.dice = cells.dice
    tables.dice_faces = cells.dice_faces
    pt = paired(gathered, top=min(top, 10), n_jobs=n_jobs)
    tables.comparisons = comparisons(tables.summary, pt.moments)
    rows = run_rows(tables.summary)
    means = dict(zip(rows["run"], rows["score_mean"].astype(float), strict=True))
    tables.face_comparisons = face_comparisons(fe, means, pt.face_effects)
    tables.paired, tables.paired_histogram = pt.summary, pt.histogram
    tables.paired_boards, tables.paired_words = pt.boards, pt.words
    bt = bad_tables(gathered, bad)
    tables.bad_share, tables.bad_drivers = bt.share, bt.drivers
    tables.trend = trend_table(gathered, tables.bad_share)
    tables.serve_bands = band_shares(gathered)
    tables.headline = headline(tables)
    tables.notes = cells.notes + pt.notes + bt.notes
    if len(gathered) > MAX_RUNS_DRAWN:
        tables.notes.append(
            f"{len(gathered)} runs: the plots with a series or a board per run draw the first "
            f"{MAX_RUNS_DRAWN}; the tables (and the trend) hold every run"
        )
    return tables
